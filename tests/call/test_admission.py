"""Per-source limits and the flood brake on exact timelines; the kernel filter on real sockets."""

import ipaddress
import socket
import time

import pytest

from agent.sip.admission import (
    Admission,
    AdmissionConfig,
    FilterState,
    flood_limits,
    parse_networks,
    request_cost,
    rtp_ports_needed,
)
from agent.sip.firewall import SipFirewall, compile_filter, filtered
from agent.sip.screening import Refusal

CONFIG = AdmissionConfig(trusted=parse_networks("10.0.0.5, 192.168.7.0/24"), calls_per_source=2, invite_rate=2.0,
                         invite_burst=3, block_s=60, flood_rate=20, flood_burst=10, flood_s=10)


def invite(admission: Admission, source: str, now: float, cost: float = 1.0) -> Refusal | None:
    """What the SIP thread does: charge the request on first sight, then decide the call it became."""
    admission.charge(source, now, cost)
    return admission.check(source, now)


def test_a_source_within_its_rate_is_admitted_and_one_beyond_it_is_blocked_for_a_while():
    admission = Admission(CONFIG)
    assert [invite(admission, "198.51.100.7", 0.0) for _ in range(3)] == [None] * 3  # the burst
    assert invite(admission, "198.51.100.7", 0.01) == Refusal(503, "rate")
    assert admission.filter_state(1.0).blocked == {"198.51.100.7"}
    assert admission.filter_state(60.02).blocked == frozenset()  # the block expires
    assert invite(admission, "198.51.100.7", 61.0) is None  # and the bucket has refilled meanwhile


def test_the_sustained_rate_refills_the_bucket():
    admission = Admission(CONFIG)
    times = [i * 0.5 for i in range(20)]  # exactly 2 per second, forever
    assert all(invite(admission, "198.51.100.7", t) is None for t in times)


def test_one_address_holds_at_most_its_share_of_lines():
    admission = Admission(CONFIG)
    for t in (0.0, 1.0):
        assert invite(admission, "198.51.100.7", t) is None
        admission.started("198.51.100.7")
    assert invite(admission, "198.51.100.7", 2.0) == Refusal(486, "calls per source")
    assert invite(admission, "203.0.113.9", 2.0) is None  # another caller still gets a line
    admission.ended("198.51.100.7")
    assert invite(admission, "198.51.100.7", 3.0) is None


def test_what_a_request_costs_pjsua():
    many = "INVITE sip:a@b SIP/2.0\r\n\r\nv=0\r\n" + "m=audio 40000 RTP/AVP 0\r\n" * 20 + "m=audio 0 RTP/AVP 0\r\n"
    assert request_cost("INVITE", False, many) == 16  # pjsua opens at most 16 media
    assert request_cost("INVITE", False, "INVITE sip:a@b SIP/2.0\r\n\r\n") == 1
    assert request_cost("OPTIONS", False, "") == 0.2 and request_cost("BYE", True, "") == 0


def test_an_offer_with_many_audio_lines_cuts_its_source_off_at_once():
    admission = Admission(CONFIG)
    assert invite(admission, "198.51.100.7", 0.0, cost=16) == Refusal(503, "rate")
    assert admission.filter_state(0.0).blocked == {"198.51.100.7"}


def test_a_flood_of_options_is_cut_off_too_but_calls_inside_a_dialog_cost_nothing():
    admission = Admission(CONFIG)
    for n in range(200):
        admission.charge("198.51.100.8", n * 0.001, 0.0)  # ACKs and BYEs of a call
    assert admission.filter_state(1.0).blocked == frozenset()
    for n in range(20):
        admission.charge("198.51.100.9", n * 0.001, 0.2)
    assert admission.filter_state(1.0).blocked == {"198.51.100.9"}


def test_the_rtp_range_in_use_holds_every_call_slot_and_no_more():
    assert rtp_ports_needed(8) == 24  # 12 pjsua slots (8 calls and 4 to refuse with), RTP and RTCP each


def test_trusted_peers_are_never_limited_per_source():
    admission = Admission(CONFIG)
    for n in range(8):
        assert invite(admission, "192.168.7.20", n * 0.01) is None
        admission.started("192.168.7.20")
    assert admission.filter_state(1.0) == FilterState(frozenset(), None)


def test_a_flood_from_many_sources_lets_only_trusted_peers_and_callers_on_a_call_through():
    admission = Admission(CONFIG)
    admission.started("203.0.113.9")  # a caller already on a call
    verdicts = [invite(admission, f"198.51.100.{n}", n * 0.001) for n in range(30)]
    assert verdicts[:10] == [None] * 10 and set(verdicts[11:]) == {Refusal(503, "flood")}
    only = admission.filter_state(0.1).only
    assert only is not None and set(map(str, only)) == {"10.0.0.5/32", "192.168.7.0/24", "203.0.113.9/32"}
    assert invite(admission, "10.0.0.5", 0.1) is None and invite(admission, "203.0.113.9", 0.1) is None
    assert admission.filter_state(10.2).only is None  # the brake is released


@pytest.mark.parametrize(("sockets", "calls"), [(64, 4), (64, 16), (1024, 64)])
def test_flood_limits_leave_room_in_the_ioqueue(sockets, calls):
    for max_calls in range(1, calls + 1):
        rate, burst = flood_limits(max_calls, sockets)
        in_use = 2 * (max_calls + 4)
        assert in_use + 2 * burst + 2 * rate * 0.5 <= sockets  # a burst and half a second of refusals still fit


def test_bad_trusted_peer_entries_are_named():
    with pytest.raises(ValueError, match="'pbx.example.com'"):
        parse_networks("10.0.0.5, pbx.example.com")


def run_filter(program, source: str) -> bool:
    """Interpret the compiled BPF program for an IPv4 source: True when the packet is kept."""
    a, pc = 0, 0
    src = int(ipaddress.ip_address(source))
    while True:
        code, jt, jf, k = program[pc]
        if code == 0x20:
            a = src
        elif code == 0x54:
            a &= k
        elif code == 0x15:
            pc += jt if a == k else jf
        elif code == 0x06:
            return k != 0
        pc += 1


@pytest.mark.parametrize("state", [FilterState(frozenset({"198.51.100.7", "198.51.100.9"}), None),
                                   FilterState(frozenset({"198.51.100.7"}), parse_networks("10.0.0.0/8,203.0.113.9")),
                                   FilterState(frozenset(), ()),
                                   FilterState(frozenset(f"198.51.100.{n}" for n in range(80)), None)])
def test_the_compiled_filter_drops_exactly_what_the_state_says(state):
    program = compile_filter(state)
    for source in ["198.51.100.7", "198.51.100.9", "198.51.100.79", "10.1.2.3", "203.0.113.9", "203.0.113.10"]:
        assert run_filter(program, source) is not filtered(state, source), source


def test_the_kernel_filter_drops_a_blocked_source_and_purges_what_it_had_queued():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as server:
        server.bind(("127.0.0.1", 0))
        port = server.getsockname()[1]
        firewall = SipFirewall("127.0.0.1", port)
        firewall.attach()
        assert firewall.available
        flooder, caller = socket.socket(socket.AF_INET, socket.SOCK_DGRAM), socket.socket(socket.AF_INET,
                                                                                           socket.SOCK_DGRAM)
        flooder.bind(("127.0.0.5", 0))
        caller.bind(("127.0.0.1", 0))
        for n in range(3):
            flooder.sendto(b"queued %d" % n, ("127.0.0.1", port))
        time.sleep(0.05)
        assert firewall.apply(FilterState(frozenset({"127.0.0.5"}), None)) == 3
        flooder.sendto(b"after", ("127.0.0.1", port))
        caller.sendto(b"welcome", ("127.0.0.1", port))
        server.settimeout(1)
        assert server.recvfrom(100)[0] == b"welcome"
        server.setblocking(False)
        with pytest.raises(BlockingIOError):
            server.recvfrom(100)
        flooder.close()
        caller.close()


def test_pjsips_received_request_log_entry_is_read_before_pjsua_acts():
    from agent.sip.pjlog import parse_request

    entry = ("          pjsua_core.c RX 219 bytes Request msg INVITE/cseq=1 (rdata0x55cc6b952868) from UDP "
             "198.51.100.7:5062:\nINVITE sip:a@192.0.2.1 SIP/2.0\r\nTo: <sip:a@192.0.2.1>\r\nCall-ID: c\r\n\r\nv=0\r\n")
    request = parse_request(entry)
    assert request is not None and (request.method, request.source, request.in_dialog) == ("INVITE", "198.51.100.7",
                                                                                           False)
    assert request.message.startswith("INVITE sip:a@192.0.2.1")
    in_dialog = parse_request(entry.replace("To: <sip:a@192.0.2.1>", "t: <sip:a@192.0.2.1>;tag=9"))
    assert in_dialog is not None and in_dialog.in_dialog
    assert parse_request("pjsua_core.c TX 500 bytes Response msg 200/INVITE/cseq=1 (tdta0x1) to UDP 1.2.3.4:5:\n") \
        is None
