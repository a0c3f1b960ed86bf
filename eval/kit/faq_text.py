"""Real FAQ text nobody here wrote, as a KB and its own questions: FAQs that Debian packages ship, read from the
installed documentation (never copied into this repository).

Two layouts are read: the Debian FAQ's plain-text rendering (`debian-faq`: "Chapter N. Title", then numbered
questions "N.M. Question?" at the margin with their answers indented below) and a Q:/A: file (`xz-utils`'
faq.txt). Each becomes Markdown with one section per question, so a question's own answer is the section under
its heading. Pure, apart from `read_installed`.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from pathlib import Path

DEBIAN_FAQ = Path("/usr/share/doc/debian/FAQ/debian-faq.en.txt.gz")
XZ_FAQ = Path("/usr/share/doc/xz-utils/faq.txt.gz")
_CHAPTER = re.compile(r"^Chapter \d+\. (.+)$")
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)+)\. (.+)$")


@dataclass(frozen=True)
class Entry:
    """One question of a FAQ and its answer, as written."""

    chapter: str
    question: str
    answer: str


def read_installed(path: Path) -> str:
    """A documentation file's text (gzip or plain); FileNotFoundError names the package to install."""
    if not path.is_file():
        raise FileNotFoundError(f"{path} is not installed (Debian package: {_package(path)})")
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return data.decode("utf-8").replace("\u00a0", " ")


def _package(path: Path) -> str:
    return "debian-faq" if "debian/FAQ" in str(path) else path.parent.name


def parse_debian_faq(text: str) -> list[Entry]:
    """The numbered questions of the Debian FAQ's text rendering, after its table of contents; a question
    wrapped over two lines is joined. Sub-sections (N.M.K.) belong to their question's answer."""
    lines = text.splitlines()
    body = next(i for i, line in enumerate(lines) if _CHAPTER.match(line))
    entries: list[Entry] = []
    chapter, question, answer = "", "", []
    for line in lines[body:]:
        heading = _CHAPTER.match(line)
        numbered = _NUMBERED.match(line)
        if heading or (numbered and numbered.group(1).count(".") == 1):
            if question:
                entries.append(Entry(chapter, question, _paragraphs(answer)))
            question, answer = "", []
            if heading:
                chapter = heading.group(1)
            else:
                question = numbered.group(2)
            continue
        if question and not answer and line.strip() and not line.startswith(" "):
            question += " " + line.strip()  # the heading went on to a second line, at the margin too
            continue
        if question:
            answer.append(re.sub(r"^\d+(?:\.\d+)+\. ", "", line))
    if question:
        entries.append(Entry(chapter, question, _paragraphs(answer)))
    return entries


def parse_qa_faq(text: str, chapter: str = "") -> list[Entry]:
    """A FAQ written as "Q:  question" / "A:  answer" blocks, continuation lines indented."""
    entries = []
    for block in re.split(r"\n(?=Q:\s)", text):
        match = re.match(r"Q:\s+(.*?)\n\s*\nA:\s+(.*)", block, re.DOTALL)
        if match:
            question = " ".join(match.group(1).split())
            entries.append(Entry(chapter, question, _paragraphs(("    " + match.group(2)).splitlines())))
    return entries


def _paragraphs(lines: list[str]) -> str:
    """Indented lines joined into paragraphs (a blank line parts them), list bullets kept as Markdown's."""
    paragraphs, current = [], []
    for line in lines + [""]:
        stripped = line.strip()
        if not stripped:
            if current:
                paragraphs.append(" ".join(current))
            current = []
        elif stripped.startswith("* ") and current:
            paragraphs.append(" ".join(current))
            current = ["- " + stripped[2:]]
        else:
            current.append("- " + stripped[2:] if stripped.startswith("* ") else stripped)
    return "\n\n".join(paragraphs)


def as_markdown(title: str, entries: list[Entry]) -> str:
    """One `#` section a chapter and one `##` section a question, its answer below."""
    out, chapter = [f"# {title}", ""], None
    for entry in entries:
        if entry.chapter and entry.chapter != chapter:
            chapter = entry.chapter
            out += [f"# {chapter}", ""]
        out += [f"## {entry.question}", "", entry.answer, ""]
    return "\n".join(out)
