"""The container's liveness probe: ``python -m influencer_stats.healthcheck`` (the image's HEALTHCHECK).

Exits 0 when ``GET /healthz`` answers 2xx within 2 s, else 1 with one line
saying why. It probes where the service listens, read from the variables the
service reads (``INFLUENCER_STATS_HOST``, ``INFLUENCER_STATS_PORT``, their
defaults when unset): a wildcard bind (``0.0.0.0``, ``::``, empty) on the
loopback address of its family, any other address as it is, so a service
bound to one address is not reported unhealthy for not answering on another.
Flags (``--host``, ``--port``) are not seen: set the variables instead.

Standard library only (the image has no curl), and ``http.client`` rather than
``urllib``, which would send the probe through a proxy set in the environment.
"""

from __future__ import annotations

import http.client
import os
import sys
from collections.abc import Mapping

from influencer_stats.settings import declared, default_of

TIMEOUT_S = 2.0
#: What a wildcard bind is probed on: the loopback address of its family.
_LOOPBACK = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}


def address(environ: Mapping[str, str]) -> tuple[str, int]:
    """The host and port to probe, from the service's variables in ``environ`` (``ValueError`` if invalid)."""
    specs = declared()
    host = environ.get(specs["host"].env, str(default_of("host"))).strip()
    port = specs["port"].parse(environ.get(specs["port"].env, str(default_of("port"))))
    assert isinstance(port, int)
    return _LOOPBACK.get(host, host), port


def url(host: str, port: int) -> str:
    """``http://host:port/healthz``, an IPv6 address in brackets."""
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/healthz"


def probe(host: str, port: int, timeout_s: float = TIMEOUT_S) -> str | None:
    """None when ``/healthz`` answers 2xx; else why not, in a few words."""
    connection = http.client.HTTPConnection(host, port, timeout=timeout_s)
    try:
        connection.request("GET", "/healthz")
        status = connection.getresponse().status
    except (OSError, http.client.HTTPException) as error:
        return f"{type(error).__name__}: {error}"
    finally:
        connection.close()
    return None if 200 <= status < 300 else f"status {status}"


def main(environ: Mapping[str, str] = os.environ) -> int:
    """Probe once: 0 when healthy, else 1 and a line on stderr (Docker reserves 2)."""
    try:
        host, port = address(environ)
    except ValueError as error:
        print(f"healthcheck: {error}", file=sys.stderr)
        return 1
    failure = probe(host, port)
    if failure is None:
        return 0
    print(f"healthcheck: {url(host, port)}: {failure}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
