"""The first hearing: Whisper's readings of an utterance, and with `Transcriber.greedy_first` (AGENT_ASR_GREEDY_FIRST,
off by default) its greedy reading first and the beam's only when that one is in doubt.

The beam's several readings are what rescue a misheard key noun (see understand), and most questions on a clear
line need none of them: Whisper is sure of what it heard, and the KB answers it or plainly has nothing on it. So
greedy first reads the utterance greedily, weighs that reading against the KB and understands it as it would be
on its own, and the beam reads the same encoding again, every reading then weighed as before, only when that
leaves a doubt: Whisper was unsure, the agent would confirm or ask again, or the caller has been asked already
(a repeat is where another reading most often rescues the question) and the answer is not firm. Offline it
answered as the beam at once did and cut the decode's median by a third (eval.hearing); on real calls the third
of turns read twice ran past the hangover, the median did not fall and the p95 rose, and under load it saved no
CPU (eval.replay, eval.load; docs/hearing.md). So it is off. The judging runs in Whisper's thread while it holds
the model (one look-up, milliseconds).
Blocking: run off the event loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agent.call.commands import UNCLARIFIED, Action, Clarified
from agent.call.understand import Reading, Understanding, read, understand, unsure
from agent.call.yes_no import is_no, is_yes
from agent.knowledge.base import KnowledgeBase
from agent.knowledge.memory import CallMemory
from agent.speech.asr import Transcriber, Transcript

SURE_DECLINE_LOGPROB = -0.25
"""Mean token log probability from which a greedy reading the KB declines is declined without the beam's readings
(the upper end of clear questions: see understand.UNSURE_LOGPROB)."""


@dataclass(frozen=True)
class Heard:
    transcript: Transcript
    readings: list[Reading] | None
    """The KB's reply to the greedy reading, looked up to judge it, when it settled; None: not looked up yet (the
    beam read again, or nothing worth looking up was said), see call.understand.read."""


def worth_reading(transcript: Transcript) -> bool:
    """Words, not a cough or a click heard as '.'."""
    return len(transcript.text.strip(" .?!,")) >= 2


def settles(greedy: Transcript, understanding: Understanding, clarified: Clarified) -> bool:
    """The greedy reading is acted on without the beam's: Whisper was sure of it, and it is answered firmly, or
    (the question asked for the first time) answered outright, or declined with Whisper plainly sure (a decline
    is what another reading of a misheard key word rescues: "a sad early morning" for "a Saturday morning")."""
    if unsure(greedy):
        return False
    if understanding.firm:
        return True
    if clarified.asked_again or clarified.confirmed or understanding.action is not Action.ANSWER:
        return False
    return not understanding.reply.abstained or greedy.avg_logprob >= SURE_DECLINE_LOGPROB


def hear(transcriber: Transcriber, knowledge: KnowledgeBase, memory: CallMemory, audio: np.ndarray,
         hint: str | None, clarified: Clarified = UNCLARIFIED) -> Heard:
    """What was heard, with `hint` as Whisper's prompt (the KB's words: `KnowledgeBase.vocabulary_hint`), and what
    the KB makes of it when that was judged.
    Greedy first only where the transcriber is set to (`Transcriber.greedy_first`)."""
    judged: dict[str, list[Reading]] = {}

    def settle(greedy: Transcript) -> bool:
        if not worth_reading(greedy) or (not unsure(greedy) and (is_yes(greedy.text) or is_no(greedy.text))):
            return True  # a cough, or a short yes or no to an offer or a confirmation: no other reading helps
        try:
            readings = read(knowledge, memory, greedy, clarified.rejected)
        except Exception:  # it fails again when the beam's readings are looked up, and the turn reports it there
            return False
        judged[greedy.text] = readings
        return settles(greedy, understand(greedy, readings, clarified), clarified)

    transcript = transcriber.transcribe(audio, hint, hypotheses=transcriber.beam_size, settle=settle)
    return Heard(transcript, None if transcript.widened else judged.get(transcript.text))
