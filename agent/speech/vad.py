"""Voice activity: Silero VAD v6 (ONNX) as a streaming speech-probability source at 16 kHz.

One `SileroModel` (one onnxruntime session) serves every call; each stream keeps its own `VadState`. The
exported graph takes a *sequence* of windows of one stream (its first input dimension is time) and fixes the
recurrent state's batch at one stream. On loading, the graph is rewritten so that the state's batch is free
(`streams_graph`): several streams with the same number of new windows then go through in one run, each with
its own state, and a run's fixed cost is paid once for all of them (`python -m eval.listening_cost`, Intel Xeon: the
listening thread's share of 16 silent calls 0.010 -> 0.005 of a core a call).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import onnx
import onnxruntime
from onnx import helper, numpy_helper

from agent.logs import event

log = logging.getLogger(__name__)

SAMPLE_RATE = 16000
WINDOW = 512
"""Samples per probability (32 ms at 16 kHz); the model accepts no other size."""
CONTEXT = 64
"""Trailing samples of the previous window that Silero expects in front of each window.
Without them the model silently returns near-zero probabilities."""
HIDDEN = 128


def _zeros_state() -> np.ndarray:
    return np.zeros((1, 1, HIDDEN), dtype=np.float32)


@dataclass
class VadState:
    """What one stream carries from window to window: the LSTM's state and the last window's tail."""

    h: np.ndarray = field(default_factory=_zeros_state)
    c: np.ndarray = field(default_factory=_zeros_state)
    context: np.ndarray = field(default_factory=lambda: np.zeros(CONTEXT, dtype=np.float32))


def streams_graph(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """The Silero graph with the recurrent state's batch free, or None when the graph is not the one expected.

    The encoder sees every window as its own row; a Transpose turns its (rows, 128, 1) output into the LSTM's
    (time, batch 1, 128). Replaced by a Reshape to (time, streams, 128), with `streams` read from `h`, rows
    ordered time-major (window t of stream s is row t * streams + s) make each stream its own LSTM batch entry.
    The decoder after the LSTM already keeps the batch: probabilities come out stream-major."""
    graph = model.graph
    lstm = next((n for n in graph.node if n.op_type == "LSTM"), None)
    if lstm is None or len(lstm.input) < 7 or lstm.input[5:7] != ["h", "c"]:
        return None
    feeding = next((n for n in graph.node if lstm.input[0] in n.output), None)
    if feeding is None or feeding.op_type != "Transpose" or \
            list(helper.get_attribute_value(feeding.attribute[0])) != [0, 2, 1]:
        return None
    edited = onnx.ModelProto()
    edited.CopyFrom(model)
    graph = edited.graph
    at = next(i for i, n in enumerate(graph.node) if n.output == feeding.output)
    del graph.node[at]
    names = {"one": [1], "two": [2], "minus_one": [-1], "hidden": [HIDDEN]}
    graph.initializer.extend(numpy_helper.from_array(np.array(v, np.int64), f"streams_{k}") for k, v in names.items())
    for offset, node in enumerate([
            helper.make_node("Shape", ["h"], ["streams_h_shape"]),
            helper.make_node("Slice", ["streams_h_shape", "streams_one", "streams_two"], ["streams_count"]),
            helper.make_node("Concat", ["streams_minus_one", "streams_count", "streams_hidden"], ["streams_shape"],
                             axis=0),
            helper.make_node("Reshape", [feeding.input[0], "streams_shape"], [feeding.output[0]])]):
        graph.node.insert(at + offset, node)
    for value in [*graph.input, *graph.output]:
        if value.name in ("h", "c", "hn", "cn"):
            value.type.tensor_type.shape.dim[1].dim_param = "streams"
    del graph.value_info[:]  # shapes inferred for one stream; onnxruntime infers them again
    onnx.checker.check_model(edited)
    return edited


class SileroModel:
    """The model, shared: `run_streams` is safe from several threads (onnxruntime's sessions are)."""

    def __init__(self, model_path: str) -> None:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # tiny model: threads cost more than they save
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        edited = streams_graph(onnx.load(model_path))
        if edited is None:  # another export: still right, one call a run
            event(log, "vad.unbatched", logging.WARNING, model=model_path)
        self.batched = edited is not None
        self._session = onnxruntime.InferenceSession(edited.SerializeToString() if edited else model_path,
                                                     sess_options=options, providers=["CPUExecutionProvider"])

    def run(self, windows: np.ndarray, state: VadState) -> np.ndarray:
        """Speech probabilities of the next `len(windows)` windows (float32, shape (n, WINDOW)) of the stream
        whose state is `state`, which is advanced past them."""
        return self.run_streams([(windows, state)])[0]

    def run_streams(self, streams: list[tuple[np.ndarray, VadState]]) -> list[np.ndarray]:
        """`run` for several streams at once: streams with the same number of windows share a model run. The
        states are advanced only once every run has succeeded (a failed call leaves them all as they were)."""
        out: list[np.ndarray] = [np.zeros(0, dtype=np.float32)] * len(streams)
        alike: dict[int, list[int]] = {}
        for i, (windows, _) in enumerate(streams):
            if len(windows):
                alike.setdefault(len(windows), []).append(i)
        groups = [group for members in alike.values() for group in ([members] if self.batched else
                                                                    [[i] for i in members])]
        advanced: list[tuple[int, np.ndarray, np.ndarray]] = []
        for group in groups:
            probs, hn, cn = self._run_group([streams[i] for i in group])
            for s, i in enumerate(group):
                out[i] = probs[s]
                advanced.append((i, hn[:, s:s + 1].copy(), cn[:, s:s + 1].copy()))
        for i, h, c in advanced:
            windows, state = streams[i]
            state.h, state.c, state.context = h, c, windows[-1, -CONTEXT:].copy()
        return out

    def _run_group(self, streams: list[tuple[np.ndarray, VadState]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One model run over streams of as many windows each: their probabilities (streams, windows) and the
        LSTM's new state (1, streams, 128) twice."""
        rows = np.stack([np.concatenate([np.concatenate([state.context[None, :], windows[:-1, -CONTEXT:]]), windows],
                                        axis=1) for windows, state in streams], axis=1)  # (time, streams, 576)
        h = np.concatenate([state.h for _, state in streams], axis=1)
        c = np.concatenate([state.c for _, state in streams], axis=1)
        probs, hn, cn = self._session.run(None, {"input": rows.reshape(-1, WINDOW + CONTEXT), "h": h, "c": c})
        return np.asarray(probs, dtype=np.float32).reshape(len(streams), -1), hn, cn


class SileroVad:
    """One stream: feeds any-size chunks of 16 kHz float32 audio; yields one probability per 512-sample window.

    The recurrent state and the 64-sample context carry over between calls, so the output does not depend on
    how the stream was chunked."""

    def __init__(self, model: SileroModel) -> None:
        self._model = model
        self.reset()

    @classmethod
    def open(cls, model_path: str) -> SileroVad:
        """A stream with a model of its own (evals and tests; the agent shares one model between calls)."""
        return cls(SileroModel(model_path))

    def reset(self) -> None:
        self._state = VadState()
        self._pending = np.zeros(0, dtype=np.float32)

    def window_probability(self, window: np.ndarray) -> float:
        """Speech probability of the next 512 samples of the stream."""
        return float(self._model.run(np.asarray(window, dtype=np.float32).reshape(1, WINDOW), self._state)[0])

    def push(self, audio: np.ndarray) -> list[float]:
        """Append audio to the stream; return probabilities of the windows it completed."""
        buffered = np.concatenate([self._pending, np.asarray(audio, dtype=np.float32).reshape(-1)])
        whole = len(buffered) // WINDOW * WINDOW
        self._pending = buffered[whole:]
        return self._model.run(buffered[:whole].reshape(-1, WINDOW), self._state).tolist()
