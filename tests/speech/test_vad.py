"""Silero VAD: speech marked, silence and noise not, the same probabilities however the audio is chunked or
however many calls share a model run."""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

from agent.audio.pcm import StreamResampler, int16_to_float
from agent.speech.vad import CONTEXT, WINDOW, VadState, streams_graph
from tests.conftest import synthesize_caller


def _speech_16k(tmp_path) -> np.ndarray:
    pcm8 = synthesize_caller(tmp_path, "Hello, I would like to know when you open tomorrow.")
    resampler = StreamResampler(8000, 16000)
    return int16_to_float(np.concatenate([resampler.push(pcm8), resampler.flush()]))


def test_marks_speech_in_the_espeak_recording(models, tmp_path):
    probabilities = np.array(models.new_vad().push(_speech_16k(tmp_path)))
    assert np.mean(probabilities > 0.5) > 0.6


def test_silence_is_not_speech(models):
    assert max(models.new_vad().push(np.zeros(3 * 16000, dtype=np.float32))) < 0.2


def test_low_level_white_noise_is_not_speech(models):
    noise = np.random.default_rng(7).standard_normal(3 * 16000).astype(np.float32) * 0.01
    assert max(models.new_vad().push(noise)) < 0.5


def test_probabilities_do_not_depend_on_chunk_size(models, tmp_path):
    audio = _speech_16k(tmp_path)
    whole = models.new_vad().push(audio)
    vad = models.new_vad()
    framed = [p for i in range(0, len(audio), 320) for p in vad.push(audio[i:i + 320])]
    assert len(whole) == len(framed) == len(audio) // 512
    assert np.allclose(whole, framed, atol=1e-5)


def _as_exported(model_path: str):
    """Silero's graph as exported (one stream per run): the reference the batched graph must agree with."""
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(model_path, sess_options=options, providers=["CPUExecutionProvider"])

    def run(windows, state):
        tails = np.concatenate([state.context[None, :], windows[:-1, -CONTEXT:]])
        probs, state.h, state.c = session.run(None, {"input": np.concatenate([tails, windows], axis=1),
                                                     "h": state.h, "c": state.c})
        state.context = windows[-1, -CONTEXT:].copy()
        return probs.reshape(-1)
    return run


def test_calls_heard_in_one_run_get_the_probabilities_each_would_get_alone(models, resolved, tmp_path):
    assert models.vad.batched
    rng = np.random.default_rng(5)
    audio = [_speech_16k(tmp_path), np.zeros(3 * 16000, np.float32),
             rng.standard_normal(3 * 16000).astype(np.float32) * 0.05, _speech_16k(tmp_path)[::-1].copy()]
    alone, together = _as_exported(resolved["vad"].location), [VadState() for _ in audio]
    reference = [VadState() for _ in audio]
    offsets, compared = [0] * len(audio), 0
    while any(offset + WINDOW <= len(a) for offset, a in zip(offsets, audio, strict=True)):
        streams = []
        for i, a in enumerate(audio):
            count = min(int(rng.integers(0, 5)), (len(a) - offsets[i]) // WINDOW)  # calls differ in new windows
            streams.append((a[offsets[i]:offsets[i] + count * WINDOW].reshape(-1, WINDOW), together[i]))
            offsets[i] += count * WINDOW
        for (windows, _), probs, state in zip(streams, models.vad.run_streams(streams), reference, strict=True):
            assert len(probs) == len(windows)
            if len(windows):
                assert np.allclose(probs, alone(windows, state), atol=1e-5)
                compared += len(windows)
    assert compared == sum(len(a) // WINDOW for a in audio)


def test_a_graph_that_is_not_silero_is_left_as_it_is():
    identity = helper.make_model(helper.make_graph(
        [helper.make_node("Identity", ["input"], ["speech_probs"])], "other",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["n", 576])],
        [helper.make_tensor_value_info("speech_probs", TensorProto.FLOAT, ["n", 576])]))
    assert streams_graph(identity) is None


def test_a_failed_run_leaves_every_calls_state_as_it_was(models):
    fine, broken = VadState(), VadState()
    speech = np.random.default_rng(2).standard_normal((1, WINDOW)).astype(np.float32) * 0.2
    malformed = np.zeros((2, 100), np.float32)  # not a window: onnxruntime refuses the run
    with pytest.raises(Exception):  # noqa: B017 - whatever onnxruntime raises
        models.vad.run_streams([(speech, fine), (malformed, broken)])
    assert not fine.h.any() and not fine.c.any() and not fine.context.any()
