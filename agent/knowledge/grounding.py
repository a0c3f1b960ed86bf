"""Is a sentence someone else wrote (a language model) supported by the passages it was given? Pure functions.

The rule is narrow on purpose: every fact a caller could act on — a number, price, time, date, phone number,
code or proper noun — must appear in the passages. Both sides are normalised first, so the same fact written
two ways matches ("$25" = "25 dollars" = "twenty-five dollars", "9am" = "9 a.m." = "9:00 AM"). What it cannot
judge (a "no" where the passage says "yes") stays the prompt's job; what it does judge is never spoken unless
the KB holds it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from wordfreq import zipf_frequency

from agent.knowledge.text import STOPWORDS, sentences, tokens

_UNITS = {"dollar": "dollar", "dollars": "dollar", "cent": "cent", "cents": "cent", "percent": "percent",
          "am": "am", "pm": "pm", "minute": "minute", "minutes": "minute", "min": "minute", "mins": "minute",
          "hour": "hour", "hours": "hour", "hr": "hour", "hrs": "hour", "day": "day", "days": "day",
          "week": "week", "weeks": "week", "month": "month", "months": "month", "year": "year", "years": "year",
          "pound": "pound", "pounds": "pound", "euro": "euro", "euros": "euro", "mile": "mile", "miles": "mile",
          "kilometre": "km", "kilometres": "km", "kilometer": "km", "kilometers": "km", "km": "km"}
"""What a number counts: kept with the number, so "9 pm" does not pass on a passage's "9 am"."""

_ONES = {w: i for i, w in enumerate("zero _ two three four five six seven eight nine ten eleven twelve thirteen "
                                    "fourteen fifteen sixteen seventeen eighteen nineteen".split()) if w != "_"}
_TENS = {w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split())
         if w != "_"}
# "one" stays a word: "the one by the door" is not a number a caller acts on.

_NAMED = frozenset("monday tuesday wednesday thursday friday saturday sunday january february march april may june "
                   "july august september october november december".split()) - {"may", "march"}
"""Days and months checked in any case ("may" and "march" are verbs too often)."""

_NOT_NAMES = frozenset("i i'm i'll i've i'd ok okay mr mrs ms dr".split())
COMMON_ZIPF = 4.0
"""A capitalised first word of a sentence is taken for a name only when rarer than this (wordfreq's Zipf scale:
"Parking" 4.5 is a word, "Springfield" 3.8 a name)."""

_DECLINE = re.compile(
    r"\bi (?:do not|don't|can ?not|can't|am not able to|'m not able to) (?:know|find|answer|say|tell|help|see)|"
    r"\b(?:not|isn't|is not) (?:sure|mentioned|stated|specified|provided|given|listed|included)\b|"
    r"\bno (?:information|details|mention)\b|"
    r"\b(?:don't|do not) have (?:any |that |this |the |enough )?(?:information|details|data)\b|"
    r"\b(?:passages?|context|text|information provided) (?:does not|doesn't|do not|don't)\b|"
    r"\bnot in the (?:passages?|context|text|information)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Fact:
    """One checkable thing a sentence says, as normalised tokens, and how it was written."""

    tokens: tuple[str, ...]
    written: str


def normalise(text: str) -> list[str]:
    """Lower-case word and number tokens, with money, times, ordinals, thousands separators and number words in
    one form: "$1,250.50" -> 1250 dollar 50 cent; "9:00 a.m." -> 9 am; "3rd" -> 3; "twenty-five" -> 25."""
    text = re.sub(r"\$\s?(\d[\d,]*)(?:\.(\d{2}))?",
                  lambda m: f" {m.group(1)} dollars" + (f" {m.group(2)} cents" if m.group(2) not in (None, "00")
                                                         else ""), text)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = re.sub(r"\b(\d{1,2}):00\b", r"\1", text)
    text = re.sub(r"(\d)\s*([ap])\.?\s?m\b\.?", r"\1 \2m", text, flags=re.IGNORECASE)
    text = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", r"\1", text, flags=re.IGNORECASE)
    text = re.sub(r"(\d)\.(\d)", r"\1 point \2", text)
    text = text.replace("%", " percent ")
    text = re.sub(r"\b(dollars?|cents?|percent|pounds?|euros?)\s+(?:a|an|per|each|every)\s+(month|week|year|day|hour|"
                  r"visit)s?\b", r"\1 per \2", text, flags=re.IGNORECASE)  # "$12 a month" is a price per month
    words = re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.lower().replace("’", "'"))
    out: list[str] = []
    after_tens = False
    for word in words:
        digit = 1 if word == "one" else _ONES.get(word, 10)
        if after_tens and digit < 10:
            out[-1] = str(int(out[-1]) + digit)  # "twenty-five"
        elif word in _ONES:
            out.append(str(_ONES[word]))
        elif word in _TENS:
            out.append(str(_TENS[word]))
        elif word.endswith("s") and word[:-1] in _NAMED:
            out.append(word[:-1])  # "on Saturdays"
        else:
            out.append(_UNITS.get(word, word))
        after_tens = word in _TENS
    return out


def facts(sentence: str) -> list[Fact]:
    """The checkable facts of one sentence: each number with the unit after it, each name, day, month and code."""
    found: list[Fact] = []
    normal = normalise(sentence)
    for i, token in enumerate(normal):
        if token.isdigit():
            # What the number counts goes with it ("15 psi" does not pass on "1.5 bar"), unless it is a mere word
            # ("12 and 15").
            after = normal[i + 1] if i + 1 < len(normal) else ""
            unit = after if after and not after.isdigit() and (after in _UNITS.values() or after not in STOPWORDS) \
                else None
            fact = (token, unit) if unit else (token,)
            if unit and normal[i + 2:i + 3] == ["per"] and len(normal) > i + 3:
                fact += ("per", normal[i + 3])  # a rate: "12 dollar per month"
            found.append(Fact(fact, " ".join(fact)))
        elif token in _NAMED or (re.search(r"\d", token) and re.search(r"[a-z]", token)):
            found.append(Fact((token,), token))  # a day, a month, a code such as F28
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9'’.-]*", sentence)
    for position, word in enumerate(words):
        if re.search(r"\d", word):
            continue  # numbers and codes are counted above
        word = re.sub(r"['’]s$", "", word).strip(".-'’")
        lowered, normal = word.lower(), tuple(normalise(word))
        if not word or not word[0].isupper() or lowered in _NOT_NAMES or set(normal) <= _NAMED:
            continue  # days and months are counted above, in any case
        if position == 0 and not word.isupper() and _common(lowered):
            continue
        found.append(Fact(normal, word))
    return [f for f in found if f.tokens]


@lru_cache(maxsize=4096)
def _common(word: str) -> bool:
    return zipf_frequency(word, "en") >= COMMON_ZIPF


def unsupported(sentence: str, passages: str) -> list[str]:
    """The facts of `sentence` that `passages` do not hold, as written (empty: the sentence may be spoken)."""
    held = normalise(passages)
    return list(dict.fromkeys(f.written for f in facts(sentence) if not _holds(held, f)))


def _holds(normal: list[str], fact: Fact) -> bool:
    """The fact's tokens appear, in a row, among normalised tokens."""
    n = len(fact.tokens)
    return any(tuple(normal[i:i + n]) == fact.tokens for i in range(len(normal) - n + 1))


MIN_SUPPORT = 0.75
"""Share of a sentence's content words (stemmed, stop words aside) that must be the passages' own: a sentence
built of other words ("a free upgrade to a 24-hour gym") is the writer's, not the KB's."""

MIN_ANSWER_SHARE = 0.6
"""Share of each sentence of a phrased answer that must be the KB answer's own words: the passages also hold the
facts next to the answer, and a small model readily answers with those instead."""

_CONVERSATIONAL = re.compile(r"\b(?:yes|yeah|sure|okay|ok|certainly|absolutely|of course|indeed|glad|happy|"
                             r"welcome|thanks?|thank you|please|great|good news)\b", re.IGNORECASE)
"""Words a speaker adds around a fact, not facts; they need no support."""

_NEGATION = re.compile(r"\b(?:no|not|never|cannot|none|nothing|without)\b|n't\b", re.IGNORECASE)


def support(sentence: str, passages: str) -> float:
    """Share of the sentence's content words found in the passages (1.0 for a sentence without any)."""
    words = tokens(" ".join(normalise(_CONVERSATIONAL.sub(" ", sentence))))
    held = set(tokens(" ".join(normalise(passages))))
    return sum(w in held for w in words) / len(words) if words else 1.0


def contradicts(sentence: str, passages: str) -> bool:
    """The sentence is negated where the passage sentence closest to it is not, or the other way round ("No, you
    can't spread the cost" beside "You can spread the cost over 12 months")."""
    words = set(tokens(sentence))
    if not words:
        return False
    closest = max(sentences(passages), key=lambda p: len(words & set(tokens(p))), default="")
    return bool(_NEGATION.search(sentence.replace("’", "'"))) != bool(_NEGATION.search(closest.replace("’", "'")))


def key_facts(text: str) -> list[Fact]:
    """The numbers, times, prices, days and codes of a text (not its names): what an answer is for."""
    return [f for f in facts(text) if any(t.isdigit() or t in _NAMED or re.search(r"\d", t) for t in f.tokens)]


def judge(sentence: str, passages: str, answer: str = "", question: str = "", first: bool = False) -> str:
    """Why `sentence` must not be spoken given the passages it was written from ('' when it may): a decline, a
    fact they lack, wording that is not theirs, or a negation they do not make. With `answer` (the KB's own
    answer): it must be about that answer, mostly in its words, with no number, time, price, day or code the
    answer does not state (a small model readily pins a passage's other figure on the answer's subject: "15%
    off" for the code worth $30), and the `first` sentence must state one of those of the answer's first sentence
    when it has any. With `question`: it must say more than the question."""
    if declines(sentence):
        return "declined"
    missing = unsupported(sentence, passages)
    if missing:
        return "unsupported: " + ", ".join(missing)
    share = support(sentence, passages)
    if share < MIN_SUPPORT:
        return f"wording not in the passages ({share:.0%})"
    if contradicts(sentence, passages):
        return "negation not in the passages"
    if question and support(sentence, question) == 1.0:
        return "repeats the question"
    if answer:
        stated = key_facts(sentence)
        beyond = [f.written for f in stated if not _holds_any(answer, [f])]
        if beyond:
            return "not in the answer: " + ", ".join(dict.fromkeys(beyond))
        cut = [g.written for f in stated for g in key_facts(answer)
               if len(g.tokens) > len(f.tokens) and g.tokens[:len(f.tokens)] == f.tokens
               and not any(h.tokens == g.tokens for h in stated)]
        if cut:
            return "drops part of a fact: " + ", ".join(dict.fromkeys(cut))  # "$12" for "$12 a month"
        share = support(sentence, answer)
        if share < MIN_ANSWER_SHARE:
            return f"strays from the answer ({share:.0%})"
        wanted = key_facts(sentences(answer)[0]) if first else []
        if wanted and not _holds_any(sentence, wanted):
            return "misses the answer (" + ", ".join(f.written for f in wanted) + ")"
    return ""


def _holds_any(sentence: str, wanted: list[Fact]) -> bool:
    normal = normalise(sentence)
    return any(_holds(normal, f) for f in wanted)


def declines(text: str) -> bool:
    """The writer says it does not know or the passages do not say (the KB's own judgement is asked instead)."""
    return bool(_DECLINE.search(text))
