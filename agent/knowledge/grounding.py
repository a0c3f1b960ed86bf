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
    text = text.replace("%", " percent ")
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
            unit = normal[i + 1] if i + 1 < len(normal) and normal[i + 1] in _UNITS.values() else None
            found.append(Fact((token, unit) if unit else (token,), f"{token} {unit}" if unit else token))
        elif token in _NAMED:
            found.append(Fact((token,), token))
    words = re.findall(r"[A-Za-z][A-Za-z'’.-]*", sentence)
    for position, word in enumerate(words):
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
    held_words = set(held)
    missing = []
    for fact in facts(sentence):
        if len(fact.tokens) == 1:
            ok = fact.tokens[0] in held_words
        else:
            n = len(fact.tokens)
            ok = any(tuple(held[i:i + n]) == fact.tokens for i in range(len(held) - n + 1))
        if not ok:
            missing.append(fact.written)
    return list(dict.fromkeys(missing))


def declines(text: str) -> bool:
    """The writer says it does not know or the passages do not say (the KB's own judgement is asked instead)."""
    return bool(_DECLINE.search(text))
