"""Retrieval and answer quality on a KB and a cases file, text only (no audio).

    python -m eval.kb_answers --kb kb --cases eval/cases.jsonl [--json OUT] [--calibrate] [--llm URL]

For each case: recall@1 and @3 (a returned passage contains an expected string),
whether the extractive answer is correct, abstention accuracy on out-of-KB
questions, and the query latency (embedding + retrieval + answer selection). With --llm, beside each
extractive answer: what the agent would speak with that OpenAI-compatible server phrasing it (the LLM's checked
sentences, or the KB's when they fail or miss the deadline), whether that is right, who spoke, why the LLM was
overruled, its time to a first checked sentence, and any spoken fact missing from the whole KB (an independent
count: the call path checks against the retrieved passages only).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from agent.knowledge.base import KnowledgeBase, Reply
from agent.knowledge.grounding import unsupported
from agent.knowledge.memory import CallMemory
from eval.kit.cases import Case, load_cases
from eval.kit.knowledge import build_knowledge
from eval.kit.llm_phrasing import LlmPhrasing
from eval.kit.scoring import contains_any


def with_end_mark(question: str, end_mark: str | None) -> str:
    """The question ended with `end_mark` ('' for none) instead of its own, as a recogniser might write it;
    unchanged when `end_mark` is None."""
    return question if end_mark is None else question.rstrip(" .?!") + end_mark


def evaluate(knowledge: KnowledgeBase, cases: list[Case], end_mark: str | None = None,
             phrase: Callable[[Reply, CallMemory], dict] | None = None) -> dict:
    """Run every case in order (one memory per call) and score it; `end_mark`: see with_end_mark; `phrase`: the
    LLM's phrasing of each reply (see eval.kit.llm_phrasing)."""
    memories: dict[str, CallMemory] = {}
    rows = []
    kb_text = "\n".join(c.chunk.text for c in knowledge.index.snapshot.chunks)
    for case in cases:
        memory = memories.setdefault(case.call, CallMemory())
        question = with_end_mark(case.say or "", end_mark)
        started = time.perf_counter()
        reply = knowledge.draft(memory, question)
        elapsed_ms = (time.perf_counter() - started) * 1000
        phrased = phrase(reply, memory) if phrase is not None else None
        knowledge.commit(memory, reply)
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
        if phrased is not None:
            row.update(phrased)
            row["llm_correct"] = reply.abstained if case.expect_abstain else \
                (not reply.abstained and contains_any(phrased["spoken"], case.expect_any))
            row["unsupported"] = unsupported(phrased["spoken"], kb_text)
        rows.append(row)
    summary = summarize(rows)
    if phrase is not None:
        summary["llm"] = llm_summary(rows)
    return {"summary": summary, "cases": rows}


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


def llm_summary(rows: list[dict]) -> dict:
    """The phrased answers beside the extractive ones: accuracy, who spoke, why the LLM was overruled, its time to
    a first checked sentence, and spoken facts missing from the KB."""
    answerable = [r for r in rows if "recall_at_1" in r]
    firsts = [r["llm_first_sentence_ms"] for r in rows if r.get("llm_first_sentence_ms") is not None]
    reasons: dict[str, int] = {}
    for r in rows:
        if r["answerer"] != "llm" and r.get("llm_reason"):
            why = r["llm_reason"].split(":")[0]
            reasons[why] = reasons.get(why, 0) + 1
    answerers: dict[str, int] = {}
    for r in rows:
        answerers[r["answerer"]] = answerers.get(r["answerer"], 0) + 1
    return {"answer_accuracy": round(sum(r["llm_correct"] for r in answerable) / len(answerable), 4)
            if answerable else None,
            "extractive_accuracy": round(sum(r["correct"] for r in answerable) / len(answerable), 4)
            if answerable else None,
            "answerers": answerers, "overruled": reasons,
            "unsupported_facts_spoken": sum(len(r["unsupported"]) for r in rows),
            "first_sentence_p50_ms": round(float(np.percentile(firsts, 50)), 1) if firsts else None,
            "first_sentence_p95_ms": round(float(np.percentile(firsts, 95)), 1) if firsts else None,
            "longest_wait_ms": round(max(r["waited_ms"] for r in rows), 1) if rows else None}


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
        if "answerer" in row:
            mark = "ok " if row["llm_correct"] else "BAD"
            print(f"    {mark} {row['answerer']:12} {row['llm_reason'][:40]:40} {row['spoken'][:70]}")
    print(json.dumps(result["summary"], indent=2))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.kb_answers", description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, required=True, help="KB directory (Markdown and text files)")
    parser.add_argument("--cases", type=Path, required=True, help="cases file (JSON lines)")
    parser.add_argument("--json", type=Path, help="write the full result here")
    parser.add_argument("--calibrate", action="store_true", help="also print the best abstention threshold")
    parser.add_argument("--llm", metavar="URL", help="also phrase every answer with this OpenAI-compatible server "
                        "(e.g. http://127.0.0.1:8089/v1 from python -m eval.kit.llm_server) and score it beside")
    parser.add_argument("--llm-deadline-ms", type=int, default=1200, help="the first checked sentence's deadline "
                        "from the moment the reply is known (the agent's AGENT_LLM_FIRST_SENTENCE_MS)")
    parser.add_argument("--end-mark", choices=[".", "?", "none"], help="end every question with this mark "
                        "(none: no mark) instead of its own, as Whisper writes them")
    args = parser.parse_args(argv)
    cases = load_cases(args.cases)
    env = dict(os.environ)
    env.setdefault("AGENT_MODELS_DIR", str(Path(env.get("AGENT_DATA_DIR", "var")) / "models"))
    with tempfile.TemporaryDirectory(prefix="eval-retrieval-") as data_dir:
        end_mark = {"none": ""}.get(args.end_mark, args.end_mark)
        knowledge = build_knowledge(args.kb, Path(data_dir), env)
        if args.llm:
            with LlmPhrasing(args.llm, args.llm_deadline_ms / 1000) as phrase:
                result = evaluate(knowledge, cases, end_mark, phrase)
        else:
            result = evaluate(knowledge, cases, end_mark)
    print_table(result)
    if args.calibrate:
        threshold, balanced = calibrate(result["cases"])
        print(f"best abstention threshold {threshold:.3f} (balanced accuracy {balanced:.3f})")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
