"""A call's decisions, without I/O: fed what happened, it says what to do. Pure, in the aioquic manner.

The session (session.py) is the shell: it feeds the core turn events, DTMF digits, hold changes, what the
caller said (with what preparing the reply found), the transfer's result, the end of the call and a
`tick(now)` every half second, and carries out the commands it returns (commands.py: speak a phrase or the
reply, interrupt, prepare a turn, take a message, transfer, say goodbye, hang up) with its models, tasks
and transport. The core holds the call's named state, the one a telephony engineer would
recognise, and its outcome; it never touches a clock, a thread or a socket, so every rule of barge-in,
hold, DTMF, asking again, offering a message, transfer, endings and time limits is tested tick by tick
(tests/call/test_core.py, test_core_confirming.py).
"""

from __future__ import annotations

import enum
from dataclasses import replace

from agent.call.commands import (
    UNCLARIFIED,
    Action,
    Answer,
    Command,
    Confirm,
    EndMessage,
    Goodbye,
    HangUp,
    Interrupt,
    Outcome,
    Phrase,
    RepeatLastReply,
    Say,
    SpeakReply,
    Speculate,
    StartMessage,
    Transfer,
    TurnOutcome,
)
from agent.call.limits import CallLimits, LimitAction
from agent.call.listening.turns import SpeechEnded, SpeechPaused, SpeechStarted
from agent.call.understanding.intent import Intent, intent
from agent.call.understanding.message import OFFER_AFTER_DECLINES
from agent.call.understanding.yes_no import is_bare, is_no, is_yes, said_again


class CallState(enum.Enum):
    CONNECTING = "connecting"  # answered; no media yet
    GREETING = "greeting"
    LISTENING = "listening"
    THINKING = "thinking"  # the caller's turn ended; its reply is being prepared
    SPEAKING = "speaking"
    HELD = "held"
    TAKING_MESSAGE = "taking a message"
    TRANSFERRING = "transferring"
    BRIDGED = "bridged"  # put through by a warm transfer: the two talk through the agent's bridge
    CLOSING = "closing"  # saying goodbye, or hanging up
    ENDED = "ended"


class CallCore:
    """One call's state and decisions. Every method returns the commands to carry out, in order."""

    def __init__(self, limits: CallLimits, transfer_digit: str = "", transfer_to: str = "",
                 warm_transfer: bool = False) -> None:
        """`transfer_to`: the person a caller asking for one is handed to; empty when the profile names nobody
        or the transport cannot transfer (the caller is told so and offered a message); `warm_transfer`: the
        agent calls the person itself while the caller holds (see warm_transfer), so what the caller says
        meanwhile is not a question."""
        self._limits = limits
        self._transfer_digit, self._transfer_to = transfer_digit, transfer_to
        self._warm = warm_transfer
        self.state = CallState.CONNECTING
        self.outcome: Outcome | None = None
        self._held_from = CallState.LISTENING
        self._message_offered = False
        """The agent has just offered to take a message: a yes in the next turn takes it."""
        self._declines = 0
        self.clarified = UNCLARIFIED
        """How the question being asked has been clarified so far (reset once it is answered)."""
        self._confirming: tuple[frozenset[str], object, str] | None = None
        """The agent has just asked the caller to confirm a topic (these chunks, that reply, for those words): a yes
        or a no answers it, and a yes has that reply spoken."""
        self._confirmation_repeated = False
        """The caller's reply to this confirmation was unclear once, and they were asked to say it again."""
        self._before_turn: dict[str, object] = {}
        """The question's state before the last turn was heard: back to it when the caller goes on with that turn."""

    @property
    def yes_or_no_asked(self) -> bool:
        """The agent has just asked a yes/no question: a confirmation, or the offer to take a message."""
        return self._confirming is not None or self._message_offered

    @property
    def closing(self) -> bool:
        return self.state in (CallState.CLOSING, CallState.ENDED)

    def media_ready(self) -> list[Command]:
        if self.state is not CallState.CONNECTING:
            return []
        self.state = CallState.GREETING
        return [Say(Phrase.GREETING)]

    def turn(self, turn_event: SpeechStarted | SpeechPaused | SpeechEnded, *, agent_speaking: bool,
             cut_off: bool = False) -> list[Command]:
        """The caller's turn-taking (see turns); `cut_off`: speech that started just after a turn was ended short
        is the rest of that question (see endpointing), not a new one."""
        if self.closing or self.state in (CallState.HELD, CallState.TAKING_MESSAGE, CallState.BRIDGED):
            return []
        if self.state is CallState.TRANSFERRING and self._warm:
            return []  # on hold while the agent finds someone
        if isinstance(turn_event, SpeechPaused):
            return [Speculate(turn_event)]
        if isinstance(turn_event, SpeechStarted):
            if self.state is not CallState.TRANSFERRING:
                self.state = CallState.LISTENING
            if not agent_speaking:
                return []
            if cut_off:  # the rest of the last turn ("Yes, ... that's right."): the two are heard as one
                vars(self).update(self._before_turn)
            return [Interrupt(cut_off=True)] if cut_off else [Interrupt(barge_in=True)]
        if self.state is not CallState.TRANSFERRING:
            self.state = CallState.THINKING
        return [Interrupt(), Answer(turn_event)]

    def heard(self, transcript: str, *, action: Action | None, abstained: bool = False,
              chunks: frozenset[str] = frozenset(), reply: object = None) -> tuple[TurnOutcome, list[Command]]:
        """The finished turn's transcript, and what preparing its reply made of it (see understand): answer,
        confirm or ask again (None: nothing to answer), whether the reply is the KB's decline, the chunks it was
        read from, and the reply itself (the shell's, handed back in SpeakReply or Confirm)."""
        if self.closing:
            return TurnOutcome.INTERRUPTED, []  # by a goodbye or a hang-up while the reply was prepared
        self._before_turn = {name: getattr(self, name) for name in ("_confirming", "_confirmation_repeated",
                                                                     "clarified", "_declines", "_message_offered")}
        offered, self._message_offered = self._message_offered, False
        confirming, self._confirming = self._confirming, None
        what = intent(transcript, message_offered=offered)
        if what is Intent.GOODBYE:
            return TurnOutcome.CALLER_SAID_GOODBYE, self._goodbye(Outcome.CALLER_SAID_GOODBYE, cut=False)
        if what is Intent.MESSAGE:
            self.state = CallState.TAKING_MESSAGE
            return TurnOutcome.MESSAGE_REQUESTED, [StartMessage()]
        if what is Intent.PERSON:
            return TurnOutcome.TRANSFER_REQUESTED, self._transfer()
        if confirming is not None and is_yes(transcript):
            self._speaking()
            self._answered(abstained=False)
            return TurnOutcome.CONFIRMED, [SpeakReply(confirming[1], confirmed=True)]
        if confirming is not None and is_no(transcript):
            self._speaking()
            self.clarified = replace(self.clarified, asked_again=True,
                                     rejected=self.clarified.rejected | confirming[0])
            return TurnOutcome.NOT_CONFIRMED, [Say(Phrase.NOT_THAT)]
        if action is None:
            self._confirming = confirming  # a cough does not answer the confirmation
            return TurnOutcome.IGNORED, []
        self._speaking()
        if confirming is not None and not self._confirmation_repeated and said_again(transcript, confirming[2]):
            # The question in the same words: the topic named did not reach the caller (declined, it would need a
            # second confirmation). Named once more.
            self._confirming, self._confirmation_repeated = confirming, True
            return TurnOutcome.CONFIRMING, [Confirm(confirming[1])]
        if confirming is not None and is_bare(transcript):
            # Neither yes nor no, and too bare to be the question said again: answered from the call's context it
            # would be a guess. Asked once to say it again, the confirmation still open; then asked for the question.
            if not self._confirmation_repeated:
                self._confirming, self._confirmation_repeated = confirming, True
                return TurnOutcome.ASKED_AGAIN, [Say(Phrase.ASK_AGAIN)]
            self.clarified = replace(self.clarified, asked_again=True)
            return TurnOutcome.NOT_CONFIRMED, [Say(Phrase.NOT_THAT)]
        # Anything else after a confirmation is the caller going on: the question said again, or a new one.
        if action is Action.ASK_AGAIN:
            # The repeated question is asked afresh, not as a follow-up to a mishearing.
            self.clarified = replace(self.clarified, asked_again=True)
            return TurnOutcome.ASKED_AGAIN, [Say(Phrase.ASK_AGAIN)]
        if action is Action.CONFIRM:
            self.clarified = replace(self.clarified, confirmed=True, reoffered=self.clarified.confirmed)
            self._confirming = (chunks, reply, transcript)
            self._confirmation_repeated = False
            return TurnOutcome.CONFIRMING, [Confirm(reply)]
        if self._answered(abstained):
            return TurnOutcome.ANSWERED, [SpeakReply(reply), Say(Phrase.MESSAGE_OFFER)]
        return TurnOutcome.ANSWERED, [SpeakReply(reply)]

    def _speaking(self) -> None:
        if self.state is CallState.THINKING:
            self.state = CallState.SPEAKING

    def _answered(self, abstained: bool) -> bool:
        """The question is answered (or declined): the next one starts unclarified. True when this decline is
        the one after which a message is offered."""
        self.clarified = UNCLARIFIED
        self._declines += abstained
        if abstained and self._declines == OFFER_AFTER_DECLINES:
            self._message_offered = True
            return True
        return False

    def message_ended(self) -> None:
        if self.state is CallState.TAKING_MESSAGE:
            self.state = CallState.LISTENING

    def transfer_ended(self, answered: bool, bridged: bool = False) -> list[Command]:
        """The transfer's final result: the caller is the person's now (`bridged`: through the agent, which
        stays on the call until one of them hangs up), or back with the agent, who says so and offers a
        message."""
        if answered and bridged and not self.closing:
            self.outcome, self.state = Outcome.TRANSFERRED, CallState.BRIDGED
            return []
        if answered:
            self.outcome, self.state = Outcome.TRANSFERRED, CallState.CLOSING
            return [HangUp(Outcome.TRANSFERRED)]
        if self.closing:
            return []
        if self.state is CallState.HELD:
            self._held_from = CallState.LISTENING  # nothing said into a hold: the caller would never hear it
            return []
        self.state, self._message_offered = CallState.SPEAKING, True
        return [Say(Phrase.TRANSFER_FAILED)]

    def person_left(self) -> list[Command]:
        """The person the caller was put through to hung up: so does the agent."""
        if self.state is not CallState.BRIDGED:
            return []
        self.state = CallState.CLOSING
        return [HangUp(Outcome.TRANSFERRED)]

    def dtmf(self, digit: str, *, has_last_reply: bool) -> list[Command]:
        if self.closing or self.state in (CallState.HELD, CallState.BRIDGED):
            return []
        if self.state is CallState.TAKING_MESSAGE:
            return [EndMessage("#")] if digit == "#" else []
        if digit == self._transfer_digit:
            return [] if self.state is CallState.TRANSFERRING else [Interrupt(), *self._transfer()]
        if digit == "*" and has_last_reply:
            return [Interrupt(), RepeatLastReply()]
        return []

    def hold(self, held: bool) -> list[Command]:
        """A re-INVITE put the call on hold (a=sendonly, a=inactive, port 0) or took it off."""
        if self.closing:
            return []
        if held and self.state is not CallState.HELD:
            self._held_from, self.state = self.state, CallState.HELD
            return [Interrupt()]
        if not held and self.state is CallState.HELD:
            # What was being said was cut at the hold; a transfer or a message in progress goes on.
            keep = (CallState.TRANSFERRING, CallState.TAKING_MESSAGE)
            self.state = self._held_from if self._held_from in keep else CallState.LISTENING
        return []

    def tick(self, now: float, *, agent_speaking: bool, last_caller_speech: float,
             rtp_packets: int | None) -> list[Command]:
        """Every half second: the time limits (see limits). `rtp_packets` is not asked while held (None)."""
        if self.closing:
            return []
        if not agent_speaking and self.state in (CallState.GREETING, CallState.SPEAKING):
            self.state = CallState.LISTENING
        # Bridged, the caller talks to the person: only the call's length is the agent's to limit.
        verdict = self._limits.check(now, held=self.state in (CallState.HELD, CallState.BRIDGED),
                                     agent_speaking=agent_speaking,
                                     last_caller_speech=last_caller_speech, rtp_packets=rtp_packets)
        if verdict.action is LimitAction.ASK_STILL_THERE:
            return [Say(Phrase.STILL_THERE)]
        if verdict.action is LimitAction.GOODBYE:
            return self._goodbye(Outcome(verdict.outcome))
        if verdict.action is LimitAction.HANG_UP:
            self.outcome, self.state = Outcome(verdict.outcome), CallState.CLOSING
            return [HangUp(self.outcome)]
        return []

    def wind_down(self) -> list[Command]:
        """The agent is shutting down: any message is kept, and the caller hears goodbye."""
        if self.closing:
            return []
        ending = [EndMessage("agent shut down")] if self.state is CallState.TAKING_MESSAGE else []
        self.outcome, self.state = Outcome.AGENT_SHUT_DOWN, CallState.CLOSING
        return [*ending, Goodbye(self.outcome, cut=False)]

    def failed(self) -> list[Command]:
        """The audio path broke: a silent line helps nobody."""
        self.outcome, self.state = Outcome.AUDIO_FAILED, CallState.CLOSING
        return [HangUp(Outcome.AUDIO_FAILED)]

    def ended(self) -> Outcome:
        """The call is over (BYE either way, or the transport went away): its outcome."""
        self.outcome = self.outcome or Outcome.CALLER_HUNG_UP
        self.state = CallState.ENDED
        return self.outcome

    def _goodbye(self, outcome: Outcome, cut: bool = True) -> list[Command]:
        self.outcome, self.state = outcome, CallState.CLOSING
        return [Goodbye(outcome, cut)]

    def _transfer(self) -> list[Command]:
        if self.state is CallState.TRANSFERRING:
            return []  # one at a time
        if not self._transfer_to:
            self.state, self._message_offered = CallState.SPEAKING, True
            return [Say(Phrase.NO_TRANSFER)]
        self.state = CallState.TRANSFERRING
        return [Say(Phrase.TRANSFERRING), Transfer(self._transfer_to)]
