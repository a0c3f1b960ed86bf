"""docker-compose.line.yml on top of docker-compose.yml: two agents behind Kamailio's dispatcher, sharing call
records in PostgreSQL. There is no Docker engine here, so the files are merged as compose merges them and
checked for what would break the line; the shipped Kamailio config is checked by Kamailio itself."""

import re
import subprocess

import pytest
import yaml

from agent.deploy import images
from agent.settings import load
from tests.conftest import REPO
from tests.deploy.asterisk_conf import parse_asterisk

ASTERISK_PJSIP = (REPO / "dialplans" / "asterisk" / "pjsip.conf").read_text()
AGENTS = ("agent", "agent-b")
HOST_ENV = {"POSTGRES_PASSWORD": "s3cret", "SOFTPHONE_PASSWORD": "x"}


def _merge(base, override):
    """Compose's merge: mappings key by key, `volumes` by their target in the container, other lists replaced."""
    if isinstance(base, dict) and isinstance(override, dict):
        return {k: _merge(base[k], v) if k in base else v for k, v in override.items()} | \
            {k: v for k, v in base.items() if k not in override}
    return override


def _merge_volumes(base: list[str], override: list[str]) -> list[str]:
    targets = {v.split(":")[1]: v for v in base}
    targets |= {v.split(":")[1]: v for v in override}
    return list(targets.values())


def _interpolate(value: str) -> str:
    """${NAME:-default}, ${NAME:?message} and ${NAME} as compose reads them with HOST_ENV set."""
    return re.sub(r"\$\{(\w+)(?::([-?])([^}]*))?\}",
                  lambda m: HOST_ENV.get(m.group(1)) or (m.group(3) if m.group(2) == "-" else ""), value)


@pytest.fixture(scope="module")
def line():
    base = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    override = yaml.safe_load((REPO / "docker-compose.line.yml").read_text())
    services = _merge(base["services"], override["services"])
    for name, service in override["services"].items():
        if name in base["services"] and "volumes" in service:
            services[name]["volumes"] = _merge_volumes(base["services"][name].get("volumes", []), service["volumes"])
    return services


def _env(service: dict) -> dict[str, str]:
    return {k: _interpolate(str(v)) for k, v in service["environment"].items()}


def _address(service: dict) -> str:
    return service["networks"]["voice"]["ipv4_address"]


def test_both_agents_environments_are_valid_settings_on_one_database_as_two_instances(line):
    settings = [load(_env(line[name])) for name in AGENTS]
    assert settings[0].database_url == settings[1].database_url == "postgresql://agent:s3cret@172.28.0.30/calls"
    assert {s.instance for s in settings} == {"agent-a", "agent-b"}
    assert [s.sip_host for s in settings] == [_address(line[name]) for name in AGENTS]


def test_the_database_url_names_the_postgres_service_its_user_and_database(line):
    postgres = line["postgres"]
    env = _env(postgres)
    url = _env(line["agent"])["AGENT_DATABASE_URL"]
    assert url == f"postgresql://{env['POSTGRES_USER']}:{env['POSTGRES_PASSWORD']}@{_address(postgres)}/" \
                  f"{env['POSTGRES_DB']}"
    assert all(line[name]["depends_on"]["postgres"]["condition"] == "service_healthy" for name in AGENTS)


def test_kamailio_takes_the_address_asterisk_sends_calls_to_and_lists_both_agents(line):
    trunk = _env(line["asterisk"])["AGENT_TRUNK"]  # the plain trunk: Kamailio's dispatcher here has no TLS
    contact = re.search(r"^sip:agent@([\d.]+):(\d+)$", parse_asterisk(ASTERISK_PJSIP).named(trunk, "aor")
                        .get("contact"))
    command = " ".join(line["kamailio"]["command"])
    assert _address(line["kamailio"]) == contact.group(1)
    assert f"LISTEN=udp:{contact.group(1)}:{contact.group(2)}" in command
    listed = re.findall(r"^1 sip:([\d.]+):(\d+)$", (REPO / "dialplans" / "kamailio" / "line.list").read_text(), re.M)
    assert listed == [(_env(line[name])["AGENT_SIP_HOST"], _env(line[name])["AGENT_SIP_PORT"]) for name in AGENTS]


def test_the_agents_take_plain_sip_and_rtp_from_kamailio(line):
    for name in AGENTS:
        settings = load(_env(line[name]))
        assert settings.sip_tls_port == 0 and settings.srtp == "off"


def test_the_agents_trust_kamailio_alone_and_publish_their_side_apps_on_loopback(line):
    for name in AGENTS:
        assert _env(line[name])["AGENT_SIP_TRUSTED_PEERS"] == _address(line["kamailio"])
    ports = [line[name]["ports"] for name in AGENTS]
    assert ports == [["127.0.0.1:8000:8000/tcp"], ["127.0.0.1:8001:8000/tcp"]]


def test_both_agents_answer_from_the_same_kb_files(line):
    kb = [[v for v in line[name]["volumes"] if v.endswith(":/app/kb:ro")] for name in AGENTS]
    assert kb[0] == kb[1] == ["${KB_DIR:-./kb}:/app/kb:ro"]


def test_every_image_of_the_overlay_is_one_the_repository_builds(line):
    built = {image.tag: image.dockerfile for image in images.LINE}
    for name in ("kamailio", "postgres"):
        dockerfile = REPO / line[name]["build"]["dockerfile"]
        assert built[line[name]["image"]] == dockerfile and dockerfile.is_file(), name


def test_kamailio_accepts_the_shipped_config_with_the_lines_agent_list(tmp_path):
    listing = REPO / "dialplans" / "kamailio" / "line.list"
    check = subprocess.run(["kamailio", "-c", "-f", str(REPO / "dialplans" / "kamailio" / "dispatcher.cfg"),
                            "-A", "LISTEN=udp:127.0.0.1:5999", "-A", f'DISPATCHER_LIST="{listing}"'],
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stderr[-2000:]
