"""Outbound audio: a queue of 20 ms frames at the bridge rate, read by the media clock.

The media thread pops one frame per tick; the call's task pushes synthesized
speech. `clear()` is barge-in: the very next frame the media thread asks for
is silence.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

import numpy as np


class Playout:
    """Thread-safe FIFO of fixed-size int16 frames."""

    def __init__(self, frame_samples: int) -> None:
        self.frame_samples = frame_samples
        self._frames: deque[np.ndarray] = deque()
        self._partial = np.zeros(0, dtype=np.int16)
        self._lock = threading.Lock()
        self._silence = np.zeros(frame_samples, dtype=np.int16)
        self.frames_played = 0
        """Non-silent frames handed to the media thread since the call started."""
        self._queued = 0
        """Frames ever queued; with frames_played, places the utterance ends below."""
        self._ends: deque[int] = deque()
        """Where each queued utterance ends, counted in frames ever queued (see finish)."""
        self.tap: Callable[[np.ndarray], None] | None = None
        """Given every frame popped, silence too (the call's recording)."""

    def push(self, pcm: np.ndarray) -> None:
        """Queue audio; whole frames are playable at once, a remainder waits for more or `finish()`."""
        with self._lock:
            data = np.concatenate([self._partial, np.asarray(pcm, dtype=np.int16)])
            whole = len(data) // self.frame_samples * self.frame_samples
            for start in range(0, whole, self.frame_samples):
                self._frames.append(data[start:start + self.frame_samples])
            self._queued += whole // self.frame_samples
            self._partial = data[whole:]

    def say(self, pcm: np.ndarray) -> None:
        """Queue one whole utterance."""
        self.push(pcm)
        self.finish()

    def finish(self) -> None:
        """Pad and queue the remainder (end of an utterance)."""
        with self._lock:
            if len(self._partial):
                frame = np.zeros(self.frame_samples, dtype=np.int16)
                frame[:len(self._partial)] = self._partial
                self._frames.append(frame)
                self._queued += 1
                self._partial = np.zeros(0, dtype=np.int16)
            self._ends.append(self._queued)

    def pop(self) -> tuple[np.ndarray, bool]:
        """The next frame and whether it is speech; silence when nothing is queued."""
        with self._lock:
            if self._frames:
                self.frames_played += 1
                while self._ends and self._ends[0] <= self.frames_played:
                    self._ends.popleft()
                frame, speech = self._frames.popleft(), True
            else:
                frame, speech = self._silence, False
        if self.tap is not None:
            self.tap(frame)
        return frame, speech

    def clear(self) -> int:
        """Drop everything queued (barge-in); return how many frames were dropped."""
        with self._lock:
            dropped = len(self._frames) + (1 if len(self._partial) else 0)
            self._frames.clear()
            self._partial = np.zeros(0, dtype=np.int16)
            self._queued, self._ends = self.frames_played, deque()
            return dropped

    def finish_current(self) -> int:
        """Keep the utterance being played to its end and drop the ones queued after it (a shutdown lets
        the caller hear the end of the sentence, not the rest of the answer); return frames dropped."""
        with self._lock:
            if not self._ends:
                return 0  # the utterance is still being queued: all of it is the current one
            keep = self._ends[0] - self.frames_played
            dropped = len(self._frames) - keep
            for _ in range(dropped):
                self._frames.pop()
            self._queued -= dropped
            self._ends = deque([self._ends[0]])
            self._partial = np.zeros(0, dtype=np.int16)
            return dropped

    @property
    def pending_frames(self) -> int:
        with self._lock:
            return len(self._frames)
