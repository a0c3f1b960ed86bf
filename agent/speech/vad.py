"""Voice activity: Silero VAD v6 (ONNX) as a streaming speech-probability source at 16 kHz."""

from __future__ import annotations

import numpy as np
import onnxruntime

SAMPLE_RATE = 16000
WINDOW = 512
"""Samples per probability (32 ms at 16 kHz); the model accepts no other size."""
CONTEXT = 64
"""Trailing samples of the previous window that Silero expects in front of each window.
Without them the model silently returns near-zero probabilities."""


class SileroVad:
    """Feeds any-size chunks of 16 kHz float32 audio; yields one probability per 512-sample window.

    The recurrent state and the 64-sample context carry over between calls, so the
    output does not depend on how the stream was chunked. One instance per call.
    """

    def __init__(self, model_path: str) -> None:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # tiny model: threads cost more than they save
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(model_path, sess_options=options,
                                                     providers=["CPUExecutionProvider"])
        self.reset()

    def reset(self) -> None:
        self._h = np.zeros((1, 1, 128), dtype=np.float32)
        self._c = np.zeros((1, 1, 128), dtype=np.float32)
        self._context = np.zeros(CONTEXT, dtype=np.float32)
        self._pending = np.zeros(0, dtype=np.float32)

    def window_probability(self, window: np.ndarray) -> float:
        """Speech probability of the next 512 samples of the stream."""
        model_input = np.concatenate([self._context, window]).reshape(1, CONTEXT + WINDOW)
        probs, self._h, self._c = self._session.run(None, {"input": model_input, "h": self._h, "c": self._c})
        self._context = window[-CONTEXT:]
        return float(np.asarray(probs).reshape(-1)[0])

    def push(self, audio: np.ndarray) -> list[float]:
        """Append audio to the stream; return probabilities of the windows it completed."""
        buffered = np.concatenate([self._pending, np.asarray(audio, dtype=np.float32).reshape(-1)])
        whole = len(buffered) // WINDOW * WINDOW
        self._pending = buffered[whole:]
        return [self.window_probability(buffered[i:i + WINDOW]) for i in range(0, whole, WINDOW)]
