"""One phone call, wired end to end: line audio → VAD → turns → ASR → knowledge → voice → playout.

This is the one place the whole pipeline is visible. pjsua2's threads reach
it only through the `on_*` methods, which hop onto the event loop; models run
in worker threads; the loop itself only moves frames and events. What to do
about barge-in, hold, DTMF, what the caller asked for, endings and time limits
is decided by the pure call core (core.py); this shell carries its commands out.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from concurrent.futures import Executor
from typing import Protocol

import numpy as np

from agent.audio.pcm import int16_to_float, rms
from agent.call.core import (
    LAST_REPLY,
    Answer,
    CallCore,
    CallState,
    Command,
    EndMessage,
    Goodbye,
    HangUp,
    Intent,
    Interrupt,
    Outcome,
    Say,
    Speculate,
    Transfer,
    intent,
)
from agent.call.echo import EchoGate
from agent.call.limits import CallLimits
from agent.call.message import OFFER_AFTER_DECLINES, Message, MessageConfig
from agent.call.message_taker import MessageTaker
from agent.call.prepare import Pipeline, prepare
from agent.call.record import CallRecord, TurnRecord
from agent.call.transfer import TRANSFER_TIMEOUT_S, TransferResult, transfer_result
from agent.call.transport import RATE, CallTransport
from agent.call.turns import SpeechEnded, SpeechPaused, SpeechStarted, TurnConfig, TurnDetector
from agent.call.voice import Phrases, Voice
from agent.call.workers import Busy
from agent.knowledge.base import KnowledgeBase
from agent.knowledge.memory import CallMemory
from agent.logs import event
from agent.speech.asr import Transcriber
from agent.speech.vad import WINDOW, SileroVad

log = logging.getLogger(__name__)


MAX_QUEUED_FRAMES = 250
"""5 s of 20 ms frames waiting for the audio path; beyond that frames are dropped (and counted)."""
GOODBYE_WAIT_S = 15.0  # longest goodbye phrase, with room to spare
LINE_TAIL_S = 0.5
"""After the last frame leaves the queue it still crosses the bridge, the network and the caller's jitter
buffer, which a BYE discards: the goodbye's last word must be out of the buffer before the call ends."""
MAX_DTMF_RECORDED = 64
TURN_OUTCOMES = {Intent.GOODBYE: "caller said goodbye", Intent.MESSAGE: "message requested",
                 Intent.PERSON: "transfer requested"}


class CallReporter(Protocol):
    """Where a call's outcomes go (metrics, call records); called on the event loop."""

    def call_started(self, call: CallRecord) -> None: ...
    def turn_done(self, call: CallRecord, turn: TurnRecord) -> None: ...
    def barge_in(self, call: CallRecord) -> None: ...
    def dtmf(self, call: CallRecord, digit: str) -> None: ...
    def error(self, stage: str) -> None: ...
    def message_saved(self, call: CallRecord, message: Message, audio: np.ndarray) -> None: ...
    def message_transcribed(self, call: CallRecord, message: Message, transcript: str) -> None: ...
    def transfer(self, call: CallRecord, result: str) -> None: ...
    def call_ended(self, call: CallRecord) -> None: ...


class CallSession:
    """Runs one call until it ends; `run()` is its task."""

    def __init__(self, leg: CallTransport, loop: asyncio.AbstractEventLoop, *, transcriber: Transcriber,
                 knowledge: KnowledgeBase, voice: Voice, phrases: Phrases, vad: SileroVad, turn_config: TurnConfig,
                 models: Executor, memory: CallMemory, echo_gate_db: float, inactivity_s: float, max_call_s: float,
                 dead_call_s: float, reporter: CallReporter, vad_pool: Executor | None = None,
                 model_deadline_s: float = 10.0, speculative: Executor | None = None,
                 message_config: MessageConfig | None = None, transfer_to: str = "",
                 transfer_digit: str = "") -> None:
        """`models`: the executor ASR and TTS run on for a finished turn; `speculative`: for replies prepared
        during a pause (see call/workers; default: `models`); `vad_pool`: VAD's own (default: `models`), so a
        busy model pool never delays the turn-taking of any call."""
        self.leg, self._loop = leg, loop
        self._pipeline = Pipeline(transcriber, knowledge, voice, models, speculative or models)
        self._phrases = phrases
        self._vad, self._turns, self._memory = vad, TurnDetector(turn_config), memory
        self._vad_pool = vad_pool or models
        self._model_deadline_s = model_deadline_s
        self._gate = EchoGate(echo_gate_db)
        self._core = CallCore(CallLimits(loop.time(), inactivity_s, max_call_s, dead_call_s), transfer_digit)
        self._frames: asyncio.Queue[tuple[np.ndarray, float] | None] = asyncio.Queue()
        self._pending = np.zeros(0, dtype=np.int16)
        self._reply: asyncio.Task | None = None
        self._farewell: asyncio.Task | None = None
        self._speculative: tuple[int, asyncio.Task, threading.Event] | None = None
        self._reply_cancel = threading.Event()
        self._last_reply = np.zeros(0, dtype=np.int16)
        self._asked_again = False  # the last turn asked the caller to repeat (never twice running)
        self._declines = 0
        self._transfer_to = transfer_to
        self._transferring: asyncio.Task | None = None
        self._transfer_done: asyncio.Future | None = None
        self._ended = asyncio.Event()
        self._reporter = reporter
        self.dropped_frames = 0
        self.record = CallRecord(uuid.uuid4().hex[:16], leg.sip_call_id, leg.remote, leg.dialed, time.time(),
                                 transport=leg.kind, last_caller_speech=loop.time())
        self._messages = MessageTaker(message_config or MessageConfig(), self.record, leg.playout, reporter,
                                      self._say, phrases.message_saved, self._transcribe_message, loop.time)

    # --- called from pjsua2 threads
    def on_media(self, codec: str, clock_rate: int) -> None:
        self._loop.call_soon_threadsafe(self._media_ready, codec, clock_rate)

    def on_hold(self, held: bool) -> None:
        self._loop.call_soon_threadsafe(self._set_hold, held)

    def on_dtmf(self, digit: str) -> None:
        self._loop.call_soon_threadsafe(self._dtmf, digit)

    def on_frame(self, pcm: np.ndarray, outbound_rms: float) -> None:
        self._loop.call_soon_threadsafe(self._queue_frame, (pcm, outbound_rms))

    def on_transfer(self, status: int, reason: str, final: bool) -> None:
        self._loop.call_soon_threadsafe(self._transfer_status, status, f"{status} {reason}".strip(), final)

    def on_ended(self, reason: str) -> None:
        self._loop.call_soon_threadsafe(self._end, reason)

    # --- event loop
    def _queue_frame(self, item: tuple[np.ndarray, float]) -> None:
        """Frames wait for the audio path; a stalled path drops them rather than piling them up forever."""
        if self._frames.qsize() < MAX_QUEUED_FRAMES:
            self._frames.put_nowait(item)
        else:
            self.dropped_frames += 1

    @property
    def state(self) -> CallState:
        return self._core.state

    def _execute(self, commands: list[Command]) -> None:
        """Carry out what the call core decided, in order."""
        for command in commands:
            if isinstance(command, Say):
                if command.phrase == "still_there":
                    event(log, "call.still_there", call=self.leg.sip_call_id)
                self._say(self._last_reply if command.phrase == LAST_REPLY else getattr(self._phrases, command.phrase))
            elif isinstance(command, Interrupt):
                dropped = self._interrupt()
                if command.barge_in:
                    self._gate.forget()
                    self.record.barge_ins += 1
                    self._reporter.barge_in(self.record)
                    event(log, "call.barge_in", call=self.leg.sip_call_id, dropped_frames=dropped)
            elif isinstance(command, Speculate):
                self._speculate(command.pause)
            elif isinstance(command, Answer):
                self._start_answer(command.utterance)
            elif isinstance(command, Transfer):
                self._transferring = asyncio.create_task(self._transfer())
            elif isinstance(command, EndMessage):
                self._messages.finish(command.why, thank=command.why == "#")
            elif isinstance(command, Goodbye):
                self._farewell = asyncio.create_task(self._goodbye(command.outcome, command.cut))
            elif isinstance(command, HangUp):
                self.record.outcome = command.outcome.value
                self.leg.hang_up()

    def _media_ready(self, codec: str, clock_rate: int) -> None:
        commands = self._core.media_ready()
        if commands:
            self.record.codec = f"{codec}/{clock_rate}"
            event(log, "call.media", call=self.leg.sip_call_id, codec=self.record.codec)
        self._execute(commands)

    def _set_hold(self, held: bool) -> None:
        commands = self._core.hold(held)
        if commands:
            event(log, "call.hold", call=self.leg.sip_call_id)
        self._execute(commands)

    def _dtmf(self, digit: str) -> None:
        if len(self.record.dtmf) < MAX_DTMF_RECORDED:  # a caller (or a fuzzer) may send thousands
            self.record.dtmf.append(digit)
        self._reporter.dtmf(self.record, digit)
        event(log, "call.dtmf", call=self.leg.sip_call_id, digit=digit)
        self._execute(self._core.dtmf(digit, has_last_reply=len(self._last_reply) > 0))

    def _end(self, reason: str) -> None:
        if not self._ended.is_set():
            self.record.outcome = self._core.ended().value
            self.record.reason = reason
            self._ended.set()
            self._messages.finish("caller hung up", thank=False)  # what was said before the hang-up is kept
            self._frames.put_nowait(None)

    def _say(self, pcm: np.ndarray) -> None:
        self.leg.playout.push(pcm)
        self.leg.playout.finish()

    @property
    def agent_speaking(self) -> bool:
        return (self._reply is not None and not self._reply.done()) or self.leg.playout.pending_frames > 0

    def _interrupt(self) -> int:
        """Barge-in and hold: silence from the next frame on, and stop making the rest of the answer."""
        dropped = self.leg.playout.clear()
        self._reply_cancel.set()
        if self._reply is not None and not self._reply.done():
            self._reply.cancel()
        return dropped

    async def run(self) -> CallRecord:
        """Process the call's audio until it ends, enforcing its time limits."""
        self._reporter.call_started(self.record)
        watchdog = asyncio.create_task(self._watch_limits())
        try:
            while (item := await self._frames.get()) is not None:
                await self._on_frame(*item)
        except Exception as exc:
            # The audio path broke: a silent line helps nobody, so the call ends, recorded as failed.
            event(log, "call.audio_failed", logging.ERROR, call=self.leg.sip_call_id, error=type(exc).__name__)
            self._reporter.error("audio")
            self._execute(self._core.failed())
        finally:
            watchdog.cancel()
            self._drop_speculation()
            self._interrupt()
            if self._transferring is not None:
                self._transferring.cancel()
            await self._messages.settle(self._model_deadline_s * 3)  # the record holds the message's transcript
            self.record.ended = time.time()
            event(log, "call.ended", call=self.leg.sip_call_id, outcome=self.record.outcome,
                  turns=len(self.record.turns), barge_ins=self.record.barge_ins,
                  seconds=round(self.record.ended - self.record.started, 1))
            self._reporter.call_ended(self.record)
        return self.record

    async def _on_frame(self, pcm: np.ndarray, outbound_rms: float) -> None:
        self._gate.played(outbound_rms)
        if self._core.state is CallState.HELD:
            return
        self._pending = np.concatenate([self._pending, pcm])
        while len(self._pending) >= WINDOW:
            window, self._pending = self._pending[:WINDOW], self._pending[WINDOW:]
            samples = int16_to_float(window)
            probability = await self._loop.run_in_executor(self._vad_pool, self._vad.window_probability, samples)
            if not self._gate.admits(rms(window)):
                probability = 0.0  # the agent's own voice coming back (or its tail): not the caller
            if self._messages.recording:
                self._messages.push(window, probability >= self._turns.config.threshold)
                continue
            if self._core.state is CallState.TAKING_MESSAGE:
                self._core.message_ended()
            for turn_event in self._turns.push(samples, probability):
                self._on_turn(turn_event)

    def _on_turn(self, turn_event: SpeechStarted | SpeechPaused | SpeechEnded) -> None:
        self.record.last_caller_speech = self._loop.time()
        self._execute(self._core.turn(turn_event, agent_speaking=self.agent_speaking))

    def _speculate(self, pause: SpeechPaused) -> None:
        """Prepare the answer while the hangover runs; used if the caller stays quiet, dropped if not."""
        self._drop_speculation()
        cancelled = threading.Event()
        task = asyncio.create_task(prepare(self._pipeline, self._memory, pause.audio, cancelled, self._asked_again,
                                           speculative=True))
        self._speculative = (pause.window, task, cancelled)

    def _start_answer(self, turn_event: SpeechEnded) -> None:
        if self._speculative is not None and self._speculative[0] == turn_event.window:
            _, prepared, self._reply_cancel = self._speculative
            self._speculative = None
        else:
            self._drop_speculation()
            self._reply_cancel = threading.Event()
            prepared = asyncio.create_task(prepare(self._pipeline, self._memory, turn_event.audio,
                                                  self._reply_cancel, self._asked_again))
        # Latencies count from the caller's last voiced window, the moment the caller stopped talking.
        speech_end = self._loop.time() - turn_event.silence_ms / 1000
        self._reply = asyncio.create_task(self._answer(turn_event, speech_end, prepared))

    def _drop_speculation(self) -> None:
        if self._speculative is not None:
            _, task, cancelled = self._speculative
            cancelled.set()
            task.cancel()
            self._speculative = None

    async def _answer(self, utterance: SpeechEnded, speech_end: float, preparing: asyncio.Task) -> None:
        """One turn: take the prepared transcript, reply and first sentence, remember the reply, speak it
        sentence by sentence. Errors become a spoken apology."""
        turn = TurnRecord(started=time.time(), endpointing_ms=float(utterance.silence_ms))
        cancelled, stage = self._reply_cancel, "asr"
        try:
            # A model that hangs must not silence the call: past the deadline the caller hears an apology.
            stage = "timeout"
            prepared = await asyncio.wait_for(preparing, self._model_deadline_s)
            if prepared.failed is not None and isinstance(prepared.failed[1], Busy):
                # Prepared during the pause while the workers were busy, and refused: now it is urgent (a
                # transcript it did make is kept).
                prepared = await asyncio.wait_for(prepare(self._pipeline, self._memory, utterance.audio, cancelled,
                                                          self._asked_again, heard=prepared.transcript),
                                                  self._model_deadline_s)
            stage = "asr"
            if prepared.failed is not None:
                stage = prepared.failed[0]
                raise prepared.failed[1]
            transcript, reply = prepared.transcript, prepared.reply
            turn.asr_queue_ms, turn.asr_ms = transcript.queue_s * 1000, transcript.decode_s * 1000
            turn.transcript, turn.asr_logprob = transcript.text, round(transcript.avg_logprob, 3)
            if transcript.text:
                self.leg.said("user", transcript.text)
            offered, self._messages.offered = self._messages.offered, False
            asked = intent(transcript.text, message_offered=offered)
            if asked is not Intent.QUESTION:
                # "That's all, thanks", "leave a message", "a real person": the core decides what follows (a
                # goodbye and transfer run as tasks of their own, so this turn is recorded now).
                turn.outcome = TURN_OUTCOMES[asked]
                turn.response_ms = self._response_ms(speech_end)
                if asked is Intent.MESSAGE:
                    self._drop_speculation()
                    self._turns = TurnDetector(self._turns.config)  # after the message, turn-taking starts afresh
                    self._messages.start(self._phrases.message_prompt)
                self._execute(self._core.heard(asked))
                return
            if reply is None:
                turn.outcome = "ignored"
                return
            turn.evidence, turn.retrieval_ms, turn.answer_ms = round(reply.evidence, 3), reply.retrieval_ms, \
                reply.answer_ms
            self._asked_again = prepared.ask_again
            self._core.replying()
            if prepared.ask_again:
                # Not remembered: the repeated question is asked afresh, not as a follow-up to a mishearing.
                turn.response_ms = self._response_ms(speech_end)
                self._say(self._phrases.ask_again)
                turn.outcome = "asked again"
                return
            self._pipeline.knowledge.commit(self._memory, reply)
            self.leg.said("agent", reply.text)
            turn.tts_first_audio_ms = prepared.tts_first_audio_ms
            turn.sources = [f"{s.path}#{s.chunk_id}" for s in reply.sources]
            turn.abstained = reply.abstained
            turn.response_ms = self._response_ms(speech_end)
            spoken, stage = [], "tts"
            for n, chunk in enumerate(prepared.chunks):
                pcm = prepared.first_audio if n == 0 else await asyncio.wait_for(self._loop.run_in_executor(
                    self._pipeline.models, self._pipeline.voice.speak, chunk.spoken, cancelled),
                    self._model_deadline_s)
                self._say(pcm)
                spoken.append(pcm)
                turn.answer.append(chunk.text)
            self._last_reply = np.concatenate(spoken) if spoken else self._last_reply
            turn.outcome = "answered"
            self._declines += reply.abstained
            if reply.abstained and self._declines == OFFER_AFTER_DECLINES:
                self._say(self._phrases.message_offer)
                self._messages.offered = True
        except asyncio.CancelledError:
            turn.outcome = "interrupted"
            raise
        except Exception as exc:
            turn.outcome = f"failed: {stage}"
            event(log, "call.turn_failed", logging.ERROR, call=self.leg.sip_call_id, stage=stage,
                  error=type(exc).__name__)
            self._reporter.error(stage)
            self._say(self._phrases.apology)
        finally:
            if turn.transcript or turn.outcome.startswith("failed"):
                self.record.turns.append(turn)
                self._reporter.turn_done(self.record, turn)
                event(log, "call.turn", call=self.leg.sip_call_id, outcome=turn.outcome,
                      response_ms=round(turn.response_ms or 0), asr_ms=round(turn.asr_ms or 0))

    async def _transcribe_message(self, pcm: np.ndarray) -> str:
        heard = await self._loop.run_in_executor(self._pipeline.models, self._pipeline.transcriber.transcribe,
                                                 int16_to_float(pcm), None)
        return heard.text

    # --- transfer to a person
    async def _transfer(self) -> None:
        """Say so, REFER the caller to the profile's person, follow the progress: on success the call is
        theirs and the agent hangs up; on failure (or with nobody to transfer to) a message is offered."""
        if not self._transfer_to or not self.leg.can_transfer:
            self._say(self._phrases.no_transfer)
            self._messages.offered = True
            self._core.transfer_ended(answered=False)
            return
        self._say(self._phrases.transferring)
        await self._until_played(GOODBYE_WAIT_S)
        self._transfer_done = self._loop.create_future()
        self.leg.transfer(self._transfer_to)
        try:
            result, status = await asyncio.wait_for(self._transfer_done, TRANSFER_TIMEOUT_S)
        except TimeoutError:
            result, status = TransferResult.FAILED, "no final status"
        event(log, "call.transfer", call=self.leg.sip_call_id, result=result.value, status=status)
        self._reporter.transfer(self.record, result.value)
        self._execute(self._core.transfer_ended(answered=result is TransferResult.ANSWERED))
        if result is not TransferResult.ANSWERED and not self._ended.is_set():
            self._say(self._phrases.transfer_failed)
            self._messages.offered = True

    def _transfer_status(self, status: int, status_line: str, final: bool) -> None:
        result = transfer_result(status, final)
        if result is not TransferResult.PENDING and self._transfer_done is not None and not self._transfer_done.done():
            self._transfer_done.set_result((result, status_line))

    async def _until_played(self, limit_s: float) -> None:
        """Until the line has played everything queued, the call ended, or `limit_s` passed (a line that stops
        taking audio, as on a hold that came just now, never drains)."""
        deadline = self._loop.time() + limit_s
        while self.leg.playout.pending_frames and not self._ended.is_set() and self._loop.time() < deadline:
            await asyncio.sleep(0.05)

    def _response_ms(self, speech_end: float) -> float:
        """End of the caller's speech to the first reply frame, which goes out after whatever is queued."""
        queued_s = self.leg.playout.pending_frames * self.leg.playout.frame_samples / RATE
        return (self._loop.time() + queued_s - speech_end) * 1000

    async def _watch_limits(self) -> None:
        """Ticks the call core twice a second for its time limits (see limits). A failed check is logged and
        the next one runs: no error may leave a call without its limits."""
        while True:
            await asyncio.sleep(0.5)
            try:
                packets = None
                if self._core.state is not CallState.HELD:
                    packets = await asyncio.wrap_future(self.leg.packets_received())
                    if packets is None:
                        return  # the call is gone
                self._execute(self._core.tick(self._loop.time(), agent_speaking=self.agent_speaking,
                                              last_caller_speech=self.record.last_caller_speech, rtp_packets=packets))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                event(log, "call.watchdog_error", logging.WARNING, call=self.leg.sip_call_id,
                      error=type(exc).__name__)

    async def wind_down(self) -> None:
        """The agent is shutting down: the sentence being spoken ends, no more of the answer follows, the
        caller hears goodbye, then the call is hung up."""
        if self._ended.is_set():
            return
        commands = self._core.wind_down()
        goodbyes = [c for c in commands if isinstance(c, Goodbye)]
        self._execute([c for c in commands if not isinstance(c, Goodbye)])
        self._drop_speculation()
        self._reply_cancel.set()
        if self._reply is not None and not self._reply.done():
            self._reply.cancel()
        self.leg.playout.finish_current()
        for goodbye in goodbyes:
            await self._goodbye(goodbye.outcome, cut=False)

    async def _goodbye(self, outcome: Outcome, cut: bool = True) -> None:
        self.record.outcome = outcome.value
        if cut:
            self._interrupt()
        self._say(self._phrases.goodbye)
        await self._until_played(GOODBYE_WAIT_S)
        if not self._ended.is_set():
            await asyncio.sleep(LINE_TAIL_S)
        self.leg.hang_up()
