"""Is the caller saying goodbye? Then the agent says its goodbye and hangs up, rather than looking
"that's all, thanks" up in the KB.

Only a short utterance that is a farewell as a whole counts: "goodbye", "that's all, thanks", "no,
that's it, bye". A question that merely contains such words ("what does 'that's all included' mean?")
is a question. Pure, on the transcript.
"""

from __future__ import annotations

import re

MAX_WORDS = 8
"""Longer than this, it is a question or a sentence, whatever words it contains."""

_FAREWELLS = (
    r"(good ?)?bye( bye)?", r"see you", r"take care", r"have a (good|nice|great) (day|one|evening)",
    r"that'?s (all|it|everything)", r"that is (all|it|everything)", r"nothing else", r"i'?m (done|all set)",
    r"that'?s all i (needed|wanted)",
)
_FILLERS = {"ok", "okay", "alright", "right", "great", "no", "yes", "yeah", "well", "thanks", "thank", "you",
            "very", "much", "cheers", "then", "so", "for", "your", "help", "and", "oh", "perfect", "lovely",
            "brilliant", "fine", "that", "all", "good", "bye", "now"}
_FAREWELL = re.compile(r"\b(" + "|".join(_FAREWELLS) + r")\b")


def is_farewell(transcript: str) -> bool:
    """True when the whole utterance is a goodbye: a farewell phrase, and besides it only thanks and fillers."""
    text = re.sub(r"[^a-z' ]+", " ", transcript.lower()).strip()
    words = text.split()
    if not words or len(words) > MAX_WORDS or not _FAREWELL.search(text):
        return False
    rest = _FAREWELL.sub(" ", text).split()
    return all(word in _FILLERS for word in rest)
