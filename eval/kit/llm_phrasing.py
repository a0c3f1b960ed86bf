"""The agent's LLM phrasing of a reply, run outside a call for the evals: the same Phraser, check and deadline as
the call path (agent/call/speaking/phrase.py), on an event loop of its own.

    with LlmPhrasing("http://127.0.0.1:8089/v1", deadline_s=1.2) as phrase:
        phrase(reply, memory)  # {"spoken", "answerer", "llm_reason", "llm_first_sentence_ms", "waited_ms"}
"""

from __future__ import annotations

import asyncio

from agent.call.speaking.phrase import Phraser, PhraserConfig
from agent.knowledge.base import Reply
from agent.knowledge.memory import CallMemory
from agent.llm.client import ChatClient, LlmConfig


class LlmPhrasing:
    def __init__(self, url: str, deadline_s: float, model: str = "default") -> None:
        self._runner = asyncio.Runner()
        # Every case is asked (no breaker): an eval scores each answer, where a call would leave a failing server
        # alone for a while.
        self._phraser = Phraser(ChatClient(LlmConfig(url, model)), PhraserConfig(deadline_s, breaker_failures=1 << 30))

    def __enter__(self) -> LlmPhrasing:
        return self

    def __exit__(self, *exc) -> None:
        self._runner.run(self._phraser.client.close())
        self._runner.close()

    def __call__(self, reply: Reply, memory: CallMemory) -> dict:
        return self._runner.run(self._phrase(reply, memory))

    async def _phrase(self, reply: Reply, memory: CallMemory) -> dict:
        """What the caller would hear: the LLM's checked sentences when the first is in time, else the KB's."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        phrasing = self._phraser.start(reply, memory)
        if phrasing is None:
            reason = "" if reply.abstained else "breaker open"
            return {"spoken": reply.text, "answerer": "extractive", "llm_reason": reason,
                    "llm_first_sentence_ms": None, "waited_ms": 0.0}
        try:
            sentence = await phrasing.first(started + self._phraser.config.first_sentence_s)
            waited_ms = (loop.time() - started) * 1000
            if sentence is None:
                return {"spoken": reply.text, "answerer": "llm_rejected", "llm_reason": phrasing.reason,
                        "llm_first_sentence_ms": None, "waited_ms": waited_ms}
            said = []
            while sentence is not None:
                said.append(sentence)
                sentence = await phrasing.next()
            return {"spoken": " ".join(said), "answerer": "llm", "llm_reason": phrasing.reason,
                    "llm_first_sentence_ms": waited_ms, "waited_ms": waited_ms}
        finally:
            phrasing.close()
