"""One phone call, wired end to end: line audio → VAD → turns → ASR → knowledge → voice → playout.

The shell around the pure call core (core.py), which decides barge-in, hold, DTMF, what the caller asked
for, transfer, endings and time limits: this is its one driver, feeding it events and carrying its commands out.
The transport's threads reach the session only through the `on_*` methods, which hop onto the event loop. The
stages it calls hold no reference to the core and no callback into the session: the caller's audio is heard by
listening/, replies are made by understanding/ (replies.py, prepare.py) and spoken by speaking/ (speak.py), messages
taken by message_taker.py, transfers carried out by put_through.py; models run in worker threads, and the loop
itself only moves frames and events.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Executor

import numpy as np

from agent.call.commands import (
    Answer,
    Command,
    Confirm,
    EndMessage,
    Goodbye,
    HangUp,
    Interrupt,
    Outcome,
    Phrase,
    RepeatLastReply,
    Say,
    SpeakReply,
    Speculate,
    StartMessage,
    Transfer,
    TurnOutcome,
)
from agent.call.core import CallCore, CallState
from agent.call.limits import CallLimits
from agent.call.listening.endpointing import EndpointConfig, Endpointer, judge
from agent.call.listening.listen import ListenClock, Listener, Window
from agent.call.listening.turns import (
    WINDOW_MS,
    Event,
    SpeechEnded,
    SpeechResumed,
    SpeechStarted,
    TurnConfig,
    TurnDetector,
    TurnState,
)
from agent.call.message_taker import MessageTaker
from agent.call.put_through import PutThrough
from agent.call.record import CallAudioRecorder, CallRecord, CallReporter, TurnRecord, note_heard
from agent.call.speaking.phrase import Phraser
from agent.call.speaking.speak import Speaker
from agent.call.speaking.voice import Phrases, Voice
from agent.call.transport import RATE, CallTransport
from agent.call.understanding.message import MessageConfig
from agent.call.understanding.prepare import Pipeline, Prepared
from agent.call.understanding.replies import Replies
from agent.call.warm_transfer import WarmTransferConfig
from agent.call.workers import off_loop
from agent.knowledge.base import KnowledgeBase
from agent.knowledge.memory import CallMemory
from agent.logs import event
from agent.speech.asr import Transcriber, words

log = logging.getLogger(__name__)


GOODBYE_WAIT_S = 15.0  # longest goodbye phrase, with room to spare
LINE_TAIL_S = 0.5
"""After the last frame leaves the queue it still crosses the bridge, the network and the caller's jitter
buffer, which a BYE discards: the goodbye's last word must be out of the buffer before the call ends."""
MAX_DTMF_RECORDED = 64


class CallSession:
    """Runs one call until it ends; `run()` is its task."""

    def __init__(self, leg: CallTransport, loop: asyncio.AbstractEventLoop, *, transcriber: Transcriber,
                 knowledge: KnowledgeBase, voice: Voice, phrases: Phrases, listening: ListenClock,
                 turn_config: TurnConfig, models: Executor, memory: CallMemory, echo_gate_db: float,
                 inactivity_s: float, max_call_s: float, dead_call_s: float, reporter: CallReporter,
                 model_deadline_s: float = 10.0, speculative: Executor | None = None,
                 message_config: MessageConfig | None = None, transfer_to: str = "",
                 transfer_digit: str = "", endpoint_config: EndpointConfig | None = None,
                 phraser: Phraser | None = None,
                 keep_audio: Callable[[str, int, np.ndarray], None] | None = None,
                 record_call: Callable[[str, float], CallAudioRecorder] | None = None,
                 warm_transfer: WarmTransferConfig | None = None) -> None:
        """`models`: the executor ASR and TTS run on for a finished turn; `speculative`: for replies prepared
        during a pause (see call/workers; default: `models`); `listening`: the clock every call's VAD runs on, never
        behind the model pool, so a busy one never delays the turn-taking of any call; `keep_audio(call id, turn,
        audio)`: where each recorded turn's audio goes (side.turn_audio), if anywhere; `record_call(call id,
        started)`: the whole call's recorder (side.recordings), when calls are recorded; `warm_transfer`: who the
        agent calls itself when the caller asks for a person (else the caller is REFERred to `transfer_to`)."""
        self.leg, self._loop = leg, loop
        self._pipeline = Pipeline(transcriber, knowledge, voice, models, speculative or models, phraser)
        self._memory, self._phrases = memory, phrases
        self._listener, self._turns = Listener(listening, echo_gate_db), TurnDetector(turn_config)
        self._model_deadline_s = model_deadline_s
        self._warm = warm_transfer if leg.can_transfer else None
        self._person = None
        self._core = CallCore(CallLimits(loop.time(), inactivity_s, max_call_s, dead_call_s), transfer_digit,
                              transfer_to if leg.can_transfer else "", warm_transfer=self._warm is not None)
        self._farewell: asyncio.Task | None = None
        self._transferring: asyncio.Task | None = None
        self._ended = asyncio.Event()
        self._reporter, self._keep_audio = reporter, keep_audio
        self.record = CallRecord(uuid.uuid4().hex[:16], leg.sip_call_id, leg.remote, leg.dialed, time.time(),
                                 transport=leg.kind, last_caller_speech=loop.time())
        self._recorder = record_call(self.record.id, self.record.started) if record_call is not None else None
        if self._recorder is not None:
            leg.playout.tap = self._recorder.played
        self._endpointer = Endpointer(endpoint_config or EndpointConfig(default_ms=turn_config.hangover_ms,
                                                                        enabled=False))
        self._turn_ended_window = -1_000_000
        """The window the caller's last turn was declared over at."""
        self._last_utterance = np.zeros(0, np.float32)
        """The caller's last whole utterance (the first half of a question, when they turn out to go on)."""
        self._replies = Replies(self._pipeline, memory, model_deadline_s)
        self._reply: asyncio.Task | None = None
        """The turn being answered."""
        self._cancel = threading.Event()
        """Stops the synthesis of the reply being spoken."""
        self._continuing = False
        """The next turn is the rest of a question whose answer was cut off."""
        self._speaker = Speaker(leg, self._pipeline, memory, model_deadline_s)
        self._put_through = PutThrough(leg, self.record, reporter, self._pipeline)
        self._messages = MessageTaker(message_config or MessageConfig(), self.record, leg.playout, reporter,
                                      phrases[Phrase.MESSAGE_SAVED],
                                      off_loop(models, functools.partial(words, transcriber, full_window=True)),
                                      loop.time)

    # --- called from pjsua2 threads
    def on_media(self, codec: str, clock_rate: int) -> None:
        self._loop.call_soon_threadsafe(self._media_ready, codec, clock_rate)

    def on_hold(self, held: bool) -> None:
        self._loop.call_soon_threadsafe(self._set_hold, held)

    def on_dtmf(self, digit: str) -> None:
        self._loop.call_soon_threadsafe(self._dtmf, digit)

    def on_frame(self, pcm: np.ndarray, outbound_rms: float) -> None:
        self._listener.push(pcm, outbound_rms)  # no hop: the listening clock takes it on its next tick
        if self._recorder is not None:
            self._recorder.heard(pcm)

    def on_transfer(self, status: int, reason: str, final: bool) -> None:
        self._loop.call_soon_threadsafe(self._put_through.status, status, f"{status} {reason}".strip(), final)

    def on_ended(self, reason: str) -> None:
        self._loop.call_soon_threadsafe(self._end, reason)

    # --- event loop
    @property
    def state(self) -> CallState:
        return self._core.state

    def _execute(self, commands: list[Command]) -> None:
        """Carry out what the call core decided, in order (a reply to speak or confirm is the turn's: `_take_turn`)."""
        for command in commands:
            if isinstance(command, Say):
                if command.phrase is Phrase.STILL_THERE:
                    event(log, "call.still_there", call=self.leg.sip_call_id)
                self._speaker.say(self._phrases[command.phrase])
            elif isinstance(command, RepeatLastReply):
                self._speaker.say(self._speaker.last_reply)
            elif isinstance(command, Interrupt):
                dropped = self._interrupt()
                if command.cut_off:  # the rest of the question: heard with the first half, answered once
                    self._turns.prepend(np.concatenate([self._last_utterance, np.zeros(RATE // 5, np.float32)]))
                    self._take_back()
                    event(log, "call.cut_off", call=self.leg.sip_call_id, dropped_frames=dropped)
                if command.barge_in:
                    self._listener.forget_echo()
                    self.record.barge_ins += 1
                    self._reporter.barge_in(self.record)
                    event(log, "call.barge_in", call=self.leg.sip_call_id, dropped_frames=dropped)
            elif isinstance(command, Speculate):
                understood = self._replies.speculate(command.pause.window, command.pause.audio,
                                                     self._core.clarified)
                understood.add_done_callback(functools.partial(self._speculated, command.pause.window))
            elif isinstance(command, Answer):
                self._answer(command.utterance)
            elif isinstance(command, StartMessage):
                self._replies.drop_speculation()
                self._turns = TurnDetector(self._turns.config)  # after the message, turn-taking starts afresh
                self._messages.start(self._phrases[Phrase.MESSAGE_PROMPT])
            elif isinstance(command, EndMessage):
                self._messages.finish(command.why, thank=command.why == "#")
            elif isinstance(command, Transfer):
                self._transferring = asyncio.create_task(self._transfer(command.target))
            elif isinstance(command, Goodbye):
                self._farewell = asyncio.create_task(self._goodbye(command.outcome, command.cut))
            elif isinstance(command, HangUp):
                self.record.outcome = command.outcome.value
                self.leg.hang_up()
            else:
                raise TypeError(f"no shell for {command!r}")

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
        self._execute(self._core.dtmf(digit, has_last_reply=len(self._speaker.last_reply) > 0))

    def _end(self, reason: str) -> None:
        if not self._ended.is_set():
            self.record.outcome = self._core.ended().value
            self.record.reason = reason
            self._ended.set()
            self._messages.finish("caller hung up", thank=False)  # what was said before the hang-up is kept
            self._listener.close()

    @property
    def agent_speaking(self) -> bool:
        return self._replying or self.leg.playout.pending_frames > 0

    @property
    def _replying(self) -> bool:
        """A turn is being answered: its reply is prepared, or spoken sentence by sentence."""
        return self._reply is not None and not self._reply.done()

    def _attentive(self) -> bool:
        """Whether the caller's audio must be judged at once (read from the listening clock's thread): someone is
        speaking, a reply is on its way, or a message is being left."""
        return self._turns.state is not TurnState.QUIET or self.agent_speaking or self._messages.recording

    def _interrupt(self) -> int:
        """Barge-in and hold: silence from the next frame on, and stop making the rest of the answer."""
        dropped = self.leg.playout.clear()
        self._stop_reply()
        return dropped

    def _stop_reply(self) -> None:
        """Stop making the rest of the reply (barge-in, hold, shutdown); what is queued is the caller's to clear."""
        self._cancel.set()
        if self._replying:
            self._reply.cancel()

    async def run(self) -> CallRecord:
        """Process the call's audio until it ends, enforcing its time limits."""
        self._reporter.call_started(self.record)
        watchdog = asyncio.create_task(self._watch_limits())
        try:
            async for window in self._listener.windows(held=lambda: self._core.state is CallState.HELD,
                                                       attentive=self._attentive):
                self._on_window(window)
        except Exception as exc:
            # The audio path broke: a silent line helps nobody, so the call ends, recorded as failed.
            event(log, "call.audio_failed", logging.ERROR, call=self.leg.sip_call_id, error=type(exc).__name__)
            self._reporter.error("audio")
            self._execute(self._core.failed())
        finally:
            watchdog.cancel()
            self._replies.drop_speculation()
            self._interrupt()
            if self._transferring is not None:
                self._transferring.cancel()
            if self._person is not None:
                self._person.hang_up()
            await self._messages.settle(self._model_deadline_s * 3)  # the record holds the message's transcript
            self.record.ended = time.time()
            if self._recorder is not None:
                self.leg.playout.tap = None
                self._recorder.close()
            event(log, "call.ended", call=self.leg.sip_call_id, outcome=self.record.outcome,
                  turns=len(self.record.turns), barge_ins=self.record.barge_ins,
                  seconds=round(self.record.ended - self.record.started, 1))
            self._reporter.call_ended(self.record)
        return self.record

    def _on_window(self, window: Window) -> None:
        voiced = window.speech >= self._turns.config.threshold
        if self._messages.recording:
            self._messages.push(window.pcm, voiced)
            return
        if self._core.state is CallState.TAKING_MESSAGE:
            self._core.message_ended()
        for turn_event in self._turns.push(window.samples, window.speech):
            self._on_turn(turn_event)

    def _on_turn(self, turn_event: Event) -> None:
        self.record.last_caller_speech = self._loop.time()
        cut_off = False
        if isinstance(turn_event, SpeechResumed):  # what was prepared for the pause is stale
            self._endpointer.resumed(turn_event.silence_ms)
            self._replies.drop_speculation()
        elif isinstance(turn_event, SpeechEnded):
            self._turn_ended_window = turn_event.window + turn_event.silence_ms // WINDOW_MS
            self._last_utterance = turn_event.audio
        elif isinstance(turn_event, SpeechStarted) and self.agent_speaking:
            cut_off = self._endpointer.talked_over((turn_event.began - self._turn_ended_window) * WINDOW_MS)
        self.record.pauses_mid_question, self.record.cut_offs = (self._endpointer.pauses_mid_question,
                                                                 self._endpointer.cut_offs)
        if not isinstance(turn_event, SpeechResumed):
            self._execute(self._core.turn(turn_event, agent_speaking=self.agent_speaking, cut_off=cut_off))

    def _speculated(self, window: int, understood: asyncio.Future) -> None:
        """The reply prepared during the pause after `window` knows what was said: that decides how much longer
        the pause may last before the turn is over (see endpointing)."""
        if understood.cancelled():
            return
        prepared: Prepared = understood.result()
        if self._turns.pause != window or prepared.transcript is None:
            return
        firm = prepared.understanding is not None and prepared.understanding.firm
        verdict = judge(prepared.transcript.text, firm, yes_or_no_asked=self._core.yes_or_no_asked)
        self._turns.end_after(self._endpointer.hangover_ms(verdict))

    # --- the caller's turns answered
    def _answer(self, utterance: SpeechEnded) -> None:
        preparing, self._cancel = self._replies.take(utterance.window, utterance.audio, self._core.clarified)
        self._reply = asyncio.create_task(self._take_turn(utterance, preparing, self._cancel, self._loop.time()))

    async def _take_turn(self, utterance: SpeechEnded, preparing: asyncio.Task, cancelled: threading.Event,
                         turn_end: float) -> None:
        """The turn's reply shown to the core, what it decides carried out, and the turn recorded whatever became
        of it (a failure is apologised for, not left silent). Latencies count from the caller's last voiced
        window; an LLM's deadline from the end of the turn."""
        speech_end = turn_end - utterance.silence_ms / 1000
        turn = TurnRecord(started=time.time(), endpointing_ms=float(utterance.silence_ms), continues=self._continuing)
        self._continuing = False
        stage, prepared = "timeout", None
        try:
            prepared = await self._replies.ready(preparing, utterance.audio, self._core.clarified, cancelled)
            stage = "asr"
            if prepared.failed is not None:
                stage = prepared.failed[0]
                raise prepared.failed[1]
            note_heard(turn, prepared)
            if turn.transcript:
                self.leg.said("user", turn.transcript)
            reply = prepared.reply
            outcome, commands = self._core.heard(
                turn.transcript, action=prepared.action, abstained=reply is not None and reply.abstained,
                chunks=frozenset(s.chunk_id for s in reply.sources) if reply is not None else frozenset(),
                reply=prepared)
            turn.outcome = outcome.value
            if outcome is not TurnOutcome.IGNORED:
                turn.response_ms = self._speaker.response_ms(speech_end)
            for command in commands:
                if isinstance(command, SpeakReply):
                    stage = "tts"
                    await self._speaker.reply(command.reply, turn, cancelled, speech_end, turn_end)
                elif isinstance(command, Confirm):
                    self.leg.said("agent", command.reply.understanding.confirm_text)
                    self._speaker.say(command.reply.confirm_audio)
                else:
                    self._execute([command])
        except asyncio.CancelledError:
            turn.outcome = TurnOutcome.INTERRUPTED.value
            raise
        except Exception as exc:
            turn.outcome = f"failed: {stage}"
            event(log, "call.turn_failed", logging.ERROR, call=self.record.sip_call_id, stage=stage,
                  error=type(exc).__name__)
            self._reporter.error(stage)
            self._speaker.say(self._phrases[Phrase.APOLOGY])
        finally:
            if prepared is not None:  # (a preparation cancelled on the way closes its own)
                prepared.close()
            if turn.transcript or turn.outcome.startswith("failed"):
                self._turn_done(turn, utterance.audio)

    def _turn_done(self, turn: TurnRecord, audio: np.ndarray) -> None:
        self.record.turns.append(turn)
        self._reporter.turn_done(self.record, turn)
        if self._keep_audio is not None:
            self._keep_audio(self.record.id, len(self.record.turns), audio)
        # speech_end_at (Unix time) lets an eval on the caller's side split its latency into the way in, the
        # agent's own response and the way out.
        event(log, "call.turn", call=self.record.sip_call_id, outcome=turn.outcome,
              response_ms=round(turn.response_ms or 0), asr_ms=round(turn.asr_ms or 0),
              **{k: v for k, v in (("answerer", turn.answerer), ("llm_reason", turn.llm_reason)) if v},
              speech_end_at=round(turn.started - turn.endpointing_ms / 1000, 3))

    def _take_back(self) -> None:
        """The last answer was cut off (the caller is going on with the question): forget it, so the next turn,
        the whole question, is not taken for a follow-up to half of it, and record the turn as cut off."""
        turns = self.record.turns
        last = turns[-1] if turns else None
        if last is None or last.outcome not in (TurnOutcome.ANSWERED.value, TurnOutcome.INTERRUPTED.value):
            return
        self._speaker.forget_last_answer()
        last.outcome = TurnOutcome.CUT_OFF.value
        self._continuing = True
        self._reporter.turn_cut_off(self.record, len(turns), last)

    # --- transfer to a person
    async def _transfer(self, target: str) -> None:
        """REFER the caller to `target` once "putting you through" has played, and follow the progress until
        its final status (or the timeout): the core decides what follows."""
        await self._until_played(GOODBYE_WAIT_S)
        if self._warm is None:
            self._execute(self._core.transfer_ended(answered=await self._put_through.blind(target)))
            return
        taken = await self._put_through.warm(self._warm)
        if taken is not None:
            self._person, line = taken
            line.ended.add_done_callback(lambda _: self._execute(self._core.person_left()))
        self._execute(self._core.transfer_ended(answered=taken is not None, bridged=True))

    async def _until_played(self, limit_s: float) -> None:
        """Until the line has played everything queued, the call ended, or `limit_s` passed (a line that stops
        taking audio, as on a hold that came just now, never drains)."""
        deadline = self._loop.time() + limit_s
        while self.leg.playout.pending_frames and not self._ended.is_set() and self._loop.time() < deadline:
            await asyncio.sleep(0.05)

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
        self._replies.drop_speculation()
        self._stop_reply()
        self.leg.playout.finish_current()
        for goodbye in goodbyes:
            await self._goodbye(goodbye.outcome, cut=False)

    async def _goodbye(self, outcome: Outcome, cut: bool = True) -> None:
        self.record.outcome = outcome.value
        if cut:
            self._interrupt()
        self._speaker.say(self._phrases[Phrase.GOODBYE])
        await self._until_played(GOODBYE_WAIT_S)
        if not self._ended.is_set():
            await asyncio.sleep(LINE_TAIL_S)
        self.leg.hang_up()
