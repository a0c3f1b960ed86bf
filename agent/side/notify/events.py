"""What the owner is told, as events: pure, from call records and messages to JSON-ready bodies.

Every event has a key that names it for good (its idempotency key: a receiver that sees one twice, after a
delivery whose reply was lost, drops the second) and a body that says what happened on which call.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from agent.call.record import CallRecord, TurnRecord
from agent.call.understanding.message import Message

MESSAGE_LEFT, QUESTION_DECLINED, TRANSFER_FAILED, DIGEST = (
    "message.left", "question.declined", "transfer.failed", "digest.unanswered")


@dataclass(frozen=True)
class Event:
    key: str
    kind: str
    body: dict
    attachment: bytes | None = None
    """The message's recording (a WAV), for the e-mail; never sent to the webhook."""


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def _call(call: CallRecord) -> dict:
    return {"id": call.id, "sip_call_id": call.sip_call_id, "caller": call.remote, "dialed": call.dialed,
            "started": _iso(call.started)}


def _event(key: str, kind: str, agent: str, now: float, attachment: bytes | None = None, **fields: object) -> Event:
    return Event(key, kind, {"id": key, "type": kind, "created": _iso(now), "agent": agent, **fields}, attachment)


def message_left(call: CallRecord, message: Message, transcript: str | None, wav: bytes, agent: str,
                 now: float) -> Event:
    """A caller left a message (its transcript None when it could not be made)."""
    return _event(f"{MESSAGE_LEFT}:{message.id}", MESSAGE_LEFT, agent, now, wav, call=_call(call), message={
        "id": message.id, "seconds": message.seconds, "ended_by": message.ended_by, "transcript": transcript,
        "audio": f"/messages/{message.id}/audio"})


def question_declined(call: CallRecord, turn_number: int, turn: TurnRecord, agent: str, now: float) -> Event:
    """The agent told the caller it had no answer to a question (turn `turn_number`, from 1)."""
    return _event(f"{QUESTION_DECLINED}:{call.id}:{turn_number}", QUESTION_DECLINED, agent, now, call=_call(call),
                  question=turn.transcript, turn=turn_number)


def transfer_failed(call: CallRecord, attempt: int, to: str, result: str, agent: str, now: float) -> Event:
    """A caller asked for a person and was not put through (`attempt`: the call's how many-th transfer)."""
    return _event(f"{TRANSFER_FAILED}:{call.id}:{attempt}", TRANSFER_FAILED, agent, now, call=_call(call),
                  transfer={"to": to, "result": result})


def digest(day: str, groups: list[dict], agent: str, now: float) -> Event:
    """The day's unanswered questions, grouped by meaning (unanswered.group_by_meaning), most asked first."""
    return _event(f"{DIGEST}:{day}", DIGEST, agent, now, day=day, groups=groups)
