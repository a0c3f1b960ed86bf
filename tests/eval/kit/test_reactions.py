"""The scripted caller's replies to the agent's clarifications: a script it could not follow is refused up front."""

import pytest

from eval.kit.reactions import Reactions


def test_a_step_that_may_be_reacted_to_without_the_question_said_again_is_refused_before_the_call():
    # Found mid-call, the missing reply ended the caller's run the first time the agent asked to hear it again.
    step = {"audio": "q.wav", "about": ["gas"], "yes_audio": "yes.wav", "no_audio": "no.wav"}
    with pytest.raises(ValueError, match="repeat_audio"):
        Reactions([step], "", load_wav=None)
    Reactions([{**step, "repeat_audio": "q.wav"}, {"audio": "plain.wav"}], "", load_wav=None)
