"""Whether the agent heard a question well enough to answer it, or should ask the caller to repeat it.

A misheard key word ("warranty" heard as "what will our empty") leaves the KB with weak evidence, and
the agent would claim it has no information about something it does know. When Whisper itself was
unsure of what it heard and the KB found nothing convincing either, the honest reply is to ask again.
Either signal alone is not enough: a confident transcript with no match is a question the KB cannot
answer, and an unsure transcript that still matches the KB well was heard well enough. Calibrated with
eval.hearing on the bundled cases in three voices (see README).
"""

from __future__ import annotations

from agent.knowledge.base import Reply
from agent.speech.asr import MAX_COMPRESSION, Transcript

ASK_AGAIN_TEXT = "Sorry, I didn't catch that. Could you say it again?"
UNSURE_LOGPROB = -0.35
"""Mean token log probability below which Whisper was guessing (clear questions score -0.05 to -0.25)."""
NO_SPEECH = 0.6
"""Whisper's own no-speech threshold: above it, what was heard may not have been speech at all."""


def should_ask_again(transcript: Transcript, reply: Reply, asked_just_before: bool) -> bool:
    """Ask the caller to repeat when the ears were unsure and the KB found nothing; never twice running
    (after a repeat that was still unclear, the agent says what it can and cannot help with)."""
    unsure_ears = (transcript.avg_logprob < UNSURE_LOGPROB or transcript.no_speech_prob > NO_SPEECH
                   or transcript.compression_ratio > MAX_COMPRESSION)
    return unsure_ears and reply.abstained and not asked_just_before
