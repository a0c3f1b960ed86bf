"""Who may place calls: per-source INVITE rates and call counts, and the emergency brake for floods.

Why the rates are bounded here and not only by max_calls: pjsua opens an RTP and
an RTCP socket for every INVITE that carries an offer, before the application
hears of the INVITE, and pjlib's I/O queue has room for a fixed number of sockets
(PJ_IOQUEUE_MAX_HANDLES: 64 in PyPI's wheel, 1024 in the agent's own build, see
sip/build_info); a closed socket's slot comes back only 500 ms later, and when none is free pjlib
asserts and the whole process aborts. So the INVITEs that reach pjsua per
second must stay below what the free slots allow (see `flood_limits`), and a
source that floods is cut off in the kernel (see firewall) rather than
answered, which would cost the same slots again.

Pure: the SIP thread feeds it sources and times, and applies the filter state
it returns. Trusted peers (the PBX or proxy in front) are never limited per
source: every call of a business line comes from them.
"""

from __future__ import annotations

import ipaddress
from collections import OrderedDict
from dataclasses import dataclass

from agent.sip.screening import Refusal

CLOSED_SOCKET_HELD_S = 0.6  # pjlib keeps a closed socket's slot 500 ms (PJ_IOQUEUE_KEY_FREE_DELAY), plus margin
SOCKET_MARGIN = 4
# Call slots counted beyond max_calls for INVITEs being refused. pjsua's PJSUA_MAX_CALLS caps calls and
# refusals together, so this over-counts when max_calls is that limit: kept as margin in the socket sums.
PJSUA_SPARE_SLOTS = 4
MAX_TRACKED = 4096  # sources remembered; the least recently seen is forgotten first
MAX_BLOCKED = 80  # addresses one kernel filter holds (a BPF jump reaches 255 instructions)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def rtp_ports_needed(max_calls: int) -> int:
    """RTP ports the agent binds at most: an RTP and an RTCP port per pjsua call slot. pjsua opens a
    transport for every audio line of an offer (up to 16) before anyone can refuse it; a range this small
    makes an offer with many lines fail to bind instead of taking 32 ioqueue sockets."""
    return 2 * (max_calls + PJSUA_SPARE_SLOTS)


def request_cost(method: str, in_dialog: bool, message: str) -> float:
    """What a request will cost pjsua, in RTP transports: an INVITE opens one per audio line of its offer
    (at least one, at most 16); other requests outside a dialog cost a fifth, so that a flood of them is
    cut off too; requests inside a dialog (ACK, BYE) cost nothing."""
    if method == "INVITE":
        audio = sum(1 for line in message.splitlines() if line.startswith("m=audio ")
                    and not line.startswith("m=audio 0 "))
        return float(max(1, min(16, audio)))
    return 0.0 if in_dialog else 0.2


class SocketBudget:
    """The last line of defence, for every source (trusted ones too): how long the SIP thread must wait
    before pjsua may open more RTP transports.

    Bound RTP sockets never exceed the RTP range in use (rtp_ports_needed); closed ones hold their ioqueue
    slot for CLOSED_SOCKET_HELD_S. So if the transports opened within that window stay under `limit`, the
    ioqueue holds ports + 2 * limit + margin = `ioqueue_sockets` at most. An INVITE that would go beyond
    waits (the SIP thread sleeps, pjsua sees nothing meanwhile) until older openings have aged out."""

    def __init__(self, max_calls: int, ioqueue_sockets: int) -> None:
        self.ports = rtp_ports_needed(max_calls)
        self.limit = (ioqueue_sockets - self.ports - SOCKET_MARGIN) // 2
        self._opened: list[tuple[float, float]] = []  # (when, transports)

    def wait_for(self, now: float, cost: float) -> float:
        """Seconds to wait before an INVITE costing `cost` transports may reach pjsua."""
        self._opened = [(t, c) for t, c in self._opened if t > now - CLOSED_SOCKET_HELD_S]
        cost = min(cost, self.ports / 2)  # pjsua cannot bind more than the range holds
        waiting, total = 0.0, sum(c for _, c in self._opened)
        for when, transports in self._opened:  # oldest first: wait until enough of them have aged out
            if total + cost <= self.limit:
                break
            waiting, total = when + CLOSED_SOCKET_HELD_S - now, total - transports
        return max(0.0, waiting)

    def opened(self, now: float, cost: float) -> None:
        self._opened.append((now, min(cost, self.ports / 2)))


def flood_limits(max_calls: int, ioqueue_sockets: int) -> tuple[float, int]:
    """(INVITEs per second, burst) that every source together may send without exhausting the ioqueue's
    `ioqueue_sockets`: calls in progress hold two sockets each, every refused INVITE two more for half a
    second; half the remaining room is used, the other half is margin."""
    free = ioqueue_sockets - 2 * (max_calls + PJSUA_SPARE_SLOTS)
    return free / 2, max(2, free // 4)


@dataclass(frozen=True)
class AdmissionConfig:
    trusted: tuple[Network, ...] = ()
    """Peers exempt from per-source limits (the PBX or proxy in front of the agent)."""
    calls_per_source: int = 2
    """Concurrent calls one untrusted address may hold."""
    invite_rate: float = 2.0
    """INVITEs per second one untrusted address may send, sustained."""
    invite_burst: int = 5
    """INVITEs one untrusted address may send at once."""
    block_s: float = 60.0
    """How long an address that exceeds its rate is cut off in the kernel."""
    flood_rate: float = 20.0
    """INVITEs per second from all sources together; beyond it only trusted peers and callers already on a
    call get through, for `flood_s`."""
    flood_burst: int = 10
    flood_s: float = 10.0


@dataclass(frozen=True)
class FilterState:
    """What the kernel filter lets through."""

    blocked: frozenset[str]
    """Addresses dropped."""
    only: tuple[Network, ...] | None
    """During a flood: the only networks let through (trusted peers, callers on a call); None otherwise."""


class _Bucket:
    """A token bucket: `rate` tokens a second, at most `burst`."""

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.rate, self.burst, self.tokens, self.at = rate, burst, float(burst), now

    def take(self, now: float, cost: float = 1.0) -> bool:
        """Take `cost` tokens; False when there were not enough (what was there is spent: the request has
        already cost what it cost)."""
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        self.tokens -= cost
        if self.tokens >= 0:
            return True
        self.tokens = max(self.tokens, -self.burst)  # debt, so a source that keeps going stays over
        return False


class Admission:
    """Decides each INVITE; tracks calls per source; says what the kernel filter should drop."""

    def __init__(self, config: AdmissionConfig) -> None:
        self.config = config
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self._flood: _Bucket | None = None
        self._calls: dict[str, int] = {}
        self._blocked: dict[str, float] = {}  # address -> until
        self._flood_until = 0.0

    def trusted(self, source: str) -> bool:
        address = _address(source)
        return address is not None and any(address in network for network in self.config.trusted)

    def charge(self, source: str, now: float, cost: float) -> None:
        """A request from `source` (an IP address) arrived, before pjsua acts on it; `cost` is what it will
        cost pjsua (see request_cost). A source over its rate is blocked; every source together over the
        flood rate starts the flood brake. Apply `filter_state` afterwards."""
        c = self.config
        if cost >= 1:  # only INVITEs open RTP sockets
            if self._flood is None:
                self._flood = _Bucket(c.flood_rate, c.flood_burst, now)
            if not self._flood.take(now, cost) and now >= self._flood_until:
                self._flood_until = now + c.flood_s
        if self.trusted(source) or cost == 0:
            return
        bucket = self._buckets.pop(source, None) or _Bucket(c.invite_rate, c.invite_burst, now)
        self._buckets[source] = bucket  # most recently seen last
        while len(self._buckets) > MAX_TRACKED:
            self._buckets.popitem(last=False)
        if not bucket.take(now, cost):
            self._block(source, now)

    def check(self, source: str, now: float) -> Refusal | None:
        """An INVITE from `source` (already charged) became a call: None to answer it, else why not."""
        if self.trusted(source):
            return None
        if source in self._blocked and now < self._blocked[source]:
            return Refusal(503, "rate")
        if now < self._flood_until and not self._calls.get(source):
            return Refusal(503, "flood")
        if self._calls.get(source, 0) >= self.config.calls_per_source:
            return Refusal(486, "calls per source")
        return None

    def started(self, source: str) -> None:
        self._calls[source] = self._calls.get(source, 0) + 1

    def ended(self, source: str) -> None:
        left = self._calls.get(source, 0) - 1
        if left > 0:
            self._calls[source] = left
        else:
            self._calls.pop(source, None)

    def filter_state(self, now: float) -> FilterState:
        for address in [a for a, until in self._blocked.items() if until <= now]:
            del self._blocked[address]
        only = None
        if now < self._flood_until:
            callers = (ipaddress.ip_network(a) for a in self._calls)
            only = tuple(dict.fromkeys([*self.config.trusted, *callers]))
        return FilterState(frozenset(self._blocked), only)

    def _block(self, source: str, now: float) -> None:
        if len(self._blocked) >= MAX_BLOCKED:
            del self._blocked[min(self._blocked, key=self._blocked.__getitem__)]
        self._blocked[source] = now + self.config.block_s


def parse_networks(text: str) -> tuple[Network, ...]:
    """'10.0.0.5, 192.168.1.0/24' -> networks; raises ValueError naming the bad entry."""
    networks = []
    for entry in (e.strip() for e in text.split(",")):
        if entry:
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                raise ValueError(f"{entry!r} is not an address or network") from None
    return tuple(networks)


def _address(source: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(source)
    except ValueError:
        return None
