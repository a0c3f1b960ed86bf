"""A call-record database locked for 40 s during a call: the call does not notice, no turn is lost."""

import sqlite3
import time

from eval.kit.scoring import heard_said
from tests.peers import HOURS, WARRANTY, AgentProcess, heard, place_call

TOKEN = "locked-records-token"


def test_a_locked_record_store_delays_no_turn_and_loses_none(tmp_path, settings, models, questions):
    agent = AgentProcess(tmp_path, settings, admin_token=TOKEN, inactivity_s=60)
    try:
        lock = sqlite3.connect(tmp_path / "data" / "calls.sqlite3", isolation_level=None)
        lock.execute("BEGIN EXCLUSIVE")  # a backup, or an admin's long query
        locked_at = time.monotonic()
        timeline = place_call(agent, tmp_path / "caller", "--question", str(questions["hours"]), "--question-at",
                              "3", "--second", str(questions["warranty"]), "--second-at", "19", duration=32)
        assert heard_said(heard(models, timeline, timeline["question_end_tick"], timeline["second_tick"]), HOURS)
        assert heard_said(heard(models, timeline, timeline["second_end_tick"]), WARRANTY)
        # Both answers were heard, and both turns logged, while the store was still locked: no turn waited for it.
        assert len(agent.events("call.turn")) == 2
        assert agent.wait_for("records.write_retrying", 1)
        time.sleep(max(0.0, 40 - (time.monotonic() - locked_at)))
        lock.execute("ROLLBACK")
        lock.close()
        assert agent.wait_for("records.write_recovered", 1, timeout=20)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            calls = agent.http("GET", "/calls", TOKEN).json()["calls"]
            if calls and calls[0]["turns"] == 2 and calls[0]["outcome"] == "caller hung up":
                break
            time.sleep(0.5)
        detail = agent.http("GET", f"/calls/{calls[0]['id']}", TOKEN).json()
        assert [t["n"] for t in detail["turns"]] == [1, 2] and detail["outcome"] == "caller hung up"
    finally:
        agent.stop()
