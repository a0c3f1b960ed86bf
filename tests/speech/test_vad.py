import numpy as np

from agent.audio.pcm import StreamResampler, int16_to_float
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
