"""A structlog processor that keeps secrets, and what clients present as one, out of every log line."""

from __future__ import annotations

import re
from collections.abc import Iterable, MutableMapping
from typing import Any

_QUERY_KEY = re.compile(r"(?i)\b((?:api_?)?key=)[^&\s\"']+")
#: A credential after its scheme, whatever its characters (a client's need not be a valid token).
_SCHEME = re.compile(r"(?i)\b((?:bearer|basic)\s+)[^\s'\"]+")
#: A credential-carrying header quoted as ``name: value`` (a parser's error quotes the line).
_HEADER_LINE = re.compile(
    r"(?i)\b((?:proxy-)?authorization|cookie|x-api-key|x-goog-api-key)(['\"]?\s*[:=]\s*['\"]?)[^\r\n'\"]*"
)
#: A ``UnicodeError``'s repr holds the whole text it failed on (a header value, say).
_UNICODE_ERROR = re.compile(
    r"(Unicode\w*Error\(\s*'[^']*',\s*)(b?(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"))"
)
#: One search tells whether a string needs the patterns above at all (most do not).
_SUSPECT_WORDS = ("=", "bearer", "basic", "authorization", "cookie", "api-key", "unicode")
_SUSPECT = re.compile("(?i)" + "|".join(map(re.escape, _SUSPECT_WORDS)))
_SECRET_FIELDS = frozenset(
    {
        "api_key",
        "authorization",
        "cookie",
        "credentials",
        "headers",
        "key",
        "password",
        "proxy-authorization",
        "set-cookie",
        "token",
        "x-api-key",
        "x-goog-api-key",
    }
)
MASK = "***"
#: Values with nothing to redact in them.
_PLAIN = frozenset({int, float, bool, type(None)})
#: No field of a log line is longer (an error's text, a repr): longer values are clipped.
MAX_VALUE_CHARS = 1_000


def _clip(value: str) -> str:
    return value if len(value) <= MAX_VALUE_CHARS else value[:MAX_VALUE_CHARS] + "…"


class Redactor:
    """Replaces known secret values, ``key=…`` query parameters, credentials after
    ``Bearer``/``Basic``, credential header lines, the input quoted by a
    ``UnicodeError``'s repr and fields named like secrets or headers, wherever
    they appear; clips every string to ``MAX_VALUE_CHARS`` and escapes lone
    surrogates (a header aiohttp decoded from invalid UTF-8) so the line still
    renders.

    Header values are never logged by the service; this is the net under that
    rule for text that quotes them anyway (exceptions, parsers' messages).
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = tuple(s for s in secrets if len(s) >= 4)

    def _clean(self, value: object) -> object:
        if isinstance(value, str):
            for secret in self._secrets:
                if secret in value:
                    value = value.replace(secret, MASK)
            if _SUSPECT.search(value):
                value = _QUERY_KEY.sub(r"\1" + MASK, value)
                value = _SCHEME.sub(r"\1" + MASK, value)
                value = _HEADER_LINE.sub(r"\1\2" + MASK, value)
                value = _UNICODE_ERROR.sub(r"\1'" + MASK + "'", value)
            if not value.isascii():
                value = value.encode("utf-8", "backslashreplace").decode("utf-8")
            return _clip(value)
        if isinstance(value, (list, tuple)):
            return [self._clean(v) for v in value]
        if isinstance(value, dict):
            return {k: MASK if str(k).lower() in _SECRET_FIELDS else self._clean(v) for k, v in value.items()}
        if isinstance(value, BaseException):  # its str, cleaned like any text, never its repr
            return self._clean(f"{type(value).__name__}: {value}")
        return value

    def __call__(self, _: Any, __: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        # Most lines hold nothing to redact: their texts, joined, are checked at once (a match
        # across two of them only sends the line the long way, which checks each text alone).
        # In ASCII, the lowered text holding one of the words is what the case-blind
        # ``_SUSPECT`` finds, at a tenth of its cost.
        joined = "\n".join([v for v in event_dict.values() if v.__class__ is str])
        lowered = joined.lower()
        if (
            not joined.isascii()
            or any(secret in joined for secret in self._secrets)
            or any(word in lowered for word in _SUSPECT_WORDS)
        ):
            for name, value in event_dict.items():
                event_dict[name] = MASK if name.lower() in _SECRET_FIELDS else self._clean(value)
            return event_dict
        for name, value in event_dict.items():
            if name.lower() in _SECRET_FIELDS:
                event_dict[name] = MASK
            elif value.__class__ is str:
                if len(value) > MAX_VALUE_CHARS:
                    event_dict[name] = _clip(value)
            elif value.__class__ not in _PLAIN:
                event_dict[name] = self._clean(value)
        return event_dict
