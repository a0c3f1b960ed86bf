"""Installing models: parts are joined and checked, damage is repaired, bad downloads never land."""

import hashlib
import io
from pathlib import Path

import pytest

from agent.models.fetch import fetch_model, install_file
from agent.models.manifest import ModelFile, ModelSpec, Source, load_manifest
from agent.models.verify import ModelError, verify_manifest_model


def _source(name: str, data: bytes) -> Source:
    return Source("dist", "1.0", name, len(data), hashlib.sha256(data).hexdigest())


def _opener(members: dict[str, bytes]):
    return lambda source: io.BytesIO(members[source.member])


def test_parts_are_joined_in_order(tmp_path):
    first, second = b"a" * 1000, b"b" * 500
    whole = ModelFile("model.bin", 1500, hashlib.sha256(first + second).hexdigest(),
                      (_source("p1", first), _source("p2", second)))
    install_file(whole, tmp_path, _opener({"p1": first, "p2": second}))
    assert (tmp_path / "model.bin").read_bytes() == first + second


def test_a_member_that_does_not_match_leaves_the_old_file_and_no_temporary(tmp_path):
    good = b"good model"
    expected = ModelFile("model.bin", len(good), hashlib.sha256(good).hexdigest(), (_source("m", good),))
    (tmp_path / "model.bin").write_bytes(b"previous")
    with pytest.raises(ModelError, match="does not match the manifest"):
        install_file(expected, tmp_path, _opener({"m": b"evil model"}))
    assert (tmp_path / "model.bin").read_bytes() == b"previous"
    assert [p.name for p in tmp_path.iterdir()] == ["model.bin"]


def test_fetch_repairs_a_corrupted_file_and_skips_intact_ones(tmp_path):
    data = {"a": b"alpha" * 100, "b": b"beta" * 100}
    spec = ModelSpec("toy", "vad", True, "toy", tuple(
        ModelFile(f"{k}.bin", len(v), hashlib.sha256(v).hexdigest(), (_source(k, v),)) for k, v in data.items()))
    assert fetch_model(spec, tmp_path, _opener(data)) == 2
    (tmp_path / "toy" / "b.bin").write_bytes(b"beta" * 99)
    assert fetch_model(spec, tmp_path, _opener(data)) == 1
    assert verify_manifest_model(spec, tmp_path / "toy").size == 900


def test_real_fetch_restores_silero_from_the_installed_faster_whisper(tmp_path):
    """The real path: no fake opener, the member comes from the installed wheel's files."""
    from agent.models.fetch import fetch_models

    spec = load_manifest()["silero-vad-v6"]
    target = tmp_path / spec.name
    target.mkdir()
    (target / "silero_vad_v6.onnx").write_bytes(b"not a model")
    fetch_models([spec], tmp_path)
    assert verify_manifest_model(spec, target).files[0].sha256 == spec.files[0].sha256
    assert not any(p.name.startswith("wheels-") for p in Path(tmp_path).iterdir())


def test_whisper_base_is_fetched_in_parts_joined_verified_and_loadable(tmp_path):
    """The optional larger model: two real wheels, one joined model.bin that CTranslate2 loads."""
    from agent.models.fetch import fetch_models
    from agent.models.verify import resolve
    from agent.speech.asr import Transcriber

    manifest = load_manifest()
    assert fetch_models([manifest["whisper-base"]], tmp_path) == {"whisper-base": 4}
    model = resolve("asr", "whisper-base", None, tmp_path, manifest)
    assert model.size == manifest["whisper-base"].size
    import numpy as np

    transcript = Transcriber(model).transcribe(np.zeros(16000, dtype=np.float32))
    assert transcript.audio_s == 1.0
