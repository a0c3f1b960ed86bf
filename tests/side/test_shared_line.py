"""Two real agents on one PostgreSQL database: a call to each, and either agent's /calls and dashboard show both,
each with the agent that took it; a re-index asked of one is done by both."""

import shutil
import time

from agent.side.kb_sync import announced
from tests.conftest import REPO
from tests.peers import AgentProcess, place_call

TOKEN = "test-token-shared-line"


def test_either_agent_shows_the_calls_both_took(tmp_path, settings, postgres, questions):
    url, agents = postgres.new_database(), []
    try:
        for name in ("agent-a", "agent-b"):
            (tmp_path / name).mkdir()
            agents.append(AgentProcess(tmp_path / name, settings, admin_token=TOKEN, database_url=url, instance=name))
        for agent in agents:
            timeline = place_call(agent, tmp_path / f"call-{agent.sip_port}", "--question", str(questions["office"]),
                                  "--question-at", "2", duration=10)
            assert timeline["status"] == 200
        for agent in agents:
            agent.wait_for("call.ended")
        seen = [agent.http("GET", "/calls?limit=10", TOKEN).json()["calls"] for agent in agents]
        mine = agents[1].http("GET", "/calls?instance=agent-b", TOKEN).json()["calls"]
        page = agents[0].http("GET", "/dashboard", TOKEN).text
        filtered = agents[0].http("GET", "/dashboard?instance=agent-b", TOKEN).text
    finally:
        for agent in agents:
            agent.stop()
    for calls in seen:
        assert sorted(c["instance"] for c in calls) == ["agent-a", "agent-b"], calls
        assert all(c["turns"] >= 1 for c in calls), calls
    assert [c["instance"] for c in mine] == ["agent-b"]
    assert page.count("fire station") >= 2  # both calls' answers, on one agent's page
    assert "taken by agent-a" in page and "taken by agent-b" in page
    assert "taken by agent-a" not in filtered and "taken by agent-b" in filtered


def test_a_reindex_on_one_agent_makes_the_other_reindex_and_readyz_shows_both_versions(tmp_path, settings,
                                                                                        postgres):
    kb = tmp_path / "kb"
    shutil.copytree(REPO / "kb", kb)  # one KB directory both agents answer from, as on a shared volume
    url, agents = postgres.new_database(), []
    try:
        for name in ("agent-a", "agent-b"):
            (tmp_path / name).mkdir()
            agents.append(AgentProcess(tmp_path / name, settings, admin_token=TOKEN, database_url=url, instance=name,
                                       kb_dir=kb))
        first, second = agents
        before = second.http("GET", "/readyz").json()["kb_versions"]["default"]
        (kb / "gift-cards.md").write_text("# Gift cards\n\nWe sell gift cards for any amount from $20.\n")
        assert first.http("POST", "/kb/reindex", TOKEN).json()["added"] == 1
        after = first.http("GET", "/readyz").json()["kb_versions"]["default"]
        deadline = time.monotonic() + 60
        while second.http("GET", "/readyz").json()["kb_versions"]["default"] != after and time.monotonic() < deadline:
            time.sleep(0.5)
        line = second.http("GET", "/readyz").json()["line_kb_versions"]
    finally:
        for agent in agents:
            agent.stop()
    assert after != before
    assert sorted((v["instance"], v["version"]) for v in line) == [("agent-a", after), ("agent-b", after)]


def test_an_announcement_is_followed_only_when_another_agent_made_it():
    assert announced('{"instance": "agent-a", "profiles": ["default"]}', "agent-b") == ["default"]
    assert announced('{"instance": "agent-b", "profiles": ["default"]}', "agent-b") == []
    assert announced("not json", "agent-b") == [] and announced('{"profiles": [1]}', "agent-b") == []
