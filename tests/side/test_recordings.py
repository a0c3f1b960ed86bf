"""Whole-call recordings: both sides in one stereo WAV, a playable file at every second, bounded memory, and
start-up refusing to record without a consent notice."""

import time
import wave
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from agent.settings import SettingsError, parse
from agent.side.recordings import BLOCK, MAX_LAG_S, RATE, CallRecorder, purge

FRAME = 320


def read(path):
    with wave.open(str(path)) as wav:
        assert (wav.getnchannels(), wav.getframerate(), wav.getsampwidth()) == (2, RATE, 2)
        stereo = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2").reshape(-1, 2)
    return stereo[:, 0], stereo[:, 1]


@pytest.fixture
def writer():
    pool = ThreadPoolExecutor(1)
    yield pool
    pool.shutdown(wait=True)


def test_the_caller_is_left_and_the_agent_right_from_the_records_start(tmp_path, writer):
    recorder = CallRecorder(tmp_path / "c.wav", time.time() - 0.25, writer)
    for _ in range(100):  # two seconds of both sides
        recorder.heard(np.full(FRAME, 1000, np.int16))
        recorder.played(np.full(FRAME, -2000, np.int16))
    recorder.close().result()
    caller, agent = read(tmp_path / "c.wav")
    lead = len(caller) - 100 * FRAME
    assert 0.2 * RATE <= lead <= 0.35 * RATE  # the quarter second before media began is silence
    assert not caller[:lead].any() and (caller[lead:] == 1000).all() and (agent[lead:] == -2000).all()


def test_the_file_is_a_whole_wav_after_every_second_while_the_call_goes_on(tmp_path, writer):
    recorder = CallRecorder(tmp_path / "c.wav", time.time(), writer)
    for _ in range(int(2.5 * RATE / FRAME)):
        recorder.heard(np.ones(FRAME, np.int16))
        recorder.played(np.ones(FRAME, np.int16))
    writer.submit(lambda: None).result()  # what was handed over is written
    caller, _ = read(tmp_path / "c.wav")
    assert len(caller) == 2 * BLOCK  # whole seconds are on disk; the last half waits for its second
    recorder.close().result()


def test_a_side_that_falls_silent_is_filled_so_memory_stays_bounded(tmp_path, writer):
    recorder = CallRecorder(tmp_path / "c.wav", time.time(), writer)
    for _ in range(int(10 * RATE / FRAME)):  # the agent's clock runs; the caller's stream sends nothing
        recorder.played(np.full(FRAME, 7, np.int16))
    assert max(recorder._counts) <= (MAX_LAG_S + 1) * RATE
    recorder.close().result()
    caller, agent = read(tmp_path / "c.wav")
    assert len(agent) >= 10 * RATE - FRAME and not caller.any() and (agent[-RATE:] == 7).all()


def test_recordings_go_with_their_records_retention(tmp_path):
    (tmp_path / "old.wav").write_bytes(b"x")
    (tmp_path / "new.wav").write_bytes(b"x")
    past = time.time() - 40 * 86400
    import os

    os.utime(tmp_path / "old.wav", (past, past))
    assert purge(tmp_path, time.time() - 30 * 86400) == 1 and [p.name for p in tmp_path.iterdir()] == ["new.wav"]


def test_recording_calls_without_a_consent_notice_stops_start_up():
    with pytest.raises(SettingsError, match="AGENT_CONSENT_NOTICE"):
        parse(["--record-calls", "true"], {})
    assert parse(["--record-calls", "true", "--consent-notice", "This call is recorded."], {}).record_calls
