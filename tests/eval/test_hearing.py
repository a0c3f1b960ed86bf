"""The offline telephone line of eval.hearing: a bit-exact G.711 μ-law encoder."""

import warnings

import numpy as np
import pytest

from eval.hearing import ulaw_encode
from eval.recording import ulaw_decode


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
