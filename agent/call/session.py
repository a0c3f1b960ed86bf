"""One phone call, wired end to end: line audio → VAD → turns → ASR → knowledge → voice → playout.

The shell around the pure call core (core.py), which decides barge-in, hold, DTMF, what the caller asked
for, transfer, endings and time limits: this is its one driver, feeding it events and carrying its commands out.
The transport's threads reach the session only through the `on_*` methods, which hop onto the event loop. The
stages it calls (parts.py) hold no reference to the core and no callback into the session; models run in worker
threads, and the loop itself only moves frames and events.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections.abc import Callable

import numpy as np

from agent.call import commands as do
from agent.call.commands import Outcome, Phrase, TurnOutcome
from agent.call.config import CallConfig
from agent.call.core import CallCore, CallState
from agent.call.limits import CallLimits
from agent.call.listening.listen import ListenClock, Window
from agent.call.listening.turns import SpeechEnded, SpeechResumed
from agent.call.parts import CallParts
from agent.call.record import CallAudioRecorder, CallRecord, CallReporter, note_heard
from agent.call.speaking.voice import Phrases
from agent.call.transport import CallTransport
from agent.call.understanding.prepare import Pipeline, Prepared
from agent.knowledge.memory import CallMemory
from agent.logs import event

log = logging.getLogger(__name__)


class CallSession:
    """Runs one call until it ends; `run()` is its task."""

    def __init__(self, leg: CallTransport, loop: asyncio.AbstractEventLoop, pipeline: Pipeline, phrases: Phrases,
                 listening: ListenClock, memory: CallMemory, reporter: CallReporter, config: CallConfig,
                 *, keep_audio: Callable[[str, int, np.ndarray], None] | None = None,
                 record_call: Callable[[str, float], CallAudioRecorder] | None = None) -> None:
        """`pipeline`: the models and their executors (see call/workers); `listening`: the clock every call's VAD
        runs on, apart from the model pool, so a busy pool never delays turn-taking; `keep_audio(call id, turn,
        audio)`: where recorded turns go (side.turn_audio); `record_call(call id, started)`: the whole call's
        recorder (side.recordings), when calls are recorded."""
        self.leg, self._loop, self._config, self._phrases = leg, loop, config, phrases
        self._parts = p = CallParts.build(leg, loop, pipeline, phrases, listening, memory, reporter, config,
                                          keep_audio, record_call)
        self._core = CallCore(CallLimits(loop.time(), config.inactivity_s, config.max_call_s, config.dead_call_s),
                              config.transfer_digit, config.transfer_to if leg.can_transfer else "",
                              warm_transfer=p.put_through.is_warm)
        self._farewell: asyncio.Task | None = None
        self._transferring: asyncio.Task | None = None
        self._ended = asyncio.Event()
        self._listener, self._ear, self._book, self._replies = p.listener, p.ear, p.book, p.replies
        self._speaker, self._put_through, self._messages = p.speaker, p.put_through, p.messages
        self.record = p.book.record

    # --- called from pjsua2 threads
    def on_media(self, codec: str, clock_rate: int) -> None:
        self._loop.call_soon_threadsafe(self._media_ready, codec, clock_rate)

    def on_hold(self, held: bool) -> None:
        self._loop.call_soon_threadsafe(self._set_hold, held)

    def on_dtmf(self, digit: str) -> None:
        self._loop.call_soon_threadsafe(self._dtmf, digit)

    def on_frame(self, pcm: np.ndarray, outbound_rms: float) -> None:
        self._parts.heard(pcm, outbound_rms)  # no hop: the listening clock takes it on its next tick

    def on_transfer(self, status: int, reason: str, final: bool) -> None:
        self._loop.call_soon_threadsafe(self._put_through.status, status, f"{status} {reason}".strip(), final)

    def on_ended(self, reason: str) -> None:
        self._loop.call_soon_threadsafe(self._end, reason)

    # --- event loop
    @property
    def state(self) -> CallState:
        return self._core.state

    def _execute(self, commands: list[do.Command]) -> None:
        """Carry out what the call core decided, in order (a reply to speak or confirm is the turn's: `_take_turn`)."""
        for command in commands:
            if isinstance(command, do.Say):
                if command.phrase is Phrase.STILL_THERE:
                    event(log, "call.still_there", call=self.leg.sip_call_id)
                self._speaker.say(self._phrases[command.phrase])
            elif isinstance(command, do.RepeatLastReply):
                self._speaker.say(self._speaker.last_reply)
            elif isinstance(command, do.Interrupt):
                dropped = self._parts.interrupt()
                if command.cut_off:  # the rest of the question: heard with the first half, answered once
                    self._ear.go_on_from_last()
                    self._take_back()
                    event(log, "call.cut_off", call=self.leg.sip_call_id, dropped_frames=dropped)
                if command.barge_in:
                    self._listener.forget_echo()
                    self._book.barge_in(dropped)
            elif isinstance(command, do.Speculate):
                understood = self._replies.speculate(command.pause.window, command.pause.audio,
                                                     self._core.clarified)
                understood.add_done_callback(functools.partial(self._speculated, command.pause.window))
            elif isinstance(command, do.Answer):
                self._answer(command.utterance)
            elif isinstance(command, do.StartMessage):
                self._replies.drop_speculation()
                self._ear.restart()
                self._messages.start(self._phrases[Phrase.MESSAGE_PROMPT])
            elif isinstance(command, do.EndMessage):
                self._messages.finish(command.why, thank=command.why == "#")
            elif isinstance(command, do.Transfer):
                self._transferring = asyncio.create_task(self._transfer(command.target))
            elif isinstance(command, do.Goodbye):
                self._farewell = asyncio.create_task(self._goodbye(command.outcome, command.cut))
            elif isinstance(command, do.HangUp):
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
        self._book.dtmf(digit)
        self._execute(self._core.dtmf(digit, has_last_reply=len(self._speaker.last_reply) > 0))

    def _end(self, reason: str) -> None:
        if not self._ended.is_set():
            self.record.outcome = self._core.ended().value
            self.record.reason = reason
            self._ended.set()
            self._parts.hung_up()

    @property
    def agent_speaking(self) -> bool:
        return self._parts.agent_speaking

    async def run(self) -> CallRecord:
        """Process the call's audio until it ends, enforcing its time limits."""
        self._book.started()
        watchdog = asyncio.create_task(self._watch_limits())
        try:
            async for window in self._listener.windows(held=lambda: self._core.state is CallState.HELD,
                                                       attentive=self._parts.attentive):
                self._on_window(window)
        except Exception as exc:
            # The audio path broke: a silent line helps nobody, so the call ends, recorded as failed.
            self._book.failed("audio", exc)
            self._execute(self._core.failed())
        finally:
            watchdog.cancel()
            if self._transferring is not None:
                self._transferring.cancel()
            await self._parts.close(self._config.model_deadline_s * 3)
        return self.record

    def _on_window(self, window: Window) -> None:
        if self._messages.recording:
            self._messages.push(window.pcm, window.speech >= self._ear.threshold)
            return
        if self._core.state is CallState.TAKING_MESSAGE:
            self._core.message_ended()
        for heard in self._ear.push(window.samples, window.speech, agent_speaking=self.agent_speaking):
            self.record.last_caller_speech = self._loop.time()
            self.record.pauses_mid_question, self.record.cut_offs = self._ear.pauses_mid_question, self._ear.cut_offs
            if isinstance(heard.event, SpeechResumed):  # what was prepared for the pause is stale
                self._replies.drop_speculation()
            else:
                self._execute(self._core.turn(heard.event, agent_speaking=self.agent_speaking, cut_off=heard.cut_off))

    def _speculated(self, window: int, understood: asyncio.Future) -> None:
        """What the reply prepared during the pause after `window` understood tells the ear how long the pause may
        last."""
        if understood.cancelled():
            return
        prepared: Prepared = understood.result()
        if prepared.transcript is not None:
            firm = prepared.understanding is not None and prepared.understanding.firm
            self._ear.understood(window, prepared.transcript.text, firm, yes_or_no_asked=self._core.yes_or_no_asked)

    # --- the caller's turns answered
    def _answer(self, utterance: SpeechEnded) -> None:
        preparing, self._parts.cancel = self._replies.take(utterance.window, utterance.audio, self._core.clarified)
        self._parts.reply = asyncio.create_task(self._take_turn(utterance, preparing, self._parts.cancel,
                                                                self._loop.time()))

    async def _take_turn(self, utterance: SpeechEnded, preparing: asyncio.Task, cancelled: threading.Event,
                         turn_end: float) -> None:
        """The turn's reply shown to the core, what it decides carried out, and the turn recorded whatever became
        of it (a failure is apologised for, not left silent). Latencies count from the caller's last voiced
        window; an LLM's deadline from the end of the turn."""
        speech_end = turn_end - utterance.silence_ms / 1000
        turn = self._book.new_turn(utterance.silence_ms)
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
            outcome, commands = self._core.heard(turn.transcript, action=prepared.action,
                                                 abstained=prepared.abstained, chunks=prepared.sources, reply=prepared)
            turn.outcome = outcome.value
            if outcome is not TurnOutcome.IGNORED:
                turn.response_ms = self._speaker.response_ms(speech_end)
            for command in commands:
                if isinstance(command, do.SpeakReply):
                    stage = "tts"
                    await self._speaker.reply(command.reply, turn, cancelled, speech_end, turn_end)
                elif isinstance(command, do.Confirm):
                    self.leg.said("agent", command.reply.understanding.confirm_text)
                    self._speaker.say(command.reply.confirm_audio)
                else:
                    self._execute([command])
        except asyncio.CancelledError:
            turn.outcome = TurnOutcome.INTERRUPTED.value
            raise
        except Exception as exc:
            turn.outcome = f"failed: {stage}"
            self._book.failed(stage, exc)
            self._speaker.say(self._phrases[Phrase.APOLOGY])
        finally:
            if prepared is not None:  # (a preparation cancelled on the way closes its own)
                prepared.close()
            if turn.transcript or turn.outcome.startswith("failed"):
                self._book.turn(turn, utterance.audio)

    def _take_back(self) -> None:
        """The last answer was cut off (the caller is going on with the question): forget it, so the next turn,
        the whole question, is not taken for a follow-up to half of it."""
        if self._book.cut_off():
            self._speaker.forget_last_answer()

    # --- transfer to a person
    async def _transfer(self, target: str) -> None:
        """REFER the caller to `target` once "putting you through" has played, and follow the progress until
        its final status (or the timeout): the core decides what follows."""
        await self._speaker.played(self._ended)
        answered, person = await self._put_through.put(target)
        if person is not None:  # bridged through the agent until one of them hangs up
            person.ended.add_done_callback(lambda _: self._execute(self._core.person_left()))
        self._execute(self._core.transfer_ended(answered=answered, bridged=person is not None))

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
        goodbyes = [c for c in commands if isinstance(c, do.Goodbye)]
        self._execute([c for c in commands if not isinstance(c, do.Goodbye)])
        self._replies.drop_speculation()
        self._parts.stop_reply()
        self.leg.playout.finish_current()
        for goodbye in goodbyes:
            await self._goodbye(goodbye.outcome, cut=False)

    async def _goodbye(self, outcome: Outcome, cut: bool = True) -> None:
        self.record.outcome = outcome.value
        if cut:
            self._parts.interrupt()
        await self._speaker.last_words(self._phrases[Phrase.GOODBYE], self._ended)
