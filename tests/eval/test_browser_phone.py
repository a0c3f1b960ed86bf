"""eval.browser_phone's arithmetic: both transports measured from the same end of the question, and the gap."""

import numpy as np

from eval.browser_phone import level_end_to_vad_end_ms, summarize
from eval.kit.phone import load_wav


def test_the_page_level_end_is_moved_to_where_the_vad_says_the_question_ended(resolved, questions):
    from agent.speech.vad import SileroVad

    pcm, tail = load_wav(questions["hours"]), np.zeros(16000, np.int16)
    offset = level_end_to_vad_end_ms(np.concatenate([pcm, tail]), SileroVad.open(resolved["vad"].location))
    # Silero's probability trails the sound by a few 32 ms windows: its end comes after the last loud stretch.
    assert 0 < offset < 300
    # The offset belongs to the question, not to where it sits in the microphone's audio.
    later = level_end_to_vad_end_ms(np.concatenate([np.zeros(8000, np.int16), pcm, tail]),
                                    SileroVad.open(resolved["vad"].location))
    assert abs(later - offset) <= 32


def test_silence_has_no_offset(resolved):
    from agent.speech.vad import SileroVad

    assert level_end_to_vad_end_ms(np.zeros(16000, np.int16), SileroVad.open(resolved["vad"].location)) == 0.0


def test_the_gap_is_the_browser_median_less_the_sip_median():
    sip = [{"latency_ms": v, "correct": True} for v in (300, 400, 500)]
    browser = [{"latency_ms": v, "way_in_ms": 100, "agent_ms": 224, "way_out_ms": 150, "correct": v < 600}
               for v in (450, 520, 700)]
    summary = summarize(sip, browser)
    assert summary["gap_p50_ms"] == 120
    assert (summary["sip_correct"], summary["browser_correct"], summary["questions"]) == (3, 2, 3)
    assert summary["browser_way_in_ms"] == {"p50": 100, "p95": 100, "n": 3}


def test_a_browser_question_that_failed_is_left_out_of_the_percentiles():
    summary = summarize([{"latency_ms": 400}], [{"id": "x", "error": "the agent recorded no turn"}])
    assert summary["browser_latency_ms"]["n"] == 0 and summary["gap_p50_ms"] is None
