"""The extractive answerer: speaks the best one or two KB sentences verbatim, or says it doesn't know.

Every word of an answer comes from a retrieved passage. Each sentence is measured against the question
(features.py: closeness in meaning, how much of the question's focus it covers, whether it holds the kind of
answer asked for, the day or the age asked about, how it stands to the previous turn), and the sentence whose
measures weigh most is chosen. Whether to answer with it at all is a second judgement, on the chosen sentence and
on the question as a whole (does anything retrieved cover what it is about? does it name things the KB never
uses?): the probability that the answer is right. Below a threshold the agent declines rather than read an
unrelated sentence. Both sets of weights are fitted on the development KBs (answerer.toml, eval.fit_answerer),
never by looking at the test KBs.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np

from agent.knowledge.features import (
    SENTENCE,
    one_age_rule_a_section,
    ranges_only_where_no_day_is_named,
    sentence_features,
    unknown_share,
)
from agent.knowledge.holds import place_names, street_words
from agent.knowledge.index import Snapshot
from agent.knowledge.lines import asked_lines
from agent.knowledge.memory import Query, opens_follow_up
from agent.knowledge.overrules import overrule
from agent.knowledge.question import Question, analyse, matched_tokens
from agent.knowledge.retrieval import Passage
from agent.knowledge.text import tokens

ABSTAIN_TEXT = "Sorry, I don't have information about that."
WEIGHTS_FILE = Path(__file__).with_name("answerer.toml")
DECISION = ("score", "margin", "dense", "chunk_dense", "covered_chunk", "kind", "kind_missed", "address", "day",
            "day_missed", "age", "topic", "context_covered", "best_covered_chunk", "unknown", "has_focus", "follow_up",
            "dense_agrees", "covered_agrees")
"""What the judgement to answer or decline weighs (see decision_features): "dense_agrees" and "covered_agrees" say
whether the chosen sentence is also the closest in meaning, and the one covering most of the question's focus."""


@dataclass(frozen=True)
class Weights:
    select: np.ndarray
    """One per features.SENTENCE: a sentence's score is their weighted sum."""
    decide: np.ndarray
    """One per DECISION, then the bias: the log-odds that the chosen sentence answers the question."""
    abstain_below: float
    """The probability below which the answerer declines (its evidence then falls below the KB's threshold)."""
    firm_from: float
    """The probability from which an answer is firm (evidence at understand.FIRM_EVIDENCE)."""

    @property
    def confirming(self) -> float:
        """A probability halfway between declining and answering outright: the answer is confirmed first."""
        return (self.abstain_below + self.firm_from) / 2


@cache
def weights(path: Path = WEIGHTS_FILE) -> Weights:
    data = tomllib.loads(path.read_text())
    return Weights(np.array([data["select"][name] for name in SENTENCE], dtype=np.float32),
                   np.array([data["decide"][name] for name in (*DECISION, "bias")], dtype=np.float32),
                   float(data["evidence"]["abstain_below"]), float(data["evidence"]["firm_from"]))


def evidence(probability: float, fitted: Weights, abstain_at: float = 0.35, firm_at: float = 0.45) -> float:
    """The probability that the answer is right, on the scale the KB's threshold and the call path's are set on:
    0 stays 0, `abstain_below` becomes `abstain_at` (the KB's default threshold), `firm_from` becomes `firm_at`
    (understand.FIRM_EVIDENCE), 1 stays 1, linearly between: so "just short of the threshold" (understand.NEAR_MISS,
    0.8 of it) means just short in probability too."""
    points = ((0.0, 0.0), (fitted.abstain_below, abstain_at), (fitted.firm_from, firm_at), (1.0, 1.0))
    return float(np.interp(probability, [p for p, _ in points], [e for _, e in points]))


def answer_kinds(question: str) -> list[str]:
    """Kinds of answer a question asks for ("money", "time", ...), possibly none."""
    return sorted(analyse(question).kinds)


@dataclass(frozen=True)
class Candidate:
    """One sentence of a retrieved passage."""

    text: str
    vector: np.ndarray
    passage: Passage
    chunk_index: int
    position: int
    """Order of the sentence among all candidates (document order within a passage)."""


@dataclass(frozen=True)
class ScoredSentence:
    candidate: Candidate
    score: float
    dense: float
    lexical: float
    """How much of the question's focus the sentence covers (features.coverage)."""
    evidence: float
    """Support for answering with this sentence, compared with the abstention threshold (the best one's)."""
    own_evidence: float
    """The same support without the call's context: what the question's own words find here."""
    features: np.ndarray | None = None
    heard_evidence: float | None = None
    """The best's support from the question as heard, no rewording searched beside it (soundalike put back "parking"
    for "croaking"); None where no word was put back by sound."""


def candidates(snapshot: Snapshot, passages: list[Passage], excluded: frozenset[str] = frozenset()
               ) -> list[Candidate]:
    """Every sentence of the passages, but those of the `excluded` chunks."""
    out = []
    for passage in passages:
        for index in passage.chunk_indices:
            chunk = snapshot.chunks[index]
            if chunk.chunk.id in excluded:
                continue
            for sentence, vector in zip(chunk.sentences, chunk.sentence_vectors, strict=True):
                out.append(Candidate(sentence, vector, passage, index, len(out)))
    return out


def lexical_overlap(question_tokens: list[str], sentence_tokens: set[str], snapshot: Snapshot) -> float:
    """Share of the question's IDF weight that the sentence contains (0..1); a word the KB never uses weighs like
    its rarest one."""
    weights_ = {t: max(idf, 0.1) if (idf := snapshot.idf(t)) is not None else snapshot.max_idf
                for t in question_tokens}
    total = sum(weights_.values())
    return sum(w for t, w in weights_.items() if t in sentence_tokens) / total if total else 0.0


def _similarity(vector: np.ndarray, *queries: np.ndarray | None) -> float:
    return max(float(vector @ q) for q in queries if q is not None)


def kinds_in_context(asked: Question, query: Query, earlier: Question | None) -> Question:
    """The question with the kind of answer the previous one asked for, where it follows it up asking for none of
    its own: "And the hygienist?" after "how much is a check-up?" asks the same kind of thing about another one;
    "can I cancel it?" after it asks a yes or no of its own."""
    if earlier is None or asked.kinds or asked.polar or not (query.follow_up or opens_follow_up(query.question)):
        return asked
    return replace(asked, kinds=earlier.kinds)


def measure(snapshot: Snapshot, cands: list[Candidate], question_vector: np.ndarray,
            expanded_vector: np.ndarray | None, query: Query, recovered_vector: np.ndarray | None = None,
            with_context: bool = True) -> tuple[Question, np.ndarray]:
    """The question analysed and each candidate's features (one row each). The recovered question (the caller's
    words in the KB's: "fix" as "repair") counts where it matches better than the transcript, measure by measure;
    without `with_context` the previous turn is left out, as if the question were the call's first."""
    earlier = analyse(query.previous) if with_context and query.previous else None
    own = analyse(query.question)
    heard = kinds_in_context(own, query, earlier)
    recovered = kinds_in_context(analyse(query.recovered), query, earlier) if query.recovered else None
    previous = None
    # "How long is it?" asks its own kind of answer of what was just said: the sentences naming that are not marked
    # down for covering the previous question's words, since the one that said it may hold the answer too. Not a
    # yes/no question: "Can I pay for it monthly?" after a quote asks something the quote does not say.
    if earlier is not None and query.follow_up and not (own.kinds and not own.focus and not own.polar):
        # What the follow-up names replaces what the previous question named: "and on Saturday?" asks about
        # another day.
        previous = replace(earlier, days=frozenset() if heard.days else earlier.days)
    rows = _rows(snapshot, cands, heard, matched_tokens(heard), question_vector, expanded_vector, query,
                 recovered_vector, previous, with_context)
    if recovered is not None:
        rows = np.maximum(rows, _rows(snapshot, cands, recovered, matched_tokens(recovered), question_vector,
                                      expanded_vector, query, recovered_vector, previous, with_context))
    ranges_only_where_no_day_is_named(rows)
    if heard.age is not None:
        chunks = [snapshot.chunks[c.chunk_index].chunk for c in cands]
        one_age_rule_a_section([(chunk.path, chunk.heading) for chunk in chunks], rows)
    return heard, rows


def _rows(snapshot: Snapshot, cands: list[Candidate], asked: Question, question_tokens: list[str],
          question_vector: np.ndarray, expanded_vector: np.ndarray | None, query: Query,
          recovered_vector: np.ndarray | None, previous: Question | None, with_context: bool) -> np.ndarray:
    context_vector = expanded_vector if with_context else None
    lead = context_vector if query.follow_up and context_vector is not None else question_vector
    rows = []
    for cand in cands:
        indexed = snapshot.chunks[cand.chunk_index]
        # A place the address names ("two miles out of Marston") is where the business is, not what a question
        # that asks no where is about ("Is there a bus from Marston?").
        streets = street_words(indexed.chunk.text) | (frozenset() if "place" in asked.kinds
                                                       else place_names(indexed.chunk.text))
        dense = _similarity(cand.vector, question_vector, recovered_vector)
        words = set(tokens(cand.text))
        rows.append(sentence_features(
            asked, cand.text, words, set(tokens(" ".join(indexed.chunk.heading))), set(indexed.tokens),
            streets, snapshot,
            dense=dense, dense_context=_similarity(cand.vector, context_vector) if context_vector is not None
            else dense, chunk_dense=_similarity(snapshot.vectors[cand.chunk_index], lead, recovered_vector),
            lexical=lexical_overlap(question_tokens, words - streets, snapshot),
            heading_lexical=lexical_overlap(question_tokens, set(tokens(indexed.chunk.heading[-1]))
                                            if indexed.chunk.heading else set(), snapshot),
            on_topic=with_context and bool(query.topic) and " > ".join(indexed.chunk.heading) == query.topic,
            previous=previous, rank=cand.passage.rank))
    return np.stack(rows) if rows else np.zeros((0, len(SENTENCE)), dtype=np.float32)


def decision_features(asked: Question, features: np.ndarray, scores: np.ndarray, best: int, unknown: float,
                      follow_up: bool) -> np.ndarray:
    """What the judgement to answer with candidate `best` weighs, in DECISION's order; `unknown`: the share of the
    question's focus the KB never uses (features.unknown_share)."""
    ordered = np.sort(scores)[::-1]
    margin = float(ordered[0] - ordered[1]) if len(ordered) > 1 else 1.0
    row = features[best]
    pick = [SENTENCE.index(n) for n in ("dense", "chunk_dense", "covered_chunk", "kind", "kind_missed", "address",
                                        "day", "day_missed", "age", "topic", "context_covered")]
    dense, covered = features[:, SENTENCE.index("dense")], features[:, SENTENCE.index("covered_heading")]
    return np.array([float(scores[best]), min(margin, 2.0), *row[pick],
                     float(features[:, SENTENCE.index("covered_chunk")].max()), unknown,
                     float(bool(asked.focus)), float(follow_up), float(dense[best] >= dense.max()),
                     float(covered[best] >= covered.max())], dtype=np.float32)


def judge(asked: Question, features: np.ndarray, snapshot: Snapshot, follow_up: bool, fitted: Weights,
          texts: list[str], reworded: frozenset[str] | None = None) -> tuple[np.ndarray, int, float]:
    """Each candidate's score, the best one, and the probability that it answers the question (`reworded`: see
    overrules.overrule)."""
    scores = features @ fitted.select
    best = int(np.argmax(scores))
    decided = decision_features(asked, features, scores, best, unknown_share(asked, snapshot), follow_up)
    probability = 1.0 / (1.0 + np.exp(-float(decided @ fitted.decide[:-1] + fitted.decide[-1])))
    probability = overrule(asked, texts[best], probability, snapshot, follow_up, fitted, reworded)
    return scores, best, probability


def score(snapshot: Snapshot, cands: list[Candidate], question_vector: np.ndarray,
          expanded_vector: np.ndarray | None, query: Query,
          recovered_vector: np.ndarray | None = None) -> list[ScoredSentence]:
    """Score every candidate; the best carries the evidence for answering with it (with and without the call's
    context), the others their share of it by score."""
    if not cands:
        return []
    fitted = weights()
    asked, features = measure(snapshot, cands, question_vector, expanded_vector, query, recovered_vector)
    texts = [cand.text for cand in cands]
    reworded = frozenset(tokens(query.recovered)) if query.recovered else None
    scores, best, probability = judge(asked, features, snapshot, query.follow_up, fitted, texts, reworded)
    own_asked, own_features = measure(snapshot, cands, question_vector, None, query, recovered_vector,
                                      with_context=False)
    _, _, own_probability = judge(own_asked, own_features, snapshot, False, fitted, texts, reworded)
    backing, own_backing = evidence(probability, fitted), evidence(own_probability, fitted)
    if not query.follow_up and own_probability < fitted.abstain_below:
        # A question that stands on its own words, which would decline it: the call's topic may make it worth a
        # confirmation ("Do you show films in 3D?" after the seats), never an answer outright.
        backing = min(backing, evidence(fitted.confirming, fitted))
    heard_backing = None
    if query.by_sound:
        heard, heard_features = measure(snapshot, cands, question_vector, expanded_vector, replace(query, recovered=""))
        _, heard_best, heard_p = judge(heard, heard_features, snapshot, query.follow_up, fitted, texts)
        # The words as heard would answer with another sentence, or with this one on less support.
        heard_backing = evidence(heard_p, fitted) if heard_best == best else 0.0
    covered = SENTENCE.index("covered")
    return [ScoredSentence(cand, float(scores[i]), float(features[i, 0]), float(features[i, covered]),
                           backing if i == best else 0.0, own_backing if i == best else 0.0, features[i],
                           heard_backing if i == best else None)
            for i, cand in enumerate(cands)]


def lines_to_say(snapshot: Snapshot, query: Query, chosen: list[Candidate]) -> tuple[str, ...]:
    """What of the chosen sentences to say (knowledge.lines): of a list or table, the lines the question asks about,
    weighed by its words (the ones heard and the KB's for them; a follow-up without words of its own, "and how much
    is it?", by the previous question's), less the words of the headings the list sits under, which it is all
    about ("What do I need to rent a unit?" of the list under "Renting a unit > What you need")."""
    earlier = analyse(query.previous) if query.previous else None
    asked = kinds_in_context(analyse(query.question), query, earlier)
    words = {*asked.focus, *asked.scene}
    if query.recovered:
        recovered = analyse(query.recovered)
        words |= {*recovered.focus, *recovered.scene}
    if query.follow_up and earlier is not None:
        words = words or {*earlier.focus, *earlier.scene}
    said = []
    for cand in chosen:
        # Less what no line of the KB can hold: "a pair of trousers" is asked of "Shorten trousers: £12".
        own = sorted(t for t in words - set(tokens(" ".join(snapshot.chunks[cand.chunk_index].chunk.heading)))
                     if snapshot.idf(t) is not None)
        said += asked_lines(cand.text, asked, lambda line, own=own: lexical_overlap(own, line, snapshot))
    return tuple(said)
