"""How the eval's caller hears and scores each answer of a call, from the audio it received.

A replayed call (the eval caller's timeline and received.wav) or a recorded one (the caller's and the agent's
legs) gives one row per case: what the scorer heard of the answer (listening twice: the whole answer, and each
sentence alone), whether that is right or a decline, the latency from the question's last voiced frame to the
first voiced frame of the answer, and the barge-in reaction. The scorer's Whisper listens like a caller who
knows the company's names (the KB's hint); its ears are the same model as the agent's in its full window.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from agent.audio.pcm import StreamResampler
from eval.kit.cases import Case
from eval.kit.phone import load_wav
from eval.kit.recording import Legs
from eval.kit.scoring import contains_any, normalize
from eval.kit.wire import (
    TICK_MS,
    barge_in_reaction_ms,
    response_latency_ms,
    speech_bounds,
    speech_segments,
    tick_time,
    voiced_runs,
    voiced_ticks,
)

SENTENCE_GAP_TICKS = 15
"""Quiet ticks (300 ms) that part two of the agent's sentences when the scorer listens: Piper's pause between
sentences is ~400 ms on the wire, a comma's at most ~160 ms."""
PIECE_MARGIN_TICKS = 10
"""Received audio kept either side of a sentence the scorer hears (the level gate misses soft word ends)."""
ABSTAIN_WORDS = ("don't have information", "do not have information")


def heard_decline(heard: str) -> bool:
    """Whether the caller heard the agent decline. The scorer hears "the" before "information" in some of
    Piper's renderings of the phrase (Piper's synthesis is random: each agent start renders it anew)."""
    text = re.sub(r"\bhave (?:the|any) information\b", "have information", normalize(heard))
    return any(words in text for words in ABSTAIN_WORDS)


def score_call(cases: list[Case], timeline: dict, folder: Path, transcriber, vad_factory,
               hint: str = "") -> list[dict]:
    """One row per case of a call the eval caller placed: its last answer scored (after the caller repeated or
    confirmed, when it did), the latency of the agent's first reply to the question."""
    if "error" in timeline:
        return [{"id": c.id, "call": c.call, "error": timeline["error"]} for c in cases]
    received = load_wav(folder / "received.wav")
    voiced = voiced_ticks([received[i:i + 320] for i in range(0, len(received) - 319, 320)])
    steps = timeline.get("steps", [])
    script = json.loads((folder / "script.json").read_text())
    rows = []
    for n, case in enumerate(cases):
        mine = [i for i, step in enumerate(steps) if step.get("case", i) == n]
        if not mine:
            rows.append({**_row(case), "error": "the question was never asked (call ended early)"})
            continue
        onset_tick, question_end = _voiced_span(steps[mine[0]], script[n]["audio"], vad_factory)
        _, answered_from = _voiced_span(steps[mine[-1]], _step_audio(script[n], steps[mine[-1]]), vad_factory)
        end_tick = steps[mine[-1] + 1]["start_tick"] if mine[-1] + 1 < len(steps) else len(received) // 320
        row = _score_answer(cases, n, onset_tick, answered_from, end_tick, received, voiced, transcriber, hint)
        # The agent talking while the question is still being said: it took part of it for the whole.
        talk_over = [t for t in voiced if onset_tick < t < question_end]
        row.update(latency_ms=response_latency_ms(question_end, voiced), steps=mine,
                   exchanges=[steps[i].get("kind", "question") for i in mine],
                   # What the caller made of the agent's reply to each step (with --caller-repeats).
                   caller_heard=[steps[i].get("caller_heard", "") for i in mine],
                   cut_off=bool(talk_over) and case.barge_in_at_ms is None, talk_over_ms=len(talk_over) * TICK_MS)
        if "clock" in timeline:  # the question's end on the agent's clock, to split the latency (diagnosis)
            row["question_end_at"] = tick_time(timeline["clock"], question_end)
        rows.append(row)
    return rows


def _step_audio(entry: dict, step: dict) -> str:
    """The WAV a step said: the question, or the caller's reply to a clarification (repeat, yes, no)."""
    kind = step.get("kind", "question")
    return entry["audio"] if kind == "question" else entry[f"{kind}_audio"]


def _voiced_span(step: dict, wav: str, vad_factory) -> tuple[int, int]:
    """The ticks where a step's speech starts and where its last voiced window ends."""
    sent = load_wav(Path(wav))
    bounds = speech_bounds(vad_factory().push(sent.astype(np.float32) / 32768))
    if not bounds:
        return step["start_tick"], step["start_tick"] + len(sent) // 320
    return step["start_tick"] + bounds[0] * 512 // 320, step["start_tick"] + (bounds[1] + 1) * 512 // 320


def score_recording(cases: list[Case], legs: Legs, transcriber, vad_factory, hint: str = "") -> list[dict]:
    """One row per case of a recorded call: the caller's utterances (VAD on the caller's leg) are the
    cases' questions in order; the agent's leg is scored exactly as a replayed call's received audio."""
    caller, agent = _to_16k(legs.caller, legs.rate), _to_16k(legs.agent, legs.rate)
    utterances = speech_segments(vad_factory().push(caller.astype(np.float32) / 32768), 512 / 16)
    voiced = voiced_ticks([agent[i:i + 320] for i in range(0, len(agent) - 319, 320)], first_tick=0)
    rows = []
    for n, case in enumerate(cases):
        if n >= len(utterances):
            rows.append({**_row(case), "error": f"the recording has {len(utterances)} caller utterance(s), "
                                                f"fewer than the call's {len(cases)} questions"})
            continue
        start_ms, end_ms = utterances[n]
        end_tick = int(utterances[n + 1][0] // TICK_MS) if n + 1 < len(utterances) else len(agent) // 320
        rows.append(_score_answer(cases, n, int(start_ms // TICK_MS), int(end_ms // TICK_MS), end_tick, agent, voiced,
                                  transcriber, hint))
    return rows


def _to_16k(pcm: np.ndarray, rate: int) -> np.ndarray:
    if rate == 16000:
        return pcm
    resampler = StreamResampler(rate, 16000)
    return np.concatenate([resampler.push(pcm), resampler.flush()])


def _row(case: Case) -> dict:
    return {"id": case.id, "call": case.call, "question": case.say, "expect_abstain": case.expect_abstain,
            "expect_any": list(case.expect_any)}


def _score_answer(cases: list[Case], n: int, onset_tick: int, last_voiced_tick: int, end_tick: int,
                  received: np.ndarray, voiced: list[int], transcriber, hint: str) -> dict:
    """Score the n-th question of a call from the agent's 16 kHz audio and its voiced ticks."""
    case, row = cases[n], _row(cases[n])
    heard = _hear(received, last_voiced_tick, end_tick, transcriber, hint)
    by_sentence = hear_by_sentence(received, voiced, last_voiced_tick, end_tick, transcriber, hint)
    # Heard by either listening: Whisper's errors in the two are apart, the agent's words are the same.
    abstained = heard_decline(heard) or heard_decline(by_sentence)
    row.update(heard=heard, heard_by_sentence=by_sentence, abstained=abstained,
               latency_ms=response_latency_ms(last_voiced_tick, voiced),
               correct=abstained if case.expect_abstain else
               contains_any(heard, case.expect_any) or contains_any(by_sentence, case.expect_any))
    if case.barge_in_at_ms is not None:
        row["bargein_ms"] = barge_in_reaction_ms(onset_tick, voiced)
    if n + 1 < len(cases) and cases[n + 1].barge_in_at_ms is not None:
        row.update(correct=None, interrupted=True)  # the caller talks over this answer on purpose
    return row


def hear_by_sentence(received: np.ndarray, voiced: list[int], first_tick: int, end_tick: int, transcriber,
                     hint: str) -> str:
    """The scorer's second listening to the agent's answer between two ticks: each of its sentences (voiced runs
    apart by a pause as long as the agent's between sentences) transcribed alone, the texts joined. Whisper on a
    whole reply may end its transcript early ("… before it starts." without the $40 fee the agent said next);
    alone, a run may lose its context ("555. 0-142" for a number said with a pause in it): the scorer counts
    what either listening heard."""
    texts = [_hear(received, max(first_tick, first - PIECE_MARGIN_TICKS),
                   min(end_tick, last + 1 + PIECE_MARGIN_TICKS), transcriber, hint).strip()
             for first, last in voiced_runs(voiced, first_tick, end_tick, SENTENCE_GAP_TICKS)]
    return " ".join(t for t in texts if t)


def _hear(received: np.ndarray, first_tick: int, end_tick: int, transcriber, hint: str) -> str:
    """The scorer's transcript of the received audio between two ticks ('' for none)."""
    audio = received[first_tick * 320:end_tick * 320]
    return transcriber.transcribe(audio.astype(np.float32) / 32768, hint).text if len(audio) else ""


def scorer(model):
    """The scorer's ears: the same Whisper model in its full 30 s window (its most accurate), not the agent's
    faster utterance-sized one."""
    from agent.speech.asr import Transcriber
    from agent.speech.window import FULL_WINDOW

    return Transcriber(model, threads=1, min_window=FULL_WINDOW)
