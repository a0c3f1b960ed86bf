"""Who reaches the agent's SIP stack, and which INVITEs may become calls.

Every request is charged to its source before pjsua acts on it; a source over its rate is cut off in the kernel
(see admission, firewall), and INVITEs are paced to the RTP sockets the build has left. An INVITE is then refused
while the agent drains, when its source is over its limits, or when pjsip must not act on it (see screening).
Runs on the SIP thread.
"""

from __future__ import annotations

import logging
import time

from agent.logs import event
from agent.sip.admission import Admission, SocketBudget, request_cost
from agent.sip.firewall import SipFirewall
from agent.sip.pjlog import IncomingRequest
from agent.sip.screening import Refusal, screen_invite
from agent.sip.setup import SipConfig

log = logging.getLogger(__name__)


class Gate:
    def __init__(self, config: SipConfig) -> None:
        self.admission = Admission(config.admission)
        self.sockets = SocketBudget(config.max_calls, config.ioqueue_sockets)
        self.firewall = SipFirewall(config.host, config.port, config.tls.port if config.tls else 0)
        self.draining = False
        """Shutting down: new INVITEs get 503 (the proxy in front tries another agent)."""

    def request_seen(self, request: IncomingRequest) -> None:
        """A request received, before pjsua acts on it: charge its source, cut it off in the kernel when it is
        over its rate, and hold an INVITE back until its RTP sockets may be opened."""
        now, cost = time.monotonic(), request_cost(request.method, request.in_dialog, request.message)
        self.admission.charge(request.source, now, cost)
        self.update_filter(now)
        if cost >= 1:  # an INVITE: pjsua is about to open RTP sockets for it
            wait = self.sockets.wait_for(now, cost)
            if wait > 0:
                event(log, "sip.throttled", logging.WARNING, source=request.source, wait_ms=round(wait * 1000))
                time.sleep(wait)
            self.sockets.opened(time.monotonic(), cost)

    def update_filter(self, now: float) -> None:
        """The kernel's filter in line with the sources blocked now (blocks and floods expire)."""
        purged = self.firewall.apply(self.admission.filter_state(now))
        if purged:
            event(log, "sip.purged", datagrams=purged)

    def refusal(self, address: str, message: str) -> Refusal | None:
        """Why the INVITE `message` from `address` is refused before anything else is asked of it, or None."""
        if self.draining:
            return Refusal(503, "shutting down")
        return self.admission.check(address, time.monotonic()) or screen_invite(message)
