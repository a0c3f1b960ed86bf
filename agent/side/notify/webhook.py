"""The webhook channel: each event POSTed as JSON, signed so the receiver knows it came from this agent.

The signature is HMAC-SHA256 of the exact body bytes keyed by AGENT_WEBHOOK_SECRET, in hex, in the
`X-Agent-Signature: sha256=<hex>` header; `Idempotency-Key` carries the event's key. A 2xx delivers it; 408,
429, a 5xx or no answer within the timeout is retried by the outbox; any other status refuses it for good.
"""

from __future__ import annotations

import hashlib
import hmac
import json

import httpx

from agent.side.notify.events import Event
from agent.side.notify.outbox import Refused

SIGNATURE_HEADER = "X-Agent-Signature"
TIMEOUT_S = 5.0
RETRIED_STATUSES = frozenset({408, 429})


def body_bytes(notice: Event) -> bytes:
    return json.dumps(notice.body, separators=(",", ":"), sort_keys=True).encode()


def signature(body: bytes, secret: str) -> str:
    """The header's value for `body`: 'sha256=' and the hex HMAC-SHA256 keyed by `secret`."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(body: bytes, secret: str, header: str) -> bool:
    """What a receiver checks (in constant time)."""
    return hmac.compare_digest(signature(body, secret), header)


class Webhook:
    def __init__(self, url: str, secret: str, timeout_s: float = TIMEOUT_S) -> None:
        self.url, self._secret = url, secret
        self._client = httpx.Client(timeout=timeout_s, follow_redirects=False)

    def __call__(self, notice: Event) -> None:
        body = body_bytes(notice)
        response = self._client.post(self.url, content=body, headers={
            "Content-Type": "application/json", SIGNATURE_HEADER: signature(body, self._secret),
            "Idempotency-Key": notice.key, "User-Agent": "offline-phone-agent"})
        if response.is_success:
            return
        if response.status_code in RETRIED_STATUSES or response.status_code >= 500:
            raise ConnectionError(f"HTTP {response.status_code}")
        raise Refused(f"HTTP {response.status_code}")
