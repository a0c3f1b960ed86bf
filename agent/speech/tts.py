"""Speech synthesis: Piper, one audio chunk per sentence so playback can start early."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnxruntime
from piper import PiperVoice
from piper.config import PiperConfig

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
        self._voice = _load_voice(location)
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


def _load_voice(location: Path) -> PiperVoice:
    """A Piper voice whose onnxruntime session has no memory arena. The arena keeps the largest buffers any
    sentence needed for the process's life, so every new longest reply raised the agent's memory for good (about
    60 MiB over a three-minute call); without it, what a sentence allocates is freed (agent.heap)."""
    config = PiperConfig.from_dict(json.loads(Path(f"{location}.json").read_text(encoding="utf-8")))
    options = onnxruntime.SessionOptions()
    options.enable_cpu_mem_arena = False
    session = onnxruntime.InferenceSession(str(location), sess_options=options, providers=["CPUExecutionProvider"])
    return PiperVoice(session=session, config=config)
