#!/usr/bin/env bash
# Bring up a Docker engine and the local images the integration tests need.
#
#   eval "$(scripts/docker-up.sh)" && export IT_LOCAL_IMAGES
#
# stdout is exactly one line meant for `eval`; progress goes to stderr:
#   IT_LOCAL_IMAGES=0  an engine we do not own answered (e.g. Docker Desktop) and the
#                      local/* images are absent: tests use the official images
#                      (redis:7-alpine, nginx:1.27-alpine, python:3.11-slim) with port mapping.
#   IT_LOCAL_IMAGES=1  otherwise: the local/* images exist (built here if we own the engine);
#                      tests use them with host networking on 127.0.0.1 and Ryuk disabled.
#
# "We own the engine" = we start dockerd here, or the answering dockerd was started by an
# earlier run of this script (its command line has --bridge=none). Only then do we build
# images (again when their docker/<dir> changed: each carries a hash of its sources as a label),
# install docker-compose and remove leftover testcontainers containers; a developer's engine is
# left alone.
#
# Starting an engine needs root, Debian/apt-get (docker.io, debootstrap and docker-compose, for
# tests/integration/test_compose.py, are installed if missing) and follows the project's shared
# DOCKER.md notes: no Docker Hub, overlay2, no bridge, no iptables, host networking only. Idempotent: a second run only checks.
set -euo pipefail

exec 3>&1 1>&2 # everything below writes progress to stderr; fd 3 is the eval-able stdout
log() { printf 'docker-up: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOG=/var/log/dockerd.log
IMAGES=(local/debian:bookworm local/redis:7 local/nginx:1.27 local/python-aiohttp:3.11 local/python:3.11)
PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin # dockerd, debootstrap live in sbin
export DOCKER_BUILDKIT=0 # legacy builder: `docker build --network host` works with it

engine_answers() { timeout 10 docker version >/dev/null 2>&1; }
have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# A hash of docker/DIR's files, names and contents: an image built from other sources is stale.
SOURCE_LABEL=org.influencer-stats.source
source_hash() { # source_hash DIR
    (cd "$ROOT/docker/$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16
}
have_current_image() { # have_current_image TAG DIR: exists, built from docker/DIR as it is now
    local label
    label=$(docker image inspect --format "{{index .Config.Labels \"$SOURCE_LABEL\"}}" "$1" 2>/dev/null) || return 1
    [[ $label == "$(source_hash "$2")" ]] || { log "$1 was not built from docker/$2 as it is now: rebuilding"; return 1; }
}

# Debian's docker-compose (1.29) for the compose test; `docker compose` (v2) is not in Debian.
install_compose() {
    command -v docker-compose >/dev/null && return 0
    log "installing docker-compose (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-compose
}

# dockerd started by this script (now or in an earlier run)?
engine_is_ours() {
    local pid
    pid=$(cat /var/run/docker.pid 2>/dev/null) || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- '--bridge=none'
}

# A live dockerd process; zombies do not count (PID 1 of a container may never reap them).
dockerd_alive() {
    local pid state
    for pid in $(pgrep -x dockerd); do
        state=$(ps -o stat= -p "$pid") && [[ -n $state && $state != Z* ]] && return 0
    done
    return 1
}

start_engine() {
    [[ $(id -u) -eq 0 ]] || die "no Docker engine answers and we are not root (uid $(id -u)): cannot start dockerd"
    [[ -r /etc/debian_version ]] && command -v apt-get >/dev/null \
        || die "no Docker engine answers and this is not Debian with apt-get: install and start Docker yourself"
    if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null || ! command -v debootstrap >/dev/null; then
        log "installing docker.io debootstrap docker-compose (apt-get)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap docker-compose
    fi
    # A killed dockerd leaves pid files that make the next start fail.
    if ! dockerd_alive; then
        rm -f /var/run/docker.pid /var/run/docker/containerd/containerd.pid
    fi
    log "starting dockerd (overlay2, no bridge, no iptables), log in $LOG"
    # setsid + every fd redirected or closed: the daemon must outlive this script's process
    # group and must not hold the caller's pipe open. fd 3 is that pipe (see `exec 3>&1`
    # above): a dockerd that inherits it keeps a caller's $(...) waiting forever.
    setsid nohup dockerd --storage-driver=overlay2 --bridge=none --iptables=false --ip-masq=false \
        </dev/null >"$LOG" 2>&1 3>&- &
    local pid=$! i
    for ((i = 0; i < 150; i++)); do # 150 x 0.2 s = 30 s
        engine_answers && break
        kill -0 "$pid" 2>/dev/null || { tail -n 20 "$LOG" >&2; die "dockerd exited, see $LOG"; }
        sleep 0.2
    done
    engine_answers || { tail -n 20 "$LOG" >&2; die "dockerd did not answer within 30 s, see $LOG"; }
    log "dockerd answers (pid $pid)"
}

build_base() {
    command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install debootstrap)"
    local dir
    dir=$(mktemp -d /tmp/debootstrap.XXXXXX)
    # shellcheck disable=SC2064 # expand $dir now
    trap "rm -rf '$dir'" EXIT
    log "debootstrap --variant=minbase bookworm (about 40 s)"
    debootstrap --variant=minbase bookworm "$dir" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >/dev/null
    rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
    # Like Docker's old mkimage script: package installs in image builds never start services.
    printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
    chmod 755 "$dir/usr/sbin/policy-rc.d"
    tar -C "$dir" -c . | docker import --change 'CMD ["bash"]' - local/debian:bookworm >/dev/null
    rm -rf "$dir"
    trap - EXIT
}

build_image() { # build_image TAG DIR (BUILD_CONTEXT, if set, replaces docker/DIR as the context)
    log "building $1 from docker/$2"
    local out
    out=$(mktemp)
    docker build --network host --label "$SOURCE_LABEL=$(source_hash "$2")" -t "$1" \
        "${BUILD_CONTEXT:-$ROOT/docker/$2}" >"$out" 2>&1 \
        || { tail -n 30 "$out" >&2; rm -f "$out"; die "building $1 failed"; }
    rm -f "$out"
}

# local/python:3.11 (the service Dockerfile's BASE here) also gets the host's CA bundle in its
# build context: `pip install` from PyPI in image builds then trusts what the host trusts
# (e.g. a TLS-intercepting egress proxy). See docker/python/Dockerfile.
build_python_image() { # runs in a background subshell (below), so the EXIT trap is its own
    local ctx
    ctx=$(mktemp -d /tmp/docker-python.XXXXXX)
    # shellcheck disable=SC2064 # expand $ctx now
    trap "rm -rf '$ctx'" EXIT
    cp -R "$ROOT/docker/python/." "$ctx/"
    if [[ -r /etc/ssl/certs/ca-certificates.crt ]]; then
        cp /etc/ssl/certs/ca-certificates.crt "$ctx/host-ca-certificates.crt"
    fi
    BUILD_CONTEXT=$ctx build_image local/python:3.11 python
}

owned=0
if engine_answers; then
    if engine_is_ours; then owned=1; log "engine answers (started earlier by this script)"
    else log "engine answers (not ours): installing and starting nothing"; fi
else
    start_engine
    owned=1
fi

if [[ $owned -eq 0 ]]; then
    for image in "${IMAGES[@]}"; do
        have_image "$image" || { log "$image absent: official images"; echo IT_LOCAL_IMAGES=0 >&3; exit 0; }
    done
    echo IT_LOCAL_IMAGES=1 >&3
    exit 0
fi

# Images are stored per storage driver: another driver would silently "lose" them.
driver=$(docker info --format '{{.Driver}}')
[[ $driver == overlay2 ]] || die "dockerd uses storage driver '$driver', expected overlay2"

# Ryuk is disabled with local images, so leftovers of a killed run are removed here: the
# containers whose test process (their influencer-stats.test-pid label, tests/containers.py) is
# gone. Those of a test run still going (another terminal, a CI job beside this one) are kept.
docker ps -a --filter label=influencer-stats.test-pid --format '{{.ID}} {{.Label "influencer-stats.test-pid"}}' |
    while read -r id pid; do
        kill -0 "$pid" 2>/dev/null || docker rm -f "$id" >/dev/null
    done
# Likewise the compose projects of tests/integration/test_compose.py, named istats-test-PID-...,
# and their volumes (PROJECT_redis-data), should its `down -v` not have run.
test_pid_gone() { [[ $1 =~ ^istats-test-([0-9]+)- ]] && ! kill -0 "${BASH_REMATCH[1]}" 2>/dev/null; }
docker ps -a --filter label=com.docker.compose.project --format '{{.ID}} {{.Label "com.docker.compose.project"}}' |
    while read -r id project; do
        if test_pid_gone "$project"; then docker rm -f "$id" >/dev/null; fi
    done
docker volume ls -q --filter name=istats-test- | while read -r volume; do
    if test_pid_gone "$volume"; then docker volume rm "$volume" >/dev/null || true; fi
done

install_compose || die "installing docker-compose failed"

have_image local/debian:bookworm || build_base
# The service images only share the base: build them side by side (~15 s instead of ~45 s).
builds=()
have_current_image local/redis:7 redis || { build_image local/redis:7 redis & builds+=($!); }
have_current_image local/nginx:1.27 nginx || { build_image local/nginx:1.27 nginx & builds+=($!); }
have_current_image local/python-aiohttp:3.11 python-aiohttp \
    || { build_image local/python-aiohttp:3.11 python-aiohttp & builds+=($!); }
have_current_image local/python:3.11 python || { build_python_image & builds+=($!); }
for pid in "${builds[@]}"; do wait "$pid" || die "an image build failed (see above)"; done
log "images ready: ${IMAGES[*]}"
echo IT_LOCAL_IMAGES=1 >&3
