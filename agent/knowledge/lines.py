"""Which lines of a list or a table a question asks about.

The chunker keeps a list's items and a table's rows on lines of their own, and a sentence the answerer picks
may be a whole price list. A caller who asks "how much is a small unit?" should hear the small unit's line, under
the line that introduces it ("Monthly membership by direct debit:", a table's column names), not every unit's
price. Pure: the sentence's text and the question's analysis in, the lines to say out, each verbatim.
"""

from __future__ import annotations

from collections.abc import Callable

from agent.knowledge.holds import age_fits, days_covered, holds
from agent.knowledge.question import Question
from agent.knowledge.text import tokens

NAMED_MATCH = 1.0
"""What a line that names the day the caller asks about, or states an age limit that holds their age, weighs: as
much as holding every word of the question."""
CHOSEN_FROM = 0.5
"""The least share of the question's words (weighed by rarity) the best item must hold for the answer to say it
alone: "How much are puppy vaccinations?" of a list with "Rabbit combined vaccine: £45" and "Dog first course: £78"
holds only "vaccinations" in the rabbit's line, and the whole list is said."""


def split_lines(sentence: str) -> list[str]:
    """Every line of a sentence, blocks (chunking.BLOCK_BREAK) run together."""
    return [line.strip() for line in sentence.split("\n") if line.strip()]


def introduces(line: str) -> bool:
    """A line that introduces the ones below it ("Membership includes:", a table's column names)."""
    return line.endswith(":")


def _weight(line: str, asked: Question, overlap: Callable[[set[str]], float]) -> float:
    named = (bool(asked.days & days_covered(line)) +
             (asked.age is not None and age_fits(line, asked.age) == 1.0))
    return overlap(set(tokens(line))) + NAMED_MATCH * named


def asked_lines(sentence: str, asked: Question, overlap: Callable[[set[str]], float]) -> list[str]:
    """The lines of `sentence` to say for the question: the items that match it best, each under the line that
    introduces it; every line where nothing sets some items apart.

    `overlap(line tokens)` is the share of the question's words a line holds, weighed by how rare each is in the
    KB. The best items are said alone when they hold at least CHOSEN_FROM of it (or name the day or fit the age
    asked about) and hold the kind of answer asked for ("how much": an amount). Where no item holds a word of the
    question, the items with that kind are: "how much is the club for a big dog?" keeps the lines with prices and
    drops the ones listing what the club includes."""
    lines: list[tuple[int, str]] = [(block, line) for block, text in enumerate(sentence.split("\n\n"))
                                    for line in split_lines(text)]
    items = [i for i, (_, line) in enumerate(lines) if not introduces(line)]
    everything = [line for _, line in lines]
    if len(items) < 2:
        return everything
    with_kind = [i for i in items if holds(lines[i][1]) & asked.kinds]
    weights = {i: _weight(lines[i][1], asked, overlap) for i in items}
    best = max(weights.values())
    if best >= CHOSEN_FROM:
        kept = [i for i in items if weights[i] >= best]
        if asked.kinds and not set(kept) & set(with_kind):
            return everything
    elif best == 0 and with_kind:
        kept = with_kind
    else:
        return everything
    if len(kept) == len(items):
        return everything
    said: list[int] = []
    for i in kept:
        block = lines[i][0]
        lead = next((j for j in range(i - 1, -1, -1) if lines[j][0] == block and introduces(lines[j][1])), None)
        if lead is not None and lead not in said:
            said.append(lead)
        said.append(i)
    return [lines[i][1] for i in said]
