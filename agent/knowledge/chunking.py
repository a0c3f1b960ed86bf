"""Heading-aware chunking of Markdown and plain text into passages that read well aloud.

Pure: text in, chunks out. A chunk keeps the heading path it sits under, so a
passage about "Prices > New boilers" says so even when the heading is far above.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from agent.knowledge.text import sentences, strip_inline_markdown

CHUNKER_VERSION = "3"
"""Bump when chunk boundaries or what gets embedded change, so every index is rebuilt (fingerprint)."""

_ATX = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^(=+|-+)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
_ENDS_SENTENCE = re.compile(r"[.!?:;][\"')\]]*$")


@dataclass(frozen=True)
class Chunk:
    """A passage of one document."""

    id: str
    """Stable id: the same path, position and text always give the same id."""
    path: str
    """Document path relative to the KB directory."""
    ordinal: int
    """Position of the chunk in its document, from 0."""
    heading: tuple[str, ...]
    """Headings above the chunk, outermost first."""
    text: str
    """Plain text of the chunk, Markdown syntax removed."""

    @property
    def titled_text(self) -> str:
        """Heading path and text, which is what gets embedded and searched."""
        return (" > ".join(self.heading) + ": " if self.heading else "") + self.text


@dataclass
class _Section:
    heading: tuple[str, ...]
    paragraphs: list[str]


def _is_plain_text_heading(paragraph: list[str]) -> bool:
    """In .txt files a short lone line without closing punctuation is a heading."""
    return len(paragraph) == 1 and len(paragraph[0]) <= 60 and not paragraph[0].rstrip().endswith((".", "!", "?", ":"))


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def table_row_sentence(header: list[str], row: list[str]) -> str:
    """A table row as one sentence that can be spoken alone: its first cell, then the others under their
    column names ("Saturday: Open 09:00, Close 20:00"), or the one value when the others repeat it
    ("Monday: closed")."""
    key = row[0]
    values = [(header[i] if i < len(header) else "", value) for i, value in enumerate(row) if i and value]
    if not values:
        return key
    if len({value for _, value in values}) == 1:
        return f"{key}: {values[0][1]}"
    return f"{key}: " + ", ".join(f"{label} {value}".strip() for label, value in values)


def _as_sentence(text: str) -> str:
    """A list item or table row spoken on its own: a capital first letter and a full stop, so it neither runs
    into the next item nor gets lost inside it."""
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if _ENDS_SENTENCE.search(text) else f"{text}."


def _sections(text: str, markdown: bool) -> list[_Section]:
    """Group lines into sections (by heading) of paragraphs (hard-wrapped lines joined). Each list item and
    each table row is a paragraph of its own, read as one sentence."""
    sections = [_Section((), [])]
    stack: list[tuple[int, str]] = []
    paragraph: list[str] = []
    in_fence = False
    in_item = False
    header: list[str] | None = None
    last_cells: list[str] | None = None

    def close_paragraph() -> None:
        nonlocal in_item
        if paragraph:
            if not markdown and _is_plain_text_heading(paragraph):
                sections.append(_Section((paragraph[0].strip(),), []))
            else:
                joined = " ".join(p.strip() for p in paragraph)
                sections[-1].paragraphs.append(_as_sentence(joined) if in_item else joined)
            paragraph.clear()
        in_item = False

    def open_heading(level: int, title: str) -> None:
        close_paragraph()
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, strip_inline_markdown(title).strip()))
        sections.append(_Section(tuple(t for _, t in stack if t), []))

    def add_row(text: str) -> None:
        close_paragraph()
        if text.strip():
            sections[-1].paragraphs.append(_as_sentence(text))

    for line in text.splitlines():
        if markdown and _FENCE.match(line):
            close_paragraph()
            in_fence = not in_fence
            continue
        if markdown and not in_fence:
            heading = _ATX.match(line)
            if heading:
                open_heading(len(heading.group(1)), heading.group(2))
                continue
            if _SETEXT.match(line) and len(paragraph) == 1:
                title = paragraph.pop()
                open_heading(1 if line.lstrip().startswith("=") else 2, title)
                continue
            if "|" in line and _TABLE_RULE.match(line):
                if last_cells and any(last_cells) and sections[-1].paragraphs:
                    sections[-1].paragraphs.pop()  # the header row, read into the rows below it instead
                    header = last_cells
                continue
            if line.strip().startswith("|"):
                last_cells = [strip_inline_markdown(cell) for cell in _cells(line)]
                add_row(table_row_sentence(header, last_cells) if header else
                         ", ".join(cell for cell in last_cells if cell))
                continue
            header = last_cells = None
            if _LIST_ITEM.match(line):
                close_paragraph()
                in_item = True
                line = _LIST_ITEM.sub("", line)
            line = strip_inline_markdown(line.lstrip("> "))
        if not line.strip():
            close_paragraph()
            continue
        paragraph.append(line)
    close_paragraph()
    return [s for s in sections if s.paragraphs]


def _split_long(unit: str, max_chars: int) -> list[str]:
    """A paragraph longer than max_chars, as sentence-sized pieces; a giant sentence is cut at words."""
    pieces: list[str] = []
    for sentence in sentences(unit):
        while len(sentence) > max_chars:
            cut = sentence.rfind(" ", 0, max_chars)
            cut = cut if cut > 0 else max_chars
            pieces.append(sentence[:cut].strip())
            sentence = sentence[cut:].strip()
        if sentence:
            pieces.append(sentence)
    return pieces


def _pack(paragraphs: list[str], target_chars: int, max_chars: int) -> list[str]:
    """Greedy packing: whole paragraphs while they fit the target, sentences when a paragraph is long."""
    units: list[str] = []
    for paragraph in paragraphs:
        units.extend([paragraph] if len(paragraph) <= target_chars else _split_long(paragraph, max_chars))
    chunks: list[str] = []
    current = ""
    for unit in units:
        if current and len(current) + 1 + len(unit) > target_chars:
            chunks.append(current)
            current = unit
        else:
            current = f"{current} {unit}".strip()
    if current:
        chunks.append(current)
    return chunks


def chunk_id(path: str, ordinal: int, text: str) -> str:
    return hashlib.sha256(f"{path}\n{ordinal}\n{text}".encode()).hexdigest()[:16]


def split_document(path: str, text: str, target_chars: int = 350, max_chars: int = 600) -> list[Chunk]:
    """Split one document into chunks; `.md` is parsed as Markdown, anything else as plain text."""
    markdown = path.lower().endswith(".md")
    chunks: list[Chunk] = []
    for section in _sections(text.replace("\r\n", "\n"), markdown):
        for piece in _pack(section.paragraphs, target_chars, max_chars):
            ordinal = len(chunks)
            chunks.append(Chunk(chunk_id(path, ordinal, piece), path, ordinal, section.heading, piece))
    return chunks
