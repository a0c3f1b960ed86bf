"""Which sentences are said together: the best one, and a neighbour in its passage that scores almost as well or
that the best one needs (the age rule it lacks; what applies beyond a limit the caller is past; the sentence it
measures itself by; what is so, after what is not). Pure, on scored sentences.
"""

from __future__ import annotations

import re

import numpy as np

from agent.knowledge.answer import ScoredSentence
from agent.knowledge.features import SENTENCE

AFTER_NEGATIVE_MARGIN = 1.0
"""How much less the sentence after one that says what is not so may score and still join it."""
SECOND_SENTENCE_RATIO = 0.85
"""A neighbouring sentence joins the answer when its weight (exp of its score) is at least this share of the best
one's."""
REFERS_BACK = re.compile(r"\b(?:less|more|shorter|longer) notice\b|\b(?:after|before|beyond|later than|earlier than|"
                         r"more than|less than) (?:that|this|then)\b", re.IGNORECASE)
"""A sentence that measures itself by the one before it ("with less notice", "before then"), in its first clause:
after a comma or a semicolon, "later than that" points back within the sentence."""
OUTSIDE_THE_LIMIT = 0.5
"""features.limit_stated of a sentence stating a limit the caller's age or number falls outside."""


def choose(scored: list[ScoredSentence]) -> list[ScoredSentence]:
    """The best sentence, and the neighbour in its passage that joins it (see the module's docstring), if any."""
    if not scored:
        return []
    best = max(scored, key=lambda s: s.score)
    chosen = [best]
    neighbours = [s for s in scored if abs(s.candidate.position - best.candidate.position) == 1
                  and s.candidate.passage is best.candidate.passage]
    if neighbours:
        runner_up = max(neighbours, key=lambda s: s.score)
        after = [s for s in neighbours if s.candidate.position == best.candidate.position + 1]
        before = [s for s in neighbours if s.candidate.position == best.candidate.position - 1]
        age_rules = [s for s in neighbours if _has(s, "age")]
        if np.exp(runner_up.score - best.score) >= SECOND_SENTENCE_RATIO:
            chosen.append(runner_up)
        elif age_rules and not _has(best, "age"):
            # "Yes, we have two courtesy cars ... Drivers must be over 25 ...": the caller gave an age, and the rule
            # next to the answer decides it.
            chosen.append(age_rules[0])
        elif after and _value(best, "age") == OUTSIDE_THE_LIMIT:
            # "... anywhere within five miles at no extra cost. Further out, we charge £5": the caller's number is
            # beyond the limit the answer states, and owners say what applies beyond it next.
            chosen.append(after[0])
        elif before and REFERS_BACK.search(re.split(r"[;,]", best.candidate.text, maxsplit=1)[0]):
            # "Please give us at least 24 hours' notice. Appointments cancelled with less notice are charged in
            # full.": the answer measures itself by the sentence before, which the caller needs too.
            chosen.append(before[0])
        elif (_has(best, "negative") and after and after[0].score >= best.score - AFTER_NEGATIVE_MARGIN
              and not _has(after[0], "kind_missed")):
            # "There is no parking at the practice itself. The car park on Mill Street ...": owners follow what is
            # not so with what is, and the caller needs both.
            chosen.append(after[0])
    return sorted(chosen, key=lambda s: s.candidate.position)


def _value(scored: ScoredSentence, feature: str) -> float:
    """A sentence's feature: "negative", it says what is not so; "age", how a limit it states stands to the age or
    number the caller gave (features.limit_stated)."""
    return 0.0 if scored.features is None else float(scored.features[SENTENCE.index(feature)])


def _has(scored: ScoredSentence, feature: str) -> bool:
    return bool(_value(scored, feature))
