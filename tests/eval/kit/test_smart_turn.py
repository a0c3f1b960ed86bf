"""The turn model's input and the real model's output (Smart Turn v3.2, from the pinned pipecat-ai wheel)."""

import numpy as np
import pytest
from faster_whisper.feature_extractor import FeatureExtractor

from agent.models.manifest import load_manifest
from agent.models.verify import resolve
from eval.kit.smart_turn import TurnModel, turn_features


@pytest.fixture(scope="module")
def resolved_turn_model(settings) -> str:
    """Verified by size and sha256 (install it with `make models`)."""
    return str(resolve("turn", "smart-turn-v3.2", None, settings.models_path, load_manifest()).location)


def test_features_are_the_last_8_seconds_normalised_as_80_mel_bins_by_800_frames():
    extractor = FeatureExtractor(feature_size=80, chunk_length=8)
    rng = np.random.default_rng(0)
    short = rng.standard_normal(16000).astype(np.float32) * 0.1
    long = np.concatenate([rng.standard_normal(20 * 16000).astype(np.float32), short])
    assert turn_features(short, extractor).shape == (1, 80, 800)
    # Only the last 8 s count, and loudness does not (the waveform is normalised first).
    assert np.allclose(turn_features(long[-8 * 16000:] * 5, extractor), turn_features(long, extractor), atol=1e-4)


def test_the_real_model_gives_a_probability(resolved_turn_model):
    model = TurnModel(resolved_turn_model, threads=1)
    probability = model.complete(np.zeros(16000, np.float32))
    assert 0.0 <= probability <= 1.0
