# One image for the web server (scripts/web.sh: uvicorn, a process per core) and the
# workers (celery); see compose.yaml.
FROM rust:1-slim-bookworm AS native
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv python3-dev \
    && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/build && /opt/build/bin/pip install maturin==1.16.0
COPY native /src/native
# gitleaks' rules are data in a crate that is fetched, never compiled (native/build.rs).
RUN cd /src/native && cargo fetch --locked
RUN /opt/build/bin/maturin build --release -m /src/native/Cargo.toml -o /wheels

FROM python:3.11-slim-bookworm
# bubblewrap, libseccomp2 and socat: the sandbox of agent and verify commands, its
# seccomp filter and the bridge to the egress proxy (docs/security.md).
RUN apt-get update && apt-get install -y --no-install-recommends git ripgrep patch \
    bubblewrap libseccomp2 socat \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 1000 sf
WORKDIR /app
COPY requirements.lock .
RUN pip install --no-cache-dir -r requirements.lock
COPY --from=native /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl
COPY . .
USER sf
ENV PYTHONUNBUFFERED=1 SF_DATA_DIR=/home/sf/.sf
EXPOSE 8000
CMD ["sh", "-c", "SF_HOST=0.0.0.0 exec scripts/web.sh"]
