"""The API docs page (``/docs``): Swagger UI over ``/openapi.json``, served by the service itself.

Swagger UI's files come from the ``openapi-ui-bundles`` distribution (no CDN: the
page works behind a firewall and offline). ``ASSETS`` is the allow-list: each
name is a route of its own (``routes.route_table``), so a path that names anything
else matches no route and is a 404; nothing here ever joins a request's text to
a file path. Files are read once, at first use, and kept in memory. Asset URLs
carry a hash of the content (``?v=``), so they are cached for a year and a new
bundle is fetched as soon as the page names it; the page itself is revalidated.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from importlib.resources import files
from typing import NamedTuple

from influencer_stats.http.problems import Reply

DOCS_PATH = "/docs"
ASSET_PREFIX = "/docs/assets/"
#: The document the page shows, on the same origin (so "Try it out" calls this service).
OPENAPI_URL = "/openapi.json"

_BUNDLE = "openapi_ui_bundles.swagger_ui"
_HTML = "text/html; charset=utf-8"
_JS = "text/javascript; charset=utf-8"
_CSS = "text/css; charset=utf-8"
_LONG_CACHE = (
    ("cache-control", "public, max-age=31536000, immutable"),
    ("x-content-type-options", "nosniff"),
)
#: No inline script, nothing from another origin; Swagger UI sets inline styles and uses data: icons.
_PAGE_HEADERS = (
    ("cache-control", "no-cache"),
    ("x-content-type-options", "nosniff"),
    (
        "content-security-policy",
        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    ),
)
_SOURCE_MAP = re.compile(rb"\n?/[*/]# sourceMappingURL=[^\n]*\s*$")

#: Swagger UI's configuration (its dist calls this file swagger-initializer.js).
_INITIALIZER = f"""\
window.ui = SwaggerUIBundle({{
  url: "{OPENAPI_URL}",
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  displayRequestDuration: true,
  docExpansion: "list",
  defaultModelsExpandDepth: 0,
  validatorUrl: null
}});
""".encode()


class Asset(NamedTuple):
    """An allow-listed file: where it comes from (a file of the bundle, or the text itself)."""

    content_type: str
    bundle_file: str | None = None
    text: bytes = b""


ASSETS: dict[str, Asset] = {
    "swagger-ui.css": Asset(_CSS, "swagger-ui.css"),
    "swagger-ui-bundle.js": Asset(_JS, "swagger-ui-bundle.js"),
    "swagger-initializer.js": Asset(_JS, text=_INITIALIZER),
    "favicon-32x32.png": Asset("image/png", "favicon-32x32.png"),
}


@cache
def asset_reply(name: str) -> Reply:
    """The reply for one allow-listed asset (KeyError for any other name: routing prevents it)."""
    asset = ASSETS[name]
    if asset.bundle_file is None:
        body = asset.text
    else:
        body = (files(_BUNDLE) / "vendor" / asset.bundle_file).read_bytes()
        if asset.content_type != "image/png":
            # The maps are not shipped: a browser's devtools would ask for them and get a 404.
            body = _SOURCE_MAP.sub(b"\n", body)
    return Reply(200, body, asset.content_type, _LONG_CACHE)


def _url(name: str) -> str:
    digest = hashlib.sha256(asset_reply(name).body).hexdigest()[:16]
    return f"{ASSET_PREFIX}{name}?v={digest}"


@cache
def page_reply() -> Reply:
    """The HTML page: tiny, every URL it names is one of ``ASSETS``."""
    html = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>influencer-stats API</title>
<link rel="icon" type="image/png" href="{_url("favicon-32x32.png")}">
<link rel="stylesheet" href="{_url("swagger-ui.css")}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{_url("swagger-ui-bundle.js")}"></script>
<script src="{_url("swagger-initializer.js")}"></script>
</body>
</html>
"""
    return Reply(200, html.encode(), _HTML, _PAGE_HEADERS)
