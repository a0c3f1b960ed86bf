"""An LLM phrasing the KB's answer: only checked sentences are handed out, and the KB's answer is the floor whatever
the server does (declines, writes a wrong fact, never answers, dies mid-answer, answers garbage)."""

import asyncio
import time

import pytest

from agent.call.speaking.phrase import Phraser, PhraserConfig
from agent.knowledge.base import Reply
from agent.knowledge.grounding import unsupported
from agent.knowledge.memory import CallMemory
from agent.knowledge.retrieval import Passage
from agent.llm.client import ChatClient, LlmConfig
from eval.kit.cases import load_cases
from tests.conftest import REPO
from tests.llm.servers import LlamaServer, ScriptedServer, free_port, llm_server  # noqa: F401 - fixture

PASSAGE = "Parking is free behind the building. We open at 9 a.m. on Saturdays."


def reply(abstained: bool = False) -> Reply:
    passage = Passage("kb/visit.md", ("Visiting",), (0,), PASSAGE, 0.03, 0.8, 0)
    return Reply("Is there parking?", ("Parking is free behind the building.", "We open at 9 a.m. on Saturdays."),
                 (), abstained, 0.7, (passage,), 1.0, 1.0)


def phraser(url: str, first_sentence_s: float = 5.0, failures: int = 3) -> Phraser:
    return Phraser(ChatClient(LlmConfig(url, "test", read_s=30)), PhraserConfig(first_sentence_s, failures, 60))


async def spoken(phrasing, deadline_s: float) -> list[str]:
    """Every sentence the phrasing hands out, the first by `deadline_s` from now; the phrasing closed after."""
    said, sentence = [], await phrasing.first(asyncio.get_running_loop().time() + deadline_s)
    while sentence is not None:
        said.append(sentence)
        sentence = await phrasing.next()
    phrasing.close()
    return said


async def phrase(p: Phraser, deadline_s: float = 5.0) -> tuple[list[str], str]:
    """Every sentence handed out for reply(), and why the phrasing stopped."""
    phrasing = p.start(reply(), CallMemory())
    said = await spoken(phrasing, deadline_s)
    await p.client.close()
    return said, phrasing.reason


def phrased_by(mode: str, *pieces: str, deadline_s: float = 5.0) -> tuple[list[str], str]:
    """phrase() against a ScriptedServer answering as `mode` with `pieces`, closed after."""
    server = ScriptedServer(mode, pieces)
    try:
        return asyncio.run(phrase(phraser(server.url), deadline_s))
    finally:
        server.close()


def test_grounded_sentences_are_handed_out_as_they_complete():
    said, reason = phrased_by("stream", "Yes, parking is free ", "behind the building. ",
                              "On Saturdays we open at 9am.")
    assert said == ["Yes, parking is free behind the building.", "On Saturdays we open at 9am."]
    assert reason == ""


def test_a_first_sentence_with_a_fact_the_passages_lack_is_never_handed_out():
    said, reason = phrased_by("stream", "Parking costs $5 behind the building. ", "We open at 9 a.m.")
    assert said == [] and reason == "unsupported: 5 dollar"


def test_a_later_sentence_that_fails_ends_the_answer_there():
    said, reason = phrased_by("stream", "Yes, parking is free. ", "We also open on Sundays at 10 a.m. ", "Welcome!")
    assert said == ["Yes, parking is free."] and reason == "unsupported: sunday, 10 am"


def test_a_decline_is_not_spoken_so_the_kb_answers():
    said, reason = phrased_by("stream", "I'm sorry, I don't know. ", "Please call again.")
    assert said == [] and reason == "declined"


def test_closing_the_phrasing_closes_the_stream_so_the_server_stops_writing():
    # A second sentence that never ends: only closing the phrasing ends the stream before its last chunk.
    server = ScriptedServer("stream", ("Yes, parking is free. ", "We open", *[" and open"] * 60), delay_s=0.05)

    async def run() -> str | None:
        p = phraser(server.url)
        phrasing = p.start(reply(), CallMemory())
        first = await phrasing.first(asyncio.get_running_loop().time() + 5)
        phrasing.close()  # what a barge-in does
        await asyncio.sleep(1.0)
        await p.client.close()
        return first

    try:
        assert asyncio.run(run()) == "Yes, parking is free."
        deadline = time.monotonic() + 10
        while not server.hung_up and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.hung_up
    finally:
        server.close()


def test_a_server_that_accepts_and_never_answers_costs_the_deadline_and_nothing_more():
    said, reason = phrased_by("silent", deadline_s=0.5)
    assert said == [] and reason == "deadline"


def test_a_server_dying_mid_answer_keeps_what_was_checked_and_says_why_it_stopped():
    said, reason = phrased_by("cut", "Yes, parking is free. ", "We open at")
    assert said == ["Yes, parking is free."]
    assert "RemoteProtocolError" in reason


@pytest.mark.parametrize(("mode", "why"), [("garbage", "not an event stream"), ("error", "HTTP 500")])
def test_garbage_or_an_error_gives_nothing_to_say_and_a_reason(mode, why):
    said, reason = phrased_by(mode)
    assert said == [] and why in reason


def test_after_repeated_failures_the_breaker_stops_asking_and_an_abstention_is_never_asked():
    server = ScriptedServer("error")
    p = phraser(server.url, failures=2)

    async def run() -> None:
        for _ in range(2):
            phrasing = p.start(reply(), CallMemory())
            assert await phrasing.first(asyncio.get_running_loop().time() + 5) is None
        assert p.start(reply(), CallMemory()) is None
        await p.client.close()

    try:
        asyncio.run(run())
        assert server.requests == 2
        assert phraser(server.url).start(reply(abstained=True), CallMemory()) is None
    finally:
        server.close()


def test_a_server_down_costs_nothing_but_a_refused_connection():
    said, reason = asyncio.run(phrase(phraser(f"http://127.0.0.1:{free_port()}/v1")))
    assert said == [] and "ConnectError" in reason


def test_the_real_server_never_gets_an_unsupported_fact_to_the_caller(llm_server, bundled_kb):  # noqa: F811
    """The bundled cases through llama.cpp's server: whatever the small model writes, each sentence handed out holds
    only facts from the passages it was given."""
    cases = [c for c in load_cases(REPO / "eval" / "cases.jsonl") if not c.expect_abstain][:12]

    async def run() -> list[tuple[list[str], str, Reply]]:
        p = phraser(llm_server.url, failures=100)
        out = []
        for case in cases:
            draft = bundled_kb.draft(CallMemory(), case.say)
            phrasing = p.start(draft, CallMemory())
            if phrasing is not None:
                out.append((await spoken(phrasing, 30), phrasing.reason, draft))
        await p.client.close()
        return out

    results = asyncio.run(run())
    assert results
    for said, reason, draft in results:
        passages = "\n".join(p.text for p in draft.passages)
        assert all(unsupported(s, passages) == [] for s in said), (said, reason)
        assert said or reason, "neither a sentence nor a reason"
    assert any(said for said, _, _ in results), [r[:2] for r in results]


def test_the_real_server_killed_mid_answer_ends_the_phrasing_with_a_reason(tmp_path):
    server = LlamaServer(tmp_path / "llama-server.log")

    async def run() -> tuple[list[str], str]:
        p = Phraser(ChatClient(LlmConfig(server.url, "test", read_s=30, max_tokens=400)), PhraserConfig(30, 3, 60))
        long = Reply("Tell me everything about parking and opening hours, in detail.", ("x",), (), False, 0.7,
                     (Passage("kb/visit.md", ("Visiting",), (0,), PASSAGE * 6, 0.03, 0.8, 0),), 1.0, 1.0)
        phrasing = p.start(long, CallMemory())
        await asyncio.sleep(0.05)
        server.kill()  # as the request is being read or answered
        said = await spoken(phrasing, 30)
        await p.client.close()
        return said, phrasing.reason

    try:
        said, reason = asyncio.run(run())
    finally:
        server.kill()
    assert reason, said  # the stream broke or never came: the phrasing says why
    assert all(unsupported(s, PASSAGE) == [] for s in said)


def test_the_settings_make_a_phraser_that_sends_the_key_from_its_file(tmp_path):
    from agent.settings import parse
    from agent.stages import phraser

    key = tmp_path / "llm.key"
    key.write_text("sk-test-0123\n")
    server = ScriptedServer("stream", ("Yes, parking is free.",))
    try:
        settings = parse([], {"AGENT_LLM_URL": server.url, "AGENT_LLM_API_KEY_FILE": str(key),
                              "AGENT_LLM_FIRST_SENTENCE_MS": "5000"})
        said, _ = asyncio.run(phrase(phraser(settings)))
    finally:
        server.close()
    assert said == ["Yes, parking is free."]
    assert server.headers["authorization"] == "Bearer sk-test-0123"
    assert phraser(parse([], {})) is None
