"""The turn state machine on exact probability sequences (one value per 32 ms window)."""

import numpy as np

from agent.call.listening.turns import SpeechEnded, SpeechPaused, SpeechResumed, TurnConfig, TurnDetector, TurnState

CONFIG = TurnConfig(threshold=0.5, min_speech_ms=96, hangover_ms=160, max_utterance_s=1.0, lead_in_ms=64, pause_ms=96)
# 96 ms = 3 windows to start and to pause, 160 ms = 5 windows of silence to stop, 1 s = 31 windows at most.


def run(probabilities, config=CONFIG, paused=False):
    detector = TurnDetector(config)
    events, states = [], []
    for i, p in enumerate(probabilities):
        window = np.full(512, i, dtype=np.float32)  # each window's samples carry its index
        for e in detector.push(window, p):
            if paused or not isinstance(e, (SpeechPaused, SpeechResumed)):
                events.append((i, e))
        states.append(detector.state)
    return events, states


def test_speech_starts_after_the_minimum_and_ends_after_the_hangover():
    events, states = run([0.1] * 4 + [0.9] * 6 + [0.1] * 6)
    assert [(i, type(e).__name__) for i, e in events] == [(6, "SpeechStarted"), (14, "SpeechEnded")]
    assert states[4] is TurnState.STARTING and states[6] is TurnState.SPEAKING and states[10] is TurnState.STOPPING
    assert states[-1] is TurnState.QUIET


def test_the_utterance_holds_lead_in_and_voiced_windows_but_not_the_hangover():
    events, _ = run([0.1] * 4 + [0.9] * 6 + [0.1] * 6)
    ended = events[1][1]
    assert isinstance(ended, SpeechEnded) and not ended.truncated and ended.window == 9
    assert sorted(set(ended.audio.astype(int))) == [2, 3, 4, 5, 6, 7, 8, 9]  # 2 lead-in + 6 voiced


def test_a_pause_carries_exactly_the_audio_the_end_will_carry():
    events, _ = run([0.1] * 4 + [0.9] * 6 + [0.1] * 6, paused=True)
    (paused_at, paused), (ended_at, ended) = [(i, e) for i, e in events if type(e).__name__ != "SpeechStarted"]
    assert isinstance(paused, SpeechPaused) and paused_at == 12 and ended_at == 14
    assert paused.window == ended.window and np.array_equal(paused.audio, ended.audio)


def test_resuming_after_a_pause_pauses_again_later():
    events, _ = run([0.9] * 4 + [0.1] * 3 + [0.9] * 3 + [0.1] * 6, paused=True)
    assert [type(e).__name__ for _, e in events] == ["SpeechStarted", "SpeechPaused", "SpeechResumed", "SpeechPaused",
                                                     "SpeechEnded"]
    assert events[3][1].window == events[4][1].window == 9


def test_a_gap_between_words_shorter_than_the_pause_prepares_nothing_but_still_counts_as_resumed():
    events, _ = run([0.9] * 4 + [0.1] * 2 + [0.9] * 3 + [0.1] * 6, paused=True)
    assert [type(e).__name__ for _, e in events] == ["SpeechStarted", "SpeechResumed", "SpeechPaused", "SpeechEnded"]


def test_a_blip_shorter_than_the_minimum_is_not_speech():
    events, states = run([0.9, 0.9, 0.1, 0.1, 0.9, 0.1])
    assert events == [] and states[-1] is TurnState.QUIET


def test_a_pause_shorter_than_the_hangover_keeps_one_utterance():
    events, _ = run([0.9] * 4 + [0.1] * 3 + [0.9] * 4 + [0.1] * 6)
    assert [type(e).__name__ for _, e in events] == ["SpeechStarted", "SpeechEnded"]


def test_hysteresis_keeps_speech_just_below_the_threshold():
    events, _ = run([0.9] * 4 + [0.4] * 8 + [0.1] * 6)
    assert events[1][0] == 11 + 5  # 0.4 >= 0.5 - 0.15 counts as speech while speaking: last voiced is 11


def test_a_long_utterance_is_cut_at_the_maximum():
    events, _ = run([0.9] * 40)
    ended = [e for _, e in events if isinstance(e, SpeechEnded)]
    assert ended and ended[0].truncated and len(ended[0].audio) == 31 * 512


def test_segmentation_does_not_depend_on_frame_size(models, tmp_path):
    """Feeding the same audio in 20 ms frames or in one block gives the same utterances."""
    from agent.audio.pcm import StreamResampler, int16_to_float
    from tests.conftest import synthesize_caller

    pcm8 = synthesize_caller(tmp_path, "Hello there. I have a question about my boiler.")
    resampler = StreamResampler(8000, 16000)
    audio = int16_to_float(np.concatenate([np.zeros(8000, np.int16), resampler.push(pcm8), resampler.flush(),
                                           np.zeros(16000, np.int16)]))

    def segment(chunk):
        vad, detector, pending, out = models.new_vad(), TurnDetector(TurnConfig()), np.zeros(0, np.float32), []
        for start in range(0, len(audio), chunk):
            pending = np.concatenate([pending, audio[start:start + chunk]])
            while len(pending) >= 512:
                window, pending = pending[:512], pending[512:]
                out += [(type(e).__name__, e.window) for e in detector.push(window, vad.window_probability(window))]
        return out

    assert segment(320) == segment(len(audio)) and ("SpeechStarted", segment(320)[0][1]) == segment(320)[0]


def test_barge_in_is_signalled_before_the_utterance_counts():
    config = TurnConfig(threshold=0.5, min_speech_ms=96, hangover_ms=160, max_utterance_s=1.0, lead_in_ms=64,
                        barge_in_ms=64)
    events, states = run([0.1] * 4 + [0.9] * 6 + [0.1] * 6, config)
    assert [(i, type(e).__name__) for i, e in events] == [(5, "SpeechStarted"), (14, "SpeechEnded")]
    assert states[5] is TurnState.STARTING and states[6] is TurnState.SPEAKING
    # Two voiced windows stop the agent, but are too short to be a question.
    events, states = run([0.9, 0.9, 0.1, 0.1], config)
    assert [type(e).__name__ for _, e in events] == ["SpeechStarted"] and states[-1] is TurnState.QUIET


def test_a_quiet_voice_hovering_around_the_threshold_is_heard_from_its_first_word():
    events, _ = run([0.1] * 4 + [0.6, 0.4, 0.6, 0.4, 0.6, 0.4] + [0.1] * 6)
    ended = [e for _, e in events if isinstance(e, SpeechEnded)]
    assert len(ended) == 1 and sorted(set(ended[0].audio.astype(int)))[:3] == [2, 3, 4]  # lead-in, then window 4


def test_a_pause_can_be_ended_sooner_or_later_than_the_hangover():
    detector = TurnDetector(CONFIG)
    ended_at = {}
    for label, end_after in (("sooner", 64), ("later", 320)):
        detector = TurnDetector(CONFIG)
        for i, p in enumerate([0.1] * 4 + [0.9] * 6 + [0.1] * 15):
            if detector.pause is not None and i == 11:  # the decision comes one window into the pause
                detector.end_after(end_after)
            if any(isinstance(e, SpeechEnded) for e in detector.push(np.zeros(512, np.float32), p)):
                ended_at[label] = (i, detector.state)
                break
    # The last voiced window is 9: 2 windows (64 ms) or 10 windows (320 ms) of silence after it.
    assert ended_at == {"sooner": (11, TurnState.QUIET), "later": (19, TurnState.QUIET)}


def test_speech_coming_back_in_a_pause_is_reported_and_the_next_pause_gets_the_hangover_again():
    detector = TurnDetector(CONFIG)
    events = []
    for i, p in enumerate([0.1] * 4 + [0.9] * 6 + [0.1] * 3 + [0.9] * 3 + [0.1] * 6):
        if i == 11:
            detector.end_after(1000)  # a long wait for this pause only
        events += [(i, e) for e in detector.push(np.zeros(512, np.float32), p)]
    resumed = [(i, e) for i, e in events if isinstance(e, SpeechResumed)]
    assert resumed == [(13, SpeechResumed(13, 96))]  # 3 quiet windows
    assert [i for i, e in events if isinstance(e, SpeechEnded)] == [20]  # the configured 5 windows after 15


BARGE_IN = TurnConfig(threshold=0.5, min_speech_ms=96, hangover_ms=160, max_utterance_s=2.0, lead_in_ms=64,
                      barge_in_ms=64)


def run_prepending(probabilities, at: int, question: np.ndarray):
    """`run`, with `question` prepended when the window `at` signals a start (as a call does on a cut-off)."""
    detector = TurnDetector(BARGE_IN)
    events = []
    for i, p in enumerate(probabilities):
        for e in detector.push(np.full(512, i, dtype=np.float32), p):
            if not isinstance(e, (SpeechPaused, SpeechResumed)):
                events.append((i, e))
            if i == at and type(e).__name__ == "SpeechStarted":
                detector.prepend(question)
    return events


def test_a_question_taken_back_on_a_blip_is_joined_to_the_callers_next_words():
    question = np.full(1000, -1, dtype=np.float32)
    # Two voiced windows signal a start (the answer is taken back), then a dip: too short to count alone.
    events = run_prepending([0.9, 0.9, 0.1, 0.1, 0.9, 0.9, 0.9, 0.9] + [0.1] * 6, 1, question)
    ended = [e for _, e in events if isinstance(e, SpeechEnded)]
    assert len(ended) == 1 and ended[0].audio[:1000].tolist() == question.tolist()
    assert set(ended[0].audio[1000:].tolist()) >= {0.0, 1.0, 4.0, 7.0}  # the blip, the quiet and the words


def test_a_question_taken_back_on_a_blip_that_nothing_follows_ends_after_the_hangover():
    question = np.full(1000, -1, dtype=np.float32)
    events = run_prepending([0.9, 0.9] + [0.1] * 8, 1, question)
    ended = [(i, e) for i, e in events if isinstance(e, SpeechEnded)]
    assert len(ended) == 1 and ended[0][1].audio[:1000].tolist() == question.tolist()
    assert ended[0][0] == 2 + 5  # the dip that abandoned the start, then the hangover: five quiet windows


def test_a_start_just_after_a_blip_began_with_the_blip():
    # "if" (2 windows, too short to signal) and 2 quiet windows, then the caller's next words.
    events, _ = run([0.1] * 4 + [0.9] * 2 + [0.1] * 2 + [0.9] * 6 + [0.1] * 6)
    (_, started), *_ = events
    assert (started.window, started.onset, started.began) == (8, 4, 4)


def test_a_start_long_after_a_blip_began_where_it_began():
    events, _ = run([0.1] * 4 + [0.9] * 2 + [0.1] * 8 + [0.9] * 6 + [0.1] * 6)
    (_, started), *_ = events
    assert (started.window, started.onset, started.began) == (14, None, 14)


def test_a_soft_beginning_under_the_threshold_stays_in_front_of_the_utterance():
    # Quiet, then six windows hovering under the threshold (a soft "I think I can"), then clear speech.
    events, _ = run([0.05] * 4 + [0.3, 0.4, 0.25, 0.45, 0.3, 0.4] + [0.9] * 6 + [0.05] * 6)
    ended = next(e for _, e in events if isinstance(e, SpeechEnded))
    assert sorted(set(ended.audio.astype(int)))[0] == 4  # from the first murmuring window, none of the quiet


def test_a_soft_beginning_never_reaches_back_into_the_last_utterance():
    # An utterance ends in windows just under the speaking threshold; the next one starts at once.
    events, _ = run([0.9] * 4 + [0.25] * 5 + [0.25] * 2 + [0.9] * 4 + [0.05] * 6)
    first, second = [(i, e) for i, e in events if isinstance(e, SpeechEnded)]
    assert first[0] == 8 and sorted(set(second[1].audio.astype(int)))[0] == 9


def test_a_held_question_is_not_heard_again_as_a_soft_beginning():
    question = np.full(1000, -1, dtype=np.float32)
    # A start taken back on a blip whose last window murmurs, then the caller's next words.
    events = run_prepending([0.9, 0.9, 0.3, 0.3, 0.9, 0.9, 0.9, 0.9] + [0.1] * 6, 1, question)
    (ended,) = [e for _, e in events if isinstance(e, SpeechEnded)]
    assert [int((ended.audio == w).sum()) for w in (0, 1, 2)] == [512, 512, 512]  # each window once


def test_words_after_a_held_question_ended_keep_their_lead_in():
    question = np.full(1000, -1, dtype=np.float32)
    # A start taken back on a blip, nothing after it (the held question ends at window 7), then the next words at once.
    events = run_prepending([0.9, 0.9] + [0.1] * 6 + [0.9] * 4 + [0.1] * 6, 1, question)
    held, following = [e for _, e in events if isinstance(e, SpeechEnded)]
    assert held.audio[:1000].tolist() == question.tolist()
    assert sorted(set(following.audio.astype(int)))[0] == 8 - BARGE_IN.windows(BARGE_IN.lead_in_ms)
