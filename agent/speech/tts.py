"""Speech synthesis: Piper, one audio chunk per sentence so playback can start early."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from piper import PiperVoice

from agent.models.verify import ResolvedModel


class Synthesizer:
    """Wraps one Piper voice. Iterate `sentences` in a worker thread."""

    def __init__(self, model: ResolvedModel, download_dir: Path | None = None) -> None:
        self.model = model
        location = Path(model.location)
        if model.source == "hub":
            from piper.download_voices import download_voice  # only for users with internet

            if download_dir is None:
                raise ValueError("a Piper voice name needs a download directory")
            download_dir.mkdir(parents=True, exist_ok=True)
            download_voice(model.location, download_dir)
            location = download_dir / f"{model.location}.onnx"
        self._voice = PiperVoice.load(location)
        self.lock = threading.Lock()

    @property
    def sample_rate(self) -> int:
        return int(self._voice.config.sample_rate)

    def sentences(self, text: str) -> Iterator[np.ndarray]:
        """Yield int16 mono audio at `sample_rate`, one array per sentence of `text`."""
        with self.lock:
            for chunk in self._voice.synthesize(text):
                yield chunk.audio_int16_array.reshape(-1)

    def speak(self, text: str) -> np.ndarray:
        """All of `text` as one int16 array (greetings, tests)."""
        pieces = list(self.sentences(text))
        return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int16)
