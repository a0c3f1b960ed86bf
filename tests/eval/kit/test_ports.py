"""Port blocks for agents and callers: every port of a block is free, and blocks sit below the ephemeral range."""

import socket

from eval.kit.ports import TEST_SLOTS, ephemeral_ports, free_port_block, port_block_is_free


def test_a_block_with_only_its_odd_port_taken_is_not_free():
    base = free_port_block(4)
    with socket.socket() as taken:  # as the agent's HTTP port, its SIP port + 1
        taken.bind(("127.0.0.1", base + 1))
        assert not port_block_is_free(base, 4)
    assert port_block_is_free(base, 4)


def test_blocks_sit_below_the_ports_outgoing_connections_are_given():
    low, _ = ephemeral_ports()
    assert all(free_port_block(110) + 110 <= low for _ in range(20))


def test_blocks_leave_the_test_workers_slots_alone():
    for _ in range(50):
        base = free_port_block(110)
        assert all(base + 110 <= start or base >= end for start, end in TEST_SLOTS), base
