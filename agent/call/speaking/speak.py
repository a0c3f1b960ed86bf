"""A prepared reply to audio, sentence by sentence: the LLM's checked phrasing when one was asked for and comes in
time, else the KB's own sentences (the first rendered while the reply was prepared, the rest while the ones
before it play).

`sentences` has one input (a Prepared reply) and one output (its sentences, in order, as they are ready); `Speaker`
queues them on the line and writes what was spoken into the turn's record. Synthesis stops when `cancelled` is set
(barge-in, hold, shutdown).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass

import numpy as np

from agent.call.record import TurnRecord
from agent.call.speaking.phrase import Phrasing
from agent.call.transport import RATE, CallTransport
from agent.call.understanding.prepare import Pipeline, Prepared
from agent.knowledge.memory import CallMemory
from agent.knowledge.speakable import speakable

LONGEST_PHRASE_S = 15.0
"""The longest fixed line (a goodbye, "putting you through"), with room to spare."""
LINE_TAIL_S = 0.5
"""After the last frame leaves the queue it still crosses the bridge, the network and the caller's jitter
buffer, which a BYE discards: the goodbye's last word must be out of the buffer before the call ends."""


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
    yield Sentence(prepared.chunks[0].text, prepared.first_audio, answerer, prepared.tts_first_audio_ms)
    for chunk in prepared.chunks[1:]:
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


class Speaker:
    """What the caller hears from the agent: audio queued on the line, prepared replies spoken into it (each
    remembered in the call's memory as it starts), and the last one kept for * to repeat."""

    def __init__(self, leg: CallTransport, pipeline: Pipeline, memory: CallMemory, deadline_s: float) -> None:
        self._leg, self._pipeline, self._memory, self._deadline_s = leg, pipeline, memory, deadline_s
        self._remembered = None
        """The call memory's entry for the last answer spoken (forgotten if that answer is taken back)."""
        self.last_reply = np.zeros(0, dtype=np.int16)
        """The last answer as it was spoken."""

    def say(self, pcm: np.ndarray) -> None:
        self._leg.playout.say(pcm)

    async def played(self, ended: asyncio.Event, limit_s: float = LONGEST_PHRASE_S) -> None:
        """Until the line has played everything queued, the call `ended`, or `limit_s` passed (a line that stops
        taking audio, as on a hold that came just now, never drains)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit_s
        while self._leg.playout.pending_frames and not ended.is_set() and loop.time() < deadline:
            await asyncio.sleep(0.05)

    async def last_words(self, pcm: np.ndarray, ended: asyncio.Event) -> None:
        """Say `pcm` (a goodbye), let it play out, then hang up."""
        self.say(pcm)
        await self.played(ended)
        if not ended.is_set():
            await asyncio.sleep(LINE_TAIL_S)
        self._leg.hang_up()

    def response_ms(self, speech_end: float) -> float:
        """End of the caller's speech (loop time) to the next frame queued now, which goes out after whatever is
        queued already."""
        playout = self._leg.playout
        queued_s = playout.pending_frames * playout.frame_samples / RATE
        return (asyncio.get_running_loop().time() + queued_s - speech_end) * 1000

    def forget_last_answer(self) -> None:
        """The last answer was taken back: the call's memory forgets it, so the next turn is not taken for a
        follow-up to it."""
        if self._memory.turns and self._memory.turns[-1] is self._remembered:
            self._memory.turns.pop()

    async def reply(self, prepared: Prepared, turn: TurnRecord, cancelled: threading.Event, speech_end: float,
                    turn_end: float) -> None:
        """Remember the reply, then speak it sentence by sentence, writing what was spoken into `turn`."""
        pipeline = self._pipeline
        start_phrasing(pipeline, prepared, self._memory)  # from the memory before this turn
        reply = prepared.reply
        pipeline.knowledge.commit(self._memory, reply)
        self._remembered = self._memory.turns[-1] if self._memory.turns else None
        turn.sources = [f"{s.path}#{s.chunk_id}" for s in reply.sources]
        turn.abstained, turn.answerer = reply.abstained, "extractive"
        if prepared.phrasing is None and pipeline.phraser is not None and not reply.abstained:
            turn.llm_reason = "breaker open"
        spoken: list[np.ndarray] = []
        try:
            async for sentence in sentences(pipeline, prepared, cancelled, turn_end, self._deadline_s):
                if not spoken:
                    turn.answerer, turn.tts_first_audio_ms = sentence.answerer, sentence.tts_ms
                    if sentence.written_at is not None:
                        turn.llm_first_sentence_ms = (sentence.written_at - turn_end) * 1000
                    if sentence.answerer != "extractive":  # it waited for the LLM
                        turn.response_ms = self.response_ms(speech_end)
                self._leg.said("agent", sentence.text)
                self.say(sentence.pcm)
                spoken.append(sentence.pcm)
                turn.answer.append(sentence.text)
        finally:
            if prepared.phrasing is not None:
                turn.llm_reason = prepared.phrasing.reason or turn.llm_reason  # what cut it short, if anything
                prepared.phrasing.close()  # barge-in: the HTTP stream is closed, the server stops writing
            if spoken:
                self.last_reply = np.concatenate(spoken)
