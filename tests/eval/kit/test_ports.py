"""Port blocks for agents and callers: every port of a block is free, and blocks sit below the ephemeral range."""

import socket
import subprocess
import sys
from pathlib import Path

from eval.kit.ports import TEST_SLOTS, ephemeral_ports, free_port_block, port_block_is_free, release_port_block

REPO = Path(__file__).resolve().parents[3]


def test_a_block_with_only_its_odd_port_taken_is_not_free():
    base = free_port_block(4)
    with socket.socket() as taken:  # as the agent's HTTP port, its SIP port + 1
        taken.bind(("127.0.0.1", base + 1))
        assert not port_block_is_free(base, 4)
    assert port_block_is_free(base, 4)
    release_port_block(base)


def test_blocks_sit_below_the_ports_outgoing_connections_are_given():
    low, _ = ephemeral_ports()
    for _ in range(20):
        base = free_port_block(110)
        release_port_block(base)
        assert base + 110 <= low


def test_blocks_leave_the_test_workers_slots_alone():
    for _ in range(50):
        base = free_port_block(110)
        release_port_block(base)
        assert all(base + 110 <= start or base >= end for start, end in TEST_SLOTS), base


def test_a_leased_block_is_handed_to_no_other_process_before_anything_binds_it():
    """Between the probe and an agent's bind (its models load first) another eval once took the same block."""
    ours = [free_port_block(110) for _ in range(3)]
    probe = ("from eval.kit.ports import free_port_block\n"
             "print(' '.join(str(free_port_block(110)) for _ in range(20)))")
    theirs = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    for base in ours:
        release_port_block(base)
    taken = {port for base in ours for port in range(base, base + 110)}
    assert not taken & {port for base in map(int, theirs.stdout.split()) for port in range(base, base + 110)}
