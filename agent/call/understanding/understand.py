"""What the caller asked, from what Whisper heard: the beam's readings weighed against the KB, then answered,
confirmed, asked again or declined.

Whisper's greedy best guess swaps key nouns for near-homophones ("engine" for "engineer", "villain spoilers"
for "Vaillant boilers"), and the KB then finds nothing. The beam's other readings often hold the right word
at almost the same acoustic score, so every distinct reading is looked up, and the one chosen is the best by
its acoustic score together with the KB's evidence for its own words. A less likely reading may only win by a
small acoustic margin, and when it turned a decline into an answer, when Whisper was unsure and the reading's
own words back the answer only moderately, or when Whisper was guessing, the agent confirms before it answers
("Are you asking about the gas safety certificate?"): yes answers it, no asks the caller to say it again. That
is how an out-of-KB question pulled onto a KB passage by a misreading is caught: the caller says no. When
nothing backs any reading and Whisper was unsure (or the KB nearly matched), the honest reply is to ask again;
a confident transcript the KB cannot answer is declined. A confident transcript the KB backs only moderately is
confirmed too when it holds a rare word the KB never uses: the caller most likely asks about that thing.

When the reading chosen finds nothing and the KB nearly matched it (or Whisper was unsure), and swapping the
transcript's real words for KB words they sound like ("smell grass" -> "smell gas", soundalike.guess) finds an
answer, that guess is confirmed instead of asking again, if the KB backs it firmly: one round trip either way,
and a yes the caller would otherwise never get the chance to give. A caller who repeats and is heard the same
way again is offered the guess then, rather than declined.

Each question gets at most one confirmation and one request to repeat; after that the agent answers what it
heard, or declines: what would need a second confirmation is declined rather than answered on the same doubt (the
call core names a confirmation once more to the question said again in the same words: see core.heard).
A no is the exception: the question said again is looked up without the topic refused, and what the KB finds next
is offered once more (never answered unasked: the agent's first idea was wrong); after a second no it declines.
Calibrated with eval.hearing on the bundled cases in three voices, clean and with babble at 10 dB, and checked on
the paraphrases (see docs/hearing.md). Pure, apart from `read`, which drafts a reply per reading (blocking: run it off
the event loop).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agent.call.commands import UNCLARIFIED, Action, Clarified
from agent.knowledge.base import KnowledgeBase, Reply
from agent.knowledge.memory import CallMemory
from agent.knowledge.text import stem_words, tokens
from agent.speech.asr import Hypothesis, Transcript
from agent.speech.window import MAX_COMPRESSION

UNSURE_LOGPROB = -0.35
"""Mean token log probability below which Whisper was unsure (clear questions score -0.05 to -0.25)."""
NO_SPEECH = 0.6
"""Whisper's own no-speech threshold: above it, what was heard may not have been speech at all."""
FIRM_EVIDENCE = 0.45
"""Evidence that answers without confirming, however the question was heard (the KB's own threshold is lower)."""
GUESSING_LOGPROB = -1.0
"""Mean token log probability below which Whisper was guessing at words, not just unsure of one: confirmed."""
GUESS_EVIDENCE = 0.42
"""Evidence a guess by sound needs, with and without the call's context, to be offered (always as a confirmation):
most of the way from the KB's threshold to a firm answer."""
GUESS_FLOOR = 0.2
"""Evidence under which a clearly heard question is plainly not the KB's: declined, with no guess by sound offered."""
GUESS_OWN_EVIDENCE = 0.35
"""Support an unsure reading's own words must find, without the call's context (Reply.own_evidence)."""
NEAR_MISS = 0.28
"""Evidence just short of the KB's threshold, at which a decline is asked again rather than given."""
ACOUSTIC_MARGIN = 0.3
"""How much less likely than the best reading (in mean token log probability) another may be and still win."""
EVIDENCE_WEIGHT = 2.0
"""How much the KB's evidence counts against the acoustic score when readings are weighed."""


@dataclass(frozen=True)
class Reading:
    """One reading of the utterance and the KB's reply to it."""

    hypothesis: Hypothesis
    reply: Reply
    by_sound: bool = False
    """A guess at KB words the transcript's real words sound like, not a reading of the beam: only confirmed."""


@dataclass(frozen=True)
class Understanding:
    """What the agent makes of one utterance."""

    action: Action
    chosen: Reading
    first: Reading
    """The best reading by sound alone (what Whisper heard first)."""
    readings: tuple[Reading, ...]
    """Every distinct reading weighed, best by sound first."""
    topic: str = ""
    """What a confirmation names (see knowledge.topic)."""

    @property
    def reply(self) -> Reply:
        return self.chosen.reply

    @property
    def firm(self) -> bool:
        """An answer the KB backs firmly, to be given as it stands."""
        return self.action is Action.ANSWER and not self.reply.abstained and self.reply.evidence >= FIRM_EVIDENCE

    @property
    def confirm_text(self) -> str:
        return f"Are you asking about {self.topic}?"


def distinct(hypotheses: tuple[Hypothesis, ...]) -> list[Hypothesis]:
    """The readings that differ in words, best first ('cost?' and 'cost.' are one reading)."""
    seen, out = set(), []
    for hypothesis in hypotheses:
        key = tuple(stem_words(hypothesis.text))
        if key and key not in seen:
            seen.add(key)
            out.append(hypothesis)
    return out


def read(knowledge: KnowledgeBase, memory: CallMemory, transcript: Transcript,
         rejected: frozenset[str] = frozenset()) -> list[Reading]:
    """The KB's draft reply to each distinct reading, best reading first, and when the KB declines them all a
    guess by sound at the first (see soundalike.guess) last; `rejected`: chunks the caller said no to, left out.
    Blocking: run off the event loop."""
    hypotheses = distinct(transcript.hypotheses) or [Hypothesis(transcript.text, transcript.avg_logprob)]
    replies = knowledge.draft_each(memory, [h.text for h in hypotheses], excluded=rejected)
    readings = [Reading(h, reply) for h, reply in zip(hypotheses, replies, strict=True)]
    # Only where understand will find nothing backed: an answer costs no extra look-up (nor does a decline whose
    # words are all the KB's or English: the guess swaps only words that are neither).
    declining = _backs_nothing(transcript, weigh(readings))
    guess, put_in = knowledge.guess_by_sound(hypotheses[0].text) if declining else ("", ())
    if guess:
        # The confirmation names the words guessed ("Are you asking about gas?"): they are what is in doubt.
        reply = replace(knowledge.draft(memory, guess, excluded=rejected), topic=" ".join(dict.fromkeys(put_in)))
        readings.append(Reading(Hypothesis(guess, hypotheses[0].avg_logprob), reply, by_sound=True))
    return readings


def weigh(readings: list[Reading]) -> Reading:
    """The reading to act on: the best by acoustic score plus the weighted evidence for its own words (the call's
    context is the same for every reading, and would back a reading that says nothing), among those the sound
    alone makes nearly as likely as the first."""
    first = readings[0]
    close = [r for r in readings if r.hypothesis.avg_logprob >= first.hypothesis.avg_logprob - ACOUSTIC_MARGIN]
    return max(close, key=lambda r: r.hypothesis.avg_logprob + EVIDENCE_WEIGHT * r.reply.own_evidence)


def worth_reading(transcript: Transcript) -> bool:
    """Words, not a cough or a click heard as '.'."""
    return len(transcript.text.strip(" .?!,")) >= 2


def unsure(transcript: Transcript) -> bool:
    """Whisper was unsure of what it heard, or it may not have been speech at all."""
    return (transcript.avg_logprob < UNSURE_LOGPROB or transcript.no_speech_prob > NO_SPEECH
            or transcript.compression_ratio > MAX_COMPRESSION)


def understand(transcript: Transcript, readings: list[Reading], clarified: Clarified = UNCLARIFIED,
               doubted: bool = False) -> Understanding:
    """Answer, confirm, ask again or decline (an ANSWER whose reply abstains). `doubted`: the utterance is in doubt
    whatever these readings say (another recogniser could not answer it), so an answer is confirmed first."""
    readings = [Reading(r.hypothesis, r.reply.declined(), r.by_sound) if _rejected(r.reply, clarified.rejected)
                else r for r in readings]
    # A guess by sound is a long shot: offered only where the KB backs its own words well (the call's context
    # backs any guess made during a run of questions on one topic).
    guesses = [r for r in readings if r.by_sound and not r.reply.abstained and r.reply.topic
               and min(r.reply.evidence, r.reply.own_evidence) >= GUESS_EVIDENCE]
    heard = [r for r in readings if not r.by_sound]
    first, chosen = heard[0], weigh(heard)
    ears_unsure = unsure(transcript)
    if _backs_nothing(transcript, chosen):
        chosen = Reading(chosen.hypothesis, chosen.reply.declined()) if not chosen.reply.abstained else chosen
        worth_asking = _worth_asking_again(transcript, chosen.reply.evidence)
        # A well-backed guess by sound is offered where the agent would ask again or decline, and still after the
        # caller has repeated the question: better than declining words it has now heard twice the same way.
        if guesses and clarified.may_confirm and (worth_asking or chosen.reply.evidence >= GUESS_FLOOR):
            return Understanding(Action.CONFIRM, guesses[0], first, tuple(readings), guesses[0].reply.topic)
        action = Action.ASK_AGAIN if worth_asking and not clarified.asked_again else Action.ANSWER
        return Understanding(action, chosen, first, tuple(readings))
    # An unsure reading is judged by what its own words find; a guess is confirmed however well it matches, and so is
    # an answer that is firm only on a word recovered by sound ("How much is my croaking?" answered on "parking").
    backing = chosen.reply.own_evidence if ears_unsure else chosen.reply.evidence
    if chosen.reply.heard_evidence is not None:
        backing = min(backing, chosen.reply.heard_evidence)
    guessing = transcript.avg_logprob < GUESSING_LOGPROB
    topic = _topic(chosen.reply)
    # And an answer the KB backs only moderately is confirmed too, however clearly it was heard: the caller's yes
    # costs one exchange, a wrong answer costs their trust (the KB's evidence is the probability, fitted on the
    # development KBs, that the answer is right: see knowledge.answer).
    # After a no, the agent's first idea was wrong: what it has next is offered, never answered unasked.
    if guessing or doubted or backing < FIRM_EVIDENCE or clarified.rejected:
        if topic and clarified.may_confirm:
            return Understanding(Action.CONFIRM, chosen, first, tuple(readings), topic)
        # Its one confirmation spent (the caller said no, or could not be made out), or nothing to name that the
        # caller did not say: what would be confirmed is declined, not answered on the same doubt.
        return Understanding(Action.ANSWER, replace(chosen, reply=chosen.reply.declined()), first, tuple(readings))
    return Understanding(Action.ANSWER, chosen, first, tuple(readings))


def _backs_nothing(transcript: Transcript, chosen: Reading) -> bool:
    """The KB declines the reading chosen, or Whisper was unsure and its own words find nothing: a guess backed by
    the call's context alone ("Canon, I can sew it whenever I want." after an answer about the plan) is not
    understood, however well the context matches."""
    return chosen.reply.abstained or (unsure(transcript) and chosen.reply.own_evidence < GUESS_OWN_EVIDENCE)


def _worth_asking_again(transcript: Transcript, evidence: float) -> bool:
    """A question the KB declines is asked again when Whisper was unsure or the KB nearly answered it."""
    return unsure(transcript) or evidence >= NEAR_MISS


def _topic(reply: Reply) -> str:
    """What a confirmation names: the answer's own topic (knowledge.topic), else the heading it sits under; never
    the caller's own words alone, which a caller says yes to whatever the answer is about."""
    heading = reply.sources[0].heading.rpartition(" > ")[2] if reply.sources else ""
    if set(tokens(heading)) <= set(tokens(reply.question)):
        heading = ""
    return reply.topic or heading


def _rejected(reply: Reply, rejected: frozenset[str]) -> bool:
    return not reply.abstained and bool(rejected) and all(s.chunk_id in rejected for s in reply.sources)
