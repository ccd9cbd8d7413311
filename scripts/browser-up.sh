#!/usr/bin/env bash
# Make sure a headless browser is there for tests/integration/test_docs_browser.py, which
# renders /docs in Chromium and drives it over the DevTools protocol:
#   chromium          Debian's build (no browser download from a CDN: none is reachable in CI)
#   fonts-liberation  metric-compatible fonts, so the page (and docs/api-docs.png) reads as it should
#
#   scripts/browser-up.sh     # idempotent: a second run only checks
#
# Installs what is missing with apt-get when we are root on Debian/Ubuntu (`apt-get update`
# only when the package lists do not know a package yet); otherwise exits non-zero saying
# what to do. Every apt step is bounded by `timeout`. Progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'browser-up: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
APT_TIMEOUT=${APT_TIMEOUT:-900} # seconds per apt step (chromium is ~100 MB)

if command -v chromium >/dev/null 2>&1; then
    log "chromium is installed: $(timeout 20 chromium --version 2>/dev/null || echo 'version unknown')"
    exit 0
fi

packages=(chromium fonts-liberation)
[[ $(id -u) -eq 0 ]] || die "chromium is missing and we are not root (uid $(id -u)): run 'sudo apt-get install ${packages[*]}' (Debian/Ubuntu) or install Chromium with your package manager"
command -v apt-get >/dev/null 2>&1 || die "chromium is missing and there is no apt-get: install Chromium with your package manager"

for package in "${packages[@]}"; do
    if ! apt-cache show "$package" >/dev/null 2>&1; then
        log "apt-get update (the package lists do not know $package yet)"
        timeout "$APT_TIMEOUT" apt-get update -qq || die "apt-get update failed or took over ${APT_TIMEOUT}s"
        break
    fi
done
log "installing ${packages[*]} (apt-get; this takes a minute)"
NEEDRESTART_SUSPEND=1 DEBIAN_FRONTEND=noninteractive \
    timeout "$APT_TIMEOUT" apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null \
    || die "apt-get install ${packages[*]} failed or took over ${APT_TIMEOUT}s"
command -v chromium >/dev/null 2>&1 || die "apt-get ran but chromium is not on PATH"
log "installed $(timeout 20 chromium --version 2>/dev/null || echo chromium)"
