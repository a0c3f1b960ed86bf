"""A scripted caller over the WebSocket media stream, for evals: the eval caller's script and outputs, no SIP.

    python -m eval.kit.ws_caller --url 'ws://127.0.0.1:8000/ws/media?token=T' --script S.json --out DIR
        [--quiet-ms 1000] [--duration 60]

Streams 16 kHz PCM in real time (silence between questions), asks each question of the script once the
agent has answered the previous one (eval.kit.conversation, the same policy as the SIP caller), and writes
DIR/received.wav, DIR/sent.wav and DIR/timeline.json in the eval caller's format, so eval.replay scores
a stream exactly as it scores a phone call. Ticks are 20 ms frames of the caller's own clock: the agent sends
audio only while it speaks, and each tick takes the next frame that has arrived (silence when none has),
as a phone's playout would.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections import deque
from pathlib import Path

import numpy as np
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from eval.kit.caller import load_script, script_conversation, step_started
from eval.kit.phone import TICK, write_call
from eval.kit.wire import voiced_ticks


def run(args: argparse.Namespace) -> dict:
    script = load_script(args.script)
    conversation = script_conversation(script, args.quiet_ms)
    socket = connect(args.url, open_timeout=10, legacy=True)
    socket.send(json.dumps({"sample_rate": 16000}))
    arrived: deque[np.ndarray] = deque()

    def read() -> None:
        try:
            for message in socket:
                if isinstance(message, bytes):
                    arrived.append(np.frombuffer(message, dtype="<i2"))
        except ConnectionClosed:
            pass

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    timeline: dict = {"codec": "L16/16000 (websocket)", "confirmed_tick": 0, "sip_call_id": None}
    queue: list[np.ndarray] = []
    sent: list[np.ndarray] = []
    received: list[np.ndarray] = []
    started, n = time.monotonic(), 0
    while time.monotonic() - started < args.duration and not conversation.done and reader.is_alive():
        heard = arrived.popleft() if arrived else np.zeros(TICK, np.int16)
        received.append(heard)
        step = conversation.on_tick(len(received), bool(voiced_ticks([heard])))
        if step is not None:
            audio = script[step][0]
            queue = [audio[i:i + TICK] for i in range(0, len(audio), TICK)]
            step_started(timeline, len(received), audio)
        frame = queue.pop(0) if queue else np.zeros(TICK, np.int16)
        frame = np.pad(frame, (0, TICK - len(frame))).astype(np.int16)
        socket.send(frame.astype("<i2").tobytes())
        sent.append(frame)
        n += 1
        time.sleep(max(0.0, started + n * TICK / 16000 - time.monotonic()))
    timeline["ended_by"] = "caller" if reader.is_alive() else "agent"
    socket.close()
    reader.join(5)
    write_call(args.out, timeline, received, sent)
    return timeline


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.kit.ws_caller", description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--script", type=Path, required=True, help="JSON list of questions (see eval.kit.caller)")
    parser.add_argument("--quiet-ms", type=int, default=1000, help="agent silence that ends an answer")
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--out", type=Path, required=True)
    run(parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
