"""The container and the bundled Asterisk, checked without Docker or Asterisk (neither exists on these
machines): the files parse, and agree with each other and with the agent's own settings."""

import configparser
import contextlib
import ipaddress
import os
import re
import socket
import ssl
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from agent.dialplan import load_dialplan
from agent.settings import load
from agent.sip.admission import parse_networks
from agent.sip.setup import CODEC_PRIORITIES
from tests.conftest import REPO
from tests.deploy.asterisk_conf import parse_asterisk
from tests.deploy.test_dockerfile import dockerfile

ASTERISK = REPO / "dialplans" / "asterisk"
# Asterisk codec names for the agent's codecs (pjsip ids in CODEC_PRIORITIES).
ASTERISK_CODECS = {"g722": "G722/16000/1", "ulaw": "PCMU/8000/1", "alaw": "PCMA/8000/1"}


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load((REPO / "docker-compose.yml").read_text())


TLS_VOLUME = "/var/lib/agent-tls"
"""Where the tls-cert service writes the trunk's certificates, and the agent reads its own."""


@pytest.fixture(scope="module")
def trunk_tls(compose, tmp_path_factory) -> Path:
    """The trunk's certificates, made by running the tls-cert service's own command here, its volume moved to a
    temporary folder."""
    folder = tmp_path_factory.mktemp("trunk-tls")
    shell, flag, script = compose["services"]["tls-cert"]["command"]
    script = script.replace(TLS_VOLUME, str(folder)).replace("python -m agent", f"{sys.executable} -m agent")
    subprocess.run([shell, flag, script], cwd=REPO, check=True, capture_output=True, timeout=120)
    return folder


@pytest.fixture(scope="module")
def agent_env(compose, trunk_tls):
    """The agent's environment as compose gives it when the host sets none of the variables it refers to
    (`${NAME:-default}` is the default), the certificates' volume where trunk_tls made them."""
    return {k: re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", str(v)).replace(TLS_VOLUME, str(trunk_tls))
            for k, v in compose["services"]["agent"]["environment"].items()}


@pytest.fixture(scope="module")
def pjsip():
    return parse_asterisk((ASTERISK / "pjsip.conf").read_text())


@pytest.fixture(scope="module")
def extensions():
    return parse_asterisk((ASTERISK / "extensions.conf").read_text())


def mounted(service: dict, target: str) -> Path:
    """The repository file a compose service mounts at `target`."""
    for volume in service["volumes"]:
        source, _, rest = volume.partition(":")
        if rest.split(":")[0] == target:
            return REPO / source
    raise AssertionError(f"nothing mounted at {target}")


def published_udp(service: dict) -> set[int]:
    ports = set()
    for entry in service["ports"]:
        spec, _, protocol = entry.rpartition("/")
        if protocol != "udp":
            continue
        host_side = spec.split(":")[-2] if spec.count(":") >= 1 else spec
        low, _, high = host_side.partition("-")
        ports |= set(range(int(low), int(high or low) + 1))
    return ports


def test_the_agents_compose_environment_is_valid_agent_settings(agent_env):
    settings = load(agent_env)  # raises SettingsError on any bad value
    assert settings.sip_port == 5060 and settings.http_host == "0.0.0.0"


def test_the_agent_binds_the_address_compose_gives_it(compose, agent_env):
    assert agent_env["AGENT_SIP_HOST"] == compose["services"]["agent"]["networks"]["voice"]["ipv4_address"]


def test_the_side_app_is_published_on_the_hosts_loopback_only(compose, agent_env):
    assert compose["services"]["agent"]["ports"] == [f"127.0.0.1:{agent_env['AGENT_HTTP_PORT']}:8000/tcp"]


def test_asterisk_sends_calls_to_the_agents_address_and_port(pjsip, agent_env):
    contact = pjsip.named("agent", "aor").get("contact")
    assert contact == f"sip:agent@{agent_env['AGENT_SIP_HOST']}:{agent_env['AGENT_SIP_TLS_PORT']};transport=tls"
    plain = pjsip.named("agent-udp", "aor").get("contact")
    assert plain == f"sip:agent@{agent_env['AGENT_SIP_HOST']}:{agent_env['AGENT_SIP_PORT']}"
    assert pjsip.named("agent", "identify").get("match") == agent_env["AGENT_SIP_HOST"]


def test_the_bundled_trunk_is_sip_over_tls_with_srtp_audio_the_agent_insists_on(compose, pjsip, agent_env):
    endpoint = pjsip.named(compose["services"]["asterisk"]["environment"]["AGENT_TRUNK"], "endpoint")
    transport = pjsip.named(endpoint.get("transport"), "transport")
    assert transport.get("protocol") == "tls" and endpoint.get("media_encryption") == "sdes"
    settings = load(agent_env)
    assert settings.sip_tls_port == 5061 and settings.srtp == "mandatory"


def test_asterisk_trusts_exactly_the_agents_certificate_and_checks_it_names_the_agent(pjsip, agent_env, trunk_tls):
    transport = pjsip.named("transport-tls", "transport")
    assert transport.get("verify_server") == "yes"
    assert Path(transport.get("ca_list_file")).name == Path(agent_env["AGENT_SIP_TLS_CERT"]).name == "agent.crt"
    # A TLS client that trusts that one file, as Asterisk's transport does, connects to the agent's address.
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(agent_env["AGENT_SIP_TLS_CERT"], agent_env["AGENT_SIP_TLS_KEY"])
    client = ssl.create_default_context(cafile=str(trunk_tls / "agent.crt"))
    assert _handshake(server, client, agent_env["AGENT_SIP_HOST"])
    assert not _handshake(server, client, "172.28.0.99")  # a certificate naming another address is refused


def _handshake(server: ssl.SSLContext, client: ssl.SSLContext, name: str) -> bool:
    """Whether `client` completes a TLS handshake with `server` over a loopback socket pair, expecting `name`."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        serving = threading.Thread(target=_serve_once, args=(server, theirs), daemon=True)
        serving.start()
        try:
            with client.wrap_socket(ours, server_hostname=name):
                return True
        except ssl.SSLCertVerificationError:
            return False
        finally:
            serving.join(timeout=5)


def _serve_once(server: ssl.SSLContext, connection: socket.socket) -> None:
    with contextlib.suppress(ssl.SSLError, OSError):  # the client refusing the certificate ends it
        server.wrap_socket(connection, server_side=True).close()


def test_asterisk_is_the_agents_trusted_peer_so_its_calls_are_not_limited_per_source(compose, agent_env):
    trusted = parse_networks(load(agent_env).sip_trusted_peers)
    asterisk = compose["services"]["asterisk"]["networks"]["voice"]["ipv4_address"]
    assert any(ipaddress.ip_address(asterisk) in network for network in trusted)


def test_a_dead_agent_is_restarted_by_compose_and_by_the_systemd_unit(compose):
    assert compose["services"]["agent"]["restart"] in ("always", "unless-stopped")
    unit = configparser.ConfigParser(strict=True, interpolation=None)
    unit.optionxform = str  # systemd keys are case-sensitive
    unit.read_string((REPO / "dialplans" / "systemd" / "phone-agent.service").read_text())
    service = unit["Service"]
    assert service["Restart"] == "always" and float(service["RestartSec"]) <= 5
    assert service["ExecStart"].endswith("python -m agent run") and service["KillSignal"] == "SIGTERM"
    assert unit["Install"]["WantedBy"] == "multi-user.target"
    # Both give the agent longer than its SIGTERM drain before they kill it.
    drain = load({}).drain_s
    assert int(compose["services"]["agent"]["stop_grace_period"].rstrip("s")) > drain
    assert int(service["TimeoutStopSec"]) > drain


def test_every_asterisk_endpoint_offers_only_codecs_the_agent_accepts(pjsip):
    for endpoint in pjsip.of_type("endpoint"):
        assert endpoint.get("disallow") == "all", endpoint.name
        allowed = [c.strip() for c in endpoint.get("allow").split(",")]
        assert allowed and {ASTERISK_CODECS[c] for c in allowed} <= CODEC_PRIORITIES.keys(), endpoint.name
        assert endpoint.get("dtmf_mode") == "rfc4733", endpoint.name


def test_endpoint_references_resolve(pjsip, extensions):
    contexts = {s.name for s in extensions.sections}
    for endpoint in pjsip.of_type("endpoint"):
        assert endpoint.get("context") in contexts, endpoint.name
        for aor in endpoint.get("aors").split(","):
            pjsip.named(aor.strip(), "aor")
        if endpoint.get("transport"):
            pjsip.named(endpoint.get("transport"), "transport")


def start_asterisk(etc: Path, tls: Path, **env: str) -> subprocess.CompletedProcess:
    """The bundled Asterisk's start.sh, writing into `etc`, with the tls-cert service's volume at `tls`."""
    etc.mkdir(exist_ok=True)
    env = {"PATH": os.environ["PATH"], "ASTERISK_ETC": str(etc), "TLS_DIR": str(tls), **env}
    return subprocess.run(["sh", str(ASTERISK / "start.sh"), "true"], env=env, capture_output=True, text=True)


def test_the_softphone_password_comes_from_the_environment_not_the_repository(pjsip, extensions, tmp_path,
                                                                             trunk_tls):
    assert start_asterisk(tmp_path, trunk_tls, SOFTPHONE_PASSWORD="p@ss; w|rd $x").returncode == 0
    assert set(pjsip.includes) | set(extensions.includes) == {p.name for p in tmp_path.glob("*.conf")}
    generated = parse_asterisk((tmp_path / "pjsip_softphone_auth.conf").read_text())
    auth = generated.named(pjsip.named("6001", "endpoint").get("auth"), "auth")
    assert auth.get("username") == "6001" and auth.get("password") == "p@ss; w|rd $x"
    reception = generated.named(pjsip.named("6002", "endpoint").get("auth"), "auth")
    assert reception.get("username") == "6002" and reception.get("password") == "p@ss; w|rd $x"
    assert start_asterisk(tmp_path, trunk_tls, SOFTPHONE_PASSWORD="a", RECEPTION_PASSWORD="b").returncode == 0
    generated = parse_asterisk((tmp_path / "pjsip_softphone_auth.conf").read_text())
    assert generated.named("6002-auth", "auth").get("password") == "b"
    assert not [s.name for s in pjsip.sections if s.get("password")]


def test_asterisk_does_not_start_without_a_softphone_password(tmp_path, trunk_tls):
    result = start_asterisk(tmp_path, trunk_tls)
    assert result.returncode == 2 and "SOFTPHONE_PASSWORD" in result.stderr


def test_asterisk_gets_the_trunks_certificates_with_its_key_kept_private(pjsip, tmp_path, trunk_tls):
    assert start_asterisk(tmp_path / "etc", trunk_tls, SOFTPHONE_PASSWORD="x").returncode == 0
    transport = pjsip.named("transport-tls", "transport")
    for option in ("cert_file", "priv_key_file", "ca_list_file"):
        copied = tmp_path / "etc" / "keys" / Path(transport.get(option)).name
        assert copied.read_bytes() == (trunk_tls / copied.name).read_bytes(), option
    assert (tmp_path / "etc" / "keys" / "asterisk.key").stat().st_mode & 0o077 == 0
    missing = start_asterisk(tmp_path / "bare", tmp_path / "no-certificates", SOFTPHONE_PASSWORD="x")
    assert missing.returncode == 2 and "tls-cert" in missing.stderr


@pytest.mark.parametrize("trunk", ["agent", "agent-udp"])
def test_the_trunk_asterisk_dials_comes_from_its_environment_and_is_an_endpoint(pjsip, tmp_path, trunk_tls, trunk):
    assert start_asterisk(tmp_path, trunk_tls, SOFTPHONE_PASSWORD="x", AGENT_TRUNK=trunk).returncode == 0
    chosen = parse_asterisk((tmp_path / "extensions_trunk.conf").read_text()).named("globals").get("AGENT_TRUNK")
    assert chosen == trunk and pjsip.named(chosen, "endpoint")


@pytest.mark.parametrize(("setting", "written"), [(None, "no"), ("yes", "yes")])
def test_recording_calls_is_off_unless_the_environment_turns_it_on(tmp_path, trunk_tls, setting, written):
    env = {"RECORD_CALLS": setting} if setting else {}
    assert start_asterisk(tmp_path, trunk_tls, SOFTPHONE_PASSWORD="x", **env).returncode == 0
    globals_ = parse_asterisk((tmp_path / "extensions_trunk.conf").read_text()).named("globals")
    assert globals_.get("RECORD_CALLS") == written
    refused = start_asterisk(tmp_path, trunk_tls, SOFTPHONE_PASSWORD="x", RECORD_CALLS="maybe")
    assert refused.returncode == 2 and "RECORD_CALLS" in refused.stderr


def test_asterisk_refuses_a_trunk_it_does_not_have(tmp_path, trunk_tls):
    result = start_asterisk(tmp_path, trunk_tls, SOFTPHONE_PASSWORD="x", AGENT_TRUNK="agent-tcp")
    assert result.returncode == 2 and "AGENT_TRUNK" in result.stderr


def test_dialling_each_agent_extension_routes_to_the_agent_with_the_number(compose, extensions, agent_env):
    mounted_plan = mounted(compose["services"]["agent"], agent_env["AGENT_DIALPLAN"])
    plan = load_dialplan(load({**agent_env, "AGENT_DIALPLAN": str(mounted_plan)}))
    routed = {}
    for option, value in extensions.named("from-softphones").options:
        if option == "exten":
            number, _, rest = value.partition(",")
            routed[number] = rest
        elif option == "same" and "Dial(" in value:
            routed[number] += value
    numeric = [e for p in plan.profiles for e in p.extensions if e.isdigit()]
    assert numeric, "the shipped dialplan has no numeric extension a softphone can dial"
    for extension in numeric:
        assert "Dial(PJSIP/${EXTEN}@${AGENT_TRUNK}" in routed.get(extension, ""), extension


def test_asterisk_rtp_range_is_the_published_one(compose):
    rtp = parse_asterisk((ASTERISK / "rtp.conf").read_text()).named("general")
    wanted = set(range(int(rtp.get("rtpstart")), int(rtp.get("rtpend")) + 1))
    assert wanted <= published_udp(compose["services"]["asterisk"])
    assert 5060 in published_udp(compose["services"]["asterisk"])


def test_compose_mounts_every_asterisk_file_and_they_exist(compose):
    asterisk = compose["services"]["asterisk"]
    for name in ("pjsip.conf", "extensions.conf", "rtp.conf", "modules.conf"):
        assert mounted(asterisk, f"/etc/asterisk/{name}") == ASTERISK / name
    assert asterisk["entrypoint"][-1] == "/opt/dialplans/start.sh"
    assert mounted(asterisk, "/opt/dialplans/start.sh").is_file()


def test_the_asterisk_image_is_built_here_from_debians_pinned_source(compose):
    from agent.deploy.asterisk.build import load_source

    build = compose["services"]["asterisk"]["build"]
    assert build["dockerfile"] == "dialplans/asterisk/Dockerfile" and (REPO / build["dockerfile"]).is_file()
    source = load_source()
    assert source.version.startswith("22.") and all(len(pin.sha256) == 64 for pin in source.tarballs.values())


def test_the_image_exposes_sip_and_the_rtp_range_the_agent_uses(agent_env):
    exposed = " ".join(line for line in dockerfile() if line.startswith("EXPOSE "))
    assert f"{agent_env['AGENT_SIP_PORT']}/udp" in exposed and f"{agent_env['AGENT_SIP_PORT']}/tcp" in exposed
    low, high = re.search(r"(\d+)-(\d+)/udp", exposed).groups()
    assert int(low) <= int(agent_env["AGENT_RTP_PORT_MIN"]) < int(agent_env["AGENT_RTP_PORT_MAX"]) <= int(high)
