"""Hostile SIP against a real agent process: what once aborted it is refused, and it keeps answering."""

import re

from tests.call.raw_sip import RawDialog, offer
from tests.call.test_sip import options

KILLER = "%n" * 245  # the 489-character connection "address" that aborted the agent in pjlib


def still_the_same_agent(agent, pid: int) -> bool:
    return agent.process.poll() is None and agent.process.pid == pid and options(agent.sip_port) == "SIP/2.0 200 OK"


def test_the_invite_that_aborted_the_agent_gets_488_and_the_agent_keeps_answering(agent):
    pid, started = agent.process.pid, len(agent.events("call.started"))
    for _ in range(2):  # the second one also aborted the restarted agent
        dialog = RawDialog(agent.sip_port)
        assert dialog.invite(offer(connection=KILLER)) == "SIP/2.0 488 Not Acceptable Here"
        dialog.close()
    assert still_the_same_agent(agent, pid)
    assert len(agent.events("call.started")) == started
    assert [e["reason"] for e in agent.events("call.rejected")][-2:] == ["bad connection address"] * 2


def test_an_invite_without_an_offer_gets_488(agent):
    pid = agent.process.pid
    dialog = RawDialog(agent.sip_port)
    assert dialog.invite("") == "SIP/2.0 488 Not Acceptable Here"
    dialog.close()
    assert still_the_same_agent(agent, pid)


def test_a_reinvite_or_update_with_a_bad_offer_gets_488_and_the_call_goes_on(agent):
    pid = agent.process.pid
    dialog = RawDialog(agent.sip_port)
    assert dialog.invite(offer()) == "SIP/2.0 200 OK"
    assert dialog.request("INVITE", offer(connection=KILLER)) == "SIP/2.0 488 Not Acceptable Here"
    dialog.request("ACK")
    assert dialog.request("UPDATE", offer(connection=KILLER)) == "SIP/2.0 488 Not Acceptable Here"
    assert dialog.request("INVITE", offer(media_port=30002)) == "SIP/2.0 200 OK"  # a good one still works
    dialog.request("ACK")
    assert dialog.request("BYE") == "SIP/2.0 200 OK"
    dialog.close()
    assert still_the_same_agent(agent, pid)


def test_a_reinvite_without_an_offer_ends_the_call_instead_of_trusting_the_answer_in_the_ack(agent):
    pid = agent.process.pid
    dialog = RawDialog(agent.sip_port)
    assert dialog.invite(offer()) == "SIP/2.0 200 OK"
    assert dialog.request("INVITE", "") == "SIP/2.0 200 OK"
    dialog.request("ACK", offer(connection=KILLER, audio="m=audio 0 RTP/AVP 0"))
    assert any(line.startswith("BYE ") for line in dialog.requests_from_agent())
    dialog.close()
    assert still_the_same_agent(agent, pid)


def test_pjsip_log_lines_stay_one_escaped_event_per_line(agent):
    before = len(agent.events("sip.pjsip"))
    dialog = RawDialog(agent.sip_port)
    dialog.invite(offer(connection="1.2.3.4\x1b[2J") + "a=x:\r\nforged event=call.ended\r\n")
    bad_port = dialog._message("OPTIONS", "").replace(f"127.0.0.1:{dialog.local};", "127.0.0.1:65536;", 1)
    dialog.sock.sendto(bad_port.encode() + b"X-Junk: \x1b[2J\x00" + b"j" * 5000 + b"\r\n\r\n",
                       ("127.0.0.1", agent.sip_port))
    dialog.close()
    options(agent.sip_port)
    assert len(agent.events("sip.pjsip")) > before  # pjsip did log about them, through the structured logger
    lines = agent.log_path.read_text(errors="replace").splitlines()
    after_start = lines[next(i for i, line in enumerate(lines) if "event=sip.listening" in line):]
    # Only the agent's own "where to call it" note, once at start-up, is not an event.
    banner = after_start.index("The agent is ready. Call it:")
    after_start = after_start[:banner - 1] + after_start[after_start.index("", banner) + 1:]
    assert all(line.startswith("ts=") for line in after_start), [x for x in after_start if not x.startswith("ts=")][:3]
    assert not any(re.search(r"[\x00-\x1f\x7f]", line) for line in after_start)
    assert all(len(line) < 2000 for line in after_start)
