"""`python -m agent run` with one fault no real peer can cause: the VAD breaks once, mid-call, as a lost
onnxruntime session would, after the number of windows given as the first argument. Every other part of
the agent is the real one (tests/call/test_audio_fault.py calls it from a real SIP caller).

    python -m tests.call.faulty_agent WINDOWS
"""

import sys

from agent.__main__ import main
from agent.speech.vad import SileroModel

_run = SileroModel.run_streams
_windows_left = int(sys.argv[1])


def _breaks_once(self: SileroModel, streams):
    global _windows_left
    before, _windows_left = _windows_left, _windows_left - sum(len(windows) for windows, _ in streams)
    if before > 0 >= _windows_left:
        raise RuntimeError("onnxruntime session lost")
    return _run(self, streams)


SileroModel.run_streams = _breaks_once
sys.exit(main(["run"]))
