"""Resolve a model choice to files on disk and verify each file by size and sha256.

A choice resolves in this order: an explicit path setting, then a manifest
name (files under the models dir, checked against the manifest), then a hub
name handed to the library that downloads it (only for users with internet).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from agent.models.manifest import ModelSpec

# Files that a user-supplied model path must contain, by kind. A directory for
# CTranslate2 and fastembed models; a single .onnx file for Piper and Silero.
_REQUIRED_IN_DIR = {
    "asr": ("model.bin", "config.json"),
    "embedder": ("model.onnx", "tokenizer.json", "config.json"),
}
_HUB_CAPABLE = ("asr", "tts", "embedder")


class ModelError(RuntimeError):
    """A model is missing, corrupted or unusable; the message says how to fix it."""


@dataclass(frozen=True)
class VerifiedFile:
    """A model file as found on disk."""

    path: Path
    size: int
    sha256: str


@dataclass(frozen=True)
class ResolvedModel:
    """Where a model's files are and how they were checked."""

    kind: str
    """One of manifest.MODEL_KINDS."""
    name: str
    """Manifest name, hub name, or the path the user gave."""
    source: str
    """'manifest' (verified against pinned digests), 'path' (digests reported) or 'hub'."""
    location: str
    """What the loader opens: a directory, an .onnx file, or the hub name."""
    files: tuple[VerifiedFile, ...] = ()
    version: str = ""
    """Pinned wheels the files came from, for manifest models."""

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fix_command(name: str) -> str:
    return f"python -m agent models fetch {name}   (or: make models)"


def verify_manifest_model(spec: ModelSpec, directory: Path) -> ResolvedModel:
    """Check every file of `spec` in `directory`; raise ModelError naming the model and the fix."""
    verified = []
    for expected in spec.files:
        path = directory / expected.path
        if not path.is_file():
            raise ModelError(f"model {spec.name}: {path} is missing. Install it with: {fix_command(spec.name)}")
        size = path.stat().st_size
        if size != expected.size:
            raise ModelError(
                f"model {spec.name}: {path} is {size} bytes, expected {expected.size} (truncated or replaced). "
                f"Reinstall it with: {fix_command(spec.name)}"
            )
        digest = sha256_of(path)
        if digest != expected.sha256:
            raise ModelError(
                f"model {spec.name}: {path} has sha256 {digest}, expected {expected.sha256} (corrupted). "
                f"Reinstall it with: {fix_command(spec.name)}"
            )
        verified.append(VerifiedFile(path, size, digest))
    location = directory / spec.entry if spec.entry else directory
    versions = ", ".join(spec.distributions)
    return ResolvedModel(spec.kind, spec.name, "manifest", str(location), tuple(verified), versions)


def verify_user_path(kind: str, path: Path) -> ResolvedModel:
    """Check a model the user points at; digests are reported (there is nothing pinned to compare)."""
    if kind in _REQUIRED_IN_DIR:
        names = _REQUIRED_IN_DIR[kind]
        files = [path / n for n in names]
        if not path.is_dir():
            raise ModelError(f"{kind} model path {path} is not a directory holding {', '.join(names)}")
    else:
        files = [path] + ([Path(f"{path}.json")] if kind == "tts" else [])
    verified = []
    for file in files:
        if not file.is_file() or file.stat().st_size == 0:
            raise ModelError(f"{kind} model path {path}: {file} is missing or empty")
        verified.append(VerifiedFile(file, file.stat().st_size, sha256_of(file)))
    return ResolvedModel(kind, str(path), "path", str(path), tuple(verified))


def resolve(kind: str, name: str, path: Path | None, models_dir: Path, manifest: dict[str, ModelSpec]) -> ResolvedModel:
    """Resolve one model setting pair (AGENT_<KIND>_MODEL / _MODEL_PATH) to verified files."""
    if path is not None:
        return verify_user_path(kind, path)
    spec = manifest.get(name)
    if spec is not None:
        if spec.kind != kind:
            raise ModelError(f"model {name} is of kind {spec.kind}, but the {kind} setting needs a {kind} model")
        return verify_manifest_model(spec, models_dir / spec.name)
    if kind not in _HUB_CAPABLE:
        known = ", ".join(s.name for s in manifest.values() if s.kind == kind)
        raise ModelError(f"{kind} model {name!r} is not in the manifest ({known}); give a file with the _PATH setting")
    return ResolvedModel(kind, name, "hub", name)


def identity(model: ResolvedModel) -> str:
    """Name plus file digests: changes whenever the model's weights do (used in index fingerprints)."""
    return model.name + ":" + ",".join(f.sha256[:16] for f in model.files)
