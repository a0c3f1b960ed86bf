"""Retrieval and answer quality on a KB and a cases file, text only (no audio).

    python -m eval.retrieval --kb kb --cases eval/cases.jsonl [--json OUT] [--calibrate]

For each case: recall@1 and @3 (a returned passage contains an expected string),
whether the extractive answer is correct, abstention accuracy on out-of-KB
questions, and the query latency (embedding + retrieval + answer selection).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from agent import settings as settings_module
from agent.knowledge.base import KnowledgeBase, open_knowledge_alone
from agent.knowledge.memory import CallMemory
from eval.cases import Case, load_cases
from eval.scoring import normalize


def contains_any(text: str, expected: tuple[str, ...]) -> bool:
    """An expected string appears in the text, after normalising case, punctuation and numbers."""
    haystack = f" {normalize(text)} "
    return any(f" {normalize(e)} " in haystack for e in expected)


def build_knowledge(kb_dir: Path, data_dir: Path, env: dict[str, str]) -> KnowledgeBase:
    """An indexed KnowledgeBase for kb_dir, with the embedder the settings choose."""
    settings = settings_module.parse(["--kb-dir", str(kb_dir), "--data-dir", str(data_dir)], env)
    knowledge = open_knowledge_alone(settings)
    report = knowledge.index.refresh()
    if not report.ok:
        raise SystemExit(f"indexing {kb_dir} failed: {report.error}")
    return knowledge


def with_end_mark(question: str, end_mark: str | None) -> str:
    """The question ended with `end_mark` ('' for none) instead of its own, as a recogniser might write it;
    unchanged when `end_mark` is None."""
    return question if end_mark is None else question.rstrip(" .?!") + end_mark


def evaluate(knowledge: KnowledgeBase, cases: list[Case], end_mark: str | None = None) -> dict:
    """Run every case in order (one memory per call) and score it; `end_mark`: see with_end_mark."""
    memories: dict[str, CallMemory] = {}
    rows = []
    for case in cases:
        memory = memories.setdefault(case.call, CallMemory())
        question = with_end_mark(case.say or "", end_mark)
        started = time.perf_counter()
        reply = knowledge.compose(memory, question)
        elapsed_ms = (time.perf_counter() - started) * 1000
        row = {"id": case.id, "call": case.call, "question": question, "answer": reply.text,
               "abstained": reply.abstained, "evidence": round(reply.evidence, 4), "query_ms": round(elapsed_ms, 2),
               "sources": [s.path for s in reply.sources]}
        if case.expect_abstain:
            row["correct"] = reply.abstained
        else:
            passages = [p.text for p in reply.passages]
            row["recall_at_1"] = bool(passages) and contains_any(passages[0], case.expect_any)
            row["recall_at_3"] = any(contains_any(p, case.expect_any) for p in passages[:3])
            row["correct"] = not reply.abstained and contains_any(reply.text, case.expect_any)
        rows.append(row)
    return {"summary": summarize(rows), "cases": rows}


def summarize(rows: list[dict]) -> dict:
    answerable = [r for r in rows if "recall_at_1" in r]
    abstain = [r for r in rows if "recall_at_1" not in r]
    latencies = np.array([r["query_ms"] for r in rows]) if rows else np.zeros(1)

    def share(items: list[dict], key: str) -> float | None:
        return round(sum(bool(r[key]) for r in items) / len(items), 4) if items else None

    return {"n": len(rows), "answerable": len(answerable), "out_of_kb": len(abstain),
            "recall_at_1": share(answerable, "recall_at_1"), "recall_at_3": share(answerable, "recall_at_3"),
            "answer_accuracy": share(answerable, "correct"), "abstain_accuracy": share(abstain, "correct"),
            "query_p50_ms": round(float(np.percentile(latencies, 50)), 2),
            "query_p95_ms": round(float(np.percentile(latencies, 95)), 2)}


def calibrate(rows: list[dict]) -> tuple[float, float]:
    """The evidence threshold that best separates right answers from out-of-KB questions, and its accuracy."""
    answerable = [r["evidence"] for r in rows if "recall_at_1" in r and r["correct"]]
    out_of_kb = [r["evidence"] for r in rows if "recall_at_1" not in r]
    best = (0.0, 0.0)
    for threshold in sorted(set(answerable + out_of_kb)) + [1.0]:
        kept = sum(e >= threshold for e in answerable) / max(len(answerable), 1)
        refused = sum(e < threshold for e in out_of_kb) / max(len(out_of_kb), 1)
        if (kept + refused) / 2 > best[1]:
            best = (threshold, (kept + refused) / 2)
    return best


def print_table(result: dict) -> None:
    for row in result["cases"]:
        mark = "ok " if row["correct"] else "BAD"
        recall = "" if "recall_at_1" not in row else f"r@1={int(row['recall_at_1'])} r@3={int(row['recall_at_3'])}"
        print(f"{mark} {row['id'][:30]:30} {recall:9} ev={row['evidence']:.2f} {row['query_ms']:6.1f}ms  "
              f"{row['answer'][:70]}")
    print(json.dumps(result["summary"], indent=2))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.retrieval", description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, required=True, help="KB directory (Markdown and text files)")
    parser.add_argument("--cases", type=Path, required=True, help="cases file (JSON lines)")
    parser.add_argument("--json", type=Path, help="write the full result here")
    parser.add_argument("--calibrate", action="store_true", help="also print the best abstention threshold")
    parser.add_argument("--end-mark", choices=[".", "?", "none"], help="end every question with this mark "
                        "(none: no mark) instead of its own, as Whisper writes them")
    args = parser.parse_args(argv)
    cases = load_cases(args.cases)
    env = dict(os.environ)
    env.setdefault("AGENT_MODELS_DIR", str(Path(env.get("AGENT_DATA_DIR", "var")) / "models"))
    with tempfile.TemporaryDirectory(prefix="eval-retrieval-") as data_dir:
        end_mark = {"none": ""}.get(args.end_mark, args.end_mark)
        result = evaluate(build_knowledge(args.kb, Path(data_dir), env), cases, end_mark)
    print_table(result)
    if args.calibrate:
        threshold, balanced = calibrate(result["cases"])
        print(f"best abstention threshold {threshold:.3f} (balanced accuracy {balanced:.3f})")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
