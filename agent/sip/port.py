"""The per-call conference port: moves 20 ms frames between pjsua2's media clock and the call.

pjsua2 calls onFrameRequested / onFrameReceived from its media clock thread
once per 20 ms tick; they only pop from the playout queue and hand the
received frame on, never run a model.

Clock choice: the conference bridge and this port both run at 16 kHz
(BRIDGE_RATE). A G.722 call is then never resampled on its way to the ASR or
back (16 kHz throughout, full wideband). A PCMU/PCMA call is resampled once
inbound, 8 → 16 kHz by the bridge on its way to this port, so the ASR gets
16 kHz with no resampling of ours. Outbound, Piper's 22.05 kHz is resampled
once by soxr to 16 kHz; a G.711 call then takes the bridge's 16 → 8 kHz
step as well. That second outbound step is the price of one bridge for both
codec families: a port at 8 kHz would resample twice in *both* directions
(8 → 16 → 8 through the bridge), and a bridge at 8 kHz would cut G.722 to
narrowband.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import numpy as np
import pjsua2 as pj

from agent.audio.pcm import rms
from agent.audio.playout import Playout

BRIDGE_RATE = 16000
FRAME_MS = 20
FRAME_SAMPLES = BRIDGE_RATE * FRAME_MS // 1000

FrameSink = Callable[[np.ndarray, float], None]
"""sink(inbound int16 frame, loudness of the outbound frame played on the same tick)."""


def _read_vector_fast(vector: pj.ByteVector) -> bytes:
    """The bytes of a std::vector<unsigned char> read where they lie: its first two words are the start and
    end of its data (libstdc++'s layout, which the pjsua2 wheel is built with)."""
    address = int(vector.this)
    start = ctypes.c_void_p.from_address(address).value or 0
    end = ctypes.c_void_p.from_address(address + ctypes.sizeof(ctypes.c_void_p)).value or 0
    return ctypes.string_at(start, end - start) if end > start else b""


def _vector_reader() -> Callable[[pj.ByteVector], bytes]:
    """bytes(ByteVector) walks the vector through SWIG one element at a time: 0.9 ms per 20 ms frame, on the
    media clock thread, holding the GIL, for every call (a tenth of a core for ten calls). The direct read
    takes microseconds; it is used only once it has read a known vector back exactly."""
    probe = bytes(range(256)) * 2 + bytes(range(128))
    try:
        if _read_vector_fast(pj.ByteVector(probe)) == probe:
            return _read_vector_fast
    except (ValueError, TypeError, OSError):
        pass
    return bytes


read_vector = _vector_reader()


def configure_bridge(config: pj.EpConfig) -> None:
    """The conference bridge every call's audio crosses: BRIDGE_RATE, no silence suppression, no echo
    canceller (the echo gate does that job), and quality 4: a G.711 call's 8 kHz audio is resampled with
    pjmedia's small filter (speexdsp's resampler at its level 7 in the agent's build; 10 at pjsua's default 8)
    for telephone-band speech that either keeps whole; G.711 and G.722 have no quality setting of their own.
    Shared with eval.bridge_path."""
    config.medConfig.clockRate = BRIDGE_RATE
    config.medConfig.sndClockRate = BRIDGE_RATE
    config.medConfig.noVad = True
    config.medConfig.ecTailLen = 0
    config.medConfig.quality = 4


class BridgePort(pj.AudioMediaPort):
    """A conference port at BRIDGE_RATE fed by a Playout and feeding a FrameSink.

    Ports are never destroyed while the conference clock runs: pjsip 2.15 removes a port from the
    bridge asynchronously but frees it at once, so the clock thread could call into freed memory.
    A port is attached to one call at a time and reused by the next (see SipEndpoint)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self._playout: Playout | None = None
        self._sink: FrameSink | None = None
        self._last_outbound_rms = 0.0
        self._silence = pj.ByteVector(bytes(FRAME_SAMPLES * 2))
        fmt = pj.MediaFormatAudio()
        fmt.init(pj.PJMEDIA_FORMAT_L16, BRIDGE_RATE, 1, FRAME_MS * 1000, 16)
        self.createPort(name, fmt)

    def attach(self, playout: Playout, sink: FrameSink) -> None:
        self._last_outbound_rms = 0.0
        self._playout, self._sink = playout, sink

    def detach(self) -> None:
        self._playout = self._sink = None

    def onFrameRequested(self, frame: pj.MediaFrame) -> None:  # noqa: N802 - pjsua2 callback name
        playout = self._playout
        if playout is None:
            return
        pcm, speaking = playout.pop()
        frame.type = pj.PJMEDIA_FRAME_TYPE_AUDIO
        if speaking:
            self._last_outbound_rms = rms(pcm)
            frame.buf = pj.ByteVector(pcm.tobytes())
        else:  # most ticks of a call: the agent is listening, and the same silent frame goes out
            self._last_outbound_rms = 0.0
            frame.buf = self._silence
        frame.size = pcm.nbytes

    def onFrameReceived(self, frame: pj.MediaFrame) -> None:  # noqa: N802 - pjsua2 callback name
        sink = self._sink
        if sink is None or frame.type != pj.PJMEDIA_FRAME_TYPE_AUDIO or frame.size == 0:
            return
        pcm = np.frombuffer(read_vector(frame.buf), dtype="<i2").astype(np.int16)
        sink(pcm, self._last_outbound_rms)
