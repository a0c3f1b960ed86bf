"""What a caller's words ask for before any knowledge base is consulted: to say goodbye, to leave a message, to
speak to a person, or a question. Pure, on the transcript."""

from __future__ import annotations

import enum

from agent.call.understanding.farewell import is_farewell
from agent.call.understanding.message import asks_for_message
from agent.call.understanding.transfer import asks_for_person
from agent.call.understanding.yes_no import is_yes


class Intent(enum.Enum):
    """What a caller's words ask for, before any knowledge base is consulted."""

    GOODBYE = "goodbye"
    MESSAGE = "leave a message"
    PERSON = "speak to a person"
    QUESTION = "question"


def intent(transcript: str, *, message_offered: bool) -> Intent:
    """What the caller's words ask for: the goodbye first ("no, that's all, thanks"), then a message (or a
    yes to the one just offered), then a person; anything else is a question for the knowledge base."""
    if is_farewell(transcript):
        return Intent.GOODBYE
    if asks_for_message(transcript) or (message_offered and is_yes(transcript)):
        return Intent.MESSAGE
    if asks_for_person(transcript):
        return Intent.PERSON
    return Intent.QUESTION
