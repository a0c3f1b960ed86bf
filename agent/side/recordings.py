"""Whole calls recorded, when the owner turns it on (AGENT_RECORD_CALLS; start-up refuses it without a consent
notice): both directions in one stereo WAV, the caller left and the agent right, 16 kHz int16, at
RECORDINGS_DIR/<call id>.wav, the call's id as its record has it (/calls/{id}/recording).

The file's time 0 is the call record's `started`, so a turn's time in the record is its place in the file. The
media threads only hand frames over; whole seconds go to the file on a writer thread of its own, which rewrites
the header's sizes after each, so the file is a playable WAV at every moment and a crash loses at most the last
second. Memory stays bounded however long the call: a side that falls silent (a stream that stops sending) is
filled with silence once the other is MAX_LAG_S ahead. A file goes with its call's record, after
AGENT_RECORDS_RETENTION_DAYS (`purge`).
"""

from __future__ import annotations

import logging
import struct
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np

from agent.logs import event

log = logging.getLogger(__name__)

RATE = 16000
BLOCK = RATE
"""Samples per channel written at a time: one second."""
MAX_LAG_S = 3
HEADER = 44


def wav_header(frames: int, channels: int = 2, rate: int = RATE) -> bytes:
    """A PCM WAV header for `frames` frames of int16 `channels`."""
    data = frames * channels * 2
    return (b"RIFF" + struct.pack("<I", 36 + data) + b"WAVEfmt " +
            struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * channels * 2, channels * 2, 16) +
            b"data" + struct.pack("<I", data))


def interleave(left: np.ndarray, right: np.ndarray) -> bytes:
    stereo = np.empty(2 * len(left), dtype="<i2")
    stereo[0::2], stereo[1::2] = left, right
    return stereo.tobytes()


class CallRecorder:
    """One call being recorded; `heard` and `played` from any thread, `close` once the call is over."""

    def __init__(self, path: Path, started: float, writer: ThreadPoolExecutor,
                 on_whole: Callable[[Path, float], None] | None = None) -> None:
        """`on_whole(path, started)`: told on the writer thread once the call is over and its file whole."""
        self.path, self.started = path, started
        self._writer, self._on_whole = writer, on_whole
        self._lock = threading.Lock()
        self._sides: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])
        self._counts = [0, 0]
        self._frames_written = 0
        self._began = False
        self._closed = False
        self._writer.submit(self._create).add_done_callback(self._failed)

    def heard(self, pcm: np.ndarray) -> None:
        """A frame from the caller (16 kHz int16)."""
        self._push(0, pcm)

    def played(self, pcm: np.ndarray) -> None:
        """A frame the agent sent (16 kHz int16; silence too)."""
        self._push(1, pcm)

    def _push(self, side: int, pcm: np.ndarray) -> None:
        with self._lock:
            if self._closed:
                return
            if not self._began:
                # Media starts a moment after the record: that moment is silence on both sides.
                self._began = True
                lead = np.zeros(max(0, int((time.time() - self.started) * RATE)), np.int16)
                for s in (0, 1):
                    self._sides[s].append(lead)
                    self._counts[s] += len(lead)
            self._sides[side].append(np.asarray(pcm, np.int16).copy())
            self._counts[side] += len(pcm)
            lagging = 1 - side
            if self._counts[side] - self._counts[lagging] > MAX_LAG_S * RATE:
                gap = self._counts[side] - self._counts[lagging]
                self._sides[lagging].append(np.zeros(gap, np.int16))
                self._counts[lagging] += gap
            while min(self._counts) >= BLOCK:
                self._submit(self._take(BLOCK))

    def _take(self, samples: int) -> bytes:
        taken = []
        for s in (0, 1):
            joined = np.concatenate(self._sides[s]) if self._sides[s] else np.zeros(0, np.int16)
            taken.append(joined[:samples])
            self._sides[s][:] = [joined[samples:]] if len(joined) > samples else []
            self._counts[s] -= samples
        return interleave(*taken)

    def _submit(self, data: bytes) -> None:
        self._writer.submit(self._append, data).add_done_callback(self._failed)

    def close(self) -> Future:
        """Write what is left (the shorter side padded with silence); done once the file is whole."""
        with self._lock:
            self._closed = True
            longest = max(self._counts)
            for s in (0, 1):
                if self._counts[s] < longest:
                    self._sides[s].append(np.zeros(longest - self._counts[s], np.int16))
                    self._counts[s] = longest
            if longest:
                self._submit(self._take(longest))
            return self._writer.submit(self._whole)

    def _whole(self) -> None:
        if self._on_whole is not None and self.path.is_file():
            self._on_whole(self.path, self.started)

    def _create(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("wb") as wav:
            wav.write(wav_header(0))

    def _append(self, data: bytes) -> None:
        with self.path.open("r+b") as wav:
            wav.seek(0, 2)
            wav.write(data)
            self._frames_written += len(data) // 4
            wav.seek(0)
            wav.write(wav_header(self._frames_written))

    def _failed(self, future: Future) -> None:
        if (error := future.exception()) is not None:
            event(log, "recording.write_failed", logging.WARNING, path=str(self.path),
                  error=f"{type(error).__name__}: {error}")


def recording_path(folder: Path, call_id: str) -> Path:
    """Where a call's recording is kept."""
    return folder / f"{call_id}.wav"


class Recordings:
    """The recordings folder and its writer thread."""

    def __init__(self, folder: Path, on_whole: Callable[[Path, float], None] | None = None) -> None:
        """`on_whole(path, started)`: each call's file once whole (a shared database keeps a copy)."""
        self.folder, self._on_whole = folder, on_whole
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="recordings")

    def start(self, call_id: str, started: float) -> CallRecorder:
        return CallRecorder(self.path(call_id), started, self._writer, self._on_whole)

    def path(self, call_id: str) -> Path:
        return recording_path(self.folder, call_id)

    def close(self) -> None:
        self._writer.shutdown(wait=True)


def purge(folder: Path, older_than: float) -> int:
    """Delete the recordings last written before `older_than` (epoch seconds); returns how many. Blocking."""
    gone = 0
    for path in folder.glob("*.wav") if folder.is_dir() else ():
        if path.stat().st_mtime < older_than:
            path.unlink(missing_ok=True)
            gone += 1
    return gone
