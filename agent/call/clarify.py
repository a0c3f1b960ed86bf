"""Whether the agent heard a question well enough to answer it, or should listen again or ask the caller to
repeat it.

A misheard key word ("warranty" heard as "what will our empty") leaves the KB with weak evidence, and
the agent would claim it has no information about something it does know. When Whisper itself was
unsure of what it heard and the KB found nothing convincing either, the agent first listens again, more
carefully: the same audio decoded with beam search. If that finds an answer the KB backs, it is given;
otherwise the honest reply is to ask again. A confident transcript with no match is a question the KB
cannot answer, and an unsure transcript that still matches the KB well was heard well enough: neither
is listened to again. On a noisy line Whisper guesses whole phrases out of the noise ("And then we can't
know."), and a guess can still half-match some passage: when Whisper was guessing and the KB's match is
only middling, that is treated like no match, so the caller is asked again instead of being answered a
question they did not ask. Calibrated with eval.hearing on the bundled cases in three voices, clean and
with babble at 10 dB (see README).
(Matching the second listen's English words against KB words by sound as well, "grass" for "gas", was
tried and dropped: on eval.hearing it answered two out-of-KB questions.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agent.knowledge.base import KnowledgeBase, Reply
from agent.knowledge.memory import CallMemory
from agent.speech.asr import MAX_COMPRESSION, Transcriber, Transcript

ASK_AGAIN_TEXT = "Sorry, I didn't catch that. Could you say it again?"
UNSURE_LOGPROB = -0.35
"""Mean token log probability below which Whisper was guessing (clear questions score -0.05 to -0.25)."""
NO_SPEECH = 0.6
"""Whisper's own no-speech threshold: above it, what was heard may not have been speech at all."""
GUESSING_LOGPROB = -0.5
"""Mean token log probability below which Whisper was guessing at words, not just unsure of one."""
FIRM_EVIDENCE = 0.45
"""Evidence a guessed transcript needs before it is answered (the KB's own threshold is lower)."""
CAREFUL_BEAM = 5
"""Beam width of the second listen: greedy decoding drops or swaps words that a beam keeps ("castle at an"
for "Castleton" where greedy wrote "car select an")."""


def doubtful(transcript: Transcript, reply: Reply) -> bool:
    """Whether `reply` rests on a transcript too unsure for it: the ears were unsure and the KB found
    nothing, or Whisper was guessing and the KB's match is only middling."""
    unsure_ears = (transcript.avg_logprob < UNSURE_LOGPROB or transcript.no_speech_prob > NO_SPEECH
                   or transcript.compression_ratio > MAX_COMPRESSION)
    guessed = transcript.avg_logprob < GUESSING_LOGPROB and reply.evidence < FIRM_EVIDENCE
    return unsure_ears and (reply.abstained or guessed)


def should_ask_again(transcript: Transcript, reply: Reply, asked_just_before: bool) -> bool:
    """Ask the caller to repeat a doubtful question; never twice running (after a repeat that was still
    unclear, the agent answers what it heard, or says what it can and cannot help with)."""
    return doubtful(transcript, reply) and not asked_just_before


@dataclass(frozen=True)
class SecondListen:
    transcript: Transcript
    reply: Reply

    @property
    def found(self) -> bool:
        """Whether the second listen heard a question the KB backs (if not, ask the caller again)."""
        return not doubtful(self.transcript, self.reply)


def listen_again(transcriber: Transcriber, knowledge: KnowledgeBase, memory: CallMemory, audio: np.ndarray,
                 prompt: str | None) -> SecondListen:
    """The careful second listen, before asking the caller to repeat. Blocking: run off the event loop."""
    transcript = transcriber.transcribe(audio, prompt, beam_size=CAREFUL_BEAM)
    return SecondListen(transcript, knowledge.draft(memory, transcript.text))
