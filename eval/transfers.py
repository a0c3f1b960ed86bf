"""Warm transfers over real SIP calls, many in a row: a pjsua2 caller asks for a person, the agent calls a pjsua2
person (eval.kit.person) who accepts, declines, is busy or never answers, in turn.

For each call: the transfer's result in the call's record; when the person accepted, how long after they began
to speak (as they pressed 1) the caller hears them: where the caller's audio lines up with the person's recording,
by the wall clocks of both user agents, which share this machine; when they did not, whether the caller heard
the offer of a message (Whisper on what the caller received); and whether the call stayed up until the caller hung
up. With --phone-takes-replaces the caller's phone follows the agent's REFER with Replaces: the person's call is
handed to it and the agent leaves the line (the record's try says joined: replaced), and a call is dropped unless
the phone's own call to the person stayed up until the caller hung up.

Targets (issue 47): caller and person hear each other within 1 s of accepting; no answer within the ring timeout
-> the caller is offered a message every time; no call dropped across 20 transfers.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from eval.kit.agent_process import REPO, AgentProcess
from eval.kit.call_scoring import scorer
from eval.kit.likeness import MATCH, best_match
from eval.kit.phone import load_wav
from eval.kit.placing import spoken
from eval.kit.ports import free_port_block
from eval.kit.report import percentile
from eval.kit.scoring import normalize

TOKEN = "eval-transfers-token-0123"
MODES = ("accept", "accept", "no-answer", "accept", "decline", "accept-voice", "accept", "busy")
TICK = 320


def heard_at(timeline: dict, received: np.ndarray, voice: np.ndarray, said_at: float) -> float | None:
    """Wall time the caller's audio holds the start of `voice` (16 kHz), said at `said_at`: where the two line up
    best within 3 s after it; None when nothing there is like it."""
    first_at, last_tick, last_at = timeline["clock"]
    per_sample = (last_at - first_at) / max(last_tick - 1, 1) / TICK
    start = max(0, int((said_at - first_at) / per_sample) - TICK * 5)
    best, score = best_match(received[start:start + 3 * 16000 + len(voice)], voice)
    return first_at + (start + best) * per_sample if score > MATCH else None


def one_call(agent: AgentProcess, n: int, mode: str, folder: Path, ask: Path, hello: Path, yes: Path,
             transcriber, follows: bool = False) -> dict:
    out = folder / f"call-{n}"
    out.mkdir()
    person_port = agent.person_port
    person = subprocess.Popen([sys.executable, "-m", "eval.kit.person", "--port", str(person_port), "--rtp-port",
                               str(free_port_block(110)), "--mode", mode, "--say", str(hello), "--yes", str(yes),
                               "--say-after-s", "1" if mode == "accept-voice" else "0", "--duration", "60",
                               "--out", str(out / "person")], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = free_port_block(110)
    caller = subprocess.run([sys.executable, "-m", "eval.kit.caller", "--target", agent.uri, "--port", str(base),
                             "--rtp-port", str(base + 2), "--question", str(ask), "--duration", "50", "--out",
                             str(out / "caller"), *(["--accept-transfer", "--stay-transferred-s", "15"] if follows
                                                    else [])], cwd=REPO, capture_output=True, text=True, timeout=120)
    person.wait(timeout=90)
    row: dict = {"call": n, "mode": mode, "caller_ok": caller.returncode == 0}
    if caller.returncode != 0:
        row["error"] = caller.stderr[-300:]
        return row
    timeline = json.loads((out / "caller" / "timeline.json").read_text())
    agent.wait_for("call.ended", n + 1, timeout=30)
    calls = agent.http("GET", "/calls?limit=500", TOKEN).json()["calls"]
    record = next((c for c in calls if c["sip_call_id"] == timeline["sip_call_id"]), None)
    row["result"] = record["transfers"][-1]["result"] if record and record["transfers"] else None
    row["joined"] = record["transfers"][-1].get("joined") if record and record["transfers"] else None
    row["outcome"] = record["outcome"] if record else None
    # Handed over, the agent leaves the line: then it is the phone's own call to the person that must last.
    row["ended_by"] = timeline.get("transferred_ended_by") if row["joined"] == "replaced" else timeline.get("ended_by")
    received = load_wav(out / "caller" / "received.wav")
    taken = json.loads((out / "person" / "timeline.json").read_text()) \
        if (out / "person" / "timeline.json").exists() else {}
    if mode.startswith("accept") and "accepted_at" in taken:
        # The person speaks as they press 1 (a second after their yes): from their voice to the caller hearing it.
        heard = heard_at(timeline, received, load_wav(hello), taken["said_at"])
        row["heard_after_accept_ms"] = round((heard - taken["said_at"]) * 1000) if heard else None
        if "yes_end_at" in taken:  # accepted by voice: how long the agent took to hear the yes and join the calls
            bridged = [e for e in agent.events("call.warm_transfer") if e.get("result") == "transferred"]
            at = datetime.datetime.fromisoformat(bridged[-1]["ts"].replace("Z", "+00:00")).timestamp() \
                if bridged else None
            row["joined_after_yes_ms"] = round((at - taken["yes_end_at"]) * 1000) if at else None
    else:
        after = received[timeline.get("question_end_tick", 0) * TICK:]
        said = normalize(transcriber.transcribe(after.astype(np.float32) / 32768).text)
        row["offered_message"] = "message" in said
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.transfers", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--ring-s", type=int, default=8)
    parser.add_argument("--phone-takes-replaces", action="store_true",
                        help="the caller's phone follows REFER with Replaces (else it refuses it: bridged)")
    parser.add_argument("--out", type=Path, default=Path("var/eval/transfers"))
    args = parser.parse_args(argv)

    from agent import settings as settings_module
    from agent.models.load import resolve_all

    settings = settings_module.parse([], os.environ)
    transcriber = scorer(resolve_all(settings)["asr"])
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="transfers-") as scratch:
        folder = Path(scratch)
        ask = spoken("Can I speak to a real person, please?", "ask", folder, "flite:slt")
        hello = spoken("Reception, good morning. How can I help?", "hello", folder, "flite:kal")
        yes = spoken("Yes, put them through.", "yes", folder, "flite:awb")
        person_port = free_port_block(110)
        agent = AgentProcess(folder, (free_port_block(110), free_port_block(110)), settings.models_path,
                             admin_token=TOKEN, inactivity_s=60, transfer_mode="warm", transfer_ring_s=args.ring_s,
                             transfer_to=f"sip:person@127.0.0.1:{person_port}")
        agent.person_port = person_port
        try:
            for n in range(args.calls):
                rows.append(one_call(agent, n, MODES[n % len(MODES)], folder, ask, hello, yes, transcriber,
                                     args.phone_takes_replaces))
                print(json.dumps(rows[-1]), flush=True)
        finally:
            agent.stop()
    accepted = [r for r in rows if r["mode"].startswith("accept")]
    refused = [r for r in rows if not r["mode"].startswith("accept")]
    latencies = [r["heard_after_accept_ms"] for r in accepted if r.get("heard_after_accept_ms") is not None]
    dropped = [r["call"] for r in rows if not r.get("caller_ok") or r.get("ended_by") != "caller"]
    report = {"calls": len(rows), "accepted": len(accepted),
              "transferred": sum(r.get("result") == "transferred" for r in accepted),
              "handed_over": sum(r.get("joined") == "replaced" for r in accepted),
              "heard_after_accept_ms_p50": percentile(latencies, 50),
              "heard_after_accept_ms_max": max(latencies) if latencies else None,
              "not_taken": len(refused), "offered_a_message": sum(bool(r.get("offered_message")) for r in refused),
              "dropped": dropped, "rows": rows}
    report["target_met"] = bool(report["transferred"] == len(accepted) and len(latencies) == len(accepted)
                                and max(latencies, default=0) <= 1000
                                and report["offered_a_message"] == len(refused) and not dropped)
    (args.out / "transfers.json").write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}, indent=1))
    return 0 if report["target_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
