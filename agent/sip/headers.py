"""What the agent reads from a SIP message's text: pure functions, so they are tested without a call."""

from __future__ import annotations

import re


def uri_user(uri: str) -> str:
    """The user part of a SIP URI ('"Bob" <sip:200@host>' -> '200'), or '' when there is none."""
    match = re.search(r"sips?:([^@;>]+)@", uri)
    return match.group(1) if match else ""


def request_uri_host(message: str) -> str:
    """Host of the Request-URI in a SIP request's first line ('' when it cannot be read)."""
    first_line = message.split("\n", 1)[0]
    match = re.match(r"\s*[A-Za-z]+\s+sips?:(?:[^@\s]*@)?(\[[^\]]+\]|[^:;>\s?]+)", first_line)
    return match.group(1).lower() if match else ""


def secured_kind(message: str, srtp: str) -> str:
    """What a call's record names its way in by: "sip", with "/tls" when the INVITE came over TLS (its top Via)
    and "+srtp" when its offer carries SDES keys the agent takes (AGENT_SRTP optional or mandatory): pjsua answers
    such an offer with SRTP, and refuses a plain one under mandatory before the call gets here."""
    via = re.search(r"^(?:Via|v)\s*:\s*SIP\s*/\s*2\.0\s*/\s*([A-Za-z]+)", message, re.IGNORECASE | re.MULTILINE)
    tls = via is not None and via.group(1).upper() == "TLS"
    keys = srtp != "off" and re.search(r"^a=crypto:", message, re.MULTILINE) is not None
    return "sip" + ("/tls" if tls else "") + ("+srtp" if keys else "")


def takes_replaces(message: str) -> bool:
    """Whether the phone that sent this INVITE can be handed over with REFER and Replaces (RFC 3891): it allows
    REFER and lists "replaces" as supported. A phone that says nothing of either is not asked."""
    allow = re.findall(r"^Allow\s*:(.*)$", message, re.IGNORECASE | re.MULTILINE)
    supported = re.findall(r"^(?:Supported|k)\s*:(.*)$", message, re.IGNORECASE | re.MULTILINE)
    methods = {token.strip().upper() for line in allow for token in line.split(",")}
    options = {token.strip().lower() for line in supported for token in line.split(",")}
    return "REFER" in methods and "replaces" in options
