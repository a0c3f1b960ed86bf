"""SIP over TLS and SRTP (SDES) for call audio: their settings checked before start-up, and turned into
pjsua2's configuration.

A certificate or key that cannot be used must stop the agent at start-up with a reason, not surface as a
TLS handshake failure on the first call: Python's ssl module loads the pair exactly as OpenSSL (which pjsip
uses) will. SRTP keys travel in the SDP (SDES), so they are only as secret as the signalling: pjsua is told
to use SRTP only on calls signalled over TLS; a plain-RTP offer under `mandatory` is refused with 488.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

SRTP_MODES = ("off", "optional", "mandatory")
HANDSHAKE_TIMEOUT_MS = 5000
"""A peer that opens a TLS connection and never finishes the handshake is dropped after this."""


class TlsError(ValueError):
    """The TLS certificate or key cannot be used; the message says which file and why."""


@dataclass(frozen=True)
class TlsConfig:
    port: int
    cert: Path
    key: Path


def check_pem(cert: Path, key: Path, now: datetime.datetime | None = None) -> None:
    """Raise TlsError unless `cert` (a PEM chain) and `key` (its PEM private key, unencrypted) load together and
    the certificate is within its dates: OpenSSL serves an expired one without a word, and every peer that
    verifies it then fails the handshake. A self-signed certificate is accepted (peers that trust it, or do
    not verify, can call)."""
    for name, path in (("certificate", cert), ("key", key)):
        if not path.is_file():
            raise TlsError(f"the TLS {name} file {path} does not exist")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key, password=lambda: b"")
    except ssl.SSLError as exc:
        raise TlsError(f"{cert} and {key} are not a PEM certificate and its unencrypted private key "
                       f"({exc.reason or exc})") from None
    except OSError as exc:
        raise TlsError(f"{cert} or {key} cannot be read ({exc.strerror or exc})") from None
    leaf = x509.load_pem_x509_certificate(cert.read_bytes())
    now = now or datetime.datetime.now(datetime.UTC)
    if now > leaf.not_valid_after_utc:
        raise TlsError(f"the certificate in {cert} expired on {leaf.not_valid_after_utc:%Y-%m-%d}")
    if now < leaf.not_valid_before_utc:
        raise TlsError(f"the certificate in {cert} is not valid before {leaf.not_valid_before_utc:%Y-%m-%d}")


def make_self_signed(cert: Path, key: Path, names: list[str], days: int = 825) -> bool:
    """Write a self-signed certificate for `names` (IP addresses or host names; the first is its common name)
    and its unencrypted key (readable by its owner only), unless `cert` and `key` already hold a usable pair:
    True when it wrote them. Meant for a trunk between a PBX and the agent on a network of their own (the
    bundled compose file), where the PBX encrypts without verifying the agent; across any other network, use a
    certificate the peers trust."""
    try:
        check_pem(cert, key)
        return False
    except TlsError:
        pass
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    alternatives = []
    for name in names:
        try:
            alternatives.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            alternatives.append(x509.DNSName(name))
    now = datetime.datetime.now(datetime.UTC)
    certificate = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                   .public_key(private.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=days))
                   .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
                   # Its own authority, as `openssl req -x509` makes it: a peer trusts it by pinning this file.
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(private, hashes.SHA256()))
    key.parent.mkdir(parents=True, exist_ok=True)
    cert.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption()))
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    return True


def tls_transport(host: str, tls: TlsConfig):
    """A listening TLS transport (pjsua2.TransportConfig) on (host, tls.port): TLS 1.2 or 1.3, the client not
    asked for a certificate (callers authenticate as on UDP: by address, or through the PBX)."""
    import pjsua2 as pj

    transport = pj.TransportConfig()
    transport.port = tls.port
    transport.boundAddress = transport.publicAddress = host
    settings = transport.tlsConfig
    settings.certFile, settings.privKeyFile = str(tls.cert), str(tls.key)
    settings.proto = pj.PJ_SSL_SOCK_PROTO_TLS1_2 | pj.PJ_SSL_SOCK_PROTO_TLS1_3
    settings.verifyClient = settings.requireClientCert = False
    settings.msecTimeout = HANDSHAKE_TIMEOUT_MS
    return transport


def configure_srtp(media, mode: str) -> None:
    """SDES-SRTP on the account's calls (a pjsua2.AccountMediaConfig): off, optional (offered, and accepted when
    the caller offers it) or mandatory (plain RTP refused), and only on calls signalled over TLS."""
    import pjsua2 as pj

    media.srtpUse = {"off": pj.PJMEDIA_SRTP_DISABLED, "optional": pj.PJMEDIA_SRTP_OPTIONAL,
                     "mandatory": pj.PJMEDIA_SRTP_MANDATORY}[mode]
    media.srtpSecureSignaling = 1 if mode != "off" else 0
