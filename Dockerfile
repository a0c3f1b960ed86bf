# The agent as a container: dependencies and the default models are baked in and verified at build
# time, so a cold container answers its first call without downloading anything.
#   docker build -t phone-agent .          (or `make stack`, which also builds the bundled Asterisk)
#   docker run --network host -e AGENT_SIP_HOST=10.0.0.2 phone-agent
# Settings come from the environment (AGENT_*; `python -m agent --help` lists them all).
# AGENT_SIP_HOST must be the address callers and the PBX reach: it is advertised in SIP and SDP.
#
# BASE: the official Python image by default; any Debian bookworm image with python3 and python3-venv will do
# (`make stack` makes one from Debian's archive when none can be pulled). A machine that reaches PyPI only through
# its own index or CA passes the index as build arguments (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_TRUSTED_HOST)
# and its CA bundle as var/docker/build-ca.pem (agent/deploy/images.py does both): they are used in the install
# stage only, never in the image that runs.
ARG BASE=python:3.11-slim-bookworm

# pjsua2 built from pinned pjproject source (agent/sip/pjproject): 64 calls a process, TLS and SRTP.
FROM ${BASE} AS pjsua2
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential swig pkg-config xz-utils libsrtp2-dev \
       libspeex-dev libspeexdsp-dev libgsm1-dev libopus-dev libssl-dev uuid-dev \
    && if ! python3 -c "import sysconfig, pathlib, sys; sys.exit(not pathlib.Path(sysconfig.get_paths()['include'], 'Python.h').is_file())"; then \
         apt-get install -y --no-install-recommends python3-dev; fi \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /build
COPY agent/__init__.py ./agent/
COPY agent/sip/__init__.py ./agent/sip/
COPY agent/sip/pjproject ./agent/sip/pjproject
RUN python3 -m agent.sip.pjproject --require --no-install --cache /build/wheel

# What the agent needs to run: the shared libraries the pjsua2 module links (Debian's codecs, SRTP and OpenSSL)
# and its unprivileged user.
FROM ${BASE} AS runtime
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsrtp2-1 libspeex1 libspeexdsp1 libgsm1 libopus0 \
       libssl3 libuuid1 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin agent \
    && mkdir -p /var/lib/agent /var/lib/agent-tls \
    && chown agent /var/lib/agent /var/lib/agent-tls

# The virtual environment and the models, fetched with the build machine's package settings.
FROM runtime AS install
ARG PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 AGENT_MODELS_DIR=/opt/agent/models
WORKDIR /app
COPY pyproject.toml README.md ./
COPY agent ./agent
COPY eval ./eval
COPY --from=pjsua2 /build/wheel/*.whl /tmp/wheels/
# The CA bundle, when the build machine gave one (the pattern matches pyproject.toml always, the bundle if there).
COPY pyproject.toml var/docker/build-ca.pe[m] /tmp/ca/
RUN if [ -f /tmp/ca/build-ca.pem ]; then \
        export PIP_CERT=/tmp/ca/build-ca.pem SSL_CERT_FILE=/tmp/ca/build-ca.pem REQUESTS_CA_BUNDLE=/tmp/ca/build-ca.pem; fi \
    && python3 -m venv /opt/venv \
    && /opt/venv/bin/pip install --quiet --upgrade pip \
    && /opt/venv/bin/pip install --quiet /tmp/wheels/*.whl . \
    && /opt/venv/bin/python -m agent models fetch \
    && rm -rf /tmp/ca

FROM runtime
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    AGENT_MODELS_DIR=/opt/agent/models \
    AGENT_DATA_DIR=/var/lib/agent \
    AGENT_KB_DIR=/app/kb \
    AGENT_SIP_PORT=5060 \
    AGENT_RTP_PORT_MIN=40000 \
    AGENT_RTP_PORT_MAX=40199 \
    AGENT_HTTP_HOST=0.0.0.0 \
    AGENT_HTTP_PORT=8000 \
    AGENT_LOG_JSON=true
WORKDIR /app
COPY --from=install /opt/venv /opt/venv
COPY --from=install /opt/agent/models /opt/agent/models
COPY kb ./kb
COPY dialplans ./dialplans
RUN python -m agent check

USER agent
EXPOSE 5060/udp 5060/tcp 8000/tcp 40000-40199/udp
VOLUME ["/var/lib/agent"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=90s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('AGENT_HTTP_PORT', '8000') + '/readyz', timeout=2)"]
CMD ["python", "-m", "agent", "run"]
