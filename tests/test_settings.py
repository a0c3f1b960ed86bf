from dataclasses import FrozenInstanceError, fields
from pathlib import Path

import pytest

from agent.settings import Settings, SettingsError, env_name, load, parse, unknown_variables


def test_defaults_bind_to_loopback():
    s = parse([], {})
    assert (s.sip_host, s.sip_port, s.http_host, s.http_port) == ("127.0.0.1", 5060, "127.0.0.1", 8000)
    assert s.kb_dir == Path("kb") and s.data_dir == Path("var") and s.admin_token is None
    assert s.models_path == Path("var/models")


def test_environment_variables_are_read():
    s = parse([], {"AGENT_SIP_PORT": "5070", "AGENT_HTTP_DOCS": "yes", "AGENT_VAD_THRESHOLD": "0.6",
                   "AGENT_ADMIN_TOKEN": "s3cret", "AGENT_MODELS_DIR": "/opt/models"})
    assert (s.sip_port, s.http_docs, s.vad_threshold, s.admin_token) == (5070, True, 0.6, "s3cret")
    assert s.models_path == Path("/opt/models")


def test_flags_override_the_environment():
    s = parse(["--sip-port", "5080", "--kb-dir", "/srv/kb"], {"AGENT_SIP_PORT": "5070"})
    assert s.sip_port == 5080 and s.kb_dir == Path("/srv/kb")


def test_empty_optional_value_means_unset():
    assert parse([], {"AGENT_ASR_MODEL_PATH": ""}).asr_model_path is None


@pytest.mark.parametrize(("name", "value", "message"), [
    ("AGENT_SIP_PORT", "abc", "AGENT_SIP_PORT (--sip-port): got 'abc', expected an integer"),
    ("AGENT_SIP_PORT", "70000", "AGENT_SIP_PORT (--sip-port): got 70000, allowed 1..65535"),
    ("AGENT_VAD_THRESHOLD", "1.5", "AGENT_VAD_THRESHOLD (--vad-threshold): got 1.5, allowed 0.05..0.95"),
    ("AGENT_HTTP_DOCS", "maybe", "AGENT_HTTP_DOCS (--http-docs): got 'maybe', expected true or false"),
    ("AGENT_SIP_HOST", "localhost:5060", "AGENT_SIP_HOST (--sip-host): got 'localhost:5060', expected an IP"),
    ("AGENT_LOG_LEVEL", "loud", "AGENT_LOG_LEVEL (--log-level): got 'loud', allowed one of debug, info"),
    ("AGENT_ASR_COMPUTE_TYPE", "int4", "allowed one of int8"),
])
def test_bad_values_are_rejected_with_the_setting_name(name, value, message):
    with pytest.raises(SettingsError) as error:
        parse([], {name: value})
    assert message in str(error.value)


def test_bad_flag_value_is_rejected_too():
    with pytest.raises(SettingsError, match="--max-calls"):
        parse(["--max-calls", "0"], {})


def test_inconsistent_settings_are_rejected():
    with pytest.raises(SettingsError, match="RTP_PORT_MIN/MAX"):
        parse([], {"AGENT_RTP_PORT_MIN": "41000", "AGENT_RTP_PORT_MAX": "40000"})
    with pytest.raises(SettingsError, match="both 5060"):
        parse([], {"AGENT_HTTP_PORT": "5060"})
    with pytest.raises(SettingsError, match="AGENT_TRANSFER_TO: got 'reception', expected a SIP URI"):
        parse([], {"AGENT_TRANSFER_TO": "reception"})
    with pytest.raises(SettingsError, match="several people are tried in order only with AGENT_TRANSFER_MODE=warm"):
        parse([], {"AGENT_TRANSFER_TO": "sip:a@pbx,sip:b@pbx", "AGENT_TRANSFER_MODE": "blind"})
    assert parse([], {"AGENT_TRANSFER_TO": "sip:a@pbx, sip:b@pbx"}).transfer_to
    with pytest.raises(SettingsError, match="AGENT_SYNONYMS_PATH: /nonexistent/synonyms.txt is not a file"):
        parse([], {"AGENT_SYNONYMS_PATH": "/nonexistent/synonyms.txt"})
    with pytest.raises(SettingsError, match="AGENT_LLM_URL: got 'llama:8080', expected an http"):
        parse([], {"AGENT_LLM_URL": "llama:8080"})
    with pytest.raises(SettingsError, match="AGENT_LLM_API_KEY_FILE: /nonexistent/key is not a file"):
        parse([], {"AGENT_LLM_URL": "http://127.0.0.1:8080/v1", "AGENT_LLM_API_KEY_FILE": "/nonexistent/key"})


def test_settings_are_frozen():
    with pytest.raises(FrozenInstanceError):
        parse([], {}).sip_port = 1  # type: ignore[misc]


def test_every_setting_is_documented():
    for f in fields(Settings):
        assert len(f.metadata["help"]) > 10, env_name(f.name)


@pytest.mark.parametrize(("env", "message"), [
    ({"AGENT_SIP_HOST": "0.0.0.0"}, "cannot be advertised"),
    ({"AGENT_SIP_REGISTRAR": "pbx.example.com"}, "expected a SIP URI"),
])
def test_addresses_the_agent_cannot_use_are_refused(env, message):
    with pytest.raises(SettingsError, match=message):
        parse([], env)


@pytest.fixture(scope="module")
def tls_pair(tmp_path_factory):
    from tests.conftest import self_signed

    folder = tmp_path_factory.mktemp("pem")
    for name in ("a", "b"):
        self_signed(folder, name, days=1)
    return folder


def test_a_tls_port_with_a_usable_certificate_and_key_is_accepted(tls_pair):
    settings = parse([], {"AGENT_SIP_TLS_PORT": "5061", "AGENT_SIP_TLS_CERT": str(tls_pair / "a.pem"),
                          "AGENT_SIP_TLS_KEY": str(tls_pair / "a.key"), "AGENT_SRTP": "mandatory"})
    assert (settings.sip_tls_port, settings.srtp) == (5061, "mandatory")


@pytest.mark.parametrize(("cert", "key", "message"), [
    ("a.pem", None, "needs AGENT_SIP_TLS_CERT and AGENT_SIP_TLS_KEY"),
    ("missing.pem", "a.key", "missing.pem does not exist"),
    ("a.pem", "b.key", "not a PEM certificate and its unencrypted private key"),  # another certificate's key
    ("a.key", "a.key", "not a PEM certificate"),
])
def test_a_tls_certificate_or_key_that_cannot_be_used_stops_start_up_with_the_reason(tls_pair, cert, key, message):
    env = {"AGENT_SIP_TLS_PORT": "5061", "AGENT_SIP_TLS_CERT": str(tls_pair / cert)}
    if key is not None:
        env["AGENT_SIP_TLS_KEY"] = str(tls_pair / key)
    with pytest.raises(SettingsError, match=message):
        parse([], env)


def test_srtp_without_tls_is_refused_since_its_keys_would_travel_in_clear():
    with pytest.raises(SettingsError, match="AGENT_SRTP=optional needs AGENT_SIP_TLS_PORT"):
        parse([], {"AGENT_SRTP": "optional"})


def test_an_expired_certificate_stops_start_up_with_its_date(tls_pair):
    import datetime

    from agent.sip.security import TlsError, check_pem

    later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=3)  # the pair is valid for one day
    with pytest.raises(TlsError, match="expired on"):
        check_pem(tls_pair / "a.pem", tls_pair / "a.key", now=later)
    check_pem(tls_pair / "a.pem", tls_pair / "a.key")  # self-signed and within its dates: fine


def test_a_misspelt_setting_stops_start_up_naming_the_nearest_real_one():
    with pytest.raises(SettingsError, match=r"AGENT_SRTPP \(did you mean AGENT_SRTP\?\)"):
        load({"AGENT_SRTPP": "mandatory"})


def test_an_agent_variable_near_no_setting_is_named_alone():
    assert unknown_variables({"AGENT_ZZZZZZZZ": "1", "AGENT_SIP_PORT": "5070", "PATH": "/bin"}) == ["AGENT_ZZZZZZZZ"]
