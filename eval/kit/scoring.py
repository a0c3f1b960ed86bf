"""Pure text scoring: normalisation for comparison, word/character error rates, and whether a sentence was heard."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from agent.knowledge.text import BRITISH_TO_AMERICAN, sentences

_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def number_to_words(n: int) -> str:
    """Spell a non-negative integer below one billion the way a speaker would."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    for size, word in ((1_000_000, "million"), (1000, "thousand"), (100, "hundred")):
        if n >= size:
            head, rest = divmod(n, size)
            return f"{number_to_words(head)} {word}" + ("" if rest == 0 else " " + number_to_words(rest))
    raise AssertionError("unreachable")


def _spell_number(match: re.Match[str]) -> str:
    digits = match.group(0)
    if len(digits) > 9:
        return " ".join(_ONES[int(d)] for d in digits)
    return number_to_words(int(digits))




NUMBER_IN_GROUPS = re.compile(r"\b0\d{1,8}(?:(?:[ -]|, ?)\d{1,8}){1,3}\b")
"""A phone number as the UK and much of Europe write it, in groups after a leading 0 ("01392 665 140"): Whisper
groups the digits it hears its own way ("013-92665140", "016-32-960, 562" where the agent paused), the same
number."""


def _joined(number: str) -> str:
    digits = re.sub(r"[ ,-]", "", number)
    return digits if len(digits) >= 7 else number


NUMBER_RANGE = re.compile(r"(?<![\d-])(\d{1,3})\s?[-–]\s?(\d{1,3})(?![\d-])")
"""A range written with a dash ("5-7 working days", "Apr 8–15"), as it is said: "five to seven"."""


CURRENCY = re.compile(r"\b(?:pounds?|pence|dollars?|cents?|euros?)\b|(?<=\d)\s?p\b")
"""A currency's words, dropped as its symbols are: Piper says "£45" and Whisper writes what it heard as "£45",
"45 pounds" or "pound 45", one amount each way."""


def normalize(text: str) -> str:
    """Lower case, currency symbols and words dropped, digits spelled out, a.m./p.m. as am/pm, sq ft and sq m as
    said (knowledge.speakable), British spellings folded, punctuation removed, whitespace collapsed."""
    text = text.lower().replace("%", " percent ").replace("&", " and ")
    text = re.sub(r"(?<![a-z])([ap])\.?\s?m\b\.?", r" \1m ", text)
    text = re.sub(r"\bsq\.?\s?ft\b\.?", " square feet ", re.sub(r"\bsq\.?\s?m\b\.?", " square metres ", text))
    text = CURRENCY.sub(" ", text)
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text)  # 1,000 -> 1000
    text = NUMBER_IN_GROUPS.sub(lambda m: _joined(m.group()), text)
    text = NUMBER_RANGE.sub(r"\1 to \2", text)
    text = re.sub(r"\d+", lambda m: f" {_spell_number(m)} ", text)
    text = re.sub(r"[^a-z' ]+", " ", text).replace("-", " ")
    text = re.sub(r"(?<![a-z])'|'(?![a-z])", " ", text)
    return " ".join(BRITISH_TO_AMERICAN.get(word, word) for word in text.split())


PHRASE_SPELLINGS = {"storey": "story", "storeys": "stories"}
"""More of Whisper's American spellings of what a KB spells the British way."""
ARTICLES = frozenset({"a", "an", "the"})


def phrase(text: str) -> str:
    """`normalize`d for finding an expected phrase in what was heard: articles and apostrophes dropped too (the
    scorer's Whisper heard "plus a £3 processing fee" as "plus the three pounds processing fee", "DVDs" as "DVD's")."""
    words = normalize(text).replace("'", "").split()
    return " ".join(PHRASE_SPELLINGS.get(word, word) for word in words if word not in ARTICLES)


def _cells_in_one_sentence(text: str, cells: list[str]) -> bool:
    for sentence in sentences(text):
        haystack, start = f" {phrase(sentence)} ", 0
        for cell in cells:
            found = haystack.find(f" {cell} ", start)
            if found < 0:
                break
            start = found + len(cell) + 1
        else:
            return True
    return False


def contains_any(text: str, expected: tuple[str, ...]) -> bool:
    """An expected string appears in the text, after normalising case, punctuation, numbers and articles (`phrase`).
    One written as a table row ("Saturday | 09:00") is right where its cells appear in that order within one
    sentence: the whole table read as one, or the row read alone under its column names ("Saturday: Open 09:00,
    Close 20:00")."""
    haystack = f" {phrase(text)} "
    return any(f" {phrase(e)} " in haystack or _as_one_word(phrase(e), haystack) or
               ("|" in e and _cells_in_one_sentence(text, [phrase(cell) for cell in e.split("|")]))
               for e in expected)


def _as_one_word(wanted: str, haystack: str) -> bool:
    """An expected phrase of several words, heard with a compound written as one word or two ("multi-storey" as
    "Multistory", "car park" as "carpark"): the same words, spaces aside, starting and ending at words."""
    if " " not in wanted:
        return False
    joined, words = wanted.replace(" ", ""), haystack.split()
    bare, cuts, at = "".join(words), {0}, 0
    for word in words:  # where each heard word ends, in the text without spaces
        at += len(word)
        cuts.add(at)
    return any(bare.startswith(joined, start) and start + len(joined) in cuts for start in cuts)


def _edit_distance(reference: list[str], hypothesis: list[str]) -> int:
    previous = list(range(len(hypothesis) + 1))
    for i, ref in enumerate(reference, 1):
        current = [i]
        for j, hyp in enumerate(hypothesis, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref != hyp)))
        previous = current
    return previous[-1]


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Word edits (substitutions, insertions, deletions) per reference word, after normalisation."""
    ref, hyp = normalize(reference).split(), normalize(hypothesis).split()
    if not ref:
        return 0.0 if not hyp else 1.0
    return _edit_distance(ref, hyp) / len(ref)


def char_error_rate(reference: str, hypothesis: str) -> float:
    """Character edits per reference character, after normalisation."""
    ref, hyp = list(normalize(reference)), list(normalize(hypothesis))
    if not ref:
        return 0.0 if not hyp else 1.0
    return _edit_distance(ref, hyp) / len(ref)


SAID = 0.6
"""The share of a sentence's words a caller must hear, in runs of two or more in the sentence's order, for the
sentence to count as heard: chosen on the bundled KB's lines and checked on eval.bench's reports (docs/runs.md,
"The test suite")."""


def heard_said(heard_text: str, sentence: str) -> bool:
    """Whether a caller heard `sentence`, one of the agent's lines or its KB's, in `heard_text`: tiny.en
    mishears a word or two of a sentence ("Tuesday to Saturday" as "two states a saturday", "Quarry Lane" as
    "encoree lane"), so a test asks for most of its words rather than an exact phrase."""
    words = normalize(sentence).split()
    runs = SequenceMatcher(None, normalize(heard_text).split(), words, autojunk=False).get_matching_blocks()
    return sum(run.size for run in runs if run.size >= 2) >= SAID * len(words)
