"""Shared fixtures: real git repositories, key pairs, a project folder, and ../shared lookup."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from provenance._testing.fixtures import Fixtures
from provenance._testing.server import LocalServer
from provenance.capture.base import CollectContext, validate_source
from provenance.cli import cli
from provenance.config import SourceSpec
from provenance.model import Capture
from provenance.store.objects import Store

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PROV_SHARED", ROOT.parent / "shared"))

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.org",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.org",
    "GIT_AUTHOR_DATE": "2026-08-21T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-08-21T00:00:00Z",
}


@pytest.fixture
def shared() -> Path:
    """The read-only ../shared folder of third-party test data; skips the test without it."""
    if not SHARED.is_dir():
        pytest.skip(
            "needs the third-party test data (sigstore-conformance cases, real W&B and object "
            f"store files) in ../shared, not found at {SHARED}: put it there or set PROV_SHARED=DIR"
        )
    return SHARED


def run_git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    result = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return result.stdout.strip()


class GitRepo:
    """A real git repository made with the real git binary."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        run_git(path, "init", "-q", "-b", "main")

    def write(self, relative: str, content: str | bytes) -> Path:
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            target.write_text(content)
        else:
            target.write_bytes(content)
        return target

    def commit(self, message: str = "commit") -> str:
        run_git(self.path, "add", "-A")
        run_git(self.path, "commit", "-q", "-m", message)
        return run_git(self.path, "rev-parse", "HEAD")

    def git(self, *args: str) -> str:
        return run_git(self.path, *args)


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[[str], GitRepo]:
    def make(name: str = "repo") -> GitRepo:
        return GitRepo(tmp_path / name)

    return make


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty project folder as the working directory, with PROV_* variables cleared."""
    folder = tmp_path / "project"
    folder.mkdir()
    for name in list(os.environ):
        if name.startswith("PROV_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(folder)
    yield folder


@pytest.fixture
def prov() -> Callable[..., Result]:
    """Run the prov CLI in-process, like a user would from the shell."""
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None) -> Result:
        return runner.invoke(cli, list(args), input=input, catch_exceptions=False)

    return invoke


# -- network collectors: the local server with the Marin fixtures, and collecting one source --

HTTP_CASES = ROOT / "tests" / "fixtures" / "http_cases"


@pytest.fixture
def marin_fixtures() -> Fixtures:
    """The Marin sources at the first milestone (examples/marin/data, the demo's own data), plus
    routes that misbehave as real servers do (tests/fixtures/http_cases)."""
    from tests import marin_fixture

    fixtures: Fixtures = marin_fixture.fixtures.server_fixtures(1)
    fixtures.routes += Fixtures.from_dir(HTTP_CASES).routes
    return fixtures


@pytest.fixture
def marin_server(marin_fixtures: Fixtures) -> Iterator[LocalServer]:
    """A real HTTP server on 127.0.0.1 serving the Marin fixtures (W&B, HF, object store)."""
    with LocalServer(marin_fixtures) as server:
        yield server


@pytest.fixture
def marin_tls_server(marin_fixtures: Fixtures) -> Iterator[LocalServer]:
    """The same over https, with a certificate made for this test (``ca_file`` trusts it)."""
    with LocalServer(marin_fixtures, tls=True) as server:
        yield server


@pytest.fixture
def collect(tmp_path: Path) -> Callable[..., Capture]:
    """Validate one source table like prov.toml would, then run its collector once."""

    def run(
        table: dict[str, Any],
        env: dict[str, str] | None = None,
        http_client: Any = None,
        **context: Any,
    ) -> Capture:
        spec = SourceSpec(str(table["name"]), str(table["kind"]), table, tmp_path / "prov.toml", 1)
        cls, options = validate_source(spec)
        settings: dict[str, Any] = {"timeout": 5.0, "retries": 2, "backoff": 0.01}
        settings.update(context)
        store = Store(tmp_path / ".prov").init()
        ctx = CollectContext(store=store, base_dir=tmp_path, env=env or {}, **settings)
        collector = cls(options, ctx)
        if http_client is not None:
            collector.http_client = http_client  # type: ignore[attr-defined]
        return collector.collect()

    return run


def rewrite_object(root: Path, hexdigest: str, change: Callable[[bytes], bytes]) -> Path:
    """Replace one object's bytes in place, wherever the store keeps it (a loose file, or its
    range of a pack, where the length must stay); returns the file changed. For tamper tests."""
    from provenance.digest import Digest

    location = Store(root).locate(Digest("blake3", hexdigest))
    location.path.chmod(0o644)
    if not location.packed:
        location.path.write_bytes(change(location.path.read_bytes()))
        return location.path
    with location.path.open("r+b") as handle:
        handle.seek(location.offset)
        new = change(handle.read(location.length))
        assert len(new) == location.length, "a packed object keeps its length"
        handle.seek(location.offset)
        handle.write(new)
    return location.path


def unpack_store(root: Path) -> None:
    """Turn every packed object into a loose file and remove the packs: the layout of a store
    written before packs existed (still read and extended)."""
    store = Store(root)
    for index in store.indexes(refresh=True):
        for raw, _, _ in index.entries():
            hexdigest = raw.hex()
            path = store.objects_dir / hexdigest[:2] / hexdigest[2:]
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(index.read(index.find(raw) or 0))
                path.chmod(0o444)
        index.path.unlink()
        index.pack_path.unlink()
    store.forget_indexes()
