"""Soak: many calls one after another, then one call flooded with RFC 4733 digits; the agent must not grow.

    python -m eval.soak [--calls 300] [--digits 2000] [--warm-up 20] [--out var/eval/soak]

Callers are eval.kit.rtp_caller dialogs (one asyncio process, next to no CPU). After a warm-up the agent's
resident memory is read, the calls are placed one at a time (each hears the greeting start, then hangs up),
and memory is read again. Then one caller sends `--digits` digits back to back (one 20 ms event each) and
asks a question: the agent must still answer it. Writes soak.json: memory before and after, growth, calls
with no record, and whether the flooded call was answered right.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from eval.kit.agent_process import AgentProcess
from eval.kit.cases import load_cases
from eval.kit.line import speak, to_16k
from eval.kit.machine import process_usage
from eval.kit.ports import free_port_block
from eval.kit.rtp_caller import FRAME, Script, place_call
from eval.kit.scoring import contains_any

CALL_TICKS = 50  # a second: long enough for the greeting to start


def memory_settled(pid: int, seconds: float = 3.0) -> float:
    """Resident MiB once the agent has had a moment to finish the last call's work."""
    time.sleep(seconds)
    return process_usage(pid)[1]


async def sequential_calls(port: int, count: int) -> list[tuple[int, str]]:
    """(status, SIP Call-ID) of each call, placed one after another."""
    results = []
    for _ in range(count):
        result = await place_call("127.0.0.1", port, Script(ticks=CALL_TICKS))
        results.append((result.status, result.sip_call_id))
    return results


def flooded_call(port: int, digits: int, question: np.ndarray) -> tuple[str, np.ndarray, int]:
    """Digits back to back (an event tick, then an audio tick), then the question; (Call-ID, heard, tick the
    question ended)."""
    keys = "0123456789#"  # not '*': that asks for the last answer again, which is a different test
    digit_ticks = tuple((10 + 2 * i, keys[i % len(keys)]) for i in range(digits))
    audio_at = 10 + 2 * digits + 25
    question_end = audio_at + len(question) // FRAME
    script = Script(ticks=question_end + 500, says=((audio_at, question),), digits=digit_ticks)
    result = asyncio.run(place_call("127.0.0.1", port, script))
    return result.sip_call_id, result.received, question_end


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.soak", description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="at most 400: /calls lists the last 500")
    parser.add_argument("--digits", type=int, default=2000)
    parser.add_argument("--warm-up", type=int, default=20)
    parser.add_argument("--cases", type=Path, default=Path("eval/cases.jsonl"))
    parser.add_argument("--out", type=Path, default=Path("var/eval/soak"))
    args = parser.parse_args(argv)

    from agent import settings as settings_module
    from agent.models.load import resolve_all
    from agent.speech.asr import Transcriber
    from agent.speech.window import FULL_WINDOW

    settings = settings_module.parse([], os.environ)
    scorer = Transcriber(resolve_all(settings)["asr"], threads=1, min_window=FULL_WINDOW)
    case = next(c for c in load_cases(args.cases) if c.say and not c.expect_abstain and c.barge_in_at_ms is None)
    args.out.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(16)
    with tempfile.TemporaryDirectory() as tmp:
        question = speak(case.say, "slt", Path(tmp))
        ports = (free_port_block(110), free_port_block(110))
        agent = AgentProcess(Path(tmp), ports, settings.models_path, admin_token=token,
                             max_call_s=max(600, args.digits // 20), inactivity_s=120)
        try:
            asyncio.run(sequential_calls(agent.sip_port, args.warm_up))
            before = memory_settled(agent.process.pid)
            started = time.monotonic()
            placed = asyncio.run(sequential_calls(agent.sip_port, args.calls))
            elapsed = time.monotonic() - started
            after = memory_settled(agent.process.pid)
            flood_id, heard, question_end = flooded_call(agent.sip_port, args.digits, question)
            time.sleep(1)
            records = {c["sip_call_id"]: c for c in agent.http("GET", "/calls?limit=500", token).json()["calls"]}
            alive = agent.process.poll() is None
        finally:
            agent.stop()
            shutil.copyfile(agent.log_path, args.out / "agent.log")  # a failed turn says its stage there
    wide = to_16k(heard[question_end * FRAME:])
    answer = scorer.transcribe(wide).text if len(wide) else ""
    answered = [status for status, _ in placed if status == 200]
    missing = [call_id for status, call_id in placed if status == 200 and call_id not in records]
    flood_record = records.get(flood_id, {})
    report = {
        "calls": args.calls, "answered": len(answered), "calls_per_s": round(args.calls / elapsed, 2),
        "records_missing": len(missing),
        "rss_mib_after_warm_up": round(before, 1), "rss_mib_after_calls": round(after, 1),
        "rss_growth_mib": round(after - before, 1),
        "flood": {"digits": args.digits, "question": case.say, "heard": answer,
                  "answered_right": contains_any(answer, case.expect_any),
                  "digits_recorded": len(flood_record.get("dtmf", "")), "outcome": flood_record.get("outcome")},
        "agent_alive": alive,
    }
    (args.out / "soak.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    ok = (len(answered) == args.calls and not missing and report["flood"]["answered_right"] and alive)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
