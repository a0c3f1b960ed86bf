"""Whisper tiny.en on a telephone-band caller: 8 kHz speech, resampled to 16 kHz as on a call."""

import numpy as np

from agent.audio.pcm import StreamResampler, int16_to_float
from eval.scoring import word_error_rate
from tests.conftest import synthesize_caller

SENTENCE = "I would like to check the status of my order."


def _to_16k(pcm8: np.ndarray) -> np.ndarray:
    resampler = StreamResampler(8000, 16000)
    frames = [resampler.push(pcm8[i:i + 160]) for i in range(0, len(pcm8), 160)]
    return int16_to_float(np.concatenate(frames + [resampler.flush()]))


def test_transcribes_espeak_speech_sent_at_8khz(models, tmp_path):
    transcript = models.transcriber.transcribe(_to_16k(synthesize_caller(tmp_path, SENTENCE)))
    assert word_error_rate(SENTENCE, transcript.text) <= 0.2, transcript.text
    assert transcript.language == "en"


def test_silence_transcribes_to_little_or_nothing(models):
    transcript = models.transcriber.transcribe(np.zeros(16000, dtype=np.float32))
    assert len(transcript.text.split()) <= 2


def test_stereo_input_is_rejected(models):
    import pytest

    with pytest.raises(ValueError, match="mono"):
        models.transcriber.transcribe(np.zeros((2, 16000), dtype=np.float32))
