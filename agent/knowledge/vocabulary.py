"""The KB's own words as a vocabulary hint for the speech recogniser: its proper nouns and codes, then its
distinctive content words.

Whisper's initial prompt biases decoding toward words it has just "seen", so "Vaillant" and "ORCHID-47" are
heard as such instead of as near-homophones, and so are the KB's ordinary but characteristic words
("boiler", "radiator", "surcharge"): the words that are frequent in the KB and rare in general English
(wordfreq's English frequencies), a KB's keywords by the usual log-odds measure. Measured with eval.hearing
(see README): a long list costs decode time for little more, so the hint stays short.

The same frequencies mark the other side: a question's rare words that the KB never uses, most likely what
the caller asks about when the KB does not cover it (unknown_rare_words; see call/understanding/understand.py).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

from wordfreq import zipf_frequency

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


_LOWER_WORD = re.compile(r"\b[a-z]{3,}\b")
_ANY_WORD = re.compile(r"[a-z][a-z']*[a-z]")
RAREST_ZIPF = 1.0
"""Zipf frequency given to a word wordfreq does not know (1: about once in a hundred million words)."""


def distinctive_words(texts: Iterable[str], limit: int = 24, min_count: int = 2) -> list[str]:
    """Lower-case content words of the KB, most characteristic first: ranked by how much more often the KB
    uses a word than English does (log-odds of its KB share against its general frequency). A word must
    occur `min_count` times, so one passing mention is not a keyword."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(w for w in _LOWER_WORD.findall(text) if w not in STOPWORDS)
    total = sum(counts.values())

    def keyness(word: str) -> float:
        general = zipf_frequency(word, "en", wordlist="small") or RAREST_ZIPF  # zipf = log10 per billion words
        return math.log10(counts[word] / total) - (general - 9)

    frequent = [w for w, count in counts.items() if count >= min_count]
    return sorted(frequent, key=lambda w: (-keyness(w), w))[:limit]


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
    """Whisper prompt for a KB's chunks: names and codes first, then distinctive words. Headings are their own
    sentences so their first words are judged like any sentence opener."""
    texts = [". ".join(c.heading + (c.text,)) for c in chunks]
    names = vocabulary(texts)
    in_names = {word.lower() for name in names for word in name.split()}
    return prompt_hint(names + [w for w in distinctive_words(texts) if w not in in_names])
