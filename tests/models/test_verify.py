"""The loader accepts the real files and rejects damaged copies with a message that says how to fix them."""

import os
import shutil
from pathlib import Path

import pytest

from agent.models.manifest import load_manifest
from agent.models.verify import ModelError, resolve, verify_manifest_model

DEFAULTS = [spec for spec in load_manifest().values() if spec.default]


def _copy_model(source: Path, target: Path) -> None:
    """Hard-link the files (fast, no extra disk); the test replaces the one it damages."""
    target.mkdir(parents=True)
    for file in source.iterdir():
        os.link(file, target / file.name)


def _damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    path.unlink()  # break the hard link so the installed model stays intact
    if how == "truncate":
        data = data[: len(data) // 2]
    else:
        data[len(data) // 3] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("spec", DEFAULTS, ids=lambda s: s.name)
def test_real_files_are_accepted(spec, settings):
    model = verify_manifest_model(spec, settings.models_path / spec.name)
    assert model.source == "manifest" and model.size == spec.size
    assert [f.sha256 for f in model.files] == [f.sha256 for f in spec.files]


@pytest.mark.parametrize("how", ["truncate", "flip-one-byte"])
@pytest.mark.parametrize("spec", DEFAULTS, ids=lambda s: s.name)
def test_damaged_copy_is_rejected_naming_model_and_fix(spec, how, settings, tmp_path):
    copy = tmp_path / spec.name
    _copy_model(settings.models_path / spec.name, copy)
    largest = max(spec.files, key=lambda f: f.size)
    _damage(copy / largest.path, how)
    with pytest.raises(ModelError) as error:
        verify_manifest_model(spec, copy)
    message = str(error.value)
    assert spec.name in message and largest.path in message
    assert f"python -m agent models fetch {spec.name}" in message
    assert ("bytes, expected" if how == "truncate" else "sha256") in message


def test_missing_model_names_the_fix(tmp_path):
    manifest = load_manifest()
    with pytest.raises(ModelError, match="missing. Install it with: python -m agent models fetch whisper-tiny.en"):
        resolve("asr", "whisper-tiny.en", None, tmp_path, manifest)


def test_explicit_path_wins_over_the_manifest(settings, tmp_path):
    voice = tmp_path / "my-voice.onnx"
    shutil.copy(settings.models_path / "silero-vad-v6" / "silero_vad_v6.onnx", voice)
    model = resolve("vad", "silero-vad-v6", voice, settings.models_path, load_manifest())
    assert model.source == "path" and model.location == str(voice) and len(model.files[0].sha256) == 64


def test_explicit_directory_missing_files_is_rejected(tmp_path):
    with pytest.raises(ModelError, match="model.bin is missing or empty"):
        resolve("asr", "whisper-tiny.en", tmp_path, tmp_path, load_manifest())


def test_unknown_name_is_a_hub_name_for_models_that_can_download():
    model = resolve("asr", "Systran/faster-whisper-small.en", None, Path("/nonexistent"), load_manifest())
    assert model.source == "hub" and model.location == "Systran/faster-whisper-small.en"


def test_vad_has_no_hub_fallback(tmp_path):
    with pytest.raises(ModelError, match="not in the manifest"):
        resolve("vad", "silero-vad-v9", None, tmp_path, load_manifest())


def test_a_model_of_the_wrong_kind_is_rejected(tmp_path):
    with pytest.raises(ModelError, match="is of kind vad, but the asr setting"):
        resolve("asr", "silero-vad-v6", None, tmp_path, load_manifest())
