"""The KB's proper nouns, codes and rare terms, as a vocabulary hint for the speech recogniser.

Whisper's initial prompt biases decoding toward words it has just "seen", so
"Vaillant" and "ORCHID-47" are heard as such instead of as near-homophones.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from agent.knowledge.chunking import Chunk
from agent.knowledge.text import STOPWORDS, sentences

_CAPITALISED_RUN = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\b")
_CODE = re.compile(r"\b[A-Z]{2,}-?\d+\b|\b[A-Z]\d{2,}\b")
_WEEKDAYS_MONTHS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays "
    "saturdays sundays january february march april may june july august september october november december".split())


def vocabulary(texts: Iterable[str], limit: int = 40) -> list[str]:
    """Proper nouns and codes, most frequent first. Every sentence starts with a capital, so a
    sentence-opening name counts only when it is several words ("Warm Care") or also appears
    capitalised inside a sentence."""
    counts: Counter[str] = Counter()
    openers: Counter[str] = Counter()
    for text in texts:
        for sentence in sentences(text):
            for match in _CODE.finditer(sentence):
                counts[match.group(0)] += 2
            for match in _CAPITALISED_RUN.finditer(sentence):
                words = match.group(0).split()
                while words and words[0].lower() in STOPWORDS:  # "The Warm Care" -> "Warm Care"
                    words = words[1:]
                name = " ".join(words)
                if not name or name.lower() in _WEEKDAYS_MONTHS:
                    continue
                if match.start() == 0 and len(words) == 1:
                    openers[name] += 1
                else:
                    counts[name] += 1
    for name, count in openers.items():
        if name in counts:
            counts[name] += count
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


def chunks_hint(chunks: Iterable[Chunk]) -> str:
    """Whisper prompt for a KB's chunks; headings are their own sentences so their first words
    are judged like any sentence opener."""
    return prompt_hint(vocabulary(". ".join(c.heading + (c.text,)) for c in chunks))
