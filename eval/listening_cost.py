"""What calls cost the agent while nobody speaks: agent CPU per call while the caller is silent, by thread.

Every call costs the agent something on every 20 ms tick, whether or not anyone talks: pjsua's media clock
calls the call's conference port twice a tick (Python, holding the GIL), the bridge resamples, each frame
crosses to the event loop, and Silero VAD runs on every 32 ms window. With a question every 20 s this, not
Whisper, is most of a call's CPU (see eval.load's CPU per turn). Silent callers from eval/kit/rtp_caller.py (one
process, a few percent of a core) call one agent; its threads are read from /proc before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from eval.kit.agent_process import AgentProcess
from eval.kit.machine import spent_by_thread, thread_cpu
from eval.kit.ports import free_port_block
from eval.kit.rtp_caller import TICK_S, Script, place_call


def cost(before: dict[str, float], after: dict[str, float], seconds: float, calls: int) -> dict:
    """Cores the agent used, in all, per call, and per call by thread name (threads named alike are summed);
    with no calls, what the agent costs doing nothing, by thread."""
    spent = spent_by_thread(before, after)
    cores = sum(spent.values()) / seconds
    return {"calls": calls, "seconds": round(seconds, 1), "cores": round(cores, 4),
            "cores_per_call": round(cores / calls, 4) if calls else None,
            "by_thread": {name: round(cpu / seconds / max(calls, 1), 4) for name, cpu in spent.items() if cpu > 0}}


def measure(agent: AgentProcess, calls: int, seconds: float) -> dict:
    script = Script(ticks=round(seconds / TICK_S))

    async def silent_calls() -> list:
        return await asyncio.gather(*(place_call("127.0.0.1", agent.sip_port, script) for _ in range(calls)))

    before, started = thread_cpu(agent.process.pid), time.monotonic()
    if calls:
        results = asyncio.run(silent_calls())
        if any(r.status != 200 for r in results):
            raise SystemExit(f"a call was refused: {[r.status for r in results]}")
    else:
        time.sleep(seconds)
    return cost(before, thread_cpu(agent.process.pid), time.monotonic() - started, calls)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.listening_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--calls", default="0,1,4", help="silent calls at once, one level after another (0: the "
                        "agent alone; at most what pjsua2 holds: python -m agent check)")
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--kb", type=Path, default=Path("kb"))
    parser.add_argument("--json", type=Path, help="also write every level's figures here, as one JSON list")
    args = parser.parse_args(argv)

    from agent import settings as settings_module
    from agent.sip.build_info import installed

    settings = settings_module.parse([], os.environ)
    levels = [int(n) for n in args.calls.split(",")]
    if max(levels) > installed().max_calls:
        parser.error(f"{max(levels)} calls: {installed().describe()}")
    with tempfile.TemporaryDirectory(prefix="listening-agent-") as scratch:
        agent = AgentProcess(Path(scratch), (free_port_block(110), free_port_block(110)), settings.models_path,
                             kb_dir=args.kb.resolve(), max_calls=max(1, *levels), inactivity_s=int(args.seconds) + 60,
                             cpu_target=0, speech_prerender="true")
        try:
            agent.wait_for("speech.prerendered", 1, timeout=600)  # its rendering is not a call's cost
            measured = []
            for calls in levels:
                measured.append(measure(agent, calls, args.seconds))
                print(json.dumps(measured[-1]), flush=True)
        finally:
            agent.stop()
    if args.json:
        args.json.write_text(json.dumps(measured, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
