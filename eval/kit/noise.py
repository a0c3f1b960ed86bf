"""A noisy line for the replay eval: white noise or babble mixed into the caller's speech at an SNR.

Pure functions on int16 arrays. Babble is other callers talking at once (several synthetic voices
saying other questions, summed), the hard case for a recogniser; white noise is a bad line. The SNR
is measured over the speech's voiced part, so leading and trailing silence do not flatter it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from eval.kit.cases import Case

BABBLE_VOICES = ("kal", "slt", "rms", "awb")


def babble_talkers(cases: list[Case]) -> list[tuple[Case, str]]:
    """Who talks in the babble: the last four spoken cases, each in one of the four flite voices, the caller's
    own voice among them (babble without it was tried and was harder for tiny.en, not easier)."""
    return list(zip([c for c in cases if c.say][-4:], BABBLE_VOICES, strict=False))


def white(samples: int, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(samples) * 3000).astype(np.float32)


def babble(voices: list[np.ndarray], samples: int) -> np.ndarray:
    """Several speakers at once, each looped to `samples` and started at a different point."""
    out = np.zeros(samples, dtype=np.float32)
    for n, voice in enumerate(v for v in voices if len(v)):
        looped = np.resize(voice.astype(np.float32), samples + len(voice))
        offset = (n * len(voice)) // max(1, len(voices))
        out += looped[offset:offset + samples]
    return out


def speech_power(pcm: np.ndarray, frame: int = 160) -> float:
    """Mean power of the frames within 20 dB of the loudest (the voiced part)."""
    frames = pcm[:len(pcm) // frame * frame].astype(np.float64).reshape(-1, frame)
    power = (frames ** 2).mean(axis=1)
    voiced = power[power > power.max() / 100] if len(power) and power.max() > 0 else power
    return float(voiced.mean()) if len(voiced) else 0.0


def mix(speech: np.ndarray, noise: np.ndarray, snr_db: float) -> np.ndarray:
    """`speech` with `noise` (any length: looped) added so that speech power / noise power = snr_db."""
    noise = np.resize(noise.astype(np.float64), len(speech))
    noise_power = float((noise ** 2).mean())
    if noise_power == 0:
        return speech.copy()
    gain = np.sqrt(speech_power(speech) / (noise_power * 10 ** (snr_db / 10)))
    return np.clip(speech.astype(np.float64) + gain * noise, -32768, 32767).astype(np.int16)


@dataclass(frozen=True)
class Line:
    """What the telephone line does to the caller's audio: noise at an SNR, and RTP packet loss."""

    snr_db: float | None = None
    noise: str = "babble"
    loss_pct: int = 0
    babble_voices: tuple[np.ndarray, ...] = ()

    def noise_for(self, samples: int) -> np.ndarray:
        return babble(list(self.babble_voices), samples) if self.noise == "babble" else white(samples)
