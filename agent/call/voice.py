"""The agent's voice at the bridge rate: Piper sentences resampled once by soxr, and cached phrases."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from agent.audio.pcm import StreamResampler
from agent.call.clarify import ASK_AGAIN_TEXT
from agent.speech.tts import Synthesizer

VOLUME = 0.5
"""Piper normalises to full scale; −6 dB leaves G.711 headroom and keeps the agent's level
below a caller's, which the echo gate relies on."""


@dataclass(frozen=True)
class Phrases:
    """Fixed lines, synthesised once at start-up."""

    greeting: np.ndarray
    still_there: np.ndarray
    goodbye: np.ndarray
    apology: np.ndarray
    ask_again: np.ndarray


class Voice:
    """Speaks text as int16 audio at `rate` (the conference bridge rate)."""

    def __init__(self, synthesizer: Synthesizer, rate: int) -> None:
        self._synthesizer = synthesizer
        self.rate = rate

    def speak(self, text: str, cancelled: threading.Event | None = None) -> np.ndarray:
        """Synthesize `text` (blocking; run in a worker). Stops early when `cancelled` is set."""
        resampler = StreamResampler(self._synthesizer.sample_rate, self.rate)
        parts = []
        for sentence in self._synthesizer.sentences(text):
            if cancelled is not None and cancelled.is_set():
                break
            parts.append(resampler.push(sentence))
        parts.append(resampler.flush())
        audio = np.concatenate(parts).astype(np.float32) * VOLUME
        return np.clip(audio, -32768, 32767).astype(np.int16)

    def phrases(self, greeting: str) -> Phrases:
        return Phrases(self.speak(greeting), self.speak("Are you still there?"),
                       self.speak("Thank you for calling. Goodbye."),
                       self.speak("Sorry, something went wrong on my side. Could you ask that again?"),
                       self.speak(ASK_AGAIN_TEXT))
