"""The PCM-over-WebSocket media stream, as open voice-agent benchmark harnesses speak it. Pure.

    client → agent   optional first text message {"sample_rate": 16000}, then binary messages of mono
                     PCM16 little-endian audio at that rate (16 kHz when not given); later text
                     messages are ignored
    agent → client   binary messages of the same format while the agent speaks, paced in real time (20 ms a
                     message; nothing between answers),
                     {"type": "clear"} when it stops speaking because the caller talked over it, and
                     {"type": "transcript", "role": "user" | "agent", "text": "…", "final": true} per turn
"""

from __future__ import annotations

import json

DEFAULT_RATE = 16000
RATES = (8000, 16000, 22050, 24000, 44100, 48000)
MAX_MESSAGE_BYTES = 64 * 1024
"""One binary message at most: 2 s of 16 kHz audio. Larger ones are refused, not buffered."""


class StreamError(ValueError):
    """The client broke the protocol; the message says how (sent as the close reason)."""


def parse_start(text: str) -> int:
    """The sample rate a client's first text message asks for."""
    try:
        start = json.loads(text)
    except ValueError:
        raise StreamError("the first text message must be JSON, e.g. {\"sample_rate\": 16000}") from None
    if not isinstance(start, dict):
        raise StreamError("the first text message must be a JSON object")
    rate = start.get("sample_rate", DEFAULT_RATE)
    if not isinstance(rate, int) or isinstance(rate, bool) or rate not in RATES:
        raise StreamError(f"sample_rate must be one of {', '.join(map(str, RATES))}, got {rate!r}")
    return rate


def check_audio(data: bytes) -> None:
    if len(data) > MAX_MESSAGE_BYTES:
        raise StreamError(f"audio messages are at most {MAX_MESSAGE_BYTES} bytes, got {len(data)}")
    if len(data) % 2:
        raise StreamError("audio must be 16-bit PCM: an odd number of bytes")


def clear_message() -> str:
    return json.dumps({"type": "clear"})


def transcript_message(role: str, text: str) -> str:
    return json.dumps({"type": "transcript", "role": role, "text": text, "final": True})
