"""A line as the owner runs it: two agents behind the shipped Kamailio dispatcher, sharing call records in one
real PostgreSQL; calls spread over both, and either agent's /calls and its dashboard in headless Chromium show
every call."""

from tests.deploy.test_dispatcher import CONFIG, sipp_calls
from tests.peers import AgentProcess, Kamailio, chromium

TOKEN = "test-token-shared-dispatcher"


def test_calls_split_between_two_agents_are_all_on_either_agents_calls_and_dashboard(tmp_path, settings, postgres):
    url, agents, kamailio = postgres.new_database(), [], None
    try:
        for name in ("agent-a", "agent-b"):
            (tmp_path / name).mkdir()
            agents.append(AgentProcess(tmp_path / name, settings, max_calls=4, admin_token=TOKEN, database_url=url,
                                       instance=name))
        listing = tmp_path / "dispatcher.list"
        listing.write_text("".join(f"1 sip:127.0.0.1:{a.sip_port}\n" for a in agents))
        kamailio = Kamailio(tmp_path, CONFIG, DISPATCHER_LIST=f'"{listing}"', PING_INTERVAL="1")
        result = sipp_calls(kamailio, 10, tmp_path)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        for agent in agents:
            agent.wait_for("call.ended", len(agent.events("call.started")))
        taken = [len(agent.events("call.started")) for agent in agents]
        listed = [agent.http("GET", "/calls?limit=50", TOKEN).json()["calls"] for agent in agents]
        page = f"127.0.0.1:{agents[1].http_port}/dashboard"
        dom = chromium(tmp_path / "owner", f"http://owner:{TOKEN}@{page}", "--dump-dom").stdout
    finally:
        if kamailio is not None:
            kamailio.stop()
        for agent in agents:
            agent.stop()
    assert sum(taken) == 10 and min(taken) >= 1, taken
    for calls in listed:
        assert len(calls) == 10 and all(c["ended"] is not None for c in calls)
        assert sorted(c["instance"] for c in calls) == ["agent-a"] * taken[0] + ["agent-b"] * taken[1]
    assert dom.count("taken by agent-a") == taken[0] and dom.count("taken by agent-b") == taken[1], dom[-2000:]
