#!/usr/bin/env bash
# Make sure the perf lab's system tool is there: wrk (perf/run.py also needs py-spy and
# matplotlib, which are Python dev dependencies: `pip install -e '.[dev]'`).
#
#   scripts/perf-up.sh        # idempotent: a second run only checks
#
# Installs wrk with apt-get when it is missing and we are root on Debian/Ubuntu
# (`apt-get update` only when the package lists do not know wrk yet); otherwise exits
# non-zero saying what to do. Progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'perf-up: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

if command -v wrk >/dev/null 2>&1; then
    log "wrk is installed: $(command -v wrk)"
else
    [[ $(id -u) -eq 0 ]] || die "wrk is missing and we are not root (uid $(id -u)): run 'sudo apt-get install wrk' (Debian/Ubuntu) or install wrk from your package manager"
    command -v apt-get >/dev/null 2>&1 || die "wrk is missing and there is no apt-get: install wrk with your package manager"
    if ! apt-cache show wrk >/dev/null 2>&1; then
        log "apt-get update (the package lists do not know wrk yet)"
        apt-get update -qq || die "apt-get update failed"
    fi
    log "installing wrk (apt-get)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null || die "apt-get install wrk failed"
    command -v wrk >/dev/null 2>&1 || die "apt-get installed wrk but it is not on PATH"
    log "wrk installed: $(command -v wrk)"
fi

# py-spy is a pip package (dev extra); say so early instead of failing inside the lab.
PY_SPY_DIR=${VENV:-.venv}/bin
if [[ -x $PY_SPY_DIR/py-spy ]] || command -v py-spy >/dev/null 2>&1; then
    log "py-spy is installed"
else
    log "note: py-spy not found in $PY_SPY_DIR or on PATH: pip install py-spy (or pip install -e '.[dev]')"
fi
