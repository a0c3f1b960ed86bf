"""Scale-out: the shipped Kamailio dispatcher config in front of two agents, calls placed with SIPp."""

import re
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.peers import AgentProcess, Kamailio, next_ports

CONFIG = REPO / "dialplans" / "kamailio" / "dispatcher.cfg"
SCENARIO = Path(__file__).parent / "sipp" / "uac_via_proxy.xml"
# The shipped defaults, which the cluster below keeps.
PIKE_UNIT_S = int(re.search(r'modparam\("pike", "sampling_time_unit", (\d+)\)', CONFIG.read_text()).group(1))
PIPE_LIMIT = int(re.search(r'#!define INVITE_PIPE "\d+:\w+:(\d+)"', CONFIG.read_text()).group(1))
"""New calls a second the ratelimit pipe passes to all agents together."""


def sipp_calls(kamailio: Kamailio, calls: int, tmp: Path) -> subprocess.CompletedProcess:
    """`calls` complete calls (INVITE, ACK, 0.5 s, BYE) through Kamailio, at most 4 at a time; ACK and BYE
    are routed by the Record-Route set the agent returned. Kamailio's children relay a call's 180 and 200 apart,
    so the 180 may come second, as UDP allows: SIPp goes on past it, as a phone does, rather than abort the call
    and send a BYE without the route (404 from the proxy)."""
    port, media = next_ports()
    return subprocess.run(["sipp", "-sf", str(SCENARIO), "-i", "127.0.0.1", "-mi", "127.0.0.1", "-ci", "127.0.0.1",
                           "-cp", str(port + 2), "-p", str(port), "-mp", str(media), "-s", "agent",
                           "-default_behaviors", "all,-abortunexp",
                           "-m", str(calls), "-r", "10", "-l", "4", "-d", "500", "-timeout", "60s", "-nostdin",
                           f"127.0.0.1:{kamailio.port}"], cwd=tmp, capture_output=True, text=True, timeout=90)


def answered(agent: AgentProcess) -> int:
    return len(agent.events("call.started"))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, settings):
    tmp = tmp_path_factory.mktemp("cluster")
    agents = [AgentProcess(tmp, settings, max_calls=4) for _ in range(2)]
    listing = tmp / "dispatcher.list"
    listing.write_text("".join(f"1 sip:127.0.0.1:{a.sip_port}\n" for a in agents))
    kamailio = Kamailio(tmp, CONFIG, DISPATCHER_LIST=f'"{listing}"', PING_INTERVAL="1")
    yield kamailio, agents, tmp
    kamailio.stop()
    for agent in agents:
        agent.stop()


def test_calls_through_kamailio_reach_both_agents(cluster):
    kamailio, (first, second), tmp = cluster
    result = sipp_calls(kamailio, 20, tmp)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert answered(first) + answered(second) == 20
    assert answered(first) >= 5 and answered(second) >= 5, (answered(first), answered(second))
    # ACK and BYE came back through Kamailio (Record-Route honoured): every call ended with the caller's BYE.
    ended = first.wait_for("call.ended", answered(first)) + second.wait_for("call.ended", answered(second))
    assert len(ended) == 20


def test_kamailio_drops_a_flooding_source_and_calls_from_others_go_on(cluster):
    """pike cuts off one source sending hundreds of INVITEs a second; the agents barely see it."""
    kamailio, agents, tmp = cluster
    before = sum(len(a.events("call.started")) + len(a.events("call.rejected")) for a in agents)
    port, media = next_ports()
    flood = subprocess.run(["sipp", "-sn", "uac", "-i", "127.0.0.6", "-mi", "127.0.0.6", "-ci", "127.0.0.6",
                            "-cp", str(port + 2), "-p", str(port), "-mp", str(media), "-r", "300", "-m", "900",
                            "-timeout", "6s", "-nostdin", f"127.0.0.1:{kamailio.port}"],
                           cwd=tmp, capture_output=True, text=True, timeout=60)
    assert flood.returncode != 0  # most of its calls got nowhere
    assert "pike: dropping INVITE from 127.0.0.6" in kamailio.log()
    reached = sum(len(a.events("call.started")) + len(a.events("call.rejected")) for a in agents) - before
    # pike judges a source once per sampling unit (2 s), so a flood that begins inside one unit is cut off at the
    # latest when the next one ends; until then the ratelimit pipe passes at most its limit in each of its own
    # one-second windows, and a span of two units touches one window more than it has seconds, as the two clocks
    # are not aligned. (Seen: 101 of 900 in one CI run, 156 in a clean-clone run beside nothing else, 162 in a full
    # run; pike's own 3 x density + 40 = 130 held only when the flood began early in a unit.)
    assert reached <= PIPE_LIMIT * (2 * PIKE_UNIT_S + 1), reached  # of 900
    result = sipp_calls(kamailio, 4, tmp)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert all(a.process.poll() is None for a in agents)


def test_a_stopped_agent_is_taken_out_and_every_new_call_goes_to_the_other(cluster):
    kamailio, (first, second), tmp = cluster
    second.stop()
    deadline = time.monotonic() + 10
    while f"agent down: sip:127.0.0.1:{second.sip_port}" not in kamailio.log() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert f"agent down: sip:127.0.0.1:{second.sip_port}" in kamailio.log(), kamailio.log()[-2000:]
    before, failovers = answered(first), len(re.findall("failover", kamailio.log()))
    result = sipp_calls(kamailio, 10, tmp)
    assert result.returncode == 0, result.stderr[-3000:]
    assert answered(first) == before + 10
    assert len(re.findall("failover", kamailio.log())) == failovers  # none was even tried on the stopped agent
