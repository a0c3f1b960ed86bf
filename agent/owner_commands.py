"""The agent's one-shot commands, run beside the server: `python -m agent models` (fetch and list the pinned
models), `check` (verify and load them, and say which SIP stack answers) and `kb` (re-index every profile's KB and
render its answers' audio, or ask it a question as a caller would)."""

from __future__ import annotations

import argparse
import sys

from agent.call.speaking.prerender import plan
from agent.call.speaking.voice import Voice, phrase_texts
from agent.dialplan import Dialplan
from agent.knowledge.base import KnowledgeBase
from agent.knowledge.memory import CallMemory
from agent.models.fetch import fetch_models
from agent.models.load import load_all, load_voices, resolve_all
from agent.models.manifest import load_manifest
from agent.progress import Progress
from agent.settings import Settings
from agent.sip.build_info import installed as installed_pjsua2
from agent.sip.build_info import security_features
from agent.sip.port import BRIDGE_RATE
from agent.stages import open_knowledge_alone


def command_models(args: argparse.Namespace, settings: Settings) -> int:
    manifest = load_manifest()
    chosen = {settings.asr_model, settings.asr_second_model, settings.tts_model, settings.embed_model,
              settings.vad_model}
    if args.action == "list":
        for spec in manifest.values():
            mark = "default" if spec.default else "in use" if spec.name in chosen else "optional"
            print(f"{spec.name:26} {spec.kind:9} {spec.size / 1e6:8.1f} MB  {mark:8}  {spec.description}")
        return 0
    names = args.names or [s.name for s in manifest.values() if args.all or s.default or s.name in chosen]
    unknown = [n for n in names if n not in manifest]
    if unknown:
        print(f"unknown model(s): {', '.join(unknown)}; known: {', '.join(manifest)}", file=sys.stderr)
        return 2
    fetch_models([manifest[n] for n in names], settings.models_path, Progress("fetching models", "MB"))
    print(f"models ready in {settings.models_path}: {', '.join(names)}")
    return 0


def command_check(settings: Settings) -> int:
    resolved = resolve_all(settings)
    models = load_all(settings, resolved)
    print(f"{'kind':9} {'model':26} {'source':9} {'size':>10}  {'load':>6}  version / sha256")
    for kind, model in resolved.items():
        detail = model.version or (model.files[0].sha256[:16] if model.files else "downloaded by the library")
        print(f"{kind:9} {model.name:26} {model.source:9} {model.size / 1e6:8.1f}MB  "
              f"{models.load_seconds[kind]:5.2f}s  {detail}")
    print(f"all {len(resolved)} models verified and loaded; embedder dim {models.embedder.dim}, "
          f"voice {models.synthesizer.sample_rate} Hz")
    build = installed_pjsua2()
    tls, srtp = security_features()
    print(f"{build.describe()}; TLS {'available' if tls else 'not available'}, "
          f"SRTP {'available' if srtp else 'not available'}")
    if not build.from_source:
        print(f"  the PyPI wheel holds {build.max_calls} calls a process: `make run` or `make test` builds pjsua2 "
              "from source (python -m agent.sip.pjproject) for more")
    return 0


def render_answers(settings: Settings, dialplan: Dialplan, knowledge: dict[str, KnowledgeBase]) -> None:
    """Render every answer sentence of every profile in its voice (what the running agent does in the
    background), so the first calls after a deployment already find them."""
    for name, synthesizer in load_voices(settings, dialplan.voices()).items():
        voice = Voice(synthesizer, BRIDGE_RATE, settings.data_dir / "speech")
        profiles = [p for p in dialplan.profiles if p.voice == name]
        for profile in profiles:
            voice.fixed_texts.update(phrase_texts(profile.opening))
        missing = plan(voice, [knowledge[p.name].index.snapshot for p in profiles])
        progress = Progress(f"rendering answers ({synthesizer.model.name})", "sentences")
        progress(0, len(missing))
        for done, text in enumerate(missing, 1):
            voice.render(text)
            progress(done, len(missing))
        print(f"answer audio: {len(missing)} sentences rendered, {voice.cache.size_bytes() / 1e6:.1f} MB in "
              f"{voice.cache.folder}")


def command_kb(args: argparse.Namespace, settings: Settings, dialplan: Dialplan) -> int:
    """refresh: every profile's index; ask: the profile that answers `--extension` (default profile)."""
    profiles = dialplan.profiles if args.action == "refresh" else (dialplan.route(args.extension),)
    failed, knowledge_by_profile = False, {}
    for profile in profiles:
        knowledge = open_knowledge_alone(settings, kb_dir=profile.kb_dir, index_path=profile.index_path)
        knowledge_by_profile[profile.name] = knowledge
        report = knowledge.index.refresh(Progress("embedding kb", "texts"))
        if args.action == "ask":
            break
        label = f"{profile.name}: " if len(profiles) > 1 else ""
        print(f"{label}added {report.added}, changed {report.changed}, deleted {report.deleted}, "
              f"unchanged {report.unchanged}; {report.chunks} chunks in {report.seconds:.2f}s")
        for path, reason in report.rejected.items():
            print(f"{label}rejected {path}: {reason}")
        if not report.ok:
            print(f"{label}refresh failed, previous index kept: {report.error}", file=sys.stderr)
            failed = True
    if args.action == "refresh":
        render_answers(settings, dialplan, knowledge_by_profile)
        return 1 if failed else 0
    reply = knowledge.compose(CallMemory(), " ".join(args.question))
    print(reply.text)
    for source in reply.sources:
        print(f"  source: {source.path} ({source.heading})")
    print(f"  evidence {reply.evidence:.2f}, retrieval {reply.retrieval_ms:.1f} ms, answer {reply.answer_ms:.1f} ms")
    return 0
