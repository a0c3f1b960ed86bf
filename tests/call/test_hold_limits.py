"""A held line sends no RTP: a hold longer than the dead-call limit keeps the call, the maximum length still ends
it. The peer is a raw SIP dialog that never sends RTP, so only the hold stands between it and the dead-call limit.
(A re-offer with every audio line at port 0 is not a hold pjsua takes: it answers 488 and, as RFC 3261 keeps a
session unchanged by a failed re-INVITE, the media goes on as before.)"""

import time

import pytest

from tests.call.raw_sip import RawDialog, offer
from tests.peers import AgentProcess

HELD = {
    "a=inactive": offer(audio="m=audio {port} RTP/AVP 0\r\na=inactive"),
    "a=sendonly": offer(audio="m=audio {port} RTP/AVP 0\r\na=sendonly"),
    "c=0.0.0.0": offer(connection="0.0.0.0"),  # RFC 2543's hold, still sent by old PBXs
}


@pytest.mark.parametrize("hold", HELD)
def test_a_hold_longer_than_the_dead_call_limit_keeps_the_call_until_its_maximum_length(tmp_path, settings, hold):
    agent = AgentProcess(tmp_path, settings, dead_call_s=5, max_call_s=20, inactivity_s=60)
    try:
        dialog = RawDialog(agent.sip_port)
        assert dialog.invite(offer()) == "SIP/2.0 200 OK"
        started = time.monotonic()
        assert dialog.request("INVITE", HELD[hold]) == "SIP/2.0 200 OK"
        dialog.request("ACK")
        agent.wait_for("call.hold")
        # Over two dead-call limits with no RTP at all: the agent must not hang up.
        assert dialog.requests_from_agent(wait=12) == []
        seen = dialog.requests_from_agent(wait=12)
        assert any(line.startswith("BYE ") for line in seen)
        assert time.monotonic() - started < 24
        (ended,) = agent.wait_for("call.ended")
        assert ended["outcome"] == "maximum call length"
        dialog.close()
    finally:
        agent.stop()
