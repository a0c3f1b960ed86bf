"""The agent's voice: what Piper renders, as the caller hears it."""

import numpy as np

from agent.call.speaking.voice import LEAD_MS, QUIET_LEVEL, Voice
from agent.sip.port import BRIDGE_RATE


def test_an_answer_starts_within_the_lead_of_its_first_sound_not_after_pipers_silence(models):
    voice = Voice(models.synthesizer, BRIDGE_RATE)
    for text in ("Are you asking about gas?", "Our office is open from 8 a.m. to 6 p.m."):
        audio = voice.speak(text)
        first_sound = int(np.flatnonzero(np.abs(audio.astype(np.int32)) > QUIET_LEVEL)[0])
        assert first_sound <= BRIDGE_RATE * LEAD_MS // 1000 and len(audio) > BRIDGE_RATE // 2
