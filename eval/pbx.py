"""The replay eval through the PBX: each call of the cases placed twice in one run against one agent, directly and
through the bundled Asterisk (a softphone registered with it as 6001, dialling 100 over its plain UDP trunk), so
what the hop adds to latency and whether it changes an answer are measured side by side; and every call Asterisk
recorded (MixMonitor, RECORD_CALLS=yes) is scored again as a recorded call, as an owner's recordings would be.

The Asterisk is the bundled image (agent.deploy.images), on a bridge network made for the run whose host side
also has the address the trunk names (172.28.0.10, as on the compose network), where the agent runs on this
machine; so this needs Docker Engine and the right to add an address (root, as the deployment tests).

    python -m eval.pbx --kb kb --cases eval/cases.jsonl --out var/eval/pbx [--limit N]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from agent.deploy import engine
from eval.kit import voices
from eval.kit.agent_process import REPO, AgentProcess
from eval.kit.call_scoring import score_call, score_recording, scorer
from eval.kit.cases import call_groups, load_cases
from eval.kit.placing import Repeats, kb_chunks, kb_hint, run_call
from eval.kit.ports import free_port_block
from eval.kit.recording import read_two_files
from eval.kit.report import percentile, summarize

AGENT, ASTERISK, SOFTPHONE, SUBNET = "172.28.0.10", "172.28.0.20", "172.28.0.1", "172.28.0.0/24"
"""The trunk's far end (pjsip.conf's agent-udp contact), Asterisk's address, the host's (where the callers are) and
their network, as on the compose network (docker-compose.yml)."""
PREFIX = "pbx-eval-"
"""Of the container and network a run makes."""
PASSWORD = "pbx-eval-softphone"
TOKEN = "pbx-eval-admin-token"
DIRECT_ROUTE = ("--address", SOFTPHONE, "--target", f"sip:100@{AGENT}:5060")
PBX_ROUTE = ("--address", SOFTPHONE, "--registrar", f"sip:{ASTERISK}", "--user", "6001", "--password", PASSWORD,
             "--target", f"sip:100@{ASTERISK}")
"""How the caller reaches the agent: straight to it, or as softphone 6001 registered with Asterisk, dialling 100."""


def asterisk_dials(contacts: str, aor: str) -> bool:
    """From `pjsip show contacts`: whether Asterisk would dial the AOR, i.e. it has a contact whose last qualify
    did not fail ("NonQual": a registered softphone never qualified)."""
    rows = [line.split() for line in contacts.splitlines()]
    return any(row[1].startswith(f"{aor}/") and row[3] in ("Avail", "NonQual")
               for row in rows if len(row) >= 4 and row[0] == "Contact:" and not row[1].startswith("<"))


def docker(*args: str, check: bool = True, timeout: float = 120) -> str:
    """agent.deploy.engine's docker command, its output as text."""
    return engine.docker(*args, check=check, timeout=timeout).stdout.decode(errors="replace")


def clear_leftovers() -> None:
    """The container and network of a run that was killed (its network would hold the subnet)."""
    for kind, listing in (("container", ("ps", "-a")), ("network", ("network", "ls"))):
        names = docker(*listing, "--filter", f"name={PREFIX}", "--format", "{{.Name}}", check=False).split()
        if names:
            docker(*((kind, "rm", "-f") if kind == "container" else ("network", "rm")), *names, check=False)


@contextlib.contextmanager
def bundled_asterisk(recordings: Path, tls: Path) -> Iterator[str]:
    """The bundled Asterisk recording every call into `recordings`, its trunk to AGENT over UDP; its container."""
    clear_leftovers()
    name = f"{PREFIX}{uuid.uuid4().hex[:6]}"
    for host, base in ((AGENT, "agent"), (ASTERISK, "asterisk")):  # start.sh insists on the TLS trunk's files
        subprocess.run([sys.executable, "-m", "agent", "tls-cert", str(tls / f"{base}.crt"), str(tls / f"{base}.key"),
                        host], cwd=REPO, check=True, capture_output=True, timeout=60)
    recordings.chmod(0o777)  # written by the container's asterisk user
    # No masquerading: Docker's NAT rule for the subnet would rewrite the direct caller's packets to the agent (one
    # host address to another) to the machine's main address, so the agent heard one address and was offered
    # another, and a caller once heard nothing of a whole call.
    network = docker("network", "create", "--driver", "bridge", "--subnet", SUBNET, "--gateway", SOFTPHONE,
                     "--opt", "com.docker.network.bridge.enable_ip_masquerade=false", name)
    try:
        # The agent's address beside the softphone's on the host's side of the bridge: Asterisk takes anything
        # from the agent's address for the trunk, so the softphone must register from another.
        subprocess.run(["ip", "address", "add", f"{AGENT}/32", "dev", f"br-{network.strip()[:12]}"], check=True,
                       capture_output=True, timeout=30)
        docker("run", "-d", "--name", name, "--network", name, "--ip", ASTERISK, "-e", f"SOFTPHONE_PASSWORD={PASSWORD}",
               "-e", "AGENT_TRUNK=agent-udp", "-e", "RECORD_CALLS=yes", "-v", f"{tls}:/opt/tls:ro",
               "-v", f"{recordings}:/var/spool/asterisk/monitor", "phone-agent-asterisk:latest")
        try:
            deadline = time.monotonic() + 120
            while "Asterisk Ready" not in docker("logs", name, check=False):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"Asterisk did not start: {docker('logs', name, check=False)[-2000:]}")
                time.sleep(1)
            yield name
        finally:
            docker("rm", "-f", name, check=False)
    finally:
        docker("network", "rm", name, check=False)


def wait_for_trunk(container: str, timeout_s: float = 60) -> None:
    """Until Asterisk's qualify finds the agent at the trunk's far end."""
    deadline = time.monotonic() + timeout_s
    while not asterisk_dials(docker("exec", container, "asterisk", "-rx", "pjsip show contacts"), "agent-udp"):
        if time.monotonic() > deadline:
            raise RuntimeError("Asterisk never reached the agent over its trunk")
        time.sleep(1)


def new_recording(recordings: Path, seen: set[str], timeout_s: float = 30) -> tuple[Path, Path] | None:
    """The caller's and the agent's legs of the call Asterisk recorded last, once both files are complete."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        fresh = sorted(p for p in recordings.glob("*-caller.wav") if p.name not in seen)
        if fresh:
            caller = fresh[-1]
            agent = caller.with_name(caller.name.replace("-caller.wav", "-agent.wav"))
            mixed = caller.with_name(caller.name.replace("-caller.wav", ".wav"))
            if agent.is_file() and mixed.is_file():  # MixMonitor writes the mix last, at the call's end
                seen.add(caller.name)
                return caller, agent
        time.sleep(0.5)
    return None


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m eval.pbx", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kb", type=Path, default=REPO / "kb")
    parser.add_argument("--cases", type=Path, default=REPO / "eval" / "cases.jsonl")
    parser.add_argument("--out", type=Path, default=Path("var/eval/pbx"))
    parser.add_argument("--limit", type=int, help="only the first N calls")
    parser.add_argument("--voices", default=",".join(voices.FLITE), help="caller voices, one call each in turn "
                        "(eval.kit.voices)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = arguments()
    args = parser.parse_args(argv)

    from agent import settings as settings_module
    from agent.deploy import images
    from agent.models.load import resolve_all
    from agent.speech.vad import SileroVad

    settings = settings_module.parse([], os.environ)
    resolved = resolve_all(settings)
    transcriber = scorer(resolved["asr"])
    vad = lambda: SileroVad.open(resolved["vad"].location)  # noqa: E731 - one per scored call
    chosen = list(call_groups(load_cases(args.cases)).items())[:args.limit or None]
    hint = kb_hint(args.kb)
    repeats = Repeats(kb_chunks(args.kb), hint)  # callers answer the agent's clarifications, as in eval.replay's
    callers = args.voices.split(",")
    images.build(images.ASTERISK, log=print, pull=False)  # on a base at hand or made from Debian's archive
    args.out.mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[dict]] = {"direct": [], "pbx": [], "recorded": []}
    with tempfile.TemporaryDirectory(prefix="pbx-eval-") as scratch:
        scratch_dir = Path(scratch)
        (scratch_dir / "tls").mkdir()
        recordings = args.out / "recordings"
        shutil.rmtree(recordings, ignore_errors=True)
        recordings.mkdir()
        with bundled_asterisk(recordings.resolve(), scratch_dir / "tls") as container:
            agent = AgentProcess(scratch_dir, (5060, free_port_block(110)), settings.models_path,
                                 kb_dir=args.kb.resolve(), sip_host=AGENT, sip_trusted_peers=f"{ASTERISK},{AGENT}",
                                 max_calls=2, inactivity_s=60, admin_token=TOKEN, speech_prerender="true")
            try:
                agent.wait_for("speech.prerendered", 1, timeout=600)
                wait_for_trunk(container)
                seen: set[str] = set()
                for index, (call_id, group) in enumerate(chosen):
                    # Alternating which goes first, so neither way always meets a freshly idle agent.
                    for way in ("direct", "pbx") if index % 2 == 0 else ("pbx", "direct"):
                        timeline = run_call(agent, call_id, group, args.out / way, "pcmu",
                                            callers[index % len(callers)], repeats=repeats,
                                            route=DIRECT_ROUTE if way == "direct" else PBX_ROUTE)
                        rows[way] += score_call(group, timeline, args.out / way / "calls" / call_id, transcriber,
                                                vad, hint)
                        if way == "pbx" and (legs := new_recording(recordings, seen)) is not None:
                            rows["recorded"] += score_recording(group, read_two_files(*legs), transcriber, vad, hint)
                    print(f"[{index + 1}/{len(chosen)}] call {call_id}: " + ", ".join(
                        f"{way} {sum(bool(r.get('correct')) for r in rows[way][-len(group):])}/{len(group)}"
                        for way in rows), flush=True)
            finally:
                agent.stop()
                shutil.copyfile(agent.log_path, args.out / "agent.log")
    report = compare(rows)
    (args.out / "report.json").write_text(json.dumps({**report, "cases": rows}, indent=2))
    print(json.dumps(report, indent=2))
    return 0


def compare(rows: dict[str, list[dict]]) -> dict:
    """Each way's summary, what the hop adds to latency (p50 and p95 of the per-question differences) and the
    questions whose verdict the hop changed."""
    direct = {r["id"]: r for r in rows["direct"]}
    paired = [(direct[r["id"]], r) for r in rows["pbx"] if r["id"] in direct]
    added = [p["latency_ms"] - d["latency_ms"] for d, p in paired
             if d.get("latency_ms") is not None and p.get("latency_ms") is not None]
    return {"summary": {way: summarize(found) for way, found in rows.items()},
            "pbx_added_ms": {"p50": percentile(added, 50), "p95": percentile(added, 95), "n": len(added)},
            "verdict_changed": [p["id"] for d, p in paired if d.get("correct") != p.get("correct")]}


if __name__ == "__main__":
    sys.exit(main())
