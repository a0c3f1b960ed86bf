"""After two declined questions the agent offers to take a message; a yes starts it, and the message is
stored and transcribed (real VAD, turn-taking, KB and voice; the recogniser hears a script)."""

import asyncio
from concurrent.futures import Executor, Future, ThreadPoolExecutor

import numpy as np

from agent.audio.pcm import StreamResampler
from agent.audio.playout import Playout
from agent.call.commands import Phrase
from agent.call.config import CallConfig
from agent.call.session import CallSession
from agent.call.speaking.voice import Voice
from agent.call.understanding.message import MessageConfig
from agent.call.understanding.prepare import Pipeline
from agent.call.workers import Busy
from agent.knowledge.memory import CallMemory
from agent.sip.leg import CallLeg
from agent.sip.port import BRIDGE_RATE, FRAME_SAMPLES
from agent.speech.asr import Transcript
from tests.call.test_session import NoSip, Recorder, listening
from tests.conftest import synthesize_caller

SCRIPT = ["Can I order a large pepperoni pizza?", "What will the weather be like tomorrow?", "Yes please.",
          "Please call me back about my boiler."]


class ScriptedTranscriber:
    """Hears each utterance as the next line of the script."""

    beam_size = 1

    def __init__(self):
        self.lines = list(SCRIPT)

    def transcribe(self, audio, prompt=None, beam_size=None, hypotheses=1, full_window=False, settle=None):
        return Transcript(self.lines.pop(0), "en", len(audio) / 16000, 0.01, avg_logprob=-0.1)


class AlwaysBusy(Executor):
    """No worker is ever free for a speculative reply, so each utterance is transcribed once, at its end."""

    def submit(self, fn, /, *args, **kwargs):
        refused = Future()
        refused.set_exception(Busy("no worker free"))
        return refused


class MessageRecorder(Recorder):
    """The session's reporter, keeping the messages too."""

    def __init__(self):
        super().__init__()
        self.saved, self.transcribed = [], []

    def message_saved(self, call, message, audio): self.saved.append((message, audio))
    def message_transcribed(self, call, message, transcript): self.transcribed.append(transcript)


def test_two_declines_bring_the_offer_and_a_yes_records_the_message(models, bundled_kb, tmp_path):
    pcm8 = synthesize_caller(tmp_path, "Something the caller says.")
    resampler = StreamResampler(8000, BRIDGE_RATE)
    utterance = np.concatenate([resampler.push(pcm8), resampler.flush(), np.zeros(16000, np.int16)])
    voice = Voice(models.synthesizer, BRIDGE_RATE)
    phrases = voice.phrases("Hello.")
    recorder = MessageRecorder()

    async def say(session, leg, turns_before):
        leg.playout.clear()  # the line has played whatever the agent said
        for start in range(0, len(utterance), FRAME_SAMPLES):
            session.on_frame(utterance[start:start + FRAME_SAMPLES], 0.0)
        for _ in range(200):
            await asyncio.sleep(0.05)
            if len(recorder.turns) > turns_before:
                return leg.playout.pending_frames

    async def scenario():
        leg = CallLeg("sip-1", "<sip:caller@127.0.0.1>", "agent", Playout(FRAME_SAMPLES), NoSip(None), 0)
        session = CallSession(leg, asyncio.get_running_loop(),
                              Pipeline(ScriptedTranscriber(), bundled_kb, voice, ThreadPoolExecutor(1), AlwaysBusy()),
                              phrases, clock, CallMemory(), recorder, CallConfig(messages=MessageConfig(silence_s=0.5)))
        task = asyncio.create_task(session.run())
        await say(session, leg, 0)
        after_second = await say(session, leg, 1)
        after_yes = await say(session, leg, 2)
        await say(session, leg, 3)  # the message itself
        session.on_ended("200 Normal call clearing")
        return after_second, after_yes, await task

    with listening(models.vad.run_streams) as clock:
        after_second, after_yes, record = asyncio.run(scenario())
    decline = bundled_kb.chunks(bundled_kb.compose(CallMemory(), SCRIPT[1]))[0].spoken
    assert [t.outcome for t in record.turns] == ["answered", "answered", "message requested", "message taken"]
    assert record.turns[0].abstained and record.turns[1].abstained and decline.startswith("Sorry")
    # The second decline is followed by the offer; the yes by the prompt and its tone.
    assert after_second * FRAME_SAMPLES >= len(phrases[Phrase.MESSAGE_OFFER])
    assert after_yes * FRAME_SAMPLES >= len(phrases[Phrase.MESSAGE_PROMPT])
    ((message, audio),) = recorder.saved
    assert message.ended_by == "silence" and 1.0 < len(audio) / 16000 < len(utterance) / 16000
    assert recorder.transcribed == ["Please call me back about my boiler."]
    assert record.turns[-1].transcript == "Please call me back about my boiler."
