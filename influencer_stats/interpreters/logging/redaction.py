"""A structlog processor that keeps secrets out of every log line."""

from __future__ import annotations

import re
from collections.abc import Iterable, MutableMapping
from typing import Any

_QUERY_KEY = re.compile(r"(?i)\b((?:api_?)?key=)[^&\s\"']+")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+")
_SECRET_FIELDS = frozenset({"authorization", "api_key", "key", "password", "token", "x-goog-api-key"})
MASK = "***"


class Redactor:
    """Replaces known secret values, ``key=…`` query parameters, bearer
    credentials and fields named like secrets, wherever they appear."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = tuple(s for s in secrets if len(s) >= 4)

    def _clean(self, value: object) -> object:
        if isinstance(value, str):
            for secret in self._secrets:
                if secret in value:
                    value = value.replace(secret, MASK)
            if "=" in value or "earer" in value:
                value = _BEARER.sub(r"\1" + MASK, _QUERY_KEY.sub(r"\1" + MASK, value))
            return value
        if isinstance(value, (list, tuple)):
            return [self._clean(v) for v in value]
        if isinstance(value, dict):
            return {k: MASK if str(k).lower() in _SECRET_FIELDS else self._clean(v) for k, v in value.items()}
        return value

    def __call__(self, _: Any, __: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        for name, value in event_dict.items():
            event_dict[name] = MASK if name.lower() in _SECRET_FIELDS else self._clean(value)
        return event_dict
