"""A long recorded call: what whole-call recording (AGENT_RECORD_CALLS) costs the agent's memory over a call of
many minutes, and whether the file's turns line up with the call's record.

One real SIP call asks the bundled cases' in-KB questions one after another with a long quiet between them
(--quiet-s), for about --minutes. The agent's resident memory is read every 10 s from /proc: growth is from the
level between turns in the call's second minute (models warm, the call's own buffers made) to what the agent holds
just after the call. Then the agent's recording of the call
is fetched (GET /calls/{id}/recording) and, for each answered turn, where the file has the agent's first reply frame
(its side is exact zeros between replies) is compared with where the record puts it: the turn's start less its
endpointing, plus its response time. Where the caller's energy falls is reported beside it; it differs from the
record's speech end by what the VAD counts as speech, not by the file.

Targets (issue 47): a 10-minute recorded call grows the agent's memory by less than 5 MiB; its file's turns line
up with the record's within 50 ms.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import wave
from pathlib import Path

import numpy as np

from eval.kit.agent_process import REPO, AgentProcess
from eval.kit.cases import load_cases
from eval.kit.placing import spoken
from eval.kit.ports import free_port_block

TOKEN = "eval-long-call-token-0123"
WINDOW = 80
"""5 ms at 16 kHz: the resolution speech edges are found to."""


def rss_mib(pid: int) -> float:
    pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def lowest_per_minute(samples: list[tuple[float, float]]) -> list[float]:
    """Each minute's lowest (seconds, MiB) sample, in order: minutes with no sample are left out."""
    lowest: dict[int, float] = {}
    for at, mib in samples:
        minute = int(at // 60)
        lowest[minute] = min(mib, lowest.get(minute, mib))
    return [round(lowest[minute], 1) for minute in sorted(lowest)]


def voiced(channel: np.ndarray) -> np.ndarray:
    windows = channel[:len(channel) // WINDOW * WINDOW].astype(np.float32).reshape(-1, WINDOW)
    return np.sqrt((windows ** 2).mean(axis=1)) > 32768 * 0.01


def edge_error_ms(flags: np.ndarray, at_s: float, rising: bool, search_s: float = 0.3) -> float | None:
    """Where (ms, + later) the nearest rise (or fall) of voicing is from `at_s`, within `search_s`; None if none."""
    at = round(at_s * 16000 / WINDOW)
    span = round(search_s * 16000 / WINDOW)
    lo, hi = max(1, at - span), min(len(flags), at + span)
    edges = [(i - at) * WINDOW / 16 for i in range(lo, hi) if flags[i] != flags[i - 1] and flags[i] == rising]
    return min(edges, key=abs, default=None)


def alignment(record: dict, wav: bytes) -> list[dict]:
    with wave.open(io.BytesIO(wav)) as w:
        stereo = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").reshape(-1, 2)
    caller, agent = voiced(stereo[:, 0]), stereo[:, 1]
    rows = []
    for turn in record["turns"]:
        latencies = turn["latencies_ms"]
        if turn["outcome"] != "answered" or "response_ms" not in latencies:
            continue
        speech_end = turn["started"] - latencies["endpointing_ms"] / 1000 - record["started"]
        reply = speech_end + latencies["response_ms"] / 1000
        # The agent's side is exact zeros between replies (the playout's silence): its first reply frame is the
        # first sample that is not, after the caller's speech ended.
        after = round(speech_end * 16000)
        sounding = np.flatnonzero(agent[after:after + 10 * 16000])
        rows.append({"n": turn["n"], "caller_end_ms": edge_error_ms(caller, speech_end, rising=False),
                     "agent_start_ms": round((after + sounding[0]) / 16 - reply * 1000, 1) if len(sounding) else None})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.long_call", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--quiet-s", type=float, default=8.0, help="quiet after each answer")
    parser.add_argument("--voice", default="flite:slt")
    parser.add_argument("--no-record", action="store_true", help="the same call with recording off: the memory "
                        "growth that is not the recording's")
    parser.add_argument("--out", type=Path, default=Path("var/eval/long_call"))
    args = parser.parse_args(argv)

    from agent import settings as settings_module

    settings = settings_module.parse([], os.environ)
    args.out.mkdir(parents=True, exist_ok=True)
    cases = [c for c in load_cases(REPO / "eval" / "cases.jsonl") if not c.expect_abstain and c.say]
    with tempfile.TemporaryDirectory(prefix="long-call-") as scratch:
        folder = Path(scratch)
        # The caller asks again once the answer has been quiet --quiet-s, or 12 s after its question at most.
        questions = int(args.minutes * 60 / (min(args.quiet_s, 12.0) + 4)) + 2
        script = [{"audio": str(spoken(cases[i % len(cases)].say, f"q{i}", folder, args.voice))}
                  for i in range(questions)]
        (folder / "script.json").write_text(json.dumps(script))
        agent = AgentProcess(folder, (free_port_block(110), free_port_block(110)), settings.models_path,
                             admin_token=TOKEN, record_calls=str(not args.no_record).lower(),
                             consent_notice="This call is recorded.",
                             max_call_s=int(args.minutes * 60 + 600), inactivity_s=int(args.quiet_s + 60))
        samples: list[tuple[float, float]] = []
        done = threading.Event()
        try:
            def sample() -> None:
                start = time.monotonic()
                while not done.wait(10):
                    samples.append((time.monotonic() - start, rss_mib(agent.process.pid)))

            threading.Thread(target=sample, daemon=True).start()
            base = free_port_block(110)
            duration = args.minutes * 60 + 120
            command = [sys.executable, "-m", "eval.kit.caller", "--target", agent.uri, "--port", str(base),
                       "--rtp-port", str(base + 2), "--script", str(folder / "script.json"), "--quiet-ms",
                       str(int(args.quiet_s * 1000)), "--duration", str(duration), "--out", str(folder / "call")]
            subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=duration + 120, check=True)
            done.set()
            time.sleep(5)  # the call's own memory is released once it is over
            after_call = rss_mib(agent.process.pid)
            (call,) = agent.http("GET", "/calls", TOKEN).json()["calls"]
            record = agent.http("GET", f"/calls/{call['id']}", TOKEN).json()
            wav = b"" if args.no_record else agent.http("GET", f"/calls/{call['id']}/recording", TOKEN).content
        finally:
            done.set()
            agent.stop()
    report = summarize(record, wav, samples, after_call, args.no_record)
    (args.out / "long_call.json").write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "turns"}, indent=1))
    return 0 if report["target_met"] else 1


def summarize(record: dict, wav: bytes, samples: list[tuple[float, float]], after_call: float,
              no_record: bool) -> dict:
    """The call's memory over time (`samples`: seconds, RSS MiB) and, when recorded, how its file's turns line
    up with its record."""
    rows = alignment(record, wav) if wav else []
    errors = [abs(r["agent_start_ms"]) for r in rows if r["agent_start_ms"] is not None]
    caller_edges = [abs(r["caller_end_ms"]) for r in rows if r["caller_end_ms"] is not None]
    minute = next((mib for at, mib in samples if at >= 60), samples[0][1] if samples else 0.0)
    # Memory goes back between replies (agent.heap), so a sample taken while a reply is made can be tens of MiB
    # above the level between turns: the growth is what the call still holds 5 s after it ended, against the level
    # between turns in its second minute (its lowest sample there).
    second_minute = [mib for at, mib in samples if 60 <= at < 120] or [minute]
    report = {"recorded": not no_record, "call_s": round(record["ended"] - record["started"], 1),
              "outcome": record["outcome"], "reason": record.get("reason"), "recording_mib": round(len(wav) / 2**20, 1),
              "turns_answered": len(rows), "rss_mib_at_1_min": round(minute, 1),
              "rss_mib_at_end": round(samples[-1][1], 1) if samples else None,
              "rss_growth_mib": round(after_call - min(second_minute), 1) if samples else None,
              "rss_growth_at_last_sample_mib": round(samples[-1][1] - minute, 1) if samples else None,
              "rss_mib_max": round(max(m for _, m in samples), 1) if samples else None,
              "rss_mib_after_call": round(after_call, 1),
              "replies_found": len(errors), "edges_missing": len(rows) - len(errors),
              "reply_offset_ms_p50": round(float(np.percentile(errors, 50)), 1) if errors else None,
              "reply_offset_ms_max": round(max(errors), 1) if errors else None,
              "caller_end_vs_energy_ms_p50": round(float(np.percentile(caller_edges, 50)), 1) if caller_edges else None,
              "rss_mib_every_10_s": [round(mib, 1) for _, mib in samples],
              # Each minute's lowest sample: the level between turns, which is what lasts.
              "rss_mib_lowest_per_minute": lowest_per_minute(samples), "turns": rows}
    report["target_met"] = bool(report["rss_growth_mib"] is not None and report["rss_growth_mib"] < 5
                                and (no_record or errors and max(errors) <= 50 and not report["edges_missing"]))
    return report


if __name__ == "__main__":
    sys.exit(main())
