"""eval.asr_accuracy's default path: 8 kHz audio through pjsip's conference bridge, as on a live G.711 call."""

import subprocess
import sys
import wave

import numpy as np

from eval.kit.scoring import word_error_rate
from tests.conftest import REPO, read_wav, synthesize_caller


def write_8k(path, pcm: np.ndarray) -> None:
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(8000)
        wav.writeframes(pcm.astype("<i2").tobytes())


def test_the_bridge_delivers_16_khz_audio_a_recogniser_understands(tmp_path, models):
    tone = (np.sin(2 * np.pi * 1000 * np.arange(8000) / 8000) * 10000).astype(np.int16)
    write_8k(tmp_path / "tone.wav", tone)
    write_8k(tmp_path / "question.wav", synthesize_caller(tmp_path, "Where is your office?", engine="flite"))
    subprocess.run([sys.executable, "-m", "eval.bridge_path", str(tmp_path / "tone.wav"),
                    str(tmp_path / "question.wav"), "--out", str(tmp_path / "out")],
                   cwd=REPO, check=True, capture_output=True, timeout=60)
    out, rate = read_wav(tmp_path / "out" / "tone.wav")
    assert rate == 16000 and abs(len(out) - 16000) <= 320  # one second, give or take a frame
    spectrum = np.abs(np.fft.rfft(out * np.hanning(len(out))))
    assert abs(np.argmax(spectrum) * 16000 / len(out) - 1000) < 5
    assert abs(np.sqrt(np.mean(out.astype(float) ** 2)) / (10000 / np.sqrt(2)) - 1) < 0.05  # level kept
    speech, _ = read_wav(tmp_path / "out" / "question.wav")
    heard = models.transcriber.transcribe(speech.astype(np.float32) / 32768).text
    assert word_error_rate("Where is your office?", heard) <= 0.25, heard
