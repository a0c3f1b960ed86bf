"""The caller's turns kept as WAV files (AGENT_TURN_AUDIO_DIR)."""

import logging
import os
import wave

import numpy as np

from agent.side.turn_audio import TurnAudio


def test_a_turn_is_kept_under_its_call_and_number_as_16_khz_samples(tmp_path):
    keeper = TurnAudio(tmp_path / "heard")
    audio = np.sin(np.linspace(0, 200, 8000)).astype(np.float32) * 0.5
    keeper.keep("0123456789abcdef", 2, audio)
    keeper.close()
    with wave.open(str(tmp_path / "heard" / "0123456789abcdef" / "002.wav")) as wav:
        assert (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) == (16000, 1, 2)
        samples = np.frombuffer(wav.readframes(wav.getnframes()), "<i2")
    assert np.allclose(samples / 32768, audio, atol=2 / 32768)
    assert not list((tmp_path / "heard").rglob(".*"))  # no temporary file left behind


def test_a_write_that_fails_is_logged_and_the_call_goes_on(tmp_path, caplog):
    (tmp_path / "heard").write_text("a file where the folder should be")
    keeper = TurnAudio(tmp_path / "heard")
    with caplog.at_level(logging.WARNING):
        keeper.keep("0123456789abcdef", 1, np.zeros(1600, np.float32))
        keeper.close()
    assert "turn_audio.write_failed" in caplog.text


def test_a_calls_audio_goes_once_older_than_the_retention(tmp_path):
    from agent.side.turn_audio import purge

    keeper = TurnAudio(tmp_path / "heard")
    for call in ("old0000000000000", "new0000000000000"):
        keeper.keep(call, 1, np.zeros(1600, np.float32))
    keeper.close()
    old = tmp_path / "heard" / "old0000000000000" / "001.wav"
    os.utime(old, (1_000_000, 1_000_000))
    assert purge(tmp_path / "heard", older_than=2_000_000) == 1
    assert not old.parent.exists() and (tmp_path / "heard" / "new0000000000000" / "001.wav").exists()
    assert purge(tmp_path / "absent", older_than=2_000_000) == 0
