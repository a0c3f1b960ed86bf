"""Callers' words for what the KB says in its own words: "ring" for "call", "soonest" for "earliest".

A small sentence embedder does not know that "can I spread the cost?" asks about being "paid over 12
months", and word overlap cannot see it either, so a question the KB answers gets a weak match and the
agent says it doesn't know. Like soundalike recovery, this is a second search beside the caller's words,
never a rewrite of what they said: each phrase of a synonym group that the KB does not use is replaced by
the group's member the KB does use. Groups the KB uses none of change nothing, so a question about
something the KB does not cover ("air conditioning") is left as it was and is still declined. The built-in
groups are words that mean the same in any trade; a trade's own ("send an engineer" for a visit) come with its KB
(KB_FILE in the KB's folder) or from the operator (AGENT_SYNONYMS_PATH).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agent.knowledge.text import WORD, stem_words

BUILT_IN = Path(__file__).with_name("synonyms.txt")


def parse_groups(text: str) -> list[tuple[str, ...]]:
    """Groups of interchangeable phrases, one comma-separated line each; '#' starts a comment."""
    groups = []
    for line in text.splitlines():
        members = tuple(m.strip() for m in line.split("#", 1)[0].split(",") if m.strip())
        if len(members) >= 2:
            groups.append(members)
    return groups


KB_FILE = ".synonyms.txt"
"""A KB's own groups, in its folder (a dot-file, so never indexed as a document): the words of its trade."""


def load_groups(*extra: Path | None) -> list[tuple[str, ...]]:
    """The built-in groups, then each extra file's that exists: the KB's own (KB_FILE), an operator's
    (AGENT_SYNONYMS_PATH). Raises OSError/UnicodeDecodeError on an unreadable file."""
    groups = parse_groups(BUILT_IN.read_text(encoding="utf-8"))
    for path in extra:
        if path is not None and path.is_file():
            groups += parse_groups(path.read_text(encoding="utf-8"))
    return groups


@dataclass(frozen=True)
class _Rule:
    stems: tuple[str, ...]
    """The caller's phrase, as stemmed words."""
    kb_phrase: str
    """The group's member the KB uses, as written in the group."""


class Synonyms:
    """Rephrases a question in the KB's words, for one KB's text."""

    def __init__(self, groups: Iterable[tuple[str, ...]], kb_texts: Iterable[str]) -> None:
        kb = " " + " ".join(" ".join(stem_words(t)) for t in kb_texts) + " "
        rules = []
        for group in groups:
            stemmed = [tuple(stem_words(m)) for m in group]
            used = [m for m, s in zip(group, stemmed, strict=True) if s and f" {' '.join(s)} " in kb]
            if not used:
                continue
            rules += [_Rule(s, used[0]) for m, s in zip(group, stemmed, strict=True) if s and m not in used]
        # Longest phrases first, so "spread the cost" wins over a group holding "cost".
        self._rules = sorted(rules, key=lambda r: -len(r.stems))

    def rephrase(self, question: str) -> str:
        """The question with callers' phrases swapped for the KB's; '' when nothing was swapped."""
        words = WORD.findall(question)
        stems = stem_words(question)
        out: list[str] = []
        i, swapped = 0, False
        while i < len(words):
            rule = next((r for r in self._rules if tuple(stems[i:i + len(r.stems)]) == r.stems), None)
            if rule is None:
                out.append(words[i])
                i += 1
            else:
                out.append(rule.kb_phrase)
                i += len(rule.stems)
                swapped = True
        return " ".join(out) if swapped else ""
