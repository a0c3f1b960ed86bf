"""The eval cases format (JSON lines) and its validation, shared by every eval."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from eval.kit.scoring import contains_any

PAUSE = "…"
"""In a case's `say`: the caller hesitates here (for the case's `pause_ms`)."""
PAUSE_MS = 600


@dataclass(frozen=True)
class Case:
    """One question in an eval, as a line of a cases file."""

    id: str
    call: str
    """Cases sharing a call value happen in order on one call (follow-ups)."""
    say: str | None
    """The question text (spoken by a synthetic caller when there is no audio)."""
    audio: Path | None
    """A WAV of the question, resolved against the cases file's directory."""
    expect_any: tuple[str, ...]
    """Right answers hold one of these (after eval.kit.scoring.normalize)."""
    expect_abstain: bool
    """An out-of-KB question: only a decline is right."""
    barge_in_at_ms: int | None = None
    repeat_audio: Path | None = None
    """A WAV of the question said again, for a caller asked to repeat it (default: the same audio)."""
    pause_ms: int = PAUSE_MS
    """Silence the caller leaves at each PAUSE mark in `say` (a hesitation mid-question)."""
    expect_heading: str = ""
    """Instead of `expect_any`: a right answer is read from the section under this heading (a FAQ's own question,
    whose answer is its whole section)."""
    kind: str = ""
    """What is asked ("price", "time", "place", "contact", "yesno", "negative", "condition", "followup", "oos",
    ...), for reports by kind."""


def right_answer(case: Case, text: str, headings: list[str]) -> bool:
    """Whether an answer (its text, and the heading paths of the sections it was read from) answers the case."""
    if case.expect_heading:
        return any(h.rpartition(" > ")[2] == case.expect_heading for h in headings)
    return contains_any(text, case.expect_any)


def load_cases(path: Path) -> list[Case]:
    """Parse and validate a cases file; errors name the line."""
    cases, seen = [], set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(raw, dict) or "id" not in raw:
            raise ValueError(f"{path}:{number}: a case is an object with an 'id'")
        if raw["id"] in seen:
            raise ValueError(f"{path}:{number}: duplicate id {raw['id']!r}")
        seen.add(raw["id"])
        if not raw.get("say") and not raw.get("audio"):
            raise ValueError(f"{path}:{number}: case {raw['id']} needs 'say' or 'audio'")
        expect_any = tuple(raw.get("expect_any") or ())
        abstain = bool(raw.get("expect_abstain", False))
        heading = str(raw.get("expect_heading") or "")
        if bool(expect_any) + abstain + bool(heading) != 1:
            raise ValueError(f"{path}:{number}: case {raw['id']} needs exactly one of expect_any / expect_abstain / "
                             "expect_heading")
        cases.append(Case(str(raw["id"]), str(raw.get("call", raw["id"])), raw.get("say"),
                          path.parent / raw["audio"] if raw.get("audio") else None, expect_any, abstain,
                          raw.get("barge_in_at_ms"),
                          path.parent / raw["repeat_audio"] if raw.get("repeat_audio") else None,
                          int(raw.get("pause_ms", PAUSE_MS)), heading, str(raw.get("kind", ""))))
    return cases


def call_groups(cases: list[Case]) -> dict[str, list[Case]]:
    """The cases by the call they are asked in, in order of their first question."""
    calls: dict[str, list[Case]] = {}
    for case in cases:
        calls.setdefault(case.call, []).append(case)
    return calls
