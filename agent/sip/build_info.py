"""What the installed pjsua2 can hold: its version, its call slots and its I/O queue's sockets.

The agent builds pjsua2 from source (agent/sip/pjproject), and that module says what its config_site.h set
(`pjsua2.BUILD`). PyPI's wheel says nothing: its limits are pjsua's stock ones, measured (a larger
uaConfig.maxCalls is cut to 4 without a word; its select() I/O queue watches 64 sockets).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

PYPI_MAX_CALLS = 4
PYPI_IOQUEUE_SOCKETS = 64


@dataclass(frozen=True)
class Pjsua2Build:
    version: str
    """The pjsua2 distribution's version (`2.17+src.<key>` when built here)."""
    max_calls: int
    """PJSUA_MAX_CALLS: INVITEs, answered or being refused, pjsua holds at once."""
    ioqueue_sockets: int
    """PJ_IOQUEUE_MAX_HANDLES: sockets pjlib's I/O queue watches (SIP transports and every call's RTP, RTCP)."""
    from_source: bool

    def describe(self) -> str:
        origin = "built from source" if self.from_source else "PyPI wheel"
        return f"pjsua2 {self.version} ({origin}): {self.max_calls} calls, {self.ioqueue_sockets} sockets"


def installed() -> Pjsua2Build:
    import pjsua2

    try:
        version = metadata.version("pjsua2-python")
    except metadata.PackageNotFoundError:
        version = getattr(pjsua2, "__version__", "unknown")
    build = getattr(pjsua2, "BUILD", None)
    if isinstance(build, dict):
        return Pjsua2Build(version, int(build["max_calls"]), int(build["ioqueue_handles"]), True)
    return Pjsua2Build(version, PYPI_MAX_CALLS, PYPI_IOQUEUE_SOCKETS, False)


def security_features() -> tuple[bool, bool]:
    """(TLS, SRTP): whether this pjsua2 can open a SIP TLS transport and offers SRTP crypto suites. Creates the
    process's one pjsua2 Endpoint for the probe and destroys it again: for `agent check`, not a running agent."""
    import pjsua2 as pj

    from agent.sip.pjlog import create_library

    endpoint = pj.Endpoint()
    create_library(endpoint)
    try:
        config = pj.EpConfig()
        config.logConfig.level = config.logConfig.consoleLevel = 0
        config.uaConfig.threadCnt, config.uaConfig.mainThreadOnly = 0, False
        endpoint.libInit(config)
        transport = pj.TransportConfig()
        transport.boundAddress, transport.port = "127.0.0.1", 0
        try:
            endpoint.transportCreate(pj.PJSIP_TRANSPORT_TLS, transport)
            tls = True
        except pj.Error:
            tls = False
        try:
            srtp = len(endpoint.srtpCryptoEnum()) > 0
        except pj.Error:
            srtp = False
        return tls, srtp
    finally:
        endpoint.libDestroy()
