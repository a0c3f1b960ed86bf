"""Per-call memory: the last few turns, bounded by count and characters, and follow-up expansion.

A caller's "how much is it?" only makes sense next to the previous question,
so a referential follow-up is searched together with the previous turn.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

from agent.knowledge.text import tokens

# Words that point back at something said before.
_REFERRING = frozenset("it its it's that this these those they them their there he she one ones same".split())
_FOLLOW_UP_OPENERS = re.compile(r"^\s*(and|also|what about|how about|but|so|then|plus|or)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Turn:
    """One question and the answer the agent gave."""

    question: str
    answer: str
    topic: str = ""
    """Heading path of the passage the answer came from ("" when the agent abstained)."""
    chunks: tuple[str, ...] = ()
    """Ids of the chunks the answer was read from (none when the agent abstained)."""


@dataclass(frozen=True)
class Query:
    """What retrieval searches for one question."""

    question: str
    """The caller's words, as transcribed."""
    context: str
    """The previous turn's topic and question ("" on a call's first question)."""
    follow_up: bool
    """The question refers back, so the context leads; otherwise the question leads and context helps."""
    topic: str = ""
    """Heading path the previous answer came from."""
    topic_chunks: tuple[str, ...] = ()
    """Ids of the chunks the previous answer was read from."""
    recovered: str = ""
    """The question in the KB's words: near-homophones put back (soundalike), callers' synonyms swapped
    (synonyms); searched beside it."""

    @property
    def expanded(self) -> str:
        return f"{self.context} {self.question}" if self.context else self.question


def is_follow_up(question: str) -> bool:
    """True when the question leans on an earlier turn: it refers back, opens with 'and…', or is too bare alone."""
    words = set(re.findall(r"[a-z']+", question.lower()))
    return bool(words & _REFERRING) or bool(_FOLLOW_UP_OPENERS.match(question)) or len(tokens(question)) <= 1


class CallMemory:
    """The bounded history of one call."""

    def __init__(self, max_turns: int = 4, max_chars: int = 1200) -> None:
        self.max_turns = max_turns
        self.max_chars = max_chars
        self.turns: deque[Turn] = deque()

    def add(self, turn: Turn) -> None:
        """Remember a turn, dropping the oldest ones beyond the turn and character bounds."""
        if self.max_turns == 0:
            return
        half = self.max_chars // 2
        self.turns.append(Turn(turn.question[:half], turn.answer[:half], turn.topic[:half], turn.chunks))
        while len(self.turns) > self.max_turns or (
                len(self.turns) > 1 and sum(len(t.question) + len(t.answer) for t in self.turns) > self.max_chars):
            self.turns.popleft()

    def query(self, question: str) -> Query:
        """The search for `question`, carrying the previous turn's question and topic as context."""
        if not self.turns:
            return Query(question, "", False)
        previous = self.turns[-1]
        # The answer says what the call is about in the KB's own words; what was heard may have been misheard
        # (and still answered right). With no answer given, the question is all there is.
        context = f"{previous.topic} {previous.answer}" if previous.topic else previous.question
        return Query(question, context, is_follow_up(question), previous.topic, previous.chunks)
