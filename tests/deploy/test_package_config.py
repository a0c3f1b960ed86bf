"""What a container is given of this machine's package settings, and where a Debian base image comes from."""

from agent.deploy.debian_base import apt_source_files, base_tag
from agent.deploy.package_config import CA_IN_CONTAINER, parse_pip_config, pip_environment

LISTING = """:env:.cert='/etc/ssl/certs/ca-certificates.crt'
:env:.default-timeout='180'
global.extra-index-url='file:///opt/pypi/simple https://mirror.example/simple'
global.find-links='/opt/wheels'
global.constraint='/etc/xdg/pip/constraints.txt'
site.index-url='https://index.example/simple'
"""


def test_pip_config_list_is_read_name_by_name():
    settings = parse_pip_config(LISTING)
    assert settings["index-url"] == "https://index.example/simple" and settings["default-timeout"] == "180"


def test_a_container_gets_the_network_indexes_and_the_ca_bundle_never_this_machines_folders(tmp_path):
    env = pip_environment(parse_pip_config(LISTING), ca_bundle=tmp_path / "ca.pem")
    assert env == {"PIP_INDEX_URL": "https://index.example/simple",
                   "PIP_EXTRA_INDEX_URL": "https://mirror.example/simple", "PIP_DEFAULT_TIMEOUT": "180",
                   "PIP_CERT": CA_IN_CONTAINER, "SSL_CERT_FILE": CA_IN_CONTAINER, "REQUESTS_CA_BUNDLE": CA_IN_CONTAINER}


def test_only_file_indexes_leave_no_extra_index():
    assert "PIP_EXTRA_INDEX_URL" not in pip_environment({"extra-index-url": "file:///opt/a file:///opt/b"}, None)


def test_apt_sources_are_the_files_with_entries_in_apts_order(tmp_path):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text("# nothing here\n")
    (tmp_path / "sources.list.d" / "debian.sources").write_text("Types: deb\nURIs: http://deb.example/debian\n")
    (tmp_path / "sources.list.d" / "extra.list").write_text("deb http://other.example/ bookworm main\n")
    assert [p.name for p in apt_source_files(tmp_path)] == ["extra.list", "debian.sources"]


def test_a_base_image_is_named_by_its_suite_and_packages():
    tag = base_tag("base", "bookworm", ("python3", "make"))
    assert tag.startswith("base:bookworm-") and tag != base_tag("base", "bookworm", ("python3",))
