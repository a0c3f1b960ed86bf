"""One caller utterance to everything the agent needs before it can speak: transcript, drafted reply,
and the first sentence's audio.

Made while the end-of-turn hangover runs, so it must be droppable: the reply is drafted against the
call's memory but not remembered (the session commits it once the turn is really over), and speech
synthesis stops when `cancelled` is set.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Executor
from dataclasses import dataclass, field

import numpy as np

from agent.call.clarify import listen_again, should_ask_again
from agent.call.voice import Voice
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


@dataclass
class Prepared:
    transcript: Transcript | None = None
    reply: Reply | None = None
    """None when there was nothing to answer (a cough, a click)."""
    chunks: list[ReplyChunk] = field(default_factory=list)
    first_audio: np.ndarray | None = None
    tts_first_audio_ms: float | None = None
    failed: tuple[str, Exception] | None = None
    """(stage, error) when a model failed."""
    ask_again: bool = False
    """The question was not heard well enough to answer (see clarify): ask the caller to repeat it."""
    second_listen: Transcript | None = None
    """What the careful second listen heard (see clarify), when there was one."""
    first_heard: Transcript | None = None
    """What Whisper heard first, when the second listen found the answer instead (`transcript` is then the
    second listen's)."""


async def prepare(pipeline: Pipeline, memory: CallMemory, audio: np.ndarray, cancelled: threading.Event,
                  asked_just_before: bool = False, speculative: bool = False,
                  heard: Transcript | None = None) -> Prepared:
    """`heard`: the utterance's transcript when it was already made (a speculative preparation refused after
    its decode), so it is not decoded again."""
    loop = asyncio.get_running_loop()
    prepared, stage = Prepared(transcript=heard), "asr"
    executor = pipeline.speculative if speculative else pipeline.models
    try:
        hint = pipeline.knowledge.vocabulary_hint()
        if prepared.transcript is None:
            prepared.transcript = await loop.run_in_executor(executor, pipeline.transcriber.transcribe, audio, hint)
        if len(prepared.transcript.text.strip(" .?!,")) < 2:
            return prepared
        stage = "answer"
        prepared.reply = await loop.run_in_executor(executor, pipeline.knowledge.draft, memory,
                                                    prepared.transcript.text)
        if should_ask_again(prepared.transcript, prepared.reply, asked_just_before):
            stage = "asr"
            second = await loop.run_in_executor(executor, listen_again, pipeline.transcriber, pipeline.knowledge,
                                                memory, audio, hint)
            prepared.second_listen = second.transcript
            if not second.found:
                prepared.ask_again = True
                return prepared
            prepared.first_heard = prepared.transcript
            prepared.transcript, prepared.reply = second.transcript, second.reply
        prepared.chunks = pipeline.knowledge.chunks(prepared.reply)
        stage, started = "tts", loop.time()
        prepared.first_audio = await loop.run_in_executor(executor, pipeline.voice.speak,
                                                          prepared.chunks[0].spoken, cancelled)
        prepared.tts_first_audio_ms = (loop.time() - started) * 1000
    except Exception as exc:
        prepared.failed = (stage, exc)
    return prepared
