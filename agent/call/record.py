"""What happened on a call, turn by turn (kept for metrics and call records), and where it is reported."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from agent.call.understanding.message import Message

if TYPE_CHECKING:
    from agent.call.understanding.prepare import Prepared


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
    """Whisper decoding time."""
    first_heard: str = ""
    """Whisper's best reading by sound alone, when another of its readings was acted on (see call.understand)."""
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
