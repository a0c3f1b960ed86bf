"""A failing stage ends the turn with a spoken apology, never the call (real VAD, voice and KB;
only the speech recogniser is replaced, by one that fails)."""

import asyncio
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from agent.audio.pcm import StreamResampler
from agent.audio.playout import Playout
from agent.call.session import CallSession
from agent.call.turns import TurnConfig
from agent.call.voice import Voice
from agent.knowledge.memory import CallMemory
from agent.sip.leg import CallLeg
from agent.sip.port import BRIDGE_RATE, FRAME_SAMPLES
from tests.conftest import synthesize_caller


class BrokenTranscriber:
    def transcribe(self, audio, prompt=None):
        raise RuntimeError("decoder crashed")


class Recorder:
    def __init__(self):
        self.errors, self.turns, self.ended = [], [], []

    def call_started(self, call): ...
    def turn_done(self, call, turn): self.turns.append(turn)
    def barge_in(self, call): ...
    def dtmf(self, call, digit): ...
    def error(self, stage): self.errors.append(stage)
    def call_ended(self, call): self.ended.append(call)


class NoSip:
    def call_soon(self, command): ...
    def find(self, call_id, sip_call_id): return None


def test_an_asr_failure_is_apologised_for_and_the_call_goes_on(models, bundled_kb, tmp_path):
    pcm8 = synthesize_caller(tmp_path, "What are your opening hours?")
    resampler = StreamResampler(8000, BRIDGE_RATE)
    speech = np.concatenate([np.zeros(8000, np.int16), resampler.push(pcm8), resampler.flush(),
                             np.zeros(24000, np.int16)])
    voice = Voice(models.synthesizer, BRIDGE_RATE)
    phrases = voice.phrases("Hello.")
    recorder = Recorder()

    async def scenario():
        leg = CallLeg("sip-1", "<sip:caller@127.0.0.1>", "agent", Playout(FRAME_SAMPLES), NoSip(), 0)
        session = CallSession(leg, asyncio.get_running_loop(), transcriber=BrokenTranscriber(), knowledge=bundled_kb,
                              voice=voice, phrases=phrases, vad=models.new_vad(), turn_config=TurnConfig(),
                              models=ThreadPoolExecutor(1), memory=CallMemory(), echo_gate_db=-9,
                              inactivity_s=60, max_call_s=600, dead_call_s=600, reporter=recorder)
        task = asyncio.create_task(session.run())
        for start in range(0, len(speech), FRAME_SAMPLES):
            session.on_frame(speech[start:start + FRAME_SAMPLES], 0.0)
        for _ in range(200):
            await asyncio.sleep(0.05)
            if recorder.errors:
                break
        queued = leg.playout.pending_frames
        session.on_ended("200 Normal call clearing")
        record = await task
        return queued, record

    queued, record = asyncio.run(scenario())
    apology_frames = len(phrases.apology) // FRAME_SAMPLES
    assert recorder.errors == ["asr"] and queued >= apology_frames
    assert record.turns[0].outcome == "failed: asr" and recorder.ended == [record]
