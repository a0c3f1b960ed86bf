"""Whisper tiny.en on a telephone-band caller: 8 kHz speech, resampled to 16 kHz as on a call."""

import threading
import time

import numpy as np

from agent.audio.pcm import StreamResampler, int16_to_float
from eval.scoring import word_error_rate
from tests.conftest import synthesize_caller

SENTENCE = "I would like to check the status of my order."


def _to_16k(pcm8: np.ndarray) -> np.ndarray:
    resampler = StreamResampler(8000, 16000)
    frames = [resampler.push(pcm8[i:i + 160]) for i in range(0, len(pcm8), 160)]
    return int16_to_float(np.concatenate(frames + [resampler.flush()]))


def _queued_behind_a_long_utterance(transcriber, long_one: np.ndarray, utterances: list[np.ndarray],
                                    transcribe) -> dict:
    """`transcribe(pcm)` of each utterance from its own thread, all queued while `long_one` (35 s: Whisper's full
    window) holds the transcriber's one replica; the transcripts by index, the long one's at -1."""
    results: dict[int, object] = {}

    def ask(n: int, pcm: np.ndarray) -> None:
        results[n] = transcribe(pcm)

    threads = [threading.Thread(target=ask, args=(-1, long_one))]
    threads[0].start()
    while transcriber._free:  # the long utterance has the replica
        time.sleep(0.001)
    threads += [threading.Thread(target=ask, args=(n, a)) for n, a in enumerate(utterances)]
    for thread in threads[1:]:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_transcribes_espeak_speech_sent_at_8khz(models, tmp_path):
    transcript = models.transcriber.transcribe(_to_16k(synthesize_caller(tmp_path, SENTENCE)))
    assert word_error_rate(SENTENCE, transcript.text) <= 0.2, transcript.text
    assert transcript.language == "en"


def test_silence_transcribes_to_little_or_nothing(models):
    transcript = models.transcriber.transcribe(np.zeros(16000, dtype=np.float32))
    assert len(transcript.text.split()) <= 2


def test_stereo_input_is_rejected(models):
    import pytest

    with pytest.raises(ValueError, match="mono"):
        models.transcriber.transcribe(np.zeros((2, 16000), dtype=np.float32))


def test_a_short_window_decode_is_measured_and_matches_the_full_window(models, tmp_path):
    audio = _to_16k(synthesize_caller(tmp_path, SENTENCE))
    short = models.transcriber.transcribe(audio)
    assert short.window_frames == 1000 and not short.fallback
    assert -1.0 < short.avg_logprob <= 0 and short.compression_ratio < 2.4
    assert word_error_rate(SENTENCE, short.text) <= 0.2, short.text
    assert 0 < short.encode_s < short.decode_s  # the encoder's part of the decode, the beam search the rest


def test_utterances_queued_behind_a_busy_model_are_decoded_together_in_one_batch(resolved, tmp_path):

    from agent.speech.asr import Transcriber

    transcriber = Transcriber(resolved["asr"], workers=1, max_batch=8)
    sentences = ["What time do you open on Saturday?", "Where are you located?", SENTENCE]
    audio = [_to_16k(synthesize_caller(tmp_path, s)) for s in sentences]
    # 35 s of speech needs Whisper's full window: the one replica is busy with it for a while.
    results = _queued_behind_a_long_utterance(transcriber, np.concatenate([audio[2]] * 12), audio,
                                              transcriber.transcribe)
    assert results[-1].batch == 1 and results[-1].window_frames == 3000
    assert [results[n].batch for n in range(3)] == [3, 3, 3]  # the long one held the replica until all queued
    assert transcriber.decoded == 4  # every utterance counted once, batched or not (the decodes a turn costs)
    for n, sentence in enumerate(sentences):
        assert word_error_rate(sentence, results[n].text) <= 0.2, results[n].text


def test_speech_nobody_waits_on_can_be_decoded_in_the_full_window(resolved, tmp_path):
    from agent.speech.asr import Transcriber

    audio = int16_to_float(_to_16k(synthesize_caller(tmp_path, "Please call me back about my boiler service, "
                                                               "my number is five five five, one two.")))
    windowed = Transcriber(resolved["asr"])
    full = Transcriber(resolved["asr"], min_window=3000)  # every utterance in the 30 s window
    asked, whole = windowed.transcribe(audio, full_window=True), full.transcribe(audio)
    assert asked.window_frames == whole.window_frames == 3000 and asked.text == whole.text


def test_greedy_first_a_settled_reading_is_the_only_one_and_a_doubtful_one_is_read_again_by_the_beam(resolved,
                                                                                                    tmp_path):
    from agent.speech.asr import Transcriber

    transcriber = Transcriber(resolved["asr"], beam_size=5, greedy_first=True)
    audio = _to_16k(synthesize_caller(tmp_path, SENTENCE))
    judged = []
    settled = transcriber.transcribe(audio, hypotheses=5, settle=lambda t: judged.append(t) or True)
    assert len(judged) == 1 and judged[0].hypotheses == () and not judged[0].widened  # one greedy reading
    assert settled.text == judged[0].text and settled.hypotheses == () and not settled.widened

    def doubt(greedy):
        time.sleep(0.2)  # a slow look-up: its time is the judge's, not Whisper's
        return False

    widened = transcriber.transcribe(audio, hypotheses=5, settle=doubt)
    assert widened.widened and len(widened.hypotheses) == 5 and widened.judge_s >= 0.2
    assert word_error_rate(SENTENCE, widened.text) <= 0.2, widened.text


def test_a_settle_is_not_asked_unless_the_transcriber_reads_greedy_first(resolved, tmp_path):
    from agent.speech.asr import Transcriber

    audio = _to_16k(synthesize_caller(tmp_path, SENTENCE))
    asked = []
    beam_at_once = Transcriber(resolved["asr"], beam_size=5)
    heard = beam_at_once.transcribe(audio, hypotheses=5, settle=lambda t: asked.append(t) or True)
    assert not asked and len(heard.hypotheses) == 5 and not heard.widened


def test_greedy_first_in_a_batch_the_beam_reads_again_only_the_doubtful_utterances(resolved, tmp_path):

    from agent.speech.asr import Transcriber

    transcriber = Transcriber(resolved["asr"], beam_size=5, workers=1, max_batch=8, greedy_first=True)
    sentences = ["What time do you open on Saturday?", "Where are you located?"]
    audio = [_to_16k(synthesize_caller(tmp_path, s)) for s in sentences]
    long_one = np.concatenate([_to_16k(synthesize_caller(tmp_path, SENTENCE))] * 12)
    # Only the question about Saturday is in doubt.
    results = _queued_behind_a_long_utterance(transcriber, long_one, audio, lambda pcm: transcriber.transcribe(
        pcm, hypotheses=5, settle=lambda t: "Saturday" not in t.text))
    assert [results[n].batch for n in range(2)] == [2, 2]
    assert results[0].widened and len(results[0].hypotheses) == 5
    assert not results[1].widened and results[1].hypotheses == ()
    for n, sentence in enumerate(sentences):
        assert word_error_rate(sentence, results[n].text) <= 0.2, results[n].text
