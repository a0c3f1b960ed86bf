"""The owner told while their webhook receiver is down: callers leave messages over real SIP calls while the
receiver is stopped; once it is back, every message's event must arrive once, signed, in the order the agent
raised them (a message's event is raised when its transcript is ready, so two callers' messages that end close
together may be told of in either order: the report says whether that matched the order they ended), with nothing
lost.

Target (issue 47): receiver down for 60 s while 10 messages are left -> all 10 delivered once, in order, after it
is back. Prints and writes (--out/notify.json) what was delivered, duplicates, order, the seconds from the
receiver's return to the last delivery, and the agent's retried attempts (agent_notifications_total).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from eval.kit.agent_process import REPO, AgentProcess
from eval.kit.owner import WebhookReceiver
from eval.kit.placing import spoken
from eval.kit.ports import free_port_block

SECRET = "eval-notify-secret-0123456789"
TOKEN = "eval-notify-token-0123456789"
ASK = "Can I leave a message, please?"
MESSAGE = "Hello, this is caller number {n}. Please call me back about my boiler, my number is five five five {n}."


def leave_message(agent: AgentProcess, n: int, folder: Path, voice: str) -> dict:
    """One real call: the caller asks to leave a message, then says it."""
    steps = [{"audio": str(spoken(ASK, f"ask-{n}", folder, voice))},
             {"audio": str(spoken(MESSAGE.format(n=n), f"message-{n}", folder, voice))}]
    call_dir = folder / f"call-{n}"
    call_dir.mkdir()
    (call_dir / "script.json").write_text(json.dumps(steps))
    base = free_port_block(110)
    command = [sys.executable, "-m", "eval.kit.caller", "--target", agent.uri, "--port", str(base), "--rtp-port",
               str(base + 2), "--script", str(call_dir / "script.json"), "--duration", "45", "--out", str(call_dir)]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    return {"call": n, "ok": result.returncode == 0, "error": result.stderr.strip()[-300:] if result.returncode else ""}


def retried(agent: AgentProcess) -> int:
    for line in agent.http("GET", "/metrics").text.splitlines():
        if line.startswith('agent_notifications_total{channel="webhook",result="retried"}'):
            return int(float(line.split()[-1]))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.notify", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=10, help="messages left while the receiver is down")
    parser.add_argument("--down-s", type=float, default=60.0, help="how long the receiver is down, at least")
    parser.add_argument("--concurrency", type=int, default=2, help="calls at once")
    parser.add_argument("--voice", default="flite:slt")
    parser.add_argument("--out", type=Path, default=Path("var/eval/notify"))
    args = parser.parse_args(argv)

    from agent import settings as settings_module

    settings = settings_module.parse([], os.environ)
    args.out.mkdir(parents=True, exist_ok=True)
    receiver = WebhookReceiver(SECRET)  # not started: down from the first call on
    with tempfile.TemporaryDirectory(prefix="notify-eval-") as scratch:
        folder = Path(scratch)
        agent = AgentProcess(folder, (free_port_block(110), free_port_block(110)), settings.models_path,
                             max_calls=max(2, args.concurrency), inactivity_s=60, admin_token=TOKEN,
                             message_silence_s=2, webhook_url=receiver.url, webhook_secret=SECRET)
        try:
            down_at = time.monotonic()
            with ThreadPoolExecutor(args.concurrency) as pool:
                calls = list(pool.map(lambda n: leave_message(agent, n, folder, args.voice), range(args.messages)))
            left = agent.http("GET", "/messages?limit=1000", TOKEN).json()["messages"]
            time.sleep(max(0.0, down_at + args.down_s - time.monotonic()))
            down_s = time.monotonic() - down_at
            receiver.start()
            back_at = time.monotonic()
            got = [r for r in receiver.wait_for(len(left), timeout=180) if r["body"]["type"] == "message.left"]
            last_s = time.monotonic() - back_at
            retries = retried(agent)
        finally:
            agent.stop()
            receiver.stop()
    by_end = [m["id"] for m in sorted(left, key=lambda m: m["started"] + m["seconds"])]
    delivered = [r["body"]["message"]["id"] for r in got]
    by_event = [r["body"]["message"]["id"] for r in sorted(got, key=lambda r: r["body"]["created"])]
    report = {"calls": len(calls), "calls_failed": [c for c in calls if not c["ok"]], "messages_left": len(left),
              "receiver_down_s": round(down_s, 1), "delivered": len(set(delivered)),
              "duplicates": len(delivered) - len(set(delivered)), "in_order": delivered == by_event,
              "in_the_order_messages_ended": delivered == by_end,
              "all_signed": all(r["signed"] for r in got), "last_delivery_after_back_s": round(last_s, 1),
              "attempts_retried": retries,
              "target_met": len(left) == args.messages and len(delivered) == len(left) and delivered == by_event}
    (args.out / "notify.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    return 0 if report["target_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
