"""Turns call events into metrics and call records (the CallReporter the sessions report to)."""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from pathlib import Path

import numpy as np

from agent.call.commands import TurnOutcome
from agent.call.record import CallRecord, TurnRecord
from agent.call.understanding.message import Message
from agent.side.messages import MessageStore, wav_bytes
from agent.side.metrics import Metrics
from agent.side.notify import events
from agent.side.notify.notifier import Notifier
from agent.side.records import CallStore
from agent.side.writer import RecordWriter

log = logging.getLogger(__name__)

_STAGE_FIELDS = {"vad_endpointing": "endpointing_ms", "asr_queue_wait": "asr_queue_ms", "asr": "asr_ms",
                 "retrieval": "retrieval_ms", "answer": "answer_ms", "tts_first_audio": "tts_first_audio_ms",
                 "response": "response_ms"}


class Reporter:
    """Metrics are updated at once; records are written by the record writer, one write per event, in
    order, so a crash mid-call keeps every completed turn and a stalled store stalls no call."""

    def __init__(self, metrics: Metrics, store: CallStore, messages: MessageStore | None = None,
                 spill: Path | None = None, notifier: Notifier | None = None, share_recordings: bool = False) -> None:
        """`spill`: where record writes overflow to while the store is away too long (side/writer); `notifier`:
        who tells the owner of messages, declines and failed transfers (side/notify), if anyone is to be told."""
        self.metrics = metrics
        self.store = store
        self.messages = messages
        self.notifier, self.share_recordings = notifier, share_recordings
        self._recordings: dict[str, bytes] = {}
        """Each message's WAV between its saving and its transcript, for the owner's mail."""
        self._transfers: dict[str, int] = {}
        """Failed transfers per call in progress (each one's event key)."""
        self._writer = RecordWriter(metrics.record_writes_pending.set, metrics.records_degraded, spill,
                                    {"records": store, "messages": messages})

    def _write(self, method, *args) -> None:
        # Snapshot what is written now: the session goes on changing the record while the write waits.
        self._writer.submit(method, *copy.deepcopy(args))

    async def flush(self, timeout: float) -> bool:
        """Wait for the record writes still queued (before the process exits)."""
        return await asyncio.to_thread(self._writer.flush, timeout)

    def call_started(self, call: CallRecord) -> None:
        self.metrics.active_calls.inc()
        self._write(self.store.start_call, call)

    def turn_done(self, call: CallRecord, turn: TurnRecord) -> None:
        self.metrics.turns.labels(turn.outcome.split(":")[0]).inc()
        if turn.abstained:
            self.metrics.abstentions.inc()
        if turn.readings:
            reading = "again" if turn.heard_again else "other" if turn.first_heard else "first"
            self.metrics.readings.labels(reading).inc()
        if turn.answerer:
            self.metrics.answers.labels(turn.answerer).inc()
        if turn.llm_first_sentence_ms is not None:
            self.metrics.llm_first_sentence.observe(turn.llm_first_sentence_ms / 1000)
        for stage, name in _STAGE_FIELDS.items():
            value = getattr(turn, name)
            if value is not None:
                self.metrics.observe(stage, value / 1000)
        self._write(self.store.add_turn, call, len(call.turns), turn)
        if self.notifier is not None and turn.abstained and turn.outcome == TurnOutcome.ANSWERED:
            self.notifier.tell(events.question_declined(call, len(call.turns), turn, self.notifier.agent, time.time()))

    def turn_cut_off(self, call: CallRecord, n: int, turn: TurnRecord) -> None:
        """Turn `n` (from 1), already recorded, was answered too soon and is now marked cut off."""
        self.metrics.cut_offs.inc()
        self._write(self.store.add_turn, call, n, turn)

    def barge_in(self, call: CallRecord) -> None:
        self.metrics.barge_ins.inc()

    def dtmf(self, call: CallRecord, digit: str) -> None:
        self.metrics.dtmf.inc()

    def error(self, stage: str) -> None:
        self.metrics.errors.labels(stage).inc()

    def message_saved(self, call: CallRecord, message: Message, audio: np.ndarray) -> None:
        self.metrics.messages.labels(message.ended_by).inc()
        if self.messages is not None:
            self._writer.submit(self.messages.save, message, audio.copy())
        if self.notifier is not None:
            self._recordings[message.id] = wav_bytes(audio)

    def message_transcribed(self, call: CallRecord, message: Message, transcript: str) -> None:
        if self.messages is not None:
            self._writer.submit(self.messages.transcribed, message, transcript)
        if self.notifier is not None:
            self.notifier.tell(events.message_left(call, message, transcript, self._recordings.pop(message.id, b""),
                                                   self.notifier.agent, time.time()))

    def transfer(self, call: CallRecord, result: str, to: str = "") -> None:
        self.metrics.transfers.labels(result).inc()
        if self.notifier is not None and result != "transferred":
            self._transfers[call.id] = attempt = self._transfers.get(call.id, 0) + 1
            self.notifier.tell(events.transfer_failed(call, attempt, to, result, self.notifier.agent, time.time()))

    def call_recorded(self, path: Path, started: float) -> None:
        """A whole call's recording is written (side.recordings): into the shared database, when there is one, for
        every agent of the line to serve (from any thread; the record writer retries it while the store is away)."""
        if self.share_recordings:
            self._writer.submit(self.store.save_recording, path.stem, started, path)

    def call_ended(self, call: CallRecord) -> None:
        self.metrics.active_calls.dec()
        self.metrics.calls.labels(call.outcome or "unknown").inc()
        call.ended = call.ended or time.time()
        self._transfers.pop(call.id, None)
        self._write(self.store.end_call, call)
