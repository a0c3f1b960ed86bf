"""A call's time limits as a pure decision: maximum length, a silent caller, and a dead line.

Fed the time and what the session observes every half second; says what to do. Pure, so every rule
is tested tick by tick without a call: a held line sends no RTP at all (a=inactive, port 0) and is
not a dead call, but the maximum length still applies (without a goodbye: nobody would hear it); a
silent caller is asked once whether they are still there, then the agent says goodbye.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class LimitAction(enum.Enum):
    NONE = "none"
    ASK_STILL_THERE = "ask still there"
    GOODBYE = "goodbye"
    """Say goodbye, then hang up."""
    HANG_UP = "hang up"
    """Hang up at once (nobody is listening)."""


@dataclass(frozen=True)
class Verdict:
    action: LimitAction
    outcome: str = ""
    """The call's outcome when it ends here."""


class CallLimits:
    """The limits of one call, checked with `check` every so often."""

    def __init__(self, started: float, inactivity_s: float, max_call_s: float, dead_call_s: float) -> None:
        self._started, self._inactivity, self._max_call, self._dead = started, inactivity_s, max_call_s, dead_call_s
        self._agent_last_spoke = started
        self._packets, self._packets_changed = -1, started
        self._asked_at: float | None = None

    def check(self, now: float, *, held: bool, agent_speaking: bool, last_caller_speech: float,
              rtp_packets: int | None) -> Verdict:
        """`rtp_packets`: RTP packets received so far (None while held: not asked)."""
        if now - self._started > self._max_call:
            # A held line carries no audio: a goodbye would never play out, so just hang up.
            return Verdict(LimitAction.HANG_UP if held else LimitAction.GOODBYE, "maximum call length")
        if held or rtp_packets is None:
            self._packets_changed = self._agent_last_spoke = now
            return Verdict(LimitAction.NONE)
        if rtp_packets != self._packets:
            self._packets, self._packets_changed = rtp_packets, now
        elif now - self._packets_changed > self._dead:
            return Verdict(LimitAction.HANG_UP, "dead call (no RTP)")
        if agent_speaking:
            self._agent_last_spoke = now
            return Verdict(LimitAction.NONE)
        if self._asked_at is not None and last_caller_speech > self._asked_at:
            self._asked_at = None  # they answered
        if now - max(last_caller_speech, self._agent_last_spoke) > self._inactivity:
            if self._asked_at is not None:
                return Verdict(LimitAction.GOODBYE, "caller silent")
            self._asked_at = self._agent_last_spoke = now  # the question is the agent speaking
            return Verdict(LimitAction.ASK_STILL_THERE)
        return Verdict(LimitAction.NONE)
