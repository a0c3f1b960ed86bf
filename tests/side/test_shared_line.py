"""Two real agents on one PostgreSQL database: a call to each, and either agent's /calls and dashboard show both,
each with the agent that took it."""

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
    finally:
        for agent in agents:
            agent.stop()
    for calls in seen:
        assert sorted(c["instance"] for c in calls) == ["agent-a", "agent-b"], calls
        assert all(c["turns"] >= 1 for c in calls), calls
    assert [c["instance"] for c in mine] == ["agent-b"]
    assert page.count("fire station") >= 2  # both calls' answers, on one agent's page
    assert "taken by agent-a" in page and "taken by agent-b" in page
