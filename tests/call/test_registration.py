import pytest

from agent.sip.registration import Registration, RegistrationConfig, retry_delay


def test_retries_double_from_two_seconds_up_to_the_cap():
    assert [retry_delay(n, 30) for n in range(1, 7)] == [2, 4, 8, 16, 30, 30]


def test_a_failure_schedules_a_retry_and_a_success_resets_the_count():
    registration = Registration(RegistrationConfig("sip:pbx.example.com", "agent", "pw", retry_max_s=60))
    assert registration.status.state == "registering"
    assert registration.on_result(408, "Request Timeout", 0) == 2
    assert registration.on_result(503, "Service Unavailable", 0) == 4
    assert registration.status.describe() == "failed: 503 Service Unavailable, retry in 4 s"
    assert registration.on_result(200, "OK", 300) is None
    assert registration.status.registered and registration.status.failures == 0
    assert registration.on_result(403, "Forbidden", 0) == 2


@pytest.mark.parametrize(("registrar", "aor"), [
    ("sip:pbx.example.com", "sip:agent@pbx.example.com"),
    ("sip:10.0.0.5:5060;transport=tcp", "sip:agent@10.0.0.5"),
    ("sips:user@[2001:db8::1]:5061", "sip:agent@[2001:db8::1]"),
])
def test_the_address_of_record_is_the_user_at_the_registrars_domain(registrar, aor):
    assert RegistrationConfig(registrar, "agent", None).address_of_record == aor


def test_a_registrar_that_is_not_a_sip_uri_is_refused():
    with pytest.raises(ValueError, match="not a SIP URI"):
        _ = RegistrationConfig("pbx.example.com", "agent", None).address_of_record
