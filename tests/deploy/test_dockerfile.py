"""The agent's image as its Dockerfile builds it, checked without Docker: its stages, what it bakes in, what it runs
as, and that its runtime stage installs every library the pjsua2 built from source links."""

import re
import subprocess
from pathlib import Path

import pytest

from agent.settings import load
from tests.conftest import REPO


def dockerfile() -> list[str]:
    """Instructions of the Dockerfile, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (REPO / "Dockerfile").read_text())
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]



def test_the_image_bakes_in_and_verifies_the_models_and_runs_unprivileged():
    lines = dockerfile()
    run = " ".join(line for line in lines if line.startswith("RUN "))
    assert "python -m agent models fetch" in run and "python -m agent check" in run
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    assert any(line.startswith("HEALTHCHECK") and "/readyz" in line for line in lines)



def _stages() -> list[list[str]]:
    stages: list[list[str]] = []
    for line in dockerfile():
        if line.startswith("FROM "):
            stages.append([])
        if stages:  # an ARG before the first FROM belongs to no stage
            stages[-1].append(line)
    return stages



def test_the_image_builds_pjsua2_from_source_in_a_stage_of_its_own_and_installs_its_wheel():
    build, runtime, install, final = _stages()
    assert build[0].endswith(" AS pjsua2") and install[0] == "FROM runtime AS install" and final[0] == "FROM runtime"
    assert any("python3 -m agent.sip.pjproject --require" in line for line in build)  # no silent fallback
    assert any(line.startswith("COPY --from=pjsua2 ") and ".whl" in line for line in install)
    assert any("pip install --quiet /tmp/wheels/" in line for line in install)
    assert any(line.startswith("COPY --from=install /opt/venv ") for line in final)



def test_the_build_machines_package_settings_stay_in_the_build_stages():
    build, runtime, install, final = _stages()
    assert any(line.startswith("ARG PIP_INDEX_URL") for line in install)
    assert not any("PIP_INDEX_URL" in line or "build-ca" in line for line in runtime + final)



# In python:3.11-slim-bookworm itself, besides what the final stage installs.
BASE_IMAGE_PACKAGES = {"libc6", "libstdc++6", "libgcc-s1", "zlib1g"}



def test_every_library_the_built_module_links_is_installed_in_the_image():
    import pjsua2

    from agent.sip.build_info import installed

    if not installed().from_source:
        pytest.skip("pjsua2 is PyPI's wheel here: make builds it from source")
    (module,) = Path(pjsua2.__file__).parent.glob("_pjsua2*.so")
    # What the module itself needs (its dependencies' own needs come with their packages).
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]",
                        subprocess.run(["readelf", "-d", str(module)], capture_output=True, text=True).stdout)
    where = dict(re.findall(r"^\s*(\S+) => (/\S+)", subprocess.run(["ldd", str(module)], capture_output=True,
                                                                    text=True).stdout, re.M))
    packages = set()
    for name in needed:
        path = Path(where[name])
        # usrmerge: dpkg knows some libraries under /lib, some under /usr/lib.
        for candidate in (path, Path("/usr") / path.relative_to("/") if path.parts[1] != "usr"
                          else Path("/", *path.parts[2:])):
            owner = subprocess.run(["dpkg", "-S", str(candidate)], capture_output=True, text=True)
            if owner.returncode == 0:
                packages.add(owner.stdout.split(":")[0])
                break
        else:
            raise AssertionError(f"no package owns {path}")
    runtime = _stages()[1]
    installed_there = set(" ".join(line for line in runtime if "apt-get install" in line).split())
    assert packages and "libsrtp2-1" in packages
    assert packages - BASE_IMAGE_PACKAGES <= installed_there



def test_the_image_environment_is_valid_agent_settings_once_an_address_is_given():
    env = {}
    for line in dockerfile():
        if line.startswith("ENV "):
            env.update(re.findall(r"(\w+)=(\S+)", line))
    settings = load({**env, "AGENT_SIP_HOST": "10.0.0.2"})
    assert settings.models_path == Path("/opt/agent/models") and settings.data_dir == Path("/var/lib/agent")
