"""pjsua2 set up for the agent, from its SIP settings: the library's configuration, the transports (UDP, TCP and
TLS on one address), the codecs it offers (G.722, then G.711, nothing else) and the account every call arrives on,
registered with a PBX when one is configured."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pjsua2 as pj

from agent.logs import event
from agent.sip.admission import AdmissionConfig, rtp_ports_needed
from agent.sip.build_info import PYPI_IOQUEUE_SOCKETS, PYPI_MAX_CALLS
from agent.sip.port import configure_bridge
from agent.sip.registration import RegistrationConfig
from agent.sip.security import TlsConfig, configure_srtp, tls_transport

log = logging.getLogger(__name__)

CODEC_PRIORITIES = {"G722/16000/1": 255, "PCMU/8000/1": 254, "PCMA/8000/1": 253}


@dataclass(frozen=True)
class SipConfig:
    host: str
    port: int
    rtp_port_min: int
    rtp_port_max: int
    max_calls: int
    domains: tuple[str, ...] = ()
    """Request-URI hosts the agent answers besides its own address (a proxy's domain, say)."""
    user_agent: str = "offline-phone-agent"
    registration: RegistrationConfig | None = None
    """REGISTER to this registrar (PBX or trunk); None: take direct calls only."""
    admission: AdmissionConfig = AdmissionConfig()
    """Per-source INVITE rates and call counts, and the flood brake (see admission)."""
    call_slots: int = PYPI_MAX_CALLS
    """The installed pjsua2's PJSUA_MAX_CALLS (see build_info)."""
    ioqueue_sockets: int = PYPI_IOQUEUE_SOCKETS
    """The installed pjsua2's PJ_IOQUEUE_MAX_HANDLES (see build_info)."""
    tls: TlsConfig | None = None
    """SIP over TLS on another port of the same address (see security); None: UDP and TCP only."""
    srtp: str = "off"
    """SDES-SRTP for calls signalled over TLS: off, optional or mandatory (see security)."""

    @property
    def accepted_hosts(self) -> frozenset[str]:
        return frozenset({self.host, "localhost", *(d.lower() for d in self.domains)})


def source_address(source: str) -> str:
    """The IP address of pjsip's 'host:port' source ('[::1]:5060' -> '::1')."""
    host = source.rsplit(":", 1)[0] if source.count(":") == 1 or source.startswith("[") else source
    return host.strip("[]")


def endpoint_config(config: SipConfig) -> pj.EpConfig:
    ep_config = pj.EpConfig()
    ep_config.uaConfig.threadCnt = 0  # SIP events are handled on the SIP thread, in libHandleEvents
    ep_config.uaConfig.mainThreadOnly = False
    # All of the build's PJSUA_MAX_CALLS (a larger value is cut to it without a word): at most this many
    # INVITEs, answered or being refused, at once; pjsua itself answers 486 beyond it, unlogged.
    ep_config.uaConfig.maxCalls = config.call_slots
    ep_config.uaConfig.userAgent = config.user_agent
    configure_bridge(ep_config)
    return ep_config


def start_transports(endpoint: pj.Endpoint, config: SipConfig) -> None:
    """UDP, TCP and (when configured) TLS on the agent's address; the library started, its conference bridge
    clocked by the null sound device (there is no sound card), and the codecs in the agent's order."""
    transport = pj.TransportConfig()
    transport.port = config.port
    transport.boundAddress = config.host
    transport.publicAddress = config.host
    endpoint.transportCreate(pj.PJSIP_TRANSPORT_UDP, transport)
    endpoint.transportCreate(pj.PJSIP_TRANSPORT_TCP, transport)
    if config.tls is not None:
        endpoint.transportCreate(pj.PJSIP_TRANSPORT_TLS, tls_transport(config.host, config.tls))
    endpoint.libStart()
    endpoint.audDevManager().setNullDev()
    for codec in endpoint.codecEnum2():
        endpoint.codecSetPriority(codec.codecId, CODEC_PRIORITIES.get(codec.codecId, 0))


def account_config(config: SipConfig) -> pj.AccountConfig:
    """The account every call arrives on: RTP ports from the agent's range, enough for its calls; SRTP as set."""
    account = pj.AccountConfig()
    account.idUri = f"sip:agent@{config.host}:{config.port}"
    if config.registration is not None:
        _register(account, config.registration)
    configure_srtp(account.mediaConfig, config.srtp)
    media = account.mediaConfig.transportConfig
    media.port = config.rtp_port_min
    media.portRange = min(config.rtp_port_max - config.rtp_port_min, rtp_ports_needed(config.max_calls))
    media.boundAddress = config.host
    media.publicAddress = config.host
    return account


def _register(account: pj.AccountConfig, config: RegistrationConfig) -> None:
    account.idUri = config.address_of_record
    reg = account.regConfig
    reg.registrarUri = config.registrar
    reg.timeoutSec = config.expires_s
    reg.retryIntervalSec = 0  # retries are the endpoint's, with backoff (see SipEndpoint.registration_result)
    reg.firstRetryIntervalSec = 0
    reg.dropCallsOnFail = False  # a registrar outage must not cut calls in progress
    reg.unregWaitMsec = 1000
    if config.password is not None:
        credentials = pj.AuthCredInfo("digest", config.realm, config.username, 0, config.password)
        account.sipConfig.authCreds.append(credentials)
    event(log, "sip.registering", registrar=config.registrar, aor=config.address_of_record,
          expires_s=config.expires_s)
