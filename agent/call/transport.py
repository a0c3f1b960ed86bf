"""What a call session needs from whatever carries the call: a SIP leg (agent/sip/leg.py), a WebSocket
media stream (agent/stream/call.py) or the browser phone (agent/browser/call.py). Audio comes in through
the session's `on_frame` (16 kHz int16) and goes out through `playout`; everything else is this small
interface.
"""

from __future__ import annotations

import concurrent.futures
from typing import Protocol

from agent.audio.playout import Playout

RATE = 16000
"""Every transport hands the session 16 kHz audio and plays 16 kHz audio from its playout queue."""


def counted(packets: int | None) -> concurrent.futures.Future:
    """`packets_received` of a transport that counts on the event loop itself (a WebSocket stream, the
    browser phone): the answer, already there."""
    done: concurrent.futures.Future = concurrent.futures.Future()
    done.set_result(packets)
    return done


class CallTransport(Protocol):
    kind: str
    """Which transport carries the call: "sip", "websocket" or "webrtc" (kept in the call record)."""
    sip_call_id: str
    """The call's identifier on its transport (SIP: the Call-ID header)."""
    remote: str
    """Who called (SIP: the From URI)."""
    dialed: str
    """What they called (SIP: the user part of the To URI): chooses the dialplan profile."""
    playout: Playout
    """Audio queued for the caller, taken one frame at a time by the transport's clock."""

    can_transfer: bool
    """Whether `transfer` can hand the caller to a person (SIP REFER can; a WebSocket stream cannot)."""

    def hang_up(self) -> None: ...

    def transfer(self, target: str) -> None:
        """Hand the caller to `target`; progress comes back through the session's `on_transfer`."""

    def said(self, role: str, text: str) -> None:
        """What the caller ("user") or the agent ("agent") said in a turn, for transports that show it."""

    def packets_received(self) -> concurrent.futures.Future:
        """Resolves to the media packets received so far (for dead-call detection), None once the call is gone."""
