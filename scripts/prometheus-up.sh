#!/usr/bin/env bash
# Make sure Prometheus is there for tests/integration/test_prometheus.py, which runs it
# against the service with deploy/prometheus/ (scrape config, recording and alert rules):
#   prometheus   Debian's package: the server and promtool
#
#   scripts/prometheus-up.sh     # idempotent: a second run only checks
#
# Installs what is missing with apt-get when we are root on Debian/Ubuntu (`apt-get update`
# only when the package lists do not know it yet); otherwise exits non-zero saying what to
# do. Installing never starts a service (policy-rc.d): the test starts its own Prometheus
# on a loopback port it chooses, with a temporary storage directory. Every apt step is
# bounded by `timeout`. Progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'prometheus-up: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
APT_TIMEOUT=${APT_TIMEOUT:-900} # seconds per apt step
version() { timeout 20 prometheus --version 2>/dev/null | head -1 || echo 'version unknown'; }

if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
    log "prometheus and promtool are installed: $(version)"
    exit 0
fi

[[ $(id -u) -eq 0 ]] || die "prometheus is missing and we are not root (uid $(id -u)): run 'sudo apt-get install prometheus' (Debian/Ubuntu) or use your package manager"
command -v apt-get >/dev/null 2>&1 || die "prometheus is missing and there is no apt-get: install prometheus (with promtool) with your package manager"

if ! apt-cache show prometheus >/dev/null 2>&1; then
    log "apt-get update (the package lists do not know prometheus yet)"
    timeout "$APT_TIMEOUT" apt-get update -qq || die "apt-get update failed or took over ${APT_TIMEOUT}s"
fi
log "installing prometheus (apt-get)"
# policy-rc.d 101: the package's install script must not start a system Prometheus on
# :9090; an existing policy is left as it is.
policy=/usr/sbin/policy-rc.d
[[ -e $policy ]] || { printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && trap 'rm -f "$policy"' EXIT; }
NEEDRESTART_SUSPEND=1 DEBIAN_FRONTEND=noninteractive \
    timeout "$APT_TIMEOUT" apt-get install -y -qq --no-install-recommends prometheus >/dev/null \
    || die "apt-get install prometheus failed or took over ${APT_TIMEOUT}s"
for binary in prometheus promtool; do
    command -v "$binary" >/dev/null 2>&1 || die "apt-get ran but $binary is not on PATH"
done
log "installed $(version)"
