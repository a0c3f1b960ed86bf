"""Free loopback ports for the agents and callers an eval or a test starts.

Blocks are taken below the kernel's ephemeral range where they can be: a port in that range is also any
outgoing connection's local port, which may take it between the probe here and the agent's bind (a soak's
HTTP port once was). They are never taken from the test workers' slots (TEST_SLOTS), which the suite hands out
without probing: a clean clone's test agent once found its SIP port (15100, a slot) taken.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

PORT_FLOOR = 10000
"""The lowest port a block starts at (below it sit the well-known and registered services)."""


TEST_SLOTS = ((15000, 16600), (20000, 59100))
"""The SIP and RTP port ranges of tests/peers.next_ports: each test worker's share is fixed, not probed."""


def free_port_block(size: int) -> int:
    """A port p such that p..p+size-1 look free on loopback (UDP and TCP), below the ephemeral range and
    outside TEST_SLOTS."""
    top = ephemeral_ports()[0] - size
    bases = [base for base in range(PORT_FLOOR, top, 100)
             if not any(base < end and base + size > start for start, end in TEST_SLOTS)]
    for _ in range(200):
        base = random.choice(bases) if bases else _kernel_port() // 100 * 100
        if base + size < 65000 and port_block_is_free(base, size):
            return base
    raise RuntimeError("no free port block on loopback")


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
