"""Command line: `python -m agent [run|check|models ...]`, with every setting as a flag."""

from __future__ import annotations

from agent.heap import keep_heaps_small

keep_heaps_small()  # first of all: numpy's BLAS starts threads as it is imported

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from concurrent.futures import Executor
from dataclasses import replace
from pathlib import Path

import uvicorn

from agent import __version__, logs
from agent import settings as settings_module
from agent.app import Agent
from agent.browser.call import gather_on
from agent.call.speaking.voice import Voice
from agent.call.workers import ModelWorkers, Priority
from agent.dialplan import Dialplan, DialplanError, load_dialplan
from agent.knowledge.base import KnowledgeBase, open_knowledge
from agent.logs import event
from agent.models.load import Models, load_all, load_voices, resolve_all
from agent.models.verify import ModelError, identity
from agent.owner_commands import command_check, command_kb, command_models
from agent.progress import Progress
from agent.settings import Settings, SettingsError
from agent.side.http import create_app
from agent.side.kb_sync import share_reindexing
from agent.side.messages import MessageStore
from agent.side.metrics import Metrics
from agent.side.notify.config import notify_config
from agent.side.notify.notifier import open_notifier
from agent.side.recordings import purge as purge_recordings
from agent.side.records import CallStore, SqliteCallStore, StoreError
from agent.side.reporter import Reporter
from agent.side.state import SideState
from agent.side.turn_audio import purge as purge_turn_audio
from agent.sip.build_info import installed as installed_pjsua2
from agent.sip.port import BRIDGE_RATE
from agent.sip.security import make_self_signed
from agent.stages import knowledge_config, side_config

log = logging.getLogger("agent")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agent",
        description="Offline telephone voice agent: answers SIP calls from the documents in kb/.",
        epilog="Every setting can also be given as an environment variable AGENT_<NAME>, e.g. AGENT_SIP_PORT=5070.")
    parser.add_argument("--version", action="version", version=f"agent {__version__}")
    settings_module.add_arguments(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    shared = argparse.ArgumentParser(add_help=False, argument_default=argparse.SUPPRESS)
    settings_module.add_arguments(shared)
    commands.add_parser("run", parents=[shared], help="answer calls (the default)")
    commands.add_parser("check", parents=[shared], help="load and verify every model, print names, sizes, versions")
    models = commands.add_parser("models", parents=[shared], help="install or list offline models")
    models.add_argument("action", choices=("fetch", "list"))
    models.add_argument("names", nargs="*", help="manifest names to fetch (default: the default models and "
                        "any manifest model the settings choose)")
    models.add_argument("--all", action="store_true", help="fetch every model in the manifest")
    kb = commands.add_parser("kb", parents=[shared], help="refresh the KB index, or ask it a question")
    kb.add_argument("action", choices=("refresh", "ask"))
    kb.add_argument("question", nargs="*", help="for ask: the question, as a caller would say it")
    kb.add_argument("--extension", default="", help="for ask: the dialled extension choosing the profile")
    cert = commands.add_parser("tls-cert", help="write a self-signed certificate and key for SIP over TLS, unless "
                               "a usable pair is already there (a trunk from a PBX that does not verify it)")
    cert.add_argument("cert", type=Path, help="the certificate file (PEM), e.g. AGENT_SIP_TLS_CERT")
    cert.add_argument("key", type=Path, help="the private key file (PEM, unencrypted), e.g. AGENT_SIP_TLS_KEY")
    cert.add_argument("names", nargs="+", help="the agent's IP addresses or host names")
    cert.add_argument("--days", type=int, default=825)
    return parser


class _HttpServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self):  # the agent handles SIGINT/SIGTERM itself
        yield


async def _purge_daily(store: CallStore, messages: MessageStore, days: int, turn_audio_dir: Path | None,
                       recordings_dir: Path) -> None:
    while True:
        try:
            purged = await asyncio.to_thread(store.purge, time.time() - days * 86400)
            gone = await asyncio.to_thread(messages.purge, time.time() - days * 86400)
            heard = await asyncio.to_thread(purge_turn_audio, turn_audio_dir, time.time() - days * 86400) \
                if turn_audio_dir else 0
            recorded = await asyncio.to_thread(purge_recordings, recordings_dir, time.time() - days * 86400)
            event(log, "records.purged", calls=purged, messages=gone, turn_audio_calls=heard, recordings=recorded,
                  retention_days=days)
            await asyncio.sleep(86400)
        except Exception as exc:  # a locked or full store: try again in an hour
            event(log, "records.purge_failed", logging.WARNING, error=type(exc).__name__)
            await asyncio.sleep(3600)


def where_to_call(settings: Settings) -> str:
    """What a newcomer needs once the agent is ready: where to call it, and where its side app is."""
    http = f"http://{settings.http_host}:{settings.http_port}"
    sip = f"sip:agent@{settings.sip_host}:{settings.sip_port}"
    lines = ["", "The agent is ready. Call it:",
             f"  phone     {sip}  (a softphone, or: baresip -e \"/dial {sip}\")"]
    lines.append(f"  browser   {http}/phone" if settings.web_phone else
                 "  browser   off (AGENT_WEB_PHONE=true make run serves a phone page at /phone)")
    lines += [f"  side app  {http}/readyz, {http}/metrics" + (
              f", {http}/dashboard (token: AGENT_ADMIN_TOKEN)" if settings.admin_token else
              " (set AGENT_ADMIN_TOKEN for calls, messages and the dashboard)"), ""]
    return "\n".join(lines)


def open_call_store(settings: Settings) -> CallStore:
    """PostgreSQL when AGENT_DATABASE_URL is set (reached now if it can be: a schema newer than this code stops
    start-up; a database that is down only delays the records), else SQLite under the data directory."""
    if not settings.database_url:
        return SqliteCallStore(settings.records_path, settings.instance_name)
    from agent.side.records_pg import PostgresCallStore

    store = PostgresCallStore(settings.database_url, settings.instance_name)
    try:
        store.connect()
    except StoreError:
        raise  # a newer agent migrated the records: this one must not write them
    except Exception as exc:
        event(log, "records.database_unreachable", logging.WARNING, error=type(exc).__name__)
    return store


def open_message_store(settings: Settings, records: CallStore):
    """The shared database's messages table beside its call records, else the messages folder."""
    if settings.database_url:
        from agent.side.messages_pg import PostgresMessageStore

        return PostgresMessageStore(records)
    return MessageStore(settings.messages_path, settings.instance_name)


async def serve(settings: Settings, dialplan: Dialplan) -> None:
    """Start the side app first (so probes see readiness change), then models, KB and SIP."""
    stop = _set_on_signals()
    metrics, store = Metrics(settings.metrics_window_s), await asyncio.to_thread(open_call_store, settings)
    state = SideState(side_config(settings), metrics, store, messages=open_message_store(settings, store))
    server = _HttpServer(uvicorn.Config(create_app(state), host=settings.http_host, port=settings.http_port,
                                        log_config=None, access_log=False, lifespan="off"))
    http = asyncio.create_task(server.serve())
    purge = asyncio.create_task(_purge_daily(store, state.messages, settings.records_retention_days,
                                             settings.turn_audio_dir, settings.recordings_path))
    # Room for every ASR worker plus speech synthesis and embedding at the same time; urgent turns first.
    workers = ModelWorkers(settings.model_threads + settings.asr_workers)
    agent: Agent | None = None
    kb_listener = notifier = None
    try:
        resolved = resolve_all(settings)
        models = await asyncio.to_thread(load_all, settings, resolved)
        metrics.count_decodes(models.transcriber)
        synthesizers = await asyncio.to_thread(load_voices, settings, dialplan.voices(), models.synthesizer)
        state.embed, state.background = models.embedder.embed, workers.lane(Priority.BACKGROUND)
        del state.not_ready["models"]
        state.knowledge = knowledge = await _knowledge_bases(settings, dialplan, models, identity(resolved["embedder"]),
                                                             workers.lane(Priority.BACKGROUND))
        del state.not_ready["kb"]
        kb_listener = await asyncio.to_thread(share_reindexing, settings.database_url, settings.instance_name, store,
                                              knowledge, state)
        voices = {name: Voice(synthesizer, BRIDGE_RATE, settings.data_dir / "speech", metrics.speech_lookup)
                  for name, synthesizer in synthesizers.items()}
        notifier = open_notifier(notify_config(settings), settings.data_dir / "notifications.sqlite3",
                                 settings.instance_name, store, models.embedder.embed, metrics)
        reporter = Reporter(metrics, store, state.messages, settings.data_dir / "records.spill", notifier,
                            share_recordings=bool(settings.database_url))
        agent = Agent(settings, models, dialplan, knowledge, voices, workers, reporter,
                      on_registration=metrics.registration, on_refused=metrics.refusal,
                      on_render_backlog=metrics.render_backlog.set, on_capacity=metrics.spare_calls.set)
        state.registration = lambda: agent.registration
        await agent.start()
        if settings.web_phone:
            gather_on(settings.web_phone_address)
        state.sip_listening, state.spare_calls, state.open_call = (lambda: agent.sip_listening,
                                                                   lambda: agent.spare_calls, agent.open_call)
        del state.not_ready["sip"]
        _ready(settings, dialplan)
        await stop.wait()
        state.not_ready["shutdown"] = "draining calls"
        await agent.drain(settings.drain_s)
        await reporter.flush(10)
    finally:
        if agent is not None:
            await agent.stop()
        if kb_listener is not None:
            await asyncio.to_thread(kb_listener.stop)
        if notifier is not None:
            await asyncio.to_thread(notifier.stop)
        purge.cancel()
        server.should_exit = True
        await http
        workers.shutdown(wait=False, cancel_futures=True)
        event(log, "agent.stopped")


def _set_on_signals() -> asyncio.Event:
    """An event SIGINT or SIGTERM sets: the agent drains its calls and stops."""
    stop, loop = asyncio.Event(), asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    return stop


async def _knowledge_bases(settings: Settings, dialplan: Dialplan, models: Models, embedder_identity: str,
                           background: Executor) -> dict[str, KnowledgeBase]:
    """Each profile's KB, indexed (only what changed since the last start is embedded again) and ready."""
    knowledge = {}
    for profile in dialplan.profiles:
        knowledge[profile.name] = open_knowledge(knowledge_config(settings, profile.kb_dir, profile.index_path),
                                                 models.embedder, embedder_identity, background)
        await asyncio.to_thread(knowledge[profile.name].index.refresh, Progress("embedding kb", "texts"))
        await asyncio.to_thread(knowledge[profile.name].prepare)
    return knowledge


def _ready(settings: Settings, dialplan: Dialplan) -> None:
    event(log, "agent.ready", sip=f"{settings.sip_host}:{settings.sip_port}",
          http=f"{settings.http_host}:{settings.http_port}", models=settings.models_path,
          profiles=",".join(f"{p.name}:{p.kb_dir}" for p in dialplan.profiles))
    print(where_to_call(settings), file=sys.stderr, flush=True)


def within_pjsua2(settings: Settings, explicit: bool) -> Settings | None:
    """Settings whose AGENT_MAX_CALLS the installed pjsua2 can hold: the default is cut to its limit (PyPI's
    wheel: 4), a value set above it is an error (None, after saying so)."""
    build = installed_pjsua2()
    if settings.max_calls <= build.max_calls:
        return settings
    if explicit:
        print(f"invalid setting: AGENT_MAX_CALLS is {settings.max_calls}, but {build.describe()} holds "
              f"{build.max_calls}: `make run` builds pjsua2 from source (python -m agent.sip.pjproject)",
              file=sys.stderr)
        return None
    event(log, "agent.max_calls", logging.WARNING, max_calls=build.max_calls, pjsua2=build.version,
          reason="the default is cut to what this pjsua2 holds")
    return replace(settings, max_calls=build.max_calls)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "tls-cert":  # needs no settings: it makes the files TLS settings name
        wrote = make_self_signed(args.cert, args.key, args.names, args.days)
        print(f"{'wrote' if wrote else 'kept the usable'} {args.cert} and {args.key}")
        return 0
    try:
        settings = settings_module.load(os.environ, args)
        notify_config(settings)
    except SettingsError as exc:
        print(f"invalid setting: {exc}", file=sys.stderr)
        return 2
    logs.configure(settings.log_level, settings.log_json)
    if args.command not in ("models", "check", "kb"):
        settings = within_pjsua2(settings, explicit=getattr(args, "max_calls", None) is not None
                                                   or "AGENT_MAX_CALLS" in os.environ)
        if settings is None:
            return 2
    try:
        dialplan = load_dialplan(settings)
    except DialplanError as exc:
        print(f"invalid dialplan: {exc}", file=sys.stderr)
        return 2
    try:
        if args.command == "models":
            return command_models(args, settings)
        if args.command == "check":
            return command_check(settings)
        if args.command == "kb":
            return command_kb(args, settings, dialplan)
        asyncio.run(serve(settings, dialplan))
        return 0
    except ModelError as exc:
        event(log, "model.error", logging.ERROR, reason=str(exc))
        print(f"model error: {exc}", file=sys.stderr)
        return 3
    except StoreError as exc:
        print(f"call records: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
