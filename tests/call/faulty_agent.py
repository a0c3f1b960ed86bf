"""`python -m agent run` with one fault no real peer can cause: the VAD breaks once, mid-call, as a lost
onnxruntime session would, after the number of windows given as the first argument. Every other part of
the agent is the real one (tests/call/test_audio_fault.py calls it from a real SIP caller).

    python -m tests.call.faulty_agent WINDOWS
"""

import sys

from agent.__main__ import main
from agent.speech.vad import SileroVad

_heard = SileroVad.window_probability
_windows_left = int(sys.argv[1])


def _breaks_once(self: SileroVad, samples):
    global _windows_left
    _windows_left -= 1
    if _windows_left == 0:
        raise RuntimeError("onnxruntime session lost")
    return _heard(self, samples)


SileroVad.window_probability = _breaks_once
sys.exit(main(["run"]))
