"""Real SIP calls with the optional LLM: answered through llama.cpp's real server, and answered all the same (by the
KB's own sentences) when the server accepts the request and never answers."""

import re

from agent.knowledge.grounding import judge
from eval.kit.scoring import heard_said
from tests.conftest import REPO
from tests.llm.servers import ScriptedServer, llm_server  # noqa: F401 - fixture
from tests.peers import OFFICE, AgentProcess, heard, place_call

TOKEN = "test-token-llm-calls"


def _turns(agent: AgentProcess) -> list[dict]:
    (call,) = agent.http("GET", "/calls?limit=5", TOKEN).json()["calls"]
    return agent.http("GET", f"/calls/{call['id']}", TOKEN).json()["turns"]


def _kb_text() -> str:
    return "\n".join(p.read_text() for p in sorted((REPO / "kb").glob("*.md")))


def test_a_call_is_answered_through_the_llm_and_speaks_only_what_the_kb_holds(tmp_path, settings, models, questions,
                                                                             llm_server):  # noqa: F811
    agent = AgentProcess(tmp_path, settings, admin_token=TOKEN, llm_url=llm_server.url,
                         llm_first_sentence_ms=8000)  # the test server shares these 2 cores with the agent
    try:
        timeline = place_call(agent, tmp_path / "call", "--question", str(questions["office"]), "--question-at", "3",
                              duration=20)
        (turn,) = _turns(agent)
        metrics = agent.http("GET", "/metrics").text
    finally:
        agent.stop()
    answerer = turn["hearing"]["answerer"]
    assert answerer in ("llm", "llm_rejected"), turn  # the server was asked
    assert f'agent_answers_total{{answerer="{answerer}"}} 1.0' in metrics
    spoken = turn["answer"]
    if answerer == "llm":
        assert "llm_first_sentence_ms" in turn["latencies_ms"]
        assert judge(spoken, _kb_text()) == "", spoken  # whatever it phrased holds only the KB's facts
    # Whatever it phrased, its sentence naming the fire station is what the caller heard (the words are the
    # agent's record; the ear mishears a few).
    sentence = next(s for s in re.split(r"(?<=[.!?])\s+", spoken) if "fire station" in s)
    assert heard_said(heard(models, timeline, timeline["question_end_tick"]), sentence), (answerer, spoken)


def test_a_server_that_never_answers_costs_the_deadline_and_the_kb_answers(tmp_path, settings, models, questions):
    server = ScriptedServer("silent")
    agent = AgentProcess(tmp_path, settings, admin_token=TOKEN, llm_url=server.url, llm_first_sentence_ms=600)
    try:
        timeline = place_call(agent, tmp_path / "call", "--question", str(questions["office"]), "--question-at", "3",
                              duration=16)
        (turn,) = _turns(agent)
    finally:
        agent.stop()
        server.close()
    assert server.requests == 1
    assert (turn["hearing"]["answerer"], turn["hearing"]["llm_reason"]) == ("llm_rejected", "deadline")
    assert heard_said(heard(models, timeline, timeline["question_end_tick"]), OFFICE)
