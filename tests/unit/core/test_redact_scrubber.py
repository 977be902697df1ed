"""Secret values are masked wherever they appear, including across the chunks of a stream."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from provenance._internal import redact
from provenance._internal.redact import REDACTED, Scrubber

SECRET = "tok_5f2c9a8e7d6b"


@given(
    before=st.binary(max_size=64),
    after=st.binary(max_size=64),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=6),
)
def test_a_secret_split_across_chunks_is_masked_and_lengths_kept(
    before: bytes, after: bytes, cuts: list[int]
) -> None:
    data = before + SECRET.encode() + after
    stream = Scrubber([SECRET]).stream()
    points = sorted({min(c, len(data)) for c in cuts})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    out = b"".join(stream.feed(piece) for piece in pieces) + stream.flush()

    assert SECRET.encode() not in out
    assert len(out) == len(data)
    assert stream.count >= 1


def test_text_json_and_encoded_forms_are_scrubbed() -> None:
    scrubber = Scrubber([SECRET, None, "abc"])  # None and too-short values are ignored
    assert scrubber.text(f"key={SECRET}&x=abc") == f"key={REDACTED}&x=abc"
    assert scrubber.json({SECRET: [f"Bearer {SECRET}", 3]}) == {REDACTED: [f"Bearer {REDACTED}", 3]}
    basic = "Basic " + base64.b64encode(f"api:{SECRET}x".encode()).decode()
    scrubber.add_credential_header(basic)
    assert f"{SECRET}x" in scrubber.values and "Basic" not in scrubber.values
    scrubber.add_url("https://h/o?X-Amz-Signature=0123456789abcdef&X-Amz-Expires=3600")
    assert "0123456789abcdef" in scrubber.values and "3600" not in scrubber.values


@pytest.mark.parametrize(
    ("name", "credential"),
    [
        ("Authorization", True),
        ("PRIVATE-TOKEN", True),
        ("X-Vault-Token", True),
        ("Api-Key", True),
        ("X-Session-Token", True),
        ("password", True),
        ("auth", True),
        ("X-Amz-Security-Token", True),
        ("Keep-Alive", False),
        ("WWW-Authenticate", False),
        ("Content-Type", False),
        ("continuation-token", False),
        ("ETag", False),
    ],
)
def test_one_definition_of_a_credential(name: str, credential: bool) -> None:
    assert redact.is_credential(name) is credential
    assert (redact.headers([(name, "v")]) == [(name, redact.REDACTED)]) is credential
    assert ("v" not in redact.url(f"https://h/p?{name}=v")) is credential
