"""What callers asked that the KB could not answer, grouped by meaning: the owner's to-do list for kb/.

Pure over questions and their sentence embeddings (the KB's embedder, already loaded). Callers ask one
thing in many words ("do you fit air con?", "can you install air conditioning?"), so questions are
grouped greedily: each joins the group whose centroid it is most similar to, when that similarity
reaches SIMILAR, or starts a group of its own. Most frequent groups first.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

SIMILAR = 0.6
"""Cosine at or above which two questions ask the same thing. MiniLM scores paraphrases ~0.5-0.9 and
unrelated questions below 0.3, but different questions of one shape up to ~0.55 ("do you install solar
panels?" and "... air conditioning units?"): a report that splits one question in two beats one that
merges two."""
EXAMPLES = 5


@dataclass(frozen=True)
class UnansweredQuestion:
    """A turn the agent declined, or asked the caller to repeat."""

    text: str
    call_id: str
    started: float
    outcome: str
    """'declined' or 'asked again'."""


def group_by_meaning(questions: list[UnansweredQuestion], vectors: np.ndarray,
                     similar: float = SIMILAR) -> list[dict]:
    """Groups of questions asking the same thing, most frequent (then most recent) first. `vectors` holds one
    unit-length embedding per question, in order."""
    members: list[list[int]] = []
    sums: list[np.ndarray] = []
    for i in sorted(range(len(questions)), key=lambda i: questions[i].started):
        if sums:
            centroids = np.stack([s / np.linalg.norm(s) for s in sums])
            scores = centroids @ vectors[i]
            best = int(np.argmax(scores))
            if scores[best] >= similar:
                members[best].append(i)
                sums[best] = sums[best] + vectors[i]
                continue
        members.append([i])
        sums.append(vectors[i].astype(np.float64))
    groups = [_describe([questions[i] for i in group]) for group in members]
    return sorted(groups, key=lambda g: (-g["count"], -g["last_ts"]))


def _describe(group: list[UnansweredQuestion]) -> dict:
    latest_first = sorted(group, key=lambda q: -q.started)
    wording = Counter(_normal(q.text) for q in latest_first)  # ties: the most recently asked wording
    by_normal = {_normal(q.text): q.text for q in reversed(latest_first)}  # the latest spelling of each
    outcomes = Counter(q.outcome for q in group)
    return {"question": by_normal[wording.most_common(1)[0][0]], "count": len(group),
            "declined": outcomes["declined"], "asked_again": outcomes["asked again"],
            "first": _date(latest_first[-1].started), "last": _date(latest_first[0].started),
            "last_ts": latest_first[0].started,
            "calls": list(dict.fromkeys(q.call_id for q in latest_first))[:EXAMPLES],
            "variants": list(dict.fromkeys(q.text for q in latest_first))[:EXAMPLES]}


def _normal(text: str) -> str:
    return " ".join(text.lower().strip(" .?!").split())


def _date(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
