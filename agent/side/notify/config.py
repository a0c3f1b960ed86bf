"""The notification settings as the channels need them, checked together: a webhook needs its secret, mail its
sender and recipients, a login a secure connection. Bad settings stop start-up with what to fix."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from agent.settings import Settings, SettingsError
from agent.side.notify.mail import SmtpConfig

MIN_SECRET = 16
_ADDRESS = re.compile(r"^[^@\s<>,]+@[^@\s<>,]+$")


@dataclass(frozen=True)
class NotifyConfig:
    webhook_url: str = ""
    webhook_secret: str = ""
    smtp: SmtpConfig | None = None
    digest_hour: int = -1
    """Local hour at which the day's unanswered questions are mailed; -1: no digest."""

    @property
    def any(self) -> bool:
        return bool(self.webhook_url or self.smtp)


def notify_config(s: Settings) -> NotifyConfig:
    """The channels the settings turn on; SettingsError names the first setting to fix."""
    if s.webhook_url and not re.match(r"^https?://[^\s/]+", s.webhook_url):
        raise SettingsError(f"AGENT_WEBHOOK_URL: got {s.webhook_url!r}, expected an http(s) URL such as "
                            "https://crm.example.com/hooks/phone")
    if s.webhook_url and len(s.webhook_secret) < MIN_SECRET:
        raise SettingsError(f"AGENT_WEBHOOK_SECRET: {len(s.webhook_secret)} characters; a webhook is signed with "
                            f"it, so it needs at least {MIN_SECRET} (e.g. `openssl rand -hex 32`)")
    smtp = None
    if s.smtp_host:
        recipients = tuple(a.strip() for a in s.smtp_to.split(",") if a.strip())
        for name, addresses in (("AGENT_SMTP_FROM", (s.smtp_from,)), ("AGENT_SMTP_TO", recipients)):
            bad = [a for a in addresses if not _ADDRESS.match(a)]
            if bad or not addresses:
                raise SettingsError(f"{name}: got {', '.join(bad) or 'nothing'}, expected an e-mail address such "
                                    "as owner@example.com (AGENT_SMTP_TO: several, comma-separated)")
        if bool(s.smtp_user) != bool(s.smtp_password):
            raise SettingsError("AGENT_SMTP_USER and AGENT_SMTP_PASSWORD: set both to log in, or neither")
        if s.smtp_user and s.smtp_security == "none" and not _loopback(s.smtp_host):
            raise SettingsError(f"AGENT_SMTP_SECURITY=none with AGENT_SMTP_USER would send the password to "
                                f"{s.smtp_host} in the clear: use starttls or tls")
        if s.smtp_ca_file is not None and not s.smtp_ca_file.is_file():
            raise SettingsError(f"AGENT_SMTP_CA_FILE: {s.smtp_ca_file} is not a file")
        smtp = SmtpConfig(s.smtp_host, s.smtp_port, s.smtp_security, s.smtp_from, recipients, s.smtp_user,
                          s.smtp_password, s.smtp_ca_file)
    elif s.smtp_to:
        raise SettingsError("AGENT_SMTP_TO is set but AGENT_SMTP_HOST is not: no mail can be sent")
    return NotifyConfig(s.webhook_url, s.webhook_secret, smtp, s.smtp_digest_hour if smtp else -1)


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"
