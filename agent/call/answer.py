"""The caller's turns answered: a reply prepared during the pause (or once the turn has ended), shown to the
call core, spoken sentence by sentence, and recorded.

The shell for the core's Speculate, Answer and SpeakReply commands, on the event loop; the models run on
their executors (see prepare). Every turn ends in its record, whatever happened to it: answered, asked
again, interrupted by the caller, or failed (then the caller hears an apology, not silence).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

import numpy as np

from agent.call.commands import Command, Confirm, SpeakReply, TurnOutcome
from agent.call.core import CallCore
from agent.call.phrase import Phrasing
from agent.call.prepare import Pipeline, Prepared, prepare
from agent.call.record import CallRecord, TurnRecord
from agent.call.transport import RATE, CallTransport
from agent.call.turns import SpeechEnded, SpeechPaused
from agent.call.workers import Busy
from agent.knowledge.memory import CallMemory
from agent.knowledge.speakable import speakable
from agent.logs import event

log = logging.getLogger(__name__)


class TurnReporter(Protocol):
    def turn_done(self, call: CallRecord, turn: TurnRecord) -> None: ...
    def turn_cut_off(self, call: CallRecord, n: int, turn: TurnRecord) -> None: ...
    def error(self, stage: str) -> None: ...


class Replies:
    """One call's replies in flight: at most one prepared during a pause, and the one being answered.
    `say(pcm)` queues audio for the caller; `execute(commands)` carries out the core's other commands."""

    def __init__(self, pipeline: Pipeline, memory: CallMemory, core: CallCore, call: CallRecord,
                 leg: CallTransport, reporter: TurnReporter, deadline_s: float, apology: np.ndarray,
                 say: Callable[[np.ndarray], None], execute: Callable[[list[Command]], None],
                 speculated: Callable[[int, Prepared], None] = lambda window, prepared: None,
                 keep_audio: Callable[[str, int, np.ndarray], None] | None = None) -> None:
        """`speculated(window, prepared)`: a reply being prepared during the pause after `window` knows what was
        heard and what the KB makes of it (its voice may still be rendering); `keep_audio(call id, turn, audio)`:
        given each recorded turn's utterance, numbered as the call's record numbers its turns."""
        self._pipeline, self._memory, self._core, self._call, self._leg = pipeline, memory, core, call, leg
        self._reporter, self._deadline_s, self._apology = reporter, deadline_s, apology
        self._say, self._execute, self._speculated, self._keep_audio = say, execute, speculated, keep_audio
        self._speculative: tuple[int, asyncio.Task, threading.Event] | None = None
        self._reply: asyncio.Task | None = None
        self._cancel = threading.Event()
        self._confirming: Prepared | None = None
        """The reply the caller is asked to confirm (spoken on a yes)."""
        self._continuing = False
        """The next turn is the rest of a question whose answer was cut off."""
        self._remembered = None
        """The call memory's entry for the last answer spoken (forgotten if that answer is taken back)."""
        self.last = np.zeros(0, dtype=np.int16)
        """The last answer as it was spoken, for * to repeat."""

    @property
    def busy(self) -> bool:
        return self._reply is not None and not self._reply.done()

    def speculate(self, pause: SpeechPaused) -> None:
        """Prepare the answer while the hangover runs; used if the caller stays quiet, dropped if not."""
        self.drop_speculation()
        cancelled = threading.Event()
        task = asyncio.create_task(prepare(
            self._pipeline, self._memory, pause.audio, cancelled, self._core.clarified, speculative=True,
            understood=lambda prepared: None if cancelled.is_set() else self._speculated(pause.window, prepared)))
        self._speculative = (pause.window, task, cancelled)

    def answer(self, utterance: SpeechEnded) -> None:
        if self._speculative is not None and self._speculative[0] == utterance.window:
            _, prepared, self._cancel = self._speculative
            self._speculative = None
        else:
            self.drop_speculation()
            self._cancel = threading.Event()
            prepared = asyncio.create_task(prepare(self._pipeline, self._memory, utterance.audio, self._cancel,
                                                   self._core.clarified))
        # Latencies count from the caller's last voiced window, the moment the caller stopped talking; an LLM's
        # deadline from the end of the turn.
        turn_end = asyncio.get_running_loop().time()
        speech_end = turn_end - utterance.silence_ms / 1000
        self._reply = asyncio.create_task(self._answer(utterance, speech_end, turn_end, prepared))

    def stop(self) -> None:
        """Stop making the rest of the reply (barge-in, hold, shutdown); what is queued is the caller's to clear."""
        self._cancel.set()
        if self.busy:
            self._reply.cancel()

    def take_back(self) -> None:
        """The last answer was cut off (the caller is going on with the question): forget it, so the next turn,
        the whole question, is not taken for a follow-up to half of it, and record the turn as cut off."""
        turns = self._call.turns
        last = turns[-1] if turns else None
        if last is None or last.outcome not in (TurnOutcome.ANSWERED.value, TurnOutcome.INTERRUPTED.value):
            return
        if self._memory.turns and self._memory.turns[-1] is self._remembered:
            self._memory.turns.pop()
        last.outcome = TurnOutcome.CUT_OFF.value
        self._continuing = True
        self._reporter.turn_cut_off(self._call, len(turns), last)

    def drop_speculation(self) -> None:
        if self._speculative is not None:
            _, task, cancelled = self._speculative
            cancelled.set()
            if task.done() and not task.cancelled():
                task.result().close()  # its LLM phrasing, if it asked for one
            task.cancel()
            self._speculative = None

    async def _answer(self, utterance: SpeechEnded, speech_end: float, turn_end: float,
                      preparing: asyncio.Task) -> None:
        turn = TurnRecord(started=time.time(), endpointing_ms=float(utterance.silence_ms), continues=self._continuing)
        self._continuing = False
        cancelled, stage, prepared = self._cancel, "timeout", None
        try:
            prepared = await self._prepared(utterance, preparing, cancelled)
            stage = "asr"
            if prepared.failed is not None:
                stage = prepared.failed[0]
                raise prepared.failed[1]
            transcript, reply, understanding = prepared.transcript, prepared.reply, prepared.understanding
            turn.asr_queue_ms, turn.asr_ms = transcript.queue_s * 1000, transcript.decode_s * 1000
            turn.transcript, turn.asr_logprob = transcript.text, round(transcript.avg_logprob, 3)
            if understanding is not None:
                turn.transcript = understanding.chosen.hypothesis.text
                turn.readings, turn.topic = len(understanding.readings), understanding.topic
                if understanding.chosen is not understanding.first:
                    turn.first_heard = understanding.first.hypothesis.text
            if turn.transcript:
                self._leg.said("user", turn.transcript)
            if understanding is not None:  # the KB was asked once for each reading
                turn.evidence = round(reply.evidence, 3)
                turn.retrieval_ms = sum(r.reply.retrieval_ms for r in understanding.readings)
                turn.answer_ms = sum(r.reply.answer_ms for r in understanding.readings)
            confirming, self._confirming = self._confirming, None
            outcome, commands = self._core.heard(
                turn.transcript, action=prepared.action, abstained=reply is not None and reply.abstained,
                chunks=frozenset(s.chunk_id for s in reply.sources) if reply is not None else frozenset())
            turn.outcome = outcome.value
            if outcome is TurnOutcome.IGNORED or self._core.awaiting_confirmation:
                self._confirming = confirming  # a cough, or an unclear reply, does not answer the confirmation
            if outcome is not TurnOutcome.IGNORED:
                turn.response_ms = self._response_ms(speech_end)
            for command in commands:
                if isinstance(command, SpeakReply):
                    stage = "tts"
                    await self._speak(confirming if command.confirmed else prepared, turn, cancelled, speech_end,
                                      turn_end)
                elif isinstance(command, Confirm):
                    self._confirming = prepared
                    self._leg.said("agent", understanding.confirm_text)
                    self._say(prepared.confirm_audio)
                else:
                    self._execute([command])
        except asyncio.CancelledError:
            turn.outcome = TurnOutcome.INTERRUPTED.value
            raise
        except Exception as exc:
            turn.outcome = f"failed: {stage}"
            event(log, "call.turn_failed", logging.ERROR, call=self._call.sip_call_id, stage=stage,
                  error=type(exc).__name__)
            self._reporter.error(stage)
            self._say(self._apology)
        finally:
            if prepared is not None:  # (a preparation cancelled on the way closes its own)
                prepared.close()
            if turn.transcript or turn.outcome.startswith("failed"):
                self._call.turns.append(turn)
                self._reporter.turn_done(self._call, turn)
                if self._keep_audio is not None:
                    self._keep_audio(self._call.id, len(self._call.turns), utterance.audio)
                # speech_end_at (Unix time) lets an eval on the caller's side split its latency into the way
                # in, the agent's own response and the way out.
                event(log, "call.turn", call=self._call.sip_call_id, outcome=turn.outcome,
                      response_ms=round(turn.response_ms or 0), asr_ms=round(turn.asr_ms or 0),
                      **{k: v for k, v in (("answerer", turn.answerer), ("llm_reason", turn.llm_reason)) if v},
                      speech_end_at=round(turn.started - turn.endpointing_ms / 1000, 3))

    async def _prepared(self, utterance: SpeechEnded, preparing: asyncio.Task,
                        cancelled: threading.Event) -> Prepared:
        """The turn's transcript, reply and first sentence. A model that hangs must not silence the call: past
        the deadline this raises, and the caller hears an apology."""
        prepared = await asyncio.wait_for(preparing, self._deadline_s)
        if prepared.failed is not None and isinstance(prepared.failed[1], Busy):
            # Prepared during the pause while the workers were busy, and refused: now it is urgent (a transcript
            # it did make is kept).
            prepared = await asyncio.wait_for(prepare(self._pipeline, self._memory, utterance.audio, cancelled,
                                                      self._core.clarified, heard=prepared.transcript),
                                              self._deadline_s)
        return prepared

    async def _speak(self, prepared: Prepared, turn: TurnRecord, cancelled: threading.Event, speech_end: float,
                     turn_end: float) -> None:
        """Remember the reply, then speak it sentence by sentence: the LLM's checked phrasing when one is set up and
        in time, else the KB's sentences (the first synthesised with the transcript, the rest while the ones before
        it play)."""
        reply, phraser = prepared.reply, self._pipeline.phraser
        phrasing = prepared.phrasing  # asked as soon as the answer was known; a confirmed one is asked now
        if phrasing is None and phraser is not None:
            phrasing = prepared.phrasing = phraser.start(reply, self._memory)  # the memory before this turn
        self._pipeline.knowledge.commit(self._memory, reply)
        self._remembered = self._memory.turns[-1] if self._memory.turns else None
        turn.sources = [f"{s.path}#{s.chunk_id}" for s in reply.sources]
        turn.abstained, turn.answerer = reply.abstained, "extractive"
        spoken: list[np.ndarray] = []
        try:
            if phrasing is not None:
                first = await phrasing.first(turn_end + phraser.config.first_sentence_s)
                if first is not None:
                    turn.llm_first_sentence_ms = (asyncio.get_running_loop().time() - turn_end) * 1000
                    await self._speak_phrased(first, phrasing, turn, cancelled, speech_end, spoken)
                else:
                    turn.answerer, turn.llm_reason = "llm_rejected", phrasing.reason
                    turn.response_ms = self._response_ms(speech_end)  # the KB's answer waited for it
            elif phraser is not None and not reply.abstained:
                turn.llm_reason = "breaker open"
            if turn.answerer != "llm":
                await self._speak_extractive(prepared, turn, cancelled, spoken)
        finally:
            if phrasing is not None:
                phrasing.close()  # barge-in: the HTTP stream is closed, the server stops writing
            if spoken:
                self.last = np.concatenate(spoken)

    async def _speak_extractive(self, prepared: Prepared, turn: TurnRecord, cancelled: threading.Event,
                                spoken: list[np.ndarray]) -> None:
        loop = asyncio.get_running_loop()
        self._leg.said("agent", prepared.reply.text)
        turn.tts_first_audio_ms = prepared.tts_first_audio_ms
        for n, chunk in enumerate(prepared.chunks):
            pcm = prepared.first_audio if n == 0 else await asyncio.wait_for(loop.run_in_executor(
                self._pipeline.models, self._pipeline.voice.speak, chunk.spoken, cancelled), self._deadline_s)
            self._say(pcm)
            spoken.append(pcm)
            turn.answer.append(chunk.text)

    async def _speak_phrased(self, sentence: str | None, phrasing: Phrasing, turn: TurnRecord,
                             cancelled: threading.Event, speech_end: float, spoken: list[np.ndarray]) -> None:
        """The LLM's sentences, each synthesised while the next is written and checked."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        turn.answerer = "llm"
        while sentence is not None:
            pcm = await asyncio.wait_for(loop.run_in_executor(
                self._pipeline.models, self._pipeline.voice.speak, speakable(sentence), cancelled), self._deadline_s)
            if not spoken:
                turn.tts_first_audio_ms = (loop.time() - started) * 1000
                turn.response_ms = self._response_ms(speech_end)
            self._leg.said("agent", sentence)
            self._say(pcm)
            spoken.append(pcm)
            turn.answer.append(sentence)
            sentence = await phrasing.next()
        turn.llm_reason = phrasing.reason  # what cut the phrasing short, if anything

    def _response_ms(self, speech_end: float) -> float:
        """End of the caller's speech to the first reply frame, which goes out after whatever is queued."""
        queued_s = self._leg.playout.pending_frames * self._leg.playout.frame_samples / RATE
        return (asyncio.get_running_loop().time() + queued_s - speech_end) * 1000
