"""The log's redaction: known secrets, and whatever a client presents as a credential,
never reach a line, however the text that carries them is shaped."""

from __future__ import annotations

import io

import orjson
import pytest

from influencer_stats.interpreters.logging.redaction import MASK, MAX_VALUE_CHARS, Redactor
from influencer_stats.interpreters.logging.structlog_json import StructlogEventLog

STOLEN = "stolen-token-5e1f"


def clean(**fields: object) -> dict[str, object]:
    return dict(Redactor(["configured-secret"])(None, "info", dict(fields)))


@pytest.mark.parametrize(
    "text",
    [
        f"Bearer {STOLEN}",
        f"bearer {STOLEN}!#$%^&*()",  # a client's credential need not be a valid token
        f"Authorization: Bearer {STOLEN}\\udcff",
        f"Basic {STOLEN}",
        f"b'Authorization: Token {STOLEN}\\x01'",  # a parser's error quoting the header line
        f"'authorization': '{STOLEN}'",
        f"Cookie: session={STOLEN}",
        f"x-api-key: {STOLEN}",
        f"UnicodeEncodeError('utf-8', '{STOLEN}\\udcff', 17, 18, 'surrogates not allowed')",
        f"UnicodeDecodeError('utf-8', b\"{STOLEN}\\xff\", 17, 18, 'invalid start byte')",
    ],
)
def test_what_a_client_presents_as_a_credential_is_masked_in_any_text(text: str) -> None:
    cleaned = clean(error=text)

    assert STOLEN not in str(cleaned["error"])
    assert MASK in str(cleaned["error"])


@pytest.mark.parametrize(
    "name", ["authorization", "Proxy-Authorization", "cookie", "set-cookie", "headers", "x-api-key"]
)
def test_a_field_named_like_a_header_or_credential_is_masked_whole(name: str) -> None:
    assert clean(**{name: {"authorization": STOLEN, "other": STOLEN}}) == {name: MASK}


def test_header_values_inside_a_structure_are_masked_by_name() -> None:
    cleaned = clean(request={"Authorization": STOLEN, "path": "/collections/c"})

    assert cleaned == {"request": {"Authorization": MASK, "path": "/collections/c"}}


def test_an_exception_object_is_logged_as_its_cleaned_text_never_its_repr() -> None:
    error = UnicodeEncodeError("utf-8", f"{STOLEN}\udcff", 17, 18, "surrogates not allowed")

    cleaned = str(clean(error=error)["error"])

    assert cleaned.startswith("UnicodeEncodeError: ")
    assert STOLEN not in cleaned


def test_every_string_is_clipped_and_a_secret_cut_by_the_clip_is_masked_first() -> None:
    cleaned = clean(error="x" * (MAX_VALUE_CHARS - 5) + "configured-secret" + "y" * 10_000)

    assert len(str(cleaned["error"])) == MAX_VALUE_CHARS + 1
    assert "configured" not in str(cleaned["error"])


def test_ordinary_text_is_left_alone() -> None:
    fields = {"event": "collection.saved", "collection": "c-1", "videos": 3, "detail": "ttl=7; fine"}

    assert clean(**fields) == fields


def test_a_line_with_a_lone_surrogate_is_still_written_and_holds_no_credential() -> None:
    stream = io.BytesIO()
    log = StructlogEventLog(stream, secrets=["configured-secret"], level="debug")

    log.error(
        "http.unhandled_error",
        error=f"UnicodeEncodeError('utf-8', '{STOLEN}\udcff', 17, 18, 'surrogates not allowed')",
        path="/collections/\udcff",
    )

    line = stream.getvalue()
    assert STOLEN.encode() not in line
    assert orjson.loads(line)["path"] == "/collections/\\udcff"
