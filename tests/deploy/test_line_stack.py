"""The line overlay, run: `docker compose -f docker-compose.yml -f docker-compose.line.yml up` with all four images
built here (Kamailio and PostgreSQL from Debian's packages), softphone calls through the bundled Asterisk spread by
Kamailio's dispatcher over both agents, and either agent's /calls and dashboard listing every call of the line."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from agent.deploy import images
from eval.kit.scoring import heard_said
from tests.deploy.containers import docker_engine  # noqa: F401 - a fixture
from tests.deploy.stack import Stack, running, softphone_call
from tests.peers import HOURS, heard

PASSWORD = "line-softphone-password"
TOKEN = "line-test-admin-token-0123"
AGENTS = {"agent": "172.28.0.11", "agent-b": "172.28.0.12"}
"""Each agent's address on the compose network (docker-compose.line.yml)."""


@pytest.fixture(scope="module")
def line(docker_engine, tmp_path_factory):  # noqa: F811 - the fixture imported above
    for image in images.LINE:
        images.build(image, log=lambda line: None, pull=False)  # no registry: Debian's archive and PyPI
    with running(tmp_path_factory.mktemp("line"), ("docker-compose.yml", "docker-compose.line.yml"),
                 {"SOFTPHONE_PASSWORD": PASSWORD, "POSTGRES_PASSWORD": "linedb0pass",
                  "AGENT_ADMIN_TOKEN": TOKEN}) as up:
        yield up


def dispatching_to_both(line: Stack) -> bool:
    """Whether Kamailio sends calls to both agents: each is listed active (the default) unless its probe failed
    (dispatcher.cfg logs "agent down"), and then only once a later probe has brought it back ("agent up"). An agent
    still starting when Kamailio first probed it is out of the rotation until the next probe (every 5 s)."""
    log = line.logs("kamailio")
    return all(log.rfind(f"agent up: sip:{address}:5060") >= log.rfind(f"agent down: sip:{address}:5060")
               for address in AGENTS.values())


def side_app(address: str, path: str) -> bytes:
    """What an agent's side app answers GET `path` with the admin token, from the host."""
    request = urllib.request.Request(f"http://{address}:8000{path}", headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read()


def calls_listed_by(address: str) -> set[str]:
    """The SIP Call-IDs of the calls an agent's side app lists (GET /calls)."""
    return {call["sip_call_id"] for call in json.loads(side_app(address, "/calls?limit=50"))["calls"]}


def test_calls_through_kamailio_reach_both_agents_and_either_lists_them_all(line, questions, models, tmp_path):
    deadline = time.monotonic() + 60
    while not dispatching_to_both(line):
        assert time.monotonic() < deadline, line.logs("kamailio")[-3000:]
        time.sleep(1)
    for n in range(2):
        timeline = softphone_call(line, tmp_path / f"call-{n}", PASSWORD, "--question", str(questions["hours"]),
                                  "--question-at", "3", duration=16, trunk="agent-udp")
        assert timeline["status"] == 200
        assert heard_said(heard(models, timeline, timeline["question_end_tick"]), HOURS)
    # The dispatcher's round robin gave each agent one of the two calls; both recorded theirs in PostgreSQL.
    taken = {name: [event["call"] for event in line.events(name, "call.ended")] for name in AGENTS}
    assert all(len(calls) == 1 for calls in taken.values()), taken
    every_call = {call for calls in taken.values() for call in calls}
    for address in AGENTS.values():
        assert calls_listed_by(address) >= every_call
        # and its dashboard shows the call each agent took (AGENT_INSTANCE agent-a and agent-b)
        page = side_app(address, "/dashboard").decode()
        assert "taken by agent-a" in page and "taken by agent-b" in page
