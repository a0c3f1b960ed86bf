# The agent as a container: dependencies and the default models are baked in and verified at build
# time, so a cold container answers its first call without downloading anything.
#   docker build -t phone-agent .
#   docker run --network host -e AGENT_SIP_HOST=10.0.0.2 phone-agent
# Settings come from the environment (AGENT_*; `python -m agent --help` lists them all).
# AGENT_SIP_HOST must be the address callers and the PBX reach: it is advertised in SIP and SDP.
# pjsua2 built from pinned pjproject source (agent/sip/pjproject): 64 calls a process, TLS and SRTP.
FROM python:3.11-slim-bookworm AS pjsua2
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential swig pkg-config xz-utils libsrtp2-dev \
       libspeex-dev libspeexdsp-dev libgsm1-dev libopus-dev libssl-dev uuid-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /build
COPY agent/__init__.py ./agent/
COPY agent/sip/__init__.py ./agent/sip/
COPY agent/sip/pjproject ./agent/sip/pjproject
RUN python -m agent.sip.pjproject --require --no-install --cache /build/wheel

FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
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
# The shared libraries the pjsua2 module links (Debian's codecs, SRTP and OpenSSL).
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsrtp2-1 libspeex1 libspeexdsp1 libgsm1 libopus0 \
       libssl3 libuuid1 \
    && rm -rf /var/lib/apt/lists/*
RUN useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin agent \
    && mkdir -p /var/lib/agent /var/lib/agent-tls /opt/agent/models \
    && chown agent /var/lib/agent /var/lib/agent-tls

# Dependencies first (a layer that only changes with pyproject.toml), then the code.
COPY pyproject.toml README.md ./
COPY agent ./agent
COPY eval ./eval
COPY --from=pjsua2 /build/wheel/*.whl /tmp/wheels/
RUN pip install /tmp/wheels/*.whl . \
    && rm -rf /tmp/wheels \
    && python -m agent models fetch \
    && python -m agent check

COPY kb ./kb
COPY dialplans ./dialplans

USER agent
EXPOSE 5060/udp 5060/tcp 8000/tcp 40000-40199/udp
VOLUME ["/var/lib/agent"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=90s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('AGENT_HTTP_PORT', '8000') + '/readyz', timeout=2)"]
CMD ["python", "-m", "agent", "run"]
