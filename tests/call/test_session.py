"""A failing stage ends the turn with a spoken apology, never the call; an unsure hearing is asked again
(real VAD, voice and KB; only the speech recogniser is replaced, by one that fails or mishears)."""

import asyncio
import threading
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np

from agent.audio.pcm import StreamResampler
from agent.audio.playout import Playout
from agent.call.commands import Phrase
from agent.call.config import CallConfig
from agent.call.listening.endpointing import EndpointConfig
from agent.call.listening.listen import ListenClock
from agent.call.session import CallSession
from agent.call.speaking.voice import Voice
from agent.call.understanding.prepare import Pipeline
from agent.call.workers import Busy
from agent.knowledge.memory import CallMemory
from agent.sip.leg import CallLeg
from agent.sip.port import BRIDGE_RATE, FRAME_SAMPLES
from agent.speech.asr import Transcript
from tests.conftest import synthesize_caller


class BrokenTranscriber:
    beam_size = 1

    def transcribe(self, audio, prompt=None, beam_size=None, hypotheses=1, full_window=False):
        raise RuntimeError("decoder crashed")


class Recorder:
    def __init__(self):
        self.errors, self.turns, self.ended = [], [], []

    def call_started(self, call): ...
    def turn_done(self, call, turn): self.turns.append(turn)
    def turn_cut_off(self, call, n, turn): ...
    def barge_in(self, call): ...
    def dtmf(self, call, digit): ...
    def error(self, stage): self.errors.append(stage)
    def message_saved(self, call, message, audio): ...
    def message_transcribed(self, call, message, transcript): ...
    def transfer(self, call, result, to): ...
    def call_ended(self, call): self.ended.append(call)


class NoSip:
    """The SIP side of a leg: commands are only noted (`calls`, when given)."""

    def __init__(self, calls=None):
        self.calls = calls

    def call_soon(self, command):
        if self.calls is not None:
            self.calls.append(command)

    def find(self, call_id, sip_call_id): return None


class FailingVad:
    """A VAD whose model breaks mid-call (after half a second of audio)."""

    def __init__(self, run):
        self._run, self._windows = run, 0

    def __call__(self, streams):
        self._windows += sum(len(windows) for windows, _ in streams)
        if self._windows > 15:
            raise RuntimeError("onnxruntime session lost")
        return self._run(streams)


class ModelThread(ThreadPoolExecutor):
    """The test's one model thread, which tells whether anything is running or waiting on it."""

    def __init__(self):
        super().__init__(1)
        self._lock, self.in_flight = threading.Lock(), 0

    def submit(self, fn, /, *args, **kwargs):
        with self._lock:
            self.in_flight += 1
        future = super().submit(fn, *args, **kwargs)
        future.add_done_callback(self._done)
        return future

    def _done(self, future):
        with self._lock:
            self.in_flight -= 1


async def until_idle(pools):
    """Until no model work is running or about to be submitted (a stage that just finished submits the next one
    on the loop, so idleness is seen twice, a few milliseconds apart)."""
    while True:
        await asyncio.sleep(0.005)
        if all(pool.in_flight == 0 for pool in pools):
            await asyncio.sleep(0.005)
            if all(pool.in_flight == 0 for pool in pools):
                return


@contextmanager
def listening(vad_run):
    """The listening clock a session hears through, ticking as the agent's does; stopped afterwards."""
    clock = ListenClock(vad_run, 0.04)
    try:
        yield clock
    finally:
        clock.stop()


class UnsureTranscriber:
    """Hears something Whisper itself was not sure of (a garbled question), in a single reading."""

    beam_size = 1

    def transcribe(self, audio, prompt=None, beam_size=None, hypotheses=1, full_window=False):
        return Transcript("Do you were tondylant at all?", "en", len(audio) / 16000, 0.02, avg_logprob=-0.9)


FIRM_QUESTION = "What are your opening hours during the week?"
"""A question the KB answers outright (a middling one is confirmed first: see call.understand)."""


def run_call(models, knowledge, transcriber, tmp_path, until, vad_run=None, leg_calls=None, speculative=None,
             question="What are your opening hours?", endpoint_config=None, pause_ms=0, engine="espeak-ng",
             memory=None):
    """One spoken question into a real session (with `pause_ms` of silence at its " … ", if any); returns the
    frames queued for the caller once `until(recorder)` holds, the call record, the recorder and the phrases."""
    halves = [synthesize_caller(tmp_path, part, engine=engine) for part in question.split(" … ")]
    pcm8 = np.concatenate([x for half in halves for x in (np.zeros(pause_ms * 8, np.int16), half)][1:])
    resampler = StreamResampler(8000, BRIDGE_RATE)
    speech = np.concatenate([np.zeros(8000, np.int16), resampler.push(pcm8), resampler.flush(),
                             np.zeros(24000, np.int16)])
    voice = Voice(models.synthesizer, BRIDGE_RATE)
    phrases = voice.phrases("Hello.")
    recorder = Recorder()

    clock, pools = ListenClock(vad_run or models.vad.run_streams, 0.04, running=False), [ModelThread()]
    pools += [speculative.pool] if isinstance(speculative, BusyAfterFirst) else []

    async def ticking(task):
        while not task.done():
            clock.step()
            await asyncio.sleep(0.02)

    async def scenario():
        leg = CallLeg("sip-1", "<sip:caller@127.0.0.1>", "agent", Playout(FRAME_SAMPLES), NoSip(leg_calls), 0)
        session = CallSession(leg, asyncio.get_running_loop(),
                              Pipeline(transcriber, knowledge, voice, pools[0], speculative or pools[0]), phrases,
                              clock, memory or CallMemory(), recorder, CallConfig(endpointing=endpoint_config))
        task = asyncio.create_task(session.run())
        # The line waits for the models before each tick: every decision is made as if the models answered at
        # once, so what is tested is the logic, never this machine's speed.
        for n, start in enumerate(range(0, len(speech), FRAME_SAMPLES)):
            session.on_frame(speech[start:start + FRAME_SAMPLES], 0.0)
            if n % 2 == 1:
                await until_idle(pools)
                clock.step()
        ticks = asyncio.create_task(ticking(task))
        for _ in range(200):
            await asyncio.sleep(0.05)
            if until(recorder) or task.done():
                break
        queued = leg.playout.pending_frames
        session.on_ended("200 Normal call clearing")
        record = await task
        await ticks
        return queued, record

    queued, record = asyncio.run(scenario())
    return queued, record, recorder, phrases


def test_an_asr_failure_is_apologised_for_and_the_call_goes_on(models, bundled_kb, tmp_path):
    queued, record, recorder, phrases = run_call(models, bundled_kb, BrokenTranscriber(), tmp_path,
                                                 lambda r: r.errors)
    apology_frames = len(phrases[Phrase.APOLOGY]) // FRAME_SAMPLES
    assert recorder.errors == ["asr"] and queued >= apology_frames
    assert record.turns[0].outcome == "failed: asr" and recorder.ended == [record]


def test_a_question_neither_whisper_nor_the_kb_was_sure_of_is_asked_again(models, bundled_kb, tmp_path):
    queued, record, recorder, phrases = run_call(models, bundled_kb, UnsureTranscriber(), tmp_path,
                                                 lambda r: r.turns)
    (turn,) = record.turns
    assert turn.outcome == "asked again" and turn.asr_logprob == -0.9 and turn.evidence < 0.35
    assert queued >= len(phrases[Phrase.ASK_AGAIN]) // FRAME_SAMPLES and not turn.answer


def test_a_broken_audio_path_hangs_up_and_the_record_says_why(models, bundled_kb, tmp_path):
    sent_to_sip = []
    _, record, recorder, _ = run_call(models, bundled_kb, UnsureTranscriber(), tmp_path, lambda r: r.ended,
                                      vad_run=FailingVad(models.vad.run_streams), leg_calls=sent_to_sip)
    assert record.outcome == "failed: audio" and recorder.errors == ["audio"] and recorder.ended == [record]
    assert sent_to_sip, "no hang-up was sent to the SIP thread"


class CountingTranscriber:
    def __init__(self, transcriber):
        self._transcriber, self.calls = transcriber, 0
        self.beam_size = transcriber.beam_size

    def transcribe(self, audio, prompt=None, beam_size=None, hypotheses=1, full_window=False):
        self.calls += 1
        return self._transcriber.transcribe(audio, prompt, beam_size, hypotheses, full_window)


class BusyAfterFirst(Executor):
    """Model workers with room for the speculative decode, then busy for the rest of the speculative reply."""

    def __init__(self):
        self.pool, self._submitted = ModelThread(), 0

    def submit(self, fn, /, *args, **kwargs):
        self._submitted += 1
        if self._submitted == 1:
            return self.pool.submit(fn, *args, **kwargs)
        refused = Future()
        refused.set_exception(Busy("no worker free"))
        return refused


def test_a_reply_refused_for_busy_workers_after_its_decode_is_made_at_the_end_of_the_turn_without_decoding_again(
        models, bundled_kb, tmp_path):
    transcriber = CountingTranscriber(models.transcriber)
    _, record, recorder, _ = run_call(models, bundled_kb, transcriber, tmp_path, lambda r: r.turns,
                                      speculative=BusyAfterFirst(), question=FIRM_QUESTION)
    assert [t.outcome for t in record.turns] == ["answered"]
    assert "monday" in " ".join(record.turns[0].answer).lower()
    assert transcriber.calls == 1


def test_a_complete_question_is_answered_after_the_short_silence_and_an_unfinished_one_waited_for(
        models, bundled_kb, tmp_path):
    config = EndpointConfig(default_ms=512, short_ms=224, long_ms=1216)
    _, record, _, _ = run_call(models, bundled_kb, models.transcriber, tmp_path, lambda r: r.turns,
                               endpoint_config=config, question=FIRM_QUESTION)
    (turn,) = record.turns
    # Ended once the reply prepared in the pause judged it complete: at the short silence, or as soon after it
    # as that reply was ready, and before the hangover.
    assert turn.outcome == "answered" and 224 <= turn.endpointing_ms < 512
    _, record, _, _ = run_call(models, bundled_kb, models.transcriber, tmp_path, lambda r: r.turns,
                               question="How much does the", endpoint_config=config)
    assert [t.endpointing_ms for t in record.turns] == [1216.0]
    _, record, _, _ = run_call(models, bundled_kb, models.transcriber, tmp_path, lambda r: r.turns,
                               endpoint_config=EndpointConfig(enabled=False))
    assert [t.endpointing_ms for t in record.turns] == [512.0]  # turned off: the hangover, as before


def test_a_question_answered_too_soon_is_taken_back_and_heard_whole_when_the_caller_goes_on(
        models, bundled_kb, tmp_path):
    config = EndpointConfig(default_ms=512, short_ms=224, long_ms=1216)
    memory = CallMemory()
    _, record, _, _ = run_call(models, bundled_kb, models.transcriber, tmp_path, lambda r: len(r.turns) >= 2,
                               question="What are your opening hours? … On a Saturday?", endpoint_config=config,
                               pause_ms=300, engine="flite", memory=memory)
    first, whole = record.turns
    assert first.outcome == "cut off" and first.endpointing_ms < 512  # answered at once, then taken back
    assert whole.continues and "saturday" in whole.transcript.lower() and "hours" in whole.transcript.lower(), whole
    assert "9 a.m. to 1 p.m." in " ".join(whole.answer) and record.cut_offs == 1 and record.barge_ins == 0
    assert [t.question for t in memory.turns] == [whole.transcript]  # the half taken back is forgotten
