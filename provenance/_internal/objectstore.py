"""Object-store plumbing for listings: where a prefix is, how to list it in key order, how to
read one object. Shared by the listing collector and the content hashers (which may run on
other machines, so ``StoreSpec`` is a small picklable value that holds no credential).

Key order is UTF-8 byte order, which equals Python's ``str`` order:
- ``s3://``: ListObjectsV2 returns keys in that order, one page of up to 1,000 at a time;
- ``file://``: a directory walk that sorts each directory's names, a sub-directory as
  ``name + "/"``, which yields whole keys in byte order without holding more than one
  directory's names per level;
- ``gs://``, ``hf://``, ``memory://`` and other fsspec backends: the same sorted walk over
  ``fs.ls``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from provenance.errors import MissingDependencyError, UsageError

PROTOCOLS = ("file", "s3", "gs", "hf", "memory")
_EXTRA = {"s3": ("s3fs", "s3"), "gs": ("gcsfs", "gcs")}


@dataclass(frozen=True)
class StoreSpec:
    """A prefix of an object store, and how to reach it (never a credential)."""

    protocol: str
    root: str  # local: an absolute directory; s3: "bucket/prefix/" ("bucket/" at the top)
    anonymous: bool = True
    endpoint_url: str | None = None
    region: str | None = None
    versions: bool = False
    timeout: float = 30.0
    retries: int = 3

    @property
    def bucket_and_prefix(self) -> tuple[str, str]:
        bucket, _, prefix = self.root.partition("/")
        return bucket, prefix

    def filesystem(self) -> Any:
        """An fsspec filesystem for this prefix; credentials come from the ecosystem's usual
        places (environment, config files, instance metadata) unless ``anonymous``."""
        if self.protocol == "s3":
            s3fs = _require("s3fs", "s3")
            client_kwargs: dict[str, Any] = {}
            if self.endpoint_url:
                client_kwargs["endpoint_url"] = self.endpoint_url
            if self.region:
                client_kwargs["region_name"] = self.region
            fs = s3fs.S3FileSystem(
                anon=self.anonymous,
                client_kwargs=client_kwargs,
                config_kwargs={
                    "connect_timeout": self.timeout,
                    "read_timeout": self.timeout,
                    "retries": {"max_attempts": max(1, self.retries)},
                },
                version_aware=self.versions,
                skip_instance_cache=True,
            )
            fs.retries = max(1, self.retries)  # s3fs's own retry loop around each call
            return fs
        if self.protocol == "gs":
            gcsfs = _require("gcsfs", "gcs")
            options: dict[str, Any] = {"token": "anon" if self.anonymous else None}
            if self.endpoint_url:
                options["endpoint_url"] = self.endpoint_url
            return gcsfs.GCSFileSystem(**options)
        if self.protocol == "hf":
            from huggingface_hub import HfFileSystem

            hf_options: dict[str, Any] = {"skip_instance_cache": True}
            if self.anonymous:
                hf_options["token"] = False
            if self.endpoint_url:
                hf_options["endpoint"] = self.endpoint_url
            return HfFileSystem(**hf_options)
        import fsspec

        return fsspec.filesystem(self.protocol)

    def open(self, key: str, version_id: str | None = None, *, fs: Any = None) -> Any:
        """A binary stream of one object's bytes (the listed version when there is one)."""
        if self.protocol == "file":
            return open(os.path.join(self.root, key), "rb")
        fs = fs if fs is not None else self.filesystem()
        path = self.root.rstrip("/") + "/" + key if self.root else key
        if version_id and self.protocol == "s3":
            return fs.open(path, "rb", version_id=version_id, block_size=8 << 20)
        return fs.open(path, "rb")


def _require(module: str, extra: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingDependencyError(
            f"listing this store needs the {module} package",
            hint=f"pip install 'prov[{extra}]'",
        ) from e


def parse_location(url: str, base_dir: Path) -> StoreSpec:
    """``s3://bucket/prefix``, ``gs://...``, ``hf://datasets/org/repo@rev/dir``, ``memory://``,
    ``file:///abs``, or a plain path (relative to prov.toml's folder)."""
    protocol, sep, rest = url.partition("://")
    if not sep:
        protocol, rest = "file", url
    protocol = protocol.lower()
    if protocol not in PROTOCOLS:
        raise UsageError(
            f"unsupported object-store URL {url!r}",
            hint="use s3://, gs://, hf://, file:// or a local path",
        )
    if protocol == "file":
        path = Path(rest)
        root = (path if path.is_absolute() else base_dir / path).resolve()
        return StoreSpec("file", str(root))
    rest = rest.strip("/")
    if protocol in ("s3", "gs"):
        bucket, _, prefix = rest.partition("/")
        if not bucket:
            raise UsageError(f"{url!r} names no bucket", hint=f"{protocol}://BUCKET/PREFIX")
        # A prefix is a folder: "a/b" must not also match "a/bc".
        return StoreSpec(protocol, f"{bucket}/{prefix}/" if prefix else f"{bucket}/")
    return StoreSpec(protocol, rest)


def iso_time(value: Any) -> str | None:
    """A provider's timestamp (datetime, epoch seconds, or ISO text) as RFC 3339 UTC."""
    if value is None:
        return None
    if isinstance(value, (int, float)):
        value = datetime.fromtimestamp(value, UTC)
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return str(value)
    if isinstance(value, datetime):
        moment: datetime = value if value.tzinfo else value.replace(tzinfo=UTC)
        moment = moment.astimezone(UTC)
        return moment.strftime(
            "%Y-%m-%dT%H:%M:%S.%fZ" if moment.microsecond else "%Y-%m-%dT%H:%M:%SZ"
        )
    return str(value)


def _drop_none(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if v is not None and v != {} and v != []}


# -- listing in key order ---------------------------------------------------------------------


def iter_local(root: str) -> Iterator[dict[str, Any]]:
    """Regular files under ``root`` in key order; symlinks and special files are skipped."""
    top = Path(root)
    if not top.is_dir():
        raise FileNotFoundError(f"no directory at {root}")
    stack: list[tuple[str, Iterator[str]]] = [("", iter(_sorted_names(root)))]
    while stack:
        prefix, names = stack[-1]
        name = next(names, None)
        if name is None:
            stack.pop()
            continue
        key = prefix + name
        if name.endswith("/"):
            stack.append((key, iter(_sorted_names(os.path.join(root, key)))))
            continue
        info = os.lstat(os.path.join(root, key))
        if not stat.S_ISREG(info.st_mode):
            continue
        yield {
            "key": key,
            "size": info.st_size,
            "last_modified": _ns_time(info.st_mtime_ns),
        }


def _sorted_names(directory: str) -> list[str]:
    # Only names are kept (not DirEntry objects): a directory of a million files costs ~70 MB.
    names = []
    with os.scandir(directory) as entries:
        for entry in entries:
            names.append(entry.name + "/" if entry.is_dir(follow_symlinks=False) else entry.name)
    names.sort()
    return names


def _ns_time(ns: int) -> str:
    seconds, rest = divmod(ns, 1_000_000_000)
    stamp = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{rest:09d}Z" if rest else f"{stamp}Z"


def iter_s3(fs: Any, spec: StoreSpec) -> Iterator[dict[str, Any]]:
    """ListObjectsV2 (or ListObjectVersions, latest versions only) page by page."""
    from fsspec.asyn import sync

    bucket, prefix = spec.bucket_and_prefix
    method = "list_object_versions" if spec.versions else "list_objects_v2"
    contents = "Versions" if spec.versions else "Contents"
    kwargs: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix}
    while True:
        page = sync(fs.loop, fs._call_s3, method, **kwargs)
        for item in page.get(contents, []):
            if spec.versions and not item.get("IsLatest"):
                continue
            yield s3_entry(item, prefix)
        if not page.get("IsTruncated"):
            return
        if spec.versions:
            kwargs["KeyMarker"] = page.get("NextKeyMarker", "")
            kwargs["VersionIdMarker"] = page.get("NextVersionIdMarker", "")
        else:
            kwargs["ContinuationToken"] = page["NextContinuationToken"]


def s3_entry(item: dict[str, Any], prefix: str) -> dict[str, Any]:
    version = item.get("VersionId")
    return _drop_none(
        {
            "key": item["Key"][len(prefix) :],
            "size": int(item.get("Size", 0)),
            "etag": item.get("ETag"),
            "last_modified": iso_time(item.get("LastModified")),
            "version_id": version if version and version != "null" else None,
            "storage_class": item.get("StorageClass"),
            # ListObjectsV2 names the checksum algorithms but not their values.
            "checksum_algorithm": sorted(item.get("ChecksumAlgorithm") or []),
        }
    )


def iter_walk(fs: Any, spec: StoreSpec) -> Iterator[dict[str, Any]]:
    """A sorted directory walk over any fsspec filesystem (``fs.ls`` per directory)."""
    root = spec.root.rstrip("/")

    def children(path: str) -> Iterator[tuple[str, dict[str, Any]]]:
        items = []
        for info in fs.ls(path, detail=True):
            name = str(info["name"]).rstrip("/").rsplit("/", 1)[-1]
            if info.get("type") == "directory":
                name += "/"
            items.append((name, info))
        items.sort(key=lambda item: item[0])
        return iter(items)

    if not fs.isdir(root):
        raise FileNotFoundError(f"no folder at {spec.protocol}://{root}")
    stack: list[tuple[str, Iterator[tuple[str, dict[str, Any]]]]] = [("", children(root))]
    while stack:
        prefix, items = stack[-1]
        item = next(items, None)
        if item is None:
            stack.pop()
            continue
        name, info = item
        key = prefix + name
        if name.endswith("/"):
            stack.append((key, children(f"{root}/{key}".rstrip("/") if root else key)))
            continue
        yield generic_entry(info, key)


def generic_entry(info: dict[str, Any], key: str) -> dict[str, Any]:
    """Map an fsspec info dict (gcsfs, HfFileSystem, others) to a manifest entry."""
    checksums: dict[str, Any] = {}
    if info.get("md5Hash"):
        checksums["md5"] = info["md5Hash"]
    if info.get("crc32c"):
        checksums["crc32c"] = info["crc32c"]
    lfs = info.get("lfs")
    if isinstance(lfs, dict) and lfs.get("sha256"):
        checksums["sha256"] = lfs["sha256"]
    generation = info.get("generation")
    return _drop_none(
        {
            "key": key,
            "size": int(info.get("size") or 0),
            "etag": info.get("etag") or info.get("ETag"),
            "version_id": str(generation) if generation else None,
            "git_oid": info.get("blob_id"),
            "checksums": checksums,
            "last_modified": iso_time(
                info.get("updated") or info.get("LastModified") or info.get("mtime")
            ),
        }
    )
