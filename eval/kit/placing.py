"""Placing a scripted call against an agent, the kit every call-placing runner shares (eval.replay, eval.pbx,
eval.browser_phone, eval.load): the caller's audio for each case (a WAV, or its text in a caller voice, on a noisy line
if asked), one call through eval.kit.caller (or the WebSocket or browser callers), and what a caller who answers the
agent's clarifications knows of the KB."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from eval.kit import voices
from eval.kit.agent_process import REPO, AgentProcess
from eval.kit.cases import PAUSE, Case
from eval.kit.noise import Line, babble_talkers, mix
from eval.kit.phone import load_wav, save_wav
from eval.kit.ports import free_port_block
from eval.kit.repeats import NO, YES, about

TOKEN = "replay-eval-token"



def question_audio(case: Case, folder: Path, voice: str, line: Line | None = None) -> Path:
    """The case's WAV, or its text spoken in a caller voice (eval.kit.voices) at 8 kHz; on a noisy `line`, with its
    noise mixed in."""
    if case.audio is not None:
        return noisy_line(case.audio, case.id, folder, line)
    return spoken(case.say, case.id, folder, voice, line, case.pause_ms)


def spoken(text: str, name: str, folder: Path, voice: str, line: Line | None = None, pause_ms: int = 0) -> Path:
    """`text` said by a caller voice (eval.kit.voices) at 8 kHz, as folder/NAME.wav, with `pause_ms` of silence at
    each PAUSE mark (a hesitation); on a noisy `line`, with its noise mixed in."""
    parts = []
    for n, part in enumerate(p.strip() for p in text.split(PAUSE)):
        parts.append(load_wav(voices.say(part, voice, folder / f"{name}-{n}.wav")))
    if len(parts) > 1:  # a synthesizer pads each part with silence: the hesitation is the pause alone
        parts = [_trim(part, start=n > 0, end=n < len(parts) - 1) for n, part in enumerate(parts)]
    pause = np.zeros(pause_ms * 16, np.int16)  # load_wav gives 16 kHz
    wav = folder / f"{name}.wav"
    save_wav(wav, np.concatenate([x for part in parts for x in (pause, part)][1:]))
    return noisy_line(wav, name, folder, line)


def _trim(pcm: np.ndarray, start: bool, end: bool, floor: int = 300) -> np.ndarray:
    """`pcm` without its leading (`start`) and trailing (`end`) 10 ms frames quieter than `floor`."""
    loud = [i for i in range(0, len(pcm), 160) if np.abs(pcm[i:i + 160]).max(initial=0) >= floor]
    if not loud:
        return pcm
    return pcm[loud[0] if start else 0:loud[-1] + 160 if end else len(pcm)]


def noisy_line(wav: Path, name: str, folder: Path, line: Line | None) -> Path:
    if line is None or line.snr_db is None:
        return wav
    noisy = folder / f"{name}-snr{line.snr_db:g}.wav"
    speech = load_wav(wav)  # 16 kHz
    save_wav(noisy, mix(speech, line.noise_for(len(speech)), line.snr_db))
    return noisy


def babble_speakers(cases: list[Case], folder: Path) -> tuple[np.ndarray, ...]:
    """The babble talkers' questions (eval.kit.noise.babble_talkers) as 16 kHz audio."""
    folder.mkdir(parents=True, exist_ok=True)
    return tuple(load_wav(question_audio(c, folder, voice)) for c, voice in babble_talkers(cases))


def run_call(agent: AgentProcess, call_id: str, cases: list[Case], out: Path, codec: str, voice: str,
             line: Line | None = None, transport: str = "sip", repeats: Repeats | None = None,
             route: tuple[str, ...] = ()) -> dict:
    """Place one call asking `cases` in order; return the caller's timeline. With `repeats`, the caller answers
    the agent's clarifications as the person who asked would (SIP only). `route`: eval.kit.caller's arguments that
    replace the direct way to the agent (another --target, --address, a --registrar: eval.pbx)."""
    folder = out / "calls" / call_id
    folder.mkdir(parents=True, exist_ok=True)
    script = [{"audio": str(question_audio(c, folder, voice, line)), "barge_in_at_ms": c.barge_in_at_ms}
              for c in cases]
    if repeats is not None:
        replies = {kind: str(spoken(text, f"{kind}-{voice}", folder, voice, line)) for kind, text in
                   (("yes", YES), ("no", NO))}
        for step, case in zip(script, cases, strict=True):
            again = str(case.repeat_audio) if case.repeat_audio is not None else step["audio"]
            step.update(about=sorted(about(case, repeats.chunks)), repeat_audio=again, yes_audio=replies["yes"],
                        no_audio=replies["no"])
    (folder / "script.json").write_text(json.dumps(script))
    base = free_port_block(110)
    duration = (20 + 25 * len(cases)) * (2 if repeats is not None else 1)
    command = [sys.executable, "-m", "eval.kit.caller", "--target", agent.uri, "--port", str(base), "--rtp-port",
               str(base + 2), "--codec", codec.upper(), "--script", str(folder / "script.json"),
               "--duration", str(duration), "--out", str(folder), "--loss", str(line.loss_pct if line else 0)]
    if repeats is not None:
        command += ["--react", "--hint", repeats.hint]
    command += route
    if transport == "websocket":  # the same script over the WebSocket media stream (16 kHz PCM, no codec, no loss)
        command = [sys.executable, "-m", "eval.kit.ws_caller", "--url",
                   f"ws://127.0.0.1:{agent.http_port}/ws/media?token={TOKEN}", "--script", str(folder / "script.json"),
                   "--duration", str(duration), "--out", str(folder)]
    if transport == "webrtc":  # the same script on the browser phone, aiortc in the browser's place (Opus)
        command = [sys.executable, "-m", "eval.kit.rtc_caller", "--url", f"http://127.0.0.1:{agent.http_port}",
                   "--script", str(folder / "script.json"), "--duration", str(duration), "--out", str(folder)]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=duration + 60)
    if result.returncode != 0:
        return {"error": f"caller failed: {result.stderr.strip()[-300:]}"}
    return json.loads((folder / "timeline.json").read_text())


def kb_chunks(kb_dir: Path) -> list:
    """The KB's chunks, as the agent splits them (the caller's and the scorer's knowledge of the KB's words)."""
    from agent.knowledge.chunking import split_document
    from agent.knowledge.scan import scan

    documents = scan(kb_dir, 1 << 20, 1 << 30).documents.values()
    return [c for d in documents for c in split_document(d.path, d.text)]


def kb_hint(kb_dir: Path) -> str:
    """The KB's names and words as Whisper's prompt: the scorer listens like a caller who knows the
    company's names (tiny.en otherwise hears "Quarry Lane" as "Corrie Lane")."""
    from agent.knowledge.vocabulary import chunks_hint

    return chunks_hint(kb_chunks(kb_dir))


@dataclass(frozen=True)
class Repeats:
    """What a caller who answers the agent's clarifications knows: the KB's chunks (what each question is about,
    eval.kit.repeats) and its words (the hint its Whisper hears the agent with)."""

    chunks: list
    hint: str
