"""The extractive answerer: speaks the best one or two KB sentences verbatim, or says it doesn't know.

Every word of an answer comes from a retrieved passage. Sentences are scored
by embedding similarity (of the sentence and of its chunk) to the question, by
IDF-weighted word overlap, and by whether the sentence holds the kind of thing
asked for (a price for "how much", a time for "when"); weak evidence makes the
answerer abstain instead of reading an unrelated sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from agent.knowledge.index import Snapshot
from agent.knowledge.memory import Query
from agent.knowledge.retrieval import Passage
from agent.knowledge.text import tokens

ABSTAIN_TEXT = "Sorry, I don't have information about that."

WEIGHTS = {"sentence": 0.45, "chunk": 0.2, "lexical": 0.25, "kind": 0.1, "topic": 0.05}
"""Score = weighted sum of: sentence and chunk cosine, word overlap, answer kind, and staying on the
previous turn's topic (callers ask a run of questions about one thing)."""
SUPPORT_WEIGHTS = {"dense": 0.6, "lexical": 0.4, "kind": 0.05}
UNKNOWN_TERM_SHARE = 1.0
"""Weight of a question word absent from the KB, as a share of the rarest KB word's IDF."""
SECOND_SENTENCE_RATIO = 0.85
"""A neighbouring sentence joins the answer when it scores at least this share of the best one."""

# What a question asks for, and what a sentence that answers it contains.
_ANSWER_KINDS = {
    "money": (r"\bhow much\b|\bcosts?\b|\bprices?\b|\bcharges?\b|\bfees?\b|\bpay\b|\bdiscount",
              r"\$\s?\d|\bfree\b|\bdollars?\b|\bpercent\b|\bcosts?\b|\bcharge"),
    "duration": (r"\bhow long\b|\bhow many (?:days|hours|minutes|weeks)\b",
                 r"\b(?:minutes?|hours?|days?|weeks?|months?|years?)\b"),
    "time": (r"^\s*when\b|\bwhat time\b|\bhours\b|\bsoonest\b|\bearliest\b|\bhow (?:soon|quickly|fast)\b|"
             r"\bopen\b", r"\d\s*[ap]\.?m\b|\bnoon\b|\bmidnight\b|\b(?:hours?|days?|weeks?)\b|day\b|24/7"),
    "place": (r"^\s*where\b|\baddress\b|\blocated\b", r"\b\d+\s+[A-Z]\w+\s+(?:Lane|Street|Road|Avenue|Way)\b|"
              r"\bnext to\b|\bbehind\b|\bopposite\b"),
    "contact": (r"\bnumber\b|\bphone\b|\bring\b|\bcall\b|\bemail\b|\bcontact\b|\bget in touch\b",
                r"\b\d{3}-\d{4}\b|@"),
}


def answer_kinds(question: str) -> list[str]:
    """Kinds of answer a question asks for ("money", "time", ...), possibly none."""
    lowered = question.lower()
    return [kind for kind, (asks, _) in _ANSWER_KINDS.items() if re.search(asks, lowered)]


def holds_kind(sentence: str, kinds: list[str]) -> bool:
    return any(re.search(_ANSWER_KINDS[kind][1], sentence, re.IGNORECASE) for kind in kinds)


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
    evidence: float
    """Support for answering with this sentence, compared with the abstention threshold."""
    own_evidence: float
    """The same support without the call's context: what the question's own words find here."""


def candidates(snapshot: Snapshot, passages: list[Passage]) -> list[Candidate]:
    out = []
    for passage in passages:
        for index in passage.chunk_indices:
            chunk = snapshot.chunks[index]
            for sentence, vector in zip(chunk.sentences, chunk.sentence_vectors, strict=True):
                out.append(Candidate(sentence, vector, passage, index, len(out)))
    return out


def lexical_overlap(question_tokens: list[str], sentence_tokens: set[str], snapshot: Snapshot) -> float:
    """Share of the question's IDF weight that the sentence contains (0..1). A word the KB never
    uses weighs like a rare one: a question about "solar panels" asks for something not covered."""
    unknown = UNKNOWN_TERM_SHARE * snapshot.max_idf
    weights = {t: max(idf, 0.1) if (idf := snapshot.idf(t)) is not None else unknown for t in question_tokens}
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if t in sentence_tokens) / total if total else 0.0


def score(snapshot: Snapshot, cands: list[Candidate], question_vector: np.ndarray,
          expanded_vector: np.ndarray | None, query: Query,
          recovered_vector: np.ndarray | None = None) -> list[ScoredSentence]:
    """Score every candidate. The previous turn (the expanded question) counts half for a follow-up
    ("and on Saturday?"), a quarter otherwise ("can I spread the cost?" still leans on the topic). A
    recovered question (near-homophones put back) counts where it matches better than the transcript."""
    question_tokens = tokens(query.question)
    recovered_tokens = tokens(query.recovered) if query.recovered else []
    context_tokens = [t for t in tokens(query.context) if t not in question_tokens]
    context_share = (0.5 if query.follow_up else 0.25) if expanded_vector is not None else 0.0
    kinds = answer_kinds(query.question)
    lead_vector = expanded_vector if query.follow_up and expanded_vector is not None else question_vector
    out = []
    for cand in cands:
        own = float(cand.vector @ question_vector)
        if recovered_vector is not None:
            own = max(own, float(cand.vector @ recovered_vector))
        dense = own
        if expanded_vector is not None:
            dense = (1 - context_share) * own + context_share * float(cand.vector @ expanded_vector)
        chunk_dense = float(snapshot.vectors[cand.chunk_index] @ lead_vector)
        if recovered_vector is not None:
            chunk_dense = max(chunk_dense, float(snapshot.vectors[cand.chunk_index] @ recovered_vector))
        sentence_tokens = set(tokens(cand.text))
        own_lexical = lexical_overlap(question_tokens, sentence_tokens, snapshot)
        if recovered_tokens:
            own_lexical = max(own_lexical, lexical_overlap(recovered_tokens, sentence_tokens, snapshot))
        lexical = own_lexical
        if context_tokens:
            lexical = (1 - context_share / 2) * own_lexical + context_share / 2 * lexical_overlap(
                context_tokens, sentence_tokens, snapshot)
        kind = 1.0 if kinds and holds_kind(cand.text, kinds) else 0.0
        on_topic = 1.0 if query.topic and " > ".join(snapshot.chunks[cand.chunk_index].chunk.heading) == query.topic \
            else 0.0
        total = (WEIGHTS["sentence"] * dense + WEIGHTS["chunk"] * chunk_dense + WEIGHTS["lexical"] * lexical
                 + WEIGHTS["kind"] * kind + WEIGHTS["topic"] * on_topic)
        support = _support(max(dense, chunk_dense), lexical, kind)
        # The same without the call's context: how well the question's own words are backed here.
        own_support = _support(max(own, float(snapshot.vectors[cand.chunk_index] @ question_vector)), own_lexical, kind)
        out.append(ScoredSentence(cand, total, dense, lexical, support, own_support))
    return out


def _support(dense: float, lexical: float, kind: float) -> float:
    return SUPPORT_WEIGHTS["dense"] * dense + SUPPORT_WEIGHTS["lexical"] * lexical + SUPPORT_WEIGHTS["kind"] * kind


def choose(scored: list[ScoredSentence]) -> list[ScoredSentence]:
    """The best sentence, plus its neighbour in the same passage when that scores almost as well."""
    if not scored:
        return []
    best = max(scored, key=lambda s: s.score)
    chosen = [best]
    neighbours = [s for s in scored if abs(s.candidate.position - best.candidate.position) == 1
                  and s.candidate.passage is best.candidate.passage]
    if neighbours:
        runner_up = max(neighbours, key=lambda s: s.score)
        if runner_up.score >= SECOND_SENTENCE_RATIO * best.score:
            chosen.append(runner_up)
    return sorted(chosen, key=lambda s: s.candidate.position)
