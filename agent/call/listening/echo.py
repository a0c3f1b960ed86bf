"""Telling the caller's voice from the agent's own voice coming back on an echoing line.

Pure. The media clock records how loud each outbound frame was; an inbound
window counts as the caller only when it is louder than the loudest recent
outbound frame by more than `ratio_db`. Echo returns attenuated (−12 dB on
the test line), a caller talking over the agent does not.
"""

from __future__ import annotations

from collections import deque


class EchoGate:
    """Remembers recent outbound loudness; admits inbound audio that cannot be its echo."""

    def __init__(self, ratio_db: float = -9.0, memory_frames: int = 30) -> None:
        self.ratio = 10 ** (ratio_db / 20)
        self._outbound: deque[float] = deque([0.0] * memory_frames, maxlen=memory_frames)

    def forget(self) -> None:
        """Drop the memory of what was played: after a barge-in the agent is silent, and gating the
        caller's quieter syllables against its last loud frames would chop their question."""
        self._outbound.extend([0.0] * self._outbound.maxlen)

    def played(self, outbound_rms: float) -> None:
        """Record one outbound frame (call once per media tick, silence included)."""
        self._outbound.append(outbound_rms)

    @property
    def reference(self) -> float:
        """Loudest outbound frame within the echo memory (600 ms: jitter buffers at both ends plus the
        line's own delay put the echo 200–400 ms behind the frame that caused it)."""
        return max(self._outbound)

    def admits(self, inbound_rms: float) -> bool:
        """True when the inbound audio is too loud to be echo of what was just played."""
        reference = self.reference
        return reference == 0.0 or inbound_rms > reference * self.ratio
