"""Understanding on many KBs nobody tuned for: small KBs of different trades and writing styles (eval/kbs: FAQ
pages, paragraphs with several facts a sentence, lists, tables, long sections) and FAQs Debian packages ship,
each asked spoken-style questions of every kind a caller asks, through the agent's own decisions.

    python -m eval.many_kbs [--half dev|test|all] [--kb NAME ...] [--json OUT] [--show misses|all|none]

The text path: every question heard word for word, then read, understood and answered, confirmed or asked
again by the agent's call core, the caller confirming or repeating as the person who asked would
(eval.dialogue). Reported per KB, per half and per kind of question: answered right (by the end, and at once),
wrong answers, and out-of-KB questions declined. The halves are in eval/kbs/halves.toml: tuning looks at the dev
half only; the test half is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from eval.cases import Case, load_cases
from eval.dialogue import Calls, ask, perfectly, verdict
from eval.faq_text import DEBIAN_FAQ, XZ_FAQ, Entry, as_markdown, parse_debian_faq, parse_qa_faq, read_installed
from eval.retrieval import build_knowledge

KBS = Path(__file__).resolve().parent / "kbs"
FAQ_OUT_OF_KB_EVERY = 5
"""A FAQ asked another FAQ's questions as out-of-KB ones: every 5th of the Debian FAQ's (it has a hundred), all of
the XZ Utils FAQ's."""


def halves(path: Path = KBS / "halves.toml") -> dict[str, list[str]]:
    return tomllib.loads(path.read_text())


def faq_entries(name: str) -> tuple[str, list[Entry]]:
    if name == "debian-faq":
        return "The Debian GNU/Linux FAQ", parse_debian_faq(read_installed(DEBIAN_FAQ))
    if name == "xz-utils":
        return "XZ Utils FAQ", parse_qa_faq(read_installed(XZ_FAQ))
    raise ValueError(f"no FAQ named {name!r} (known: debian-faq, xz-utils)")


def faq_cases(name: str, entries: list[Entry], others: list[Entry]) -> list[Case]:
    """The FAQ's own questions, each answered by its own section, and another FAQ's questions as out-of-KB ones;
    every question its own call."""
    own = [e for e in entries if e.question.endswith("?")]
    foreign = [e for e in others if e.question.endswith("?")]
    if len(foreign) > 40:
        foreign = foreign[::FAQ_OUT_OF_KB_EVERY]
    cases = [Case(f"{name}-{n}", f"{name}-{n}", e.question, None, (), False, expect_heading=e.question,
                  kind="faq") for n, e in enumerate(own, 1)]
    cases += [Case(f"{name}-oos-{n}", f"{name}-oos-{n}", e.question, None, (), True, kind="oos")
              for n, e in enumerate(foreign, 1)]
    return cases


@contextmanager
def kb_and_cases(name: str) -> Iterator[tuple[Path, list[Case]]]:
    """A benchmark KB's folder and its cases (a FAQ's made in a scratch folder from the installed text)."""
    if not name.startswith("faq:"):
        yield KBS / name / "kb", load_cases(KBS / name / "cases.jsonl")
        return
    faq = name.removeprefix("faq:")
    title, entries = faq_entries(faq)
    _, others = faq_entries("xz-utils" if faq == "debian-faq" else "debian-faq")
    with tempfile.TemporaryDirectory(prefix="eval-faq-") as folder:
        (Path(folder) / f"{faq}.md").write_text(as_markdown(title, entries))
        yield Path(folder), faq_cases(faq, entries, others)


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
                         **verdict(case, exchanges, answer)})
        return rows


def summarize(rows: list[dict]) -> dict:
    answerable = [r for r in rows if not r["out_of_kb"]]
    out_of_kb = [r for r in rows if r["out_of_kb"]]

    def share(items: list[dict], key: str) -> float | None:
        return round(sum(r[key] for r in items) / len(items), 4) if items else None

    return {"n": len(rows), "answerable": len(answerable), "out_of_kb": len(out_of_kb),
            "answered_right": share(answerable, "correct"), "right_first_try": share(answerable, "first_try"),
            "out_of_kb_declined": share(out_of_kb, "correct"), "all_right": share(rows, "correct"),
            "wrong_answers": sum(r["wrong_answer"] for r in rows)}


def report(rows: list[dict], names: list[str]) -> dict:
    kinds = sorted({r["kind"] for r in rows if r["kind"]})
    return {"all": summarize(rows), "kbs": {n: summarize([r for r in rows if r["kb"] == n]) for n in names},
            "kinds": {k: summarize([r for r in rows if r["kind"] == k]) for k in kinds}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.many_kbs", description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=("dev", "test", "all"), default="dev")
    parser.add_argument("--kb", action="append", help="only this KB (repeatable), whichever half it is in")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--show", choices=("misses", "all", "none"), default="misses",
                        help="print each case that did not end right (misses), every case, or none")
    args = parser.parse_args(argv)
    split = halves()
    names = args.kb or (split["dev"] + split["test"] if args.half == "all" else split[args.half])
    rows = []
    with tempfile.TemporaryDirectory(prefix="eval-many-kbs-") as scratch:
        for name in names:
            rows += run_kb(name, Path(scratch))
    for row in rows:
        if args.show == "all" or (args.show == "misses" and not row["correct"]):
            mark = "ok " if row["correct"] else ("BAD" if row["wrong_answer"] else "-- ")
            print(f"{mark} {row['id'][:30]:30} {row['kind']:9} ev={row['evidence'] or 0:.2f} {row['said'][:60]!r} "
                  f"[{' / '.join(row['outcomes'])}] -> {row['answer'][:90]!r}")
    summary = report(rows, names)
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"summary": summary, "cases": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
