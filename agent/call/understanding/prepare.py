"""One caller utterance to everything the agent needs before it can speak: the readings Whisper heard, what the
agent makes of them (see understand), the drafted reply, and the first sentence's audio (or the confirmation's).

Made while the end-of-turn hangover runs, so it must be droppable: the reply is drafted against the
call's memory but not remembered (the session commits it once the turn is really over), and speech
synthesis stops when `cancelled` is set.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from agent.call.commands import UNCLARIFIED, Action, Clarified
from agent.call.speaking.phrase import Phraser, Phrasing
from agent.call.speaking.voice import Voice
from agent.call.understanding.hear_again import hear
from agent.call.understanding.understand import Understanding
from agent.call.workers import Busy
from agent.knowledge.base import KnowledgeBase, Reply, ReplyChunk
from agent.knowledge.memory import CallMemory
from agent.speech.asr import Transcriber, Transcript


@dataclass(frozen=True)
class Pipeline:
    """The models a turn runs through; `models` is the executor they run on, off the event loop."""

    transcriber: Transcriber
    knowledge: KnowledgeBase
    voice: Voice
    models: Executor
    speculative: Executor
    """Where replies prepared during a pause run: may refuse them (call/workers.Busy) when nobody is free."""
    phraser: Phraser | None = None
    """An LLM that phrases the KB's answers (call/phrase); None: the KB's sentences are spoken."""
    second_transcriber: Transcriber | None = None
    """A larger recogniser that hears again what the first left doubtful (see hear_again); None: none."""
    spare: Executor | None = None
    """Where the second recogniser starts beside the first, for a caller the first hears badly, when a CPU core is
    free (call/workers: refused otherwise); None: it hears a turn only once the first has left it in doubt."""

    def executor(self, speculative: bool) -> Executor:
        return self.speculative if speculative else self.models


@dataclass
class Prepared:
    transcript: Transcript | None = None
    understanding: Understanding | None = None
    """None when there was nothing to answer (a cough, a click)."""
    heard_again_from: str = ""
    """What the first recogniser heard, when the second's readings were acted on (see hear_again)."""
    heard_twice: bool = False
    """The first recogniser left it in doubt and the second heard it too (see hear_again)."""
    chunks: list[ReplyChunk] = field(default_factory=list)
    first_audio: np.ndarray | None = None
    tts_first_audio_ms: float | None = None
    confirm_audio: np.ndarray | None = None
    """The confirmation ("Are you asking about …?") when the agent confirms before it answers."""
    failed: tuple[str, Exception] | None = None
    """(stage, error) when a model failed."""
    phrasing: Phrasing | None = None
    """The LLM phrasing the answer, asked as soon as the answer is known (while its own voice renders); closed by
    whoever drops or speaks this reply."""

    def close(self) -> None:
        """Stop the LLM's phrasing, if one was asked for (the reply was dropped, or is done)."""
        if self.phrasing is not None:
            self.phrasing.close()

    @property
    def reply(self) -> Reply | None:
        return self.understanding.reply if self.understanding is not None else None

    @property
    def action(self) -> Action | None:
        return self.understanding.action if self.understanding is not None else None

    @property
    def abstained(self) -> bool:
        """The KB declined the question (its reply is the decline)."""
        return self.reply is not None and self.reply.abstained

    @property
    def sources(self) -> frozenset[str]:
        """The ids of the passages the reply speaks from."""
        return frozenset(s.chunk_id for s in self.reply.sources) if self.reply is not None else frozenset()


async def understand_utterance(pipeline: Pipeline, memory: CallMemory, audio: np.ndarray,
                               clarified: Clarified = UNCLARIFIED, speculative: bool = False,
                               heard: Transcript | None = None, hard_to_hear: bool = False) -> Prepared:
    """What was heard and what the KB makes of it, nothing rendered yet (the end of a turn is judged on this, and
    need not wait for the voice). `clarified`: what this question was asked already (see understand); `heard`:
    the utterance's transcript when it was already made (a speculative preparation refused after its decode),
    so it is not decoded again; `hard_to_hear`: the first recogniser left an earlier turn of this caller's in
    doubt, so the second starts beside it (see _start_ahead)."""
    loop = asyncio.get_running_loop()
    prepared, stage = Prepared(transcript=heard), "asr"
    executor = pipeline.executor(speculative)
    try:
        hint = pipeline.knowledge.vocabulary_hint()
        second = pipeline.second_transcriber
        decode_again = partial(second.transcribe, audio, hint, hypotheses=second.beam_size) if second else None
        ahead = None
        if prepared.transcript is None:
            # Every reading of the beam's best is weighed against the KB (see understand).
            first = loop.run_in_executor(executor, partial(pipeline.transcriber.transcribe, audio, hint,
                                                           hypotheses=pipeline.transcriber.beam_size))
            if hard_to_hear:  # after the first: it must not take the first's worker
                ahead = _start_ahead(pipeline.spare, decode_again)
            prepared.transcript = await first
        stage = "answer"
        understood = await loop.run_in_executor(executor, hear, pipeline.knowledge, memory, prepared.transcript,
                                                clarified, _listen_again(ahead, decode_again))
        prepared.transcript, prepared.understanding = understood.transcript, understood.understanding
        prepared.heard_again_from = understood.first_heard
        prepared.heard_twice = understood.heard_twice
    except Exception as exc:
        prepared.failed = (stage, exc)
    return prepared


def _start_ahead(spare: Executor | None, decode_again: Callable[[], Transcript] | None) -> Future | None:
    """The second listen started beside the first, on a core nobody uses: a doubtful turn then waits for the longer
    decode alone, not for both one after the other. Only for a caller the first recogniser already left in doubt
    (in voices tiny.en hears badly, half the turns): beside it, the first decode itself ran a quarter slower on two
    cores (eval.replay, bundled calls), which a caller it hears well would pay on every answer. Its result is
    dropped when the first is answered; it is refused when no core is free, and then heard only if needed."""
    return spare.submit(decode_again) if spare is not None and decode_again is not None else None


def _listen_again(ahead: Future | None, decode_again: Callable[[], Transcript] | None
                  ) -> Callable[[], Transcript] | None:
    """What hear_again calls for the second reading: the one started ahead, or a decode now if none was."""
    if decode_again is None:
        return None

    def listen() -> Transcript:
        # One still queued behind other calls' work is taken back and decoded here, on the worker already held.
        if ahead is not None and not ahead.cancel():
            try:
                return ahead.result()
            except Busy:
                pass
        return decode_again()
    return listen


async def render(pipeline: Pipeline, memory: CallMemory, prepared: Prepared, cancelled: threading.Event,
                 speculative: bool = False) -> Prepared:
    """The understood reply made ready to speak: its LLM phrasing asked for, its sentences, the first one's audio
    (or the confirmation's). Nothing to do for a cough, a failure or a request to say it again."""
    if prepared.failed is not None or prepared.action in (None, Action.ASK_AGAIN):
        return prepared
    loop = asyncio.get_running_loop()
    executor, stage = pipeline.executor(speculative), "answer"
    try:
        if pipeline.phraser is not None and prepared.action is Action.ANSWER:
            prepared.phrasing = pipeline.phraser.start(prepared.reply, memory)
        prepared.chunks = pipeline.knowledge.chunks(prepared.reply)
        stage, started = "tts", loop.time()
        prepared.first_audio = await loop.run_in_executor(executor, pipeline.voice.speak,
                                                          prepared.chunks[0].spoken, cancelled)
        prepared.tts_first_audio_ms = (loop.time() - started) * 1000
        if prepared.action is Action.CONFIRM:
            prepared.confirm_audio = await loop.run_in_executor(executor, pipeline.voice.speak,
                                                                prepared.understanding.confirm_text, cancelled)
    except Exception as exc:
        prepared.failed = (stage, exc)
    except asyncio.CancelledError:
        prepared.close()
        raise
    return prepared


async def prepare(pipeline: Pipeline, memory: CallMemory, audio: np.ndarray, cancelled: threading.Event,
                  clarified: Clarified = UNCLARIFIED, speculative: bool = False,
                  heard: Transcript | None = None, hard_to_hear: bool = False) -> Prepared:
    """The utterance understood, then rendered."""
    prepared = await understand_utterance(pipeline, memory, audio, clarified, speculative, heard, hard_to_hear)
    return await render(pipeline, memory, prepared, cancelled, speculative)
