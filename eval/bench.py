"""The headline benchmarks, once, on this machine: answers and latency on real calls (the bundled cases with a
caller who answers the agent, paraphrases nobody tuned on, callers who hesitate, callers in babble), the browser
phone against a phone line, concurrent callers, and what a silent call costs. Writes docs/results.md (one table
stamped with the CPU, its vector extensions, the date and the commit, the command behind every figure, and the
plots) and the README's "Where it stands", its short form from the same run.

    python -m eval.bench [--quick] [--out var/eval/bench] [--results docs/results.md] [--readme README.md]

Each benchmark is its own runner (`python -m eval.NAME --help`), run one after another so none disturbs
another's timing. --quick runs a subset (fewer calls, one load level) in about a quarter of an hour, for a
developer's loop; its page says so.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from eval.kit.agent_process import REPO
from eval.kit.results import (
    Figure,
    plot_latency,
    plot_load,
    readme_block,
    results_page,
    this_machine,
    with_readme_block,
)

BUNDLED = ("--kb", "kb", "--cases", "eval/cases.jsonl", "--caller-repeats")
PAUSES = ("--kb", "kb", "--cases", "eval/pauses.jsonl", "--caller-repeats")
RIGHT, WRONG = "in-KB answered right, by the end", "wrong answers"


@dataclass(frozen=True)
class Benchmark:
    name: str
    """The row label, and its folder under --out."""
    runner: str
    args: tuple[str, ...]
    quick: tuple[str, ...] | None
    """Its arguments under --quick (a smaller run); None: left out of --quick."""
    figures: Callable[[Path, str, str], list[Figure]]
    """(its --out folder, the row label, the command) → its figures."""
    headline: tuple[str, ...] | None = None
    """The names of its figures the README shows; None: those its figures mark as headline."""


def pct(share: float | None) -> str:
    return "–" if share is None else f"{share * 100:.1f}%"


def ms_pair(p50: float | None, p95: float | None) -> str:
    return "–" if p50 is None else f"{p50:,.0f} / {p95:,.0f} ms"


def replay_figures(out: Path, label: str, command: str) -> list[Figure]:
    """An eval.replay run's answers and latency (report.json)."""
    s = json.loads((out / "report.json").read_text())["summary"]
    in_kb, out_of_kb = s["in_kb"], s["out_of_kb"]
    rows = [(RIGHT, f"{pct(s['accuracy'])} ({in_kb['right']} of {sum(in_kb.values())})", True),
            ("… at the first try", pct(s["first_try_accuracy"]), False),
            (WRONG, str(s["wrong_answers"]), True),
            ("latency p50 / p95, end of question → first answer audio",
             ms_pair(s["latency_p50_ms"], s["latency_p95_ms"]), True)]
    if sum(out_of_kb.values()):
        rows.insert(3, ("out-of-KB declined", f"{out_of_kb['right']} of {sum(out_of_kb.values())}", True))
    if s.get("bargein_p50_ms") is not None:
        rows.append(("barge-in p50 / p95, caller talks → agent silent",
                     ms_pair(s["bargein_p50_ms"], s["bargein_p95_ms"]), False))
    if s.get("cut_offs"):
        rows.append(("answered before the question was over (then taken back)", str(s["cut_offs"]), False))
    return [Figure(label, name, value, command, headline) for name, value, headline in rows]


def browser_figures(out: Path, label: str, command: str) -> list[Figure]:
    s = json.loads((out / "report.json").read_text())["summary"]
    sip, browser = s["sip_latency_ms"], s["browser_latency_ms"]
    return [Figure(label, "latency p50 / p95, phone line", ms_pair(sip["p50"], sip["p95"]), command),
            Figure(label, "latency p50 / p95, browser phone", ms_pair(browser["p50"], browser["p95"]), command, True),
            Figure(label, "answered right, line / browser",
                   f"{s['sip_correct']} / {s['browser_correct']} of {s['questions']}", command)]


def load_figures(out: Path, label: str, command: str) -> list[Figure]:
    figures = []
    for level in json.loads((out / "load.json").read_text())["levels"]:
        name = f"{level['calls']} callers ({level['pattern']})"
        figures += [Figure(label, f"{name}: latency p50 / p95",
                           ms_pair(level["latency_p50_ms"], level["latency_p95_ms"]), command,
                           level["pattern"] == "staggered"),
                    Figure(label, f"{name}: agent CPU, heard right, calls failed",
                           f"{level['agent_cpu_share'] * 100:.0f}%, {pct(level['heard_right'])}, "
                           f"{level['failed_calls']}", command)]
    return figures


def silence_figures(out: Path, label: str, command: str) -> list[Figure]:
    levels = json.loads((out / "listening.json").read_text())
    idle = next(level for level in levels if level["calls"] == 0)
    busiest = max(levels, key=lambda level: level["calls"])
    return [Figure(label, "agent alone, cores", f"{idle['cores']:.3f}", command),
            Figure(label, f"per silent call ({busiest['calls']} at once), cores", f"{busiest['cores_per_call']:.3f}",
                   command, True)]


BENCHMARKS = (
    Benchmark("bundled cases", "replay", BUNDLED, (*BUNDLED, "--limit", "10"), replay_figures),
    Benchmark("paraphrases", "replay", ("--kb", "kb", "--cases", "eval/paraphrases.jsonl", "--caller-repeats"),
              None, replay_figures, headline=(RIGHT, WRONG)),
    Benchmark("hesitations", "replay", PAUSES, (*PAUSES, "--limit", "4"), replay_figures, headline=()),
    Benchmark("babble at 15 dB", "replay", (*BUNDLED, "--snr", "15", "--noise", "babble"), None, replay_figures,
              headline=(RIGHT, WRONG)),
    Benchmark("browser phone", "browser_phone", ("--kb", "kb", "--cases", "eval/cases.jsonl", "--limit", "8"), None,
              browser_figures),
    Benchmark("concurrent callers", "load", ("--calls", "8,16", "--pattern", "together,staggered"),
              ("--calls", "8", "--pattern", "staggered", "--questions", "2"), load_figures),
    Benchmark("silent calls", "listening_cost", ("--calls", "0,1,4"), ("--calls", "0,4", "--seconds", "20"),
              silence_figures),
)


def run(benchmark: Benchmark, quick: bool, out: Path) -> tuple[str, float, int]:
    """Runs it into `out`; returns the command shown (without --out), the minutes it took and its exit status."""
    args = benchmark.quick if quick else benchmark.args
    out.mkdir(parents=True, exist_ok=True)
    extra = ["--json", str(out / "listening.json")] if benchmark.runner == "listening_cost" else ["--out", str(out)]
    started = time.monotonic()
    with open(out / "run.log", "w") as log:
        done = subprocess.run([sys.executable, "-m", f"eval.{benchmark.runner}", *args, *extra], cwd=REPO,
                              stdout=log, stderr=subprocess.STDOUT)
    return f"python -m eval.{benchmark.runner} {' '.join(args)}", (time.monotonic() - started) / 60, done.returncode


def read_figures(benchmark: Benchmark, out: Path, command: str, status: int) -> list[Figure]:
    """Its figures from its report; a run that failed, or left no report, is a row that says so (the page says
    so; the other benchmarks still run)."""
    try:
        if status:
            raise RuntimeError(f"exit status {status}")
        figures = benchmark.figures(out, benchmark.name, command)
    except (RuntimeError, OSError, KeyError, ValueError, StopIteration) as exc:
        return [Figure(benchmark.name, "the run", f"failed ({exc}; {out}/run.log)", command)]
    return [f if benchmark.headline is None else replace(f, headline=f.name in benchmark.headline) for f in figures]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a subset in about a quarter of an hour")
    parser.add_argument("--only", help="comma-separated benchmark names (default: all)")
    parser.add_argument("--out", type=Path, default=Path("var/eval/bench"))
    parser.add_argument("--results", type=Path, default=REPO / "docs" / "results.md")
    parser.add_argument("--readme", type=Path, default=REPO / "README.md", help="'' to leave the README alone")
    args = parser.parse_args(argv)
    chosen = [b for b in BENCHMARKS if (not args.quick or b.quick is not None)
              and (not args.only or b.name in args.only.split(","))]
    if not chosen:
        parser.error(f"no benchmark named {args.only!r} (known: {', '.join(b.name for b in BENCHMARKS)})")
    stamp = this_machine(REPO, datetime.date.today().isoformat())
    figures: list[Figure] = []
    for benchmark in chosen:
        out = args.out / benchmark.name.replace(" ", "-")
        print(f"{benchmark.name}: eval.{benchmark.runner} …", flush=True)
        command, minutes, status = run(benchmark, args.quick, out)
        figures += read_figures(benchmark, out, command, status)
        print(f"{benchmark.name}: {'failed' if status else 'done'} in {minutes:.1f} min", flush=True)
    images = write_plots(args.out, args.results.parent / "results")
    page = results_page(stamp, figures, [(c, str(p.relative_to(args.results.parent))) for c, p in images],
                        args.quick)
    args.results.write_text(page)
    if str(args.readme):
        args.readme.write_text(with_readme_block(args.readme.read_text(), readme_block(stamp, figures, args.quick)))
    print(page)
    return 0


def write_plots(out: Path, images: Path) -> list[tuple[str, Path]]:
    """The latency distribution of the bundled cases, and latency and CPU against callers, where they ran."""
    images.mkdir(parents=True, exist_ok=True)
    written = []
    replay = out / "bundled-cases" / "report.json"
    if replay.is_file():
        cases = json.loads(replay.read_text())["cases"]
        plot_latency([c["latency_ms"] for c in cases if c.get("latency_ms") is not None], images / "latency.png")
        written.append(("Latency of the bundled cases on real calls", images / "latency.png"))
    load = out / "concurrent-callers" / "load.json"
    if load.is_file():
        levels = [lv for lv in json.loads(load.read_text())["levels"] if lv["pattern"] == "staggered"]
        plot_load(levels, images / "load.png")
        written.append(("Latency and agent CPU against concurrent callers (staggered)", images / "load.png"))
    return written


if __name__ == "__main__":
    sys.exit(main())
