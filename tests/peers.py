"""Real calls on loopback: the agent in its own process, callers in theirs (pjsua2 allows one
Endpoint per process)."""

from __future__ import annotations

import functools
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from eval.kit.agent_process import AgentProcess as _AgentProcess
from eval.kit.ports import TEST_SLOTS, port_block_is_free
from eval.kit.scoring import normalize
from tests.conftest import REPO, read_wav, synthesize_caller
from tests.parallel import worker

_ports = itertools.count(0)


def next_ports() -> tuple[int, int]:
    """A SIP port and the start of a 100-port RTP range, distinct for every peer in this run: each test worker
    takes its own share of the 390 slots, in turn, passing over a slot whose SIP port is still bound (a worker
    comes round its share again while a module's agent or a peer from earlier still holds one)."""
    number, workers = worker()
    share = 390 // workers
    (sip, _), (rtp, _) = TEST_SLOTS
    for _ in range(share):
        n = number * share + (next(_ports) + (os.getpid() % 40) * 10) % share
        if port_block_is_free(sip + n * 4, 1):
            break
    return sip + n * 4, rtp + n * 100


@pytest.fixture(scope="module")
def agent(tmp_path_factory, settings):
    process = AgentProcess(tmp_path_factory.mktemp("agent"), settings, max_calls=2, inactivity_s=60)
    yield process
    process.stop()
    assert process.process.returncode == 0, process.log_path.read_text()[-3000:]


def flite_wav(folder: Path, name: str, text: str, voice: str = "slt") -> Path:
    """A caller saying `text` in a flite voice (unlike the agent's Piper voice): folder/NAME.wav, 8 kHz."""
    import wave

    pcm = synthesize_caller(folder, text, engine="flite", voice=voice)
    path = folder / f"{name}.wav"
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(8000)
        wav.writeframes(pcm.tobytes())
    return path


QUESTIONS = {"hours": "What are your opening hours during the week?", "office": "Where is your office?",
             "warranty": "What warranty comes with a new boiler?", "goodbye": "That's all, thanks. Goodbye.",
             "pizza": "Can I order a pizza?"}
"""What the `questions` fixture's callers say."""


@pytest.fixture(scope="session")
def questions(tmp_path_factory):
    """Caller questions in flite's voice, as 8 kHz WAVs."""
    folder = tmp_path_factory.mktemp("questions")

    def make(name: str, text: str) -> Path:
        return flite_wav(folder, name, text)

    return {name: make(name, text) for name, text in QUESTIONS.items()}


def place_call(agent: AgentProcess, out: Path, *args: str, duration: float = 16, dial: str | None = None,
               target: str | None = None) -> dict:
    """Run eval.kit.caller against the agent (dialling extension `dial`, or via another `target` URI such as
    a proxy's); return its timeline (received audio in out/received.wav)."""
    port, rtp = next_ports()
    target = target or (agent.uri if dial is None else f"sip:{dial}@127.0.0.1:{agent.sip_port}")
    command = [sys.executable, "-m", "eval.kit.caller", "--target", target, "--port", str(port),
               "--rtp-port", str(rtp), "--duration", str(duration), "--out", str(out), *args]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=duration + 60)
    assert result.returncode == 0, result.stderr[-3000:]
    timeline = json.loads((out / "timeline.json").read_text())
    timeline["received"], _ = read_wav(out / "received.wav")
    return timeline


def heard(models, timeline: dict, from_tick: int = 0, to_tick: int | None = None) -> str:
    """What the caller heard between two ticks, transcribed by Whisper in its full 30 s window with beam
    search (the most accurate way this model has, not the agent's faster one: greedy decoding heard "Thank
    you for calling. Goodbye." as "thank you for calling") and normalised."""
    audio = timeline["received"][from_tick * 320:None if to_tick is None else to_tick * 320]
    if len(audio) == 0:
        return ""
    return normalize(_scorer(models.transcriber.model).transcribe(audio.astype(np.float32) / 32768).text)


def baresip_config(address: str, port: int, microphone: Path, rtp: int, recordings: Path, *,
                   extra: tuple[str, ...] = (), modules: tuple[str, ...] = ()) -> str:
    """A baresip 1.0 config for a scripted softphone: SIP on address:port, `microphone` (a WAV) as its microphone,
    what it hears recorded into `recordings` (sndfile: *-dec.wav), no sound card; `extra` lines and `modules` (such
    as srtp.so) added.

    No jitter buffer: libre 1.1's takes every packet as too late, for the rest of the call, once the sender's
    sequence numbers jump back under the same SSRC (a reception phone answering a call Asterisk transferred once
    recorded nothing, every packet dropped "(Connection timed out)"); loopback and a compose network have no
    jitter for it to smooth."""
    lines = [f"sip_listen {address}:{port}", f"net_interface {address}", *extra, "audio_player alsa,null",
             f"audio_source aufile,{microphone}", "audio_alert alsa,null", "audio_level no",
             *(f"{kind}_format s16" for kind in ("ausrc", "auplay", "auenc", "audec")),
             f"rtp_ports {rtp}-{rtp + 20}", "rtcp_mux no", "jitter_buffer_delay 0-0",
             "module_path /usr/lib/baresip/modules",
             *(f"module {name}" for name in ("g711.so", *modules, "sndfile.so", "alsa.so", "aufile.so")),
             "module_tmp uuid.so", "module_tmp account.so", "module_app menu.so", f"snd_path {recordings}"]
    return "poll_method epoll\n" + "\n".join(lines) + "\n"


def likeness(heard_text: str, spoken: str) -> float:
    """How alike two transcripts are, word by word: a name tiny.en mishears ("Harbour Dental" as "harbor
    dindle") costs a word or two, another sentence or another order costs most of them. Tests that tell which
    of the agent's own prompts a caller heard compare likenesses rather than look for exact words."""
    from difflib import SequenceMatcher

    return SequenceMatcher(None, heard_text.split(), spoken.split()).ratio()


def kb_line(start: str) -> str:
    """The bundled KB's line that starts with `start`: a sentence a test expects a caller to hear."""
    for path in sorted((REPO / "kb").glob("*.md")):
        for line in path.read_text().splitlines():
            if line.startswith(start):
                return line
    raise LookupError(start)


HOURS = kb_line("Our office is open Monday")
OFFICE = kb_line("The office is at")
WARRANTY = kb_line("New boilers come with")

GOODBYE = ("thank you for calling", "goodbye")
"""The agent's goodbye (Phrase.GOODBYE, "Thank you for calling. Goodbye."), in its two sentences."""


def heard_goodbye(text: str) -> bool:
    """Whether what the caller heard has the agent's goodbye in it: either of its sentences. On a call's last
    seconds, tiny.en often stops after "Thank you for calling." and drops the word that follows, by greedy
    decoding on one recording and by beam search on another (CI and a local run, both with the word plainly
    in the audio), so one sentence heard is the phrase heard; neither is anywhere in an answer."""
    return any(sentence in text for sentence in GOODBYE)


@functools.cache
def _scorer(model):
    from agent.speech.asr import Transcriber
    from agent.speech.window import FULL_WINDOW

    return Transcriber(model, min_window=FULL_WINDOW, beam_size=5)


class AgentProcess(_AgentProcess):
    """The agent on this run's next free ports, with the test session's models."""

    def __init__(self, tmp: Path, settings, wait_ready: bool = True, launcher: tuple[str, ...] = ("-m", "agent", "run"),
                 **overrides: object) -> None:
        super().__init__(tmp, next_ports(), settings.models_path, wait_ready, launcher, **overrides)


class Kamailio:
    """A real Kamailio on loopback running `config`, with -A defines; its log is kept for asserts."""

    def __init__(self, tmp: Path, config: Path, port: int | None = None, **defines: str) -> None:
        self.port = port or next_ports()[0]
        self.log_path = tmp / f"kamailio-{self.port}.log"
        run_dir = tmp / f"kamailio-{self.port}"
        run_dir.mkdir()
        arguments = ["-A", f"LISTEN=udp:127.0.0.1:{self.port}"]
        for name, value in defines.items():
            arguments += ["-A", f"{name}={value}"]
        self._log = self.log_path.open("w")
        self.process = subprocess.Popen(["kamailio", "-f", str(config), "-DD", "-E", "-Y", str(run_dir), "-P",
                                         str(run_dir / "kamailio.pid"), *arguments],
                                        stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while "Listening on" not in self.log_path.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"kamailio did not start:\n{self.log_path.read_text()[-3000:]}")
            time.sleep(0.1)
        time.sleep(0.3)  # children fork after the banner

    def log(self) -> str:
        return self.log_path.read_text()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self._log.close()


def chromium(tmp_path: Path, url: str, *action: str) -> subprocess.CompletedProcess:
    """Headless Chromium at a phone's screen size, doing one thing with the page at `url` (--dump-dom,
    --screenshot=FILE)."""
    return subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path}",
                           "--window-size=390,844", "--virtual-time-budget=5000", *action, url],
                          capture_output=True, text=True, timeout=120)
