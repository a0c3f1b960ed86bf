"""Admission by measured cost against a real agent: once the calls up use the CPU share it may give calls, the
next INVITE gets 503 with Retry-After (a proxy in front tries another agent); when they end, calls are taken
again. AGENT_CPU_TARGET=0.001 makes one talking call enough on any machine (one call always fits, a second never
does), so the test waits for the measurement, not for a machine slow enough."""

import asyncio
import threading
import time

from agent.sip.build_info import installed
from eval.kit.rtp_caller import Script, place_call
from tests.call.raw_sip import RawDialog, offer
from tests.peers import AgentProcess


def spare_calls(agent) -> int:
    return agent.http("GET", "/readyz").json()["spare_calls"]


def test_when_the_measured_cost_fills_the_cpu_target_the_next_invite_gets_503_with_retry_after(
        tmp_path, settings, questions):
    import wave

    import numpy as np

    with wave.open(str(questions["hours"])) as f:
        question = np.frombuffer(f.readframes(f.getnframes()), "<i2").copy()  # 8 kHz
    agent = AgentProcess(tmp_path, settings, cpu_target=0.001, inactivity_s=60)
    try:
        assert spare_calls(agent) == min(8, installed().max_calls)  # nothing measured yet: max_calls alone
        says = tuple((t, question) for t in range(100, 2000, 400))  # a question every 8 s
        caller = threading.Thread(target=lambda: asyncio.run(place_call("127.0.0.1", agent.sip_port,
                                                                        Script(ticks=2000, says=says))))
        caller.start()
        while spare_calls(agent) > 0:  # until the call's cost is measured, however long that takes
            assert caller.is_alive(), "the call ended before its cost was measured"
            time.sleep(0.5)
        dialog = RawDialog(agent.sip_port)
        assert dialog.invite(offer()) == "SIP/2.0 503 Service Unavailable"
        assert "\r\nRetry-After: 10\r\n" in dialog.last_reply
        dialog.close()
        assert agent.events("call.rejected")[-1]["reason"] == "at capacity"
        caller.join()
        agent.wait_for("call.ended")
        while spare_calls(agent) == 0:  # until the call's session is finished
            time.sleep(0.2)
        second = RawDialog(agent.sip_port)
        assert second.invite(offer()) == "SIP/2.0 200 OK"
        assert second.request("BYE") == "SIP/2.0 200 OK"
        second.close()
    finally:
        agent.stop()
