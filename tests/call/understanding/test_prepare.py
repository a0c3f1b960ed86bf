"""When the second recogniser hears a turn: beside the first when a CPU core is free, so a doubtful turn waits for
one decode rather than two in a row; after the first, and only for a doubtful turn, when none is (the bundled KB,
scripted recognisers, the agent's own model workers)."""

import asyncio
import threading
from concurrent.futures import Future

import numpy as np

from agent.call.commands import Action
from agent.call.understanding.prepare import Pipeline, understand_utterance
from agent.call.workers import Busy, ModelWorkers, Priority
from agent.knowledge.memory import CallMemory
from agent.speech.asr import Hypothesis, Transcript

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


class NoCoreFree:
    def submit(self, fn, /, *args, **kwargs):
        refused = Future()
        refused.set_exception(Busy("no CPU core free for spare work"))
        return refused


def prepare(knowledge, first, second, spare) -> tuple:
    workers = ModelWorkers(4, cores=2)
    pipeline = Pipeline(first, knowledge, None, workers.lane(Priority.URGENT), workers.lane(Priority.SPECULATIVE),
                        second_transcriber=second, spare=spare(workers) if spare else NoCoreFree())
    try:
        return asyncio.run(understand_utterance(pipeline, CallMemory(), AUDIO))
    finally:
        workers.shutdown()


def test_with_a_core_free_the_second_listen_starts_beside_the_first(bundled_kb):
    second = Second("How far will you travel?")
    first = First("Half our will you travel.", second.started, wait_s=10)
    prepared = prepare(bundled_kb, first, second, lambda workers: workers.lane(Priority.SPARE))
    assert first.second_had_started, "the second decode waited for the first"
    assert prepared.action is Action.CONFIRM and prepared.heard_again_from == "Half our will you travel."


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
