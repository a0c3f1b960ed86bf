"""The KB's proper nouns, codes and rare terms, as a vocabulary hint for the speech recogniser.

Whisper's initial prompt biases decoding toward words it has just "seen", so
"Vaillant" and "ORCHID-47" are heard as such instead of as near-homophones.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from agent.knowledge.text import STOPWORDS, sentences

_CAPITALISED_RUN = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\b")
_CODE = re.compile(r"\b[A-Z]{2,}-?\d+\b|\b[A-Z]\d{2,}\b")
_WEEKDAYS_MONTHS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays "
    "saturdays sundays january february march april may june july august september october november december".split())


def vocabulary(texts: Iterable[str], limit: int = 40) -> list[str]:
    """Proper nouns (capitalised words not opening a sentence) and codes, most frequent first."""
    counts: Counter[str] = Counter()
    for text in texts:
        for sentence in sentences(text):
            for match in _CODE.finditer(sentence):
                counts[match.group(0)] += 2
            for match in _CAPITALISED_RUN.finditer(sentence):
                words = match.group(0).split()
                if match.start() == 0:
                    words = words[1:]  # a sentence's first word is capitalised anyway
                name = " ".join(words)
                if name and name.lower() not in STOPWORDS and name.lower() not in _WEEKDAYS_MONTHS:
                    counts[name] += 1
    return [term for term, _ in counts.most_common(limit)]


def prompt_hint(terms: list[str], max_chars: int = 400) -> str:
    """Terms joined as Whisper's initial prompt, short enough for its 224-token prompt window."""
    out, size = [], 0
    for term in terms:
        if size + len(term) + 2 > max_chars:
            break
        out.append(term)
        size += len(term) + 2
    return ", ".join(out) + "." if out else ""
