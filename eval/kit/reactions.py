"""A scripted caller's ears and replies: after each answer it hears what the agent said (Whisper), and says
what the person who asked would say to it (eval.kit.repeats): the question again, yes, or no.

Shared by the eval callers (a script step that carries `about`, `repeat_audio`, `yes_audio` and `no_audio`
can be reacted to). Each step said is remembered with the case it belongs to and its kind (question,
repeat, yes, no), so the replay can score every case by its last answer.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np

from eval.kit.repeats import MAX_REACTIONS, YES, reaction

KINDS = {"repeat": "repeat", YES: "yes"}
EARS_BEAM = 5
"""The caller hears the agent's clarification with a beam: a person knows the business's names when the agent
says them, and greedy decoding heard "Are you asking about the Milber office?" (the caller said no to a right
confirmation). The scorer keeps greedy decoding over whole answers: a prompted beam may end its transcript
after an answer's first sentence: re-scoring two replays, greedy missed one right answer ("re-bigween 12 and
15 psi", in one run), a beam of 5 one in each ("… before it starts.", the $40 fee sentence dropped)."""


class Reactions:
    def __init__(self, script: list[dict], hint: str, load_wav) -> None:
        """`script`: the script file's steps; `load_wav(path)`: 16 kHz int16 audio of a WAV."""
        missing = sorted({f"{kind}_audio" for entry in script if "about" in entry for kind in ("repeat", "yes", "no")
                          if f"{kind}_audio" not in entry})
        if missing:  # found mid-call, it would end the call the first time the caller needed that reply
            raise ValueError(f"a script step that carries 'about' also needs {', '.join(missing)}")
        self._script, self._hint, self._load_wav = script, hint, load_wav
        self.cases = list(range(len(script)))
        """The case of every step said so far and to come, in order."""
        self.kinds = ["question"] * len(script)
        self.heard: dict[int, str] = {}
        """What the caller heard the agent say after each step it listened to, by the step's number."""
        self._counts: Counter[int] = Counter()
        self._ears = None

    def _transcriber(self):
        if self._ears is None:  # loaded on first use: a caller that never reacts needs no model
            from agent import settings as settings_module
            from agent.models.manifest import load_manifest
            from agent.models.verify import resolve
            from agent.speech.asr import Transcriber

            settings = settings_module.parse([], os.environ)
            model = resolve("asr", settings.asr_model, settings.asr_model_path, settings.models_path,
                            load_manifest())
            self._ears = Transcriber(model, threads=1, beam_size=EARS_BEAM)
        return self._ears

    def reply(self, n: int, received: np.ndarray) -> np.ndarray | None:
        """The audio to say after step `n`, whose answer is `received` (16 kHz int16), or None to move on."""
        case = self.cases[n]
        entry = self._script[case]
        if "about" not in entry or self._counts[case] >= MAX_REACTIONS or not len(received):
            return None
        heard = self._transcriber().transcribe(received.astype(np.float32) / 32768, self._hint).text
        self.heard[n] = heard
        said = reaction(heard, frozenset(entry["about"]))
        if said is None:
            return None
        self._counts[case] += 1
        kind = KINDS.get(said, "no")
        self.cases.insert(n + 1, case)
        self.kinds.insert(n + 1, kind)
        return self._load_wav(Path(entry[f"{kind}_audio"]))
