"""Heading-aware chunking of Markdown and plain text into passages that read well aloud.

Pure: text in, chunks out. A chunk keeps the heading path it sits under, so a
passage about "Prices > New boilers" says so even when the heading is far above. A list's items and a table's
rows stay on lines of their own (LINE_BREAK), so an answer can say only the ones asked about (knowledge.lines).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from agent.knowledge.text import sentences, strip_inline_markdown

CHUNKER_VERSION = "5"
"""Bump when chunk boundaries or what gets embedded change, so every index is rebuilt (fingerprint)."""

_ATX = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^(=+|-+)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
LINE_BREAK = "\n"
"""Between a list's items or a table's rows, and after the line that introduces them (ending with a colon).
Whitespace to the embedder and to the tokens, so search and ranking read a list as before; text.sentences(lines=True)
keeps it."""
BLOCK_BREAK = "\n\n"
"""Between a list or a table and the prose before or after it: a line that introduces items is not about that prose."""


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
    """A list item's or table row's starts with LINE_BREAK."""


def _is_plain_text_heading(paragraph: list[str]) -> bool:
    """In .txt files a short lone line without closing punctuation is a heading."""
    return len(paragraph) == 1 and len(paragraph[0]) <= 60 and not paragraph[0].rstrip().endswith((".", "!", "?", ":"))


def _item_text(line: str) -> str:
    """A table row's cells, or a list item without its bullet."""
    if line.strip().startswith("|"):
        return ", ".join(cell.strip() for cell in line.strip().strip("|").split("|") if cell.strip())
    return _LIST_ITEM.sub("", line)


def _introduce_rows(paragraphs: list[str]) -> None:
    """The row above a table's rule holds the column names: it ends with a colon, introducing the rows below."""
    if paragraphs and paragraphs[-1].startswith(LINE_BREAK) and not paragraphs[-1].endswith(":"):
        paragraphs[-1] += ":"


def _sections(text: str, markdown: bool) -> list[_Section]:
    """Group lines into sections (by heading) of paragraphs (hard-wrapped lines joined). Each list item and table
    row is a paragraph of its own; a table's header row ends with a colon, as the line that introduces its rows."""
    sections = [_Section((), [])]
    stack: list[tuple[int, str]] = []
    paragraph: list[str] = []
    in_fence = False
    in_item = False

    def close_paragraph() -> None:
        nonlocal in_item
        if paragraph:
            if not markdown and _is_plain_text_heading(paragraph):
                sections.append(_Section((paragraph[0].strip(),), []))
            else:
                joined = " ".join(p.strip() for p in paragraph)
                sections[-1].paragraphs.append(LINE_BREAK + joined if in_item else joined)
            paragraph.clear()
        in_item = False

    def open_heading(level: int, title: str) -> None:
        close_paragraph()
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, strip_inline_markdown(title).strip()))
        sections.append(_Section(tuple(t for _, t in stack if t), []))

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
            if _TABLE_RULE.match(line) and "|" in line:
                close_paragraph()
                _introduce_rows(sections[-1].paragraphs)
                continue
            if line.strip().startswith("|") or _LIST_ITEM.match(line):
                close_paragraph()
                line, in_item = _item_text(line), True
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
    """Greedy packing: whole paragraphs while they fit the target, sentences when a paragraph is long. A list item
    or table row goes on a line of its own, and so does what follows it."""
    units: list[tuple[str, bool]] = []
    for paragraph in paragraphs:
        line = paragraph.startswith(LINE_BREAK)
        text = paragraph.removeprefix(LINE_BREAK)
        units.extend((piece, line) for piece in ([text] if len(text) <= target_chars else _split_long(text, max_chars)))
    chunks: list[str] = []
    current, after_line = "", False
    for unit, line in units:
        if current and len(current) + 1 + len(unit) > target_chars:
            chunks.append(current)
            current = unit
        elif current:
            current += _break(current, after_line, line) + unit
        else:
            current = unit
        after_line = line
    if current:
        chunks.append(current)
    return chunks


def _break(before: str, after_line: bool, line: bool) -> str:
    """What goes between two units of a chunk: a line break between items and after the line introducing them, a
    block break between items and prose, a space between prose."""
    if line and (after_line or before.endswith(":")):
        return LINE_BREAK
    return BLOCK_BREAK if line or after_line else " "


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
