"""The git collector: a repository at a ref, every chosen file's path, mode, size, oid and blake3.

It drives the real ``git`` binary, never a re-implementation of git's formats. A URL is fetched
shallowly into a temporary bare repository (only the one commit is needed); a local path is read
in place, and its working tree is checked for uncommitted changes. A captured repository is
evidence, never code: no hook, fsmonitor, filter, credential helper or transport its config
names is run (``_internal/proc``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import subprocess
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from pydantic import Field

from provenance._internal import cancel, progress, redact
from provenance._internal.oidcache import OidCache
from provenance._internal.proc import git, git_env, no_filters, safe_args
from provenance.capture.base import Collector, Recorder, SourceOptions
from provenance.errors import CollectorError, GitError, SourceGoneError
from provenance.model import Capture, CaptureError
from provenance.store.manifest import BLOB_NAME, MEDIA_TYPE, ManifestInfo, ManifestWriter
from provenance.store.objects import FILE_CHUNK, SMALL_OBJECT, Batch, Store, Written

READERS = 2
READERS_FROM = 20_000
"""Blobs from which a capture reads through ``READERS`` cat-file processes at once."""
MANIFEST_ABOVE = 1000
"""A capture of more files than this keeps their list in a manifest blob (constant-size
statement); smaller ones list every file in the statement, as they always did."""
_PLAIN = re.compile(r'^[^"\\\x00-\x1f]*$')  # a path JSON writes as it is
_SHA = re.compile(r"^[0-9a-f]{7,40}$")
_URL = re.compile(r"^([a-z][a-z0-9+.-]*://|[^/:]+@[^/:]+:)", re.IGNORECASE)


class GitOptions(SourceOptions):
    """A git repository at a ref: the commit, its tree and every chosen file's blake3."""

    repo: str = Field(min_length=1, description="a local path (relative to prov.toml) or a URL")
    # No leading '-': a ref must never be read by git as an option.
    ref: str = Field(
        default="HEAD", pattern=r"^[^-\s]\S*$", description="branch, tag or commit sha"
    )
    paths: list[str] = Field(
        default_factory=list,
        description="files or folders to capture (default: all); one that names nothing fails",
    )


class GitCollector(Collector):
    kind = "git"
    options_model = GitOptions
    options: GitOptions

    def collect(self) -> Capture:
        options = self.options
        request: dict[str, Any] = {
            "repo": redact.url(options.repo),
            "ref": options.ref,
            "paths": list(options.paths),
        }
        recorder = Recorder(self, request)
        if _URL.match(options.repo):
            with tempfile.TemporaryDirectory(prefix="prov-git-") as temp:
                data = self._collect_remote(Path(temp), recorder)
        else:
            data = self._collect_local(recorder)
        missing = data["missing_paths"]
        if missing:
            # A `paths` entry that names nothing is not what was asked for: a typo, or a file
            # gone at this commit. Either way the capture is incomplete, and says which.
            error = CaptureError(
                type="missing-paths",
                message=f"not in commit {data['commit'][:12]}: {', '.join(missing)}",
                detail={"paths": list(missing)},
            )
            return recorder.finish(data, error=error)
        return recorder.finish(data)

    @classmethod
    def warnings(cls, capture: Capture) -> list[str]:
        if capture.data.get("dirty") is not True:
            return []
        commit = str(capture.data.get("commit", ""))[:12]
        return [
            f"source {capture.source!r}: the working tree has uncommitted changes; the "
            f"snapshot holds commit {commit}, not them (commit them and snapshot again)"
        ]

    # -- where the commit comes from ---------------------------------------------------------

    def _collect_local(self, recorder: Recorder) -> dict[str, Any]:
        path = (self.context.base_dir / self.options.repo).resolve()
        if not path.is_dir():
            raise CollectorError(
                f"source {self.options.name!r}: repository {self.options.repo!r} does not exist "
                f"(looked in {path})",
                hint="set `repo` to a git checkout (relative to prov.toml) or a URL",
            )
        try:
            git(["rev-parse", "--git-dir"], cwd=path)
        except GitError as e:
            raise CollectorError(
                f"source {self.options.name!r}: {path} is not a git repository",
                cause=e.stderr.strip(),
                hint="point `repo` at the top of a git checkout",
            ) from e
        commit = self._resolve(path, self.options.ref)
        ref_kind = _local_ref_kind(path, self.options.ref, commit)
        remote = _optional(["config", "--get", "remote.origin.url"], path)
        head = _optional(["rev-parse", "HEAD"], path)
        # Uncommitted changes matter only when the commit captured is the one checked out;
        # for any other commit the question does not apply (null), whatever the tree holds.
        dirty: bool | None = None
        if head == commit:
            # The one command that may read file contents through the repository's filters.
            status = git(
                ["status", "--porcelain", "--untracked-files=no", "--ignore-submodules=all"],
                cwd=path,
                extra_config=no_filters(path),
            )
            dirty = bool(status.strip())
        data: dict[str, Any] = {
            "remote_url": redact.url(remote) if remote else None,
            "ref_kind": ref_kind,
            "commit": commit,
            "tree": git(["rev-parse", f"{commit}^{{tree}}"], cwd=path).decode().strip(),
            "dirty": dirty,
        }
        data.update(self._files(path, commit, recorder))
        return data

    def _collect_remote(self, temp: Path, recorder: Recorder) -> dict[str, Any]:
        url, ref = self.options.repo, self.options.ref
        git(["init", "--quiet", "--bare", str(temp)])
        listing = _ls_remote(url, self.options.name, temp)
        target, ref_kind = _remote_target(listing, ref)
        try:
            git(
                ["fetch", "--quiet", "--depth=1", "--no-recurse-submodules", url, target],
                cwd=temp,
            )
        except GitError as e:
            raise SourceGoneError(
                f"source {self.options.name!r}: cannot fetch {ref!r} from {redact.url(url)}",
                cause=e.stderr.strip(),
                hint="check that the ref exists; short shas cannot be fetched, use the full sha",
            ) from e
        commit = self._resolve(temp, "FETCH_HEAD")
        data: dict[str, Any] = {
            "remote_url": redact.url(url),
            "ref_kind": ref_kind,
            "commit": commit,
            "tree": git(["rev-parse", f"{commit}^{{tree}}"], cwd=temp).decode().strip(),
            "dirty": None,
        }
        data.update(self._files(temp, commit, recorder))
        return data

    def _resolve(self, repo: Path, ref: str) -> str:
        try:
            out = git(
                ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
                cwd=repo,
            )
        except GitError as e:
            raise SourceGoneError(
                f"source {self.options.name!r}: ref {ref!r} does not name a commit "
                f"in {self.options.repo}",
                cause=e.stderr.strip() or None,
                hint="use a branch, a tag or a commit sha that exists (`git log --oneline`)",
            ) from e
        return out.decode().strip()

    # -- the files of the commit -------------------------------------------------------------

    def _files(self, repo: Path, commit: str, recorder: Recorder) -> dict[str, Any]:
        paths = [p.rstrip("/") or "." for p in self.options.paths]
        listing = git(["ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", *paths], cwd=repo)
        files: list[dict[str, Any]] = []
        for record in listing.split(b"\0"):
            if not record:
                continue
            meta, _, name = record.partition(b"\t")
            mode, kind, oid, size_text = meta.decode().split(maxsplit=3)
            entry: dict[str, Any] = {
                "path": name.decode("utf-8", "surrogateescape"),
                "mode": mode,
                "type": kind,
                "oid": oid,
            }
            if kind == "blob":
                entry["size"] = int(size_text)
            files.append(entry)
        missing = [p for p in paths if p != "." and not any(_under(f["path"], p) for f in files)]
        blobs = [f for f in files if f["type"] == "blob"]
        hashed = _hash_blobs(repo, recorder.store, {f["oid"]: f["size"] for f in blobs})
        if len(files) > MANIFEST_ABOVE:
            info = _write_manifest(recorder.store, files, hashed)
            recorder.add_blob(BLOB_NAME, info.blob, info.blob_size, MEDIA_TYPE)
            return {"manifest": info.to_json(), "missing_paths": missing}
        for entry in blobs:
            hexdigest, size = hashed[entry["oid"]]
            recorder.add_blob(entry["path"], f"blake3:{hexdigest}", size)
        return {"files": files, "missing_paths": missing}


def _write_manifest(
    store: Store, files: list[dict[str, Any]], hashed: dict[str, tuple[str, int]]
) -> ManifestInfo:
    """The files as a manifest blob, one entry per file in path order (``store.manifest``):
    the statement then carries its Merkle root and counts, not the list."""
    writer = ManifestWriter(store, max_prefixes=0)
    try:
        for record in sorted(files, key=lambda f: str(f["path"])):
            entry = {"key": record["path"], "mode": record["mode"], "type": record["type"]}
            entry["oid"] = record["oid"]
            if record["type"] == "blob":
                entry["blake3"], entry["size"] = hashed[record["oid"]]
            writer.add(entry, _line(entry))
    except BaseException:
        writer.abort()
        raise
    return writer.commit()


def _line(entry: dict[str, Any]) -> bytes | None:
    """An entry's canonical bytes the fast way: for objects of ASCII keys holding only strings
    and integers, RFC 8785 and ``json.dumps`` (sorted, compact, unescaped) write the same bytes.
    None when a path holds what UTF-8 cannot encode (canonical.dumps then decides)."""
    path = entry["key"]
    try:
        if _PLAIN.match(path) and "blake3" in entry and len(entry) == 6:  # the common case
            return (
                f'{{"blake3":"{entry["blake3"]}","key":"{path}","mode":"{entry["mode"]}",'
                f'"oid":"{entry["oid"]}","size":{entry["size"]},"type":"{entry["type"]}"}}'
            ).encode()
        return json.dumps(entry, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
    except UnicodeEncodeError:
        return None


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


def _hash_blobs(repo: Path, store: Store, sizes: dict[str, int]) -> dict[str, tuple[str, int]]:
    """blake3 hex and size of every blob, each stored; blobs stored before are not read again.

    The oid cache (``_internal/oidcache``) answers for blobs whose blake3 object is still in the
    store; the rest stream through one ``git cat-file --batch`` into one store batch.
    """
    cache = OidCache(store.cache_dir).load()
    known: dict[str, tuple[str, int]] = {}
    wanted: list[str] = []
    for oid, size in sizes.items():
        hit = cache.get(oid)
        if hit is not None and hit[1] == size and store.has_hex(hit[0]):
            known[oid] = hit
        else:
            wanted.append(oid)
    if wanted:
        for oid, (hexdigest, size) in _read_blobs(repo, store, wanted).items():
            known[oid] = (hexdigest, size)
            cache.add(oid, hexdigest, size)
        cache.save()  # after the batch closed: entries only ever name durable objects
    return known


def _read_blobs(repo: Path, store: Store, oids: list[str]) -> dict[str, tuple[str, int]]:
    """Stream blobs into one store batch: through one ``git cat-file --batch``, or for many
    blobs on a machine of several cores through two, each reading half (git inflating objects
    is most of the time, and it runs on one core per process)."""
    readers = READERS if len(oids) >= READERS_FROM and (os.cpu_count() or 1) > 1 else 1
    with store.batch() as batch:
        if readers == 1:
            return _stream_blobs(repo, store, batch, oids)
        step = -(-len(oids) // readers)
        parts = [oids[start : start + step] for start in range(0, len(oids), step)]
        parent = progress.current()

        def read(part: list[str]) -> dict[str, tuple[str, int]]:
            with progress.within(parent):
                return _stream_blobs(repo, store, batch, part)

        results: dict[str, tuple[str, int]] = {}
        with ThreadPoolExecutor(len(parts), thread_name_prefix="prov-git") as pool:
            for found in [pool.submit(read, part) for part in parts]:
                results.update(found.result())
        return results


def _stream_blobs(
    repo: Path, store: Store, batch: Batch, oids: list[str]
) -> dict[str, tuple[str, int]]:
    """Stream blobs through one ``git cat-file --batch`` into ``batch``."""
    process = subprocess.Popen(
        safe_args(["cat-file", "--batch", "--buffer"]),  # no --filters: the bytes as stored
        cwd=repo,
        env=git_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=1 << 20,  # small blobs by the thousand: one read(2) per MiB, not per 8 KiB
    )
    assert process.stdin and process.stdout
    with contextlib.suppress(OSError, AttributeError):  # Linux: let git run ahead of us by 1 MiB
        fcntl.fcntl(process.stdout.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)

    def feed() -> None:
        assert process.stdin
        try:
            process.stdin.write("".join(f"{oid}\n" for oid in oids).encode())
            process.stdin.close()
        except BrokenPipeError:
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    results: dict[str, tuple[str, int]] = {}
    out = process.stdout
    try:
        with cancel.on_cancel(process.kill):
            for oid in oids:
                header = out.readline().split()
                if len(header) != 3 or header[0].decode() != oid or header[1] != b"blob":
                    raise GitError(
                        f"git cat-file returned an unexpected record for {oid}: {header!r}"
                    )
                size = int(header[2])
                if size <= SMALL_OBJECT:
                    data = out.read(size)
                    if len(data) != size:
                        raise GitError(f"git cat-file ended in the middle of {oid}")
                    written = batch.put_bytes(data)
                else:
                    written = _stream_blob(out, store, oid, size)
                out.read(1)  # the newline after each object
                results[oid] = (written.digest.hex, written.size)
                progress.advance(size)
    except BaseException:
        # We stopped reading (a full disk, a kill): git blocks writing to us and the feeder
        # blocks writing to git. End git so that both return, else join() waits forever.
        process.kill()
        raise
    finally:
        process.stdout.close()
        feeder.join()
        stderr = ""
        if process.stderr:
            stderr = process.stderr.read().decode("utf-8", "replace")
            process.stderr.close()
        status = process.wait()
    # Only when the loop ended normally: an error raised inside it (a full disk) is the cause.
    if status != 0 and len(results) != len(oids):
        raise GitError("git cat-file failed", stderr=stderr)
    return results


def _stream_blob(out: IO[bytes], store: Store, oid: str, size: int) -> Written:
    """A large blob, in constant memory."""
    remaining = size
    with store.writer(threads=True) as writer:
        while remaining:
            chunk = out.read(min(remaining, FILE_CHUNK))
            if not chunk:
                raise GitError(f"git cat-file ended in the middle of {oid}")
            writer.write(chunk)
            remaining -= len(chunk)
        return writer.commit()


def _optional(args: list[str], cwd: Path) -> str | None:
    try:
        return git(args, cwd=cwd).decode().strip() or None
    except GitError:
        return None


def _local_ref_kind(repo: Path, ref: str, commit: str) -> str:
    if ref == "HEAD":
        return "symbolic"
    full = _optional(["rev-parse", "--symbolic-full-name", ref], repo)
    if full and full.startswith("refs/heads/"):
        return "branch"
    if full and full.startswith("refs/remotes/"):
        return "branch"
    if full and full.startswith("refs/tags/"):
        return "tag"
    if _SHA.match(ref) and commit.startswith(ref):
        return "sha"
    return "other"


def _ls_remote(url: str, name: str, cwd: Path) -> dict[str, str]:
    # In the fresh bare repository: the folder prov runs in may be a repository whose config
    # rewrites URLs (`url.<x>.insteadOf`) or enables `ext::` transports.
    try:
        out = git(["ls-remote", url], cwd=cwd)
    except GitError as e:
        raise CollectorError(
            f"source {name!r}: cannot reach repository {redact.url(url)}",
            cause=e.stderr.strip(),
            hint="check the URL and the network; private repositories need git credentials",
        ) from e
    refs: dict[str, str] = {}
    for line in out.decode().splitlines():
        sha, _, refname = line.partition("\t")
        refs[refname] = sha
    return refs


def _remote_target(refs: dict[str, str], ref: str) -> tuple[str, str]:
    if ref == "HEAD":
        return "HEAD", "symbolic"
    if f"refs/heads/{ref}" in refs:
        return f"refs/heads/{ref}", "branch"
    if f"refs/tags/{ref}" in refs:
        return f"refs/tags/{ref}", "tag"
    if ref.startswith("refs/") and ref in refs:
        return ref, "branch" if ref.startswith("refs/heads/") else "other"
    if re.fullmatch(r"[0-9a-f]{40}", ref):
        return ref, "sha"
    return ref, "other"
