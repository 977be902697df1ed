"""Image references: ``registry/repository:tag``, ``...@sha256:<hex>``, with or without ``oci://``.

The grammar is the one docker and the OCI distribution spec use: the first path component is a
registry host only when it holds a ``.`` or a ``:`` or is ``localhost``; otherwise the image is on
Docker Hub, whose one-component names live under ``library/``.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from provenance.errors import UsageError

SCHEME = "oci://"
DOCKER_HUB = "docker.io"
DOCKER_HUB_API = "registry-1.docker.io"

# OCI distribution spec, "Pulling manifests": <name> and <reference> grammars.
_COMPONENT = r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*"
_REPOSITORY = re.compile(rf"^{_COMPONENT}(?:/{_COMPONENT})*$")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_LOOPBACK_NAMES = {"localhost"}


@dataclass(frozen=True)
class Reference:
    """A parsed image reference. ``tag`` and ``digest`` may both be set (the digest wins)."""

    registry: str
    repository: str
    tag: str | None = None
    digest: str | None = None

    @property
    def reference(self) -> str:
        """What goes after ``/manifests/``: the digest when pinned, else the tag."""
        return self.digest or self.tag or "latest"

    @property
    def api_host(self) -> str:
        return DOCKER_HUB_API if self.registry == DOCKER_HUB else self.registry

    @property
    def is_loopback(self) -> bool:
        return is_loopback(self.registry)

    def with_digest(self, digest: str) -> Reference:
        return Reference(self.registry, self.repository, self.tag, digest)

    def __str__(self) -> str:
        text = f"{self.registry}/{self.repository}"
        if self.tag:
            text += f":{self.tag}"
        if self.digest:
            text += f"@{self.digest}"
        return text


def parse(text: str) -> Reference:
    """Parse an image reference; raise UsageError naming what is wrong."""
    raw = text.strip()
    if raw.startswith(SCHEME):
        raw = raw[len(SCHEME) :]
    if not raw or "://" in raw:
        raise _bad(text, "expected registry/repository[:tag][@sha256:<hex>]")
    name, _, digest = raw.partition("@")
    if digest and not _DIGEST.match(digest):
        raise _bad(text, f"the digest {digest!r} is not sha256:<64 lowercase hex>")
    first, slash, rest = name.partition("/")
    if slash and ("." in first or ":" in first or first in _LOOPBACK_NAMES):
        registry, remainder = first, rest
    else:
        registry, remainder = DOCKER_HUB, name
    tag: str | None = None
    last_slash = remainder.rfind("/")
    colon = remainder.rfind(":")
    if colon > last_slash:
        remainder, tag = remainder[:colon], remainder[colon + 1 :]
        if not _TAG.match(tag):
            raise _bad(text, f"the tag {tag!r} is not valid")
    if registry == DOCKER_HUB and "/" not in remainder:
        remainder = f"library/{remainder}"
    if not _REPOSITORY.match(remainder):
        raise _bad(
            text,
            f"the repository {remainder!r} is not valid (lowercase letters, digits, '.', '_', "
            "'-' and '/')",
        )
    if tag is None and not digest:
        tag = "latest"
    return Reference(registry, remainder, tag, digest or None)


def is_loopback(registry: str) -> bool:
    """Whether a registry host[:port] is this machine (the only place plain http is allowed)."""
    host = registry[1:].split("]", 1)[0] if registry.startswith("[") else registry.split(":")[0]
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _bad(text: str, why: str) -> UsageError:
    return UsageError(
        f"invalid image reference {text!r}: {why}",
        hint="write it as registry.example.org/team/image:tag or ...@sha256:<hex>",
    )
