"""The endpoint's calls as pjsua2 objects, and their conference ports, kept until pjsua2 may let them go.

SIP thread only. pjsua gives a call's id to the next call as soon as the call is gone, and pjsua2's Call destructor
detaches and hangs up whatever call holds its id at that moment: releasing the ended call a new one replaces would
hang up the new one, and inside onIncomingCall that aborts the process (pjsua2 then frees the INVITE's rdata a second
time). So ended calls are retired, and released only once no live call holds their id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.sip.port import BridgePort

if TYPE_CHECKING:
    from agent.sip.sip_call import SipCall


class CallTable:
    """The live calls by pjsua2 id, the retired ones, and the pool of conference ports."""

    def __init__(self) -> None:
        self._live: dict[int, SipCall] = {}
        self._retired: list[SipCall] = []
        self._ports: list[BridgePort] = []
        self._spare_ports: list[BridgePort] = []

    def __len__(self) -> int:
        return len(self._live)

    def add(self, call_id: int, call: SipCall) -> None:
        """`call` now holds pjsua's id `call_id`; an ended call that held it is retired."""
        ended = self._live.get(call_id)
        if ended is not None:
            self._retired.append(ended)
        self._live[call_id] = call

    def find(self, call_id: int, sip_call_id: str) -> SipCall | None:
        """The live call with this pjsua2 id and Call-ID. pjsua2 reuses ids once a call is gone, so a session that
        outlives its call must not reach the next call on its id."""
        call = self._live.get(call_id)
        return call if call is not None and call.sip_call_id == sip_call_id else None

    def drop(self, call_id: int, call: SipCall) -> None:
        """A disconnected call is retired, unless a newer call took its id already (that retired it)."""
        if self._live.get(call_id) is call:
            self._retired.append(self._live.pop(call_id))

    def release_retired(self) -> None:
        """Release the retired calls whose id no live call holds (outside pjsua2's callbacks)."""
        if self._retired:
            self._retired = [call for call in self._retired if call.isActive()]

    def live(self) -> list[SipCall]:
        return list(self._live.values())

    def clear(self) -> None:
        self._live.clear()
        self._retired.clear()

    def acquire_port(self) -> BridgePort:
        """A conference port for a call: a spare one, or a new one."""
        if self._spare_ports:
            return self._spare_ports.pop()
        port = BridgePort(f"line{len(self._ports)}")
        self._ports.append(port)
        return port

    def release_port(self, port: BridgePort) -> None:
        self._spare_ports.append(port)

    def clear_ports(self) -> None:
        """Only once the conference clock is stopped (see BridgePort)."""
        self._spare_ports.clear()
        self._ports.clear()
