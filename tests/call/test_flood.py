"""An INVITE flood against a real agent (SIPp at hundreds of calls a second) while a real caller calls."""

import re
import shutil
import subprocess
import threading

import pytest

from eval.kit.scoring import heard_said
from tests.call.test_sip import options
from tests.peers import HOURS, AgentProcess, heard, next_ports, place_call

FLOODER = "127.0.0.5"  # another loopback address: not the trusted 127.0.0.1 the real caller uses


def metric(agent, name: str) -> float:
    text = agent.http("GET", "/metrics").text
    return sum(float(v) for v in re.findall(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M))


@pytest.fixture
def sipp_flood(tmp_path):
    if shutil.which("sipp") is None:
        pytest.skip("SIPp is needed (Debian package sip-tester; `make test` installs it)")

    def start(agent_port: int, rate: int, calls: int) -> threading.Thread:
        port, rtp = next_ports()
        command = ["sipp", "-sn", "uac", "-i", FLOODER, "-mi", FLOODER, "-ci", FLOODER, "-cp", str(port + 2),
                   "-p", str(port), "-mp", str(rtp), "-r", str(rate), "-m", str(calls), "-d", "1000",
                   "-nostdin", "-timeout", "20", "-timeout_error", "-recv_timeout", "2000",
                   f"127.0.0.1:{agent_port}"]
        thread = threading.Thread(target=subprocess.run, args=(command,),
                                  kwargs={"cwd": tmp_path, "capture_output": True, "timeout": 60})
        thread.start()
        return thread

    return start


def test_a_flood_from_one_source_is_cut_off_and_a_real_call_is_answered_correctly(tmp_path, settings, questions,
                                                                                  models, sipp_flood):
    agent = AgentProcess(tmp_path, settings, max_calls=4)
    try:
        pid = agent.process.pid
        flood = sipp_flood(agent.sip_port, rate=300, calls=3000)
        agent.wait_for("sip.firewall", 1, timeout=20)
        timeline = place_call(agent, tmp_path / "caller", "--question", str(questions["hours"]),
                              "--question-at", "3", duration=14)
        flood.join()
        assert timeline["status"] == 200
        assert heard_said(heard(models, timeline, timeline["question_end_tick"]), HOURS)
        assert agent.process.poll() is None and agent.process.pid == pid
        assert options(agent.sip_port) == "SIP/2.0 200 OK"
        assert any(int(e["blocked"]) >= 1 for e in agent.events("sip.firewall"))  # the kernel drops the rest
        assert len([e for e in agent.events("call.started") if FLOODER in e["remote"]]) <= 2  # calls per source
        assert agent.wait_for("call.ended", len(agent.events("call.started")))  # every call it took has ended
        assert metric(agent, "agent_active_calls") == 0
        assert metric(agent, "agent_sip_refused_total") >= 1
    finally:
        agent.stop()
