"""The caller's side of the line: frames in, VAD windows out (the real Silero VAD), bounded, echo-gated."""

import asyncio
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from agent.audio.pcm import StreamResampler
from agent.call.listen import MAX_QUEUED_FRAMES, Listener
from agent.sip.port import FRAME_SAMPLES
from agent.speech.vad import WINDOW
from tests.conftest import synthesize_caller


def _heard(listener: Listener, held=lambda: False) -> list:
    async def collect():
        return [window async for window in listener.windows(held)]
    return asyncio.run(collect())


def _frames(pcm: np.ndarray) -> list[np.ndarray]:
    return [pcm[i:i + FRAME_SAMPLES] for i in range(0, len(pcm) - FRAME_SAMPLES + 1, FRAME_SAMPLES)]


def _speech(tmp_path) -> np.ndarray:
    """A caller's question at 16 kHz, as every transport hands it over."""
    resampler = StreamResampler(8000, 16000)
    pcm = synthesize_caller(tmp_path, "What are your opening hours?")
    return np.concatenate([resampler.push(pcm), resampler.flush()])


def test_frames_become_vad_windows_and_the_caller_speaking_is_heard(models, tmp_path):
    with ThreadPoolExecutor(1) as pool:
        listener = Listener(models.new_vad(), pool, echo_gate_db=-9.0)
        frames = _frames(_speech(tmp_path))
        for frame in frames:
            listener.push(frame, 0.0)
        listener.close()
        windows = _heard(listener)
    assert len(windows) == len(frames) * FRAME_SAMPLES // WINDOW
    assert all(len(w.pcm) == WINDOW and w.samples.dtype == np.float32 for w in windows)
    assert max(w.speech for w in windows) > 0.9


def test_what_could_be_the_agents_own_echo_is_not_the_caller(models, tmp_path):
    with ThreadPoolExecutor(1) as pool:
        listener = Listener(models.new_vad(), pool, echo_gate_db=-9.0)
        for frame in _frames(_speech(tmp_path)):
            listener.push(frame, 30000.0)  # the agent was talking far louder at the same time
        listener.close()
        assert max(w.speech for w in _heard(listener)) == 0.0


def test_a_held_call_yields_nothing(models, tmp_path):
    with ThreadPoolExecutor(1) as pool:
        listener = Listener(models.new_vad(), pool, echo_gate_db=-9.0)
        for frame in _frames(_speech(tmp_path)):
            listener.push(frame, 0.0)
        listener.close()
        assert _heard(listener, held=lambda: True) == []


def test_a_stalled_audio_path_drops_frames_beyond_its_queue_and_counts_them(models):
    async def stalled():
        listener = Listener(models.new_vad(), None, echo_gate_db=-9.0)
        for _ in range(MAX_QUEUED_FRAMES + 10):
            listener.push(np.zeros(FRAME_SAMPLES, np.int16), 0.0)
        return listener.dropped_frames
    assert asyncio.run(stalled()) == 10
