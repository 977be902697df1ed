"""The http collector: any URL, with everything the exchange showed.

Records the method, every redirect hop, the final status, reason and headers (repeats and order
kept, credentials redacted), the raw body streamed into the store up to ``max_body_bytes``, the
time taken, the server's address and, over TLS, the protocol and the peer certificate's sha256.
Object-store error documents (S3 / R2 / GCS ``<Error><Code>AccessDenied</Code>...``) are parsed
into ``error_body``; a bodiless 403 (a HEAD, as S3 answers it) is recorded as access denied too.

Any complete HTTP answer, a 403 included, is a successful observation: the 403 is the evidence.
Timeouts, resets and transient statuses that outlast every retry make the capture ``failed``.
"""

from __future__ import annotations

import html
import re
from typing import Any, Literal

from pydantic import Field, field_validator

from provenance._internal import redact
from provenance.capture import _network
from provenance.capture.base import Recorder, SourceOptions
from provenance.errors import CollectorError
from provenance.model import Capture, Establishes

_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # RFC 9110 field-name
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_XML_ERROR = re.compile(r"^\s*(<\?xml[^>]*\?>)?\s*<Error>(?P<inner>.*)</Error>\s*$", re.DOTALL)
_XML_FIELDS = {
    "Code": "code",
    "Message": "message",
    "RequestId": "request_id",
    "HostId": "host_id",
    "Details": "details",
    "Resource": "resource",
    "BucketName": "bucket",
    "Key": "key",
}
_JSON_LIMIT = 1 << 20
_PROVIDER_DIGESTS = ("etag", "x-goog-hash", "x-amz-version-id", "content-md5", "x-linked-etag")


class HttpOptions(SourceOptions):
    """One HTTP(S) request: status, headers, body, every redirect hop and the TLS peer."""

    url: str = Field(description="http:// or https:// URL (signed query values are redacted)")
    method: Literal["GET", "HEAD"] = Field(default="GET", description="HEAD keeps no body")
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="extra request headers; ${VAR} takes a value from the environment",
    )
    max_body_bytes: int = Field(default=16 << 20, ge=0, description="bytes of body kept")
    allow_private: bool = Field(
        default=False,
        description="follow redirects to another host at a loopback / private / link-local "
        "address (the configured URL is always used as configured)",
    )
    follow_redirects: bool = Field(
        default=True, description="follow 3xx answers (each hop is recorded)"
    )
    max_redirects: int = Field(default=10, ge=0, le=50, description="hops before giving up")
    ca_bundle: str | None = Field(default=None, description="PEM file of trusted CAs")

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _network.check_http_url(value)

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            if not _TOKEN.match(name):
                raise ValueError(f"{name!r} is not a valid header name")
            if "\r" in text or "\n" in text:
                raise ValueError(f"the value of header {name!r} holds a line break")
        return value


class HttpCollector(_network.NetworkCollector):
    kind = "http"
    options_model = HttpOptions
    options: HttpOptions

    def collect(self) -> Capture:
        options = self.options
        env = self.context.env
        scrub = _network.scrubber(env)
        headers = [(name, self._expand(name, value)) for name, value in options.headers.items()]
        # A value taken from the environment is a credential whatever its header is called; so
        # is one under a credential's name (redact.is_credential): masked wherever it reappears,
        # recorded as [REDACTED], never sent on to another origin.
        from_env = [n for n in options.headers if _ENV_REFERENCE.search(options.headers[n])]
        for name, value in headers:
            if redact.is_credential(name) or name in from_env:
                scrub.add_credential_header(value)
        scrub.add_url(options.url)
        request: dict[str, Any] = {
            "method": options.method,
            "url": scrub.text(redact.url_minimal(options.url)),
            "headers": [[k, scrub.text(v)] for k, v in redact.headers(headers, also=from_env)],
            "max_body_bytes": options.max_body_bytes,
            "follow_redirects": options.follow_redirects,
            "allow_private": options.allow_private,
        }
        recorder = Recorder(self, request)
        ca_bundle = _network.local_path(self, options.ca_bundle) if options.ca_bundle else None
        policy = _network.policy(
            self,
            follow_redirects=options.follow_redirects,
            max_redirects=options.max_redirects,
            allow_private=options.allow_private,
            max_body_bytes=options.max_body_bytes,
            ca_bundle=ca_bundle,
        )
        with _network.fetcher(self, scrub, policy) as fetcher:
            exchange = fetcher.fetch(
                options.method, options.url, headers=headers, credentials=from_env
            )
            data = self._data(exchange, fetcher, recorder)
        recorder.attempts = exchange.attempts
        error = exchange.error
        if error is None and exchange.exhausted:
            error = _network.status_error(exchange, f"{options.method} {exchange.url}")
        establishes: list[Establishes] = []
        response = exchange.response
        if response is not None:
            establishes.append("observed")
            if any(response.header(h) for h in _PROVIDER_DIGESTS):
                establishes.append("provider-asserted")
            if exchange.tls_bound:
                establishes.append("tls-bound")
        return recorder.finish(data, tuple(establishes), error)

    def _expand(self, name: str, value: str) -> str:
        def lookup(match: re.Match[str]) -> str:
            variable = match.group(1)
            found = self.context.env.get(variable)
            if found is None:
                raise CollectorError(
                    f"source {self.options.name!r}: header {name!r} refers to ${{{variable}}}, "
                    "which is not set",
                    hint=f"export {variable}=... before running prov",
                )
            return found

        return _ENV_REFERENCE.sub(lookup, value)

    def _data(self, exchange: Any, fetcher: Any, recorder: Recorder) -> dict[str, Any]:
        response = exchange.response
        for index, hop in enumerate(exchange.hops, start=1):
            if hop.body is not None:
                recorder.add_blob(
                    f"redirects/{index}/body", hop.body.digest, hop.body.size, hop.media_type
                )
        data: dict[str, Any] = {
            "method": exchange.method,
            "url": exchange.url,
            "final_url": exchange.final_url,
            "redirects": [hop.redirect_json() for hop in exchange.hops],
            "status": None,
            "reason": None,
            "http_version": None,
            "headers": [],
            "request_headers": [],
            "body": None,
            "elapsed_ms": exchange.elapsed_ms,
            "server_ip": None,
            "tls": None,
            "error_body": None,
            "json": None,
        }
        if response is None:
            return data
        data.update(
            status=response.status,
            reason=response.reason,
            http_version=response.http_version,
            headers=[list(pair) for pair in response.headers],
            request_headers=[list(pair) for pair in response.request_headers],
            server_ip=response.server_ip,
            tls=response.tls,
        )
        content = b""
        if response.body is not None:
            body = response.body
            recorder.add_blob("body", body.digest, body.size, response.media_type)
            data["body"] = body.to_json(response.media_type)
            if body.size <= _JSON_LIMIT or response.status >= 400:
                try:
                    content = fetcher.content(response, _JSON_LIMIT)[:_JSON_LIMIT]
                except ValueError:
                    content = b""  # kept as received; it just cannot be parsed
        if response.status >= 400:
            data["error_body"] = error_body(response, content)
        if content and response.body is not None and response.body.complete:
            data["json"] = _json(response.media_type, content)
        return data


def error_body(response: Any, content: bytes) -> dict[str, Any] | None:
    """An object-store error document as a structured field, or None if there is none.

    The XML is read with a pattern, never an XML parser: the body is untrusted, and an
    ``<Error>`` document is flat, so there is no DTD or entity expansion to be tricked by.
    """
    text = content.decode("utf-8", "replace")
    match = _XML_ERROR.match(text)
    found: dict[str, Any] | None = None
    if match:
        found = {"source": "body", "format": "xml"}
        for tag, key in _XML_FIELDS.items():
            value = re.search(rf"<{tag}>(.*?)</{tag}>", match.group("inner"), re.DOTALL)
            if value:
                found[key] = html.unescape(value.group(1).strip())
    elif response.media_type and "json" in response.media_type:
        parsed = _json(response.media_type, content)
        error = parsed.get("error") if isinstance(parsed, dict) else None
        if isinstance(error, dict) and "message" in error:  # the GCS JSON API's shape
            reasons = [e.get("reason") for e in error.get("errors", []) if isinstance(e, dict)]
            code = next((r for r in reasons if r), None) or str(error.get("code", ""))
            found = {
                "source": "body",
                "format": "json",
                "code": code,
                "message": str(error["message"]),
            }
    elif not content.strip() and response.status == 403:
        # A HEAD never has a body, and S3 answers a denied HEAD with a bare 403: botocore reports
        # it as Code "403"; it is the same outcome as <Code>AccessDenied</Code>.
        found = {"source": "status", "format": None, "code": "AccessDenied", "message": None}
    if found is None:
        return None
    request_id = response.header("x-amz-request-id") or response.header("x-goog-request-id")
    if request_id and "request_id" not in found:
        found["request_id"] = request_id
    host_id = response.header("x-amz-id-2")
    if host_id and "host_id" not in found:
        found["host_id"] = host_id
    return found


def _json(media_type: str | None, content: bytes) -> Any:
    stripped = content.lstrip()
    if not (media_type and "json" in media_type) and not stripped.startswith((b"{", b"[")):
        return None
    try:
        return _network.loads(content)
    except (ValueError, UnicodeDecodeError):
        return None
