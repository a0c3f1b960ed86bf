"""Screening of INVITEs and SDP offers before pjsip acts on them.

The pjsua2 wheel is built with assertions on: a value that reaches one of
pjlib's asserts aborts the whole process, every call with it. The one seen in
the wild is a 489-character "address" on an SDP connection line, which pjsip
parses happily and then asserts on when it builds the RTP socket address at
answer time (`pj_sockaddr_in_set_str_addr: slen < 254`). So everything pjsip
will later turn into a socket address, a number or a fixed-size table is
checked here first, strictly: addresses must be IP literals of the stated
family, numbers must be numbers in range, counts stay well below pjmedia's
table sizes, and lines stay short. Anything else is refused with 400 (the
SIP message) or 488 (the offer), and the reason is a short fixed phrase,
never the peer's bytes. Pure functions on text.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

MAX_SDP_BYTES = 8192
MAX_SDP_LINE = 512
MAX_MEDIA = 8  # pjmedia's table holds 16
MAX_FORMATS = 32  # pjmedia's PJMEDIA_MAX_SDP_FMT
MAX_ATTRIBUTES = 48  # pjmedia's PJMEDIA_MAX_SDP_ATTR is 68
MAX_BANDWIDTHS = 4  # pjmedia's PJMEDIA_MAX_SDP_BANDW
MAX_HOST = 253  # pjlib asserts on 254 and more
MAX_HEADER = 2048

_TOKEN = re.compile(r"[A-Za-z0-9!%*_+`'~.\-/]{1,64}")
_HOSTNAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9\-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9\-]{0,62}))*\.?")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Headers whose URIs pjsip resolves, routes to or answers through.
_URI_HEADERS = {"contact": "contact", "m": "contact", "record-route": "record-route", "route": "route",
                "from": "from", "f": "from", "to": "to", "t": "to"}
_SIP_URI = re.compile(r"sips?:(?:[^@\s<>]*@)?(\[[^\]]*\]|[^:;>?\s,]*)(?::([^;>?\s,]*))?", re.IGNORECASE)
_VIA_SENT_BY = re.compile(r"SIP\s*/\s*2\.0\s*/\s*[A-Za-z]+\s+(\[[^\]]*\]|[^:;\s,]+)(?:\s*:\s*([^;\s,]*))?",
                          re.IGNORECASE)


@dataclass(frozen=True)
class Refusal:
    """Why a request is refused, and with which final response."""

    status: int
    """400 for a SIP message pjsip must not act on, 488 for an offer it must not negotiate."""
    reason: str
    """A short fixed phrase for logs and metrics; never text taken from the peer."""


def screen_invite(message: str) -> Refusal | None:
    """None when an incoming INVITE (the whole message, as pjsip received it) is safe to answer."""
    head, _, body = _split_message(message)
    headers = _headers(head)
    if headers is None:
        return Refusal(400, "malformed header")
    for name, value in headers:
        if len(value) > MAX_HEADER:
            return Refusal(400, "header too long")
        if name in _URI_HEADERS and not _uris_ok(value):
            return Refusal(400, f"bad {_URI_HEADERS[name]} address")
        if name in ("via", "v") and not _via_ok(value):
            return Refusal(400, "bad via address")
    content_type = next((v for n, v in headers if n in ("content-type", "c")), "")
    if not body.strip():
        # The answer to our offer would come in the ACK, where nothing can screen it first.
        return Refusal(488, "no offer")
    if content_type.split(";")[0].strip().lower() != "application/sdp":
        return Refusal(488, "offer is not application/sdp")
    return screen_sdp(body)


def screen_sdp(sdp: str) -> Refusal | None:
    """None when an SDP offer is safe for pjsip to negotiate and set up media from."""
    if len(sdp.encode("utf-8", "replace")) > MAX_SDP_BYTES:
        return Refusal(488, "offer too large")
    lines = [line for line in sdp.replace("\r\n", "\n").split("\n") if line]
    if not lines or lines[0].strip() != "v=0":
        return Refusal(488, "offer does not start with v=0")
    media, session_attributes, counts = 0, 0, {"a": 0, "b": 0, "c": 0}
    for line in lines:
        if len(line) > MAX_SDP_LINE or _CONTROL.search(line) or len(line) < 2 or line[1] != "=":
            return Refusal(488, "malformed offer line")
        kind, value = line[0], line[2:]
        if kind == "m":
            media += 1
            if media > MAX_MEDIA:
                return Refusal(488, "too many media lines")
            if media == 1:
                session_attributes = counts["a"]
            counts = {"a": 0, "b": 0, "c": 0}
        elif kind in counts:
            counts[kind] += 1
        problem = _check_line(kind, value, counts)
        if problem:
            return Refusal(488, problem)
    if media == 0:
        return Refusal(488, "offer has no media")
    if session_attributes > MAX_ATTRIBUTES:
        return Refusal(488, "too many attributes")
    return None


def _check_line(kind: str, value: str, counts: dict[str, int]) -> str | None:
    """What is wrong with one SDP line, or None."""
    if kind == "c":
        return None if counts["c"] == 1 and _connection_ok(value) else "bad connection address"
    if kind == "o":
        fields = value.split(" ")
        ok = len(fields) == 6 and fields[4] in ("IP4", "IP6") and _host_ok(fields[5])
        return None if ok and all(_TOKEN.fullmatch(f) for f in fields[:5]) else "bad origin line"
    if kind == "m":
        return None if _media_ok(value) else "bad media line"
    if kind == "a":
        return None if counts["a"] <= MAX_ATTRIBUTES and _attribute_ok(value) else "bad attribute"
    if kind == "b":
        return None if counts["b"] <= MAX_BANDWIDTHS and re.fullmatch(r"[A-Za-z0-9\-]{1,16}:\d{1,9}", value) \
            else "bad bandwidth line"
    return None


def _connection_ok(value: str) -> bool:
    """`IN IP4 192.0.2.1` (or IP6), a unicast literal of that family; 0.0.0.0 is the old hold."""
    fields = value.split(" ")
    if len(fields) != 3 or fields[0] != "IN" or fields[1] not in ("IP4", "IP6"):
        return False
    address = _ip(fields[2])
    if address is None or address.version != (4 if fields[1] == "IP4" else 6):
        return False
    return not (address.is_multicast or str(address) == "255.255.255.255")


def _media_ok(value: str) -> bool:
    fields = value.split(" ")
    if len(fields) < 4 or len(fields) > 3 + MAX_FORMATS or not re.fullmatch(r"[a-z]{1,16}", fields[0]):
        return False
    port, _, count = fields[1].partition("/")
    if not _number(port, 0, 65535) or (count and not _number(count, 1, 2)):
        return False
    if not re.fullmatch(r"[A-Za-z0-9/_.\-]{1,32}", fields[2]):
        return False
    if "RTP" in fields[2].upper():
        return all(_number(f, 0, 127) for f in fields[3:])
    return all(_TOKEN.fullmatch(f) for f in fields[3:])


def _attribute_ok(value: str) -> bool:
    name, _, rest = value.partition(":")
    if not re.fullmatch(r"[A-Za-z0-9\-_.]{1,64}", name):
        return False
    name = name.lower()
    if name == "rtpmap":
        match = re.fullmatch(r"(\d{1,3}) ([A-Za-z0-9\-_.]{1,32})/(\d{1,6})(?:/(\d{1,2}))?", rest)
        return bool(match) and _number(match[1], 0, 127) and _number(match[3], 1000, 192000) \
            and (match[4] is None or _number(match[4], 1, 8))
    if name == "fmtp":
        pt, _, parameters = rest.partition(" ")
        return _number(pt, 0, 127) and len(parameters) <= 256 and parameters.count(";") < 16
    if name == "rtcp":
        fields = rest.split(" ")
        return _number(fields[0], 0, 65535) and (len(fields) == 1 or _connection_ok(" ".join(fields[1:])))
    if name in ("ptime", "maxptime"):
        return _number(rest, 10, 300)
    if name in ("sendrecv", "sendonly", "recvonly", "inactive"):
        return rest == ""
    return True


def _host_ok(host: str) -> bool:
    """An IP literal, or a host name pjlib can hold (it asserts on 254 characters and more)."""
    if host.startswith("[") and host.endswith("]"):
        return _ip(host[1:-1]) is not None
    return len(host) <= MAX_HOST and (_ip(host) is not None or bool(_HOSTNAME.fullmatch(host)))


def _uris_ok(value: str) -> bool:
    for match in _SIP_URI.finditer(value):
        host, port = match[1], match[2]
        if not _host_ok(host) or (port is not None and not _number(port, 1, 65535)):
            return False
    return True


def _via_ok(value: str) -> bool:
    for match in _VIA_SENT_BY.finditer(value):
        host, port = match[1], match[2]
        if not _host_ok(host) or (port is not None and not _number(port, 1, 65535)):
            return False
    return True


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _number(text: str, low: int, high: int) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 9 and low <= int(text) <= high


def _split_message(message: str) -> tuple[str, str, str]:
    """(head, separator, body) of a SIP message, CRLF or bare LF."""
    for separator in ("\r\n\r\n", "\n\n"):
        if separator in message:
            head, _, body = message.partition(separator)
            return head, separator, body
    return message, "", ""


def _headers(head: str) -> list[tuple[str, str]] | None:
    """(lower-cased name, value) per header, folded lines joined; None when a line is not a header."""
    lines = head.replace("\r\n", "\n").split("\n")[1:]
    headers: list[tuple[str, str]] = []
    for line in lines:
        if line[:1] in (" ", "\t") and headers:
            name, value = headers[-1]
            headers[-1] = (name, f"{value} {line.strip()}")
            continue
        name, colon, value = line.partition(":")
        if not colon or not re.fullmatch(r"[A-Za-z0-9!%*_+`'~.\-]{1,64}", name.strip()):
            return None
        headers.append((name.strip().lower(), value.strip()))
    return headers
