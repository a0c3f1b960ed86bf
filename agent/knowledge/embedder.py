"""Sentence embeddings: fastembed over an ONNX model, unit vectors for cosine similarity."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from fastembed import TextEmbedding

from agent.models.verify import ResolvedModel

# fastembed picks pooling and normalisation by model name. A manifest model is
# loaded under the name of the architecture its files are an export of.
ARCHITECTURES = {"minilm-l6-v2-int8": "sentence-transformers/all-MiniLM-L6-v2"}


class Embedder:
    """Wraps one fastembed model. Call `embed` from a worker thread."""

    def __init__(self, model: ResolvedModel, architecture: str, threads: int = 2) -> None:
        self.model = model
        # No onnxruntime memory arena: it keeps the buffers of the longest text yet for the process's life, so
        # each new longest question raised the agent's memory for good (as Piper's did: speech/tts.py).
        options = {"threads": threads, "enable_cpu_mem_arena": False}
        if model.source == "hub":
            self._embedding = TextEmbedding(model_name=model.location, **options)
        else:
            self._embedding = TextEmbedding(model_name=architecture, specific_model_path=model.location,
                                            local_files_only=True, **options)
        self.dim = int(self.embed(["dimension probe"]).shape[1])

    def lexicon(self) -> frozenset[str]:
        """The whole words of the model's WordPiece vocabulary (about 22,000 English words), or nothing when
        the model has no vocab.txt beside it: what counts as a real word (see soundalike)."""
        vocab = Path(self.model.location) / "vocab.txt"
        if not vocab.is_file():
            return frozenset()
        return frozenset(w for w in vocab.read_text(encoding="utf-8").split("\n") if w.isalpha())

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Embed texts as a float32 (n, dim) array of unit-length rows, in the order given."""
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        # A batch is padded to its longest text; batching similar lengths together keeps short
        # sentences from paying for long chunks (about 4x faster on a mixed index refresh).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        ordered = np.asarray(list(self._embedding.embed([texts[i] for i in order], batch_size=batch_size)),
                             dtype=np.float32)
        vectors = np.empty_like(ordered)
        vectors[order] = ordered
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)
