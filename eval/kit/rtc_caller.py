"""A scripted caller on the browser phone, for evals: aiortc in the browser's place, Opus both ways.

    python -m eval.kit.rtc_caller --url http://127.0.0.1:8000 [--to EXT] --script S.json --out DIR
        [--quiet-ms 1000] [--duration 60]

Posts an offer to /phone/offer as the page does (audio and the "call" data channel), streams the script's
questions in real time (silence between them), asks each once the agent has answered the one before
(eval.kit.conversation, the policy of the other eval callers) and hangs up over the data channel as the page's
button does. Writes DIR/received.wav, DIR/sent.wav and DIR/timeline.json in the eval caller's format, so
eval.replay scores a browser call exactly as it scores a phone call. Ticks are 20 ms of what the agent sent,
decoded by aiortc and resampled to 16 kHz. Candidates are gathered on loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import urllib.request
from pathlib import Path

import numpy as np
from aiortc import MediaStreamTrack, RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError

from agent.audio.playout import Playout
from agent.browser.call import PlayoutTrack, gather_on, mono_16k
from eval.kit.caller import load_script, script_conversation, step_started
from eval.kit.phone import TICK, write_call
from eval.kit.wire import voiced_ticks


def _post_offer(url: str, offer: dict) -> dict:
    request = urllib.request.Request(url, json.dumps(offer).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


async def call(args: argparse.Namespace) -> dict:
    script = load_script(args.script)
    conversation = script_conversation(script, args.quiet_ms)
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    mouth, sent = Playout(TICK), []  # what the caller says: silence until a question is queued
    pc.addTrack(PlayoutTrack(mouth, sent.append))
    channel = pc.createDataChannel("call")
    heard: asyncio.Future[MediaStreamTrack] = asyncio.get_running_loop().create_future()

    @pc.on("track")
    def _on_track(track: MediaStreamTrack) -> None:
        if track.kind == "audio" and not heard.done():
            heard.set_result(track)

    await pc.setLocalDescription(await pc.createOffer())
    offer = {"sdp": pc.localDescription.sdp, "type": pc.localDescription.type}
    answer = await asyncio.to_thread(_post_offer, f"{args.url}/phone/offer?to={args.to}", offer)
    await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type=answer["type"]))
    timeline: dict = {"codec": "opus/48000 (webrtc)", "confirmed_tick": 0, "sip_call_id": answer.get("call")}
    received: list[np.ndarray] = []
    ended_by = "caller"
    try:
        track = await asyncio.wait_for(heard, 10)
        resampler, pending = None, np.zeros(0, np.int16)
        deadline = asyncio.get_running_loop().time() + args.duration
        while not conversation.done and asyncio.get_running_loop().time() < deadline:
            try:
                frame = await asyncio.wait_for(track.recv(), 5)
            except (MediaStreamError, TimeoutError):
                ended_by = "agent"
                break
            pcm, resampler = mono_16k(frame, resampler)
            pending = np.concatenate([pending, pcm])
            while len(pending) >= TICK:
                tick, pending = pending[:TICK], pending[TICK:]
                received.append(tick)
                step = conversation.on_tick(len(received), bool(voiced_ticks([tick])))
                if step is not None:
                    mouth.push(script[step][0])
                    mouth.finish()
                    step_started(timeline, len(received), script[step][0])
    finally:
        if channel.readyState == "open":
            channel.send(json.dumps({"type": "hangup"}))
            await asyncio.sleep(0.2)
        await pc.close()
    timeline["ended_by"] = ended_by
    write_call(args.out, timeline, received, sent)
    return timeline


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.kit.rtc_caller", description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the side app, e.g. http://127.0.0.1:8000")
    parser.add_argument("--to", default="", help="the extension dialled (chooses the dialplan profile)")
    parser.add_argument("--script", type=Path, required=True, help="JSON list of questions (see eval.kit.caller)")
    parser.add_argument("--quiet-ms", type=int, default=1000, help="agent silence that ends an answer")
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--out", type=Path, required=True)
    gather_on("127.0.0.1")
    asyncio.run(call(parser.parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
