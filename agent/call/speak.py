"""A prepared reply to audio, sentence by sentence: the LLM's checked phrasing when one was asked for and comes in
time, else the KB's own sentences (the first rendered while the reply was prepared, the rest while the ones
before it play).

One input (a Prepared reply) and one output (its sentences, in order, as they are ready); the caller queues each
for the line and keeps the record. Synthesis stops when `cancelled` is set (barge-in, hold, shutdown).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass

import numpy as np

from agent.call.phrase import Phrasing
from agent.call.prepare import Pipeline, Prepared
from agent.knowledge.memory import CallMemory
from agent.knowledge.speakable import speakable


@dataclass(frozen=True)
class Sentence:
    text: str
    pcm: np.ndarray
    answerer: str
    """"llm" (the LLM's phrasing), "extractive" (the KB's sentences), "llm_rejected" (the KB's, the LLM's phrasing
    having been turned down or late)."""
    tts_ms: float | None = None
    """Synthesising it, for the first sentence of the reply."""
    written_at: float | None = None
    """Loop time the LLM had written the reply's first sentence (before it was synthesised)."""


def start_phrasing(pipeline: Pipeline, prepared: Prepared, memory: CallMemory) -> None:
    """Ask for the LLM's phrasing of a reply that had none asked yet (one the caller has just confirmed), from the
    call's memory before this reply is remembered."""
    if prepared.phrasing is None and pipeline.phraser is not None:
        prepared.phrasing = pipeline.phraser.start(prepared.reply, memory)


async def sentences(pipeline: Pipeline, prepared: Prepared, cancelled: threading.Event, turn_end: float,
                    deadline_s: float) -> AsyncIterator[Sentence]:
    """The reply's sentences as they are ready; the LLM's first is waited for until `turn_end` plus the phraser's
    first-sentence budget."""
    phrasing, answerer = prepared.phrasing, "extractive"
    if phrasing is not None:
        first = await phrasing.first(turn_end + pipeline.phraser.config.first_sentence_s)
        if first is not None:
            async for sentence in _phrased(pipeline, first, phrasing, cancelled, deadline_s):
                yield sentence
            return
        answerer = "llm_rejected"
    loop = asyncio.get_running_loop()
    for n, chunk in enumerate(prepared.chunks):
        if n == 0:
            yield Sentence(chunk.text, prepared.first_audio, answerer, prepared.tts_first_audio_ms)
            continue
        pcm = await asyncio.wait_for(loop.run_in_executor(
            pipeline.models, pipeline.voice.speak, chunk.spoken, cancelled), deadline_s)
        yield Sentence(chunk.text, pcm, answerer)


async def _phrased(pipeline: Pipeline, text: str | None, phrasing: Phrasing, cancelled: threading.Event,
                   deadline_s: float) -> AsyncIterator[Sentence]:
    """The LLM's sentences, each synthesised while the next is written and checked."""
    loop = asyncio.get_running_loop()
    written_at, first = loop.time(), True
    while text is not None:
        started = loop.time()
        pcm = await asyncio.wait_for(loop.run_in_executor(
            pipeline.models, pipeline.voice.speak, speakable(text), cancelled), deadline_s)
        yield Sentence(text, pcm, "llm", (loop.time() - started) * 1000 if first else None,
                       written_at if first else None)
        first = False
        text = await phrasing.next()
