"""From settings to loaded, verified models: the one place model choices are turned into objects."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

from agent.knowledge.embedder import ARCHITECTURES, Embedder
from agent.logs import event
from agent.models.manifest import load_manifest
from agent.models.verify import ResolvedModel, resolve
from agent.settings import Settings
from agent.speech.asr import Transcriber
from agent.speech.tts import Synthesizer
from agent.speech.vad import SileroModel, SileroVad
from agent.threads import named

log = logging.getLogger(__name__)

SECOND_ASR = "asr-second"
"""The role of the recogniser that hears doubtful turns again (call.understanding.hear_again): an asr model."""


def hears_again(settings: Settings) -> bool:
    """A second recogniser is chosen (by name or path) to hear doubtful turns again (call.understanding.hear_again)."""
    return bool(settings.asr_second_model or settings.asr_second_model_path)


def resolve_all(settings: Settings) -> dict[str, ResolvedModel]:
    """Resolve and verify every model the settings choose; raises ModelError on the first bad one."""
    manifest = load_manifest()
    chosen = {
        "asr": (settings.asr_model, settings.asr_model_path),
        "tts": (settings.tts_model, settings.tts_model_path),
        "embedder": (settings.embed_model, settings.embed_model_path),
        "vad": (settings.vad_model, settings.vad_model_path),
    }
    if hears_again(settings):
        chosen[SECOND_ASR] = (settings.asr_second_model, settings.asr_second_model_path)
    resolved = {}
    for role, (name, path) in chosen.items():
        kind = "asr" if role == SECOND_ASR else role
        model = resolve(kind, name, path, settings.models_path, manifest)
        event(log, "model.verified", kind=role, model=model.name, source=model.source,
              bytes=model.size, files=len(model.files))
        resolved[role] = model
    return resolved


@dataclass
class Models:
    """The loaded models shared by all calls (VAD state is per call, its model shared)."""

    resolved: dict[str, ResolvedModel]
    transcriber: Transcriber
    synthesizer: Synthesizer
    embedder: Embedder
    vad: SileroModel
    load_seconds: dict[str, float]
    second_transcriber: Transcriber | None = None

    def new_vad(self) -> SileroVad:
        return SileroVad(self.vad)


def load_all(settings: Settings, resolved: dict[str, ResolvedModel]) -> Models:
    """Load every resolved model into memory, timing each."""
    hub_dir = settings.models_path / "hub"
    seconds: dict[str, float] = {}

    def timed(kind: str, build):
        start = time.perf_counter()
        with named(kind):  # the threads its library starts carry the model's kind: eval.load reads their CPU
            value = build()
        seconds[kind] = time.perf_counter() - start
        event(log, "model.loaded", kind=kind, model=resolved[kind].name, seconds=round(seconds[kind], 3))
        return value

    def recogniser(role: str) -> Transcriber:
        return Transcriber(resolved[role], compute_type=settings.asr_compute_type, beam_size=settings.asr_beam_size,
                           language=settings.asr_language, threads=settings.asr_threads, workers=settings.asr_workers,
                           download_dir=str(hub_dir))

    transcriber = timed("asr", lambda: recogniser("asr"))
    second = timed(SECOND_ASR, lambda: recogniser(SECOND_ASR)) if SECOND_ASR in resolved else None
    synthesizer = timed("tts", lambda: Synthesizer(resolved["tts"], download_dir=hub_dir))
    architecture = ARCHITECTURES.get(settings.embed_model, settings.embed_model)
    embedder = timed("embedder", lambda: Embedder(resolved["embedder"], architecture, threads=settings.model_threads))
    vad = timed("vad", lambda: SileroModel(resolved["vad"].location))
    return Models(resolved, transcriber, synthesizer, embedder, vad, seconds, second)


def load_voices(settings: Settings, names: set[str], loaded: Synthesizer | None = None) -> dict[str, Synthesizer]:
    """Piper voices by the name a dialplan profile gives (manifest name, Piper voice name or .onnx path);
    `loaded` is the settings' own voice when `load_all` already loaded it."""
    default = str(settings.tts_model_path or settings.tts_model)
    manifest = load_manifest()
    voices = {default: loaded} if loaded is not None else {}
    for name in sorted((names | {default}) - set(voices)):
        path = Path(name).expanduser() if name.endswith(".onnx") else None
        model = resolve("tts", name, path, settings.models_path, manifest)
        event(log, "model.verified", kind="tts", model=model.name, source=model.source, bytes=model.size,
              files=len(model.files))
        voices[name] = Synthesizer(model, download_dir=settings.models_path / "hub")
    return voices
