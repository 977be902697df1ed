"""The huggingface collector: a model, dataset or space at a revision, every file, named files.

The revision is resolved to its commit sha first (``/api/{type}s/{repo}/revision/{rev}``), and
the tree is then listed at that sha, so a branch that moves meanwhile cannot mix two commits.
Each file gets its size, git oid and LFS sha256, which the two endpoints spell differently:
``siblings[].lfs.sha256`` in the info answer, ``lfs.oid`` in the tree answer. Named small files
are downloaded at the commit, hashed, and checked against what the Hub asserted (size, git oid
or LFS sha256, ``X-Repo-Commit``).

huggingface_hub is used for what it does well and owns: repo-id rules (``validate_repo_id``) and
the download URL layout (``hf_hub_url``, which knows the ``datasets/`` and ``spaces/``
prefixes). The requests themselves go through prov's httpx fetcher, because a capture must keep
the raw bytes of every API answer and record every attempt and redirect, which HfApi's parsed
return values (and its own HTTP stack) cannot give. HF_ENDPOINT is read from the collect
context and passed explicitly: huggingface_hub reads it once, at import time.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from pydantic import Field, field_validator

from provenance._internal import redact
from provenance.capture import _network
from provenance.capture.base import Recorder, SourceOptions
from provenance.digest import CHUNK, Digest
from provenance.model import Capture, CaptureError, Establishes

DEFAULT_ENDPOINT = "https://huggingface.co"
_SHA = re.compile(r"^[0-9a-f]{40}$")
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')
_API_LIMIT = 256 << 20
_MAX_PAGES = 10_000


class HuggingFaceOptions(SourceOptions):
    """A Hugging Face Hub repository at a revision: its commit, file list and chosen files."""

    repo: str = Field(description="namespace/name on the Hub")
    repo_type: Literal["model", "dataset", "space"] = Field(
        default="model", description="the kind of Hub repository"
    )
    revision: str = Field(default="main", min_length=1, description="branch, tag or commit sha")
    files: list[str] = Field(default_factory=list, description="small files to download and hash")
    max_file_bytes: int = Field(
        default=64 << 20, ge=0, description="a larger file in `files` is recorded, not downloaded"
    )
    endpoint: str | None = Field(default=None, description="overrides HF_ENDPOINT")

    @field_validator("repo")
    @classmethod
    def _repo(cls, value: str) -> str:
        # Where huggingface_hub defines it (the package re-exports it lazily, invisibly to mypy).
        from huggingface_hub.utils._validators import validate_repo_id

        try:
            validate_repo_id(value)
        except ValueError as e:  # HFValidationError
            raise ValueError(f"not a Hugging Face repo id: {e}") from None
        return value

    @field_validator("files")
    @classmethod
    def _files(cls, value: list[str]) -> list[str]:
        for path in value:
            parts = path.split("/")
            if not path or path.startswith("/") or ".." in parts or "" in parts:
                raise ValueError(f"{path!r} is not a relative path inside the repo")
        return value

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        return None if value is None else _network.check_http_url(value, "endpoint")


class HuggingFaceCollector(_network.NetworkCollector):
    kind = "huggingface"
    options_model = HuggingFaceOptions
    options: HuggingFaceOptions

    def collect(self) -> Capture:
        options = self.options
        env = self.context.env
        endpoint = (options.endpoint or env.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
        scrub = _network.scrubber(env)
        token = env.get("HF_TOKEN") or env.get("HUGGING_FACE_HUB_TOKEN") or self._token_file()
        scrub.add(token)
        auth = [("Authorization", f"Bearer {token}")] if token else []
        request: dict[str, Any] = {
            "repo": options.repo,
            "repo_type": options.repo_type,
            "revision": options.revision,
            "files": list(options.files),
            "endpoint": scrub.text(redact.url_minimal(endpoint)),
            "authenticated": token is not None,
        }
        recorder = Recorder(self, request)
        self.data: dict[str, Any] = {
            "repo_id": options.repo,
            "repo_type": options.repo_type,
            "revision": options.revision,
            "commit": None,
            "last_modified": None,
            "files": [],
            "files_from": None,
            "fetched": [],
            "missing_files": [],
            "lfs_mismatches": [],
            "tls": None,
        }
        self.tls = True
        policy = _network.policy(self, max_body_bytes=_API_LIMIT)
        with _network.fetcher(self, scrub, policy) as fetcher:
            error = self._collect(fetcher, recorder, endpoint, auth)
        establishes: tuple[Establishes, ...] = ()
        if self.data["commit"] is not None:
            establishes = ("observed", "provider-asserted")
            if self.tls:
                establishes += ("tls-bound",)
        return recorder.finish(self.data, establishes, error)

    def _token_file(self) -> str | None:
        """The token `huggingface-cli login` saved, looked up as huggingface_hub does."""
        env = self.context.env
        if env.get("HF_TOKEN_PATH"):
            path = Path(env["HF_TOKEN_PATH"])
        elif env.get("HF_HOME"):
            path = Path(env["HF_HOME"]) / "token"
        elif env.get("HOME"):
            path = Path(env["HOME"]) / ".cache" / "huggingface" / "token"
        else:
            return None
        try:
            return path.read_text().strip() or None
        except OSError:
            return None

    def _get(self, fetcher: Any, recorder: Recorder, url: str, auth: list[Any]) -> Any:
        exchange = fetcher.fetch("GET", url, headers=auth)
        recorder.attempts.extend(exchange.attempts)
        if exchange.response is not None:
            self.tls = self.tls and exchange.tls_bound
            if self.data["tls"] is None:
                self.data["tls"] = exchange.response.tls
        return exchange

    def _collect(
        self, fetcher: Any, recorder: Recorder, endpoint: str, auth: list[Any]
    ) -> CaptureError | None:
        options = self.options
        what = f"{options.repo_type} {options.repo} at {options.revision!r}"
        api = f"{endpoint}/api/{options.repo_type}s/{options.repo}"

        # 1. The revision -> its commit, with the siblings' metadata.
        exchange = self._get(
            fetcher, recorder, f"{api}/revision/{quote(options.revision, safe='')}?blobs=true", auth
        )
        info, error = self._document(fetcher, recorder, exchange, "api/revision.json", what)
        if error is not None:
            return error
        commit = info.get("sha") if isinstance(info, dict) else None
        if not isinstance(commit, str) or not _SHA.match(commit):
            return CaptureError(type="protocol", message=f"{what}: the answer has no commit sha")
        self.data["commit"] = commit
        self.data["last_modified"] = info.get("lastModified")
        siblings = {
            s["rfilename"]: s
            for s in info.get("siblings") or []
            if isinstance(s, dict) and isinstance(s.get("rfilename"), str)
        }

        # 2. Every file, listed at the commit (the tree endpoint is paged).
        entries: list[dict[str, Any]] = []
        url: str | None = f"{api}/tree/{commit}?recursive=true"
        page = 0
        tree_missing = False
        while url is not None and page < _MAX_PAGES:
            page += 1
            same_origin = url.startswith(endpoint + "/")
            exchange = self._get(fetcher, recorder, url, auth if same_origin else [])
            name = "api/tree.json" if page == 1 else f"api/tree.{page}.json"
            if page == 1 and exchange.response is not None and exchange.response.status == 404:
                tree_missing = True  # an older Hub: the siblings are all there is
                break
            listing, error = self._document(fetcher, recorder, exchange, name, what)
            if error is not None:
                return error
            if not isinstance(listing, list):
                return CaptureError(type="protocol", message=f"{what}: the tree is not a list")
            entries.extend(e for e in listing if isinstance(e, dict))
            assert exchange.response is not None
            url = _next_link(exchange.response.header_values("link"))
        self.data["files_from"] = "siblings" if tree_missing else "tree"
        self.data["files"] = _files(entries, siblings, tree_missing)
        self.data["lfs_mismatches"] = [
            f["path"] for f in self.data["files"] if f.get("lfs_sha256_mismatch")
        ]
        for f in self.data["files"]:
            f.pop("lfs_sha256_mismatch", None)

        # 3. The named files, downloaded at the commit and checked against the listing.
        listed = {f["path"]: f for f in self.data["files"]}
        for path in options.files:
            if path not in listed:
                self.data["missing_files"].append(path)
                continue
            error = self._fetch_file(fetcher, recorder, endpoint, commit, path, listed[path], auth)
            if error is not None:
                return error
        return None

    def _document(
        self, fetcher: Any, recorder: Recorder, exchange: Any, name: str, what: str
    ) -> tuple[Any, CaptureError | None]:
        response = exchange.response
        if response is not None and response.body is not None:
            recorder.add_blob(name, response.body.digest, response.body.size, response.media_type)
        if exchange.error is not None:
            return None, exchange.error
        assert response is not None and response.body is not None
        if response.status != 200:
            return None, _network.status_error(exchange, what)
        if response.body.truncated:
            return None, CaptureError(
                type="body-too-large", message=f"{what}: an API answer exceeds {_API_LIMIT} bytes"
            )
        try:
            return _network.loads(fetcher.content(response)), None
        except (ValueError, UnicodeDecodeError) as e:
            return None, CaptureError(type="decode", message=f"{what}: the answer is not JSON: {e}")

    def _fetch_file(
        self,
        fetcher: Any,
        recorder: Recorder,
        endpoint: str,
        commit: str,
        path: str,
        listed: dict[str, Any],
        auth: list[Any],
    ) -> CaptureError | None:
        from huggingface_hub import hf_hub_url

        options = self.options
        url = hf_hub_url(
            options.repo, path, repo_type=options.repo_type, revision=commit, endpoint=endpoint
        )
        exchange = fetcher.fetch("GET", url, headers=auth, body_limit=options.max_file_bytes)
        recorder.attempts.extend(exchange.attempts)
        response = exchange.response
        what = f"{options.repo_type} {options.repo}: file {path!r}"
        if response is not None and response.body is not None:
            recorder.add_blob(path, response.body.digest, response.body.size, response.media_type)
        if exchange.error is not None:
            failure: CaptureError = exchange.error
            return failure.model_copy(update={"message": f"{what}: {failure.message}"})
        assert response is not None
        self.tls = self.tls and exchange.tls_bound
        if response.status == 404:
            self.data["missing_files"].append(path)
            return None
        if response.status != 200 or response.body is None:
            return _network.status_error(exchange, what)
        # The Hub's own answer is the first hop; a CDN answers last and knows nothing of commits.
        hub = exchange.hops[0] if exchange.hops else response
        body = response.body
        sha256, oid = _hashes(fetcher, body)
        entry: dict[str, Any] = {
            "path": path,
            "size": body.size,
            "sha256": sha256,
            "git_oid": oid,
            "etag": _unquote(hub.header("etag")),
            "linked_etag": _unquote(hub.header("x-linked-etag")),
            "linked_size": _int(hub.header("x-linked-size")),
            "x_repo_commit": hub.header("x-repo-commit"),
            "redirected": bool(exchange.hops),
            "truncated": body.truncated,
        }
        lfs = listed.get("lfs_sha256")
        entry["checks"] = {
            "size": body.size == listed.get("size"),
            "git_oid": None if lfs else oid == listed.get("oid"),
            "lfs_sha256": sha256 == lfs if lfs else None,
            "commit": entry["x_repo_commit"] == commit if entry["x_repo_commit"] else None,
        }
        self.data["fetched"].append(entry)
        if body.truncated:
            return CaptureError(
                type="body-too-large",
                message=f"{what}: larger than max_file_bytes ({options.max_file_bytes})",
                detail={"path": path, "listed_size": listed.get("size")},
            )
        return None


def _files(
    entries: list[dict[str, Any]], siblings: dict[str, dict[str, Any]], siblings_only: bool
) -> list[dict[str, Any]]:
    files: list[dict[str, Any]] = []
    if siblings_only:
        for path, sibling in sorted(siblings.items()):
            lfs = sibling.get("lfs") if isinstance(sibling.get("lfs"), dict) else None
            files.append(
                {
                    "path": path,
                    "size": sibling.get("size"),
                    "oid": sibling.get("blobId"),
                    "lfs_sha256": lfs.get("sha256") if lfs else None,
                }
            )
        return files
    for entry in entries:
        if entry.get("type") != "file":
            continue
        path = str(entry.get("path"))
        lfs = entry.get("lfs") if isinstance(entry.get("lfs"), dict) else None
        # The tree endpoint calls the LFS content sha256 `oid`; the info endpoint `sha256`.
        tree_sha = lfs.get("oid") if lfs else None
        sibling = siblings.get(path, {})
        sibling_lfs = sibling.get("lfs") if isinstance(sibling.get("lfs"), dict) else None
        info_sha = sibling_lfs.get("sha256") if sibling_lfs else None
        record: dict[str, Any] = {
            "path": path,
            "size": entry.get("size"),
            "oid": entry.get("oid"),
            "lfs_sha256": tree_sha or info_sha,
        }
        if tree_sha and info_sha and tree_sha != info_sha:
            record["lfs_sha256_mismatch"] = True
        files.append(record)
    return sorted(files, key=lambda f: f["path"])


def _hashes(fetcher: Any, body: Any) -> tuple[str, str]:
    """sha256 (LFS's content id) and git blob oid of stored bytes, read back in chunks."""
    sha256 = hashlib.sha256()
    git = hashlib.sha1(b"blob %d\0" % body.size, usedforsecurity=False)
    with fetcher.store.open(Digest.parse(body.digest)) as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            sha256.update(chunk)
            git.update(chunk)
    return sha256.hexdigest(), git.hexdigest()


def _next_link(values: list[str]) -> str | None:
    for value in values:
        match = _NEXT.search(value)
        if match:
            return match.group(1)
    return None


def _unquote(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if value.startswith("W/"):
        value = value[2:]
    return value.strip('"')


def _int(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None
