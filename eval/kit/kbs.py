"""The many-KB benchmark's knowledge bases and their cases: the authored ones in eval/kbs, the bundled KB, and FAQs
Debian packages ship (a FAQ's own questions, with another FAQ's as out-of-KB ones)."""

from __future__ import annotations

import tempfile
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from eval.kit.agent_process import REPO
from eval.kit.cases import Case, load_cases
from eval.kit.faq_text import DEBIAN_FAQ, XZ_FAQ, Entry, as_markdown, parse_debian_faq, parse_qa_faq, read_installed

KBS = REPO / "eval" / "kbs"

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
    if name.startswith("bundled:"):
        yield REPO / "kb", load_cases(REPO / "eval" / name.removeprefix("bundled:"))
        return
    if not name.startswith("faq:"):
        yield KBS / name / "kb", load_cases(KBS / name / "cases.jsonl")
        return
    faq = name.removeprefix("faq:")
    title, entries = faq_entries(faq)
    _, others = faq_entries("xz-utils" if faq == "debian-faq" else "debian-faq")
    with tempfile.TemporaryDirectory(prefix="eval-faq-") as folder:
        (Path(folder) / f"{faq}.md").write_text(as_markdown(title, entries))
        yield Path(folder), faq_cases(faq, entries, others)
