"""Speech recognition: Whisper (CTranslate2) on 16 kHz audio, one utterance at a time, in a window sized
to the utterance.

The window and its guards are in speech.window: when the cap is hit or the text still compresses like a loop,
the utterance is decoded again the faster-whisper way, in the full window (with its temperature fallback).

With `greedy_first` and a `settle`, the utterance is first read greedily, and the beam reads it again, from the
same encoding, only when the caller's judge (call.hear: Whisper was sure and the KB acts on that reading at once)
does not settle on it (measured, and off by default: see call.hear).

When several calls end their turns together, their utterances queue for the model. With `max_batch` > 1
whoever gets a replica next decodes its share of the queue in one batch (one encode and one generate over
the stacked windows); it is off by default because on two cores it measured no faster than two replicas
decoding side by side (eval.asr_batch).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import ctranslate2
import numpy as np
from faster_whisper import WhisperModel
from faster_whisper.tokenizer import Tokenizer

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
    batch: int = 1
    """Utterances decoded together with this one (1: alone)."""
    hypotheses: tuple[Hypothesis, ...] = ()
    """The beam's best readings, best first, the first being `text` itself (empty: only one was asked for)."""
    widened: bool = False
    """Read greedily first and, that reading not settled, by the beam again (see `Transcriber.transcribe`)."""
    judge_s: float = 0.0
    """Time spent judging the greedy reading (`settle`), in the decoding thread but not in `decode_s`."""


@dataclass(eq=False)
class _Request:
    """One utterance waiting for the model, and what became of it."""

    audio: np.ndarray
    prompt: str | None
    frames: int
    beam_size: int
    hypotheses: int = 1
    settle: Callable[[Transcript], bool] | None = None
    asked: float = field(default_factory=time.perf_counter)
    done: bool = False
    result: Transcript | BaseException | None = None


class Transcriber:
    """Wraps one Whisper model. Call `transcribe` from a worker thread, never the event loop."""

    def __init__(self, model: ResolvedModel, *, compute_type: str = "int8", beam_size: int = 1,
                 language: str = "en", threads: int = 2, workers: int = 1, download_dir: str | None = None,
                 min_window: int = MIN_WINDOW, max_batch: int = 1, greedy_first: bool = False) -> None:
        """`min_window`: the shortest encoder window in mel frames (FULL_WINDOW: always Whisper's 30 s);
        `max_batch`: the most queued utterances decoded together (1: one at a time); `greedy_first`: a `settle`
        given to `transcribe` is used (else the beam reads at once, whatever the caller asks)."""
        self.model = model
        self._max_batch, self._workers = max_batch, workers
        self.beam_size, self.greedy_first = beam_size, greedy_first
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
        # Utterances wait here for a free replica (so the wait is measurable, and so a whole queue can be
        # decoded in one batch by whoever gets the next one).
        self._ready = threading.Condition()
        self._free = workers
        self._pending: list[_Request] = []
        self.decoded = 0
        """Utterances decoded since start, whoever asked and whether or not the transcript was used (a reply
        prepared during a pause and dropped still cost its decode): /metrics shows it beside the turns."""

    def transcribe(self, audio: np.ndarray, prompt: str | None = None, beam_size: int | None = None,
                   hypotheses: int = 1, full_window: bool = False,
                   settle: Callable[[Transcript], bool] | None = None) -> Transcript:
        """Transcribe float32 16 kHz mono audio; `prompt` biases vocabulary (KB terms); `beam_size` overrides
        the model's for this utterance; `hypotheses` > 1 keeps that many of the beam's best readings (at most
        the beam's width) in `Transcript.hypotheses`; `full_window`: decode in Whisper's 30 s window, slower but
        surer for long speech nobody waits on (a message: a short window once dropped its last sentence, the
        caller's phone number); `settle(greedy)`: with it (and `greedy_first`), the utterance is read greedily first
        and by the beam only when `settle` (called in the decoding thread, with the model held: keep it short)
        returns False."""
        if audio.ndim != 1:
            raise ValueError(f"expected mono audio, got shape {audio.shape}")
        beam = beam_size or self.beam_size
        if not 1 <= hypotheses <= beam:
            raise ValueError(f"hypotheses must be 1..{beam} (the beam's width), got {hypotheses}")
        frames = FULL_WINDOW if full_window else window_frames(len(audio), self._min_window)
        request = _Request(audio.astype(np.float32, copy=False), prompt, frames, beam, hypotheses,
                           settle if beam > 1 and self.greedy_first else None)
        with self._ready:
            self._pending.append(request)
            while not request.done and self._free == 0:
                self._ready.wait()
            batch = [] if request.done else self._take(request)
            self._free -= bool(batch)
        if batch:
            self._decode(batch)
        if isinstance(request.result, BaseException):
            raise request.result
        return request.result

    def _take(self, request: _Request) -> list[_Request]:
        """`request` and the queued utterances that can share its batch (called holding _ready)."""
        batch = [request]
        if request.frames < FULL_WINDOW:
            alike = [r for r in self._pending if r is not request and r.prompt == request.prompt
                     and (r.beam_size, r.hypotheses) == (request.beam_size, request.hypotheses)
                     and (r.settle is None) == (request.settle is None)
                     and r.frames < FULL_WINDOW]
            # A fair share of the queue: the other replicas, as they come free, take the rest.
            share = -(-(len(alike) + 1) // self._workers)
            batch += alike[:min(share, self._max_batch) - 1]
        self._pending = [r for r in self._pending if r not in batch]
        return batch

    def _decode(self, batch: list[_Request]) -> None:
        started = time.perf_counter()
        try:
            if batch[0].frames < FULL_WINDOW:
                results: list = self._decode_windows(batch)
            else:
                results = [self._decode_full(batch[0], "")]
        except BaseException as exc:  # handed to every caller waiting on this batch
            results = [exc] * len(batch)
        finished = time.perf_counter()
        with self._ready:
            self._free += 1
            self.decoded += len(batch)
            for request, result in zip(batch, results, strict=True):
                request.done = True
                request.result = result if isinstance(result, BaseException) else replace(
                    result, queue_s=started - request.asked, decode_s=finished - started - result.judge_s,
                    batch=len(batch))
            self._ready.notify_all()

    def _decode_windows(self, batch: list[_Request]) -> list[Transcript]:
        """Short-window decodes of `batch` in one encode and one generate (greedy first where asked to settle, then
        the beam for the readings not settled); a decode its guards distrust is done again alone in the full
        window."""
        frames = max(r.frames for r in batch)
        started = time.perf_counter()
        encoded = self._whisper.encode(np.stack([self._features(r.audio, frames) for r in batch]))
        encode_s = time.perf_counter() - started
        greedy_first = batch[0].settle is not None
        beam, hypotheses = (1, 1) if greedy_first else (batch[0].beam_size, batch[0].hypotheses)
        transcripts = [replace(t, encode_s=encode_s) for t in self._generate(encoded, batch, frames, beam, hypotheses)]
        if greedy_first:
            unsettled = []
            for i, (request, transcript) in enumerate(zip(batch, transcripts, strict=True)):
                judging = time.perf_counter()
                settled = self._suspect(transcript) or request.settle(transcript)
                transcripts[i] = replace(transcript, judge_s=time.perf_counter() - judging)
                if not settled:
                    unsettled.append(i)
            if unsettled:
                # The same encoding, only the rows still in doubt (all of them: the very same one).
                again = encoded if len(unsettled) == len(batch) else ctranslate2.StorageView.from_array(
                    np.asarray(encoded)[unsettled])
                wider = self._generate(again, [batch[i] for i in unsettled], frames, batch[0].beam_size,
                                       batch[0].hypotheses)
                for i, transcript in zip(unsettled, wider, strict=True):
                    transcripts[i] = replace(transcript, encode_s=encode_s, widened=True,
                                             judge_s=transcripts[i].judge_s)
        results = []
        for request, transcript in zip(batch, transcripts, strict=True):
            reason = self._suspect(transcript)
            results.append(replace(self._decode_full(request, reason), judge_s=transcript.judge_s)
                           if reason else transcript)
        return results

    def _generate(self, encoded, batch: list[_Request], frames: int, beam: int, hypotheses: int) -> list[Transcript]:
        tokens = self._prompt_tokens(batch[0].prompt)
        caps = [token_cap(len(r.audio) / SAMPLE_RATE) for r in batch]
        results = self._whisper.model.generate(encoded, [tokens] * len(batch), beam_size=beam,
                                               num_hypotheses=hypotheses, max_length=len(tokens) + max(caps),
                                               return_scores=True, return_no_speech_prob=True, suppress_blank=True)
        return [self._read(result, len(request.audio) / SAMPLE_RATE, cap, frames)
                for request, result, cap in zip(batch, results, caps, strict=True)]

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

    def _decode_full(self, request: _Request, reason: str) -> Transcript:
        audio = request.audio
        segments, info = self._whisper.transcribe(
            audio, language=self._language if self._whisper.model.is_multilingual else None,
            beam_size=request.beam_size, initial_prompt=request.prompt or None, vad_filter=False,
            condition_on_previous_text=False, without_timestamps=True)
        # transcribe() is lazy: decoding happens while the generator is consumed,
        # so it must be consumed here, inside the worker thread.
        parts = list(segments)
        text = " ".join(s.text.strip() for s in parts).strip()
        no_speech = max((s.no_speech_prob for s in parts), default=1.0)
        logprob = min((s.avg_logprob for s in parts), default=0.0)
        return Transcript(text, info.language, len(audio) / SAMPLE_RATE, no_speech, avg_logprob=logprob,
                          compression_ratio=compression_ratio(text), window_frames=FULL_WINDOW, fallback=reason)

