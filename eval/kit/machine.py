"""What a process costs this machine, read from /proc: CPU by thread and in all, resident memory, the CPU's name."""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path


def stat_cpu_seconds(stat: Path) -> float:
    """CPU seconds (user + system) from a /proc stat file (a process's or one thread's)."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU-seconds (user + system) of each thread of `pid`, summed by thread name."""
    by_name: dict[str, float] = defaultdict(float)
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            cpu, name = stat_cpu_seconds(task / "stat"), (task / "comm").read_text().strip()
        except FileNotFoundError:  # the thread ended meanwhile
            continue
        by_name[name] += cpu
    return dict(by_name)


def process_usage(pid: int) -> tuple[float, float]:
    """CPU seconds (user + system) and resident memory in MiB of a process, from /proc."""
    cpu = stat_cpu_seconds(Path(f"/proc/{pid}/stat"))
    rss_pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return cpu, rss_pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def spent_by_thread(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """CPU-seconds each thread name spent between two readings of thread_cpu (a thread started meanwhile counts
    from zero), largest first."""
    spent = {name: after[name] - before.get(name, 0.0) for name in after}
    return dict(sorted(spent.items(), key=lambda kv: -kv[1]))


def per_turn_by_thread(before: dict[str, float], after: dict[str, float], turns: int) -> dict[str, float]:
    """CPU-seconds per answered turn of each thread name, largest first: "asr", "embedder", "tts" (the models'
    own threads, see agent/threads.py); "model" (the model workers' Python around them); "listen" (VAD and the
    echo gate); "clock", "media" (pjsua's media); "sip"; "python" (the event loop and the rest)."""
    return {name: round(cpu / max(turns, 1), 3) for name, cpu in spent_by_thread(before, after).items()
            if cpu >= 0.0005 * max(turns, 1)}


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} cores"
    return f"{os.cpu_count()} cores"
