"""End of turn from the caller's voice: Smart Turn v3.2 judges whether the words so far are finished. The agent
ends turns by what was said instead (call/endpointing); this stays as eval.turn_taking' baseline.

A fixed hangover waits the same 500 ms after "What are your opening hours?" as after "I'd like to
know, um…"; the turn model hears intonation and grammar, so a finished question can be answered
after a short pause and an unfinished one waits. Its input is the last 8 s of 16 kHz audio (zeros in
front when shorter), normalised to zero mean and unit variance, as Whisper's 80-bin log-mel features
(800 frames); its output is the probability that the turn is complete. It was trained on 16 kHz
speech: a G.711 call reaches it after the bridge's resampling to 16 kHz, never as raw 8 kHz.
"""

from __future__ import annotations

import threading

import numpy as np
import onnxruntime as ort
from faster_whisper.feature_extractor import FeatureExtractor

SAMPLE_RATE = 16000
SECONDS = 8
_EPSILON = 1e-7


def turn_features(audio: np.ndarray, extractor: FeatureExtractor) -> np.ndarray:
    """(1, 80, 800) float32 model input from float32 16 kHz audio of the utterance so far."""
    samples = SECONDS * SAMPLE_RATE
    clip = audio[-samples:].astype(np.float32)
    clip = np.pad(clip, (samples - len(clip), 0))
    clip = (clip - clip.mean()) / np.sqrt(clip.var() + _EPSILON)
    mel = extractor(clip, padding=0)[:, :SECONDS * 100]
    return mel[np.newaxis].astype(np.float32)


class TurnModel:
    """Wraps the ONNX session. `complete` blocks: run it in a worker thread."""

    def __init__(self, path: str, threads: int = 1) -> None:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])
        self._extractor = FeatureExtractor(feature_size=80, chunk_length=SECONDS)
        self._lock = threading.Lock()

    def complete(self, audio: np.ndarray) -> float:
        """Probability (0..1) that the caller has finished their turn, from float32 16 kHz audio."""
        features = turn_features(audio, self._extractor)
        with self._lock:
            (probability,) = self._session.run(None, {"input_features": features})
        return float(np.asarray(probability).reshape(-1)[0])
