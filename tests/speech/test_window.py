"""The utterance-sized encoder window and the guards a short window needs (pure)."""

from agent.speech.window import strip_repeats, window_frames


def test_the_encoder_window_follows_the_utterance_with_a_floor_and_whispers_ceiling():
    assert window_frames(2 * 16000) == 1000  # a 2 s question still gets 10 s: shorter windows cost WER
    assert window_frames(12 * 16000) == 1300  # a 12 s one gets itself plus 1 s
    assert window_frames(40 * 16000) == 3000  # never beyond Whisper's 30 s


def test_a_decode_that_reads_the_utterance_again_keeps_it_once():
    assert strip_repeats("Thank you for your patience. Thank you for your patience. Thank") == \
        ("Thank you for your patience.", True)
    assert strip_repeats("November November November") == ("November", True)
    assert strip_repeats("What's the price? What's the price? What") == ("What's the price?", True)
    assert strip_repeats("What warranty comes with a new boiler?") == ("What warranty comes with a new boiler?", False)
    assert strip_repeats("") == ("", False)
