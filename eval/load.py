"""Concurrent calls: latency percentiles per number of simultaneous callers, agent CPU per turn and memory.

    python -m eval.load --calls 1,2,3,4 [--agents 1] [--pattern together,staggered] [--kb kb --cases FILE]

For each N, N light callers (eval.kit.rtp_caller: one asyncio process, next to no CPU, so the agent gets the
machine) dial the agent, or `--agents K` agent processes round-robin (one agent holds what its pjsua2 holds:
64 calls built from source, 4 with PyPI's wheel; beyond that, more agents behind a dispatcher); each asks
`--questions` questions from the cases, one
every `--period` seconds. "together": every caller asks at the same moment (the hard case: every turn ends
at once); "staggered": caller i asks i/N of a period later (the realistic one). Reports per N and pattern
the wire latency p50/p95 (question's end → first answer audio, by 20 ms tick of arrival), answers heard
right, failed calls, agent CPU-seconds per answered turn (in all and by thread: see agent/threads.py) and Whisper
decodes per answered turn, and resident memory (all agents together); writes
load.json and load.png, and names the largest N whose p95 stays within 1.2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from eval.kit.agent_process import AgentProcess
from eval.kit.cases import Case, load_cases
from eval.kit.line import speak, to_16k
from eval.kit.machine import cpu_name, per_turn_by_thread, process_usage, thread_cpu
from eval.kit.placing import kb_hint
from eval.kit.plots import pyplot, save
from eval.kit.ports import free_port_block
from eval.kit.rtp_caller import FRAME, CallResult, Script, place_call
from eval.kit.scoring import contains_any
from eval.kit.wire import response_latency_ms, voiced_ticks

TARGET_P95_MS = 1200.0
FIRST_QUESTION_S = 6.0  # after the greeting


def question_ticks(caller: int, callers: int, questions: int, period_s: float, pattern: str) -> list[int]:
    """The ticks at which `caller` (0-based) of `callers` starts each question."""
    offset = period_s * caller / callers if pattern == "staggered" else 0.0
    return [round((FIRST_QUESTION_S + offset + q * period_s) / 0.02) for q in range(questions)]


def last_voiced_tick(audio: np.ndarray) -> int:
    """The last 20 ms frame of a question with speech in it (its trailing silence is not the caller talking)."""
    voiced = voiced_ticks([audio[i:i + FRAME] for i in range(0, len(audio) - FRAME + 1, FRAME)], first_tick=0)
    return voiced[-1] if voiced else len(audio) // FRAME


@dataclass(frozen=True)
class Asked:
    case: Case
    audio: np.ndarray
    start_tick: int


def score(asked: list[Asked], result: CallResult, transcribe) -> list[dict]:
    """Per question: wire latency, and whether the answer heard before the next question has the expected text."""
    if result.status != 200:
        return [{"id": a.case.id, "error": f"call got {result.status or 'no answer'}"} for a in asked]
    received = result.received
    voiced = voiced_ticks([received[i:i + FRAME] for i in range(0, len(received) - FRAME + 1, FRAME)], first_tick=0)
    rows = []
    for n, a in enumerate(asked):
        end = a.start_tick + last_voiced_tick(a.audio)
        until = asked[n + 1].start_tick if n + 1 < len(asked) else len(received) // FRAME
        heard = transcribe(received[end * FRAME:until * FRAME])
        rows.append({"id": a.case.id, "latency_ms": response_latency_ms(end, [t for t in voiced if t < until]),
                     "heard": heard, "correct": contains_any(heard, a.case.expect_any)})
    return rows


async def _calls(ports: list[int], scripts: list[Script]) -> list[CallResult]:
    """Caller i dials agent i mod K, as a round-robin dispatcher in front of K agents would."""
    return list(await asyncio.gather(*(place_call("127.0.0.1", ports[i % len(ports)], s)
                                       for i, s in enumerate(scripts))))


def _usage(agents: list[AgentProcess]) -> tuple[float, float]:
    usages = [process_usage(a.process.pid) for a in agents]
    return sum(cpu for cpu, _ in usages), sum(rss for _, rss in usages)


def _threads(agents: list[AgentProcess]) -> Counter:
    """CPU-seconds by thread name, all agents together."""
    return sum((Counter(thread_cpu(a.process.pid)) for a in agents), Counter())


def _decodes(agents: list[AgentProcess]) -> float:
    """Utterances Whisper decoded so far, all agents together (from /metrics)."""
    total = 0.0
    for agent in agents:
        for line in agent.http("GET", "/metrics").text.splitlines():
            if line.startswith("agent_asr_decodes "):
                total += float(line.split()[1])
    return total


def run_level(agents: list[AgentProcess], n: int, pattern: str, pool: list[tuple[Case, np.ndarray]], questions: int,
              period_s: float, transcribe) -> dict:
    rng = np.random.default_rng(n * 100 + len(pattern))
    plans = []
    for caller in range(n):
        picks = rng.choice(len(pool), questions, replace=False)
        ticks = question_ticks(caller, n, questions, period_s, pattern)
        plans.append([Asked(pool[p][0], pool[p][1], t) for p, t in zip(picks, ticks, strict=True)])
    scripts = [Script(ticks=plan[-1].start_tick + round(period_s / 0.02), says=tuple((a.start_tick, a.audio)
                                                                                    for a in plan)) for plan in plans]
    cpu_before, _ = _usage(agents)
    threads_before, decodes_before = _threads(agents), _decodes(agents)
    started = time.monotonic()
    results = asyncio.run(_calls([a.sip_port for a in agents], scripts))
    wall = time.monotonic() - started
    cpu_after, rss = _usage(agents)
    threads_after, decodes_after = _threads(agents), _decodes(agents)
    rows = [row for plan, result in zip(plans, results, strict=True) for row in score(plan, result, transcribe)]
    latencies = [r["latency_ms"] for r in rows if r.get("latency_ms") is not None]
    answered = len(latencies)
    return {"calls": n, "agents": len(agents), "pattern": pattern, "questions": len(rows),
            "failed_calls": sum(r.status != 200 for r in results),
            "unanswered": len(rows) - answered,
            "latency_p50_ms": float(np.percentile(latencies, 50)) if latencies else None,
            "latency_p95_ms": float(np.percentile(latencies, 95)) if latencies else None,
            "heard_right": round(sum(bool(r.get("correct")) for r in rows) / max(len(rows), 1), 3),
            "agent_cpu_s_per_turn": round((cpu_after - cpu_before) / max(answered, 1), 2),
            "agent_cpu_s_per_turn_by_thread": per_turn_by_thread(threads_before, threads_after, answered),
            # Above one: replies prepared during a pause and dropped (the caller went on), or asked again.
            "asr_decodes_per_turn": round((decodes_after - decodes_before) / max(answered, 1), 2),
            "agent_cpu_share": round((cpu_after - cpu_before) / wall / os.cpu_count(), 2),
            # What admission control (AGENT_CPU_TARGET=0.8) would take from this level's measured cost per call.
            "calls_fit_at_cpu_0_8": int(os.cpu_count() * 0.8 / ((cpu_after - cpu_before) / wall / n)),
            "agent_rss_mib": round(rss, 0), "rows": rows}


def plot(results: list[dict], path: Path) -> None:
    fig, ax = pyplot().subplots(figsize=(6, 4))
    for pattern in dict.fromkeys(r["pattern"] for r in results):
        rows = [r for r in results if r["pattern"] == pattern]
        for key, style in (("latency_p50_ms", "--"), ("latency_p95_ms", "-")):
            ax.plot([r["calls"] for r in rows], [r[key] for r in rows], style, marker="o",
                    label=f"{pattern} {key.split('_')[1]}")
    ax.axhline(TARGET_P95_MS, color="grey", linestyle=":", label="1.2 s")
    ax.set_xlabel("concurrent calls")
    ax.set_ylabel("latency on the wire (ms)")
    ax.legend(fontsize="small")
    save(fig, path)


def opening_questions(cases: list[Case]) -> list[Case]:
    """The in-KB questions that open their call (a follow-up needs the question before it), without barge-ins."""
    seen_calls: set[str] = set()
    openers = [c for c in cases if not (c.call in seen_calls or seen_calls.add(c.call))]
    return [c for c in openers if not c.expect_abstain and c.barge_in_at_ms is None and c.say]


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m eval.load", description=__doc__.splitlines()[0])
    parser.add_argument("--calls", default="1,2,3,4", help="at most what one agent's pjsua2 holds, per agent "
                        "(python -m agent check)")
    parser.add_argument("--agents", type=int, default=1, help="agent processes on this machine, callers spread "
                        "round-robin over them (as Kamailio's dispatcher does)")
    parser.add_argument("--pattern", default="together,staggered")
    parser.add_argument("--kb", type=Path, default=Path("kb"))
    parser.add_argument("--cases", type=Path, default=Path("eval/cases.jsonl"))
    parser.add_argument("--questions", type=int, default=3, help="questions per call")
    parser.add_argument("--period", type=float, default=20.0, help="seconds from one question to the next")
    parser.add_argument("--out", type=Path, default=Path("var/eval/load"))
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = arguments()
    args = parser.parse_args(argv)

    from agent import settings as settings_module
    from agent.models.load import resolve_all
    from agent.sip.build_info import installed as installed_pjsua2
    from agent.speech.asr import Transcriber
    from agent.speech.window import FULL_WINDOW

    settings = settings_module.parse([], os.environ)
    scorer = Transcriber(resolve_all(settings)["asr"], threads=2, min_window=FULL_WINDOW)
    hint = kb_hint(args.kb)

    def transcribe(audio8k: np.ndarray) -> str:
        wide = to_16k(audio8k)
        return scorer.transcribe(wide, prompt=hint).text if len(wide) else ""

    answerable = opening_questions(load_cases(args.cases))
    levels, patterns = [int(n) for n in args.calls.split(",")], args.pattern.split(",")
    results = []
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="load-agent-") as scratch:
        pool = [(c, speak(c.say, "slt", Path(scratch))) for c in answerable]
        per_agent, slots = -(-max(levels) // args.agents), installed_pjsua2().max_calls
        if per_agent > slots:
            parser.error(f"{max(levels)} calls need at least {-(-max(levels) // slots)} agents ({slots} calls each: "
                         f"{installed_pjsua2().describe()})")
        agents: list[AgentProcess] = []
        try:
            for i in range(args.agents):
                folder = Path(scratch) / f"agent{i}"
                folder.mkdir()
                agents.append(AgentProcess(folder, (free_port_block(110), free_port_block(110)),
                                           settings.models_path, kb_dir=args.kb.resolve(), max_calls=per_agent,
                                           inactivity_s=60, speech_prerender="true",
                                           cpu_target=0))  # measure past capacity, refuse nothing
                # As in production: every answer sentence rendered before the calls (it takes the cores a while).
                agents[-1].wait_for("speech.prerendered", 1, timeout=600)
            for pattern in patterns:
                for n in levels:
                    result = run_level(agents, n, pattern, pool, args.questions, args.period, transcribe)
                    print(json.dumps({k: v for k, v in result.items() if k != "rows"}), flush=True)
                    results.append(result)
        finally:
            for agent in agents:
                agent.stop()
    report = {"cpu": cpu_name(), "agents": args.agents, "levels": results,
              "largest_n_within_p95_1200ms": (within := largest_within_target(results, patterns))}
    (args.out / "load.json").write_text(json.dumps(report, indent=2))
    plot(results, args.out / "load.png")
    print(json.dumps({"largest_n_within_p95_1200ms": within}))
    return 0


def largest_within_target(results: list[dict], patterns: list[str]) -> dict[str, int]:
    """For each pattern, the most callers with no failed call and a p95 within TARGET_P95_MS."""
    return {p: max([r["calls"] for r in results if r["pattern"] == p and r["failed_calls"] == 0
                    and r["latency_p95_ms"] is not None and r["latency_p95_ms"] <= TARGET_P95_MS], default=0)
            for p in patterns}


if __name__ == "__main__":
    sys.exit(main())
