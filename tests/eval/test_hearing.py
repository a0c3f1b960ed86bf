"""The offline telephone line of eval.hearing: a bit-exact G.711 μ-law encoder."""

import warnings

import numpy as np
import pytest

from eval.kit.line import ulaw_encode
from eval.kit.recording import ulaw_decode


def test_the_ulaw_encoder_matches_the_reference_g711_encoder_on_every_sample():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        audioop = pytest.importorskip("audioop")  # Python's G.711 reference, gone from Python 3.13
    samples = np.arange(-32768, 32768, dtype=np.int32).astype(np.int16)
    assert ulaw_encode(samples) == audioop.lin2ulaw(samples.tobytes(), 2)


def test_a_ulaw_round_trip_keeps_speech_within_its_quantisation_step():
    samples = (np.sin(np.linspace(0, 60, 8000)) * 12000).astype(np.int16)
    back = ulaw_decode(ulaw_encode(samples)).astype(int)
    assert np.all(np.abs(back - samples) <= np.abs(samples) / 16 + 8)


def test_a_noisy_line_adds_its_noise_at_the_asked_snr_before_the_line(tmp_path):
    from eval.kit.line import caller_audio
    from eval.kit.noise import Line, speech_power

    clean = caller_audio("How far will you travel?", "slt", tmp_path, 1.0, None)
    noisy = caller_audio("How far will you travel?", "slt", tmp_path, 1.0, Line(10.0, "white"))
    added = noisy - clean
    assert len(noisy) == len(clean)
    assert abs(10 * np.log10(speech_power(clean * 32768) / np.mean((added * 32768) ** 2)) - 10.0) < 1.0
