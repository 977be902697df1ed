"""A local stand-in for GitHub's releases REST API on 127.0.0.1, speaking its wire format.

Implements what ``provenance.publish.release`` uses: GET /repos/{o}/{r}/releases[/tags/{tag}],
GET /repos/{o}/{r}/releases/{id}/assets (paginated with a Link header), DELETE and GET
/repos/{o}/{r}/releases/assets/{id} (octet-stream download), and POST
/uploads/repos/{o}/{r}/releases/{id}/assets?name=... (the ``upload_url`` host). Every request
must carry the configured bearer token. Requests are recorded for assertions.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class StoredAsset:
    id: int
    name: str
    content_type: str
    data: bytes


@dataclass
class Release:
    id: int
    tag: str
    assets: list[StoredAsset] = field(default_factory=list)
    draft: bool = False


class LocalGitHub:
    """Releases of one repository, served over HTTP; a context manager."""

    page_size = 2  # small, so that listing assets exercises pagination

    def __init__(self, repository: str = "example/project", token: str = "ghs_test") -> None:  # noqa: S107
        self.repository = repository
        self.token = token
        self.releases: list[Release] = []  # newest first, like the API
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self._next_id = 100
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def add_release(self, tag: str, *, draft: bool = False) -> Release:
        with self._lock:
            self._next_id += 1
            release = Release(self._next_id, tag, draft=draft)
            self.releases.insert(0, release)
            return release

    def add_asset(self, release: Release, name: str, data: bytes, content_type: str) -> None:
        with self._lock:
            self._next_id += 1
            release.assets.append(StoredAsset(self._next_id, name, content_type, data))

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def _asset_json(self, asset: StoredAsset) -> dict[str, Any]:
        base = f"{self.url}/repos/{self.repository}/releases/assets/{asset.id}"
        return {
            "id": asset.id,
            "name": asset.name,
            "content_type": asset.content_type,
            "size": len(asset.data),
            "url": base,
            "browser_download_url": f"{self.url}/download/{asset.id}/{asset.name}",
        }

    def _release_json(self, release: Release) -> dict[str, Any]:
        return {
            "id": release.id,
            "tag_name": release.tag,
            "draft": release.draft,
            "upload_url": (
                f"{self.url}/uploads/repos/{self.repository}/releases/{release.id}/assets"
                "{?name,label}"
            ),
            "assets": [self._asset_json(a) for a in release.assets],
        }

    def handle(
        self, method: str, path: str, query: dict[str, list[str]], body: bytes, ctype: str
    ) -> tuple[int, dict[str, str], bytes]:
        repo = re.escape(self.repository)
        with self._lock:
            if m := re.fullmatch(rf"/repos/{repo}/releases/tags/(.+)", path):
                for release in self.releases:
                    if release.tag == m.group(1) and method == "GET":
                        return self._json(200, self._release_json(release))
                return self._json(404, {"message": "Not Found"})
            if re.fullmatch(rf"/repos/{repo}/releases", path) and method == "GET":
                return self._json(200, [self._release_json(r) for r in self.releases])
            if m := re.fullmatch(rf"/repos/{repo}/releases/(\d+)/assets", path):
                listed = self._release(int(m.group(1)))
                if listed is None:
                    return self._json(404, {"message": "Not Found"})
                page = int(query.get("page", ["1"])[0])
                start = (page - 1) * self.page_size
                chunk = listed.assets[start : start + self.page_size]
                headers = {}
                if start + self.page_size < len(listed.assets):
                    nxt = f"{self.url}{path}?page={page + 1}"
                    headers["Link"] = f'<{nxt}>; rel="next"'
                status, extra, data = self._json(200, [self._asset_json(a) for a in chunk])
                return status, {**extra, **headers}, data
            if m := re.fullmatch(rf"/repos/{repo}/releases/assets/(\d+)", path):
                for release in self.releases:
                    for asset in release.assets:
                        if asset.id != int(m.group(1)):
                            continue
                        if method == "DELETE":
                            release.assets.remove(asset)
                            return 204, {}, b""
                        return 200, {"Content-Type": "application/octet-stream"}, asset.data
                return self._json(404, {"message": "Not Found"})
            if m := re.fullmatch(rf"/uploads/repos/{repo}/releases/(\d+)/assets", path):
                target = self._release(int(m.group(1)))
                name = query.get("name", [""])[0]
                if target is None or method != "POST" or not name:
                    return self._json(404, {"message": "Not Found"})
                if any(a.name == name for a in target.assets):
                    return self._json(
                        422,
                        {"message": "Validation Failed", "errors": [{"code": "already_exists"}]},
                    )
                self._next_id += 1
                asset = StoredAsset(self._next_id, name, ctype, body)
                target.assets.append(asset)
                return self._json(201, self._asset_json(asset))
        return self._json(404, {"message": "Not Found"})

    def _release(self, release_id: int) -> Release | None:
        return next((r for r in self.releases if r.id == release_id), None)

    @staticmethod
    def _json(status: int, document: Any) -> tuple[int, dict[str, str], bytes]:
        return status, {"Content-Type": "application/json"}, json.dumps(document).encode()

    def start(self) -> LocalGitHub:
        github = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length) if length else b""
                github.requests.append((self.command, parts.path, dict(self.headers.items())))
                if self.headers.get("Authorization") != f"Bearer {github.token}":
                    status, headers, data = github._json(401, {"message": "Bad credentials"})
                else:
                    status, headers, data = github.handle(
                        self.command,
                        parts.path,
                        parse_qs(parts.query),
                        body,
                        self.headers.get("Content-Type", ""),
                    )
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _serve

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LocalGitHub:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
