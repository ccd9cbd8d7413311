#!/usr/bin/env bash
# Make sure the perf lab's system tools are there (perf/run.py also needs py-spy and
# matplotlib, which are Python dev dependencies: `pip install -e '.[dev]'`):
#   wrk           the load generator
#   nginx         the YouTube double the lab prefers (and tests/integration/test_nginx_double.py)
#   redis-server  a throwaway Redis for the profiles that use one (distributed)
#
#   scripts/perf-up.sh        # idempotent: a second run only checks
#
# Installs what is missing with apt-get when we are root on Debian/Ubuntu (`apt-get update`
# only when the package lists do not know a package yet); otherwise exits non-zero saying
# what to do. Installing never starts a service: the lab and the tests start their own
# instances on loopback ports they choose. Progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'perf-up: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin # nginx lives in sbin

# binary -> Debian package
declare -A PACKAGE=([wrk]=wrk [nginx]=nginx-light [redis-server]=redis-server)
missing=()
for binary in wrk nginx redis-server; do
    command -v "$binary" >/dev/null 2>&1 || missing+=("${PACKAGE[$binary]}")
done

if [[ ${#missing[@]} -eq 0 ]]; then
    log "wrk, nginx and redis-server are installed"
else
    [[ $(id -u) -eq 0 ]] || die "missing ${missing[*]} and we are not root (uid $(id -u)): run 'sudo apt-get install ${missing[*]}' (Debian/Ubuntu) or use your package manager"
    command -v apt-get >/dev/null 2>&1 || die "missing ${missing[*]} and there is no apt-get: install them with your package manager"
    for package in "${missing[@]}"; do
        if ! apt-cache show "$package" >/dev/null 2>&1; then
            log "apt-get update (the package lists do not know $package yet)"
            apt-get update -qq || die "apt-get update failed"
            break
        fi
    done
    log "installing ${missing[*]} (apt-get)"
    # policy-rc.d 101: the packages' install scripts must not start nginx on :80 or a
    # system redis-server; an existing policy is left as it is.
    policy=/usr/sbin/policy-rc.d
    [[ -e $policy ]] || { printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && trap 'rm -f "$policy"' EXIT; }
    NEEDRESTART_SUSPEND=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
        || die "apt-get install ${missing[*]} failed"
    for binary in wrk nginx redis-server; do
        command -v "$binary" >/dev/null 2>&1 || die "apt-get ran but $binary is not on PATH"
    done
    log "installed ${missing[*]}"
fi

# py-spy is a pip package (dev extra); say so early instead of failing inside the lab.
PY_SPY_DIR=${VENV:-.venv}/bin
if [[ -x $PY_SPY_DIR/py-spy ]] || command -v py-spy >/dev/null 2>&1; then
    log "py-spy is installed"
else
    log "note: py-spy not found in $PY_SPY_DIR or on PATH: pip install py-spy (or pip install -e '.[dev]')"
fi
