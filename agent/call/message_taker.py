"""One call's message-taking, wired: prompt and tone, the caller's words until they stop, then the recording
stored at once and transcribed after. A thin shell around message.MessageRecording, on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Protocol

import numpy as np

from agent.audio.playout import Playout
from agent.call.commands import TurnOutcome
from agent.call.record import CallRecord, TurnRecord
from agent.call.transport import RATE
from agent.call.understanding.message import Message, MessageConfig, MessageRecording
from agent.logs import event

log = logging.getLogger(__name__)


class MessageReporter(Protocol):
    def message_saved(self, call: CallRecord, message: Message, audio: np.ndarray) -> None: ...
    def message_transcribed(self, call: CallRecord, message: Message, transcript: str) -> None: ...
    def turn_done(self, call: CallRecord, turn: TurnRecord) -> None: ...
    def error(self, stage: str) -> None: ...


class MessageTaker:
    """Records a call's messages, prompted and thanked on `playout`. `transcribe(pcm)` is the recogniser, off the
    loop; `now()` is the loop's clock."""

    def __init__(self, config: MessageConfig, call: CallRecord, playout: Playout, reporter: MessageReporter,
                 thanks: np.ndarray, transcribe: Callable[[np.ndarray], Awaitable[str]],
                 now: Callable[[], float]) -> None:
        self._config, self._call, self._playout, self._reporter = config, call, playout, reporter
        self._thanks, self._transcribe, self._now = thanks, transcribe, now
        self._recording: MessageRecording | None = None
        self._started = 0.0
        self._transcribing: set[asyncio.Task] = set()

    @property
    def recording(self) -> bool:
        return self._recording is not None

    def start(self, prompt: np.ndarray) -> None:
        """Ask for the message; the recording starts once the prompt and its tone have been played."""
        self._playout.say(prompt)
        self._recording, self._started = MessageRecording(self._config), 0.0

    def push(self, window: np.ndarray, voiced: bool) -> None:
        """One 32 ms window of the caller's audio (int16, 16 kHz)."""
        if self._recording is None or self._playout.pending_frames:
            return  # the prompt and its tone are still playing: the message starts after the tone
        self._started = self._started or time.time()
        if voiced:
            self._call.last_caller_speech = self._now()
        ended_by = self._recording.push(window, voiced)
        if ended_by is not None:
            self.finish(ended_by, thank=True)

    def finish(self, ended_by: str, thank: bool) -> None:
        """Store what was said at once (a hang-up loses nothing), thank the caller, transcribe it after."""
        recording, self._recording = self._recording, None
        if recording is None or not recording.heard_speech:
            return
        audio = recording.audio()
        message = Message(uuid.uuid4().hex[:16], self._call.id, self._call.remote, self._call.dialed, self._started,
                          round(len(audio) / RATE, 1), ended_by)
        self._reporter.message_saved(self._call, message, audio)
        event(log, "call.message", call=self._call.sip_call_id, message=message.id, seconds=message.seconds,
              ended_by=ended_by)
        if thank:
            self._playout.say(self._thanks)
        task = asyncio.create_task(self._transcribed(message, audio))
        self._transcribing.add(task)
        task.add_done_callback(self._transcribing.discard)

    async def settle(self, timeout_s: float) -> None:
        """Wait for transcripts still being made (the call record should hold them before it is closed)."""
        if self._transcribing:
            await asyncio.wait(self._transcribing, timeout=timeout_s)

    async def _transcribed(self, message: Message, audio: np.ndarray) -> None:
        turn = TurnRecord(started=message.started, outcome=TurnOutcome.MESSAGE_TAKEN.value)
        try:
            turn.transcript = await self._transcribe(audio)
        except Exception as exc:
            event(log, "call.message_transcript_failed", logging.ERROR, call=self._call.sip_call_id,
                  error=type(exc).__name__)
            self._reporter.error("message")
        self._reporter.message_transcribed(self._call, message, turn.transcript)
        turn.transcript = turn.transcript or "(message not transcribed)"
        self._call.turns.append(turn)
        self._reporter.turn_done(self._call, turn)
