"""What the call core (core.py) tells its shell to do, and the outcomes it names. Plain values, no I/O."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from agent.call.listening.turns import SpeechEnded, SpeechPaused


class Outcome(enum.StrEnum):
    """How a call ended (the call record and the agent_calls metric keep the value)."""

    CALLER_HUNG_UP = "caller hung up"
    CALLER_SAID_GOODBYE = "caller said goodbye"
    CALLER_SILENT = "caller silent"
    MAXIMUM_LENGTH = "maximum call length"
    DEAD_CALL = "dead call (no RTP)"
    TRANSFERRED = "transferred"
    AGENT_SHUT_DOWN = "agent shut down"
    AUDIO_FAILED = "failed: audio"


class TurnOutcome(enum.StrEnum):
    """What became of one of the caller's turns (kept in its turn record; a failure is "failed: <stage>")."""

    ANSWERED = "answered"
    """Answered from the knowledge base, or declined (the turn record says which)."""
    ASKED_AGAIN = "asked again"
    CONFIRMING = "confirming"
    """The agent asked whether the caller meant a topic ("Are you asking about …?") before answering."""
    CONFIRMED = "confirmed"
    """The caller said yes to a confirmation, and heard the answer."""
    NOT_CONFIRMED = "not confirmed"
    """The caller said no to a confirmation, and was asked to say the question again."""
    IGNORED = "ignored"
    """Nothing to answer: a cough, a click."""
    INTERRUPTED = "interrupted"
    CUT_OFF = "cut off"
    """Answered too soon: the caller went on with the question, which was then heard and answered as a whole."""
    CALLER_SAID_GOODBYE = "caller said goodbye"
    MESSAGE_REQUESTED = "message requested"
    TRANSFER_REQUESTED = "transfer requested"
    MESSAGE_TAKEN = "message taken"


class Action(enum.StrEnum):
    """What the agent makes of a caller's question (see understand)."""

    ANSWER = "answer"
    """Speak the reply: the KB's answer, or its decline."""
    CONFIRM = "confirm"
    """Ask whether the caller means the reply's topic before answering."""
    ASK_AGAIN = "ask again"


@dataclass(frozen=True)
class Clarified:
    """The clarifications the question being asked has had already (the core keeps them until it is answered):
    at most one confirmation and one request to repeat, so no question loops."""

    asked_again: bool = False
    confirmed: bool = False
    rejected: frozenset[str] = field(default_factory=frozenset)
    """Chunk ids of a topic the caller said no to: left out when the question is looked up again."""
    reoffered: bool = False
    """A second topic was offered after the caller said no to the first."""

    @property
    def may_confirm(self) -> bool:
        """A topic may still be offered: none has been, or the caller said no to the one that was (a receptionist
        who guessed wrong offers the other thing they had in mind, once)."""
        return not self.confirmed or (bool(self.rejected) and not self.reoffered)


UNCLARIFIED = Clarified()
"""A question asked for the first time."""


class Phrase(enum.Enum):
    """The agent's fixed lines, each with what it says: the one place a caller's fixed wording is written.
    The greeting's words are the profile's opening (dialplan)."""

    GREETING = "(the profile's opening)"
    STILL_THERE = "Are you still there?"
    GOODBYE = "Thank you for calling. Goodbye."
    APOLOGY = "Sorry, something went wrong on my side. Could you ask that again?"
    ASK_AGAIN = "Sorry, I didn't catch that. Could you say it again?"
    MESSAGE_PROMPT = "Please leave your message after the tone. Press hash, or just stop talking, when you're done."
    """The voice ends it with the tone after which the message is recorded."""
    MESSAGE_SAVED = "Thank you, I've passed your message on. Is there anything else I can help with?"
    MESSAGE_OFFER = "If you like, I can take a message for the team. Just say: leave a message."
    TRANSFERRING = "Putting you through to a member of the team now."
    TRANSFER_FAILED = "Sorry, I couldn't put you through. I can take a message instead: just say, leave a message."
    NO_TRANSFER = ("I can't put you through to a person on this line, but I can take a message: just say, leave a "
                   "message.")
    NOT_THAT = "Sorry, my mistake. Could you say your question again?"
    """After the caller said no to a confirmation."""

    def words(self, opening: str) -> str:
        """What this line says in a profile whose greeting is `opening`."""
        return opening if self is Phrase.GREETING else self.value


@dataclass(frozen=True)
class Say:
    phrase: Phrase


@dataclass(frozen=True)
class RepeatLastReply:
    """Say the last reply again (the caller pressed *)."""


@dataclass(frozen=True)
class Interrupt:
    """Silence from the next frame on, and stop making the rest of the answer."""

    barge_in: bool = False
    """The caller talked over the agent (counted, and the echo gate forgets the agent's voice)."""
    cut_off: bool = False
    """The caller is going on with the question the agent had just begun to answer: that answer is taken back and
    what they say now is heard together with what they said before (see endpointing)."""


@dataclass(frozen=True)
class Speculate:
    """Prepare a reply to the utterance so far while the hangover runs (dropped if the caller goes on)."""

    pause: SpeechPaused


@dataclass(frozen=True)
class Answer:
    """Prepare the reply to the finished turn (or adopt the one prepared during its pause)."""

    utterance: SpeechEnded


@dataclass(frozen=True)
class SpeakReply:
    """Speak `reply` sentence by sentence, and remember it for the next turn."""

    reply: object = None
    """What the shell prepared, as it gave it to `CallCore.heard`: this turn's, or the one the caller has just
    confirmed (prepared in the turn before, and kept by the core until the yes)."""
    confirmed: bool = False


@dataclass(frozen=True)
class Confirm:
    """Ask whether the caller means `reply`'s topic (the core keeps the reply for a yes)."""

    reply: object = None


@dataclass(frozen=True)
class StartMessage:
    """Play the message prompt and its tone, then record what the caller says."""


@dataclass(frozen=True)
class EndMessage:
    why: str


@dataclass(frozen=True)
class Transfer:
    """Once "putting you through" has played, hand the caller to `target` (progress: `CallCore.transfer_ended`)."""

    target: str


@dataclass(frozen=True)
class Goodbye:
    """Say goodbye, let it play out, then hang up."""

    outcome: Outcome
    cut: bool = True
    """Silence whatever is being said first (a limit); False: the goodbye follows it."""


@dataclass(frozen=True)
class HangUp:
    outcome: Outcome


Command = (Say | RepeatLastReply | Interrupt | Speculate | Answer | SpeakReply | Confirm | StartMessage | EndMessage
           | Transfer | Goodbye | HangUp)
