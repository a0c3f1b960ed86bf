"""Knowledge-base speed on a generated 1,000-chunk KB: query latency and incremental refresh time.

    python -m eval.bench_kb [--chunks 1000] [--queries 200] [--json OUT]

Targets: query p50 <= 20 ms (embedding + hybrid retrieval + answer selection) and a
refresh after one file changed <= 1 s. Reported as percentiles, never asserted in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from agent.knowledge.memory import CallMemory
from eval.kit.knowledge import build_knowledge

ITEMS = "boiler radiator thermostat valve pump heater tank filter meter controller sensor burner".split()
COLOURS = "white silver black grey copper blue green red".split()
TOWNS = "Ashford Bexley Carlow Denby Elston Farley Glenmore Hollis Ingram Jarrow Kelby Linton".split()
SECTIONS_PER_FILE = 20


def section(rng: random.Random, code: str) -> tuple[str, str]:
    """One Markdown section (about 250 characters, one chunk) and the price it states."""
    item, price = rng.choice(ITEMS), f"${rng.randint(20, 3000)}"
    text = (f"## The {item} {code}\n\n"
            f"The {item} model {code} costs {price} and ships within {rng.randint(2, 20)} days. "
            f"It comes in {rng.choice(COLOURS)} or {rng.choice(COLOURS)}, with a {rng.randint(1, 10)}-year warranty. "
            f"Support for {code} runs from {rng.randint(6, 10)} a.m. to {rng.randint(4, 8)} p.m., "
            f"and installers cover {rng.choice(TOWNS)}.\n")
    return text, price


def generate_kb(directory: Path, chunks: int, seed: int = 7) -> dict[str, tuple[str, str]]:
    """Write ceil(chunks / 20) files; return code -> (file name, price) for the questions."""
    rng = random.Random(seed)
    facts = {}
    for file_number in range((chunks + SECTIONS_PER_FILE - 1) // SECTIONS_PER_FILE):
        name = f"catalogue-{file_number:03d}.md"
        parts = [f"# Catalogue part {file_number}\n"]
        for k in range(min(SECTIONS_PER_FILE, chunks - file_number * SECTIONS_PER_FILE)):
            code = f"KX-{file_number:03d}{k:02d}"
            text, price = section(rng, code)
            parts.append(text)
            facts[code] = (name, price)
        (directory / name).write_text("\n".join(parts))
    return facts


def percentile(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.bench_kb", description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--refreshes", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    env = dict(os.environ)
    env.setdefault("AGENT_MODELS_DIR", str(Path(env.get("AGENT_DATA_DIR", "var")).resolve() / "models"))
    with tempfile.TemporaryDirectory(prefix="bench-kb-") as scratch:
        kb_dir, data_dir = Path(scratch) / "kb", Path(scratch) / "data"
        kb_dir.mkdir()
        facts = generate_kb(kb_dir, args.chunks)
        started = time.perf_counter()
        knowledge = build_knowledge(kb_dir, data_dir, env)
        build_s = time.perf_counter() - started
        chunk_count = len(knowledge.index.snapshot.chunks)

        rng = random.Random(11)
        codes = rng.sample(sorted(facts), min(args.queries, len(facts)))
        latencies, retrieval, hits = [], [], 0
        for code in codes:
            started = time.perf_counter()
            reply = knowledge.compose(CallMemory(), f"How much does the {code} cost?")
            latencies.append((time.perf_counter() - started) * 1000)
            retrieval.append(reply.retrieval_ms)
            hits += any(code in p.text for p in reply.passages[:3])

        refresh_s = []
        for n in range(args.refreshes):
            target = kb_dir / facts[codes[n % len(codes)]][0]
            target.write_text(target.read_text() + f"\n## Note {n}\n\nPrices change on the first of the month.\n")
            report = knowledge.index.refresh()
            assert report.changed == 1 and report.ok, report
            refresh_s.append(report.seconds)

    result = {"chunks": chunk_count, "files": len({f for f, _ in facts.values()}), "initial_build_s": round(build_s, 2),
              "queries": len(latencies), "query_p50_ms": percentile(latencies, 50),
              "query_p95_ms": percentile(latencies, 95), "retrieval_p50_ms": percentile(retrieval, 50),
              "recall_at_3": round(hits / len(codes), 4),
              "refresh_one_file_median_s": round(statistics.median(refresh_s), 3),
              "refresh_one_file_max_s": round(max(refresh_s), 3), "cpu_count": os.cpu_count()}
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
