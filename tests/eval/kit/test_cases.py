import pytest

from eval.kit.cases import load_cases
from tests.conftest import REPO


def test_the_bundled_cases_are_valid_and_cover_follow_ups_and_out_of_kb():
    cases = load_cases(REPO / "eval" / "cases.jsonl")
    assert len(cases) >= 30
    assert sum(c.expect_abstain for c in cases) >= 5
    calls = [c.call for c in cases]
    assert any(calls.count(call) > 1 for call in calls)


@pytest.mark.parametrize(("line", "message"), [
    ("not json", "not JSON"),
    ('{"id": "a", "say": "x"}', "exactly one of expect_any / expect_abstain"),
    ('{"id": "a", "expect_abstain": true}', "needs 'say' or 'audio'"),
    ('["a"]', "an object with an 'id'"),
])
def test_bad_lines_are_rejected_with_their_line_number(tmp_path, line, message):
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "ok", "say": "hi", "expect_abstain": true}\n' + line + "\n")
    with pytest.raises(ValueError, match=f"cases.jsonl:2: .*{message}"):
        load_cases(path)


def test_audio_paths_resolve_against_the_cases_file(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "a", "audio": "wav/a.wav", "expect_any": ["x"]}\n')
    (case,) = load_cases(path)
    assert case.audio == tmp_path / "wav" / "a.wav" and case.call == "a"


def test_the_pause_cases_hesitate_once_mid_question():
    cases = load_cases(REPO / "eval" / "pauses.jsonl")
    assert cases and all(c.say.count("…") == 1 and 400 <= c.pause_ms <= 800 for c in cases)


def test_a_hesitation_is_that_much_silence_between_the_two_halves(tmp_path):
    from eval.kit.phone import load_wav
    from eval.kit.placing import spoken

    whole = load_wav(spoken("Can I pay by card?", "whole", tmp_path, "slt"))
    paused = load_wav(spoken("Can I pay … by card?", "paused", tmp_path, "slt", pause_ms=600))
    quiet = [i for i in range(0, len(paused) - 320, 320) if abs(paused[i:i + 320]).max() < 100]
    longest, run = 0, 0
    for a, b in zip(quiet, quiet[1:], strict=False):
        run = run + 1 if b - a == 320 else 0
        longest = max(longest, run)
    assert longest * 20 >= 500 and len(paused) > len(whole)  # 600 ms less the frames the edges share
