"""The noisy line of eval.replay: noise mixed at an exact SNR, and misses given their cause."""

from pathlib import Path

import numpy as np

from eval.kit.diagnosis import miss_cause
from eval.kit.noise import babble, mix, speech_power, white


def test_noise_is_mixed_at_the_asked_snr_over_the_voiced_part():
    rng = np.random.default_rng(1)
    speech = np.concatenate([np.zeros(8000), rng.standard_normal(16000) * 4000, np.zeros(8000)]).astype(np.int16)
    noise = white(5000, seed=2)
    noisy = mix(speech, noise, 10.0)
    added = noisy.astype(np.float64) - speech
    assert len(noisy) == len(speech)
    assert abs(10 * np.log10(speech_power(speech) / np.mean(added ** 2)) - 10.0) < 0.2


def test_babble_is_every_speaker_at_once():
    voices = [np.full(100, 1000, np.int16), np.full(50, -300, np.int16)]
    assert babble(voices, 10).tolist() == [700.0] * 10


def test_a_miss_is_blamed_on_what_went_wrong():
    base = {"question": "What warranty comes with a new boiler?", "expect_abstain": False, "expect_any": ["10-year"]}
    assert miss_cause({**base, "agent_heard": "What will our empty come with a new boiler?",
                       "agent_answer": "A new combi boiler starts from $2,800."}) == "asr"
    assert miss_cause({**base, "agent_heard": "What warranty comes with a new boiler?",
                       "agent_answer": "A new combi boiler starts from $2,800."}) == "answer"
    assert miss_cause({**base, "agent_heard": "What warranty comes with a new boiler?",
                       "agent_answer": "New boilers come with a 10-year warranty."}) == "scorer"
    assert miss_cause({**base, "agent_outcome": "asked again"}) == "asked again"


def test_the_babble_is_the_last_four_spoken_questions_in_four_voices():
    from eval.kit.cases import Case
    from eval.kit.noise import babble_talkers

    cases = [Case(f"q{n}", "c", f"question {n}", None, ("answer",), False) for n in range(6)]
    cases.append(Case("recorded", "c", None, Path("recorded.wav"), ("answer",), False))
    talkers = babble_talkers(cases)
    assert [c.id for c, _ in talkers] == ["q2", "q3", "q4", "q5"]
    assert len({voice for _, voice in talkers}) == 4
