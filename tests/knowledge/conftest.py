"""Knowledge fixtures: a real embedder and indexes over temporary KB directories."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.knowledge.base import KnowledgeBase
from agent.knowledge.index import KnowledgeIndex
from tests.conftest import REPO


class CountingEmbedder:
    """The real embedder, counting texts and optionally failing: a probe, not a fake."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.dim = inner.dim
        self.texts = 0
        self.fail_with: Exception | None = None

    def embed(self, texts):
        if self.fail_with is not None:
            raise self.fail_with
        self.texts += len(texts)
        return self.inner.embed(texts)


@pytest.fixture
def embedder(models) -> CountingEmbedder:
    return CountingEmbedder(models.embedder)


def make_index(kb: Path, db: Path, embedder, *, target: int = 350, max_file_bytes: int = 1 << 20,
               model_identity: str = "minilm") -> KnowledgeIndex:
    return KnowledgeIndex(kb, db, embedder, max_file_bytes=max_file_bytes, max_total_bytes=1 << 30,
                          chunk_target_chars=target, chunk_max_chars=max(600, target), model_identity=model_identity)


def benchmark_kb(name: str, tmp_path: Path, embedder) -> KnowledgeBase:
    """A KnowledgeBase over one of the many-KB benchmark's KBs (eval/kbs/NAME/kb), indexed afresh."""
    index = make_index(REPO / "eval" / "kbs" / name / "kb", tmp_path / "index.sqlite3", embedder)
    assert index.refresh().ok
    return KnowledgeBase(index, embedder)
