"""A language model phrasing the KB's answer, checked sentence by sentence, with the KB's own answer as the floor.

    phrasing = phraser.start(reply, memory)        # None: the KB abstained, or the breaker is open
    first = await phrasing.first(deadline)         # None: not in time, declined, unsupported or failed
    while (sentence := await phrasing.next()) ...   # each one checked before it is handed out
    phrasing.close()                               # barge-in: the HTTP stream is closed too

Only sentences whose every number, time, price, name and code is in the passages, whose wording is mostly theirs
and which negate only what they negate are handed out, and the first must state one of the KB answer's own facts
(knowledge/grounding.judge). Whether to answer at all stays the KB's decision: the model is never asked when the KB
abstained, and a decline from it when the KB was confident gives the KB's answer instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from dataclasses import dataclass

from agent.knowledge.base import Reply
from agent.knowledge.grounding import judge
from agent.knowledge.memory import CallMemory
from agent.knowledge.text import sentences
from agent.llm.breaker import Breaker
from agent.llm.client import ChatClient, LlmError
from agent.llm.prompt import messages
from agent.logs import event

log = logging.getLogger(__name__)

MAX_SENTENCES = 3
_END = object()


@dataclass(frozen=True)
class PhraserConfig:
    first_sentence_s: float
    breaker_failures: int = 3
    breaker_s: float = 30.0


class Phraser:
    """The model behind every call's answers (one connection pool, one breaker)."""

    def __init__(self, client: ChatClient, config: PhraserConfig) -> None:
        self.client, self.config = client, config
        self.breaker = Breaker(config.breaker_failures, config.breaker_s)

    def start(self, reply: Reply, memory: CallMemory) -> Phrasing | None:
        """Start asking for the reply's phrasing; None when the model is not asked (the KB abstained, the breaker
        is open)."""
        if reply.abstained or self.breaker.open:
            return None
        passages = given_passages(reply)
        return Phrasing(self, messages(reply.question, passages, list(memory.turns)), "\n".join(passages),
                        reply.text, reply.question)


def given_passages(reply: Reply) -> list[str]:
    """The passages the KB's answer was read from (the best one when none holds it whole): a short prompt is a
    fast first sentence, and every sentence is checked against exactly what the model was given."""
    def flat(text: str) -> str:
        return " ".join(text.split())
    holding = [p.text for p in reply.passages if any(flat(s) in flat(p.text) for s in reply.sentences)]
    return holding or [p.text for p in reply.passages[:1]]


class Phrasing:
    """One answer being phrased: a task reads the stream and queues checked sentences."""

    def __init__(self, phraser: Phraser, chat: list[dict[str, str]], passages: str, answer: str = "",
                 question: str = "") -> None:
        """`answer`: the KB's own answer, which every sentence must be about; `question`: what was asked, which no
        sentence may merely repeat (see grounding.judge)."""
        self._phraser, self._passages, self._answer, self._question = phraser, passages, answer, question
        self._queue: asyncio.Queue = asyncio.Queue()
        self.reason = ""
        """Why phrasing stopped short ("" while all is well): declined, unsupported: …, deadline, or the error."""
        self.spoken = 0
        """Sentences handed out."""
        self._queued = 0
        self._said: set[str] = set()
        self._task = asyncio.create_task(self._read(chat))

    async def first(self, deadline: float) -> str | None:
        """The first checked sentence, or None when there is none by `deadline` (event-loop time)."""
        try:
            sentence = await asyncio.wait_for(self._queue.get(),
                                              max(0.0, deadline - asyncio.get_running_loop().time()))
        except TimeoutError:
            self.reason = "deadline"
            self._phraser.breaker.failure()
            self.close()
            return None
        return self._handed(sentence)

    async def next(self) -> str | None:
        """The next checked sentence; None at the end, or where a sentence failed its check (the rest unsaid)."""
        return self._handed(await self._queue.get())

    def close(self) -> None:
        self._task.cancel()

    def _handed(self, sentence) -> str | None:
        if sentence is _END:
            self._queue.put_nowait(_END)  # every later call ends too
            return None
        self.spoken += 1
        return sentence

    async def _read(self, chat: list[dict[str, str]]) -> None:
        text, breaker = "", self._phraser.breaker
        try:
            async with contextlib.aclosing(self._phraser.client.stream(chat)) as stream:
                async for piece in stream:
                    text += piece
                    parts = sentences(text)  # all but the last are complete: the next one has begun
                    if len(parts) < 2:
                        continue
                    text = parts[-1] + (" " if text[-1].isspace() else "")
                    if not all(self._pass(sentence) for sentence in parts[:-1]):
                        break  # the stream is closed on the way out: the server stops too
                else:
                    if text.strip():
                        self._pass(text.strip())
            if self._queued == 0 and not self.reason:
                self.reason = "empty answer"
                breaker.failure()
            else:
                breaker.success()  # the server answered (whatever the check made of it)
        except LlmError as exc:
            self.reason = str(exc)
            breaker.failure()
        except Exception as exc:  # a bug here must cost the caller the phrasing, never the answer
            self.reason = f"{type(exc).__name__}: {exc}"[:160]
            event(log, "llm.failed", logging.ERROR, error=type(exc).__name__)
        finally:
            self._queue.put_nowait(_END)

    def _pass(self, sentence: str) -> bool:
        """Queue one sentence if it may be spoken; False (reason set) when the answer must stop here."""
        sentence = re.sub(r"^(?:\d+[.)]|[-•])\s*|[*_#`]+", "", sentence).strip()  # list markers, Markdown
        if not re.search(r"[A-Za-z]", sentence):
            return True
        why = judge(sentence, self._passages, self._answer, self._question, first=self._queued == 0)
        if not why and " ".join(sentence.lower().split()) in self._said:
            why = "repeats itself"
        self._said.add(" ".join(sentence.lower().split()))
        if why:
            self.reason = why
            return False
        self._queued += 1
        self._queue.put_nowait(sentence)
        return self._queued < MAX_SENTENCES  # enough for the ear; the rest of the stream is not read
