"""The Hugging Face Hub endpoints prov reads: repo info at a revision, the tree, file resolution.

Shapes follow huggingface.co: ``siblings`` entries carry ``lfs.sha256`` (with ``?blobs=true``),
tree entries ``lfs.oid``; git oids and directory tree ids are real git object ids computed from
the fixture bytes; the tree is paged with a ``Link: <...>; rel="next"`` header; LFS files
resolve through a 302 to a signed CDN URL carrying ``X-Linked-Etag`` and ``X-Linked-Size``.
An unknown repo is a 401 ``RepoNotFound`` without a token and a 404 with one, as on the Hub.
"""

from __future__ import annotations

import base64
import hashlib
import mimetypes
import re
import secrets
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from provenance._testing.fixtures import Fixtures, HfCommit, HfRepo

if TYPE_CHECKING:
    from provenance._testing.server import Handler, Request

_TYPES = {"models": "model", "datasets": "dataset", "spaces": "space"}
_PREFIX = {"model": "", "dataset": "datasets/", "space": "spaces/"}


def _request_id() -> list[tuple[str, str]]:
    return [("X-Request-Id", f"Root=1-{secrets.token_hex(4)}-{secrets.token_hex(12)}")]


def _error(
    handler: Handler, status: int, code: str, message: str, extra: tuple[tuple[str, str], ...] = ()
) -> None:
    handler.send_json(
        status,
        {"error": message},
        [("X-Error-Code", code), ("X-Error-Message", message), *_request_id(), *extra],
    )


def _find(fixtures: Fixtures, repo_type: str, rest: str) -> tuple[HfRepo, str] | None:
    """The repo whose id starts ``rest``, and what follows it (repo ids may be 1 or 2 parts)."""
    for repo in sorted(fixtures.hf_repos, key=lambda r: -len(r.repo_id)):
        if repo.repo_type == repo_type and (rest + "/").startswith(repo.repo_id + "/"):
            return repo, rest[len(repo.repo_id) + 1 :]
    return None


def _authorised(repo: HfRepo, request: Request, fixtures: Fixtures) -> bool:
    if not repo.private:
        return True
    return fixtures.hf_token is not None and (
        request.header("authorization") == f"Bearer {fixtures.hf_token}"
    )


def _not_found(handler: Handler, request: Request, what: str) -> None:
    # The Hub hides a repo's existence: 401 without a token, 404 with one.
    status = 404 if request.header("authorization") else 401
    _error(handler, status, "RepoNotFound", f"Repository Not Found for url: {what}.")


def api(handler: Handler, request: Request, fixtures: Fixtures) -> None:
    match = re.match(r"^/api/(models|datasets|spaces)/(.+)$", request.path)
    if match is None:
        handler.send_json(404, {"error": "Not Found"})
        return
    repo_type = _TYPES[match.group(1)]
    found = _find(fixtures, repo_type, match.group(2))
    if found is None or not _authorised(found[0], request, fixtures):
        _not_found(handler, request, handler.base_url + request.path)
        return
    repo, tail = found
    head, _, rest = tail.partition("/")
    if head in ("", "revision"):
        revision = unquote(rest) if head else "main"
        commit = repo.resolve(revision)
        if commit is None:
            _error(handler, 404, "RevisionNotFound", f"Invalid rev id: {revision}")
            return
        handler.send_json(200, _info(repo, commit, request.param("blobs") == "true"), _etag())
    elif head == "tree" and fixtures.hf_tree:
        revision, _, sub = rest.partition("/")
        commit = repo.resolve(unquote(revision))
        if commit is None:
            _error(handler, 404, "RevisionNotFound", f"Invalid rev id: {unquote(revision)}")
            return
        _tree(handler, request, fixtures, repo, commit, unquote(revision), unquote(sub))
    else:
        handler.send_json(404, {"error": "Not Found"})


def _etag() -> list[tuple[str, str]]:
    return [("ETag", f'W/"{secrets.token_hex(8)}"'), *_request_id()]


def _info(repo: HfRepo, commit: HfCommit, blobs: bool) -> dict[str, Any]:
    siblings: list[dict[str, Any]] = []
    for f in sorted(commit.files, key=lambda f: f.path):
        sibling: dict[str, Any] = {"rfilename": f.path}
        if blobs:
            sibling.update(size=len(f.content), blobId=f.oid)
            if f.lfs:
                sibling["lfs"] = {
                    "size": len(f.content),
                    "sha256": f.sha256,
                    "pointerSize": len(f.pointer),
                }
        siblings.append(sibling)
    return {
        "_id": hashlib.sha256(repo.repo_id.encode()).hexdigest()[:24],
        "id": repo.repo_id,
        "author": repo.repo_id.split("/")[0] if "/" in repo.repo_id else None,
        "sha": commit.sha,
        "lastModified": commit.last_modified,
        "createdAt": "2026-01-01T00:00:00.000Z",
        "private": repo.private,
        "gated": False,
        "disabled": False,
        "downloads": 0,
        "likes": 0,
        "tags": [],
        "cardData": None,
        "siblings": siblings,
        "usedStorage": sum(len(f.content) for f in commit.files),
    }


def tree_oid(commit: HfCommit, prefix: str) -> str:
    """The git tree id of a directory, from its entries (as ``git write-tree`` would)."""
    entries: dict[str, tuple[str, str]] = {}
    for f in commit.files:
        if not f.path.startswith(prefix):
            continue
        head, sep, _ = f.path[len(prefix) :].partition("/")
        if sep:
            entries[head] = ("40000", tree_oid(commit, prefix + head + "/"))
        else:
            entries[head] = ("100644", f.oid)
    # git orders tree entries by name, with directories compared as if they ended in "/".
    ordered = sorted(entries.items(), key=lambda e: e[0] + ("/" if e[1][0] == "40000" else ""))
    body = b"".join(
        f"{mode} {name}".encode() + b"\0" + bytes.fromhex(oid) for name, (mode, oid) in ordered
    )
    return hashlib.sha1(b"tree %d\0" % len(body) + body, usedforsecurity=False).hexdigest()


def _entries(commit: HfCommit, sub: str, recursive: bool) -> list[dict[str, Any]] | None:
    prefix = sub.strip("/") + "/" if sub.strip("/") else ""
    directories: set[str] = set()
    files: list[dict[str, Any]] = []
    for f in commit.files:
        if not f.path.startswith(prefix):
            continue
        rest = f.path[len(prefix) :]
        parts = rest.split("/")
        for depth in range(1, len(parts)):
            if recursive or depth == 1:
                directories.add(prefix + "/".join(parts[:depth]))
        if not recursive and len(parts) > 1:
            continue
        entry: dict[str, Any] = {
            "type": "file",
            "oid": f.oid,
            "size": len(f.content),
            "path": f.path,
        }
        if f.lfs:
            entry["lfs"] = {
                "oid": f.sha256,
                "size": len(f.content),
                "pointerSize": len(f.pointer),
            }
        files.append(entry)
    if prefix and not files and not directories:
        return None
    folders = [
        {"type": "directory", "oid": tree_oid(commit, d + "/"), "size": 0, "path": d}
        for d in directories
    ]
    return sorted(folders + files, key=lambda e: str(e["path"]))


def _tree(
    handler: Handler,
    request: Request,
    fixtures: Fixtures,
    repo: HfRepo,
    commit: HfCommit,
    revision: str,
    sub: str,
) -> None:
    entries = _entries(commit, sub, request.param("recursive") in ("true", "True", "1"))
    if entries is None:
        _error(handler, 404, "EntryNotFound", f"{sub} does not exist on {revision}")
        return
    cursor = request.param("cursor")
    try:
        start = int(base64.urlsafe_b64decode(cursor.encode()).decode()) if cursor else 0
    except ValueError:
        handler.send_json(400, {"error": "invalid cursor"})
        return
    size = max(1, fixtures.tree_page_size)
    page = entries[start : start + size]
    headers = _request_id()
    if start + size < len(entries):
        next_cursor = base64.urlsafe_b64encode(str(start + size).encode()).decode()
        params = [f"{k}={quote(v[0], safe='')}" for k, v in request.query.items() if k != "cursor"]
        params.append(f"cursor={next_cursor}")
        link = f"{handler.base_url}{request.path}?{'&'.join(params)}"
        headers.append(("Link", f'<{link}>; rel="next"'))
    handler.send_json(200, page, headers)


def resolve(handler: Handler, request: Request, fixtures: Fixtures) -> bool:
    """Serve ``/[datasets/|spaces/]{repo}/resolve/{rev}/{path}``; False if it is not one."""
    match = re.match(r"^/(datasets/|spaces/)?(.+?)/resolve/([^/]+)/(.+)$", request.path)
    if match is None or request.method not in ("GET", "HEAD"):
        return False
    repo_type = {"datasets/": "dataset", "spaces/": "space"}.get(match.group(1) or "", "model")
    found = _find(fixtures, repo_type, match.group(2))
    if found is None or found[1] != "":
        return False
    repo = found[0]
    if not _authorised(repo, request, fixtures):
        _not_found(handler, request, handler.base_url + request.path)
        return True
    revision, path = unquote(match.group(3)), unquote(match.group(4))
    commit = repo.resolve(revision)
    if commit is None:
        _error(handler, 404, "RevisionNotFound", f"Invalid rev id: {revision}")
        return True
    f = commit.file(path)
    if f is None:
        _error(
            handler,
            404,
            "EntryNotFound",
            f"{path} does not exist on {revision}",
            (("X-Repo-Commit", commit.sha),),
        )
        return True
    common = [("X-Repo-Commit", commit.sha), ("Accept-Ranges", "bytes"), *_request_id()]
    if f.lfs:
        # Real Hub LFS downloads leave for a CDN through a short-lived signed URL.
        signature = secrets.token_hex(32)
        credential = (
            f"AKIA{secrets.token_hex(8).upper()}%2F20260818%2Fus-east-1%2Fs3%2Faws4_request"
        )
        location = (
            f"{fixtures.hf_cdn_url or _cdn_origin(handler.base_url)}/hf-cdn/{f.sha256}"
            "?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            f"&X-Amz-Credential={credential}&X-Amz-Date=20260818T000000Z&X-Amz-Expires=3600"
            f"&X-Amz-Signature={signature}&X-Amz-SignedHeaders=host"
        )
        body = f"Found. Redirecting to {location}".encode()
        handler.send(
            302,
            [
                ("Content-Type", "text/plain; charset=utf-8"),
                ("Location", location),
                ("ETag", f'"{f.sha256}"'),
                ("X-Linked-Etag", f'"{f.sha256}"'),
                ("X-Linked-Size", str(len(f.content))),
                *common,
            ],
            body,
        )
        return True
    media = mimetypes.guess_type(f.path)[0] or "application/octet-stream"
    if media.startswith("text/"):
        media += "; charset=utf-8"
    handler.send(200, [("Content-Type", media), ("ETag", f'"{f.oid}"'), *common], f.content)
    return True


def _cdn_origin(base_url: str) -> str:
    """This server under its other name: another origin, as the Hub's CDN is another host.

    Clients treat a cross-origin redirect differently (huggingface_hub reads the file's metadata
    from the 302 itself and drops the token), so the test CDN must not share the Hub's origin.
    """
    if "://127.0.0.1:" in base_url:
        return base_url.replace("://127.0.0.1:", "://localhost:", 1)
    return base_url.replace("://localhost:", "://127.0.0.1:", 1)


def cdn(handler: Handler, request: Request, fixtures: Fixtures) -> None:
    """The CDN behind LFS downloads: content by sha256, only with a signature."""
    sha256 = request.path.rsplit("/", 1)[-1]
    if not request.param("X-Amz-Signature"):
        handler.send(
            403,
            [("Content-Type", "application/xml")],
            b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>'
            b"<Message>Access Denied</Message></Error>",
        )
        return
    for repo in fixtures.hf_repos:
        for commit in repo.commits.values():
            for f in commit.files:
                if f.lfs and f.sha256 == sha256:
                    handler.send(
                        200,
                        [("Content-Type", "application/octet-stream"), ("ETag", f'"{sha256}"')],
                        f.content,
                    )
                    return
    handler.send(
        404, [("Content-Type", "application/xml")], b"<Error><Code>NoSuchKey</Code></Error>"
    )
