"""The browser call's audio shells: what the browser sends becomes 16 kHz mono frames; the agent's track
plays the playout queue in order, silence when it is empty."""

import asyncio

import av
import numpy as np

from agent.audio.playout import Playout
from agent.browser.call import FRAME_SAMPLES, PlayoutTrack, mono_16k


def _frame(pcm: np.ndarray, rate: int, layout: str) -> av.AudioFrame:
    frame = av.AudioFrame.from_ndarray(pcm.reshape(1, -1), format="s16", layout=layout)
    frame.sample_rate = rate
    return frame


def test_stereo_48k_opus_output_becomes_16k_mono():
    seconds = 0.5
    t = np.arange(int(48000 * seconds)) / 48000
    left = (8000 * np.sin(2 * np.pi * 440 * t)).astype(np.int16)
    interleaved = np.stack([left, left], axis=1).reshape(-1)
    resampler, out = None, []
    for start in range(0, len(interleaved), 960 * 2):  # 20 ms frames, as aiortc decodes them
        pcm, resampler = mono_16k(_frame(interleaved[start:start + 1920], 48000, "stereo"), resampler)
        out.append(pcm)
    audio = np.concatenate(out)
    assert 0 <= 16000 * seconds - len(audio) <= 320  # the streaming resampler holds back up to a frame
    spectrum = np.abs(np.fft.rfft(audio[1000:7000]))
    assert abs(np.argmax(spectrum) * 16000 / 6000 - 440) < 10


def test_16k_mono_passes_through_untouched():
    pcm = np.arange(FRAME_SAMPLES, dtype=np.int16)
    out, resampler = mono_16k(_frame(pcm, 16000, "mono"), None)
    assert resampler is None and np.array_equal(out, pcm)


def test_the_agent_track_plays_the_queue_in_order_then_silence():
    playout = Playout(FRAME_SAMPLES)
    speech = (np.arange(2 * FRAME_SAMPLES) % 100 + 1).astype(np.int16)
    playout.push(speech)
    sent = []
    track = PlayoutTrack(playout, sent.append)

    async def three() -> list[av.AudioFrame]:
        return [await track.recv() for _ in range(3)]

    frames = asyncio.run(three())
    assert [f.pts for f in frames] == [0, FRAME_SAMPLES, 2 * FRAME_SAMPLES]
    assert all(f.sample_rate == 16000 and f.samples == FRAME_SAMPLES for f in frames)
    assert np.array_equal(np.concatenate([f.to_ndarray().reshape(-1) for f in frames[:2]]), speech)
    assert not frames[2].to_ndarray().any()
    assert len(sent) == 3
