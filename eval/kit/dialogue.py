"""One question taken through the agent's own decisions, off the wire: heard, understood, then answered, confirmed
or asked again by the call core, the caller answering as the person who asked would (eval.kit.repeats): the question
again when asked to repeat (a quarter slower, when spoken), yes or no to a confirmation.

How the caller is heard is the runner's: Whisper on spoken audio (eval.hearing) or word for word
(`perfectly`, the text path of eval.many_kbs). One memory and call core per call group, as on a call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from agent.call.commands import Confirm, Say, SpeakReply, TurnOutcome
from agent.call.core import CallCore
from agent.call.limits import CallLimits
from agent.call.understanding.hear_again import hear
from agent.knowledge.base import KnowledgeBase, Reply
from agent.knowledge.memory import CallMemory
from agent.speech.asr import Hypothesis, Transcript
from eval.kit.cases import Case, right_answer
from eval.kit.repeats import about, reply_to_confirmation

MAX_EXCHANGES = 5
"""Exchanges about one question before the eval gives up on it (the agent bounds its own clarifications)."""
REPEAT_STRETCH = 1.25
"""A caller asked to repeat says it again, a quarter slower."""
CLEAR_LOGPROB = -0.1
"""The confidence a perfectly heard question is given: that of a clear question Whisper is sure of."""

Listen = Callable[[str, float], Transcript]
"""listen(said, stretch): what the agent hears when the caller says `said`."""


def perfectly(said: str, stretch: float) -> Transcript:
    """The caller's words as said, as a sure Whisper would write them."""
    return Transcript(said, "en", audio_s=len(said) / 15, no_speech_prob=0.0, avg_logprob=CLEAR_LOGPROB,
                      hypotheses=(Hypothesis(said, CLEAR_LOGPROB),))


@dataclass
class Calls:
    """Each call group's memory and call core."""

    knowledge: KnowledgeBase

    def __post_init__(self) -> None:
        self._calls: dict[str, tuple[CallMemory, CallCore]] = {}
        self.chunks = [c.chunk for c in self.knowledge.index.snapshot.chunks]

    def of(self, case: Case) -> tuple[CallMemory, CallCore]:
        return self._calls.setdefault(case.call, (CallMemory(), CallCore(CallLimits(0.0, 1e9, 1e9, 1e9))))


def ask(calls: Calls, case: Case, listen: Listen,
        listen_again: Listen | None = None) -> tuple[list[dict], Reply | None]:
    """The case's question asked until it is answered (or declined), the caller asked to repeat or confirm at most
    MAX_EXCHANGES times; every exchange, and the reply that was spoken (None: none was). `listen_again`: how the
    agent's second recogniser hears it, when it has one (call.understanding.hear_again)."""
    knowledge = calls.knowledge
    memory, core = calls.of(case)
    said, stretch, exchanges, answer = case.say, 1.0, [], None
    while answer is None and len(exchanges) < MAX_EXCHANGES:
        again = partial(listen_again, said, stretch) if listen_again is not None else None
        heard = hear(knowledge, memory, listen(said, stretch), core.clarified, again)
        transcript, understanding = heard.transcript, heard.understanding
        reply = understanding.reply if understanding else None
        outcome, commands = core.heard(
            understanding.chosen.hypothesis.text if understanding else transcript.text,
            action=understanding.action if understanding else None, abstained=bool(reply and reply.abstained),
            chunks=frozenset(s.chunk_id for s in reply.sources) if reply else frozenset(), reply=reply)
        exchanges.append(_exchange(said, transcript, outcome, understanding, heard.first_heard))
        for command in commands:
            if isinstance(command, SpeakReply):
                answer = command.reply
            elif isinstance(command, Confirm):
                said, stretch = reply_to_confirmation(understanding.topic, about(case, calls.chunks)), 1.0
            elif isinstance(command, Say):  # asked to say the question again
                said, stretch = case.say, REPEAT_STRETCH
        if outcome is TurnOutcome.IGNORED:
            break
    if answer is not None:
        knowledge.commit(memory, answer)
    return exchanges, answer


def _exchange(said: str, transcript: Transcript, outcome: TurnOutcome, understanding, first_heard: str) -> dict:
    reply = understanding.reply if understanding else None
    return {"said": said, "heard": transcript.text, "outcome": outcome.value, "heard_again_from": first_heard,
            "chosen": understanding.chosen.hypothesis.text if understanding else "",
            "topic": understanding.topic if understanding else "",
            "asr_ms": round((transcript.queue_s + transcript.decode_s) * 1000, 1),
            "avg_logprob": round(transcript.avg_logprob, 3),
            "evidence": round(reply.evidence, 3) if reply else None,
            "readings": [[r.hypothesis.text, round(r.hypothesis.avg_logprob, 3), round(r.reply.own_evidence, 3),
                          round(r.reply.evidence, 3), r.reply.abstained] for r in understanding.readings]
            if understanding else []}


def verdict(case: Case, exchanges: list[dict], answer: Reply | None) -> dict:
    """Whether the case ended right (a right answer, or a decline of an out-of-KB question), at once or after
    clarifying, or with a wrong answer (declines and clarifications are not wrong answers)."""
    answered = answer is not None and not answer.abstained
    correct = answer is not None and (answer.abstained if case.expect_abstain else answered and right_answer(
        case, answer.text, [s.heading for s in answer.sources]))
    return {"first_try": len(exchanges) == 1 and correct,
            "asked_again": sum(e["outcome"] in ("asked again", "not confirmed") for e in exchanges),
            "confirmations": sum(e["outcome"] == "confirming" for e in exchanges),
            "answer": answer.text if answer is not None else "", "abstained": answer is None or answer.abstained,
            "out_of_kb": case.expect_abstain, "correct": correct, "wrong_answer": answered and not correct}
