"""pjsip's own log lines, through the agent's structured logger; and the first sight of each request.

pjsip prints a packet it could not parse in full, and a hostile peer chooses
those bytes: newlines, control characters, kilobytes of header. Left on
stderr they would break "one event per line" and let a caller forge log
lines. So every pjsip error becomes one `sip.pjsip` event whose text is cut
to a bounded length (the formatter escapes what is left), at most
`MAX_LINES_PER_S` a second.

The same writer is the only place a request can be seen before pjsua acts on
it: pjsip's message logger prints each received request (at level 4) before
any other module runs. `on_request` gets those, so admission can charge an
INVITE before pjsua opens its RTP sockets (see admission).
"""

from __future__ import annotations

import logging
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

import pjsua2 as pj

from agent.logs import clip, event

log = logging.getLogger("agent.sip.pjsip")

# pjsip's levels: 0 fatal, 1 error, 2 warning, 3 info, 4 the messages themselves, 5+ debug.
_LEVELS = {0: logging.ERROR, 1: logging.ERROR}
MAX_TEXT = 240
MAX_LINES_PER_S = 20
_RX = re.compile(r"RX \d+ bytes Request msg ([A-Za-z]+)/cseq=\d+ \(rdata0x[0-9a-f]+\) from [A-Z]+6? "
                 r"\[?([0-9A-Fa-f:.]+?)\]?:\d+:\n")
_TO_TAG = re.compile(r"^(?:to|t)\s*:[^\r\n]*;\s*tag=", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class IncomingRequest:
    method: str
    source: str
    """The sender's IP address."""
    in_dialog: bool
    """The To header carries a tag: part of a call already set up."""
    message: str


def parse_request(text: str) -> IncomingRequest | None:
    """The request in one of pjsip's 'RX ... from UDP 192.0.2.1:5060:' log entries, or None."""
    match = _RX.search(text)
    if match is None:
        return None
    message = text[match.end():]
    head = message.split("\r\n\r\n", 1)[0]
    return IncomingRequest(match[1].upper(), match[2], bool(_TO_TAG.search(head)), message)


class PjsipLog(pj.LogWriter):
    """A pjsua2 log writer; pjsip calls it from any of its threads, so it only logs and hands requests on."""

    def __init__(self, on_request: Callable[[IncomingRequest], None] | None = None) -> None:
        super().__init__()
        self._on_request = on_request
        self._second, self._lines, self._suppressed = 0, 0, 0

    def write(self, entry: pj.LogEntry) -> None:
        try:
            level = int(entry.level)
            if level >= 4:
                if self._on_request is not None and (request := parse_request(entry.msg)) is not None:
                    self._on_request(request)
            elif level in _LEVELS and self._admit_line():
                event(log, "sip.pjsip", _LEVELS[level], text=clip(entry.msg, MAX_TEXT))
        except Exception:  # never let an exception cross back into pjsip
            log.exception("sip.pjsip_log_failed")

    def _admit_line(self) -> bool:
        """At most MAX_LINES_PER_S lines a second (a flood of bad packets must not flood the log too)."""
        second = int(time.monotonic())
        if second != self._second:
            if self._suppressed:
                event(log, "sip.pjsip_suppressed", logging.WARNING, lines=self._suppressed)
            self._second, self._lines, self._suppressed = second, 0, 0
        self._lines += 1
        if self._lines > MAX_LINES_PER_S:
            self._suppressed += 1
            return False
        return True


def route_pjsip_logs(config: pj.EpConfig, on_request: Callable[[IncomingRequest], None] | None = None) -> PjsipLog:
    """Send pjsip's error lines through `PjsipLog`, and with `on_request` every received request too. Keep
    the returned writer alive for as long as the library runs."""
    writer = PjsipLog(on_request)
    level = 4 if on_request is not None else 1
    config.logConfig.writer = writer
    config.logConfig.level = level
    config.logConfig.consoleLevel = level
    config.logConfig.msgLogging = on_request is not None
    config.logConfig.decor = pj.PJ_LOG_HAS_SENDER
    return writer


def create_library(endpoint: pj.Endpoint) -> None:
    """`endpoint.libCreate()`, with what pjlib prints before any log writer can be set (its version, the I/O
    queue, the modules: straight to standard output) routed as `sip.pjsip` debug events like the rest of its
    log, instead of raw lines among the agent's events."""
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 1)
        try:
            endpoint.libCreate()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        captured.seek(0)
        printed = captured.read().decode("utf-8", "replace")
    for line in printed.splitlines():
        if line.strip():
            event(log, "sip.pjsip", logging.DEBUG, text=clip(" ".join(line.split()), MAX_TEXT))
