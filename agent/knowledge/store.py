"""SQLite persistence of the index: documents, chunks, vectors, BM25 tokens and the fingerprint.

Every change is one transaction, so the file on disk always holds a complete
index: the old one or the new one, never a mixture.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agent.knowledge.chunking import Chunk
from agent.knowledge.scan import Document

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, size INTEGER NOT NULL, indexed_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY, path TEXT NOT NULL, ordinal INTEGER NOT NULL, heading TEXT NOT NULL, text TEXT NOT NULL,
    tokens TEXT NOT NULL, vector BLOB NOT NULL, sentences TEXT NOT NULL, sentence_vectors BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_by_path ON chunks (path, ordinal);
"""


@dataclass(frozen=True)
class IndexedChunk:
    """A chunk with everything search and answering need, computed once at index time."""

    chunk: Chunk
    tokens: tuple[str, ...]
    """BM25 input: normalised tokens of the heading path and text."""
    vector: np.ndarray
    """Unit embedding of the titled text."""
    sentences: tuple[str, ...]
    """The chunk's sentences, verbatim, the only text an extractive answer may speak."""
    sentence_vectors: np.ndarray
    """Unit embedding of each sentence, shape (len(sentences), dim)."""


class IndexStore:
    """The index database. Opens a connection per operation, so any thread may use it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as db, db:
            db.executescript(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def fingerprint(self) -> str | None:
        with closing(self._connect()) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        return row[0] if row else None

    def document_hashes(self) -> dict[str, str]:
        with closing(self._connect()) as db:
            return dict(db.execute("SELECT path, sha256 FROM documents"))

    def load(self) -> list[IndexedChunk]:
        """Every stored chunk, in document and ordinal order."""
        with closing(self._connect()) as db:
            rows = db.execute("SELECT id, path, ordinal, heading, text, tokens, vector, sentences, sentence_vectors "
                              "FROM chunks ORDER BY path, ordinal").fetchall()
        out = []
        for cid, path, ordinal, heading, text, tokens, vector, sents, sent_vectors in rows:
            chunk = Chunk(cid, path, ordinal, tuple(json.loads(heading)), text)
            vec = np.frombuffer(vector, dtype=np.float32)
            sentence_list = tuple(json.loads(sents))
            matrix = np.frombuffer(sent_vectors, dtype=np.float32).reshape(len(sentence_list), vec.shape[0])
            out.append(IndexedChunk(chunk, tuple(tokens.split()), vec, sentence_list, matrix))
        return out

    def apply(self, fingerprint: str, upserts: Iterable[tuple[Document, list[IndexedChunk]]],
              deletes: Iterable[str]) -> None:
        """Replace changed documents, drop deleted ones and record the fingerprint, in one transaction."""
        now = time.time()
        with closing(self._connect()) as db, db:
            for path in deletes:
                db.execute("DELETE FROM chunks WHERE path = ?", (path,))
                db.execute("DELETE FROM documents WHERE path = ?", (path,))
            for document, chunks in upserts:
                db.execute("DELETE FROM chunks WHERE path = ?", (document.path,))
                db.execute("INSERT OR REPLACE INTO documents VALUES (?, ?, ?, ?)",
                           (document.path, document.sha256, document.size, now))
                db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [
                    (c.chunk.id, c.chunk.path, c.chunk.ordinal, json.dumps(c.chunk.heading), c.chunk.text,
                     " ".join(c.tokens), c.vector.astype(np.float32).tobytes(), json.dumps(c.sentences),
                     c.sentence_vectors.astype(np.float32).tobytes()) for c in chunks])
            db.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (fingerprint,))
