"""A small client of the OCI distribution API (v1.1) over httpx.

It speaks what a registry speaks: manifests and blobs by digest, monolithic blob uploads, the
referrers API, and the auth challenge flow (``WWW-Authenticate: Bearer realm=...`` answered with a
token from the realm, or ``Basic`` answered with the docker credentials). Every byte string it
returns was checked against the sha256 it is addressed by. Credentials and tokens live only in
this object's memory: errors carry the challenge and the registry's error codes, never a secret.
"""

from __future__ import annotations

import hashlib
import json
import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from provenance import __version__
from provenance._internal import cancel, redact
from provenance._internal.deadline import Watchdog
from provenance._internal.oci.credentials import Credentials
from provenance._internal.oci.reference import is_loopback
from provenance.errors import RegistryError, UsageError

if TYPE_CHECKING:
    import httpx

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
INDEX_TYPES = frozenset({OCI_INDEX, DOCKER_LIST})
MANIFEST_TYPES = (OCI_INDEX, OCI_MANIFEST, DOCKER_LIST, DOCKER_MANIFEST)

MAX_MANIFEST = 4 << 20  # the distribution spec lets registries refuse manifests over 4 MiB
MAX_BLOB = 64 << 20  # configs and attestations; layers are never downloaded
_CHALLENGE_PARAM = re.compile(r'([A-Za-z_]+)=(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Challenge:
    scheme: str
    params: dict[str, str]

    def evidence(self) -> dict[str, Any]:
        """What the challenge said, safe to store (the realm is a URL without secrets)."""
        params = dict(self.params)
        if "realm" in params:
            params["realm"] = redact.url(params["realm"])
        return {"scheme": self.scheme, **params}


def parse_challenge(header: str) -> Challenge | None:
    scheme, _, rest = header.strip().partition(" ")
    if not scheme:
        return None
    params = {
        m.group(1).lower(): (m.group(2) if m.group(2) is not None else m.group(3)).replace(
            '\\"', '"'
        )
        for m in _CHALLENGE_PARAM.finditer(rest)
    }
    return Challenge(scheme.capitalize(), params)


@dataclass(frozen=True)
class Fetched:
    """A manifest or blob as received, with the digest its bytes hash to."""

    data: bytes
    media_type: str
    digest: str
    registry_digest: str | None

    def json(self) -> dict[str, Any]:
        try:
            document = json.loads(self.data)
        except (ValueError, UnicodeDecodeError, RecursionError) as e:  # deep nesting too
            raise RegistryError(
                f"{self.digest} is not JSON", kind="decode", cause=str(e)[:200]
            ) from e
        if not isinstance(document, dict):
            raise RegistryError(f"{self.digest} is not a JSON object", kind="decode")
        return document


@dataclass(frozen=True)
class Pushed:
    digest: str
    subject_processed: bool  # the registry answered with OCI-Subject: it indexes referrers itself


class RegistryClient:
    """One registry, one set of credentials. Use as a context manager, or pass ``http``."""

    def __init__(
        self,
        registry: str,
        *,
        api_host: str | None = None,
        credentials: Credentials | None = None,
        plain_http: bool = False,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
    ) -> None:
        if plain_http and not is_loopback(registry):
            raise UsageError(
                f"plain http is allowed only for a registry on this machine, not {registry}",
                hint="use https, or run the registry on 127.0.0.1 / localhost",
            )
        self.registry = registry
        self.base_url = f"{'http' if plain_http else 'https'}://{api_host or registry}"
        self.credentials = credentials
        self._own_http = http is None
        if http is None:
            import httpx

            http = httpx.Client(
                timeout=timeout,
                follow_redirects=True,
                headers={"User-Agent": f"prov/{__version__}"},
            )
        self._http = http
        self._timeout = timeout
        self._watchdog = Watchdog()  # a whole request within `timeout`, not only each read
        self._tokens: dict[str, str] = {}
        self._basic = False
        self.requests = 0

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._watchdog.close()
        if self._own_http:
            self._http.close()

    # -- transport and auth ---------------------------------------------------------------

    def _authorization(self, scope: str) -> str | None:
        if token := self._tokens.get(scope):
            return f"Bearer {token}"
        if self._basic and self.credentials:
            return self.credentials.basic()
        return None

    def request(
        self,
        method: str,
        url: str,
        *,
        repository: str,
        push: bool = False,
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
        max_size: int = MAX_MANIFEST,
    ) -> tuple[httpx.Response, bytes]:
        """Send one request, answering an auth challenge once; return the response and body."""
        scope = f"repository:{repository}:{'pull,push' if push else 'pull'}"
        target = url if "://" in url else self.base_url + url
        response, body = self._send(method, target, scope, headers, content, max_size)
        if response.status_code == 401:
            challenge = parse_challenge(response.headers.get("www-authenticate", ""))
            if challenge and self._answer(challenge, scope):
                response, body = self._send(method, target, scope, headers, content, max_size)
        return response, body

    def _send(
        self,
        method: str,
        url: str,
        scope: str,
        headers: Mapping[str, str] | None,
        content: bytes | None,
        max_size: int,
    ) -> tuple[httpx.Response, bytes]:
        import httpx

        sent = dict(headers or {})
        if authorization := self._authorization(scope):
            sent["Authorization"] = authorization
        self.requests += 1
        self._watchdog.arm(self._timeout)
        try:
            with self._http.stream(
                method, url, headers=sent, content=content, extensions=self._watchdog.extensions
            ) as response:
                self._watchdog.watch_stream(response.extensions.get("network_stream"))
                body = _decoded(response, max_size, url)
        except httpx.HTTPError as e:
            if self._watchdog.cancelled:  # Ctrl-C / SIGTERM shut the socket
                raise cancel.Cancelled from e
            if self._watchdog.expired:
                raise RegistryError(
                    f"{method} {redact.url(url)} failed: timeout",
                    kind="timeout",
                    detail={"url": redact.url(url), "phase": "deadline"},
                    cause=f"no complete answer within {self._timeout:g}s",
                    hint="the registry answers too slowly; raise the source's timeout",
                ) from e
            raise self._mapped(e, method, url) from e
        finally:
            self._watchdog.disarm()
        return response, body

    @staticmethod
    def _mapped(e: Exception, method: str, url: str) -> RegistryError:
        import httpx

        if isinstance(e, httpx.TimeoutException):
            return _transport("timeout", method, url, e)
        if isinstance(e, httpx.ConnectError):
            return _transport("connect", method, url, e)
        if isinstance(e, httpx.TooManyRedirects):
            return _transport("too-many-redirects", method, url, e)
        if isinstance(e, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
            return _transport("reset", method, url, e)
        return _transport("protocol", method, url, e)

    def _answer(self, challenge: Challenge, scope: str) -> bool:
        """Get what the challenge asks for; False when there is nothing better to send."""
        if challenge.scheme == "Basic":
            if self.credentials is None or self._basic or self.credentials.identity_token:
                return False
            self._basic = True
            return True
        if challenge.scheme != "Bearer" or "realm" not in challenge.params:
            return False
        # A fresh token each time: a cached one may have expired. The caller asks only once per
        # request, so a registry that refuses the new token too gets its 401 recorded.
        self._tokens[scope] = self._fetch_token(challenge, scope)
        return True

    def _fetch_token(self, challenge: Challenge, scope: str) -> str:
        """The token flow of the distribution spec (docker's token authentication)."""
        import httpx

        realm = challenge.params["realm"]
        if realm.startswith("http://") and not _loopback_url(realm):
            raise RegistryError(
                f"the registry sends credentials to a plain-http token realm {redact.url(realm)}",
                kind="protocol",
                hint="prov only uses plain-http token realms on this machine",
            )
        params = {"scope": scope}
        if service := challenge.params.get("service"):
            params["service"] = service
        credentials = self.credentials
        extensions = self._watchdog.extensions
        self._watchdog.arm(self._timeout)
        try:
            if credentials is not None and credentials.identity_token:
                form = {**params, "grant_type": "refresh_token", "client_id": "prov"}
                form["refresh_token"] = credentials.secret
                response = self._http.post(realm, data=form, extensions=extensions)
            else:
                headers = {"Authorization": credentials.basic()} if credentials else {}
                response = self._http.get(
                    realm, params=params, headers=headers, extensions=extensions
                )
        except httpx.HTTPError as e:
            kind = "timeout" if self._watchdog.expired else "connect"
            raise _transport(kind, "GET", realm, e) from e
        finally:
            self._watchdog.disarm()
        if response.status_code != 200:
            raise RegistryError(
                f"the token server {redact.url(realm)} answered {response.status_code}",
                status=response.status_code,
                detail={
                    "stage": "token",
                    "status": response.status_code,
                    "challenge": challenge.evidence(),
                    "errors": _error_codes(response.content),
                },
                hint="check the credentials in your docker config (`docker login`)",
            )
        try:
            answer = response.json()
            token = answer.get("token") or answer.get("access_token")
        except (ValueError, AttributeError, RecursionError) as e:
            raise RegistryError("the token server's answer is not JSON", kind="decode") from e
        if not isinstance(token, str) or not token:
            raise RegistryError("the token server's answer holds no token", kind="protocol")
        return token

    # -- reading --------------------------------------------------------------------------

    def get_manifest(
        self, repository: str, reference: str, accept: Sequence[str] = MANIFEST_TYPES
    ) -> Fetched:
        """A manifest or index by tag or digest; a digest reference must match the bytes."""
        url = f"/v2/{repository}/manifests/{reference}"
        response, body = self.request(
            "GET", url, repository=repository, headers={"Accept": ", ".join(accept)}
        )
        _raise_for(response, body, f"manifest {repository}:{reference}")
        fetched = Fetched(
            body,
            response.headers.get("content-type", "").split(";")[0].strip() or _declared_type(body),
            sha256_digest(body),
            response.headers.get("docker-content-digest"),
        )
        if reference.startswith("sha256:") and fetched.digest != reference:
            raise _mismatch(f"manifest {repository}@{reference}", reference, fetched.digest)
        if fetched.registry_digest and fetched.registry_digest != fetched.digest:
            raise _mismatch(
                f"manifest {repository}:{reference} (Docker-Content-Digest)",
                fetched.registry_digest,
                fetched.digest,
            )
        return fetched

    def get_blob(self, repository: str, digest: str, max_size: int = MAX_BLOB) -> bytes:
        response, body = self.request(
            "GET", f"/v2/{repository}/blobs/{digest}", repository=repository, max_size=max_size
        )
        _raise_for(response, body, f"blob {repository}@{digest}")
        actual = sha256_digest(body)
        if actual != digest:
            raise _mismatch(f"blob {repository}@{digest}", digest, actual)
        return body

    def referrers(
        self, repository: str, digest: str, artifact_type: str | None = None
    ) -> list[dict[str, Any]] | None:
        """Descriptors of the manifests whose subject is ``digest``; None if the API is absent."""
        url = f"/v2/{repository}/referrers/{digest}"
        if artifact_type:
            from urllib.parse import quote

            url += f"?artifactType={quote(artifact_type, safe='')}"  # '+' would read as a space
        response, body = self.request(
            "GET", url, repository=repository, headers={"Accept": OCI_INDEX}
        )
        if response.status_code in (404, 405):
            return None  # spec: a registry without the API answers 404; fall back to tags
        _raise_for(response, body, f"referrers of {repository}@{digest}")
        return _descriptors(Fetched(body, OCI_INDEX, sha256_digest(body), None).json())

    def tag_index(self, repository: str, tag: str) -> list[dict[str, Any]] | None:
        """The descriptors of the index at ``tag``; None when the tag does not exist."""
        url = f"/v2/{repository}/manifests/{tag}"
        response, body = self.request(
            "GET", url, repository=repository, headers={"Accept": OCI_INDEX}
        )
        if response.status_code == 404:
            return None
        _raise_for(response, body, f"manifest {repository}:{tag}")
        fetched = Fetched(body, response.headers.get("content-type", ""), sha256_digest(body), None)
        document = fetched.json()
        if document.get("mediaType", fetched.media_type.split(";")[0]) != OCI_INDEX:
            raise RegistryError(
                f"{repository}:{tag} is not an image index, so it is not a referrers list",
                kind="protocol",
                hint="something else uses the referrers tag; remove it or push elsewhere",
            )
        return _descriptors(document)

    # -- writing --------------------------------------------------------------------------

    def push_blob(self, repository: str, data: bytes) -> str:
        """Upload a blob (monolithic POST then PUT) unless the registry already has it."""
        digest = sha256_digest(data)
        url = f"/v2/{repository}/blobs/{digest}"
        response, _ = self.request("HEAD", url, repository=repository, push=True)
        if response.status_code == 200:
            return digest
        response, body = self.request(
            "POST", f"/v2/{repository}/blobs/uploads/", repository=repository, push=True
        )
        _raise_for(response, body, f"blob upload to {repository}", expected=(202,))
        location = response.headers.get("location")
        if not location:
            raise RegistryError(
                "the registry started an upload without a Location", kind="protocol"
            )
        location = str(response.url.join(location))
        location += ("&" if "?" in location else "?") + f"digest={digest}"
        response, body = self.request(
            "PUT",
            location,
            repository=repository,
            push=True,
            headers={"Content-Type": "application/octet-stream"},
            content=data,
        )
        _raise_for(response, body, f"blob upload to {repository}", expected=(201,))
        return digest

    def put_manifest(self, repository: str, reference: str, data: bytes, media_type: str) -> Pushed:
        response, body = self.request(
            "PUT",
            f"/v2/{repository}/manifests/{reference}",
            repository=repository,
            push=True,
            headers={"Content-Type": media_type},
            content=data,
        )
        _raise_for(response, body, f"manifest push to {repository}:{reference}", expected=(201,))
        digest = sha256_digest(data)
        said = response.headers.get("docker-content-digest")
        if said and said != digest:
            raise _mismatch(f"manifest push to {repository}:{reference}", digest, said)
        return Pushed(digest, "oci-subject" in response.headers)


def as_dict(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one: registries' JSON is untrusted."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _descriptors(document: dict[str, Any]) -> list[dict[str, Any]]:
    manifests = document.get("manifests")
    if not isinstance(manifests, list):
        return []
    return [m for m in manifests if isinstance(m, dict) and isinstance(m.get("digest"), str)]


def _declared_type(body: bytes) -> str:
    try:
        value = json.loads(body).get("mediaType")
    except (ValueError, AttributeError, UnicodeDecodeError, RecursionError):
        return ""
    return value if isinstance(value, str) else ""


def _decoded(response: httpx.Response, limit: int, url: str) -> bytes:
    """The body, content-decoded, and never more than ``limit`` bytes of it in memory.

    httpx's own decoding inflates each network read whole: 64 KiB of a gzip bomb become 64 MiB
    before any cap can look. Here zlib gives at most what the cap still allows.
    """
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity", "gzip", "x-gzip", "deflate"):
        raise RegistryError(
            f"{redact.url(url)} answered in a {encoding!r} content-encoding", kind="decode"
        )
    inflate = encoding not in ("", "identity")
    decoder = zlib.decompressobj(47)  # gzip or zlib; a raw deflate stream is retried below
    parts: list[bytes] = []
    size = 0
    for chunk in response.iter_raw():
        pending = chunk
        while pending:
            if inflate:
                try:
                    out = decoder.decompress(pending, limit + 1 - size)
                except zlib.error as e:
                    if size or decoder.unused_data or encoding != "deflate":
                        raise RegistryError(
                            f"{redact.url(url)} sent a body that is not valid {encoding}",
                            kind="decode",
                            cause=str(e),
                        ) from e
                    decoder = zlib.decompressobj(-15)
                    continue
                pending = decoder.unconsumed_tail
            else:
                out, pending = pending, b""
            size += len(out)
            if size > limit:
                raise RegistryError(
                    f"{redact.url(url)} sent more than {limit:,} bytes", kind="body-too-large"
                )
            parts.append(out)
    return b"".join(parts)


def _loopback_url(url: str) -> bool:
    from urllib.parse import urlsplit

    return is_loopback(urlsplit(url).netloc.rpartition("@")[2])


def _transport(kind: str, method: str, url: str, error: Exception) -> RegistryError:
    return RegistryError(
        f"{method} {redact.url(url)} failed: {kind}",
        kind=kind,
        detail={"url": redact.url(url)},
        cause=str(error) or type(error).__name__,
        hint="check that the registry is reachable (and the --plain-http / https choice)",
    )


def _mismatch(what: str, expected: str, actual: str) -> RegistryError:
    return RegistryError(
        f"{what}: the bytes received hash to {actual}, not {expected}",
        kind="digest-mismatch",
        detail={"expected": expected, "actual": actual},
        hint="the registry or something between us changed the content; do not trust it",
    )


def _error_codes(body: bytes) -> list[dict[str, str]]:
    """The ``errors`` array of a registry's error body: code and message, nothing else."""
    try:
        document = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return []
    errors = document.get("errors") if isinstance(document, dict) else None
    if not isinstance(errors, list):
        return []
    return [
        {"code": str(e.get("code", "")), "message": str(e.get("message", ""))[:300]}
        for e in errors[:10]
        if isinstance(e, dict)
    ]


def _raise_for(
    response: httpx.Response, body: bytes, what: str, expected: tuple[int, ...] = (200,)
) -> None:
    status = response.status_code
    if status in expected:
        return
    detail: dict[str, Any] = {"status": status, "errors": _error_codes(body)}
    challenge = parse_challenge(response.headers.get("www-authenticate", ""))
    if challenge is not None:
        detail["challenge"] = challenge.evidence()
    codes = ", ".join(e["code"] for e in detail["errors"] if e["code"])
    hints = {
        401: "the registry wants credentials: `docker login` writes them to ~/.docker/config.json",
        403: "the credentials in use are not allowed this; check the repository's permissions",
        404: "check the repository name and the tag or digest",
    }
    raise RegistryError(
        f"{what}: the registry answered {status} {response.reason_phrase}"
        + (f" ({codes})" if codes else ""),
        status=status,
        detail=detail,
        hint=hints.get(status),
    )
