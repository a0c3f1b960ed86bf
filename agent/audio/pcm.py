"""Pure conversions between PCM bytes and sample arrays, and streaming resampling with soxr."""

from __future__ import annotations

import numpy as np
import soxr


def rms(samples: np.ndarray) -> float:
    """Root mean square of int16 or float samples, in the samples' own units."""
    if len(samples) == 0:
        return 0.0
    return float(np.sqrt(np.mean(np.asarray(samples, dtype=np.float64) ** 2)))


def int16_to_float(pcm: np.ndarray) -> np.ndarray:
    """int16 samples to float32 in [-1, 1)."""
    return pcm.astype(np.float32) / 32768.0


def float_to_int16(audio: np.ndarray) -> np.ndarray:
    """float samples in [-1, 1] to int16, clipping what lies outside."""
    return np.clip(np.round(audio * 32767.0), -32768, 32767).astype(np.int16)


def tone(hz: float, seconds: float, rate: int, level: float = 0.25) -> np.ndarray:
    """A sine beep as int16, faded in and out over 10 ms so it starts and stops without a click."""
    t = np.arange(int(seconds * rate)) / rate
    fade = np.minimum(1.0, np.minimum(t, t[-1] - t) / 0.01) if len(t) else t
    return (np.sin(2 * np.pi * hz * t) * fade * level * 32767).astype(np.int16)


def trim_leading_quiet(pcm: np.ndarray, threshold: int, keep: int) -> np.ndarray:
    """`pcm` from `keep` samples before its first sample louder than `threshold` (unchanged when none is)."""
    loud = np.flatnonzero(np.abs(pcm.astype(np.int32)) > threshold)
    return pcm[max(0, int(loud[0]) - keep):] if len(loud) else pcm


def bytes_to_int16(data: bytes) -> np.ndarray:
    """Little-endian 16-bit PCM bytes to samples; odd trailing bytes are a caller error."""
    if len(data) % 2:
        raise ValueError(f"16-bit PCM needs an even number of bytes, got {len(data)}")
    return np.frombuffer(data, dtype="<i2").astype(np.int16)


class StreamResampler:
    """Resamples a stream chunk by chunk, keeping soxr's filter state across chunks.

    Resampling each 20 ms frame on its own would restart the filter at every
    frame edge and add clicks; one stream per direction per call avoids that.
    """

    def __init__(self, in_rate: int, out_rate: int) -> None:
        self.in_rate = in_rate
        self.out_rate = out_rate
        # Float inside: soxr's own int16 output, fed frame by frame, differed from process to process in the
        # last bit or two, so the same call reached Whisper as a different signal on every run (and a marginal
        # sentence was now and then transcribed differently).
        self._stream = soxr.ResampleStream(in_rate, out_rate, 1, dtype="float32", quality="HQ")

    def push(self, pcm: np.ndarray) -> np.ndarray:
        """Resample the next int16 chunk; output may lag input by the filter's delay."""
        return _rounded(self._stream.resample_chunk(np.asarray(pcm, dtype=np.float32) / 32768.0))

    def flush(self) -> np.ndarray:
        """Drain the filter at the end of the stream."""
        return _rounded(self._stream.resample_chunk(np.zeros(0, dtype=np.float32), last=True))


def _rounded(audio: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(audio * 32768.0), -32768, 32767).astype(np.int16)
