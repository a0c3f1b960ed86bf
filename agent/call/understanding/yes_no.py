"""A caller's short yes or no: the answer to an offer ("I can take a message") or to a confirmation ("Are you
asking about the annual service?"), not a new question; or the question said again, the topic named not taken in.
Pure, on the transcript."""

from __future__ import annotations

import re

from agent.knowledge.text import stem_words

MAX_WORDS = 6
"""Longer than this, it is a sentence of its own, whatever word it starts with."""

_YES = re.compile(r"^(yes|yeah|yep|yup|sure|ok|okay|please|go ahead|alright|all right|of course|definitely|absolutely|"
                  r"correct|right|exactly|that's right|that's it|it is|i am)\b")
_NO = re.compile(r"^(no|nope|nah|not really|not quite|wrong|that's wrong|that's not (it|right)|it isn't|it's not|"
                 r"i'm not|i am not)\b")


def _words(transcript: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^a-z' ]+", " ", transcript.lower().replace("’", "'"))).strip()


def is_yes(transcript: str) -> bool:
    """A short yes: "yes please", "sure, go ahead", "that's right"."""
    text = _words(transcript)
    return bool(text) and len(text.split()) <= MAX_WORDS and bool(_YES.match(text))


def is_no(transcript: str) -> bool:
    """A short no: "no", "nope, not that", "that's not it"."""
    text = _words(transcript)
    return bool(text) and len(text.split()) <= MAX_WORDS and bool(_NO.match(text))


def is_bare(transcript: str) -> bool:
    """A word at most: to a yes/no question, neither yes nor no ("Nel," for "No."), it answers nothing and is
    too bare to be the question said again."""
    return len(_words(transcript).split()) <= 1


def said_again(transcript: str, question: str) -> bool:
    """The same question in the same words, whatever the punctuation ("How much does it cost?" twice)."""
    words = stem_words(transcript)
    return bool(words) and words == stem_words(question)
