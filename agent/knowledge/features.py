"""What is measured of each KB sentence against a question, whatever the business: how close it is in meaning,
how much of the question's focus it covers (in itself, its headings or its chunk), whether it holds the kind of
answer, the day or the age asked about, and how it stands to the call's previous turn. Pure: the answerer weighs
these with fitted weights (answer.py, answerer.toml).
"""

from __future__ import annotations

import re
from collections.abc import Hashable

import numpy as np

from agent.knowledge.holds import age_fits, days_covered, holds, limit_fits, states_range
from agent.knowledge.index import Snapshot
from agent.knowledge.question import MONTHS, Question
from agent.knowledge.text import tokens

SENTENCE = ("dense", "dense_context", "chunk_dense", "covered", "covered_heading", "covered_chunk", "lexical",
            "kind", "kind_missed", "address", "day", "day_missed", "age", "topic", "context_covered", "words",
            "rank", "negative", "heading_lexical")
"""The features of one candidate sentence, in order (see sentence_features)."""
IN_HEADING, IN_CHUNK = 0.8, 0.4
"""How far a focus word found in the sentence's headings, or only elsewhere in its chunk, covers it."""
NEGATIVE = re.compile(r"\b(?:no|not|never|cannot|closed|nobody|none)\b|n't\b", re.IGNORECASE)
"""A sentence that says what is not so ("We are closed on Mondays", "There is no parking"): what answers many a
yes/no question."""
STREET_SHARE = 0.25
"""How far a focus word covers it where the passage uses it only in a street's name (holds.street_words): "the
train station" is not what "112 Station Approach" is about."""
OPEN_OR_CLOSED = re.compile(r"\b(?:open|closed?|shut)\b", re.IGNORECASE)
"""A sentence on when the business itself is open: for a month, whatever the question is about."""
SEASON_MONTHS = frozenset(MONTHS)
"""The months, as Question.days names them: a month asked about is answered by the business's season."""
BY_RANGE = 0.5
"""How far a range of days that leaves the asked day out answers a yes/no question about it, on the same thing."""
SCENE_SHARE = 0.4
"""Weight of the scene-setting words ("I use a wheelchair, ...") against the asking clause's."""


def word_weight(token: str, snapshot: Snapshot, specific: float) -> float:
    """A question word's weight: how specific the word is in English (a word any sentence may use, "away", "full",
    names less of what is asked than "boiler" or "helmet"), half of it kept for any word and half by its rarity in
    this KB (a word the KB never uses is as rare as can be: a question about "solar panels" asks for something not
    covered)."""
    idf = snapshot.idf(token)
    rarity = 1.0 if idf is None or snapshot.max_idf <= 0 else min(1.0, max(idf, 0.0) / snapshot.max_idf)
    return specific * (0.5 + 0.5 * rarity)


def weighted_words(asked: Question, snapshot: Snapshot) -> list[tuple[str, float]]:
    """The question's focus and scene words with their weights (scene words at SCENE_SHARE)."""
    return [(token, share * word_weight(token, snapshot, asked.specific.get(token, 1.0)))
            for share, words in ((1.0, asked.focus), (SCENE_SHARE, asked.scene)) for token in words]


FULL_WEIGHT = 0.6
"""The least total weight a question's words need to be covered in full: a question that names only one common
word, or the word the whole KB is about ("climbing" in a climbing centre's KB), is not answered by every sentence that
has it."""


def coverage(words: list[tuple[str, float]], found: dict[str, float]) -> float:
    """Weighted share of the words found (found[token] in 0..1), out of at least FULL_WEIGHT; 0 for no words."""
    total = sum(w for _, w in words)
    return sum(w * found.get(t, 0.0) for t, w in words) / max(total, FULL_WEIGHT) if total else 0.0


def unknown_share(asked: Question, snapshot: Snapshot) -> float:
    """Weighted share of the question's focus the KB never uses at all."""
    words = weighted_words(asked, snapshot)
    return coverage(words, {t: 1.0 for t, _ in words if snapshot.idf(t) is None})


def sentence_features(asked: Question, sentence: str, sentence_tokens: set[str], heading_tokens: set[str],
                      chunk_tokens: set[str], streets: frozenset[str], snapshot: Snapshot, *, dense: float,
                      dense_context: float, chunk_dense: float, lexical: float, heading_lexical: float, on_topic: bool,
                      previous: Question | None, rank: int) -> np.ndarray:
    """One candidate's features, in SENTENCE's order ("address": a where-question, and a sentence with a street
    address). `dense`: the sentence's cosine to the question;
    `dense_context`: to the question with the previous turn; `lexical`: share of the question's IDF in the
    sentence; `heading_lexical`: in the heading it sits under (a FAQ page's question); `streets`: the words its chunk
    uses only in street names; `previous`: the previous
    question when this one follows it up; `rank`: its passage's rank."""
    words = weighted_words(asked, snapshot)
    named = {t: STREET_SHARE if t in streets else 1.0 for t, _ in words}
    in_sentence = {t: named[t] for t, _ in words if t in sentence_tokens}
    in_heading = {t: max(in_sentence.get(t, 0.0), IN_HEADING if t in heading_tokens else 0.0) for t, _ in words}
    in_chunk = {t: max(in_heading[t], IN_CHUNK * named[t] if t in chunk_tokens else 0.0) for t, _ in words}
    held = _held_where_asked(sentence, {t for t, _ in words})
    kinds = asked.kinds - {"age"} if asked.age is not None else asked.kinds
    days = days_covered(sentence) if asked.days else frozenset()
    named = bool(asked.days & days)
    # "Do you deliver on a Sunday?": "We deliver Tuesday to Saturday" says no, if less plainly than a day named; so
    # does the business's season ("We are open from 1 March to 31 October") for coming at all in November.
    about = bool(in_sentence) or bool(asked.days & SEASON_MONTHS and OPEN_OR_CLOSED.search(sentence))
    by_range = bool(asked.polar and days and about and not named and states_range(sentence.lower()))
    context = 0.0
    if previous is not None:
        previous_words = weighted_words(previous, snapshot)
        context = coverage(previous_words, {t: 1.0 for t, _ in previous_words if t in sentence_tokens})
    return np.array([
        dense, dense_context, chunk_dense,
        coverage(words, in_sentence), coverage(words, in_heading), coverage(words, in_chunk), lexical,
        float(bool(kinds & held)), float(bool(kinds) and not kinds & held),
        float("place" in kinds and "address" in held),
        float(named) or BY_RANGE * by_range, float(bool(asked.days) and not named and not by_range),
        limit_stated(asked, sentence),
        float(on_topic), context, min(len(sentence.split()), 60) / 30, 1.0 / (1 + rank),
        float(bool(NEGATIVE.search(sentence))), heading_lexical], dtype=np.float32)


def _held_where_asked(sentence: str, focus: set[str]) -> frozenset[str]:
    """The kinds of answer the sentence gives in the clauses that name what was asked: "Same-day service costs £5
    extra; it is not available for wedding dresses" states no price for a wedding dress."""
    clauses = [c for c in re.split(r";", sentence) if c.strip()]
    if len(clauses) < 2:
        return holds(sentence)
    about = [c for c in clauses if focus & set(tokens(c))]
    return frozenset().union(*(holds(c) for c in (about or clauses)))


def limit_stated(asked: Question, sentence: str) -> float:
    """How the sentence's limits stand to the age or the numbers the caller gave ("age" in SENTENCE): 1 where one
    holds them, 0.5 where it states one that does not, else 0 (holds.age_fits, holds.limit_fits)."""
    fits = [age_fits(sentence, asked.age)] if asked.age is not None else []
    return max(fits + [limit_fits(sentence, number, counted) for number, counted in asked.counts], default=0.0)


def ranges_only_where_no_day_is_named(rows: np.ndarray) -> None:
    """A range of days that leaves the asked day out answers about it only where no sentence on the same thing names
    that day: "On Saturdays the office is open 9 to 1" answers "Is anyone in the office on a Saturday?", and "Monday
    to Friday" then does not. The rows' "day" and "day_missed" are changed in place."""
    day, missed = rows[:, SENTENCE.index("day")], rows[:, SENTENCE.index("day_missed")]
    if ((day >= 1.0) & (rows[:, SENTENCE.index("covered")] > 0)).any():
        by_range = day == BY_RANGE
        day[by_range], missed[by_range] = 0.0, 1.0


def one_age_rule_a_section(sections: list[Hashable], rows: np.ndarray) -> None:
    """Where a section states an age rule that holds the age asked about, its rules for other ages answer nothing:
    "Climbers aged 16 and 17 ..." beside "Under-8s can only climb in the kids' zone" for a five-year-old. A rule
    that does not hold the age still answers where its section has none that does ("aged 18 and over" for a
    16-year-old). A section, not a chunk: a long one is cut into several. `sections`: each row's section; the rows'
    "age" is changed in place."""
    age = rows[:, SENTENCE.index("age")]
    holding = {where for where, fits in zip(sections, age, strict=True) if fits >= 1.0}
    for i, where in enumerate(sections):
        if where in holding and age[i] < 1.0:
            age[i] = 0.0
