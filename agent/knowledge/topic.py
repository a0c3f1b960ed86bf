"""What an answer is about, named in a few of the KB's own words, for a confirmation the caller can say yes or
no to ("Are you asking about the 10-year manufacturer warranty?").

The name must tell this answer apart from its neighbours, or a caller whose question shares the passage's
subject would say yes to the wrong sentence: so it is the answer sentence's most specific phrase, the run of
content words whose words the KB uses least (highest IDF), not the heading it sits under and never the
caller's own words (echoing a misheard question back would get a yes to an answer about something else).
Pure: a sentence and an IDF lookup in, a phrase out.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent.knowledge.text import STOPWORDS, tokens

MAX_WORDS = 4
"""The longest name: a phrase, not a sentence."""
_CLAUSE = re.compile(r"[^,;:.!?()\n]+(?:\.\d[^,;:.!?()\n]*)*")
"""A clause, within one line of a list (chunking.LINE_BREAK)."""
_WORD = re.compile(r"[A-Za-z0-9$][A-Za-z0-9$'/-]*")
_LEADS = frozenset("the a an our your".split())
_BREAKS = frozenset("""is are was were be been am has have had do does did can could will would should may might must
get gets got give gives gave take takes took come comes came go goes went make makes made need needs cost costs
include includes start starts carry carries mean means send sends arrive arrives wear wears keep keeps charge
charged read reads show shows remove refer install installs fit fits
usually also often never always straight away already again still just only
without within around behind across per via unless except next less every each""".split())
"""Words that end a name: the verb after the thing named ("new boilers | come with ..."), adverbs and the
prepositions the stop-word list lacks."""


def name_topic(sentence: str, idf: Callable[[str], float | None], asked: frozenset[str] = frozenset()) -> str:
    """The most specific phrase of `sentence`: of its runs of content words (split at stop words, verbs,
    numbers and punctuation), the one whose words weigh most by IDF, trimmed to MAX_WORDS around its rarest word, with
    "the" before it when the sentence had an article or possessive there. A run made only of the question's own
    tokens (`asked`) is passed over: the caller would say yes to their own words whatever the answer is about
    ("Are you asking about Harbour Road?" to a question about the buses there). '' when no run is left."""
    best: tuple[float, list[str]] = (0.0, [])
    for clause in _CLAUSE.findall(sentence):
        words = _WORD.findall(clause)
        run: list[int] = []
        for i in range(len(words) + 1):
            if i < len(words) and _content(words[i]):
                run.append(i)
                continue
            if run and not set(tokens(" ".join(words[j] for j in run))) <= asked:
                weight, phrase = _weigh([words[j] for j in run], idf)
                lead = ["the"] if run[0] > 0 and words[run[0] - 1].lower() in _LEADS else []
                if weight > best[0]:
                    best = (weight, lead + phrase)
            run = []
    return " ".join(best[1])


def _content(word: str) -> bool:
    """A word a name may hold: not a stop word, verb or adverb, and not a bare number or price (a topic is a
    thing, not a value; a code like ORCHID-47 has letters)."""
    lowered = word.lower()
    return lowered not in STOPWORDS and lowered not in _BREAKS and any(c.isalpha() for c in lowered) \
        and bool(tokens(word))


def _weigh(words: list[str], idf: Callable[[str], float | None]) -> tuple[float, list[str]]:
    """A run's weight (its words' summed IDF) and the run cut to MAX_WORDS, keeping the rarest word."""
    weights = [sum(idf(t) or 0.0 for t in tokens(w)) for w in words]
    if len(words) > MAX_WORDS:
        rarest = max(range(len(words)), key=weights.__getitem__)
        start = min(max(0, rarest - MAX_WORDS // 2), len(words) - MAX_WORDS)
        words, weights = words[start:start + MAX_WORDS], weights[start:start + MAX_WORDS]
    return sum(weights), words
