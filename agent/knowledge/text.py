"""Pure text helpers shared by chunking, retrieval and answering: sentences, tokens, Markdown inline."""

from __future__ import annotations

import re
from functools import lru_cache

from py_rust_stemmers import SnowballStemmer
from wordfreq import zipf_frequency

STOPWORDS = frozenset("""
a about above after again all also am an and any are as at be because been before being below between both but by
can could did do does doing don down during each few for from further had has have having he her here hers him his
how i if in into is it its itself just let me might more most must my no nor not now of off on once only or other
our ours out over own please same shall she should so some such than that the their them then there these they
this those through to too under until up very was we were what when where which while who whom why will with would
you your yours yourself can't i'm i'd i've it's don't what's there's you're we're isn't aren't doesn't didn't
won't wouldn't couldn't shouldn't haven't hasn't hadn't wasn't weren't mustn't i'll you'll we'll they'll he's she's
they're we've you've they've that's who's where's how's let's
""".split())

_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70",
                      "eighty": "80", "ninety": "90", "hundred": "100"})

BRITISH_TO_AMERICAN = {"cheque": "check", "cheques": "checks", "colour": "color", "centre": "center",
                      "litre": "liter", "metre": "meter", "programme": "program", "favour": "favor",
                      "licence": "license", "organise": "organize", "cancelled": "canceled"}
"""Speech recognisers write American spellings; a KB may not ("cheque" is heard as "check")."""

# Abbreviations after which a full stop does not end a sentence.
_NO_BREAK_AFTER = frozenset("mr mrs ms dr st no nos vs approx e.g i.e etc fig inc ltd co jr sr".split())
_SENTENCE_END = re.compile(r"""([.!?]+["')\]]*)\s+(?=["'(\[]?[A-Z0-9$])""")
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def sentences(text: str, lines: bool = False) -> list[str]:
    """Split prose into sentences, keeping abbreviations, decimals and times (8 a.m. to 6 p.m.) intact; with
    `lines`, the line breaks inside a sentence stay, one or two (a chunk's list items, chunking.LINE_BREAK)."""
    if lines:
        text = re.sub(r" ?\n ?", "\n", re.sub(r"[^\S\n]+", " ", text).strip())
        text = re.sub(r"\n{3,}", "\n\n", text)
    else:
        text = " ".join(text.split())
    out: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        before = text[start:match.end(1)]
        last_word = before.rsplit(" ", 1)[-1].rstrip(".!?\"')]").lower()
        if match.group(1).startswith(".") and last_word in _NO_BREAK_AFTER:
            continue
        out.append(text[start:match.end(1)].strip())
        start = match.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


@lru_cache(maxsize=1)
def _stemmer() -> SnowballStemmer:
    return SnowballStemmer("english")


IRREGULAR = {"lost": "lose", "paid": "pay", "left": "leave", "took": "take", "taken": "take", "gave": "give",
             "given": "give", "sold": "sell", "bought": "buy", "broke": "break", "broken": "break", "kept": "keep",
             "brought": "bring", "sent": "send", "spent": "spend", "went": "go", "gone": "go", "came": "come",
             "built": "build", "held": "hold", "met": "meet", "ran": "run", "told": "tell", "children": "child",
             "people": "person", "men": "man", "women": "woman", "teeth": "tooth", "feet": "foot", "mice": "mouse",
             "membership": "member", "memberships": "member"}
"""Irregular forms a stemmer leaves apart from their word ("lost" from "lose", "children" from "child"), and being a
member, which is what "Membership costs £30" prices for "How much is it to be a member?"."""


@lru_cache(maxsize=65536)
def _normal_form(word: str) -> str:
    word = IRREGULAR.get(word, word)
    return _NUMBER_WORDS.get(word) or _stemmer().stem_word(BRITISH_TO_AMERICAN.get(word, word))


WORD = re.compile(r"[A-Za-z0-9]+")
"""A word for phrase matching: hyphens and apostrophes split ("call-out" is "call out")."""


def stem_words(text: str) -> list[str]:
    """Every word of the text in normal form (stop words kept), one per WORD match, for matching phrases."""
    return [_normal_form(w.lower()) for w in WORD.findall(text)]


def tokens(text: str) -> list[str]:
    """Normalised content tokens: lower case, stop words dropped, number words as digits, stemmed."""
    return [token for token, _ in content_words(text)]


_PARTICLE_VERB = re.compile(r"\b(check|log|sign)(?:-| )?(in|out)\b")
"""Where the particle is the meaning ("check in" and "check out" are opposites): one word, as "checkin" and
"checkout", not "check" beside a stop word."""


def content_words(text: str) -> list[tuple[str, str]]:
    """Each content word as (its token, the word as written, lower case): see `tokens`."""
    out = []
    for word in _TOKEN.findall(_PARTICLE_VERB.sub(r"\1\2", text.lower().replace("’", "'"))):
        word = word.removesuffix("'s")
        if word in STOPWORDS or (len(word) == 1 and not word.isdigit()):
            continue
        out.append((_normal_form(word), word))
    return out


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*{1,3}|~~)(\S(?:.*?\S)?)\1")
_CODE = re.compile(r"`+([^`]*)`+")
_HTML = re.compile(r"</?[a-zA-Z][^>]*>")


def strip_inline_markdown(line: str) -> str:
    """Markdown inline syntax to the words a listener should hear."""
    line = _LINK.sub(r"\1", line)
    line = _CODE.sub(r"\1", line)
    line = _EMPHASIS.sub(r"\2", line)
    line = _HTML.sub("", line)
    return line.replace("\\", "")


_QUESTION_OPENERS = frozenset("""
what what's whats when where which who whom whose why how do does did can could will would is are was were should
shall may might have has am any anything and or so isn't aren't don't doesn't can't won't
""".split())
_END_MARKS = re.compile(r"[\s.?!…,;:]+$")


def as_asked(text: str) -> str:
    """The utterance with the end mark its last sentence calls for: '?' after a question, '.' after anything
    else. Whisper ends the same question with '?', '.' or '...' from one decode to the next, and the embedder
    scores them differently: near the abstention threshold, enough to decide whether it is answered."""
    body = _END_MARKS.sub("", text)
    if not body:
        return text.strip()
    last = re.split(r"[.?!]\s+", body)[-1].split()
    return body + ("?" if last and last[0].lower().strip("\"'") in _QUESTION_OPENERS else ".")


COMMON_ZIPF, RARE_ZIPF = 6.3, 3.5
"""wordfreq's Zipf scale: a word at COMMON_ZIPF or above ("make", "day") says next to nothing about a subject
(specificity 0.2), one at RARE_ZIPF or below ("boiler", "hygienist") all it can (1), linearly between."""


def load_word_frequencies() -> None:
    """Read wordfreq's English list now (tens of MiB of Python objects), not at a caller's first question."""
    zipf_frequency("the", "en")


@lru_cache(maxsize=65536)
def specificity(word: str) -> float:
    """How much a word names a subject, 0.2..1, from how common it is in English."""
    zipf = zipf_frequency(word, "en")
    if zipf == 0:
        return 1.0  # a code or a name English never uses: as specific as it gets
    return min(1.0, max(0.2, 1.0 - 0.8 * (zipf - RARE_ZIPF) / (COMMON_ZIPF - RARE_ZIPF)))
