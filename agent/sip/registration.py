"""Registration to a PBX or SIP trunk: its configuration, its state, and the retry policy.

pjsua2 sends the REGISTERs, answers the digest challenge and refreshes the binding before it
expires; this module decides what to do when a registration fails (retry after 2, 4, 8 ... s up to
a cap, so a registrar that is down is neither hammered nor given up on) and keeps the state the
side app reports. Pure: the SIP thread feeds it results and runs the retries it asks for.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

FIRST_RETRY_S = 2.0


@dataclass(frozen=True)
class RegistrationConfig:
    registrar: str
    """Registrar URI, e.g. sip:pbx.example.com or sip:10.0.0.5:5060;transport=tcp."""
    username: str
    password: str | None
    realm: str = "*"
    expires_s: int = 300
    retry_max_s: int = 120

    @property
    def address_of_record(self) -> str:
        """sip:USER@HOST of the registrar's domain: the identity the agent registers."""
        match = re.match(r"sips?:(?:[^@]*@)?(\[[^\]]+\]|[^:;>]+)", self.registrar.strip())
        if match is None:
            raise ValueError(f"registrar {self.registrar!r} is not a SIP URI such as sip:pbx.example.com")
        return f"sip:{self.username}@{match.group(1)}"


@dataclass(frozen=True)
class RegistrationStatus:
    state: str
    """registering, registered or failed."""
    code: int = 0
    """Last final SIP status of a REGISTER (0 before the first)."""
    reason: str = ""
    expires_s: int = 0
    """Lifetime the registrar granted, when registered."""
    failures: int = 0
    """Failed attempts since the last success."""
    retry_in_s: float | None = None
    since: float = 0.0
    """Wall-clock time of the last change."""

    @property
    def registered(self) -> bool:
        return self.state == "registered"

    def describe(self) -> str:
        text = f"{self.state}: {self.code} {self.reason}".strip() if self.code else self.state
        return text + (f", retry in {self.retry_in_s:g} s" if self.retry_in_s is not None else "")


def retry_delay(failures: int, cap_s: float) -> float:
    """Seconds to wait after the `failures`-th consecutive failure: 2, 4, 8 ... capped."""
    return min(cap_s, FIRST_RETRY_S * 2 ** max(0, failures - 1))


class Registration:
    """Registration state, fed with each REGISTER outcome."""

    def __init__(self, config: RegistrationConfig) -> None:
        self.config = config
        self.status = RegistrationStatus("registering", since=time.time())

    def on_result(self, code: int, reason: str, expires_s: int) -> float | None:
        """Record one outcome; return the delay before the next attempt when it failed (else None).
        A 2xx with expiry 0 is an unregistration, which only happens when the agent stops."""
        if 200 <= code < 300 and expires_s > 0:
            self.status = RegistrationStatus("registered", code, reason, expires_s, since=time.time())
            return None
        failures = self.status.failures + 1
        delay = retry_delay(failures, self.config.retry_max_s)
        self.status = RegistrationStatus("failed", code, reason, 0, failures, delay, time.time())
        return delay
