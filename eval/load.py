"""Concurrent calls: latency percentiles per number of simultaneous callers, CPU and memory.

    python -m eval.load --calls 1,2,4,6,8 [--kb kb --cases eval/cases.jsonl] [--out DIR]

For each N, N callers dial one agent at once; each asks three questions from the cases (natural
gaps: it waits for each answer to end). Reports per N the wire latency p50/p95, failed calls,
and the agent's CPU seconds and resident memory, writes load.json and load.png, and names the
largest N whose p95 stays within 1.2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from eval.agent_process import AgentProcess
from eval.cases import Case, load_cases
from eval.replay import free_port_block, kb_hint, run_call, score_call

TARGET_P95_MS = 1200.0


def process_usage(pid: int) -> tuple[float, float]:
    """CPU seconds (user + system) and resident memory in MiB of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    rss_pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return cpu, rss_pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.load", description=__doc__.splitlines()[0])
    parser.add_argument("--calls", default="1,2,4,6,8")
    parser.add_argument("--kb", type=Path, default=Path("kb"))
    parser.add_argument("--cases", type=Path, default=Path("eval/cases.jsonl"))
    parser.add_argument("--questions", type=int, default=3, help="questions per call")
    parser.add_argument("--out", type=Path, default=Path("var/eval/load"))
    args = parser.parse_args(argv)

    from agent import settings as settings_module
    from agent.models.load import resolve_all
    from agent.speech.asr import Transcriber
    from agent.speech.vad import SileroVad

    settings = settings_module.parse([], os.environ)
    resolved = resolve_all(settings)
    transcriber = Transcriber(resolved["asr"], threads=1)
    cases, seen_calls = load_cases(args.cases), set()
    # Only questions that open their call: follow-ups need the question before them.
    openers = [c for c in cases if not (c.call in seen_calls or seen_calls.add(c.call))]
    answerable = [c for c in openers if not c.expect_abstain and c.barge_in_at_ms is None and c.say]
    hint = kb_hint(args.kb)
    levels = [int(n) for n in args.calls.split(",")]
    results = []
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="load-agent-") as scratch:
        agent = AgentProcess(Path(scratch), (free_port_block(110), free_port_block(110)), settings.models_path,
                             kb_dir=args.kb.resolve(), max_calls=max(levels), inactivity_s=60)
        try:
            for n in levels:
                groups = [[Case(f"n{n}-c{i}-{c.id}", f"n{n}-c{i}", c.say, None, c.expect_any, False)
                           for c in np.random.default_rng(n * 100 + i).choice(answerable, args.questions,
                                                                               replace=False)]
                          for i in range(n)]
                cpu_before, _ = process_usage(agent.process.pid)
                started = time.monotonic()
                with ThreadPoolExecutor(max_workers=n) as pool:
                    timelines = list(pool.map(lambda g: run_call(agent, g[0].call, g, args.out, "pcmu", "slt"),
                                              groups))
                wall = time.monotonic() - started
                cpu_after, rss = process_usage(agent.process.pid)
                rows = [r for g, t in zip(groups, timelines, strict=True) for r in score_call(
                    g, t, args.out / "calls" / g[0].call, transcriber,
                    lambda: SileroVad(resolved["vad"].location), hint)]
                latencies = [r["latency_ms"] for r in rows if r.get("latency_ms") is not None]
                result = {"calls": n, "questions": len(rows), "failed_calls": sum("error" in t for t in timelines),
                          "latency_p50_ms": float(np.percentile(latencies, 50)) if latencies else None,
                          "latency_p95_ms": float(np.percentile(latencies, 95)) if latencies else None,
                          "accuracy": round(sum(bool(r.get("correct")) for r in rows) / max(len(rows), 1), 3),
                          "agent_cpu_s_per_call": round((cpu_after - cpu_before) / n, 1),
                          "agent_cpu_share": round((cpu_after - cpu_before) / wall / os.cpu_count(), 2),
                          "agent_rss_mib": round(rss, 0)}
                print(json.dumps(result), flush=True)
                results.append(result)
        finally:
            agent.stop()
    within = [r["calls"] for r in results if r["latency_p95_ms"] is not None and r["latency_p95_ms"] <= TARGET_P95_MS
              and r["failed_calls"] == 0]
    report = {"levels": results, "largest_n_within_p95_1200ms": max(within) if within else 0}
    (args.out / "load.json").write_text(json.dumps(report, indent=2))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    xs = [r["calls"] for r in results]
    for key, label in (("latency_p50_ms", "p50"), ("latency_p95_ms", "p95")):
        ax.plot(xs, [r[key] for r in results], marker="o", label=label)
    ax.axhline(TARGET_P95_MS, color="grey", linestyle=":", label="1.2 s")
    ax.set_xlabel("concurrent calls")
    ax.set_ylabel("latency on the wire (ms)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out / "load.png", dpi=100)
    print(json.dumps({"largest_n_within_p95_1200ms": report["largest_n_within_p95_1200ms"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
