"""The agent's own dialplan: which profile (knowledge base, greeting, voice, limits) answers a call.

A profile is chosen by the dialled extension, the user part of the To URI. Without a dialplan file
the agent has one profile built from its settings; with one (`AGENT_DIALPLAN`, a TOML file such as
`dialplans/agent.toml`) each `[profiles.NAME]` table lists its extensions, and calls to any other
extension get the `default` profile. Relative `kb_dir`s are read from the file's own directory, so
a dialplan and its KBs move together (a container mounts them side by side).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from agent.settings import Settings

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
_KEYS = {"extensions", "kb_dir", "greeting", "consent_notice", "voice", "max_calls", "max_call_s", "inactivity_s",
         "transfer_to", "transfer_digit"}
_SIP_URI = re.compile(r"^sips?:[^\s<>\",]{1,250}$")
_DTMF = re.compile(r"^[0-9*#A-D]?$")


def _digit(setting: str) -> str:
    return "" if setting == "none" else setting
_LIMITS = {"max_calls": (1, 64), "max_call_s": (10, 86400), "inactivity_s": (3, 3600)}


class DialplanError(ValueError):
    """The dialplan file cannot be used; the message names the file, the profile and the problem."""


@dataclass(frozen=True)
class Profile:
    name: str
    extensions: tuple[str, ...]
    kb_dir: Path
    index_path: Path
    """Each profile keeps its own index, so re-indexing one KB never touches another."""
    greeting: str
    voice: str
    """Piper voice: a manifest name, a Piper voice name, or a path to an .onnx file."""
    max_calls: int
    max_call_s: int
    inactivity_s: int
    consent_notice: str = ""
    """Spoken before the greeting ("This call may be recorded…"); empty: none."""
    transfer_to: str = ""
    """SIP URI of the person a caller asking for one is transferred to (REFER); empty: no transfer."""
    transfer_digit: str = "0"
    """DTMF digit that asks for a person; empty: none."""

    @property
    def opening(self) -> str:
        """What the caller hears first: the consent notice, if any, then the greeting."""
        return f"{self.consent_notice} {self.greeting}" if self.consent_notice else self.greeting


@dataclass(frozen=True)
class Dialplan:
    profiles: tuple[Profile, ...]
    default: Profile

    def route(self, dialed: str) -> Profile:
        """The profile answering a call to `dialed` (extension match ignores case)."""
        wanted = dialed.lower()
        for profile in self.profiles:
            if wanted in profile.extensions:
                return profile
        return self.default

    def voices(self) -> set[str]:
        return {p.voice for p in self.profiles}


def single_profile(settings: Settings) -> Dialplan:
    """The dialplan of an agent configured by settings alone: every extension gets one profile."""
    profile = Profile("default", (), settings.kb_dir, settings.index_path, settings.greeting,
                      str(settings.tts_model_path or settings.tts_model), settings.max_calls, settings.max_call_s,
                      settings.inactivity_s, settings.consent_notice.strip(), settings.transfer_to,
                      _digit(settings.transfer_digit))
    return Dialplan((profile,), profile)


def parse_dialplan(text: str, base_dir: Path, settings: Settings, source: str = "dialplan") -> Dialplan:
    """Profiles from TOML text; unset fields fall back to the settings. Raises DialplanError."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DialplanError(f"{source}: not valid TOML: {exc}") from None
    unknown = set(document) - {"default", "profiles"}
    if unknown:
        raise DialplanError(f"{source}: unknown top-level key(s) {', '.join(sorted(unknown))}; "
                            "expected 'default' and [profiles.NAME] tables")
    tables = document.get("profiles")
    if not isinstance(tables, dict) or not tables:
        raise DialplanError(f"{source}: no [profiles.NAME] table")
    profiles = tuple(_profile(name, table, base_dir, settings, f"{source}: profile {name!r}")
                     for name, table in tables.items())
    seen: dict[str, str] = {}
    for profile in profiles:
        for extension in profile.extensions:
            if extension in seen:
                raise DialplanError(f"{source}: extension {extension!r} is in profiles {seen[extension]!r} and "
                                    f"{profile.name!r}")
            seen[extension] = profile.name
    default_name = document.get("default", profiles[0].name)
    by_name = {p.name: p for p in profiles}
    if default_name not in by_name:
        raise DialplanError(f"{source}: default profile {default_name!r} is not one of {', '.join(by_name)}")
    return Dialplan(profiles, by_name[default_name])


def load_dialplan(settings: Settings) -> Dialplan:
    """The dialplan the settings name, or the single settings profile when none is set."""
    if settings.dialplan is None:
        return single_profile(settings)
    path = settings.dialplan
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DialplanError(f"{path}: cannot read: {exc}") from None
    return parse_dialplan(text, path.resolve().parent, settings, str(path))


def _profile(name: str, table: object, base_dir: Path, settings: Settings, where: str) -> Profile:
    if not _NAME.match(name):
        raise DialplanError(f"{where}: names are 1-32 lowercase letters, digits, '-' or '_'")
    if not isinstance(table, dict):
        raise DialplanError(f"{where}: expected a table")
    unknown = set(table) - _KEYS
    if unknown:
        raise DialplanError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; allowed: "
                            f"{', '.join(sorted(_KEYS))}")
    extensions = table.get("extensions", [])
    if not isinstance(extensions, list) or not all(isinstance(e, str) and e.strip() for e in extensions):
        raise DialplanError(f"{where}: extensions must be a list of non-empty strings")
    kb_dir = table.get("kb_dir", str(settings.kb_dir))
    greeting = table.get("greeting", settings.greeting)
    voice = table.get("voice", str(settings.tts_model_path or settings.tts_model))
    consent = table.get("consent_notice", settings.consent_notice)
    if not isinstance(consent, str):
        raise DialplanError(f"{where}: consent_notice must be a string")
    if settings.record_calls and not consent.strip():
        raise DialplanError(f"{where}: consent_notice is empty, but AGENT_RECORD_CALLS records its calls: callers "
                            "must be told first")
    transfer_to = table.get("transfer_to", settings.transfer_to)
    if not isinstance(transfer_to, str) or (transfer_to and not all(
            _SIP_URI.match(t.strip()) for t in transfer_to.split(","))) or \
            ("," in transfer_to and settings.transfer_mode != "warm"):
        raise DialplanError(f"{where}: transfer_to must be a SIP URI (sip:user@host; several, comma-separated, only "
                            f"with AGENT_TRANSFER_MODE=warm), got {transfer_to!r}")
    transfer_digit = table.get("transfer_digit", settings.transfer_digit)
    if not isinstance(transfer_digit, str) or not _DTMF.match(transfer_digit := _digit(transfer_digit)):
        raise DialplanError(f"{where}: transfer_digit must be one DTMF digit or empty, got {transfer_digit!r}")
    for key, value in (("kb_dir", kb_dir), ("greeting", greeting), ("voice", voice)):
        if not isinstance(value, str) or not value.strip():
            raise DialplanError(f"{where}: {key} must be a non-empty string")
    limits = {}
    for key, (low, high) in _LIMITS.items():
        value = table.get(key, getattr(settings, key))
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise DialplanError(f"{where}: {key} must be an integer in {low}..{high}, got {value!r}")
        limits[key] = value
    kb_path = Path(kb_dir).expanduser()
    kb_path = kb_path if kb_path.is_absolute() else base_dir / kb_path
    if not kb_path.is_dir():
        raise DialplanError(f"{where}: kb_dir {kb_path} is not a directory")
    return Profile(name, tuple(e.strip().lower() for e in extensions), kb_path,
                   settings.data_dir / f"index-{name}.sqlite3", greeting.strip(), voice.strip(), **limits,
                   consent_notice=consent.strip(), transfer_to=transfer_to, transfer_digit=transfer_digit)
