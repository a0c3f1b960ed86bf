"""How a scripted caller answers the agent's clarifications, as the person who asked would.

Asked to repeat, the caller says the question again. Asked to confirm ("Are you asking about the power
flush?"), the caller says yes when the topic the agent named is what the question was about, and no
otherwise; to a topic it could not make out, it says the question again. What the question was about is judged
from the case alone: the words the caller said, and the KB passage that holds the expected answer: the sentence
that holds it and the headings above it (not its neighbours, which are about something else), or for a FAQ's
question the whole section under it. An out-of-KB
question has no such passage, so only a topic made of the caller's own words gets a yes. Pure, on text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent.knowledge.chunking import Chunk
from agent.knowledge.text import sentences, tokens
from eval.kit.cases import Case
from eval.kit.scoring import contains_any

YES = "Yes, that's right."
NO = "No."
MAX_REACTIONS = 4
"""Clarifications a caller answers for one question before it gives up on it (the agent bounds its own)."""
_ASKED_AGAIN = re.compile(r"\b(say (it|that|your question) again|didn'?t (quite )?catch|repeat (that|the question))\b")
_CONFIRMING = re.compile(r"\bare you asking about (.+?)[\s?.!]*$")


def about(case: Case, chunks: Iterable[Chunk]) -> frozenset[str]:
    """The content words the case's question is about: what the caller said, and every KB sentence that holds
    one of its expected answers, with the headings above it."""
    words = set(tokens(case.say or ""))
    for chunk in chunks:
        if case.expect_heading and chunk.heading and chunk.heading[-1] == case.expect_heading:
            # A FAQ's question is answered by its whole section: every sentence of it holds the answer.
            words.update(tokens(" ".join(chunk.heading) + " " + chunk.text))
            continue
        for sentence in sentences(chunk.text):
            if case.expect_any and contains_any(sentence, case.expect_any):
                words.update(tokens(" ".join(chunk.heading) + " " + sentence))
    return frozenset(words)


def agrees(topic: str, subject: frozenset[str]) -> bool:
    """Whether the caller would say yes to "Are you asking about `topic`?": every content word of the topic is
    one the question is about."""
    named = tokens(topic)
    return bool(named) and all(word in subject for word in named)


def reply_to_confirmation(topic: str, subject: frozenset[str]) -> str:
    return YES if agrees(topic, subject) else NO


def reaction(heard: str, subject: frozenset[str]) -> str | None:
    """What the caller says to the agent's reply it heard: 'repeat' (the question again) when asked to say it
    again, YES or NO to a confirmation, None when it was an answer (or a decline) and the caller moves on."""
    text = heard.lower().strip()
    confirming = _CONFIRMING.search(text)
    if confirming and tokens(confirming.group(1)):
        return reply_to_confirmation(confirming.group(1), subject)
    # A topic the caller did not make out ("Are you asking about that?", its one word lost on the line) gets the
    # question said again, as a person would, not a no to a topic never heard.
    return "repeat" if confirming or _ASKED_AGAIN.search(text) else None
