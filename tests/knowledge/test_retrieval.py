"""Fusion and passage assembly on a hand-built snapshot (exact), and hybrid search on the bundled KB."""

import numpy as np

from agent.knowledge.chunking import Chunk
from agent.knowledge.index import Snapshot
from agent.knowledge.retrieval import RRF_K, SearchQuery, reciprocal_rank_fusion, search
from agent.knowledge.store import IndexedChunk
from agent.knowledge.text import tokens


def _snapshot(texts_by_path: dict[str, list[str]], vectors: list[list[float]]) -> Snapshot:
    chunks, row = [], 0
    for path, texts in texts_by_path.items():
        for ordinal, text in enumerate(texts):
            vector = np.array(vectors[row], dtype=np.float32)
            vector /= np.linalg.norm(vector)
            chunks.append(IndexedChunk(Chunk(f"{path}#{ordinal}", path, ordinal, ("H",), text),
                                       tuple(tokens(text)), vector, (text,), vector[None, :]))
            row += 1
    return Snapshot.build(chunks, 3)


def _query(vector, text=""):
    vector = np.array(vector, dtype=np.float32)
    return SearchQuery(vector / np.linalg.norm(vector), tokens(text))


def test_reciprocal_rank_fusion_adds_weighted_reciprocal_ranks():
    fused = reciprocal_rank_fusion([(np.array([2, 0, 1]), 1.0), (np.array([0, 2]), 0.5)], depth=10)
    assert fused == {2: 1 / (RRF_K + 1) + 0.5 / (RRF_K + 2), 0: 1 / (RRF_K + 2) + 0.5 / (RRF_K + 1),
                     1: 1 / (RRF_K + 3)}


def test_a_hit_is_expanded_with_the_next_chunk_of_its_file():
    snapshot = _snapshot({"valve.md": ["Under the boiler is the amber valve.", "Turn it a quarter turn."],
                          "other.md": ["Parking is free."]}, [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    (passage, *_) = search(snapshot, [_query([1, 0.1, 0], "amber valve")], top_k=1)
    assert passage.chunk_indices == (0, 1)
    assert passage.text == "Under the boiler is the amber valve. Turn it a quarter turn."


def test_neighbours_are_not_repeated_across_passages():
    snapshot = _snapshot({"a.md": ["alpha one", "alpha two", "alpha three"]}, [[1, 0, 0], [0.9, 0.1, 0], [0, 1, 0]])
    passages = search(snapshot, [_query([1, 0, 0], "alpha")], top_k=3)
    indices = [i for p in passages for i in p.chunk_indices]
    assert sorted(indices) == [0, 1, 2] and len(indices) == len(set(indices))


def test_passages_stay_within_the_character_budget():
    snapshot = _snapshot({"a.md": ["x" * 100, "y" * 100, "z" * 100], "b.md": ["w" * 100]},
                         [[1, 0, 0], [0.8, 0.2, 0], [0, 1, 0], [0.7, 0, 0.3]])
    passages = search(snapshot, [_query([1, 0, 0])], top_k=3, budget_chars=250)
    assert sum(len(p.text.replace(" ", "")) for p in passages) <= 250 and passages[0].chunk_indices[0] == 0


def test_a_later_hit_is_not_crowded_out_by_an_earlier_hits_neighbours():
    # a.md#0 and b.md#1 match; a.md#0's neighbour a.md#1 matches nothing and would fill the budget.
    snapshot = _snapshot({"a.md": ["x" * 100, "y" * 100], "b.md": ["v" * 100, "w" * 100]},
                         [[1, 0, 0], [0, 0, 1], [0, 0.2, 1], [0.9, 0.3, 0]])
    passages = search(snapshot, [_query([1, 0, 0])], top_k=2, budget_chars=250)
    assert [p.chunk_indices[0] for p in passages] == [0, 3] and 1 not in passages[0].chunk_indices


def test_a_neighbour_that_is_also_a_later_hit_joins_the_earlier_passage():
    snapshot = _snapshot({"a.md": ["x" * 100, "y" * 100]}, [[1, 0, 0], [0.9, 0.1, 0]])
    (passage,) = search(snapshot, [_query([1, 0, 0])], top_k=2, budget_chars=250)
    assert passage.chunk_indices == (0, 1)


def test_lexical_ranking_finds_a_code_the_vectors_miss():
    snapshot = _snapshot({"a.md": ["Parking is free.", "Code ORCHID-47 gives money off."]}, [[1, 0, 0], [0, 1, 0]])
    (passage, *_) = search(snapshot, [_query([1, 0, 0], "orchid 47")], top_k=1, neighbours=0)
    assert passage.chunk_indices == (1,)


def test_a_kept_chunk_is_returned_even_when_the_query_does_not_find_it():
    snapshot = _snapshot({"a.md": ["Parking is free.", "Boilers are fitted in a day."], "b.md": ["Pay monthly."]},
                         [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    passages = search(snapshot, [_query([1, 0, 0], "parking")], top_k=1, neighbours=0, keep=(2,))
    assert [p.chunk_indices for p in passages] == [(0,), (2,)] and passages[1].rank == 1
    assert search(snapshot, [_query([1, 0, 0], "parking")], top_k=1, neighbours=0, keep=(0,))[1:] == []


def test_an_empty_index_returns_nothing():
    assert search(Snapshot.build([], 3), [_query([1, 0, 0], "hours")]) == []


def test_hybrid_search_on_the_bundled_kb_finds_the_split_amber_valve_fact(bundled_kb):
    from agent.knowledge.memory import CallMemory

    passages, *_ = bundled_kb.retrieve(bundled_kb.index.snapshot, CallMemory().query(
        "What do I do with the amber valve?"))
    assert any("quarter turn counter-clockwise" in p.text for p in passages)
