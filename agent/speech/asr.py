"""Speech recognition: faster-whisper on 16 kHz audio, one utterance at a time."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
from faster_whisper import WhisperModel

from agent.models.verify import ResolvedModel

SAMPLE_RATE = 16000


@dataclass(frozen=True)
class Transcript:
    """What the caller said in one utterance."""

    text: str
    """Recognised text, segments joined, stripped."""
    language: str
    """Language Whisper decoded in."""
    audio_s: float
    """Length of the audio that was transcribed."""
    no_speech_prob: float
    """Highest no-speech probability over segments (high means probably not speech)."""
    queue_s: float = 0.0
    """Time spent waiting for the model (another call was using it)."""
    decode_s: float = 0.0
    """Time spent decoding."""


class Transcriber:
    """Wraps one WhisperModel. Call `transcribe` from a worker thread, never the event loop."""

    def __init__(self, model: ResolvedModel, *, compute_type: str = "int8", beam_size: int = 1,
                 language: str = "en", threads: int = 2, workers: int = 1, download_dir: str | None = None) -> None:
        self.model = model
        self._beam_size = beam_size
        self._language = language
        # `workers` decodes run at once (CTranslate2 keeps one model replica per worker): a decode that
        # turns out stale (the caller went on talking) or another call's no longer holds up this one.
        self._whisper = WhisperModel(model.location, device="cpu", compute_type=compute_type, cpu_threads=threads,
                                     num_workers=workers, download_root=download_dir,
                                     local_files_only=model.source != "hub")
        # CTranslate2 would queue excess decodes anyway; the semaphore makes that wait measurable.
        self.lock = threading.BoundedSemaphore(workers)

    def transcribe(self, audio: np.ndarray, prompt: str | None = None) -> Transcript:
        """Transcribe float32 16 kHz mono audio; `prompt` biases vocabulary (KB terms)."""
        if audio.ndim != 1:
            raise ValueError(f"expected mono audio, got shape {audio.shape}")
        asked = time.perf_counter()
        with self.lock:
            started = time.perf_counter()
            segments, info = self._whisper.transcribe(
                audio.astype(np.float32, copy=False), language=self._language if self._whisper.model.is_multilingual
                else None, beam_size=self._beam_size, initial_prompt=prompt or None, vad_filter=False,
                condition_on_previous_text=False, without_timestamps=True)
            # transcribe() is lazy: decoding happens while the generator is consumed,
            # so it must be consumed here, inside the worker thread.
            parts = list(segments)
            finished = time.perf_counter()
        text = " ".join(s.text.strip() for s in parts).strip()
        no_speech = max((s.no_speech_prob for s in parts), default=1.0)
        return Transcript(text, info.language, len(audio) / SAMPLE_RATE, no_speech, started - asked, finished - started)
