"""One SIP call as the rest of the agent sees it (CallLeg): the thread-safe handle the call session holds, with
its identity, the playout queue, and commands queued to the SIP thread; and what the call tells whoever runs it
(CallObserver). pjsua2's own side of the call is sip_call.SipCall.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from agent.audio.playout import Playout

if TYPE_CHECKING:
    from agent.sip.call_table import CallTable
    from agent.sip.sip_call import SipCall


class LegHost(Protocol):
    """What a call needs from the endpoint that owns it (SipEndpoint; a Protocol, so leg.py need not import it)."""

    gate: Any
    """Its firewall has lock_media(local_ports, peers) -> bool (see gate, firewall)."""
    calls: CallTable

    def call_soon(self, command: Callable[[], None]) -> None: ...
    def dial(self, target: str, observer: CallObserver) -> concurrent.futures.Future: ...
    def bridge(self, first: CallLeg, second: CallLeg) -> concurrent.futures.Future: ...
    def forget(self, call_id: int, call: SipCall) -> None: ...


class CallObserver(Protocol):
    """What a call reports; called from pjsua2's threads, so implementations hop to their own."""

    def on_media(self, codec: str, clock_rate: int) -> None: ...
    def on_hold(self, held: bool) -> None: ...
    def on_dtmf(self, digit: str) -> None: ...
    def on_frame(self, pcm: np.ndarray, outbound_rms: float) -> None: ...
    def on_transfer(self, status: int, reason: str, final: bool) -> None: ...
    def on_ended(self, reason: str) -> None: ...


@dataclass
class CallLeg:
    """The call session's handle on a SIP call (a call.transport.CallTransport)."""

    sip_call_id: str
    """The Call-ID header."""
    remote: str
    """The caller (From URI)."""
    dialed: str
    """User part of the To URI: the extension the caller dialled."""
    playout: Playout
    _endpoint: LegHost = field(repr=False)
    _pj_id: int = field(repr=False)
    kind: str = "sip"
    """How the call came in, for its record: headers.secured_kind."""
    takes_replaces: bool = False
    """The caller's phone can be handed over to another call with REFER and Replaces (headers.takes_replaces)."""
    # Only the pjsua2 call id, never the SipCall itself: pjsua2 objects must be released on the
    # SIP thread, and a reference held here could be dropped on any thread by the garbage collector.
    # pjsua2 reuses call ids, so the id is only trusted together with the Call-ID (see `find`).

    def hang_up(self) -> None:
        """Send BYE (or a final response) from the SIP thread."""
        self.query(lambda call: call.hang_up_now())

    can_transfer = True

    def transfer(self, target: str) -> None:
        """Blind transfer to `target` (REFER; pjsua adds Referred-By); progress comes to on_transfer."""
        self.query(lambda call: call.refer(target))

    def dial(self, target: str, observer: CallObserver) -> concurrent.futures.Future:
        """Place the agent's own call to `target` (a warm transfer's person), reported to `observer`; resolves to
        its CallLeg, or None when it could not be placed."""
        return self._endpoint.dial(target, observer)

    def hand_over(self, other: CallLeg) -> concurrent.futures.Future:
        """Ask the caller's phone to call `other`'s far end itself, replacing the agent's call to it (REFER with
        Replaces), so the two talk without the agent. Resolves to the final status of the phone's new call (2xx:
        handed over; the agent's calls are then ended by the phones), or None when either call is gone."""
        found: concurrent.futures.Future = concurrent.futures.Future()

        def refer() -> None:
            mine = self._endpoint.calls.find(self._pj_id, self.sip_call_id)
            theirs = self._endpoint.calls.find(other._pj_id, other.sip_call_id)
            if mine is None or theirs is None:
                found.set_result(None)
            else:
                mine.refer_replacing(theirs, found)

        self._endpoint.call_soon(refer)
        return found

    def bridge(self, other: CallLeg) -> concurrent.futures.Future:
        """Connect this call's audio and `other`'s both ways (they talk through the agent's conference bridge);
        resolves to False when either call is gone."""
        return self._endpoint.bridge(self, other)

    def said(self, role: str, text: str) -> None:
        """A phone line shows no transcript (the call record keeps it)."""

    def packets_received(self) -> concurrent.futures.Future:
        return self.query(lambda call: call.rtp_packets_received())

    def query(self, question: Callable[[SipCall], Any]) -> concurrent.futures.Future:
        """Run `question(call)` on the SIP thread; await the result with asyncio.wrap_future.
        Resolves to None once the call is gone."""
        future: concurrent.futures.Future = concurrent.futures.Future()

        def ask() -> None:
            if not future.set_running_or_notify_cancel():  # the asker gave up (its task was cancelled)
                return
            call = self._endpoint.calls.find(self._pj_id, self.sip_call_id)
            try:
                future.set_result(question(call) if call is not None else None)
            except Exception as exc:
                future.set_exception(exc)

        self._endpoint.call_soon(ask)
        return future
