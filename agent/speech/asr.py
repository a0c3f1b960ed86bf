"""Speech recognition: Whisper (CTranslate2) on 16 kHz audio, one utterance at a time, in a window sized
to the utterance.

The window and its guards are in speech.window: when the cap is hit or the text still compresses like a loop,
the utterance is decoded again the faster-whisper way, in the full window (with its temperature fallback).

When several calls end their turns together, their utterances queue for a free model replica; the wait is
measured apart from the decode.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace

import numpy as np
from faster_whisper import WhisperModel
from faster_whisper.tokenizer import Tokenizer

from agent.audio.pcm import int16_to_float
from agent.models.verify import ResolvedModel
from agent.speech.window import (
    FULL_WINDOW,
    MAX_COMPRESSION,
    MIN_WINDOW,
    SAMPLE_RATE,
    compression_ratio,
    strip_repeats,
    token_cap,
    window_frames,
)


@dataclass(frozen=True)
class Hypothesis:
    """One reading of an utterance among a beam search's best."""

    text: str
    avg_logprob: float
    """Mean log probability of its tokens (Whisper's length-normalised beam score)."""


@dataclass(frozen=True)
class Transcript:
    """What the caller said in one utterance."""

    text: str
    """Recognised text, segments joined, stripped."""
    language: str
    """Language Whisper decoded in."""
    audio_s: float
    """Length of the audio that was transcribed."""
    no_speech_prob: float
    """Whisper's probability that there was no speech (high means probably not speech)."""
    queue_s: float = 0.0
    """Time spent waiting for the model (another call was using it)."""
    decode_s: float = 0.0
    """Time spent decoding."""
    encode_s: float = 0.0
    """Of `decode_s`, the part spent on the mel features and the encoder (0 for a decode in the full window,
    which faster-whisper does in one piece); the rest is the decoder's beam search."""
    avg_logprob: float = 0.0
    """Mean log probability of the decoded tokens: Whisper's own confidence (near 0 is sure)."""
    compression_ratio: float = 1.0
    """zlib ratio of the text; a decode stuck in a loop compresses well (> 2.4)."""
    window_frames: int = FULL_WINDOW
    """Mel frames the encoder saw (100 a second)."""
    fallback: str = ""
    """Why the full 30 s window was used after the short one ('' when it was not)."""
    hypotheses: tuple[Hypothesis, ...] = ()
    """The beam's best readings, best first, the first being `text` itself (empty: only one was asked for)."""


def words(transcriber: Transcriber, pcm: np.ndarray, full_window: bool = False) -> str:
    """What 16 kHz int16 speech says, with no KB hint (a message, a person's answer). Blocking."""
    return transcriber.transcribe(int16_to_float(pcm), None, full_window=full_window).text


class Transcriber:
    """Wraps one Whisper model. Call `transcribe` from a worker thread, never the event loop."""

    def __init__(self, model: ResolvedModel, *, compute_type: str = "int8", beam_size: int = 1,
                 language: str = "en", threads: int = 2, workers: int = 1, download_dir: str | None = None,
                 min_window: int = MIN_WINDOW) -> None:
        """`min_window`: the shortest encoder window in mel frames (FULL_WINDOW: always Whisper's 30 s)."""
        self.model = model
        self.beam_size = beam_size
        self._min_window = min_window
        # `workers` decodes run at once (CTranslate2 keeps one model replica per worker): a decode that
        # turns out stale (the caller went on talking) or another call's no longer holds up this one.
        self._whisper = WhisperModel(model.location, device="cpu", compute_type=compute_type, cpu_threads=threads,
                                     num_workers=workers, download_root=download_dir,
                                     local_files_only=model.source != "hub")
        multilingual = self._whisper.model.is_multilingual
        self._language = language if multilingual else "en"
        self._tokenizer = Tokenizer(self._whisper.hf_tokenizer, multilingual, task="transcribe",
                                    language=language if multilingual else None)
        # A slot per replica, taken here rather than inside CTranslate2 so that the wait is measurable.
        self._replicas = threading.Semaphore(workers)
        self._count = threading.Lock()
        self.decoded = 0
        """Utterances decoded since start, whoever asked and whether or not the transcript was used (a reply
        prepared during a pause and dropped still cost its decode): /metrics shows it beside the turns."""

    def transcribe(self, audio: np.ndarray, prompt: str | None = None, beam_size: int | None = None,
                   hypotheses: int = 1, full_window: bool = False) -> Transcript:
        """Transcribe float32 16 kHz mono audio; `prompt` biases vocabulary (KB terms); `beam_size` overrides
        the model's for this utterance; `hypotheses` > 1 keeps that many of the beam's best readings (at most
        the beam's width) in `Transcript.hypotheses`; `full_window`: decode in Whisper's 30 s window, slower but
        surer for long speech nobody waits on (a message: a short window once dropped its last sentence, the
        caller's phone number)."""
        if audio.ndim != 1:
            raise ValueError(f"expected mono audio, got shape {audio.shape}")
        beam = beam_size or self.beam_size
        if not 1 <= hypotheses <= beam:
            raise ValueError(f"hypotheses must be 1..{beam} (the beam's width), got {hypotheses}")
        audio = audio.astype(np.float32, copy=False)
        frames = FULL_WINDOW if full_window else window_frames(len(audio), self._min_window)
        asked = time.perf_counter()
        with self._replicas:
            started = time.perf_counter()
            try:
                if frames < FULL_WINDOW:
                    transcript = self._decode_window(audio, prompt, frames, beam, hypotheses)
                else:
                    transcript = self._decode_full(audio, prompt, beam, "")
            finally:  # a decode that failed still cost its time
                with self._count:
                    self.decoded += 1
            finished = time.perf_counter()
        return replace(transcript, queue_s=started - asked, decode_s=finished - started)

    def _decode_window(self, audio: np.ndarray, prompt: str | None, frames: int, beam: int,
                       hypotheses: int) -> Transcript:
        """A decode in a window sized to the utterance; one its guards distrust is done again in the full window."""
        started = time.perf_counter()
        encoded = self._whisper.encode(self._features(audio, frames)[np.newaxis])
        encode_s = time.perf_counter() - started
        tokens = self._prompt_tokens(prompt)
        cap = token_cap(len(audio) / SAMPLE_RATE)
        result = self._whisper.model.generate(encoded, [tokens], beam_size=beam, num_hypotheses=hypotheses,
                                              max_length=len(tokens) + cap, return_scores=True,
                                              return_no_speech_prob=True, suppress_blank=True)[0]
        transcript = replace(self._read(result, len(audio) / SAMPLE_RATE, cap, frames), encode_s=encode_s)
        reason = self._suspect(transcript)
        return self._decode_full(audio, prompt, beam, reason) if reason else transcript

    def _features(self, audio: np.ndarray, frames: int) -> np.ndarray:
        features = self._whisper.feature_extractor(audio)[:, :frames]
        if features.shape[1] < frames:  # the window's tail, as faster-whisper pads its 30 s one
            features = np.pad(features, ((0, 0), (0, frames - features.shape[1])))
        return features

    def _read(self, result, audio_s: float, cap: int, frames: int) -> Transcript:
        readings = [strip_repeats(self._tokenizer.decode([i for i in ids if i < self._tokenizer.eot]).strip())
                    for ids in result.sequences_ids]
        text, repeated = readings[0]
        # Cut off by the cap while reading the utterance again: the first reading stands. Cut off without a
        # repetition: something else went on too long, and the full window decides.
        capped = len(result.sequences_ids[0]) >= cap and not repeated
        hypotheses = tuple(Hypothesis(reading, float(score))
                           for (reading, _), score in zip(readings, result.scores, strict=True))
        return Transcript(text, self._language, audio_s, float(result.no_speech_prob),
                          avg_logprob=float(result.scores[0]), compression_ratio=compression_ratio(text),
                          window_frames=frames, fallback="capped" if capped else "",
                          hypotheses=hypotheses if len(hypotheses) > 1 else ())

    @staticmethod
    def _suspect(transcript: Transcript) -> str:
        """Why a short-window decode is not trusted ('' when it is)."""
        if transcript.fallback:
            return transcript.fallback
        if transcript.compression_ratio > MAX_COMPRESSION:
            return "loop"
        return ""

    def _prompt_tokens(self, prompt: str | None) -> list[int]:
        """Whisper's decoder prompt: the previous-text slot holds the KB hint, then the start of transcript."""
        tokens = []
        if prompt:
            hint = self._tokenizer.encode(" " + prompt.strip())
            tokens = [self._tokenizer.sot_prev, *hint[-(self._whisper.max_length // 2 - 1):]]
        return [*tokens, *self._tokenizer.sot_sequence, self._tokenizer.no_timestamps]

    def _decode_full(self, audio: np.ndarray, prompt: str | None, beam: int, reason: str) -> Transcript:
        segments, info = self._whisper.transcribe(
            audio, language=self._language if self._whisper.model.is_multilingual else None,
            beam_size=beam, initial_prompt=prompt or None, vad_filter=False,
            condition_on_previous_text=False, without_timestamps=True)
        # transcribe() is lazy: decoding happens while the generator is consumed,
        # so it must be consumed here, inside the worker thread.
        parts = list(segments)
        text = " ".join(s.text.strip() for s in parts).strip()
        no_speech = max((s.no_speech_prob for s in parts), default=1.0)
        logprob = min((s.avg_logprob for s in parts), default=0.0)
        return Transcript(text, info.language, len(audio) / SAMPLE_RATE, no_speech, avg_logprob=logprob,
                          compression_ratio=compression_ratio(text), window_frames=FULL_WINDOW, fallback=reason)

