"""Pure timing on the wire: voiced ticks, speech bounds, response latency and barge-in reaction.

A tick is one 20 ms frame of the eval caller's media clock; sent and received
audio share it, so differences of ticks are times measured on the wire.
"""

from __future__ import annotations

import bisect

import numpy as np

TICK_MS = 20
VOICED_RMS = 300.0
"""int16 RMS above which a received frame counts as the agent speaking (silence and comfort noise
sit well below; Piper speech at −6 dB well above)."""


def voiced_ticks(frames: list[np.ndarray], threshold: float = VOICED_RMS, first_tick: int = 1) -> list[int]:
    """Tick numbers of the frames whose RMS is above threshold."""
    return [first_tick + i for i, f in enumerate(frames) if np.sqrt(np.mean(f.astype(np.float64) ** 2)) > threshold]


def answer_over(voiced: list[int], ticks: int, quiet_ms: int) -> bool:
    """Whether an answer has come and gone: some of `ticks` received ticks were voiced (`voiced`, tick
    numbers counted from 1) and the last `quiet_ms` of them were not."""
    return bool(voiced) and (ticks - voiced[-1]) * TICK_MS >= quiet_ms


def speech_bounds(probabilities: list[float], threshold: float = 0.5) -> tuple[int, int] | None:
    """First and last VAD window at or above threshold, or None when there is no speech."""
    voiced = [i for i, p in enumerate(probabilities) if p >= threshold]
    return (voiced[0], voiced[-1]) if voiced else None


def response_latency_ms(question_last_voiced_tick: int, received_voiced: list[int]) -> float | None:
    """From the question's last voiced tick to the first voiced tick the caller received after it."""
    index = bisect.bisect_right(received_voiced, question_last_voiced_tick)
    if index == len(received_voiced):
        return None
    return (received_voiced[index] - question_last_voiced_tick) * TICK_MS


def tick_time(clock: list[float], tick: int) -> float:
    """Unix time of a tick of the caller's media clock, from the caller's record of it: [Unix time of tick 1,
    a later tick, that tick's Unix time] (the clock runs at its own pace, so the two ends are interpolated)."""
    first, last_tick, last = clock
    per_tick = (last - first) / (last_tick - 1) if last_tick > 1 else TICK_MS / 1000
    return first + (tick - 1) * per_tick


def latency_split(latency_ms: float, question_end_at: float, heard_end_at: float, response_ms: float) -> dict:
    """A reply's latency on the wire, split where the agent's record of the turn allows: the way in (the
    caller's end of speech → the end the agent's VAD heard: the caller's RTP, the agent's jitter buffer and
    bridge, the listening clock, the VAD's tail), the agent (its own end of speech → first reply frame queued)
    and the way out (the frame's way through the agent's bridge, RTP and the caller's jitter buffer, to the first
    voiced frame the caller received). Times in Unix seconds, lengths in ms."""
    way_in, agent = round((heard_end_at - question_end_at) * 1000), round(response_ms)
    return {"way_in_ms": way_in, "agent_ms": agent, "way_out_ms": round(latency_ms) - way_in - agent}


def barge_in_reaction_ms(onset_tick: int, received_voiced: list[int], silent_ticks: int = 10) -> float | None:
    """From the caller's speech onset to the agent's last voiced tick before it went quiet for
    `silent_ticks` (0 when the agent was already quiet; None when it never stopped)."""
    start = bisect.bisect_left(received_voiced, onset_tick)
    last = onset_tick - 1
    for tick in received_voiced[start:]:
        if tick - last > silent_ticks:
            return max(0, last + 1 - onset_tick) * TICK_MS
        last = tick
    return None if start < len(received_voiced) else 0.0


def speech_segments(probabilities: list[float], window_ms: float, threshold: float = 0.5,
                    merge_gap_ms: float = 700, min_speech_ms: float = 200) -> list[tuple[float, float]]:
    """Utterances as (start_ms, end_ms) from per-window VAD probabilities: voiced runs closer than
    `merge_gap_ms` are one utterance (a pause mid-question), runs shorter than `min_speech_ms` are noise."""
    runs: list[list[float]] = []
    for i, p in enumerate(probabilities):
        if p < threshold:
            continue
        start, end = i * window_ms, (i + 1) * window_ms
        if runs and start - runs[-1][1] < merge_gap_ms:
            runs[-1][1] = end
        else:
            runs.append([start, end])
    return [(start, end) for start, end in runs if end - start >= min_speech_ms]


def voiced_runs(voiced: list[int], first: int, end: int, gap_ticks: int) -> list[tuple[int, int]]:
    """The voiced ticks in [first, end) as runs (first tick, last tick), a new run wherever `gap_ticks` or more
    unvoiced ticks lie between two voiced ones: the agent's sentences, apart by its pause between them."""
    runs: list[list[int]] = []
    for tick in voiced[bisect.bisect_left(voiced, first):bisect.bisect_left(voiced, end)]:
        if runs and tick - runs[-1][1] <= gap_ticks:
            runs[-1][1] = tick
        else:
            runs.append([tick, tick])
    return [(a, b) for a, b in runs]
