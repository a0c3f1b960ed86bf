"""pjsip's own log lines, through the agent's structured logger.

pjsip prints a packet it could not parse in full, and a hostile peer chooses
those bytes: newlines, control characters, kilobytes of header. Left on
stderr they would break "one event per line" and let a caller forge log
lines. So every pjsip line becomes one `sip.pjsip` event whose text is cut
to a bounded length; the formatter escapes what is left (see agent.logs).
"""

from __future__ import annotations

import logging

import pjsua2 as pj

from agent.logs import clip, event

log = logging.getLogger("agent.sip.pjsip")

# pjsip's levels: 0 fatal, 1 error, 2 warning, 3 info, 4+ debug.
_LEVELS = {0: logging.ERROR, 1: logging.ERROR, 2: logging.WARNING, 3: logging.INFO}
MAX_TEXT = 240


class PjsipLog(pj.LogWriter):
    """A pjsua2 log writer; pjsip calls it from any of its threads, so it only logs."""

    def write(self, entry: pj.LogEntry) -> None:
        try:
            text = clip(entry.msg, MAX_TEXT)
            event(log, "sip.pjsip", _LEVELS.get(int(entry.level), logging.DEBUG), text=text)
        except Exception:  # never let an exception cross back into pjsip
            pass


def route_pjsip_logs(config: pj.EpConfig, level: int = 1) -> PjsipLog:
    """Send pjsip's log lines at `level` and below through `PjsipLog`. Keep the returned writer alive for
    as long as the library runs."""
    writer = PjsipLog()
    config.logConfig.writer = writer
    config.logConfig.level = level
    config.logConfig.consoleLevel = level
    config.logConfig.decor = pj.PJ_LOG_HAS_SENDER
    return writer
