"""When the caller has finished: the end of a turn decided by what was said, not only by how long the line has
been quiet. Pure.

Every answer used to wait for the same 512 ms of silence. The speculative reply prepared during that silence
(see prepare) already holds what was said and what the KB makes of it, a few hundred milliseconds before the
hangover ends, so the turn's end can be judged by it: a question that is complete (Whisper closed it with an
end mark, it does not end on an article, preposition, conjunction, possessive or filler, and the KB answers it
firmly) is answered after a short silence; one plainly unfinished ("How much does the", "Can I pay by") is
given a long one, then answered as it stands; anything else keeps the default. A caller who is seen to pause
mid-question (they went on after a silence that could have ended their turn early), or who goes on talking
just after their turn was ended (cut off: that answer is taken back and both halves are heard as one
question), is waited for at the default or longer for the rest of the call: their pauses are not a sign
that they have finished.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from agent.call.understanding.yes_no import is_no, is_yes


class Verdict(enum.Enum):
    COMPLETE = "complete"
    """A whole question the KB answers firmly: answer after the short silence."""
    UNFINISHED = "unfinished"
    """It stops mid-phrase: wait the long silence."""
    UNSURE = "unsure"
    """Neither: the default hangover."""


DEMONSTRATIVES = frozenset("this that these those".split())
"""Pronouns as often as determiners: "longer than that?" is whole, "Can I book that" is not."""
PREPOSITIONS = frozenset("""
of to in on at by for with from about into onto over under between through during before after without within
than as like per via around across behind near
""".split())
WH_WORDS = frozenset("what which who whom whose where when how why".split())
"""A wh-question strands its preposition ("How long are repairs covered for?", "Who do I speak to?"); a
yes/no question does not ("Can I pay by" is unfinished, closing mark or not)."""
OPEN_ENDINGS = DEMONSTRATIVES | PREPOSITIONS | frozenset("""
a an the some any no every each
and or but so because if when while whether although though unless until nor then
my your our his her their its whose
um uh er erm hmm mm well
is are was were be been am do does did can could will would should shall may might must have has had
""".split())
"""Words a finished English question does not end on; a demonstrative or a stranded preposition may end one the
KB answers firmly and Whisper closed (see _ends_whole)."""
_WORD = re.compile(r"[a-z0-9']+")
_CLOSED = (".", "?", "!")


def judge(text: str, firm: bool, yes_or_no_asked: bool = False) -> Verdict:
    """`text`: what the speculative reply heard (Whisper's punctuation included); `firm`: the KB answers it
    firmly (see understand); `yes_or_no_asked`: the agent has just asked the caller a yes/no question (a
    confirmation, an offer), to which a short yes or no is the whole answer however it was punctuated."""
    if yes_or_no_asked and (is_yes(text) or is_no(text)):
        return Verdict.COMPLETE
    words = _WORD.findall(text.lower())
    stripped = text.rstrip()
    whole = stripped.endswith(_CLOSED) and firm
    if not words or stripped.endswith(("...", "…", ",", "-")) or (words[-1] in OPEN_ENDINGS
                                                                   and not (whole and _ends_whole(words))):
        return Verdict.UNFINISHED if words else Verdict.UNSURE
    return Verdict.COMPLETE if whole else Verdict.UNSURE


def _ends_whole(words: list[str]) -> bool:
    """For a closed question the KB answers firmly: its last word usually leaves a question open, but here ends
    it: a demonstrative pronoun, or a preposition stranded by the question's wh-word. (Whisper closes a cut-off
    "How much does the" as "How much does that?", which the KB does not answer firmly.)"""
    return words[-1] in DEMONSTRATIVES or (words[-1] in PREPOSITIONS and any(w in WH_WORDS for w in words[:3]))


@dataclass(frozen=True)
class EndpointConfig:
    default_ms: int = 512
    """The hangover when nothing was judged (AGENT_VAD_HANGOVER_MS)."""
    short_ms: int = 224
    """Silence after which a complete question is answered."""
    long_ms: int = 1216
    """Silence an unfinished one is given before it is answered as it stands."""
    enabled: bool = True
    """False: every turn waits the default (the behaviour before this)."""
    cut_off_ms: int = 600
    """A caller who starts talking this soon after their turn ended was cut off (going on with the question), not
    reacting to the answer; later, talking over the answer is a barge-in."""


class Endpointer:
    """One call's end-of-turn policy: the hangover for the pause under way, given the verdict on what was said."""

    def __init__(self, config: EndpointConfig) -> None:
        self.config = config
        self.pauses_mid_question = 0
        """Times the caller went on after a silence this policy could have ended their turn on."""
        self.cut_offs = 0
        """Times the caller went on with a question the agent had begun to answer."""

    def resumed(self, silence_ms: int) -> None:
        """The caller went on talking after `silence_ms` of quiet within one turn."""
        if self.config.enabled and silence_ms >= self.config.short_ms:
            self.pauses_mid_question += 1

    def talked_over(self, since_end_ms: int) -> bool:
        """The caller started talking over the agent `since_end_ms` after their turn ended: True when this is the
        rest of that turn's question (a cut-off: too soon to be a reaction to the answer), which is learned like a
        pause mid-question."""
        if self.config.enabled and since_end_ms <= self.config.cut_off_ms:
            self.pauses_mid_question += 1
            self.cut_offs += 1
            return True
        return False

    def hangover_ms(self, verdict: Verdict) -> int:
        config = self.config
        if not config.enabled:
            return config.default_ms
        if verdict is Verdict.UNFINISHED:
            return config.long_ms
        if self.pauses_mid_question:  # a caller who pauses mid-question: never cut short, unsure is long
            return config.long_ms if verdict is Verdict.UNSURE else config.default_ms
        return config.short_ms if verdict is Verdict.COMPLETE else config.default_ms
