"""SIGTERM with a call up: no new calls, readiness down, the caller hears the sentence end and goodbye."""

import signal
import sqlite3
import subprocess
import sys
import time

from eval.kit.scoring import heard_said
from tests.call.raw_sip import RawDialog, offer
from tests.peers import HOURS, REPO, AgentProcess, heard, heard_goodbye, next_ports


def test_sigterm_drains_calls_politely_and_exits_cleanly(tmp_path, settings, models, questions):
    agent = AgentProcess(tmp_path, settings, inactivity_s=60, drain_s=15)
    try:
        port, rtp = next_ports()
        caller = subprocess.Popen([sys.executable, "-m", "eval.kit.caller", "--target", agent.uri, "--port", str(port),
                                   "--rtp-port", str(rtp), "--question", str(questions["hours"]), "--question-at",
                                   "3", "--duration", "40", "--out", str(tmp_path / "caller")],
                                  cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert agent.wait_for("call.turn", 1, timeout=30), "the question was never answered"
        agent.process.send_signal(signal.SIGTERM)  # while the answer's first sentence plays
        assert agent.wait_for("agent.draining", 1, timeout=10)
        dialog = RawDialog(agent.sip_port)
        assert dialog.invite(offer()) == "SIP/2.0 503 Service Unavailable"
        dialog.close()
        assert agent.http("GET", "/readyz").status_code == 503
        started = time.monotonic()
        assert agent.process.wait(30) == 0 and time.monotonic() - started < 20
        caller.wait(60)
    finally:
        agent.stop()
    import json

    from tests.conftest import read_wav

    timeline = json.loads((tmp_path / "caller" / "timeline.json").read_text())
    timeline["received"], _ = read_wav(tmp_path / "caller" / "received.wav")
    assert timeline["ended_by"] == "agent"  # the agent hung up, after...
    answer = heard(models, timeline, timeline["question_end_tick"])
    assert heard_said(answer, HOURS) and heard_goodbye(answer)  # ...the sentence's end and a goodbye
    assert "saturday" not in answer  # the rest of the answer was not read out
    with sqlite3.connect(tmp_path / "data" / "calls.sqlite3") as db:
        (outcome, ended), = db.execute("SELECT outcome, ended FROM calls").fetchall()
    assert outcome == "agent shut down" and ended is not None
