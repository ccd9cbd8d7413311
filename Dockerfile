# The influencer-stats service as a container image.
#
#   docker build -t influencer-stats .
#   docker run -p 8080:8080 influencer-stats            # the demo profile: no other service needed
#   docker build --build-arg EXTRAS=otel -t influencer-stats .   # with the otel extra (--tracing otel)
#   docker build --build-arg REVISION=$(git rev-parse HEAD) -t influencer-stats .   # the revision in
#       `influencer-stats --version`, influencer_stats_build_info and the image's OCI label
#
# BASE is any image with Python 3.11+ on PATH as `python` (with the venv module). Users keep
# the default; where Docker Hub is unreachable the tests build on a local Debian base:
#   DOCKER_BUILDKIT=0 docker build --network host --build-arg BASE=local/python:3.11 -t influencer-stats .
# (local/python:3.11 is docker/python/Dockerfile, built by scripts/docker-up.sh.)
ARG BASE=python:3.11-slim

# ---- build: the package and its runtime dependencies in a venv -------------------------------
FROM ${BASE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/venv
WORKDIR /src
# Runtime dependencies first, exactly as locked (requirements/run.txt: pinned, hashed, never the
# dev set): this layer is rebuilt when the lock changes, not on every code change. EXTRAS=otel
# installs requirements/otel.txt instead: the same set and the otel extra, as the tests run it.
ARG EXTRAS=
COPY requirements/run.txt requirements/otel.txt ./requirements/
RUN /opt/venv/bin/pip install --require-hashes -r "requirements/${EXTRAS:-run}.txt"
COPY pyproject.toml ./
# Then the project as a wheel (its dependencies are installed already). pip and setuptools leave
# the venv: nothing installs packages at run time.
COPY README.md LICENSE ./
COPY influencer_stats ./influencer_stats
# The source revision, when the build is told it: written into the package (version.revision), so
# --version and influencer_stats_build_info name the commit the image was built from.
ARG REVISION=
RUN if [ -n "$REVISION" ]; then printf '%s\n' "$REVISION" > influencer_stats/REVISION; fi \
 && /opt/venv/bin/pip wheel --no-deps --wheel-dir /tmp/wheels . \
 && /opt/venv/bin/pip install --no-deps /tmp/wheels/*.whl \
 && /opt/venv/bin/pip check \
 && /opt/venv/bin/pip uninstall -y -q pip setuptools \
 && /opt/venv/bin/influencer-stats --version
# The YouTube double (youtube_double/, beside the package and not in its wheel) joins the venv as
# it is, for compose.yaml's offline youtube-double service: `python -m youtube_double` (it imports
# the package's synthetic statistics; the service never imports it).
COPY youtube_double ./youtube_double
RUN cp -R youtube_double "$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/" \
 && /opt/venv/bin/python -P -m youtube_double --help >/dev/null  # -P: the venv's copy, not /src/

# ---- runtime: the base plus the venv, nothing else -------------------------------------------
FROM ${BASE}
ARG REVISION=
LABEL org.opencontainers.image.title="influencer-stats" \
      org.opencontainers.image.revision="${REVISION}"
# A fixed numeric uid (10001), so `runAsNonRoot` checks and volume ownership are predictable.
# Its home holds the demo profile's SQLite file (INFLUENCER_STATS_DB); mount a volume there to keep it.
RUN useradd --no-log-init --user-group --uid 10001 --create-home --home-dir /var/lib/influencer-stats \
        --shell /usr/sbin/nologin influencer-stats
COPY --from=build /opt/venv /opt/venv
# INFLUENCER_STATS_PROFILE, not `--profile` in CMD: flags win over the environment, so
# `docker run -e INFLUENCER_STATS_PROFILE=distributed` (and compose.yaml) can switch it.
# demo is the default because it needs no other service (fake videos, SQLite in the home);
# compose.yaml runs the distributed profile (Redis, the YouTube double, nginx in front).
# 0.0.0.0: a container's loopback is unreachable from outside it.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    INFLUENCER_STATS_PROFILE=demo \
    INFLUENCER_STATS_HOST=0.0.0.0 \
    INFLUENCER_STATS_DB=/var/lib/influencer-stats/data/influencer-stats.sqlite3
USER 10001:10001
WORKDIR /var/lib/influencer-stats
EXPOSE 8080
# The service drains on SIGTERM for INFLUENCER_STATS_GRACEFUL_SHUTDOWN seconds (default 10):
# keep `docker stop -t` / compose's stop_grace_period above it.
STOPSIGNAL SIGTERM
# Liveness where the service binds: INFLUENCER_STATS_HOST and _PORT (a wildcard such as 0.0.0.0
# on loopback), with the standard library: no curl in the image. A non-2xx answer or none: exit 1.
# Set the address through those variables, not --host/--port, which the probe cannot see.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-m", "influencer_stats.healthcheck"]
CMD ["influencer-stats"]
