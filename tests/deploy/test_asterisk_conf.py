"""The reader the deployment tests check Asterisk's configuration with refuses what Asterisk would misread."""

import pytest

from tests.deploy.asterisk_conf import parse_asterisk


@pytest.mark.parametrize("text", ["allow=ulaw\n", "[agent]\nthis is not an option\n", "[a]\n#exec rm -rf /\n"])
def test_the_config_reader_rejects_what_asterisk_would_misread(text):
    with pytest.raises(ValueError, match="line"):
        parse_asterisk(text)
