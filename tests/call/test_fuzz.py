"""Our own SIP fuzzer against a real agent: thousands of damaged INVITEs, an OPTIONS probe after each."""

from eval import sip_fuzz
from tests.call.test_sip import options
from tests.peers import AgentProcess, next_ports

CASES = 2000


def test_the_agent_survives_every_fuzzed_invite_and_stays_the_same_process(tmp_path, settings):
    agent = AgentProcess(tmp_path, settings, max_calls=2)
    try:
        pid = agent.process.pid
        local, media = next_ports()
        result = sip_fuzz.run("127.0.0.1", agent.sip_port, CASES, seed=1, local=local, media_port=media,
                              tcp_every=20, alive=lambda: agent.process.poll() is None)
        failure = ("failed_at", "failed_kind", "agent_alive", "failed_payload")
        assert result["failed_at"] is None, {k: result[k] for k in failure}
        assert agent.process.poll() is None and agent.process.pid == pid
        assert options(agent.sip_port) == "SIP/2.0 200 OK"
        # The cases exercised every layer: pjsip's parser, our screening, and calls actually answered.
        assert {"400", "488", "200"} <= set(result["statuses"]), result["statuses"]
        assert len(result["kinds"]) >= 40
    finally:
        agent.stop()
