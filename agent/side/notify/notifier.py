"""Which events go to which channel, and the daily digest: the Reporter tells the Notifier, the Notifier puts
each event in the couriers of the channels that carry it (outbox.py)."""

from __future__ import annotations

import datetime
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from agent.logs import event
from agent.side.notify.config import NotifyConfig
from agent.side.notify.events import DIGEST, MESSAGE_LEFT, QUESTION_DECLINED, TRANSFER_FAILED, Event, digest
from agent.side.notify.mail import Mailer
from agent.side.notify.outbox import Courier
from agent.side.notify.webhook import Webhook

log = logging.getLogger(__name__)

CARRIES = {"webhook": frozenset({MESSAGE_LEFT, QUESTION_DECLINED, TRANSFER_FAILED}),
           "mail": frozenset({MESSAGE_LEFT, TRANSFER_FAILED, DIGEST})}
"""The webhook gets every event as it happens; mail gets what needs the owner now, and declines once a day."""


def next_digest(now: float, hour: int) -> float:
    """The next local `hour`:00 after `now` (epoch seconds)."""
    local = datetime.datetime.fromtimestamp(now).astimezone()
    at = local.replace(hour=hour, minute=0, second=0, microsecond=0)
    if at <= local:
        at += datetime.timedelta(days=1)
    return at.timestamp()


class Notifier:
    def __init__(self, config: NotifyConfig, outbox: Path, agent: str,
                 unanswered: Callable[[float], list[dict]] | None = None,
                 on_result: Callable[[str, str], None] = lambda channel, result: None,
                 on_pending: Callable[[str, int], None] = lambda channel, n: None) -> None:
        """`unanswered(since)`: the questions declined since then, grouped (for the digest)."""
        self.agent = agent
        self.couriers: dict[str, Courier] = {}
        if config.webhook_url:
            self.couriers["webhook"] = Courier("webhook", outbox, Webhook(config.webhook_url, config.webhook_secret),
                                               on_result, on_pending)
        if config.smtp is not None:
            self.couriers["mail"] = Courier("mail", outbox, Mailer(config.smtp), on_result, on_pending)
        self._stop = threading.Event()
        self._digest = None
        if config.digest_hour >= 0 and unanswered is not None and "mail" in self.couriers:
            self._digest = threading.Thread(target=self._digests, args=(config.digest_hour, unanswered),
                                            name="notify-digest", daemon=True)
            self._digest.start()

    def tell(self, notice: Event) -> None:
        """Never blocks: the event is queued for every channel that carries its kind."""
        for channel, courier in self.couriers.items():
            if notice.kind in CARRIES[channel]:
                courier.put(notice)

    def stop(self) -> None:
        self._stop.set()
        for courier in self.couriers.values():
            courier.stop()

    def _digests(self, hour: int, unanswered: Callable[[float], list[dict]]) -> None:
        while not self._stop.wait(max(0.0, next_digest(time.time(), hour) - time.time())):
            now = time.time()
            try:
                groups = unanswered(now - 86400)
            except Exception as exc:  # the store is away: tomorrow's digest covers its own day only
                event(log, "notify.digest_failed", logging.ERROR, error=f"{type(exc).__name__}: {exc}"[:200])
                continue
            self.tell(digest(time.strftime("%Y-%m-%d", time.localtime(now)), groups, self.agent, now))


def open_notifier(config: NotifyConfig, outbox: Path, instance: str, store, embed: Callable[[list[str]], object],
                  metrics) -> Notifier | None:
    """The notifier `config` asks for (None: nobody is to be told) for agent `instance`, its queue in the SQLite
    file `outbox` and its digest grouped by meaning like the dashboard's (store: side.records; embed: the KB's
    embedder)."""
    from agent.side.unanswered import group_by_meaning

    if not config.any:
        return None

    def unanswered(since: float) -> list[dict]:
        questions = store.unanswered(since, 500, instance)
        groups = group_by_meaning(questions, embed([q.text for q in questions])) if questions else []
        return [{k: v for k, v in g.items() if k != "last_ts"} for g in groups]

    return Notifier(config, outbox, instance, unanswered, metrics.notification, metrics.notification_pending)
