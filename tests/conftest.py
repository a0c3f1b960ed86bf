"""Shared fixtures: the real settings, the real verified models, and synthetic caller voices."""

from __future__ import annotations

import os
import shutil
import subprocess
import wave
from pathlib import Path

import numpy as np
import pytest

from agent import settings as settings_module
from agent.models.load import Models, load_all, resolve_all
from agent.models.verify import ResolvedModel

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def settings() -> settings_module.Settings:
    """Defaults plus whatever AGENT_* the environment sets, as the agent itself reads them."""
    return settings_module.parse([], os.environ)


@pytest.fixture(scope="session")
def resolved(settings) -> dict[str, ResolvedModel]:
    """Every default model, verified by size and sha256 (install them with `make models`)."""
    return resolve_all(settings)


@pytest.fixture(scope="session")
def models(settings, resolved) -> Models:
    return load_all(settings, resolved)


@pytest.fixture(scope="session")
def bundled_kb(models, tmp_path_factory):
    """The shipped kb/ indexed once for the session, with the default abstention threshold."""
    from agent.knowledge.base import KnowledgeBase
    from agent.knowledge.index import KnowledgeIndex

    s = settings_module.Settings()
    index = KnowledgeIndex(REPO / "kb", tmp_path_factory.mktemp("bundled") / "index.sqlite3", models.embedder,
                           max_file_bytes=s.kb_max_file_bytes, max_total_bytes=s.kb_max_total_bytes,
                           chunk_target_chars=s.chunk_target_chars, chunk_max_chars=s.chunk_max_chars,
                           model_identity="minilm")
    assert index.refresh().ok
    return KnowledgeBase(index, models.embedder, abstain_below=s.abstain_threshold)


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path)) as wav:
        if wav.getsampwidth() != 2 or wav.getnchannels() != 1:
            raise ValueError(f"{path}: expected 16-bit mono")
        return np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2").astype(np.int16), wav.getframerate()


def synthesize_caller(tmp_path: Path, text: str, rate: int = 8000, engine: str = "espeak-ng",
                      voice: str = "slt") -> np.ndarray:
    """A caller saying `text`, as int16 mono at `rate` (telephone 8 kHz by default); `voice` is flite's."""
    if shutil.which(engine) is None or shutil.which("sox") is None:
        pytest.skip(f"{engine} and sox are needed (Debian packages; `make test` installs them)")
    raw, out = tmp_path / "caller-raw.wav", tmp_path / "caller.wav"
    if engine == "espeak-ng":
        subprocess.run(["espeak-ng", "-v", "en", "-s", "130", "-w", str(raw), text], check=True)
    else:
        subprocess.run(["flite", "-voice", voice, "-t", text, "-o", str(raw)], check=True)
    # -D: no dither, so a caller says a sentence the same way on every run (sox dithers randomly by default).
    subprocess.run(["sox", "-D", str(raw), "-r", str(rate), "-b", "16", "-c", "1", str(out)], check=True)
    pcm, got_rate = read_wav(out)
    assert got_rate == rate
    return pcm


def self_signed(folder: Path, name: str, days: int = 2) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its unencrypted key, made by openssl as an operator would:
    folder/NAME.pem and folder/NAME.key."""
    cert, key = folder / f"{name}.pem", folder / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", str(days), "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


def pytest_xdist_make_scheduler(config, log):
    """Under `pytest -n N` (make test): files whole, tests/deploy whole and first (tests/parallel.py)."""
    from tests.parallel import FilesAndFoldersTogether

    config.option.loadscopereorder = False  # the collection's order, as pytest_collection_modifyitems leaves it
    return FilesAndFoldersTogether(config, log)


def pytest_collection_modifyitems(config, items):
    from tests.parallel import first_together

    first_together(items)


# Real peers on loopback (an agent process, scripted callers), shared by tests/call and tests/side.
from tests.peers import agent, questions  # noqa: E402, F401 - pytest fixtures
from tests.postgres import postgres  # noqa: E402, F401 - pytest fixture
