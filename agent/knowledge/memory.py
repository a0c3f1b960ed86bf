"""Per-call memory: the last few turns, bounded by count and characters, and follow-up expansion.

A caller's "how much is it?" only makes sense next to the previous question,
so a referential follow-up is searched together with the previous turn.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

from agent.knowledge.question import OPENING_HOURS, analyse
from agent.knowledge.text import tokens

# Words that point back at something said before.
_REFERRING = frozenset("it its it's that this these those they them their there he she one ones same".split())
_THERE_IS = re.compile(r"\b(?:is|are|was|were) there\b|\bthere(?:'s| is| are| was| were)\b")
_TO_THE_BUSINESS = frozenset("you your you're yours".split())
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
    by_sound: bool = False
    """Some of `recovered`'s words were put back by sound, not by meaning: what is firm only on them is in doubt."""
    previous: str = ""
    """The previous turn's question ("" on a call's first)."""

    @property
    def expanded(self) -> str:
        return f"{self.context} {self.question}" if self.context else self.question


OWN_WORDS = 1.0
"""How specific (text.specificity, summed) a question's own focus must be for it to be understood on its own words,
though it opens like a follow-up ("And what about adults on the NHS?"): one rare word, or two common ones."""


def is_follow_up(question: str) -> bool:
    """True when the question needs an earlier turn to be understood: it is bare ("Saturday?"), or it refers back or
    opens with "and…" and names too little of its own to stand on ("how much is it?", "and on Saturday?", "when
    does it run?", "and the full one?"). A question with its own content words is understood on them: the previous
    turn then helps only a little."""
    # "Is there a deposit?": that "there" points at nothing said before.
    words = set(re.findall(r"[a-z']+", _THERE_IS.sub(" ", question.lower())))
    if words & _TO_THE_BUSINESS and not words & _REFERRING and (
            analyse(question).kinds & {"contact", "place"} or re.search(OPENING_HOURS, question.lower())):
        return False  # "What's your number?", "Where are you?", "When are you open?": of the business, not the topic
    if len(tokens(question)) <= 1:  # bare ("Saturday?"), unless a yes/no question of its own ("Is there a deposit?")
        return not (analyse(question).polar and not words & _REFERRING)
    if not (words & _REFERRING or opens_follow_up(question)):
        return False
    asked = analyse(question)
    return sum(asked.specific.get(t, 1.0) for t in asked.focus) < OWN_WORDS


def opens_follow_up(question: str) -> bool:
    """It opens like a follow-up: "and…", "what about…"."""
    return bool(_FOLLOW_UP_OPENERS.match(question))


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
        return Query(question, context, is_follow_up(question), previous.topic, previous.chunks,
                     previous=previous.question)
