"""The benchmark page: what machine and commit the figures came from, one table of them with the command behind
each, the plots, and the README's short form of the same table. Pure: figures in, Markdown and images out."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from eval.kit.plots import pyplot, save
from eval.kit.report import percentile

VECTOR_FLAGS = {"sse4_2": "SSE4.2", "avx": "AVX", "avx2": "AVX2", "fma": "FMA", "avx512f": "AVX-512F",
                "avx512_vnni": "AVX-512 VNNI", "avx512_bf16": "AVX-512 BF16", "amx_tile": "AMX"}
"""/proc/cpuinfo's flags for the vector extensions CTranslate2 and onnxruntime use, and their names."""
README_START, README_END = "<!-- bench:start -->", "<!-- bench:end -->"


@dataclass(frozen=True)
class Figure:
    benchmark: str
    name: str
    value: str
    command: str
    headline: bool = False
    """Also in the README's short form."""


@dataclass(frozen=True)
class Stamp:
    cpu: str
    vectors: str
    cores: int
    memory_gib: int
    date: str
    commit: str

    def line(self) -> str:
        return (f"{self.cpu} ({self.vectors}), {self.cores} cores, {self.memory_gib} GiB, {self.date}, "
                f"commit {self.commit}")


def machine_stamp(cpuinfo: str, meminfo: str, cores: int, date: str, commit: str) -> Stamp:
    """The CPU's model and vector extensions from /proc/cpuinfo's text, memory from /proc/meminfo's."""
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    flags = re.search(r"^flags\s*:\s*(.+)$", cpuinfo, re.M)
    have = set(flags.group(1).split()) if flags else set()
    vectors = ", ".join(name for flag, name in VECTOR_FLAGS.items() if flag in have) or "no vector extensions"
    total = re.search(r"^MemTotal:\s*(\d+) kB", meminfo, re.M)
    gib = round(int(total.group(1)) / 2**20) if total else 0
    return Stamp(model.group(1).strip() if model else "unknown CPU", vectors, cores, gib, date, commit)


def this_machine(repo: Path, date: str) -> Stamp:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo,
                             capture_output=True, text=True).stdout.strip()
    return machine_stamp(Path("/proc/cpuinfo").read_text(), Path("/proc/meminfo").read_text(),
                         len(os.sched_getaffinity(0)), date, commit + ("+changes" if changed else ""))


def results_page(stamp: Stamp, figures: list[Figure], images: list[tuple[str, str]], quick: bool) -> str:
    """docs/results.md: the stamp, the table, the plots (`images`: caption, path relative to the page)."""
    lines = ["# Results", "",
             f"One run of `python -m eval.bench{' --quick' if quick else ''}` on **{stamp.line()}**. It writes "
             "this page; rerun it to replace it. Machines of this class differ (the same Whisper decode can take "
             "twice as long on another), so compare ratios and percentiles from one run on one machine.", "",
             "| benchmark | figure | value | command |", "|---|---|---:|---|"]
    lines += [f"| {f.benchmark} | {f.name} | {f.value} | `{f.command}` |" for f in figures]
    for caption, path in images:
        lines += ["", f"![{caption}]({path})"]
    lines += ["", "What each runner measures and how: `python -m eval.NAME --help`, and the docs of each area "
              "(hearing, load, calls, ways-in)."]
    return "\n".join(lines) + "\n"


def readme_block(stamp: Stamp, figures: list[Figure], quick: bool = False) -> str:
    """The README's "Where it stands": the headline figures of the same run."""
    rows = [f"| {f.benchmark}: {f.name} | {f.value} |" for f in figures if f.headline]
    command = "eval.bench --quick" if quick else "eval.bench"
    return "\n".join([README_START, f"One `{command}` run on {stamp.line()} ([all figures](docs/results.md)):", "",
                      "| | |", "|---|---:|", *rows, README_END])


def with_readme_block(readme: str, block: str) -> str:
    """`readme` with its bench block replaced; a README without the markers is refused, never rewritten blind."""
    start, end = readme.find(README_START), readme.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"README has no {README_START} … {README_END} block")
    return readme[:start] + block + readme[end + len(README_END):]


def plot_latency(latencies_ms: list[float], path: Path) -> None:
    fig, ax = pyplot().subplots(figsize=(7, 3.5))
    ax.hist(latencies_ms, bins=min(25, max(5, len(latencies_ms) // 2)), color="#3b7dd8")
    for q, style in ((50, "--"), (95, ":")):
        ax.axvline(percentile(latencies_ms, q), color="black", linestyle=style, label=f"p{q}")
    ax.set_xlabel("end of question → first answer audio on the wire (ms)")
    ax.set_ylabel("questions")
    ax.legend()
    save(fig, path)


def plot_load(levels: list[dict], path: Path) -> None:
    """Latency p50 / p95 and the agent's share of the CPU against concurrent callers (eval.load's levels)."""
    fig, ax = pyplot().subplots(figsize=(7, 3.5))
    calls = [level["calls"] for level in levels]
    for key, style in (("latency_p50_ms", "--"), ("latency_p95_ms", "-")):
        ax.plot(calls, [level[key] for level in levels], style, marker="o", label=key.split("_")[1])
    ax.set_xlabel("concurrent callers")
    ax.set_ylabel("latency on the wire (ms)")
    cpu = ax.twinx()
    cpu.plot(calls, [level["agent_cpu_share"] * 100 for level in levels], ":", marker="s", color="grey",
             label="CPU")
    cpu.set_ylabel("agent CPU (% of all cores)")
    cpu.set_ylim(0, 100)
    ax.legend(loc="upper left", fontsize="small")
    cpu.legend(loc="lower right", fontsize="small")
    save(fig, path)
