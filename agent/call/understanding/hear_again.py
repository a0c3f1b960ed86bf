"""A second, larger recogniser for the utterances the first could not answer outright.

The agent's own recogniser (tiny.en) decodes every turn fast, and most questions are answered on its readings. Where
it leaves the agent asking again, confirming or declining, a larger model (whisper-base) hears the same audio again
and its readings are understood the same way, except that an answer they find is confirmed before it is spoken (the
first recogniser's doubt stands: answered outright, the second's readings added wrong answers on the development
KBs); whichever understanding gets the caller further is acted on. Only those turns wait for the second decode, so
the answer to a question heard clearly comes as fast as before (for a caller the first has already left in doubt the
second starts beside it, on a free core: see prepare._start_ahead). Blocking: run off the event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

from agent.call.commands import UNCLARIFIED, Action, Clarified
from agent.call.understanding.understand import Understanding, read, understand, unsure, worth_reading
from agent.call.understanding.yes_no import is_no, is_yes
from agent.knowledge.base import KnowledgeBase
from agent.knowledge.memory import CallMemory
from agent.speech.asr import Transcript

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Heard:
    """What the agent made of one utterance, and which recogniser's readings it acted on."""

    transcript: Transcript
    """The readings acted on; its decode time counts every decode the turn took."""
    understanding: Understanding | None
    """None when there was nothing to answer (a cough, a click)."""
    first_heard: str = ""
    """What the first recogniser heard, when the second's readings were acted on ('' when they were not)."""
    heard_twice: bool = False
    """The second recogniser heard it (the first left it in doubt), whether or not its readings were acted on."""


def understood(knowledge: KnowledgeBase, memory: CallMemory, transcript: Transcript,
               clarified: Clarified = UNCLARIFIED, doubted: bool = False) -> Understanding | None:
    """The agent's understanding of one transcript; None when it holds no words."""
    if not worth_reading(transcript):
        return None
    return understand(transcript, read(knowledge, memory, transcript, clarified.rejected), clarified, doubted)


def doubtful(understanding: Understanding) -> bool:
    """Not an answer to give as it stands: a request to repeat, a confirmation or a decline."""
    return understanding.action is not Action.ANSWER or understanding.reply.abstained


def _progress(understanding: Understanding) -> int:
    """How far an understanding gets the caller: an answer, then a confirmation (one yes from it), then a request to
    repeat (the question may yet be heard), then a decline."""
    if understanding.action is Action.ANSWER:
        return 0 if understanding.reply.abstained else 3
    return 2 if understanding.action is Action.CONFIRM else 1


def surer(first: Understanding, second: Understanding) -> Understanding:
    """The understanding to act on: the one that gets the caller further, the second recogniser's on a tie (it
    hears better)."""
    return first if _progress(first) > _progress(second) else second


def hear(knowledge: KnowledgeBase, memory: CallMemory, transcript: Transcript, clarified: Clarified = UNCLARIFIED,
         listen_again: Callable[[], Transcript] | None = None) -> Heard:
    """The first recogniser's `transcript` understood; when that is doubtful, the utterance heard again by
    `listen_again` (None: no second recogniser) and the surer understanding kept. A clear yes or no is the caller
    answering the agent, which no KB answers, and a question heard surely that the KB declines is declined (heard
    again, "Do you sell pizza?" became "pizzas", offered as the parking "spaces"): neither is heard again."""
    first = understood(knowledge, memory, transcript, clarified)
    if first is None or listen_again is None or not doubtful(first):
        return Heard(transcript, first)
    declined = first.action is Action.ANSWER  # doubtful and an answer: the KB's decline
    if is_yes(transcript.text) or is_no(transcript.text) or (declined and not unsure(transcript)):
        return Heard(transcript, first)
    try:
        again = listen_again()
    except Exception:  # the first understanding still stands
        log.exception("the second recogniser failed; acting on the first")
        return Heard(transcript, first)
    both = {"queue_s": transcript.queue_s + again.queue_s, "decode_s": transcript.decode_s + again.decode_s}
    # The first recogniser's doubt stands: an answer on the second's words is confirmed first.
    second = understood(knowledge, memory, again, clarified, doubted=True)
    if second is None or surer(first, second) is first:
        return Heard(replace(transcript, **both), first, heard_twice=True)
    return Heard(replace(again, **both), second, first_heard=first.chosen.hypothesis.text, heard_twice=True)
