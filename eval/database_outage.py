"""Calls while the records' PostgreSQL is away: turn latency with and without an outage, and every record after it.

    python -m eval.database_outage [--kb kb] [--cases eval/cases.jsonl] [--limit 12] [--concurrency 2]
                                   [--outage-s 30] [--outage-at-call 3] [--out var/eval/database_outage]

Starts a throwaway PostgreSQL on loopback (eval.kit.postgres), then runs eval.replay beside it twice, each time with
a fresh agent keeping its records there (AGENT_DATABASE_URL): once with the database up throughout (steady), once
with it stopped a few seconds after call `--outage-at-call` begins and started again `--outage-s` later (outage).
Reports each run's turn latency on the wire (p50/p95 from eval.replay's report), the outage run's turns that
began while the database was down on their own, and checks the database against each agent's own log: every
call once, with every turn it logged, numbered in order, in the order they happened. Writes report.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg

from eval.kit.agent_process import REPO, events
from eval.kit.postgres import Postgres
from eval.kit.report import percentile


def logged_turns(agent_log: str) -> dict[str, list[str]]:
    """Each call's turn outcomes in the order the agent logged them (its `call.turn` events)."""
    calls: dict[str, list[str]] = {}
    for turn in events(agent_log, "call.turn"):
        calls.setdefault(turn["call"], []).append(turn["outcome"])
    return calls


def stored_turns(url: str) -> dict[str, list[list]]:
    """Each stored call (by SIP Call-ID, a list per stored row of it) and its turns: [n, started, outcome]."""
    calls: dict[str, list[list]] = {}
    with psycopg.connect(url) as db:
        for call_id, sip_call_id in db.execute("SELECT id, sip_call_id FROM calls ORDER BY started").fetchall():
            turns = db.execute("SELECT n, started, outcome FROM turns WHERE call_id = %s ORDER BY n",
                               (call_id,)).fetchall()
            calls.setdefault(sip_call_id, []).append([list(t) for t in turns])
    return calls


def check_records(logged: dict[str, list[str]], stored: dict[str, list[list]]) -> list[str]:
    """What the database lacks or holds twice against the agent's log; [] when every record is there once, in
    order. A turn later marked cut off (the caller had not finished) is stored as such."""
    problems = [f"call {c} is not stored" for c in logged if c not in stored]
    problems += [f"call {c} is stored {len(rows)} times" for c, rows in stored.items() if len(rows) != 1]
    for call, outcomes in logged.items():
        turns = stored.get(call, [[]])[0]
        if [t[0] for t in turns] != list(range(1, len(turns) + 1)):
            problems.append(f"call {call}: turns numbered {[t[0] for t in turns]}")
        if [t[1] for t in turns] != sorted(t[1] for t in turns):
            problems.append(f"call {call}: turns stored out of the order they began")
        stored_outcomes = [t[2] for t in turns]
        if len(turns) != len(outcomes) or any(s not in (o, "cut off") for s, o in zip(stored_outcomes, outcomes,
                                                                                    strict=True)):
            problems.append(f"call {call}: logged {outcomes}, stored {stored_outcomes}")
    return problems


def replay(args: argparse.Namespace, url: str, out: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "eval.replay", "--kb", str(args.kb), "--cases", str(args.cases), "--out",
               str(out), "--database-url", url, "--limit", str(args.limit), "--concurrency", str(args.concurrency)]
    return subprocess.Popen(command, cwd=REPO)


def call_begun(out: Path, call: int) -> bool:
    """Whether eval.replay has placed its `call`-th call (from 1): it writes a call's script as it places it."""
    return len(list((out / "calls").glob("*/script.json"))) >= call


def run(args: argparse.Namespace, database: Postgres, name: str, outage: bool) -> dict:
    url = database.new_database()
    out = args.out / name
    window: list[float] = []
    process = replay(args, url, out)
    if outage:
        def stop_and_start() -> None:
            while process.poll() is None and not call_begun(out, args.outage_at_call):
                time.sleep(0.2)
            time.sleep(3)  # into the call: its first question is on its way
            if process.poll() is None:
                database.stop()
                window.append(time.time())
                time.sleep(args.outage_s)
                database.start()
                window.append(time.time())
        outage_thread = threading.Thread(target=stop_and_start)
        outage_thread.start()
    if process.wait() != 0:
        raise RuntimeError(f"eval.replay failed ({name})")
    if outage:
        outage_thread.join()
    rows = json.loads((out / "report.json").read_text())["cases"]
    logged = logged_turns((out / "agent.log").read_text())
    problems = check_records(logged, stored_turns(url))
    result = {"calls": len(logged), "turns": sum(map(len, logged.values())), "record_problems": problems,
              **_latencies(rows)}
    if outage:
        began, ended = window or (0.0, 0.0)
        during = [r for r in rows if began <= (r.get("agent_started") or 0) <= ended]
        result.update(outage_s=round(ended - began, 1),
                      during_outage={"n": len(during), **_latencies(during)})
    return result


def _latencies(rows: list[dict]) -> dict:
    values = [r["latency_ms"] for r in rows if r.get("latency_ms") is not None]
    return {"answers_timed": len(values), "latency_p50_ms": percentile(values, 50),
            "latency_p95_ms": percentile(values, 95)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.database_outage", description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, default=REPO / "kb")
    parser.add_argument("--cases", type=Path, default=REPO / "eval" / "cases.jsonl")
    parser.add_argument("--limit", type=int, default=12, help="calls in each run")
    parser.add_argument("--concurrency", type=int, default=2, help="calls at a time (more turns in the outage)")
    parser.add_argument("--outage-s", type=float, default=30)
    parser.add_argument("--outage-at-call", type=int, default=3, help="the database stops 3 s into this call")
    parser.add_argument("--out", type=Path, default=REPO / "var" / "eval" / "database_outage")
    args = parser.parse_args(argv)
    database = Postgres()
    try:
        report = {"steady": run(args, database, "steady", outage=False),
                  "outage": run(args, database, "outage", outage=True)}
    finally:
        database.remove()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    ok = not report["steady"]["record_problems"] and not report["outage"]["record_problems"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
