import numpy as np

from eval.kit.wire import (
    answer_over,
    barge_in_reaction_ms,
    latency_split,
    response_latency_ms,
    speech_bounds,
    speech_segments,
    tick_time,
    voiced_runs,
    voiced_ticks,
)


def test_voiced_ticks_by_rms():
    frames = [np.zeros(320, np.int16), np.full(320, 1000, np.int16), np.full(320, 100, np.int16)]
    assert voiced_ticks(frames) == [2] and voiced_ticks(frames, first_tick=10) == [11]


def test_speech_bounds():
    assert speech_bounds([0.1, 0.6, 0.2, 0.9, 0.3]) == (1, 3) and speech_bounds([0.1, 0.2]) is None


def test_response_latency_from_a_synthetic_timeline():
    received = [1, 2, 3, 150, 151, 152]  # greeting, then the answer from tick 150
    assert response_latency_ms(100, received) == 50 * 20
    assert response_latency_ms(160, received) is None


def test_barge_in_reaction_is_onset_to_the_last_voiced_tick_before_silence():
    answer = list(range(200, 240)) + list(range(300, 400))  # the agent stops at 239, answers again at 300
    assert barge_in_reaction_ms(230, answer) == 10 * 20
    assert barge_in_reaction_ms(250, answer) == 0


def test_an_agent_that_never_stops_has_no_reaction_time():
    assert barge_in_reaction_ms(10, list(range(0, 500))) is None


def test_speech_bounds_on_known_audio(models, tmp_path):
    """One second of silence, a spoken sentence, one second of silence: bounds land on the speech."""
    from agent.audio.pcm import StreamResampler, int16_to_float
    from tests.conftest import synthesize_caller

    pcm8 = synthesize_caller(tmp_path, "Please tell me the price of a boiler service.")
    resampler = StreamResampler(8000, 16000)
    speech = np.concatenate([resampler.push(pcm8), resampler.flush()])
    audio = np.concatenate([np.zeros(16000, np.int16), speech, np.zeros(16000, np.int16)])
    onset, offset = speech_bounds(models.new_vad().push(int16_to_float(audio)))
    onset_s, offset_s = onset * 512 / 16000, (offset + 1) * 512 / 16000
    loud = np.flatnonzero(np.abs(speech.astype(int)) > 300)  # where the synthesized voice really is
    assert abs(onset_s - (1 + loud[0] / 16000)) <= 0.15
    assert abs(offset_s - (1 + loud[-1] / 16000)) <= 0.25


def test_process_usage_reads_this_process():
    import os

    from eval.kit.machine import process_usage

    cpu, rss = process_usage(os.getpid())
    assert cpu > 0 and rss > 10


def test_speech_segments_merge_short_pauses_and_drop_blips():
    p = [0.0] * 64
    p[1:7] = p[9:15] = [0.9] * 6  # two runs 64 ms apart: one utterance
    p[33] = 0.9  # one 32 ms window: a blip
    p[55:62] = [0.9] * 7
    assert speech_segments(p, 32, merge_gap_ms=200, min_speech_ms=100) == [(32, 480), (1760, 1984)]


def test_an_answer_is_over_after_it_was_heard_and_then_quiet_long_enough():
    assert not answer_over([], 200, 1000)  # nothing heard yet
    assert not answer_over([10, 11, 60], 100, 1000)  # 40 quiet ticks: 800 ms
    assert answer_over([10, 11, 60], 110, 1000)  # 50 quiet ticks: 1 s


def test_a_tick_is_timed_between_the_two_ends_of_the_callers_clock():
    clock = [1000.0, 501, 1010.1]  # tick 1 at 1000 s, tick 501 at 1010.1 s: a clock 1% slow
    assert tick_time(clock, 1) == 1000.0
    assert abs(tick_time(clock, 251) - 1005.05) < 1e-9


def test_the_latency_is_split_into_way_in_agent_and_way_out():
    # The question ended at 100.000 s; the agent heard it end at 100.080 s and queued its reply 450 ms later;
    # the caller heard the first voiced frame 660 ms after the question ended.
    split = latency_split(660, 100.0, 100.08, 450.4)
    assert split == {"way_in_ms": 80, "agent_ms": 450, "way_out_ms": 130}


def test_voiced_runs_part_where_the_quiet_is_long_enough_and_keep_to_the_window():
    voiced = [3, 4, 5, 9, 10, 30, 31, 60]
    assert voiced_runs(voiced, 0, 50, gap_ticks=5) == [(3, 10), (30, 31)]
    assert voiced_runs(voiced, 0, 50, gap_ticks=3) == [(3, 5), (9, 10), (30, 31)]
    assert voiced_runs(voiced, 9, 61, gap_ticks=50) == [(9, 60)]
    assert voiced_runs(voiced, 11, 30, gap_ticks=5) == []
