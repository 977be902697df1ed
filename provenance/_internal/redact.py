"""Remove credentials from anything before it is stored, signed or logged."""

from __future__ import annotations

import base64
import binascii
import re
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit, urlunsplit

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


# One definition of a credential's name, used for redaction and for what never follows a
# redirect to another origin: the names above, and any name one of whose words (split at '-',
# '_' and '.') says credential: X-Session-Token, PRIVATE-TOKEN, X-Vault-Token, Api-Key,
# password, auth. Words, not substrings: Keep-Alive and WWW-Authenticate are no credentials.
_CREDENTIAL_WORD = re.compile(
    r"^(.*(token|secret|passw(or)?d|cookie|credentials?|signature|apikey|sessionid)"
    r"|auth|authorization|authkey|key|sig|jwt|csrf|xsrf|session|pass|pwd|bearer)$"
)
_WORD = re.compile(r"[-_.]")
# Paging cursors are named like tokens but are no secret; their spelling is part of the record.
_CURSORS = frozenset(
    {"continuation-token", "continuationtoken", "page_token", "pagetoken", "next_token",
     "nexttoken", "next_page_token", "nextpagetoken", "sync_token", "synctoken"}
)  # fmt: skip


def is_credential(name: str) -> bool:
    """Whether a header or query parameter of this name carries a credential."""
    lowered = name.strip().lower()
    if lowered in SECRET_HEADERS:
        return True
    if lowered in _CURSORS:
        return False
    return any(_CREDENTIAL_WORD.match(word) for word in _WORD.split(lowered) if word)


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
        query = urlencode([(k, REDACTED if _secret_query(k) else v) for k, v in pairs], safe="[]")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _secret_query(name: str) -> bool:
    return bool(_SECRET_QUERY.match(name)) or is_credential(name)


def headers(items: list[tuple[str, str]], also: Iterable[str] = ()) -> list[tuple[str, str]]:
    """Header pairs (repeats kept, order kept) with credential values replaced.

    ``also`` names more credentials (any case): headers whose values came from the environment.
    """
    extra = {name.lower() for name in also}
    return [(k, REDACTED if is_credential(k) or k.lower() in extra else v) for k, v in items]


def text(value: str, secrets: list[str]) -> str:
    """Replace every occurrence of known secret values (tokens from the environment)."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            value = value.replace(secret, REDACTED)
    return value


MIN_SECRET = 6
"""Shorter values are not scrubbed from free text: they would erase ordinary words and numbers."""


# Of those, the parameters whose values are credentials in themselves. The others (an Azure
# SAS's expiry `se`, permissions `sp`, version `sv`) are redacted in URLs, but their values are
# dates and letters that must not be masked wherever else they appear.
_CREDENTIAL_QUERY = re.compile(
    r"^(x-amz-(signature|credential|security-token)|x-goog-(signature|credential)|"
    r"signature|sig|token|access_token|api_key|apikey|key|awsaccesskeyid)$",
    re.IGNORECASE,
)


def secret_query_values(text: str) -> list[str]:
    """The credential values in a URL: signed-URL query parameters and a userinfo password."""
    try:
        parts = urlsplit(text)
    except ValueError:
        return []
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    found = [v for k, v in pairs if _CREDENTIAL_QUERY.match(k) or is_credential(k)]
    if parts.password:
        found.append(parts.password)
    return found


def url_minimal(text: str) -> str:
    """Like ``url``, but a URL without credentials comes back exactly as it was.

    ``url`` re-encodes every query string; a record of what was asked must keep its spelling.
    """
    try:
        query = parse_qsl(urlsplit(text).query, keep_blank_values=True)
    except ValueError:
        return text
    if "@" in text or any(_secret_query(k) for k, _ in query):
        return url(text)
    return text


class Scrubber:
    """Known secret values, removed from everything prov keeps (servers may echo credentials).

    Names are not enough: a server can echo a token in a body, a header or an error message, so
    the values themselves (and their URL-encoded and Basic-auth forms) are searched for.
    Text gets ``[REDACTED]``; raw bytes get asterisks of the same length, so sizes and offsets
    of stored bodies stay meaningful. Thread-safe: redirects may add signed-URL values late.
    """

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._lock = threading.Lock()
        self._values: set[str] = set()
        for secret in secrets:
            self.add(secret)

    def add(self, value: str | None) -> None:
        if not value or len(value) < MIN_SECRET:
            return
        variants = {value, quote(value, safe=""), quote_plus(value)}
        with self._lock:
            self._values.update(v for v in variants if len(v) >= MIN_SECRET)

    def add_credential_header(self, value: str) -> None:
        """A credential header value: the whole, its credential words, Basic's decoded pair.

        The first of several words is the scheme ("Bearer", "Basic", "AWS4-HMAC-SHA256"): it is
        no secret, and masking it would deface every body that mentions it.
        """
        self.add(value)
        words = value.split()
        for word in words[1:] if len(words) > 1 else words:
            word = word.strip(",")
            self.add(word)
            if "=" in word:
                self.add(word.partition("=")[2])
        if len(words) == 2 and words[0].lower() == "basic":
            try:
                decoded = base64.b64decode(words[1], validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return
            self.add(decoded)
            self.add(decoded.partition(":")[2])

    def add_url(self, text: str) -> None:
        for value in secret_query_values(text):
            self.add(value)

    @property
    def values(self) -> list[str]:
        """Longest first, so that a value containing another is replaced whole."""
        with self._lock:
            return sorted(self._values, key=lambda v: (-len(v), v))

    def text(self, value: str) -> str:
        for secret in self.values:
            value = value.replace(secret, REDACTED)
        return value

    def json(self, value: Any) -> Any:
        """A JSON-like value with secrets replaced in every string, keys included."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.json(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.json(v) for v in value]
        return value

    def bytes(self, data: bytes) -> tuple[bytes, int]:
        stream = self.stream()
        out = stream.feed(data) + stream.flush()
        return out, stream.count

    def stream(self) -> ByteScrubber:
        return ByteScrubber([v.encode("utf-8") for v in self.values])


class ByteScrubber:
    """Masks secrets in a byte stream fed in chunks, including secrets split across chunks.

    It holds back the last ``longest - 1`` bytes of each chunk: a secret that starts in them may
    end in the next chunk. Masking keeps lengths, so what it holds back never moves.
    """

    def __init__(self, secrets: list[bytes]) -> None:
        self._secrets = [s for s in secrets if s]
        self._keep = max((len(s) for s in self._secrets), default=1) - 1
        self._tail = b""
        self.count = 0

    def feed(self, chunk: bytes) -> bytes:
        if not self._secrets:
            return chunk
        buffer = self._tail + chunk
        for secret in self._secrets:
            found = buffer.count(secret)
            if found:
                self.count += found
                buffer = buffer.replace(secret, b"*" * len(secret))
        if len(buffer) <= self._keep:
            self._tail = buffer
            return b""
        cut = len(buffer) - self._keep
        self._tail = buffer[cut:]
        return buffer[:cut]

    def flush(self) -> bytes:
        out, self._tail = self._tail, b""
        return out
