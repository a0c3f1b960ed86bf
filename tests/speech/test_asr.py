"""Whisper tiny.en on a telephone-band caller: 8 kHz speech, resampled to 16 kHz as on a call."""

import threading
import time

import numpy as np

from agent.audio.pcm import StreamResampler, int16_to_float
from eval.kit.scoring import word_error_rate
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
    while transcriber._replicas._value:  # the long utterance has the replica
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


def test_utterances_queued_behind_a_busy_model_wait_for_it_and_the_wait_is_told_apart_from_the_decode(resolved,
                                                                                                      tmp_path):
    from agent.speech.asr import Transcriber

    transcriber = Transcriber(resolved["asr"], workers=1)
    sentences = ["What time do you open on Saturday?", "Where are you located?", SENTENCE]
    audio = [_to_16k(synthesize_caller(tmp_path, s)) for s in sentences]
    # 35 s of speech needs Whisper's full window: the one replica is busy with it for a while.
    results = _queued_behind_a_long_utterance(transcriber, np.concatenate([audio[2]] * 12), audio,
                                              transcriber.transcribe)
    assert results[-1].window_frames == 3000
    assert all(results[n].queue_s > 0 for n in range(3))  # each waited for the long one
    assert transcriber.decoded == 4  # every utterance counted once (the decodes a turn costs)
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
