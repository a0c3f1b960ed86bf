import numpy as np


def test_vectors_are_384_dimensional_unit_vectors(models):
    vectors = models.embedder.embed(["When do you open?", "Parking is free after six."])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_paraphrase_ranks_above_an_unrelated_sentence(models):
    query, paraphrase, unrelated = models.embedder.embed([
        "What time does the shop open in the morning?",
        "Our store opening hours start at 9 a.m.",
        "The invoice must be paid by bank transfer.",
    ])
    assert query @ paraphrase > query @ unrelated + 0.2


def test_no_texts_give_an_empty_matrix(models):
    assert models.embedder.embed([]).shape == (0, 384)


def test_the_model_keeps_no_memory_arena_that_would_hold_the_longest_text_yet(models):
    session = models.embedder._embedding.model.model
    assert session.get_session_options().enable_cpu_mem_arena is False
