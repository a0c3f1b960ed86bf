"""SIP behaviour against real peers on loopback: OPTIONS, codecs, foreign domains, RFC 4475 torture."""

import shutil
import socket
import subprocess
import time
import uuid

import pytest

from tests.call.raw_sip import TcpLine, offer
from tests.conftest import SHARED
from tests.peers import next_ports

TORTURE = SHARED / "sip-torture" / "rfc4475"


def options(port: int, transport: str = "udp") -> str:
    """Send an OPTIONS probe and return the status line of the answer ('' when none came)."""
    call_id = uuid.uuid4().hex
    local, _ = next_ports()
    message = (f"OPTIONS sip:agent@127.0.0.1:{port} SIP/2.0\r\n"
               f"Via: SIP/2.0/{transport.upper()} 127.0.0.1:{local};branch=z9hG4bK{call_id[:12]}\r\n"
               f"Max-Forwards: 70\r\nFrom: <sip:probe@127.0.0.1:{local}>;tag={call_id[:8]}\r\n"
               f"To: <sip:agent@127.0.0.1:{port}>\r\nCall-ID: {call_id}\r\nCSeq: 1 OPTIONS\r\n"
               f"Content-Length: 0\r\n\r\n").encode()
    return exchange(port, message, transport, local).split("\r\n", 1)[0]


def exchange(port: int, message: bytes, transport: str, local: int = 0, wait: float = 3.0) -> str:
    kind = socket.SOCK_DGRAM if transport == "udp" else socket.SOCK_STREAM
    with socket.socket(socket.AF_INET, kind) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", local))
        sock.settimeout(wait)
        if transport == "udp":
            sock.sendto(message, ("127.0.0.1", port))
        else:
            sock.connect(("127.0.0.1", port))
            sock.sendall(message)
        try:
            while True:  # skip provisional responses
                reply = sock.recv(65535).decode(errors="replace")
                if not reply.startswith("SIP/2.0 1"):
                    return reply
        except (TimeoutError, ConnectionError):
            return ""


@pytest.mark.parametrize("transport", ["udp", "tcp"])
def test_options_is_answered_200(agent, transport):
    assert options(agent.sip_port, transport) == "SIP/2.0 200 OK"


def test_an_invite_with_only_unsupported_codecs_gets_488(agent, tmp_path):
    if shutil.which("sipp") is None:
        pytest.skip("SIPp is needed (Debian package sip-tester; `make test` installs it)")
    port, rtp = next_ports()
    result = subprocess.run(
        ["sipp", "-sf", str(__import__("pathlib").Path(__file__).parent / "sipp" / "uac_unsupported_codec.xml"),
         "-i", "127.0.0.1", "-mi", "127.0.0.1", "-ci", "127.0.0.1", "-cp", str(port + 2), "-p", str(port),
         "-mp", str(rtp), "-s", "agent", "-m", "1", "-nostdin", "-timeout", "20", "-trace_err",
         f"127.0.0.1:{agent.sip_port}"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]


def test_an_invite_for_another_domain_is_refused_without_a_call(agent):
    before = len(agent.events("call.started"))
    call_id = uuid.uuid4().hex
    local, media = next_ports()
    sdp = (f"v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
           f"m=audio {media} RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n")
    invite = (f"INVITE sip:someone@elsewhere.example SIP/2.0\r\n"
              f"Via: SIP/2.0/UDP 127.0.0.1:{local};branch=z9hG4bK{call_id[:12]}\r\nMax-Forwards: 70\r\n"
              f"From: <sip:probe@127.0.0.1:{local}>;tag=1\r\nTo: <sip:someone@elsewhere.example>\r\n"
              f"Call-ID: {call_id}\r\nCSeq: 1 INVITE\r\nContact: <sip:probe@127.0.0.1:{local}>\r\n"
              f"Content-Type: application/sdp\r\nContent-Length: {len(sdp)}\r\n\r\n{sdp}").encode()
    assert exchange(agent.sip_port, invite, "udp", local).startswith("SIP/2.0 404")
    assert len(agent.events("call.started")) == before


@pytest.mark.skipif(not TORTURE.is_dir(), reason="../shared/sip-torture is not present beside the project")
@pytest.mark.parametrize("transport", ["udp", "tcp"])
def test_rfc4475_torture_messages_leave_the_agent_answering_and_create_no_call(agent, transport):
    before = len(agent.events("call.started"))
    for path in sorted(TORTURE.glob("*.dat")):
        exchange(agent.sip_port, path.read_bytes(), transport, wait=0.3)
        assert options(agent.sip_port, transport) == "SIP/2.0 200 OK", f"no answer after {path.name}"
    assert agent.process.poll() is None
    time.sleep(1)
    assert len(agent.events("call.started")) == before


def test_a_reused_pjsua_call_id_does_not_reach_the_newer_call():
    """pjsua2 recycles call ids: a session that outlives its call must not hang up the next one."""
    from types import SimpleNamespace

    from agent.sip.endpoint import SipEndpoint
    from agent.sip.setup import SipConfig

    endpoint = SipEndpoint(SipConfig("127.0.0.1", 5060, 40000, 40100, 2), lambda leg: None)
    newer = SimpleNamespace(sip_call_id="second@host")
    endpoint.calls.add(3, newer)  # the id the first call had
    assert endpoint.calls.find(3, "first@host") is None and endpoint.calls.find(3, "second@host") is newer
    endpoint.forget(3, SimpleNamespace(sip_call_id="first@host", source=""))  # the first call's late cleanup
    endpoint._drain()
    assert endpoint.calls.find(3, "second@host") is newer


def test_a_call_that_takes_the_id_of_one_hung_up_in_the_same_instant_stays_the_agents(agent):
    """pjsua hands an ended call's id to the next INVITE at once; when the BYE and the INVITE arrive together
    the ended call's pjsua2 object must not be released then (its destructor detaches and hangs up whatever
    call holds the id: the new call lost its events, and inside onIncomingCall the process aborted)."""
    caller = TcpLine(agent.sip_port)
    sdp = offer(media_port=next_ports()[1])
    try:
        for refused in range(5):  # the ids pjsua hands out go round: some round gives the second call the first's
            first, second = uuid.uuid4().hex, uuid.uuid4().hex
            caller.send(caller.request("INVITE", first, 1, body=sdp))
            status, to_first = caller.final(first, "INVITE")
            assert status == "200"
            caller.send(caller.request("ACK", first, 1, to_first))
            for _ in range(refused):
                other, branch = uuid.uuid4().hex, "z9hG4bK" + uuid.uuid4().hex[:16]
                elsewhere = "sip:agent@elsewhere.example"
                caller.send(caller.request("INVITE", other, 1, body=sdp, uri=elsewhere, branch=branch))
                status, to_other = caller.final(other, "INVITE")
                assert status == "404"
                caller.send(caller.request("ACK", other, 1, to_other, uri=elsewhere, branch=branch))
            # One segment: pjsip reads both before the agent's SIP loop runs its deferred work again.
            caller.send(caller.request("BYE", first, 2, to_first), caller.request("INVITE", second, 1, body=sdp))
            assert caller.final(first, "BYE")[0] == "200"
            status, to_second = caller.final(second, "INVITE")
            assert status == "200", f"round {refused}: the second call got {status or 'no answer'}"
            caller.send(caller.request("ACK", second, 1, to_second), caller.request("BYE", second, 2, to_second))
            assert caller.final(second, "BYE")[0] == "200"
            deadline = time.monotonic() + 5
            while not any(e.get("call") == second for e in agent.events("call.ended")) and time.monotonic() < deadline:
                time.sleep(0.05)
            ended = [e for e in agent.events("call.ended") if e.get("call") == second]
            assert ended and ended[0]["outcome"] == "caller hung up", f"round {refused}: {ended}"
    finally:
        caller.close()
    assert agent.process.poll() is None


def test_a_calls_record_names_tls_and_srtp_from_its_invite():
    from agent.sip.headers import secured_kind

    secure = ("INVITE sip:100@10.0.0.5 SIP/2.0\r\nVia: SIP/2.0/TLS 10.0.0.1:5061;branch=z9hG4bK1\r\n\r\nv=0\r\n"
              "m=audio 4000 RTP/SAVP 0\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:abc\r\n")
    assert secured_kind(secure, "mandatory") == "sip/tls+srtp" and secured_kind(secure, "off") == "sip/tls"
    plain = "INVITE sip:100@10.0.0.5 SIP/2.0\r\nv: SIP/2.0/udp 10.0.0.1\r\n\r\nm=audio 4000 RTP/AVP 0\r\n"
    assert secured_kind(plain, "optional") == "sip"


@pytest.mark.parametrize("headers, takes", [
    ("Allow: INVITE, ACK, BYE, REFER\r\nSupported: replaces, timer", True),
    ("Allow: INVITE, REFER\r\nk: 100rel,Replaces", True),
    ("Allow: INVITE, ACK, BYE\r\nSupported: replaces", False),   # no REFER: it cannot be asked
    ("Allow: INVITE, REFER\r\nSupported: timer", False),         # REFER, but it cannot replace a call
    ("", False)])
def test_a_phone_is_handed_over_with_replaces_only_when_its_invite_says_it_can(headers, takes):
    from agent.sip.headers import takes_replaces

    assert takes_replaces(f"INVITE sip:100@10.0.0.5 SIP/2.0\r\n{headers}\r\n\r\nv=0\r\n") is takes
