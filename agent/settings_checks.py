"""What a setting's raw text must be, and what the settings must be together: each value converted to its field's
type and checked against its range, choices or form; then the combinations that cannot work. Every error names
the setting (its environment variable and flag), the value given and what is allowed."""

from __future__ import annotations

import ipaddress
import re
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agent.sip.admission import parse_networks
from agent.sip.security import TlsError, check_pem

if TYPE_CHECKING:
    from agent.settings import Settings


class SettingsError(ValueError):
    """A setting has an invalid value; the message names the setting, the value and what is allowed."""



def env_name(name: str) -> str:
    return f"AGENT_{name.upper()}"



def flag(name: str) -> str:
    return "--" + name.replace("_", "-")



def convert(name: str, raw: str, kind: object) -> object:
    """Convert one raw string to the field's type, or raise SettingsError."""
    optional = typing.get_origin(kind) in (typing.Union, types.UnionType)
    base = [a for a in typing.get_args(kind) if a is not type(None)][0] if optional else kind
    if optional and raw.strip() == "":
        return None
    try:
        if base is bool:
            lowered = raw.strip().lower()
            if lowered not in ("1", "true", "yes", "on", "0", "false", "no", "off"):
                raise ValueError
            return lowered in ("1", "true", "yes", "on")
        if base is int:
            return int(raw)
        if base is float:
            return float(raw)
        if base is Path:
            return Path(raw).expanduser()
        return raw
    except ValueError:
        expected = {bool: "true or false", int: "an integer", float: "a number"}[base]
        raise SettingsError(f"{env_name(name)} ({flag(name)}): got {raw!r}, expected {expected}") from None



def check(name: str, value: object, meta: Mapping[str, object]) -> None:
    """Range, choice and address checks for one converted value."""
    where = f"{env_name(name)} ({flag(name)})"
    low, high, choices = meta["low"], meta["high"], meta["choices"]
    if value is None:
        return
    if low is not None and not (low <= value <= high):
        raise SettingsError(f"{where}: got {value!r}, allowed {low}..{high}")
    if choices and value not in choices:
        raise SettingsError(f"{where}: got {value!r}, allowed one of {', '.join(choices)}")
    if meta["ip"]:
        try:
            ipaddress.ip_address(value)
        except ValueError:
            raise SettingsError(f"{where}: got {value!r}, expected an IP address such as 127.0.0.1") from None



def check_together(s: Settings) -> None:
    if s.rtp_port_min >= s.rtp_port_max:
        raise SettingsError(f"AGENT_RTP_PORT_MIN/MAX: range {s.rtp_port_min}..{s.rtp_port_max} is empty")
    if s.chunk_target_chars > s.chunk_max_chars:
        raise SettingsError(f"AGENT_CHUNK_TARGET_CHARS ({s.chunk_target_chars}) is above AGENT_CHUNK_MAX_CHARS "
                            f"({s.chunk_max_chars})")
    if s.record_calls and not s.consent_notice.strip():
        raise SettingsError("AGENT_RECORD_CALLS=true needs AGENT_CONSENT_NOTICE: callers must be told the call is "
                            "recorded before it is (e.g. AGENT_CONSENT_NOTICE='This call is recorded.')")
    if ipaddress.ip_address(s.sip_host).is_unspecified:
        raise SettingsError(f"AGENT_SIP_HOST: got {s.sip_host}, which cannot be advertised in SIP and SDP; give the "
                            "address callers reach (the container's or host's IP)")
    if s.sip_registrar and not s.sip_registrar.strip().lower().startswith(("sip:", "sips:")):
        raise SettingsError(f"AGENT_SIP_REGISTRAR: got {s.sip_registrar!r}, expected a SIP URI such as "
                            "sip:pbx.example.com")
    try:
        parse_networks(s.sip_trusted_peers)
    except ValueError as exc:
        raise SettingsError(f"AGENT_SIP_TRUSTED_PEERS: {exc}") from None
    if s.admin_token is not None and len(s.admin_token) < 16 and not ipaddress.ip_address(s.http_host).is_loopback:
        raise SettingsError(f"AGENT_ADMIN_TOKEN: {len(s.admin_token)} characters; the side app listens on "
                            f"{s.http_host}, beyond this machine, so the token needs at least 16")
    bad = [t for t in s.transfer_to.split(",") if not re.match(r"^sips?:[^\s<>\",]{1,250}$", t.strip())]
    if s.transfer_to and bad:
        raise SettingsError(f"AGENT_TRANSFER_TO: got {bad[0]!r}, expected a SIP URI such as sip:200@pbx")
    if "," in s.transfer_to and s.transfer_mode != "warm":
        raise SettingsError("AGENT_TRANSFER_TO: several people are tried in order only with AGENT_TRANSFER_MODE=warm")
    if s.web_phone_address:
        try:
            ipaddress.ip_address(s.web_phone_address)
        except ValueError:
            raise SettingsError(f"AGENT_WEB_PHONE_ADDRESS: got {s.web_phone_address!r}, expected an IP address such "
                                "as 192.168.1.10, or empty") from None
    if s.synonyms_path is not None and not s.synonyms_path.is_file():
        raise SettingsError(f"AGENT_SYNONYMS_PATH: {s.synonyms_path} is not a file")
    if s.sip_host == s.http_host and s.sip_port == s.http_port:
        raise SettingsError(f"AGENT_SIP_PORT and AGENT_HTTP_PORT: both {s.sip_port} on {s.sip_host} (SIP uses TCP too)")
    if s.database_url and not re.match(r"^postgres(?:ql)?://", s.database_url):
        raise SettingsError("AGENT_DATABASE_URL: expected a URL such as postgresql://agent@db.example/calls "
                            "(the value is not repeated: it may hold a password)")
    if s.llm_url and not re.match(r"^https?://[^\s/]+", s.llm_url):
        raise SettingsError(f"AGENT_LLM_URL: got {s.llm_url!r}, expected an http(s) URL such as "
                            "http://127.0.0.1:8080/v1")
    if s.llm_api_key_file is not None and not s.llm_api_key_file.is_file():
        raise SettingsError(f"AGENT_LLM_API_KEY_FILE: {s.llm_api_key_file} is not a file")
    check_tls(s)



def check_tls(s: Settings) -> None:
    if not s.sip_tls_port:
        if s.srtp != "off":
            raise SettingsError(f"AGENT_SRTP={s.srtp} needs AGENT_SIP_TLS_PORT: SRTP keys are only exchanged over TLS")
        return
    if s.sip_tls_port == s.sip_port or (s.sip_host == s.http_host and s.sip_tls_port == s.http_port):
        raise SettingsError(f"AGENT_SIP_TLS_PORT: {s.sip_tls_port} is taken by SIP or the side app")
    if s.sip_tls_cert is None or s.sip_tls_key is None:
        raise SettingsError("AGENT_SIP_TLS_PORT needs AGENT_SIP_TLS_CERT and AGENT_SIP_TLS_KEY (PEM files)")
    try:
        check_pem(s.sip_tls_cert, s.sip_tls_key)
    except TlsError as exc:
        raise SettingsError(f"AGENT_SIP_TLS_CERT/KEY: {exc}") from None
