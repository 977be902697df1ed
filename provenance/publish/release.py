"""Attaching attestations and evidence packs to a GitHub release, through the REST API.

Endpoints used (https://docs.github.com/rest/releases): GET a release by tag, list its assets,
DELETE an asset, POST an asset to the release's ``upload_url``, list releases and download an
asset (for the previous release's pack). The API base comes from ``GITHUB_API_URL`` and the token
from ``GITHUB_TOKEN``; the token goes in the Authorization header only, never in a message.

Asset names: tools that scan releases for provenance look for ``*.intoto.jsonl``, so every
attestation is uploaded under a name ending in it: a DSSE file keeps its name, a Sigstore bundle
``LABEL.sigstore.json`` becomes ``LABEL.sigstore.intoto.jsonl`` (one bundle per line, as
slsa-verifier and ``gh attestation verify`` read). Packs keep their ``.tar`` name.

An asset whose name is already on the release is replaced by default (deleted, then uploaded);
``skip`` leaves it, ``fail`` stops with an error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

from provenance.errors import ReleaseError, UsageError

if TYPE_CHECKING:
    import httpx

OnExisting = Literal["replace", "skip", "fail"]
API_VERSION = "2022-11-28"

CONTENT_TYPES = (
    (".intoto.jsonl", "application/x-ndjson"),
    (".sigstore.json", "application/vnd.dev.sigstore.bundle.v0.3+json"),
    (".tsr", "application/timestamp-reply"),
    (".tar.gz", "application/gzip"),
    (".tar", "application/x-tar"),
    (".json", "application/json"),
    (".md", "text/markdown"),
)


@dataclass(frozen=True)
class Asset:
    path: Path
    name: str
    content_type: str


@dataclass(frozen=True)
class Uploaded:
    name: str
    action: Literal["uploaded", "replaced", "skipped"]
    size: int
    url: str | None


def asset_name(path: Path) -> str:
    """The release asset name for a file (see the module docstring)."""
    name = path.name
    if name.endswith(".sigstore.json"):
        return name.removesuffix(".json") + ".intoto.jsonl"
    return name


def asset_for(path: Path) -> Asset:
    name = asset_name(path)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,250}", name):
        raise UsageError(f"{name!r} cannot be a release asset name")
    content_type = next(
        (kind for suffix, kind in CONTENT_TYPES if name.endswith(suffix)),
        "application/octet-stream",
    )
    return Asset(path, name, content_type)


@dataclass
class GitHubReleases:
    """A small client for one repository's releases."""

    api_url: str
    token: str
    repository: str
    client: httpx.Client

    @classmethod
    def from_env(
        cls, repository: str, env: dict[str, str], client: httpx.Client | None = None
    ) -> GitHubReleases:
        import httpx

        token = env.get("GITHUB_TOKEN", "")
        if not token:
            raise UsageError("GITHUB_TOKEN is not set", hint="the action passes github.token")
        if repository.count("/") != 1:
            raise UsageError(f"the repository must be owner/name, not {repository!r}")
        api = env.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
        return cls(api, token, repository, client or httpx.Client(timeout=60.0))

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": "prov-release",
            **(extra or {}),
        }

    def _request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        import httpx

        from provenance._internal import redact

        headers = self._headers(kwargs.pop("headers", None))
        try:
            response = self.client.request(method, url, headers=headers, **kwargs)
        except httpx.HTTPError as e:
            raise ReleaseError(
                f"{method} {redact.url(url)} failed", cause=str(e), hint="check GITHUB_API_URL"
            ) from e
        return response

    def _fail(self, what: str, response: httpx.Response) -> ReleaseError:
        hint = None
        if response.status_code in (401, 403):
            hint = "the token needs `contents: write` on this repository"
        message = ""
        try:
            message = str(response.json().get("message", ""))
        except ValueError:
            message = response.text[:200]
        return ReleaseError(
            f"{what}: HTTP {response.status_code}", cause=message or None, hint=hint
        )

    def release_by_tag(self, tag: str) -> dict[str, Any]:
        url = f"{self.api_url}/repos/{self.repository}/releases/tags/{quote(tag, safe='')}"
        response = self._request("GET", url)
        if response.status_code == 404:
            raise ReleaseError(
                f"{self.repository} has no release for tag {tag!r}",
                hint="create the release first (the action runs on `release: published`)",
            )
        if response.status_code != 200:
            raise self._fail(f"reading the release {tag!r}", response)
        release: dict[str, Any] = response.json()
        return release

    def releases(self) -> list[dict[str, Any]]:
        """The repository's releases, newest first (first page of 100)."""
        url = f"{self.api_url}/repos/{self.repository}/releases"
        response = self._request("GET", url, params={"per_page": 100})
        if response.status_code != 200:
            raise self._fail("listing releases", response)
        found: list[dict[str, Any]] = response.json()
        return found

    def assets(self, release_id: int) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        url: str | None = f"{self.api_url}/repos/{self.repository}/releases/{release_id}/assets"
        params: dict[str, Any] | None = {"per_page": 100}
        while url:
            response = self._request("GET", url, params=params)
            if response.status_code != 200:
                raise self._fail("listing release assets", response)
            found.extend(response.json())
            url = response.links.get("next", {}).get("url")
            params = None
        return found

    def delete_asset(self, asset_id: int) -> None:
        url = f"{self.api_url}/repos/{self.repository}/releases/assets/{asset_id}"
        response = self._request("DELETE", url)
        if response.status_code not in (204, 404):
            raise self._fail(f"deleting asset {asset_id}", response)

    def upload(self, release: dict[str, Any], asset: Asset) -> dict[str, Any]:
        upload_url = str(release["upload_url"]).split("{", 1)[0]
        data = asset.path.read_bytes()
        response = self._request(
            "POST",
            upload_url,
            params={"name": asset.name},
            content=data,
            headers={"Content-Type": asset.content_type},
        )
        if response.status_code != 201:
            raise self._fail(f"uploading {asset.name}", response)
        uploaded: dict[str, Any] = response.json()
        return uploaded

    def download_asset(self, asset: dict[str, Any], target: Path) -> Path:
        url = f"{self.api_url}/repos/{self.repository}/releases/assets/{asset['id']}"
        response = self._request(
            "GET", url, headers={"Accept": "application/octet-stream"}, follow_redirects=True
        )
        if response.status_code != 200:
            raise self._fail(f"downloading {asset.get('name')}", response)
        target.write_bytes(response.content)
        return target


def upload_assets(
    releases: GitHubReleases,
    tag: str,
    paths: Sequence[Path],
    on_existing: OnExisting = "replace",
) -> list[Uploaded]:
    """Upload each file to the release for ``tag``; see the module docstring for names."""
    assets = [asset_for(path) for path in paths]
    names = [a.name for a in assets]
    if len(set(names)) != len(names):
        raise UsageError(f"two files would become the same asset: {', '.join(names)}")
    for asset in assets:
        if not asset.path.is_file():
            raise UsageError(f"{asset.path} does not exist: nothing to upload")
    release = releases.release_by_tag(tag)
    existing = {a["name"]: a for a in releases.assets(int(release["id"]))}
    done = []
    for asset in assets:
        size = asset.path.stat().st_size
        action: Literal["uploaded", "replaced", "skipped"] = "uploaded"
        if asset.name in existing:
            if on_existing == "skip":
                current = existing[asset.name]
                done.append(Uploaded(asset.name, "skipped", size, current.get("url")))
                continue
            if on_existing == "fail":
                raise ReleaseError(
                    f"the release {tag!r} already has an asset {asset.name!r}",
                    hint="re-run with replace or skip",
                )
            releases.delete_asset(int(existing[asset.name]["id"]))
            action = "replaced"
        created = releases.upload(release, asset)
        done.append(Uploaded(asset.name, action, size, created.get("browser_download_url")))
    return done


def previous_asset(
    releases: GitHubReleases, tag: str, suffix: str, target_dir: Path
) -> Path | None:
    """Download the newest earlier release's asset ending in ``suffix``; None if none has one.

    "Earlier" is by position in the API's newest-first list; drafts are skipped.
    """
    listed = [r for r in releases.releases() if not r.get("draft")]
    names = [r.get("tag_name") for r in listed]
    start = names.index(tag) + 1 if tag in names else 0
    for release in listed[start:]:
        for asset in releases.assets(int(release["id"])):
            if str(asset.get("name", "")).endswith(suffix):
                name = asset_for(Path(str(asset["name"]))).name
                target_dir.mkdir(parents=True, exist_ok=True)
                return releases.download_asset(asset, target_dir / name)
    return None


def named_asset(releases: GitHubReleases, tag: str, name: str, target_dir: Path) -> Path:
    """Download the asset called ``name`` of the release ``tag``; ReleaseError if it has none.

    The name is checked as an asset name first, so that it cannot climb out of ``target_dir``.
    """
    safe = asset_for(Path(name)).name
    release = releases.release_by_tag(tag)
    for asset in releases.assets(int(release["id"])):
        if asset.get("name") == safe:
            target_dir.mkdir(parents=True, exist_ok=True)
            return releases.download_asset(asset, target_dir / safe)
    raise ReleaseError(
        f"release {tag!r} of {releases.repository} has no asset named {safe!r}",
        hint="check the asset's name on the release page",
    )
