"""The pjsua2 pieces the eval's SIP clients share (the caller, eval.kit.caller, and the person a warm transfer
reaches, eval.kit.person): a media port that plays scheduled audio and records every 20 ms tick, a call that
follows REFER and Replaces as a phone does, the endpoint and account they run on, and the files a call writes."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import traceback
import wave
from pathlib import Path

import numpy as np
import pjsua2 as pj
import soxr

from agent.sip.port import read_vector
from eval.kit.wire import voiced_ticks

RATE = 16000
TICK = 320  # samples per 20 ms
CODECS = {"PCMU": "PCMU/8000/1", "PCMA": "PCMA/8000/1", "G722": "G722/16000/1"}


def run_or_exit(run, args: argparse.Namespace):
    """`run(args)`'s result; if it raises, the traceback on stderr and an exit with 1 at once: pjsip's threads outlive
    a run that failed and hold the interpreter's exit, so a caller hung until its parent's timeout, the reason lost."""
    try:
        return run(args)
    except Exception:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)


def load_wav(path: Path) -> np.ndarray:
    """Mono 16-bit WAV at any rate, as int16 at 16 kHz."""
    with wave.open(str(path)) as wav:
        audio = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2").astype(np.float32)
        if wav.getnchannels() != 1:
            audio = audio.reshape(-1, wav.getnchannels()).mean(axis=1)
        rate = wav.getframerate()
    if rate != RATE:
        audio = soxr.resample(audio, rate, RATE)
    return np.clip(audio, -32768, 32767).astype(np.int16)



def save_wav(path: Path, audio: np.ndarray) -> None:
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(RATE)
        wav.writeframes(audio.astype("<i2").tobytes())



class CallerPort(pj.AudioMediaPort):
    """Plays scheduled audio (plus an optional echo of what it hears) and records every tick."""

    def __init__(self, echo_gain: float, echo_delay_ticks: int, echo_from_tick: int = 0) -> None:
        """The echo: what it heard `echo_delay_ticks` ago, at `echo_gain`, from tick `echo_from_tick` on."""
        super().__init__()
        self.lock = threading.Lock()
        self.tick = 0
        self.queue: list[np.ndarray] = []  # frames waiting to be sent
        self.sent: list[np.ndarray] = []
        self.received: list[np.ndarray] = []
        self.echo_gain, self.echo_delay, self.echo_from = echo_gain, echo_delay_ticks, echo_from_tick
        self.closed = False
        self.clock: tuple[float, int, float] | None = None
        """(Unix time of tick 1, the latest tick, its Unix time): maps ticks to the agent's clock (see tick_time)."""
        fmt = pj.MediaFormatAudio()
        fmt.init(pj.PJMEDIA_FORMAT_L16, RATE, 1, 20000, 16)
        self.createPort("caller", fmt)

    def play(self, audio: np.ndarray) -> int:
        """Queue audio to send now; returns the tick its first frame goes out."""
        with self.lock:
            padded = np.concatenate([audio, np.zeros(-len(audio) % TICK, dtype=np.int16)])
            self.queue.extend(padded.reshape(-1, TICK))
            return self.tick + 1

    def onFrameRequested(self, frame: pj.MediaFrame) -> None:  # noqa: N802
        if getattr(self, "closed", True):
            return
        now = time.time()
        with self.lock:
            self.tick += 1
            self.clock = (self.clock[0] if self.clock else now, self.tick, now)
            out = self.queue.pop(0) if self.queue else np.zeros(TICK, dtype=np.int16)
            if self.echo_gain and self.tick >= self.echo_from and len(self.received) > self.echo_delay:
                echo = self.received[-1 - self.echo_delay].astype(np.float32) * self.echo_gain
                out = np.clip(out.astype(np.float32) + echo, -32768, 32767).astype(np.int16)
            self.sent.append(out)
        frame.type = pj.PJMEDIA_FRAME_TYPE_AUDIO
        frame.buf = pj.ByteVector(out.tobytes())
        frame.size = out.nbytes

    def onFrameReceived(self, frame: pj.MediaFrame) -> None:  # noqa: N802
        if getattr(self, "closed", True):
            return
        pcm = (np.frombuffer(read_vector(frame.buf), dtype="<i2").astype(np.int16) if frame.size
               else np.zeros(TICK, np.int16))
        with self.lock:
            self.received.append(pcm if len(pcm) == TICK else np.resize(pcm, TICK))



class CallerCall(pj.Call):
    def __init__(self, account: pj.Account, port: CallerPort, accept_transfer: bool = False,
                 call_id: int = pj.PJSUA_INVALID_ID) -> None:
        """`call_id`: an incoming call's (eval.kit.person answers with this class too)."""
        super().__init__(account, call_id)
        self.account = account
        self.port = port
        self.state = "calling"
        self.status = 0
        self.accept_transfer = accept_transfer
        self.transferred: CallerCall | None = None
        """The call to the transfer target, once the agent has transferred this one (REFER)."""
        self.transfer_to = ""
        self.replaced_by: CallerCall | None = None
        """The call that took this one's place (an INVITE with Replaces: the agent handed its call over)."""

    def onCallTransferRequest(self, prm) -> None:  # noqa: N802
        """The agent transfers us (REFER): call the target as a phone would, with the same audio."""
        self.transfer_to = prm.dstUri
        if not self.accept_transfer:
            prm.statusCode = 603
            return
        self.transferred = CallerCall(self.account, self.port)
        prm.newCall = self.transferred

    def onCallReplaced(self, prm) -> None:  # noqa: N802
        """Another phone's call replaces this one (RFC 3891): it goes on with the same audio."""
        self.replaced_by = CallerCall(self.account, self.port, call_id=prm.newCallId)
        prm.newCall = self.replaced_by

    def onCallState(self, prm) -> None:  # noqa: N802
        info = self.getInfo()
        self.status = info.lastStatusCode
        if info.state == pj.PJSIP_INV_STATE_CONFIRMED:
            self.state = "confirmed"
        elif info.state == pj.PJSIP_INV_STATE_DISCONNECTED:
            self.state = "disconnected"

    def onCallMediaState(self, prm) -> None:  # noqa: N802
        info = self.getInfo()  # keep it alive: info.media's elements point into it
        for index, media in enumerate(info.media):
            if media.type == pj.PJMEDIA_TYPE_AUDIO and media.status == pj.PJSUA_CALL_MEDIA_ACTIVE:
                audio = self.getAudioMedia(index)
                audio.startTransmit(self.port)
                self.port.startTransmit(audio)



def account_config(args: argparse.Namespace, name: str) -> pj.AccountConfig:
    """A user agent's account at --address/--port (media from --rtp-port); with --registrar, a softphone's
    account on that PBX, registered (and every request authenticated) as --user."""
    config = pj.AccountConfig()
    config.idUri = f"sip:{name}@{args.address}:{args.port}"
    if args.registrar:
        registrar = args.registrar.split(":", 1)[1].split(";")[0]
        config.idUri = f"sip:{args.user}@{registrar}"
        config.regConfig.registrarUri = args.registrar
        config.sipConfig.authCreds.append(pj.AuthCredInfo("digest", "*", args.user, 0, args.password))
    media = config.mediaConfig.transportConfig
    media.port, media.portRange, media.boundAddress = args.rtp_port, 100, args.address
    return config



def wait_registered(endpoint: pj.Endpoint, account: pj.Account, registrar: str | None) -> None:
    if not registrar:
        return
    deadline = time.monotonic() + 15
    while not account.getInfo().regIsActive:
        if time.monotonic() > deadline:
            raise SystemExit(f"not registered with {registrar} (status {account.getInfo().regStatus})")
        endpoint.libHandleEvents(20)



def add_account_arguments(parser: argparse.ArgumentParser, user: str) -> None:
    parser.add_argument("--address", default="127.0.0.1", help="the address SIP and RTP are bound to")
    parser.add_argument("--registrar", help="register with this PBX first (sip:HOST[:PORT]), as --user")
    parser.add_argument("--user", default=user)
    parser.add_argument("--password", default="")



def write_call(out: Path, timeline: dict, received: list[np.ndarray], sent: list[np.ndarray]) -> None:
    """A call's outputs, as every eval caller writes them: DIR/received.wav, DIR/sent.wav (16 kHz) and
    DIR/timeline.json, completed with the tick counts and voiced ticks of both directions."""
    timeline["ticks"] = len(received)
    timeline["received_voiced_ticks"] = voiced_ticks(received)
    timeline["sent_voiced_ticks"] = voiced_ticks(sent)
    out.mkdir(parents=True, exist_ok=True)
    save_wav(out / "received.wav", np.concatenate(received) if received else np.zeros(0, np.int16))
    save_wav(out / "sent.wav", np.concatenate(sent) if sent else np.zeros(0, np.int16))
    (out / "timeline.json").write_text(json.dumps(timeline))


def start_endpoint(address: str, port: int, *, tcp: bool = False, silence_suppression: bool = False,
                   loss_pct: int = 0, log_level: int = 1) -> pj.Endpoint:
    """pjsua2 started on `address:port`, its media clocked by itself (no sound device) at 16 kHz, every callback
    on the thread that polls it."""
    endpoint = pj.Endpoint()
    endpoint.libCreate()
    config = pj.EpConfig()
    config.uaConfig.threadCnt = 0
    config.uaConfig.mainThreadOnly = False
    config.medConfig.clockRate = config.medConfig.sndClockRate = RATE
    config.medConfig.noVad = not silence_suppression  # a DTX phone sends no RTP at all while quiet
    config.medConfig.ecTailLen = 0
    config.medConfig.txDropPct = loss_pct  # a lossy line: this share of its RTP packets never leaves
    config.logConfig.level = config.logConfig.consoleLevel = log_level
    endpoint.libInit(config)
    transport = pj.TransportConfig()
    transport.port, transport.boundAddress = port, address
    endpoint.transportCreate(pj.PJSIP_TRANSPORT_TCP if tcp else pj.PJSIP_TRANSPORT_UDP, transport)
    endpoint.libStart()
    endpoint.audDevManager().setNullDev()
    return endpoint


def hang_up(endpoint: pj.Endpoint, call: CallerCall) -> None:
    """Hang `call` up, and poll until it is gone (two seconds at most)."""
    call.hangup(pj.CallOpParam(True))
    for _ in range(100):
        endpoint.libHandleEvents(10)
        if call.state == "disconnected":
            break
