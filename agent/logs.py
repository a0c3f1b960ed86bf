"""Structured logs: one event per line, as logfmt (key=value) or JSON.

Call sites log an event name and fields, never free text:
`event(log, "call.answered", call_id=..., codec="PCMU")`. Fields must not
carry document text, tokens or audio; they are ids, counts, sizes and times.
"""

from __future__ import annotations

import json
import logging
import sys
import time

_FIELDS = "agent_fields"


def event(logger: logging.Logger, name: str, level: int = logging.INFO, **fields: object) -> None:
    """Log one structured event."""
    logger.log(level, name, extra={_FIELDS: fields})


def clip(text: str, limit: int) -> str:
    """Untrusted text cut to `limit` characters, marked when cut (the formatter escapes the rest)."""
    text = text.strip()
    return text if len(text) <= limit else f"{text[:limit]}…(+{len(text) - limit})"


def _logfmt_value(value: object) -> str:
    text = str(value)
    # Quote (and so escape) anything that could end the line or the field: controls, quotes, spaces.
    if text == "" or not text.isprintable() or any(c in text for c in ' ="\\'):
        return json.dumps(text)
    return text


class StructuredFormatter(logging.Formatter):
    """Formats records as `ts=... level=... logger=... event=... k=v` or as one JSON object."""

    def __init__(self, as_json: bool) -> None:
        super().__init__()
        self._as_json = as_json

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"
        fields: dict[str, object] = {"ts": stamp, "level": record.levelname.lower(),
                                     "logger": record.name, "event": record.getMessage()}
        fields.update(getattr(record, _FIELDS, {}))
        if record.exc_info:
            fields["error"] = self.formatException(record.exc_info).splitlines()[-1]
        if self._as_json:
            return json.dumps(fields, default=str)
        return " ".join(f"{key}={_logfmt_value(value)}" for key, value in fields.items())


def configure(level: str, as_json: bool) -> None:
    """Send every log record to stderr in the structured format."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(StructuredFormatter(as_json))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # Libraries log transcripts and phonemes at DEBUG; keep their text out of our logs.
    for noisy in ("faster_whisper", "piper", "fastembed", "httpx", "huggingface_hub"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
