"""When the second recogniser hears a turn: beside the first for a caller the first already left in doubt, when a
CPU core is free, so a doubtful turn waits for one decode rather than two in a row; otherwise after the first, and
only for a doubtful turn (the bundled KB, scripted recognisers, the agent's own model workers)."""

import asyncio
import threading
import time
from concurrent.futures import Executor

import numpy as np

from agent.call.commands import UNCLARIFIED, Action
from agent.call.understanding.prepare import Pipeline, understand_utterance
from agent.call.understanding.replies import Replies
from agent.call.workers import ModelWorkers, Priority
from agent.knowledge.memory import CallMemory
from agent.speech.asr import Hypothesis, Transcript
from tests.call.test_message_offer import AlwaysBusy

AUDIO = np.zeros(32000, dtype=np.float32)


def said(text: str, logprob: float) -> Transcript:
    return Transcript(text, "en", 2.0, 0.01, avg_logprob=logprob, hypotheses=(Hypothesis(text, logprob),))


class First:
    """tiny.en: hears `text`, and notes whether the second recogniser had started by the time it finished."""

    beam_size = 1

    def __init__(self, text: str, second_started: threading.Event, wait_s: float = 0.0) -> None:
        self.text, self.second_started, self.wait_s = text, second_started, wait_s
        self.second_had_started: bool | None = None

    def transcribe(self, audio, prompt=None, beam_size=None, hypotheses=1, full_window=False):
        self.second_had_started = self.second_started.wait(self.wait_s)
        return said(self.text, -0.6)


class Second:
    beam_size = 1

    def __init__(self, text: str) -> None:
        self.text, self.started, self.asked = text, threading.Event(), 0

    def transcribe(self, audio, prompt=None, beam_size=None, hypotheses=1, full_window=False):
        self.asked += 1
        self.started.set()
        return said(self.text, -0.2)


def prepare(knowledge, first, second, spare, hard_to_hear: bool = True) -> tuple:
    workers = ModelWorkers(4, cores=2)
    pipeline = Pipeline(first, knowledge, None, workers.lane(Priority.URGENT), workers.lane(Priority.SPECULATIVE),
                        second_transcriber=second, spare=spare(workers) if spare else AlwaysBusy())
    try:
        return asyncio.run(understand_utterance(pipeline, CallMemory(), AUDIO, hard_to_hear=hard_to_hear))
    finally:
        workers.shutdown()


def test_for_a_caller_hard_to_hear_with_a_core_free_the_second_listen_starts_beside_the_first(bundled_kb):
    second = Second("How far will you travel?")
    first = First("Half our will you travel.", second.started, wait_s=10)
    prepared = prepare(bundled_kb, first, second, lambda workers: workers.lane(Priority.SPARE))
    assert first.second_had_started, "the second decode waited for the first"
    assert prepared.action is Action.CONFIRM and prepared.heard_again_from == "Half our will you travel."
    assert prepared.heard_twice


def test_for_a_caller_heard_well_so_far_the_second_listen_waits_for_the_first(bundled_kb):
    """Beside it, the first decode ran a quarter slower: a caller it hears well would pay that on every answer."""
    second = Second("How far will you travel?")
    first = First("Half our will you travel.", second.started)
    prepared = prepare(bundled_kb, first, second, lambda workers: workers.lane(Priority.SPARE), hard_to_hear=False)
    assert first.second_had_started is False and second.asked == 1 and prepared.heard_twice


def test_with_no_core_free_a_doubtful_turn_is_heard_again_after_the_first(bundled_kb):
    second = Second("How far will you travel?")
    first = First("Half our will you travel.", second.started)
    prepared = prepare(bundled_kb, first, second, None)
    assert first.second_had_started is False and second.asked == 1
    assert prepared.action is Action.CONFIRM


def test_with_no_core_free_a_turn_answered_outright_is_not_heard_again(bundled_kb):
    second = Second("How far will you travel?")
    prepared = prepare(bundled_kb, First("How far will you travel?", second.started), second, None)
    assert second.asked == 0 and prepared.action is Action.ANSWER and not prepared.abstained
    assert not prepared.heard_twice


class Counted(Executor):
    """The spare lane, counting what is started on it."""

    def __init__(self, lane: Executor) -> None:
        self.lane, self.started = lane, 0

    def submit(self, fn, /, *args, **kwargs):
        self.started += 1
        return self.lane.submit(fn, *args, **kwargs)


class Turns:
    """tiny.en hearing each turn as the next line; it notes, per turn, whether the second was started beside it."""

    beam_size = 1

    def __init__(self, lines: list[str], spare: Counted) -> None:
        self.lines, self.spare, self.started_beside = list(lines), spare, []

    def transcribe(self, audio, prompt=None, beam_size=None, hypotheses=1, full_window=False):
        before = sum(self.started_beside)
        deadline = time.monotonic() + (10 if self.started_beside else 0)  # the event loop starts it after this
        while self.spare.started == before and time.monotonic() < deadline:
            time.sleep(0.01)
        self.started_beside.append(self.spare.started > before)
        return said(self.lines.pop(0), -0.6)


def test_a_call_the_first_recogniser_left_in_doubt_has_the_second_start_beside_it_from_then_on(bundled_kb):
    workers = ModelWorkers(4, cores=2)
    spare = Counted(workers.lane(Priority.SPARE))
    first = Turns(["Half our will you travel.", "Half our will you travel."], spare)
    pipeline = Pipeline(first, bundled_kb, None, workers.lane(Priority.URGENT), workers.lane(Priority.SPECULATIVE),
                        second_transcriber=Second("How far will you travel?"), spare=spare)

    async def two_turns() -> None:
        replies = Replies(pipeline, CallMemory(), deadline_s=30)
        for window in (1, 2):
            task, cancelled = replies.take(window, AUDIO, UNCLARIFIED)
            await replies.ready(task, AUDIO, UNCLARIFIED, cancelled)

    try:
        asyncio.run(two_turns())
    finally:
        workers.shutdown()
    assert first.started_beside == [False, True]
