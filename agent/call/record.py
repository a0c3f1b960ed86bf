"""What happened on a call, turn by turn (kept for metrics and call records), and where it is reported."""

from __future__ import annotations

import logging
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from agent.call.commands import TurnOutcome
from agent.call.understanding.message import Message
from agent.logs import clip, event

if TYPE_CHECKING:
    from agent.call.transport import CallTransport
    from agent.call.understanding.prepare import Prepared

log = logging.getLogger(__name__)

MAX_DTMF_RECORDED = 64
"""A caller (or a fuzzer) may send thousands of digits: the record keeps the first ones."""


@dataclass
class TurnRecord:
    """One caller utterance and the agent's reply."""

    started: float
    transcript: str = ""
    answer: list[str] = field(default_factory=list)
    """Sentences spoken, as written in the KB."""
    sources: list[str] = field(default_factory=list)
    abstained: bool = False
    outcome: str = "pending"
    """A TurnOutcome (answered, asked again, confirming, confirmed, …), or failed: <stage>."""
    asr_logprob: float | None = None
    """Whisper's mean token log probability: how sure it was of the transcript (near 0 is sure)."""
    evidence: float | None = None
    """The KB's support for its answer (below the abstention threshold it declines)."""
    endpointing_ms: float | None = None
    """Silence waited after the last voiced window before the turn was declared over (hangover)."""
    asr_queue_ms: float | None = None
    """Waiting for the speech recogniser (another call was using it)."""
    asr_ms: float | None = None
    """Whisper decoding time (both recognisers' added up when the second heard the turn again, though the second may
    have run beside the first: see prepare._start_ahead)."""
    first_heard: str = ""
    """Whisper's best reading by sound alone, when another of its readings was acted on (see call.understand), or
    the first recogniser's reading when the second's were (see heard_again)."""
    heard_again: bool = False
    """The second, larger recogniser heard the turn again and its readings were acted on (see hear_again)."""
    readings: int | None = None
    """Distinct readings of the utterance weighed against the KB."""
    topic: str = ""
    """What the agent asked the caller to confirm ("the gas safety certificate"), when it did."""
    retrieval_ms: float | None = None
    answer_ms: float | None = None
    tts_first_audio_ms: float | None = None
    """Synthesising the first sentence."""
    response_ms: float | None = None
    """End of caller speech (last voiced window) to the first answer audio frame on the line."""
    answerer: str = ""
    """Who phrased the answer spoken: extractive (the KB's sentences), llm, or llm_rejected (the LLM's phrasing
    failed its check, missed its deadline or failed; the KB's sentences were spoken)."""
    llm_reason: str = ""
    """Why the LLM's phrasing was not spoken, or stopped short."""
    llm_first_sentence_ms: float | None = None
    """End of the turn to the LLM's first checked sentence."""
    continues: bool = False
    """This turn is the rest of a question whose answer was cut off (both halves heard as one)."""


def note_heard(turn: TurnRecord, prepared: Prepared) -> None:
    """What was heard, and what the KB made of it, into the turn's record."""
    transcript, understanding = prepared.transcript, prepared.understanding
    turn.asr_queue_ms, turn.asr_ms = transcript.queue_s * 1000, transcript.decode_s * 1000
    turn.transcript, turn.asr_logprob = transcript.text, round(transcript.avg_logprob, 3)
    if understanding is None:
        return
    turn.transcript = understanding.chosen.hypothesis.text
    turn.readings, turn.topic = len(understanding.readings), understanding.topic
    if understanding.chosen is not understanding.first:
        turn.first_heard = understanding.first.hypothesis.text
    if prepared.heard_again_from:
        turn.first_heard, turn.heard_again = prepared.heard_again_from, True
    # The KB was asked once for each reading.
    turn.evidence = round(understanding.reply.evidence, 3)
    turn.retrieval_ms = sum(r.reply.retrieval_ms for r in understanding.readings)
    turn.answer_ms = sum(r.reply.answer_ms for r in understanding.readings)


@dataclass
class CallRecord:
    """One call from INVITE to BYE."""

    id: str
    """The agent's own id for the call (records, /calls/{id})."""
    sip_call_id: str
    remote: str
    dialed: str
    started: float
    ended: float | None = None
    codec: str = ""
    transport: str = "sip"
    """What carried the call: sip, websocket or webrtc."""
    outcome: str = ""
    reason: str = ""
    turns: list[TurnRecord] = field(default_factory=list)
    transfers: list[dict] = field(default_factory=list)
    """Each try to put the caller through to a person: to whom, how (blind, warm) and what came of it."""
    barge_ins: int = 0
    dtmf: list[str] = field(default_factory=list)
    pauses_mid_question: int = 0
    """Times the caller went on after a pause that could have ended the turn (then waited for longer)."""
    cut_offs: int = 0
    """Times the caller went on just after their turn had been ended short, over the agent's answer."""
    last_caller_speech: float = 0.0
    """Event-loop time the caller was last heard (for the inactivity timer)."""


class CallAudioRecorder(Protocol):
    """Both sides of one call as it goes (side.recordings): frames from any thread, closed when the call ends."""

    def heard(self, pcm: np.ndarray) -> None: ...
    def played(self, pcm: np.ndarray) -> None: ...
    def close(self) -> object: ...


class CallReporter(Protocol):
    """Where a call's outcomes go (metrics, call records); called on the event loop."""

    def call_started(self, call: CallRecord) -> None: ...
    def turn_done(self, call: CallRecord, turn: TurnRecord) -> None: ...
    def turn_cut_off(self, call: CallRecord, n: int, turn: TurnRecord) -> None: ...
    def barge_in(self, call: CallRecord) -> None: ...
    def dtmf(self, call: CallRecord, digit: str) -> None: ...
    def error(self, stage: str) -> None: ...
    def message_saved(self, call: CallRecord, message: Message, audio: np.ndarray) -> None: ...
    def message_transcribed(self, call: CallRecord, message: Message, transcript: str) -> None: ...
    def transfer(self, call: CallRecord, result: str, to: str) -> None: ...
    def call_ended(self, call: CallRecord) -> None: ...
    def call_recorded(self, path: Path, started: float) -> None: ...


class CallBook:
    """One call's record kept as it goes: each fact goes into the record, to the reporter and to the log, once;
    with the turns' audio kept (`keep_audio(call id, turn, audio)`) and the whole call recorded where the owner
    asked for either."""

    def __init__(self, record: CallRecord, reporter: CallReporter,
                 keep_audio: Callable[[str, int, np.ndarray], None] | None = None,
                 recorder: CallAudioRecorder | None = None) -> None:
        self.record, self.reporter, self._keep_audio, self.recorder = record, reporter, keep_audio, recorder
        self._continuing = False
        """The next turn is the rest of a question whose answer was cut off."""

    @classmethod
    def open(cls, leg: CallTransport, now: float, reporter: CallReporter,
             keep_audio: Callable[[str, int, np.ndarray], None] | None = None,
             record_call: Callable[[str, float], CallAudioRecorder] | None = None) -> CallBook:
        """The book of a new call on `leg` at event-loop time `now`; `record_call(call id, started)`: the whole
        call's recorder, when calls are recorded."""
        record = CallRecord(uuid.uuid4().hex[:16], leg.sip_call_id, leg.remote, leg.dialed, time.time(),
                            transport=leg.kind, last_caller_speech=now)
        return cls(record, reporter, keep_audio,
                   record_call(record.id, record.started) if record_call is not None else None)

    def started(self) -> None:
        self.reporter.call_started(self.record)

    def dtmf(self, digit: str) -> None:
        if len(self.record.dtmf) < MAX_DTMF_RECORDED:
            self.record.dtmf.append(digit)
        self.reporter.dtmf(self.record, digit)
        event(log, "call.dtmf", call=self.record.sip_call_id, digit=digit)

    def barge_in(self, dropped_frames: int) -> None:
        self.record.barge_ins += 1
        self.reporter.barge_in(self.record)
        event(log, "call.barge_in", call=self.record.sip_call_id, dropped_frames=dropped_frames)

    def failed(self, stage: str, error: Exception) -> None:
        """A model or the audio path failed (`stage`: asr, tts, …, audio)."""
        name = "call.audio_failed" if stage == "audio" else "call.turn_failed"
        # Where it was raised and what it said: an operator (or a CI log) has nothing else to go on.
        frames = traceback.extract_tb(error.__traceback__)
        raised_at = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
        event(log, name, logging.ERROR, call=self.record.sip_call_id, stage=stage, error=type(error).__name__,
              detail=clip(str(error), 200), at=raised_at)
        self.reporter.error(stage)

    def new_turn(self, silence_ms: float) -> TurnRecord:
        """The record of a turn that ended `silence_ms` ago, and whether it goes on with a cut-off question."""
        turn = TurnRecord(started=time.time(), endpointing_ms=float(silence_ms), continues=self._continuing)
        self._continuing = False
        return turn

    def turn(self, turn: TurnRecord, audio: np.ndarray) -> None:
        self.record.turns.append(turn)
        self.reporter.turn_done(self.record, turn)
        if self._keep_audio is not None:
            self._keep_audio(self.record.id, len(self.record.turns), audio)
        # speech_end_at (Unix time) lets an eval on the caller's side split its latency into the way in, the
        # agent's own response and the way out.
        event(log, "call.turn", call=self.record.sip_call_id, outcome=turn.outcome,
              response_ms=round(turn.response_ms or 0), asr_ms=round(turn.asr_ms or 0),
              **{k: v for k, v in (("answerer", turn.answerer), ("llm_reason", turn.llm_reason)) if v},
              speech_end_at=round(turn.started - turn.endpointing_ms / 1000, 3))

    def cut_off(self) -> bool:
        """The last answer was cut off (the caller is going on with the question): its turn is recorded so, and
        the next turn goes on with it. False when there was no answer to take back."""
        turns = self.record.turns
        last = turns[-1] if turns else None
        if last is None or last.outcome not in (TurnOutcome.ANSWERED.value, TurnOutcome.CONFIRMED.value,
                                                TurnOutcome.INTERRUPTED.value):
            return False
        last.outcome = TurnOutcome.CUT_OFF.value
        self.reporter.turn_cut_off(self.record, len(turns), last)
        self._continuing = True
        return True

    def ended(self) -> None:
        record = self.record
        record.ended = time.time()
        if self.recorder is not None:
            self.recorder.close()
        event(log, "call.ended", call=record.sip_call_id, outcome=record.outcome, turns=len(record.turns),
              barge_ins=record.barge_ins, seconds=round(record.ended - record.started, 1))
        self.reporter.call_ended(record)
