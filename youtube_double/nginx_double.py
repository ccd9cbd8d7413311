"""An nginx static-file double of videos.list: pre-rendered responses served by nginx.

nginx cannot compute statistics, so the responses are rendered ahead of time
for the id groups a client is going to request, with the very function the
Python double serves them with
(:func:`youtube_double.render_videos_list`)::

    write_site(site, [["id1", "id2"], ["id3"]])         # site/videos/id1,id2.json ...
    conf.write_text(nginx_conf(8082, site, run_dir))
    subprocess.Popen(nginx_argv(conf, run_dir))          # daemon off: the PID is nginx's

Then ``GET http://127.0.0.1:8082/youtube/v3/videos?part=statistics&id=id1,id2``
returns exactly the bytes the Python double would return; ``GET /healthz`` is
``200 ok``. For the official nginx image, put :func:`server_block` in
``/etc/nginx/templates/default.conf.template`` (its entrypoint substitutes only
the environment variables that are defined, e.g. ``NGINX_PORT``; a bare
``envsubst`` without a variable list would wipe ``$arg_id`` and ``$1``) and
copy the site to ``/usr/share/nginx/html``.

How a request finds its file, and the limits that follow:

* The lookup key is ``$arg_id``, the **raw** query value: nginx does not
  URL-decode it. Each group is therefore written twice, with literal commas
  (what aiohttp/yarl send) and with ``%2C`` (what ``urllib.parse.quote`` and
  httpx send). Lower-case ``%2c`` or any other encoding is not served.
* Linux file names are limited to 255 bytes and 50 ids joined by commas are
  about 600, so the key is cut into 200-character pieces that become
  directories (``videos/<first 200>/<next 200>/<rest>.json``); the ``map``
  in :func:`server_block` cuts the query value the same way (up to
  :data:`MAX_KEY_CHARS` characters).
* Only the id order, repetition and encoding that were pre-rendered are
  found. Anything else, a value with characters outside
  ``[A-Za-z0-9_,%-]`` (which also rules out ``../``), or a missing ``id``
  gets ``empty.json`` (200, no items), as a group of unknown ids would.
* ``part``, the key, faults and counters are not emulated: use the Python
  double (:mod:`youtube_double`) for those.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final, Literal

from youtube_double import VIDEOS_PATH, render_videos_list

KEY_PIECE_CHARS: Final = 200
"""Length of the directory pieces a long lookup key is cut into."""

MAX_KEY_PIECES: Final = 8
"""At most this many pieces (nginx regex captures $1..$9 bound it)."""

MAX_KEY_CHARS: Final = KEY_PIECE_CHARS * MAX_KEY_PIECES
"""Longest raw ``id`` query value the site can answer (1600 characters)."""

_ID_RE: Final = re.compile(r"[A-Za-z0-9_-]+")
_KEY_CLASS: Final = "[A-Za-z0-9_,%-]"
_MAP_VARIABLE: Final = "$yt_videos_file"


def _piece_path(key: str) -> str:
    """The relative path (without ``.json``) nginx's map builds for this key."""
    return "/".join(key[i : i + KEY_PIECE_CHARS] for i in range(0, len(key), KEY_PIECE_CHARS))


def group_keys(group: Sequence[str]) -> tuple[str, ...]:
    """The raw ``id`` query values under which a group is served (literal and %2C commas)."""
    literal = ",".join(group)
    encoded = "%2C".join(group)
    return (literal,) if encoded == literal else (literal, encoded)


def write_site(site_dir: Path, id_groups: Iterable[Sequence[str]]) -> None:
    """Write ``empty.json`` and one pre-rendered response per id group under ``site_dir``.

    A group is served for exactly its ids in its order (file name: the ids
    joined by commas, plus ``.json``; long names are cut into directories).
    Empty groups are skipped (``empty.json`` answers them). Raises ValueError
    for an id outside ``[A-Za-z0-9_-]`` or a group too long for the lookup.
    """
    videos = site_dir / "videos"
    videos.mkdir(parents=True, exist_ok=True)
    (site_dir / "empty.json").write_bytes(render_videos_list(()))
    for group in id_groups:
        ids = list(group)
        if not ids:
            continue
        for vid in ids:
            if not _ID_RE.fullmatch(vid):
                raise ValueError(f"video id {vid!r} is not [A-Za-z0-9_-]+")
        body = render_videos_list(ids)
        for key in group_keys(ids):
            if len(key) > MAX_KEY_CHARS:
                raise ValueError(f"id group of {len(ids)} ids is longer than {MAX_KEY_CHARS} characters")
            path = videos / f"{_piece_path(key)}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(body)


def _map_block() -> str:
    """``map $arg_id $yt_videos_file``: the key cut into 200-character directories."""
    lines = [f"map $arg_id {_MAP_VARIABLE} {{", '    default "";']
    for pieces in range(1, MAX_KEY_PIECES + 1):
        full = f"({_KEY_CLASS}{{{KEY_PIECE_CHARS}}})" * (pieces - 1)
        last = f"({_KEY_CLASS}{{1,{KEY_PIECE_CHARS}}})"
        value = "/".join(f"${n}" for n in range(1, pieces + 1))
        lines.append(f'    "~^{full}{last}$" "{value}";')
    lines.append("}")
    return "\n".join(lines)


def server_block(
    port_expr: str = "${NGINX_PORT}",
    root: str = "/usr/share/nginx/html",
    *,
    listen_host: str = "127.0.0.1",
) -> str:
    """The nginx config (http context) serving a :func:`write_site` site.

    It is a ``map`` followed by a ``server { listen 127.0.0.1:<port>; ... }``
    block; both belong in the ``http`` block, as files of ``conf.d`` (and the
    official image's templates) are. ``port_expr`` is put in verbatim, so
    ``${NGINX_PORT}`` is left for envsubst.
    """
    return f"""{_map_block()}

server {{
    listen {listen_host}:{port_expr};
    root {root};
    server_tokens off;
    access_log off;

    location = {VIDEOS_PATH} {{
        default_type application/json;
        # $arg_id is the raw (not URL-decoded) value; see write_site for the keys.
        try_files /videos/{_MAP_VARIABLE}.json /empty.json =500;
    }}

    location = /healthz {{
        default_type text/plain;
        return 200 'ok';
    }}

    location / {{
        return 404;
    }}
}}
"""


def nginx_conf(
    port: int,
    root: Path,
    pid_dir: Path,
    *,
    worker_processes: int | Literal["auto"] = 1,
    user: str | None = None,
) -> str:
    """A complete standalone nginx.conf for ``nginx -c CONF -p PREFIX``.

    Runs in the foreground (``daemon off``), without access log, and keeps its
    pid file, error log, lock file and temp directories under ``pid_dir``, so it
    writes nothing under /var. ``user`` defaults to ``root`` when this process
    runs as root, so workers can read a site in a private (0700) temp directory,
    and is omitted otherwise (a non-root master cannot switch users anyway).
    """
    run = pid_dir.resolve()
    if user is None and os.geteuid() == 0:
        user = "root"
    user_line = f"user {user};\n" if user else ""
    server = server_block(str(port), str(root.resolve()))
    indented = "\n".join(f"    {line}" if line else "" for line in server.splitlines())
    return f"""# Generated by youtube_double.nginx_double.nginx_conf
{user_line}daemon off;
worker_processes {worker_processes};
pid {run}/nginx.pid;
lock_file {run}/nginx.lock;
error_log {run}/error.log warn;

events {{
    worker_connections 1024;
}}

http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 65;
    keepalive_requests 100000;
    client_body_temp_path {run}/client_body;
    proxy_temp_path {run}/proxy;
    fastcgi_temp_path {run}/fastcgi;
    uwsgi_temp_path {run}/uwsgi;
    scgi_temp_path {run}/scgi;

{indented}
}}
"""


def nginx_argv(conf_file: Path, pid_dir: Path, nginx: str = "/usr/sbin/nginx") -> list[str]:
    """The command line that runs ``conf_file`` (``-e`` keeps even start-up errors in ``pid_dir``)."""
    run = pid_dir.resolve()
    return [nginx, "-c", str(conf_file.resolve()), "-p", f"{run}/", "-e", f"{run}/error.log"]
