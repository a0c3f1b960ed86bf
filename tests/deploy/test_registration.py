"""REGISTER with digest authentication against a real Kamailio registrar on loopback."""

import time
from pathlib import Path

import pytest

from tests.peers import AgentProcess, Kamailio, next_ports, place_call

CONFIG = Path(__file__).with_name("kamailio-registrar.cfg")


def registrar(tmp: Path, port: int | None = None) -> Kamailio:
    return Kamailio(tmp, CONFIG, port=port, USER='"agent"', PASSWORD='"s3cret"')


def wait_readiness(agent: AgentProcess, ready: bool, timeout: float = 20) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = agent.http("GET", "/readyz").json()
        if body["ready"] == ready or time.monotonic() > deadline:
            return body
        time.sleep(0.2)


def metric(agent: AgentProcess, line_start: str) -> float:
    for line in agent.http("GET", "/metrics").text.splitlines():
        if line.startswith(line_start):
            return float(line.split()[-1])
    return 0.0


def registering_agent(tmp: Path, settings, port: int, password: str) -> AgentProcess:
    return AgentProcess(tmp, settings, sip_registrar=f"sip:127.0.0.1:{port}", sip_username="agent",
                        sip_password=password, sip_register_expires_s=10, sip_register_retry_max_s=4)


@pytest.fixture(scope="module")
def registered(tmp_path_factory, settings):
    tmp = tmp_path_factory.mktemp("registrar")
    kamailio = registrar(tmp)
    agent = registering_agent(tmp, settings, kamailio.port, "s3cret")
    yield kamailio, agent
    agent.stop()
    kamailio.stop()


def test_the_agent_registers_with_digest_auth_and_reports_it(registered):
    kamailio, agent = registered
    body = wait_readiness(agent, True)
    assert body["ready"] and body["registration"]["state"] == "registered", body
    assert "challenge REGISTER" in kamailio.log() and "registered sip:agent@127.0.0.1" in kamailio.log()
    assert metric(agent, "agent_sip_registered ") == 1


def test_a_call_to_the_registered_user_reaches_the_agent(registered, tmp_path):
    kamailio, agent = registered
    wait_readiness(agent, True)
    timeline = place_call(agent, tmp_path, duration=6, target=f"sip:agent@127.0.0.1:{kamailio.port}")
    assert timeline["status"] == 200
    # The agent took it and its greeting was heard, as sound (what a recogniser makes of the agent's own prompt
    # is no claim about the registration).
    assert timeline["sip_call_id"] in {e["call"] for e in agent.events("call.started")}
    assert timeline["received_voiced_ticks"]


def test_the_registration_is_renewed_before_it_expires(registered):
    _, agent = registered
    deadline = time.monotonic() + 20  # 10 s lifetime: the renewal comes ~5 s before the end
    while metric(agent, 'agent_sip_registrations_total{outcome="ok"}') < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert metric(agent, 'agent_sip_registrations_total{outcome="ok"}') >= 2
    assert wait_readiness(agent, True)["ready"]


def test_a_wrong_password_is_reported_and_retried_with_backoff(tmp_path, settings):
    kamailio = registrar(tmp_path)
    agent = registering_agent(tmp_path, settings, kamailio.port, "wrong")
    try:
        body = wait_readiness(agent, True, timeout=8)  # stays unready; look at why after several tries
        assert not body["ready"] and body["reasons"]["registration"].startswith("failed: 401"), body
        assert body["registration"]["failures"] >= 2 and body["registration"]["retry_in_s"] >= 4
        assert metric(agent, 'agent_sip_registrations_total{outcome="failed"}') >= 2
        assert metric(agent, "agent_sip_registered ") == 0
    finally:
        agent.stop()
        kamailio.stop()


def test_registration_succeeds_once_a_down_registrar_comes_up(tmp_path, settings):
    port = next_ports()[0]
    agent = registering_agent(tmp_path, settings, port, "s3cret")
    kamailio = None
    try:
        body = wait_readiness(agent, True, timeout=5)
        # Over UDP an unanswered REGISTER is retransmitted for 32 s (RFC 3261 timer F) before it fails
        # and the backoff starts; either way the registrar coming up is found within seconds.
        assert not body["ready"] and body["registration"]["state"] in ("registering", "failed"), body
        kamailio = registrar(tmp_path, port)
        body = wait_readiness(agent, True, timeout=15)
        assert body["ready"] and body["registration"]["state"] == "registered", body
    finally:
        agent.stop()
        if kamailio is not None:
            kamailio.stop()
