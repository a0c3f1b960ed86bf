"""Transfer to a person: the caller asking for one, and what the transfer's progress reports mean.

Pure. A blind transfer (SIP REFER) hands the caller's phone the person's address; the phone calls it
and reports progress back in NOTIFYs carrying the status line of that call (RFC 3515): 1xx while it
rings, a final 2xx once the person answered, anything else final when it failed.
"""

from __future__ import annotations

import enum
import re

TRANSFER_TIMEOUT_S = 45.0
"""Longest wait for the transfer's final status (the person's phone rings for up to ~30 s)."""

_PERSON = (r"(a |an |the |some |your )?(real |actual |live )?(person|human( being)?|someone|somebody|operator|"
           r"agent|representative|receptionist|reception|office|manager|staff|member of (the )?(staff|team)|"
           r"engineer|advisor|adviser|customer service)s?")
_ASKS = re.compile(r"\b(speak|talk|chat)\s+(to|with)\s+" + _PERSON + r"\b|\bconnect me\s+(to|with)\s+" + _PERSON
                   + r"\b|\b(person|human|someone|somebody) (i|we) (can|could) (speak|talk)\b|\bput me through\b|"
                   r"\btransfer me\b|\b(real|actual|live) (person|human)\b|"
                   r"^\W*(operator|human|agent|representative)\W*$")


def asks_for_person(transcript: str) -> bool:
    """"Can I speak to someone?", "operator", "a real person please", "put me through"."""
    return bool(_ASKS.search(transcript.lower().strip()))


class TransferResult(enum.Enum):
    PENDING = "pending"
    ANSWERED = "transferred"
    FAILED = "transfer failed"


def transfer_result(status: int, final: bool) -> TransferResult:
    """What a progress report means: the person answered, the transfer failed, or it is still going."""
    if 200 <= status < 300 and final:
        return TransferResult.ANSWERED
    if status >= 300 or final:
        return TransferResult.FAILED
    return TransferResult.PENDING
