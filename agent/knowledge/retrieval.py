"""Hybrid retrieval: dense cosine and BM25 rankings fused with reciprocal rank fusion.

Pure over a Snapshot and an already-embedded query. Each hit is expanded with
its neighbouring chunks from the same file, because an answer often sits in
the chunk after the one that matches the question's words.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agent.knowledge.index import Snapshot

RRF_K = 60
"""The usual reciprocal-rank-fusion constant: damps the gap between the first few ranks."""


@dataclass(frozen=True)
class Passage:
    """Consecutive chunks of one document, returned for a query."""

    path: str
    heading: tuple[str, ...]
    """Heading path of the first chunk."""
    chunk_indices: tuple[int, ...]
    """Indices into the snapshot's chunks, in document order."""
    text: str
    fused: float
    """Reciprocal-rank-fusion score of the best chunk in the passage."""
    dense: float
    """Cosine similarity between the query and the chunk that matched."""
    rank: int
    """0 for the best passage."""


def rank_dense(snapshot: Snapshot, query_vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Chunk indices by descending cosine, and all cosines."""
    scores = snapshot.vectors @ query_vector
    return np.argsort(-scores, kind="stable"), scores


def rank_lexical(snapshot: Snapshot, query_tokens: list[str]) -> np.ndarray:
    """Chunks that contain a query word, by descending BM25 score."""
    matching = sorted(set().union(*(snapshot.postings.get(t, ()) for t in query_tokens))) if query_tokens else []
    if snapshot.bm25 is None or not matching:
        return np.zeros(0, dtype=int)
    scores = snapshot.bm25.get_batch_scores(query_tokens, matching)
    return np.asarray(matching)[np.argsort(-np.asarray(scores), kind="stable")]


def reciprocal_rank_fusion(rankings: list[tuple[np.ndarray, float]], depth: int) -> dict[int, float]:
    """Sum of weight/(RRF_K + rank) over the first `depth` entries of each (ranking, weight)."""
    fused: dict[int, float] = {}
    for ranking, weight in rankings:
        for rank, index in enumerate(ranking[:depth]):
            fused[int(index)] = fused.get(int(index), 0.0) + weight / (RRF_K + rank + 1)
    return fused


@dataclass(frozen=True)
class SearchQuery:
    """One text to search for, already embedded and tokenised, with its weight in the fusion."""

    vector: np.ndarray
    tokens: list[str]
    weight: float = 1.0


def _expand(snapshot: Snapshot, index: int, neighbours: int) -> list[int]:
    chunk = snapshot.chunks[index].chunk
    around = range(chunk.ordinal - neighbours, chunk.ordinal + neighbours + 1)
    return [snapshot.position[(chunk.path, o)] for o in around if (chunk.path, o) in snapshot.position]


def search(snapshot: Snapshot, queries: list[SearchQuery], *, top_k: int = 3, neighbours: int = 1,
           budget_chars: int = 1500, depth: int = 20, keep: tuple[int, ...] = ()) -> list[Passage]:
    """Top-k passages for the queries (dense and BM25 rankings of each, fused), expanded with
    neighbours, deduplicated, within a character budget; then the chunks in `keep` that none of them holds,
    one passage each, whatever the budget (the call's last answer: a follow-up may stay on its topic however
    it was worded). The first query's cosine is reported."""
    if not snapshot.chunks or not queries:
        return []
    rankings = []
    for query in queries:
        order, scores = rank_dense(snapshot, query.vector)
        rankings += [(order, query.weight), (rank_lexical(snapshot, query.tokens), query.weight)]
        if query is queries[0]:
            dense_scores = scores
    fused = reciprocal_rank_fusion(rankings, depth)
    best = sorted(fused, key=lambda i: (-fused[i], i))[:top_k]
    taken: set[int] = set()
    passages: list[Passage] = []
    used = 0
    for place, hit in enumerate(best):
        if hit in taken:
            continue  # already inside an earlier passage
        size = len(snapshot.chunks[hit].chunk.text)
        if passages and used + size > budget_chars:
            break
        chosen = [hit]
        for neighbour in _expand(snapshot, hit, neighbours):
            if neighbour in taken or neighbour == hit:
                continue
            extra = len(snapshot.chunks[neighbour].chunk.text)
            # Room is kept for the hits still to come (a hit matched the question, a neighbour only sits near one),
            # unless the neighbour is one of them.
            reserved = _reserve(snapshot, best[place + 1:], taken | {*chosen, neighbour}, budget_chars - used - size)
            if used + size + extra + reserved <= budget_chars:
                chosen.append(neighbour)
                size += extra
        chosen.sort()  # snapshot order is (path, ordinal): sorted indices read in document order
        taken.update(chosen)
        used += size
        passages.append(Passage(
            path=snapshot.chunks[hit].chunk.path, heading=snapshot.chunks[chosen[0]].chunk.heading,
            chunk_indices=tuple(chosen), text=" ".join(snapshot.chunks[i].chunk.text for i in chosen),
            fused=fused[hit], dense=float(dense_scores[hit]), rank=len(passages)))
    for index in keep:
        if index not in taken:
            taken.add(index)
            chunk = snapshot.chunks[index].chunk
            passages.append(Passage(path=chunk.path, heading=chunk.heading, chunk_indices=(index,), text=chunk.text,
                                    fused=fused.get(index, 0.0), dense=float(dense_scores[index]), rank=len(passages)))
    return passages


def _reserve(snapshot: Snapshot, later: list[int], taken: set[int], room: int) -> int:
    """Characters the later hits not yet taken will need, as many as fit in `room` in rank order."""
    reserved = 0
    for hit in later:
        size = len(snapshot.chunks[hit].chunk.text)
        if hit in taken:
            continue
        if reserved + size > room:
            break  # as search stops at the first hit that does not fit
        reserved += size
    return reserved
