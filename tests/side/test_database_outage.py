"""PostgreSQL down when the agent starts, and stopped again in the middle of a call: calls are still answered,
/readyz and /metrics say the records wait, and once it is back every record is there, once, turns in order."""

import time

from eval.kit.postgres import Postgres
from eval.kit.scoring import heard_said
from tests.peers import HOURS, AgentProcess, heard, place_call

TOKEN = "test-token-outage"


def _until(check, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def test_records_written_while_the_database_was_down_arrive_once_and_in_order(tmp_path, settings, models, questions):
    database = Postgres()
    agent = None
    try:
        url = database.new_database()
        database.stop()  # down when the agent starts: it starts all the same, and answers
        agent = AgentProcess(tmp_path, settings, admin_token=TOKEN, database_url=url, instance="agent-a")
        place_call(agent, tmp_path / "before", "--question", str(questions["office"]), "--question-at", "2",
                   duration=10)
        agent.wait_for("call.ended")
        database.start()
        assert _until(lambda: agent.http("GET", "/readyz").json()["records"] == "ok")
        database.stop()  # and down again in the middle of the next call
        # The answer to "hours" lasts about 3.5 s from about 5.5 s: the second question waits until it is over
        # (at 9 s it cut the answer's last word on a fast machine, and its last four on a slow CI run).
        during = place_call(agent, tmp_path / "during", "--question", str(questions["hours"]), "--question-at", "2",
                            "--second", str(questions["office"]), "--second-at", "11", duration=18)
        agent.wait_for("call.ended", 2)
        ready = agent.http("GET", "/readyz").json()
        metrics = agent.http("GET", "/metrics").text
        database.start()
        back = _until(lambda: agent.http("GET", "/readyz").json()["records"] == "ok")
        listed = _until(lambda: [v["instance"] for v in agent.http("GET", "/readyz").json().get("line_kb_versions", [])]
                        == ["agent-a"])
        calls = agent.http("GET", "/calls?limit=10", TOKEN).json()["calls"]
        outage_call = agent.http("GET", f"/calls/{calls[0]['id']}", TOKEN).json()
    finally:
        if agent is not None:
            agent.stop()
        database.remove()
    assert heard_said(heard(models, during, during["question_end_tick"], during["second_tick"]), HOURS)
    assert ready["records"] == "degraded" and ready["ready"] is True
    assert "agent_record_store_degraded 1.0" in metrics
    assert back, "the records never caught up"
    assert listed, "an agent that started with the database down never recorded its index version"
    assert len(calls) == 2 and len({c["id"] for c in calls}) == 2
    assert outage_call["outcome"] and outage_call["ended"] is not None  # its end was written too
    assert [t["n"] for t in outage_call["turns"]] == [1, 2]
    assert "hours" in outage_call["turns"][0]["transcript"].lower()
