"""Remove credentials from anything before it is stored, signed or logged."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "[REDACTED]"

SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-amz-security-token",
        "x-goog-iam-authorization-token",
        "x-api-key",
        "x-auth-token",
        "x-csrf-token",
    }
)

# Query parameters that carry a credential in signed URLs (S3 SigV4/V2, GCS, Azure SAS, generic).
_SECRET_QUERY = re.compile(
    r"^(x-amz-(signature|credential|security-token)|x-goog-(signature|credential)|"
    r"signature|sig|token|access_token|api_key|apikey|key|awsaccesskeyid|se|sp|sv|skoid|sktid)$",
    re.IGNORECASE,
)


def url(text: str) -> str:
    """A URL with userinfo and signed-URL query values replaced."""
    try:
        parts = urlsplit(text)
    except ValueError:
        return text
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode(
            [(k, REDACTED if _SECRET_QUERY.match(k) else v) for k, v in pairs], safe="[]"
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def headers(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Header pairs (repeats kept, order kept) with credential values replaced."""
    return [(k, REDACTED if k.lower() in SECRET_HEADERS else v) for k, v in items]


def text(value: str, secrets: list[str]) -> str:
    """Replace every occurrence of known secret values (tokens from the environment)."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            value = value.replace(secret, REDACTED)
    return value
