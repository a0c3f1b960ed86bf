"""A caller's words as the agent gets them down a telephone line: spoken by a caller voice at 8 kHz, through
G.711 μ-law and back, resampled to 16 kHz as the agent's bridge does."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from agent.audio.pcm import StreamResampler, int16_to_float
from eval.kit import voices
from eval.kit.cases import load_cases
from eval.kit.noise import Line, mix
from eval.kit.recording import ulaw_decode


def ulaw_encode(pcm: np.ndarray) -> bytes:
    """int16 samples to G.711 μ-law bytes (the encoder a PCMU call applies)."""
    x = pcm.astype(np.int32)
    sign = np.where(x < 0, 0x80, 0)
    # The reference encoder works on 14 bits (x >> 2, rounding toward minus infinity) and clips at 8159.
    fourteen = np.where(x < 0, -(x >> 2), x >> 2)
    magnitude = np.minimum((np.minimum(fourteen, 8159) << 2) + 0x84, 32767)
    exponent = np.floor(np.log2(magnitude)).astype(np.int32) - 7
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    return (~(sign | (exponent << 4) | mantissa) & 0xFF).astype(np.uint8).tobytes()


def to_16k(pcm8: np.ndarray) -> np.ndarray:
    """8 kHz int16 speech as the agent's resampler turns it into 16 kHz float, 20 ms frame by frame."""
    resampler = StreamResampler(8000, 16000)
    frames = [resampler.push(pcm8[i:i + 160]) for i in range(0, len(pcm8), 160)]
    return int16_to_float(np.concatenate(frames + [resampler.flush()]))


def telephone(pcm8: np.ndarray) -> np.ndarray:
    """8 kHz speech as the agent gets it from a PCMU call: μ-law round trip, then 16 kHz float."""
    return to_16k(ulaw_decode(ulaw_encode(pcm8)))


def speak(text: str, voice: str, folder: Path, stretch: float = 1.0) -> np.ndarray:
    """`text` in a caller voice (eval.kit.voices; a bare name is flite's; `stretch` > 1: slower), as 8 kHz int16."""
    return voices.read_8k(voices.say(text, voice, folder / "line.wav", stretch))


def caller_audio(text: str, voice: str, folder: Path, stretch: float, line: Line | None) -> np.ndarray:
    """What the agent gets when the caller says `text`: spoken, noise mixed in on a noisy `line`, down the line."""
    pcm8 = speak(text, voice, folder, stretch)
    if line is not None and line.snr_db is not None:
        pcm8 = mix(pcm8, line.noise_for(len(pcm8)), line.snr_db)
    return telephone(pcm8)


def spoken_questions(cases: Path, voice: str, limit: int | None = None) -> list[np.ndarray]:
    """The cases' questions (the first `limit`) as the agent gets them from a caller in `voice` on a clean
    line: what the decode benchmarks (eval.asr_threads, eval.asr_cost) time."""
    questions = [c.say for c in load_cases(cases) if c.say][:limit]
    with tempfile.TemporaryDirectory(prefix="eval-questions-") as folder:
        return [caller_audio(q, voice, Path(folder), 1.0, None) for q in questions]
