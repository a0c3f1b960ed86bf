"""The caller's side of the line: frames in, VAD windows out through the one listening clock (the real Silero
VAD), the same probabilities as one window at a time, bounded, echo-gated, a broken model ending only its call."""

import asyncio
import threading

import numpy as np
import pytest

from agent.audio.pcm import StreamResampler, int16_to_float
from agent.call.listening.listen import MAX_QUEUED_FRAMES, ListenClock, Listener
from agent.sip.port import FRAME_SAMPLES
from agent.speech.vad import WINDOW, SileroVad
from tests.conftest import synthesize_caller


@pytest.fixture
def clock(models):
    clock = ListenClock(models.vad.run_streams, 0.04)
    yield clock
    clock.stop()


def _heard(listeners: list[Listener], held=lambda: False) -> list[list]:
    async def collect(listener):
        return [window async for window in listener.windows(held)]

    async def together():
        return await asyncio.gather(*(collect(listener) for listener in listeners), return_exceptions=True)
    return asyncio.run(together())


def _frames(pcm: np.ndarray) -> list[np.ndarray]:
    return [pcm[i:i + FRAME_SAMPLES] for i in range(0, len(pcm) - FRAME_SAMPLES + 1, FRAME_SAMPLES)]


def _speech(tmp_path, text="What are your opening hours?") -> np.ndarray:
    """A caller's question at 16 kHz, as every transport hands it over."""
    resampler = StreamResampler(8000, 16000)
    pcm = synthesize_caller(tmp_path, text)
    return np.concatenate([resampler.push(pcm), resampler.flush()])


def test_frames_become_vad_windows_and_the_caller_speaking_is_heard(clock, tmp_path):
    listener = Listener(clock, echo_gate_db=-9.0)
    frames = _frames(_speech(tmp_path))
    for frame in frames:
        listener.push(frame, 0.0)
    listener.close()
    (windows,) = _heard([listener])
    assert len(windows) == len(frames) * FRAME_SAMPLES // WINDOW
    assert all(len(w.pcm) == WINDOW and w.samples.dtype == np.float32 for w in windows)
    assert max(w.speech for w in windows) > 0.9


def test_calls_heard_together_get_the_probabilities_of_one_window_at_a_time(models, clock, tmp_path):
    """Three calls, their frames arriving from another thread while the clock ticks, each with its own
    recurrent state: every window's probability is what the VAD gives that call's audio window by window."""
    texts = ["What are your opening hours?", "Do you take cheques?", "Where is your office? I need the address."]
    calls = [np.concatenate([np.zeros(i * 1000, np.int16), _speech(tmp_path, text)]) for i, text in enumerate(texts)]
    listeners = [Listener(clock, echo_gate_db=-9.0) for _ in calls]

    def line():
        for step in range(max(len(_frames(pcm)) for pcm in calls)):
            for listener, pcm in zip(listeners, calls, strict=True):
                frames = _frames(pcm)
                if step < len(frames):
                    listener.push(frames[step], 0.0)
            if step % 5 == 0:
                threading.Event().wait(0.01)
        for listener in listeners:
            listener.close()

    feeder = threading.Thread(target=line)
    feeder.start()
    heard = _heard(listeners)
    feeder.join()
    for pcm, windows in zip(calls, heard, strict=True):
        vad = SileroVad(models.vad)
        whole = len(_frames(pcm)) * FRAME_SAMPLES // WINDOW * WINDOW
        alone = [vad.window_probability(int16_to_float(pcm[i:i + WINDOW])) for i in range(0, whole, WINDOW)]
        assert np.allclose([w.speech for w in windows], alone, atol=1e-5)
        assert max(alone) > 0.9


def test_what_could_be_the_agents_own_echo_is_not_the_caller(clock, tmp_path):
    listener = Listener(clock, echo_gate_db=-9.0)
    for frame in _frames(_speech(tmp_path)):
        listener.push(frame, 30000.0)  # the agent was talking far louder at the same time
    listener.close()
    (windows,) = _heard([listener])
    assert windows and max(w.speech for w in windows) == 0.0


def test_a_held_call_yields_nothing(clock, tmp_path):
    listener = Listener(clock, echo_gate_db=-9.0)
    for frame in _frames(_speech(tmp_path)):
        listener.push(frame, 0.0)
    listener.close()
    assert _heard([listener], held=lambda: True) == [[]]


def test_a_broken_model_ends_only_the_call_it_broke_on(models, tmp_path):
    def run(streams):
        if any(state is broken.state for _, state in streams):
            raise RuntimeError("onnxruntime session lost")
        return models.vad.run_streams(streams)

    clock = ListenClock(run, 0.04)
    try:
        broken, fine = Listener(clock, echo_gate_db=-9.0), Listener(clock, echo_gate_db=-9.0)
        for frame in _frames(_speech(tmp_path)):
            broken.push(frame, 0.0)
            fine.push(frame, 0.0)
        broken.close()
        fine.close()
        failed, heard = _heard([broken, fine])
    finally:
        clock.stop()
    assert isinstance(failed, RuntimeError) and max(w.speech for w in heard) > 0.9


def test_a_stalled_audio_path_drops_frames_beyond_its_queue_and_counts_them(clock):
    listener = Listener(clock, echo_gate_db=-9.0)  # never listened to: nothing takes its frames
    for _ in range(MAX_QUEUED_FRAMES + 10):
        listener.push(np.zeros(FRAME_SAMPLES, np.int16), 0.0)
    assert listener.dropped_frames == 10


def test_a_call_where_nobody_speaks_is_heard_every_quiet_tick_and_an_attentive_one_at_every_tick(models):
    clock = ListenClock(models.vad.run_streams, 0.032, quiet_tick_s=3600, running=False)
    listener, attentive = Listener(clock, echo_gate_db=-9.0), [False]
    heard: list[int] = []

    async def scenario():
        windows = listener.windows(held=lambda: False, attentive=lambda: attentive[0])
        reader = asyncio.create_task(anext(windows))
        await asyncio.sleep(0)  # the call is on the clock
        for want_attention in (False, False, True):
            attentive[0] = want_attention
            for _ in range(8):
                listener.push(np.zeros(FRAME_SAMPLES, np.int16), 0.0)
            clock.step()
            await asyncio.sleep(0)
            heard.append(listener._ready.qsize() + (1 if reader.done() else 0))
        reader.cancel()

    asyncio.run(scenario())
    # Heard at once (its first quiet tick), not again within the quiet tick, then at the next tick once attentive:
    # 8 frames, 5 windows; 16 frames, 10 windows in all; 24 frames, 15.
    assert heard == [5, 5, 15]


def test_quiet_calls_are_heard_at_the_same_tick_in_one_model_run(models):
    runs: list[list[int]] = []

    def run(streams):
        runs.append([len(windows) for windows, _ in streams])
        return models.vad.run_streams(streams)

    clock = ListenClock(run, 0.032, quiet_tick_s=0.128, running=False)
    listeners = [Listener(clock, echo_gate_db=-9.0) for _ in range(3)]

    async def scenario():
        def hear(listener):
            return asyncio.create_task(anext(listener.windows(held=lambda: False, attentive=lambda: False)))
        pending = [hear(listener) for listener in listeners[:2]]
        await asyncio.sleep(0)  # two calls are on the clock; the third comes two ticks later
        for tick in range(8):  # two quiet ticks of four ticks each
            if tick == 2:
                pending.append(hear(listeners[2]))
                await asyncio.sleep(0)
            for listener in listeners:
                for _ in range(2):  # 40 ms of line audio a tick
                    listener.push(np.zeros(FRAME_SAMPLES, np.int16), 0.0)
            clock.step()
            await asyncio.sleep(0)
        for task in pending:
            task.cancel()

    asyncio.run(scenario())
    # The late call is first heard with the others, at the next quiet tick (its 200 ms of audio: 6 windows; the
    # others' 160 ms and what was left over: 5), not at the tick it came on.
    assert runs == [[1, 1], [5, 5, 6]]
