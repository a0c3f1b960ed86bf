"""The pjsua2 source build's pure parts: the pin, the limits it reports, where the source comes from, the
wheel it makes, and what the installed module says it holds."""

import hashlib
import io
import tarfile
import zipfile

import pytest

from agent.sip import build_info
from agent.sip.pjproject import build
from agent.sip.pjproject.__main__ import cached_wheel


def test_the_agents_config_site_sets_the_limits_the_module_reports():
    limits = build.config_limits((build.HERE / "config_site.h").read_text())
    assert limits == {"max_calls": 64, "ioqueue_handles": 1024}


def test_a_config_site_without_the_limits_is_refused():
    with pytest.raises(ValueError, match="PJSUA_MAX_CALLS"):
        build.config_limits("#define PJSUA_MAX_CALLS FOUR\n#define PJ_IOQUEUE_MAX_HANDLES 64\n")


def test_the_pin_names_a_sha256_and_a_size():
    pin = build.load_pin()
    assert len(pin.sha256) == 64 and int(pin.sha256, 16) >= 0 and pin.size > 1_000_000
    assert pin.file.endswith("pjproject.tar.xz") and not pin.pool.startswith("/")


def test_mirrors_are_read_from_the_machines_apt_sources_both_formats_security_left_out(tmp_path):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text("# a comment\ndeb [arch=amd64] http://one.example/debian/ bookworm main\n"
                                           "deb http://one.example/debian-security bookworm-security main\n")
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://two.example/debian\nSuites: bookworm\n\n"
        "Types: deb\nURIs: http://two.example/debian-security\nSuites: bookworm-security\n")
    (tmp_path / "sources.list.d" / "other.list").write_text("deb https://packages.example/apt stable main\n")
    assert build.debian_mirrors(tmp_path) == ["http://one.example/debian", "http://two.example/debian"]


def test_no_apt_sources_no_mirror(tmp_path):
    assert build.debian_mirrors(tmp_path) == []
    with pytest.raises(build.Unavailable, match="no Debian mirror"):
        build.fetch(build.load_pin(), tmp_path / "downloads", [])


def test_a_download_that_does_not_match_the_pin_is_not_kept(tmp_path):
    pin = build.load_pin()
    served = tmp_path / "mirror" / pin.pool
    served.mkdir(parents=True)
    (served / pin.file).write_bytes(b"not the tarball")
    with pytest.raises(build.Unavailable, match="sha256"):
        build.fetch(pin, tmp_path / "downloads", [(tmp_path / "mirror").as_uri()])
    assert not any((tmp_path / "downloads").iterdir())


def test_the_key_changes_with_the_configuration():
    pin, config = build.load_pin(), (build.HERE / "config_site.h").read_text()
    assert build.build_key(pin, config) == build.build_key(pin, config)
    assert build.build_key(pin, config) != build.build_key(pin, config + "#define PJ_LOG_MAX_LEVEL 3\n")


def test_the_wheel_replaces_pypis_distribution_and_records_every_file(tmp_path):
    bindings, module = tmp_path / "pjsua2.py", tmp_path / "_pjsua2.cpython-311-x86_64-linux-gnu.so"
    bindings.write_text("X = 1\n")
    module.write_bytes(b"\x7fELF not really")
    wheel = build.make_wheel(bindings, module, build.load_pin(), {"max_calls": 64, "ioqueue_handles": 1024},
                             "abc123", tmp_path / "out")
    assert wheel.name.startswith("pjsua2_python-2.17+src.abc123-cp3")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        record = archive.read("pjsua2_python-2.17+src.abc123.dist-info/RECORD").decode()
        init = archive.read("pjsua2/__init__.py").decode()
        metadata = archive.read("pjsua2_python-2.17+src.abc123.dist-info/METADATA").decode()
    assert {"pjsua2/__init__.py", "pjsua2/pjsua2.py", f"pjsua2/{module.name}"} <= names
    assert "Name: pjsua2-python" in metadata
    assert "'max_calls': 64" in init and "from .pjsua2 import *" in init
    recorded = {line.split(",")[0] for line in record.splitlines()}
    assert recorded == names


def test_a_cached_wheel_is_used_only_when_its_sha256_matches(tmp_path):
    wheel = tmp_path / "pjsua2_python-2.17+src.k1-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"wheel")
    assert cached_wheel(tmp_path, "k1") is None  # no recorded sha256
    stamp = tmp_path / (wheel.name + ".sha256")
    stamp.write_text(hashlib.sha256(b"wheel").hexdigest() + "\n")
    assert cached_wheel(tmp_path, "k1") == wheel
    wheel.write_bytes(b"tampered")
    assert cached_wheel(tmp_path, "k1") is None
    assert cached_wheel(tmp_path, "other") is None


def test_the_installed_module_says_what_it_holds():
    installed = build_info.installed()
    if installed.from_source:
        assert (installed.max_calls, installed.ioqueue_sockets) == (64, 1024)
        assert installed.version.startswith("2.17+src.")
    else:
        assert (installed.max_calls, installed.ioqueue_sockets) == (4, 64)
    assert str(installed.max_calls) in installed.describe()


def test_without_the_source_it_says_why_in_one_line_and_keeps_the_installed_pjsua2(tmp_path, monkeypatch, capsys):
    from agent.sip.pjproject import __main__ as command

    monkeypatch.setattr(build, "debian_mirrors", lambda: [])
    monkeypatch.setattr(build, "missing_prerequisites", lambda: [])
    before = command.installed_version()
    assert command.main(["--cache", str(tmp_path)]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("pjsua2: not built from source: no Debian mirror") and "4 calls" in line
    assert command.installed_version() == before
    assert command.main(["--cache", str(tmp_path), "--require"]) == 1  # the image build stops instead


def _tarball(path, entries):
    """A tar of `entries`: (name, kind) with kind 'file', 'dir' or 'symlink'."""
    with tarfile.open(path, "w") as archive:
        for name, kind in entries:
            info = tarfile.TarInfo(name)
            if kind == "dir":
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
            elif kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                archive.addfile(info)
            else:
                info.size, info.mode = 3, 0o4777
                archive.addfile(info, io.BytesIO(b"abc"))
    return path


def test_a_source_tarball_unpacks_its_files_and_folders_without_setuid_bits(tmp_path):
    with tarfile.open(_tarball(tmp_path / "ok.tar", [("src", "dir"), ("src/configure", "file")])) as archive:
        members = build.plain_members(archive)
        archive.extractall(tmp_path / "out", members=members)
    unpacked = tmp_path / "out" / "src" / "configure"
    assert unpacked.read_bytes() == b"abc" and unpacked.stat().st_mode & 0o7777 == 0o755


@pytest.mark.parametrize("entry", [("../escape", "file"), ("/etc/cron.d/x", "file"), ("src/link", "symlink")])
def test_a_source_tarball_with_a_path_outside_its_folder_or_a_link_is_refused(tmp_path, entry):
    with tarfile.open(_tarball(tmp_path / "bad.tar", [("src", "dir"), entry])) as archive, \
            pytest.raises(build.Unavailable, match="source tarball"):
        build.plain_members(archive)
