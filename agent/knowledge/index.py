"""The searchable index: an immutable snapshot, and an incremental refresh that swaps it atomically.

Calls read `index.snapshot` once per question and keep that object; a refresh
builds a complete new snapshot beside it and replaces the reference in one
assignment. A refresh that fails leaves both the database and the snapshot as
they were, and says why.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi

from agent.knowledge.chunking import CHUNKER_VERSION, split_document
from agent.knowledge.holds import holds
from agent.knowledge.scan import Document, scan
from agent.knowledge.store import IndexedChunk, IndexStore
from agent.knowledge.text import sentences, tokens
from agent.logs import event

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
"""progress(done, total) over texts embedded."""


def _titled(heading: tuple[str, ...], sentence: str) -> str:
    return (" > ".join(heading) + ": " if heading else "") + sentence


class RefreshBusy(RuntimeError):
    """Another refresh is running; refreshes are one at a time."""


@dataclass(frozen=True)
class Snapshot:
    """One complete, immutable version of the index."""

    chunks: tuple[IndexedChunk, ...]
    vectors: np.ndarray
    """Chunk embeddings, shape (n, dim), unit rows."""
    bm25: BM25Okapi | None
    """None when the KB is empty."""
    position: dict[tuple[str, int], int]
    """(path, ordinal) -> index into chunks, for neighbour expansion."""
    postings: dict[str, frozenset[int]]
    """token -> chunks containing it. BM25's IDF is zero or negative for a word in half the
    chunks of a small KB, so "which chunks contain the word at all" is kept separately."""

    @classmethod
    def build(cls, chunks: list[IndexedChunk], dim: int) -> Snapshot:
        vectors = np.stack([c.vector for c in chunks]) if chunks else np.zeros((0, dim), dtype=np.float32)
        bm25 = BM25Okapi([list(c.tokens) or ["_"] for c in chunks]) if chunks else None
        position = {(c.chunk.path, c.chunk.ordinal): i for i, c in enumerate(chunks)}
        postings: dict[str, set[int]] = {}
        for i, c in enumerate(chunks):
            for token in c.tokens:
                postings.setdefault(token, set()).add(i)
        return cls(tuple(chunks), vectors, bm25, position, {t: frozenset(d) for t, d in postings.items()})

    @functools.cached_property
    def version(self) -> str:
        """What this snapshot holds, in 12 hex digits: agents indexing the same files show the same version."""
        return hashlib.sha256("\n".join(sorted(c.chunk.id for c in self.chunks)).encode()).hexdigest()[:12]

    def idf(self, token: str) -> float | None:
        """Inverse document frequency of a token; None for a word the KB never uses."""
        if self.bm25 is None:
            return None
        known = self.bm25.idf.get(token)
        return float(known) if known is not None else None

    @cached_property
    def by_id(self) -> dict[str, int]:
        """Chunk id -> index into chunks."""
        return {c.chunk.id: i for i, c in enumerate(self.chunks)}

    @cached_property
    def addresses(self) -> tuple[int, ...]:
        """The chunks that give a postal address, in KB order: what "where are you?" asks for, though it names
        nothing they say."""
        return tuple(i for i, c in enumerate(self.chunks) if "address" in holds(c.chunk.text))

    @cached_property
    def max_idf(self) -> float:
        return float(max(self.bm25.idf.values())) if self.bm25 is not None and self.bm25.idf else 1.0


@dataclass
class RefreshReport:
    """What one refresh did."""

    added: int = 0
    changed: int = 0
    deleted: int = 0
    unchanged: int = 0
    chunks: int = 0
    """Chunks in the index after the refresh."""
    seconds: float = 0.0
    rejected: dict[str, str] = field(default_factory=dict)
    """Files not indexed, with the reason (a previously indexed version of such a file is kept)."""
    error: str | None = None
    """Why the refresh failed as a whole; the previous index stays in use."""

    @property
    def ok(self) -> bool:
        return self.error is None


class KnowledgeIndex:
    """Owns the index of one KB directory: the current snapshot and the refresh that replaces it."""

    def __init__(self, kb_dir: Path, db_path: Path, embedder, *, max_file_bytes: int, max_total_bytes: int,
                 chunk_target_chars: int, chunk_max_chars: int, model_identity: str) -> None:
        self.kb_dir = kb_dir
        self.store = IndexStore(db_path)
        self._embedder = embedder
        self._limits = (max_file_bytes, max_total_bytes)
        self._chunking = (chunk_target_chars, chunk_max_chars)
        self.fingerprint = hashlib.sha256(json.dumps(
            [model_identity, CHUNKER_VERSION, chunk_target_chars, chunk_max_chars]).encode()).hexdigest()[:16]
        self._lock = threading.Lock()
        self.problem: str | None = None
        """Why the last refresh did not bring the index in line with the KB (None when it did)."""
        self.snapshot = Snapshot.build([], embedder.dim)
        if self.store.fingerprint() == self.fingerprint:
            self.snapshot = Snapshot.build(self.store.load(), embedder.dim)

    @property
    def refreshing(self) -> bool:
        return self._lock.locked()

    def refresh(self, progress: Progress | None = None, wait: bool = True) -> RefreshReport:
        """Bring the index in line with the KB directory. Raises RefreshBusy when `wait` is False and one runs."""
        if not self._lock.acquire(blocking=wait):
            raise RefreshBusy("a KB refresh is already running")
        try:
            return self._refresh(progress)
        finally:
            self._lock.release()

    def _refresh(self, progress: Progress | None) -> RefreshReport:
        started = time.perf_counter()
        report = RefreshReport()
        found = scan(self.kb_dir, *self._limits)
        report.rejected = found.rejected
        for path, reason in found.rejected.items():
            event(log, "kb.rejected", logging.WARNING, path=path, reason=reason)
        previous = self.store.document_hashes()
        if previous and not found.documents:
            # A missing, unmounted or emptied KB directory is far likelier a mistake than a wish to forget
            # everything: the index keeps answering, and readiness says why (delete the index file to
            # really start from an empty KB).
            why = found.rejected.get(".") or f"KB directory {self.kb_dir} has no readable documents"
            report.error = self.problem = f"{why}; the previous index ({len(previous)} documents) is kept"
            report.chunks, report.seconds = len(self.snapshot.chunks), time.perf_counter() - started
            event(log, "kb.refresh_refused", logging.ERROR, reason=report.error)
            return report
        rebuild_all = self.store.fingerprint() != self.fingerprint
        to_embed: list[Document] = []
        for path, document in found.documents.items():
            if path not in previous:
                report.added += 1
                to_embed.append(document)
            elif rebuild_all or previous[path] != document.sha256:
                report.changed += 1
                to_embed.append(document)
            else:
                report.unchanged += 1
        gone = [p for p in previous if p not in found.documents]
        # A file that is present but unreadable keeps its previous version (bad input never loses what
        # was stored), unless everything is re-embedded for a new model, when old vectors cannot stay.
        deletes = gone if rebuild_all else [p for p in gone if p not in found.rejected]
        for path in gone:
            if path not in deletes:
                report.rejected[path] += "; the previously indexed version is kept"
        report.deleted = len(deletes)
        try:
            upserts = self._embed_documents(to_embed, progress)
            if upserts or deletes or rebuild_all:
                self.store.apply(self.fingerprint, upserts, deletes)
                self.snapshot = self._next_snapshot(upserts, deletes, rebuild_all)
        except Exception as exc:  # embedding, disk or database failure: keep the previous index
            report.error = f"{type(exc).__name__}: {exc}"
            event(log, "kb.refresh_failed", logging.ERROR, error=report.error)
        self.problem = report.error
        report.chunks = len(self.snapshot.chunks)
        report.seconds = time.perf_counter() - started
        event(log, "kb.refreshed", added=report.added, changed=report.changed, deleted=report.deleted,
              unchanged=report.unchanged, rejected=len(report.rejected), chunks=report.chunks,
              seconds=round(report.seconds, 3), ok=report.ok)
        return report

    def _next_snapshot(self, upserts: list[tuple[Document, list[IndexedChunk]]], deletes: list[str],
                       rebuild_all: bool) -> Snapshot:
        """The committed index as a new snapshot: unchanged chunks are reused from the current one
        (what the database now holds, without reading it back)."""
        replaced = {document.path for document, _ in upserts} | set(deletes)
        kept = [] if rebuild_all else [c for c in self.snapshot.chunks if c.chunk.path not in replaced]
        fresh = [c for _, chunks in upserts for c in chunks]
        merged = sorted(kept + fresh, key=lambda c: (c.chunk.path, c.chunk.ordinal))
        return Snapshot.build(merged, self._embedder.dim)

    def _embed_documents(self, documents: list[Document], progress: Progress | None
                         ) -> list[tuple[Document, list[IndexedChunk]]]:
        """Chunk and embed documents; chunk texts and all their sentences go through the embedder in batches."""
        planned = []
        for document in documents:
            chunks = split_document(document.path, document.text, *self._chunking)
            planned.append((document, [(c, tuple(sentences(c.text, lines=True))) for c in chunks]))
        # Sentences are embedded under their heading path: "It costs $12 a month" only means
        # something next to "The Warm Care plan".
        texts = [t for _, chunks in planned for c, sents in chunks
                 for t in (c.titled_text, *(_titled(c.heading, s) for s in sents))]
        vectors = self._embed_in_batches(texts, progress)
        out, row = [], 0
        for document, chunks in planned:
            indexed = []
            for chunk, sents in chunks:
                vector, sentence_vectors = vectors[row], vectors[row + 1:row + 1 + len(sents)]
                row += 1 + len(sents)
                indexed.append(IndexedChunk(chunk, tuple(tokens(chunk.titled_text)), vector, sents, sentence_vectors))
            out.append((document, indexed))
        return out

    def _embed_in_batches(self, texts: list[str], progress: Progress | None, batch: int = 256) -> np.ndarray:
        parts = []
        for start in range(0, len(texts), batch):
            parts.append(self._embedder.embed(texts[start:start + batch]))
            if progress is not None:
                progress(min(start + batch, len(texts)), len(texts))
        return np.concatenate(parts) if parts else np.zeros((0, self._embedder.dim), dtype=np.float32)
