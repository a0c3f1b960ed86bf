"""Free loopback ports for the agents and callers an eval or a test starts.

Blocks are taken below the kernel's ephemeral range where they can be: a port in that range is also any
outgoing connection's local port, which may take it between the probe here and the agent's bind (a soak's
HTTP port once was). They are never taken from the test workers' slots (TEST_SLOTS), which the suite hands out
without probing: a clean clone's test agent once found its SIP port (15100, a slot) taken.

A probe alone cannot keep a block: an agent binds it only once its models are loaded, seconds later, and an eval
started beside it (two test workers, each running one) probed the same block as free in between (CI: "SIP TCP
listener: Address already in use"). So a block is also leased: an exclusive lock on a file per hundred ports it
touches, held for LEASE_S or until this process ends, which every process on the machine honours.
"""

from __future__ import annotations

import fcntl
import os
import random
import socket
import tempfile
import threading
from pathlib import Path

LEASE_S = 300.0
"""How long a block stays leased after it is handed out: far longer than an agent takes to load and bind."""

_LEASES = Path(tempfile.gettempdir()) / "agent-port-leases"
_held: dict[int, list[int]] = {}
_held_lock = threading.Lock()

PORT_FLOOR = 10000
"""The lowest port a block starts at (below it sit the well-known and registered services)."""


TEST_SLOTS = ((15000, 16600), (20000, 59100))
"""The SIP and RTP port ranges of tests/peers.next_ports: each test worker's share is fixed, not probed."""


def free_port_block(size: int) -> int:
    """A port p such that p..p+size-1 look free on loopback (UDP and TCP), below the ephemeral range and
    outside TEST_SLOTS, leased to this process so that no other call here or elsewhere hands it out meanwhile."""
    top = ephemeral_ports()[0] - size
    bases = [base for base in range(PORT_FLOOR, top, 100)
             if not any(base < end and base + size > start for start, end in TEST_SLOTS)]
    for _ in range(200):
        base = random.choice(bases) if bases else _kernel_port() // 100 * 100
        if base + size < 65000 and _lease(base, size):
            if port_block_is_free(base, size):
                return base
            release_port_block(base)
    raise RuntimeError("no free port block on loopback")


def release_port_block(base: int) -> None:
    """End a block's lease early (it ends by itself after LEASE_S, or when this process exits)."""
    with _held_lock:
        descriptors = _held.pop(base, [])
    for descriptor in descriptors:
        os.close(descriptor)  # closing the file drops its lock


def _expire(base: int, descriptors: list[int]) -> None:
    """The lease's own end, unless it was released already and the block leased again since."""
    with _held_lock:
        if _held.get(base) is not descriptors:
            return
        del _held[base]
    for descriptor in descriptors:
        os.close(descriptor)


def _lease(base: int, size: int) -> bool:
    """Lock every hundred-port cell the block touches, or none: False if another block holds one of them."""
    _LEASES.mkdir(exist_ok=True)
    descriptors = []
    for cell in range(base // 100, (base + size - 1) // 100 + 1):
        descriptor = os.open(_LEASES / str(cell), os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)  # per open file: this process's own blocks too
        except OSError:
            os.close(descriptor)
            for held in descriptors:
                os.close(held)
            return False
        descriptors.append(descriptor)
    with _held_lock:
        _held[base] = descriptors
    timer = threading.Timer(LEASE_S, _expire, (base, descriptors))
    timer.daemon = True
    timer.start()
    return True


def ephemeral_ports() -> tuple[int, int]:
    """The range the kernel takes outgoing connections' local ports from."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def _kernel_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def port_block_is_free(base: int, size: int) -> bool:
    """Every port of the block, odd ones too (the agent's HTTP port is its SIP port + 1, RTCP is RTP + 1)."""
    return all(_free(p) for p in range(base, base + size))


def _free(port: int) -> bool:
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(socket.AF_INET, kind) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                return False
    return True
