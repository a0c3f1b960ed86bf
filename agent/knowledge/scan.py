"""Reading the KB directory: which documents are usable, and a clear reason for each one that is not."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

SUFFIXES = (".md", ".txt")


@dataclass(frozen=True)
class Document:
    """A KB file that can be indexed."""

    path: str
    """Path relative to the KB directory, with forward slashes: the document's identity."""
    text: str
    sha256: str
    """Hash of the file's bytes; unchanged hash means nothing to re-embed."""
    size: int


@dataclass
class ScanResult:
    documents: dict[str, Document] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)
    """Relative path -> why the file was not indexed."""


def _candidates(kb_dir: Path) -> list[Path]:
    found = []
    for root, dirs, files in os.walk(kb_dir, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(Path(root) / name for name in sorted(files)
                     if name.lower().endswith(SUFFIXES) and not name.startswith("."))
    return found


def _read(path: Path, kb_root: Path, max_file_bytes: int) -> tuple[bytes | None, str]:
    """Bytes of a KB file, or None and the reason it is refused."""
    if path.is_symlink():
        target = path.resolve()
        if not target.is_relative_to(kb_root):
            return None, f"symlink points outside the KB directory ({target})"
    if not path.is_file():
        return None, "not a regular file"
    size = path.stat().st_size
    if size > max_file_bytes:
        return None, f"file is {size} bytes, over the {max_file_bytes}-byte limit (AGENT_KB_MAX_FILE_BYTES)"
    data = path.read_bytes()
    if not data.strip():
        return None, "file is empty"
    return data, ""


def scan(kb_dir: Path, max_file_bytes: int, max_total_bytes: int) -> ScanResult:
    """Read every .md and .txt file under kb_dir (recursively, dot-files skipped)."""
    result = ScanResult()
    if not kb_dir.is_dir():
        result.rejected["."] = f"KB directory {kb_dir} does not exist"
        return result
    kb_root = kb_dir.resolve()
    total = 0
    for path in _candidates(kb_dir):
        relative = path.relative_to(kb_dir).as_posix()
        try:
            data, reason = _read(path, kb_root, max_file_bytes)
        except OSError as exc:
            data, reason = None, f"cannot read: {exc.strerror or exc}"
        if data is None:
            result.rejected[relative] = reason
            continue
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            result.rejected[relative] = f"not UTF-8 (byte {exc.start}); save the file as UTF-8"
            continue
        if total + len(data) > max_total_bytes:
            result.rejected[relative] = f"KB is over its {max_total_bytes}-byte total (AGENT_KB_MAX_TOTAL_BYTES)"
            continue
        total += len(data)
        result.documents[relative] = Document(relative, text, hashlib.sha256(data).hexdigest(), len(data))
    return result
