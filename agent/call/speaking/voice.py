"""The agent's voice at the bridge rate: Piper sentences resampled once by soxr, and cached phrases."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from agent.audio.pcm import StreamResampler, tone, trim_leading_quiet
from agent.call.commands import Phrase
from agent.call.speaking.speech_cache import SpeechCache
from agent.logs import event
from agent.models.verify import identity
from agent.speech.tts import Synthesizer

log = logging.getLogger(__name__)

TONE_HZ, TONE_S = 1000, 0.4
"""The beep before a message is recorded, as on an answering machine."""
VOLUME = 0.5
"""Piper normalises to full scale; −6 dB leaves G.711 headroom and keeps the agent's level
below a caller's, which the echo gate relies on."""
QUIET_LEVEL, LEAD_MS = 64, 10
"""Piper starts a sentence with up to ~80 ms of near-silence (samples within ±8 here), which the caller would
wait through before the answer is heard: audio is kept from LEAD_MS before its first sample above QUIET_LEVEL."""


class Phrases:
    """The profile's fixed lines as audio, synthesised once at start-up: `phrases[Phrase.GOODBYE]`."""

    def __init__(self, audio: dict[Phrase, np.ndarray]) -> None:
        missing = set(Phrase) - audio.keys()
        if missing:
            raise ValueError(f"no audio for {sorted(p.name for p in missing)}")
        self._audio = dict(audio)

    def __getitem__(self, phrase: Phrase) -> np.ndarray:
        return self._audio[phrase]


class Voice:
    """Speaks text as int16 audio at `rate` (the conference bridge rate), from its speech cache when the
    sentence was rendered before."""

    def __init__(self, synthesizer: Synthesizer, rate: int, cache_dir: Path | None = None,
                 on_lookup: Callable[[bool], None] | None = None) -> None:
        """`cache_dir`: where rendered sentences are kept (DATA_DIR/speech), None for no cache; `on_lookup(hit)`
        is told of every cache lookup."""
        self._synthesizer = synthesizer
        self.rate = rate
        self.cache = SpeechCache(cache_dir, self.key, on_lookup) if cache_dir is not None else None
        self.fixed_texts: set[str] = set()
        """The fixed phrases' texts (kept in the cache whatever the KB holds)."""

    @property
    def key(self) -> str:
        """Changes whenever this voice's audio would: the weights, the rate, the volume, the lead kept."""
        return f"{identity(self._synthesizer.model)}@{self.rate}Hz*{VOLUME}>{LEAD_MS}ms"

    def speak(self, text: str, cancelled: threading.Event | None = None) -> np.ndarray:
        """`text` as audio (blocking; run in a worker): from the cache, else synthesised, kept when complete.
        Synthesis stops early when `cancelled` is set."""
        if self.cache is not None and (cached := self.cache.get(text)) is not None:
            return cached
        audio = self._synthesize(text, cancelled)
        if self.cache is not None and not (cancelled is not None and cancelled.is_set()):
            self._keep(text, audio)
        return audio

    def render(self, text: str) -> None:
        """Put `text` in the cache ahead of need (a worker's background job)."""
        if self.cache is not None and not self.cache.has(text):
            self._keep(text, self._synthesize(text, None))

    def _keep(self, text: str, audio: np.ndarray) -> None:
        try:
            self.cache.put(text, audio)
        except OSError as exc:  # a full disk costs the cache, never the call
            event(log, "speech.cache_write_failed", logging.WARNING, error=type(exc).__name__)

    def _synthesize(self, text: str, cancelled: threading.Event | None) -> np.ndarray:
        resampler = StreamResampler(self._synthesizer.sample_rate, self.rate)
        parts = []
        for sentence in self._synthesizer.sentences(text):
            if cancelled is not None and cancelled.is_set():
                break
            parts.append(resampler.push(sentence))
        parts.append(resampler.flush())
        audio = np.clip(np.concatenate(parts).astype(np.float32) * VOLUME, -32768, 32767).astype(np.int16)
        return trim_leading_quiet(audio, QUIET_LEVEL, self.rate * LEAD_MS // 1000)

    def phrases(self, opening: str) -> Phrases:
        """Every fixed line of a profile whose greeting is `opening`; the message prompt ends with its tone."""
        self.fixed_texts.update(phrase_texts(opening))
        audio = {phrase: self.speak(phrase.words(opening)) for phrase in Phrase}
        audio[Phrase.MESSAGE_PROMPT] = np.concatenate([audio[Phrase.MESSAGE_PROMPT],
                                                       np.zeros(self.rate // 4, dtype=np.int16),
                                                       tone(TONE_HZ, TONE_S, self.rate)])
        return Phrases(audio)


def phrase_texts(opening: str) -> list[str]:
    """What a profile's fixed lines say (kept in the speech cache whatever the KB holds)."""
    return [phrase.words(opening) for phrase in Phrase]
