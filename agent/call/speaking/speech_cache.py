"""Answer audio rendered before any call needs it: one file per sentence, keyed by voice and text.

The extractive answerer only ever speaks KB sentences (after the speakable transform), so every
answer sentence is known when its chunk is indexed. Rendering them ahead turns the first sentence
of an answer from a Piper synthesis (200-600 ms on two cores) into a file read. Files are raw int16
PCM at the bridge rate under DATA_DIR/speech/<voice key>/, named by a hash of the text; a sentence
whose chunk leaves the KB is deleted with it (`keep_only`). A miss is synthesised on demand and kept.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from agent.logs import event

log = logging.getLogger(__name__)


class SpeechCache:
    """Rendered sentences of one voice on disk; safe to use from any thread."""

    def __init__(self, folder: Path, voice_key: str, on_lookup: Callable[[bool], None] | None = None) -> None:
        """`voice_key` changes whenever the audio would (voice weights, rate, volume); `on_lookup(hit)` is
        called for every lookup (metrics)."""
        self.folder = folder / hashlib.sha256(voice_key.encode()).hexdigest()[:16]
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "VOICE").write_text(voice_key + "\n", encoding="utf-8")
        self._on_lookup = on_lookup
        self._lock = threading.Lock()

    def path(self, text: str) -> Path:
        return self.folder / f"{hashlib.sha256(text.encode()).hexdigest()[:32]}.pcm"

    def get(self, text: str) -> np.ndarray | None:
        try:
            pcm = np.fromfile(self.path(text), dtype="<i2").astype(np.int16)
        except (FileNotFoundError, ValueError):
            pcm = None
        if self._on_lookup is not None:
            self._on_lookup(pcm is not None)
        return pcm

    def has(self, text: str) -> bool:
        return self.path(text).is_file()

    def put(self, text: str, pcm: np.ndarray) -> None:
        """Store atomically: a reader never sees half a file, and a full disk leaves nothing behind."""
        target = self.path(text)
        with tempfile.NamedTemporaryFile(dir=self.folder, suffix=".part", delete=False) as part:
            try:
                part.write(pcm.astype("<i2").tobytes())
            except OSError:
                os.unlink(part.name)
                raise
        os.replace(part.name, target)

    def keep_only(self, texts: Iterable[str]) -> int:
        """Delete every rendered sentence not in `texts` (their chunks left the KB); returns how many."""
        live = {self.path(t).name for t in texts}
        removed = 0
        with self._lock:
            for file in self.folder.glob("*.pcm"):
                if file.name not in live:
                    file.unlink(missing_ok=True)
                    removed += 1
            for part in self.folder.glob("*.part"):  # left by a crash mid-write
                part.unlink(missing_ok=True)
        if removed:
            event(log, "speech.cache_pruned", files=removed)
        return removed

    def size_bytes(self) -> int:
        return sum(f.stat().st_size for f in self.folder.glob("*.pcm"))
