"""A held line sends no RTP: a hold longer than the dead-call limit keeps the call, the maximum length still ends
it. The peer is a raw SIP dialog that never sends RTP, so only the hold stands between it and the dead-call limit.
(A re-offer with every audio line at port 0 is not a hold pjsua takes: it answers 488 and, as RFC 3261 keeps a
session unchanged by a failed re-INVITE, the media goes on as before.)"""

import time

from tests.call.raw_sip import RawDialog, offer
from tests.peers import AgentProcess

HELD = {
    "a=inactive": offer(audio="m=audio {port} RTP/AVP 0\r\na=inactive"),
    "a=sendonly": offer(audio="m=audio {port} RTP/AVP 0\r\na=sendonly"),
    "c=0.0.0.0": offer(connection="0.0.0.0"),  # RFC 2543's hold, still sent by old PBXs
}


def test_a_hold_longer_than_the_dead_call_limit_keeps_the_call_until_its_maximum_length(tmp_path, settings):
    """Three calls at once, each held its own way."""
    agent = AgentProcess(tmp_path, settings, dead_call_s=5, max_call_s=20, inactivity_s=60, max_calls=len(HELD))
    dialogs = {}
    try:
        for hold in HELD:
            dialogs[hold] = RawDialog(agent.sip_port)
            assert dialogs[hold].invite(offer()) == "SIP/2.0 200 OK", hold
        started = time.monotonic()
        for hold, dialog in dialogs.items():
            assert dialog.request("INVITE", HELD[hold]) == "SIP/2.0 200 OK", hold
            dialog.request("ACK")
        assert len(agent.wait_for("call.hold", len(HELD))) == len(HELD)
        # Over two dead-call limits with no RTP at all: the agent must not hang up (its requests would wait
        # in each dialog's socket).
        time.sleep(max(0.0, started + 12 - time.monotonic()))
        assert {hold: dialog.requests_from_agent(wait=0.1) for hold, dialog in dialogs.items()} == \
            {hold: [] for hold in HELD}
        for hold, dialog in dialogs.items():
            seen = dialog.requests_from_agent(wait=max(0.1, started + 24 - time.monotonic()))
            assert any(line.startswith("BYE ") for line in seen), hold
        ended = agent.wait_for("call.ended", len(HELD))
        assert [e["outcome"] for e in ended] == ["maximum call length"] * len(HELD)
    finally:
        for dialog in dialogs.values():
            dialog.close()
        agent.stop()
