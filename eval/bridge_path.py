"""8 kHz telephone audio through pjsip's conference bridge into a 16 kHz port: exactly the resampling
step a live G.711 call takes on its way to the ASR (see agent/sip/port.py), without the call.

    python -m eval.bridge_path IN.wav [IN2.wav ...] --out DIR     # writes DIR/NAME.wav at 16 kHz

The bridge runs on pjsip's media clock, so this takes real time (one second per second of audio).
One per process: pjsua2 allows one Endpoint.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
import wave
from pathlib import Path

import numpy as np
import pjsua2 as pj

from agent.audio.playout import Playout
from agent.sip.pjlog import route_pjsip_logs
from agent.sip.port import BRIDGE_RATE, FRAME_SAMPLES, BridgePort, configure_bridge


class BridgeResampler:
    """A media-only pjsua2 Endpoint: WAV players feed one 16 kHz BridgePort through the bridge."""

    def __init__(self) -> None:
        self._endpoint = pj.Endpoint()
        self._endpoint.libCreate()
        config = pj.EpConfig()
        configure_bridge(config)  # exactly the agent's bridge
        self._pjsip_log = route_pjsip_logs(config)
        self._endpoint.libInit(config)
        self._endpoint.libStart()
        self._endpoint.audDevManager().setNullDev()
        self._frames: list[np.ndarray] = []
        self._lock = threading.Lock()
        self._port = BridgePort("asr-eval")
        self._port.attach(Playout(FRAME_SAMPLES), self._collect)

    def _collect(self, pcm: np.ndarray, _outbound_rms: float) -> None:
        with self._lock:
            self._frames.append(pcm)

    def resample(self, path: Path) -> np.ndarray:
        """The 16 kHz int16 audio the bridge delivers for one 8 kHz WAV (blocks for its duration)."""
        with wave.open(str(path)) as wav:
            seconds = wav.getnframes() / wav.getframerate()
        player = pj.AudioMediaPlayer()
        player.createPlayer(str(path), pj.PJMEDIA_FILE_NO_LOOP)
        with self._lock:
            self._frames = []
        player.startTransmit(self._port)
        time.sleep(seconds + 0.3)
        player.stopTransmit(self._port)
        time.sleep(0.05)
        # pjsua has 32 player slots; a player may only be destroyed while the clock is stopped.
        devices = self._endpoint.audDevManager()
        devices.setNoDev()
        del player
        devices.setNullDev()
        with self._lock:
            audio = np.concatenate(self._frames) if self._frames else np.zeros(0, np.int16)
        voiced = np.flatnonzero(audio)  # frames before the player starts and after its end are exact zeros
        return audio[voiced[0]:voiced[-1] + 1] if len(voiced) else audio

    def close(self) -> None:
        self._port.detach()
        self._endpoint.audDevManager().setNoDev()  # stop the clock before any port goes
        del self._port  # ports must go before the library does
        self._endpoint.libDestroy()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.bridge_path", description=__doc__.splitlines()[0])
    parser.add_argument("inputs", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    bridge = BridgeResampler()
    try:
        for path in args.inputs:
            audio = bridge.resample(path)
            with wave.open(str(args.out / path.name), "wb") as wav:
                wav.setnchannels(1)
                wav.setsampwidth(2)
                wav.setframerate(BRIDGE_RATE)
                wav.writeframes(audio.astype("<i2").tobytes())
    finally:
        bridge.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
