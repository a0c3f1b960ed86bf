"""Who may use the side app's admin surfaces: the token a request presents, and a per-client brake on
wrong ones so a token cannot be guessed at the speed of the network."""

from __future__ import annotations

import base64
import binascii

AUTH_FAILURES = 10
"""Wrong tokens one client may send within AUTH_BLOCK_S before it is refused outright (429)."""
AUTH_BLOCK_S = 60


class AuthFailures:
    """Failed admin logins per client address, so a token cannot be guessed at the speed of the network."""

    def __init__(self) -> None:
        self._failures: dict[str, list[float]] = {}

    def failed(self, client: str, now: float) -> None:
        if len(self._failures) > 10_000:  # a spray from many addresses: forget the oldest half
            for key in list(self._failures)[:5_000]:
                del self._failures[key]
        self._failures.setdefault(client, []).append(now)

    def blocked(self, client: str, now: float) -> bool:
        recent = [t for t in self._failures.get(client, ()) if t > now - AUTH_BLOCK_S]
        if recent:
            self._failures[client] = recent
        else:
            self._failures.pop(client, None)
        return len(recent) >= AUTH_FAILURES


def presented_token(authorization: str) -> bytes:
    """The token in an Authorization header: `Bearer TOKEN`, or `Basic` with TOKEN as the password (what a
    browser sends after asking for it); b"" when there is none."""
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() == "bearer":
        return value.strip().encode()
    if scheme.lower() == "basic":
        try:
            return base64.b64decode(value.strip(), validate=True).partition(b":")[2]
        except (ValueError, binascii.Error):
            return b""
    return b""
