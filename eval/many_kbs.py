"""Understanding on many KBs nobody tuned for: small KBs of different trades and writing styles (eval/kbs: FAQ
pages, paragraphs with several facts a sentence, lists, tables, long sections) and FAQs Debian packages ship,
each asked spoken-style questions of every kind a caller asks, through the agent's own decisions.

    python -m eval.many_kbs [--half dev|test|bundled|all] [--kb NAME ...] [--json OUT] [--show misses|all|none]
        [--calls N [--voices V,...] [--snr DB]]

The text path: every question heard word for word, then read, understood and answered, confirmed or asked
again by the agent's call core, the caller confirming or repeating as the person who asked would
(eval.kit.dialogue). Reported per KB, per half and per kind of question: answered right (by the end, and at once),
wrong answers, and out-of-KB questions declined. The halves are in eval/kbs/halves.toml: tuning looks at the dev
half only; the test half is reported. With --calls, a sample of each authored KB's questions is also asked on
real SIP calls (eval.replay), in voices from three synthesizers, optionally in babble: resolved, wrong answers and
out-of-KB questions declined, as the caller heard them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from eval.kit.cases import Case, right_answer
from eval.kit.diagnosis import wrong_answer
from eval.kit.dialogue import Calls, ask, perfectly, verdict
from eval.kit.kbs import halves, kb_and_cases
from eval.kit.knowledge import build_knowledge
from eval.kit.report import percentile
from eval.kit.voices import THREE_ENGINES

REPO = Path(__file__).resolve().parents[1]


def run_kb(name: str, scratch: Path) -> list[dict]:
    env = dict(os.environ)
    env.setdefault("AGENT_MODELS_DIR", str(Path(env.get("AGENT_DATA_DIR", "var")) / "models"))
    with kb_and_cases(name) as (kb, cases):
        knowledge = build_knowledge(kb, scratch / name.replace(":", "-"), env)
        calls = Calls(knowledge)
        rows = []
        for case in cases:
            exchanges, answer = ask(calls, case, perfectly)
            rows.append({"kb": name, "id": case.id, "kind": case.kind, "said": case.say,
                         "outcomes": [e["outcome"] for e in exchanges], "evidence": exchanges[0]["evidence"],
                         "topics": [e["topic"] for e in exchanges if e["topic"]],
                         **verdict(case, exchanges, answer)})
        return rows


def sample_calls(cases: list[Case], calls: int) -> list[Case]:
    """`calls` call groups spread evenly over the cases file (its out-of-KB calls come last), every case of each."""
    groups = list(dict.fromkeys(c.call for c in cases))
    if calls >= len(groups):
        return list(cases)
    chosen = {groups[round(n * (len(groups) - 1) / max(1, calls - 1))] for n in range(calls)}
    return [c for c in cases if c.call in chosen]


def run_calls(name: str, calls: int, voices: str, snr: float | None, out: Path) -> list[dict]:
    """A sample of the KB's cases asked on real calls (eval.replay, a caller who repeats and confirms), scored from
    what the caller heard; one row a case, as eval.replay reports it. FAQs are left out: their answers are judged by
    the section they come from, which a caller cannot hear."""
    if name.startswith("faq:"):
        return []
    with kb_and_cases(name) as (kb, cases):
        sample = sample_calls(cases, calls)
        folder = out / name.replace(":", "-")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "cases.jsonl").write_text("".join(json.dumps(
            {"id": c.id, "call": c.call, "say": c.say, **({"expect_abstain": True} if c.expect_abstain else
                                                         {"expect_any": list(c.expect_any)})}) + "\n" for c in sample))
        command = [sys.executable, "-m", "eval.replay", "--kb", str(kb), "--cases", str(folder / "cases.jsonl"),
                   "--caller-repeats", "--voices", voices, "--out", str(folder / "replay")]
        subprocess.run(command + (["--snr", str(snr)] if snr is not None else []), cwd=REPO, check=True,
                       stdout=subprocess.DEVNULL)
        report = json.loads((folder / "replay" / "report.json").read_text())
    kinds = {c.id: c.kind for c in sample}
    by_id = {c.id: c for c in sample}
    return [{**row, "kb": name, "kind": kinds.get(row["id"], ""),
             "agent_correct": _agent_right(by_id[row["id"]], row) if row["id"] in by_id else None}
            for row in report["cases"]]


def _agent_right(case: Case, row: dict) -> bool | None:
    """Whether the agent's own record of its last answer is right (what it said, before Piper, the line and the
    caller's ears): None when the record has none."""
    answer = row.get("agent_answer")
    if answer is None:
        return None
    declined = not answer or "don't have information" in answer
    return declined if case.expect_abstain else (not declined and right_answer(case, answer, []))


def summarize_calls(rows: list[dict]) -> dict:
    """Resolved (answered right by the end), wrong answers, out-of-KB questions declined, on real calls."""
    scored = [r for r in rows if r.get("correct") is not None]
    answerable = [r for r in scored if not r["expect_abstain"]]
    out_of_kb = [r for r in scored if r["expect_abstain"]]
    wrong = sum(wrong_answer(r) for r in scored)

    def share(items: list[dict]) -> float | None:
        return round(sum(r["correct"] for r in items) / len(items), 4) if items else None

    recorded = [r for r in answerable if r.get("agent_correct") is not None]
    return {"n": len(rows), "errors": sum("error" in r for r in rows), "resolved": share(answerable),
            "out_of_kb_declined": share(out_of_kb), "wrong_answers": wrong,
            "wrong_share": round(wrong / len(scored), 4) if scored else None,
            "resolved_by_agent_record": round(sum(r["agent_correct"] for r in recorded) / len(recorded), 4)
            if recorded else None}


def summarize(rows: list[dict]) -> dict:
    answerable = [r for r in rows if not r["out_of_kb"]]
    out_of_kb = [r for r in rows if r["out_of_kb"]]

    def share(items: list[dict], key: str) -> float | None:
        return round(sum(r[key] for r in items) / len(items), 4) if items else None

    # How long a right answer is to listen to: one that reads out a whole table or list is right, and a poor answer.
    words = [len(r["answer"].split()) for r in answerable if r["correct"]]
    return {"n": len(rows), "answerable": len(answerable), "out_of_kb": len(out_of_kb),
            "answered_right": share(answerable, "correct"), "right_first_try": share(answerable, "first_try"),
            "out_of_kb_declined": share(out_of_kb, "correct"), "all_right": share(rows, "correct"),
            "wrong_answers": sum(r["wrong_answer"] for r in rows),
            "right_answer_words_p50": percentile(words, 50), "right_answer_words_p90": percentile(words, 90)}


def report(rows: list[dict], names: list[str]) -> dict:
    kinds = sorted({r["kind"] for r in rows if r["kind"]})
    return {"all": summarize(rows), "kbs": {n: summarize([r for r in rows if r["kb"] == n]) for n in names},
            "kinds": {k: summarize([r for r in rows if r["kind"] == k]) for k in kinds}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.many_kbs", description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=("dev", "test", "bundled", "all"), default="dev",
                        help="bundled: the shipped kb/ with its cases and paraphrases, the agent's first tuning set")
    parser.add_argument("--kb", action="append", help="only this KB (repeatable), whichever half it is in")
    parser.add_argument("--calls", type=int, metavar="N", help="also place real calls: N call groups of each authored "
                        "KB (eval.replay, a caller who repeats and confirms)")
    parser.add_argument("--voices", default=",".join(THREE_ENGINES), help="the callers' voices (eval.kit.voices)")
    parser.add_argument("--snr", type=float, help="with --calls: babble mixed into the callers' speech at this SNR")
    parser.add_argument("--out", type=Path, default=Path("var/eval/many-kbs"), help="with --calls: where the calls go")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--show", choices=("misses", "all", "none"), default="misses",
                        help="print each case that did not end right (misses), every case, or none")
    args = parser.parse_args(argv)
    split = halves()
    names = args.kb or (split["dev"] + split["test"] + split["bundled"] if args.half == "all" else split[args.half])
    rows = []
    with tempfile.TemporaryDirectory(prefix="eval-many-kbs-") as scratch:
        for name in names:
            rows += run_kb(name, Path(scratch))
    for row in rows:
        if args.show == "all" or (args.show == "misses" and not row["correct"]):
            mark = "ok " if row["correct"] else ("BAD" if row["wrong_answer"] else "-- ")
            print(f"{mark} {row['id'][:30]:30} {row['kind']:9} ev={row['evidence'] or 0:.2f} {row['said'][:60]!r} "
                  f"[{' / '.join(row['outcomes'])}]{' about ' + repr(row['topics']) if row['topics'] else ''} -> "
                  f"{row['answer'][:90]!r}")
    summary = report(rows, names)
    if args.calls:
        called = [row for name in names for row in run_calls(name, args.calls, args.voices, args.snr, args.out)]
        summary["calls"] = {"voices": args.voices, "snr_db": args.snr, "all": summarize_calls(called),
                            "kbs": {n: summarize_calls([r for r in called if r["kb"] == n]) for n in names
                                    if not n.startswith("faq:")}}
        rows += [{**r, "on_a_call": True} for r in called]
        for row in called:
            if not row.get("correct"):
                print(f"call {row['id'][:30]:30} heard {row.get('agent_heard', '')[:50]!r} -> "
                      f"{(row.get('heard') or '')[:80]!r}")
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"summary": summary, "cases": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
