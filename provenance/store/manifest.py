"""Manifests of object stores: sorted canonical entries, a Merkle root, proofs and diffs.

A manifest is one blob in the store: one canonical JSON object (RFC 8785) per line, one line per
object, sorted by key in UTF-8 byte order (which is Python's ``str`` order), each key once. The
lines are the leaves of a Merkle tree built as in RFC 9162 section 2.1 (Certificate Transparency
v2) with blake3 in place of SHA-256::

    leaf(line)  = blake3(0x00 || line)          the line without its newline
    node(l, r)  = blake3(0x01 || l || r)
    MTH({})     = blake3("")

so one object's presence is proven with ``log2(n)`` hashes (``prove`` / ``verify_proof``), and
the root commits to the whole listing. Everything streams: a manifest of millions of objects is
written, read, proven and diffed in memory that grows with ``log(n)``, never with ``n``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import blake3

from provenance._internal import canonical
from provenance.digest import CHUNK, Digest
from provenance.errors import IntegrityError, UsageError, VerificationError
from provenance.model import Capture
from provenance.store.objects import BlobWriter, Store

FORMAT = "prov-manifest/v1"
TREE = "rfc9162-blake3"
MEDIA_TYPE = "application/jsonl"
BLOB_NAME = "manifest.jsonl"

CONTENT_FIELDS = ("size", "etag", "version_id", "checksums", "git_oid", "blake3")
"""Fields that change when an object's bytes change. ``last_modified`` alone is not one: a
re-upload of the same bytes moves it, so the diff reports such objects as ``touched``."""

_FLUSH = 1 << 20


class OutOfOrder(ValueError):
    """An entry's key is not strictly greater than the previous one."""


def leaf_hash(line: bytes) -> bytes:
    return blake3.blake3(b"\x00" + line).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return blake3.blake3(b"\x01" + left + right).digest()


EMPTY_ROOT = blake3.blake3(b"").digest()


class MerkleBuilder:
    """Streaming RFC 9162 tree hash: a stack of perfect subtrees, O(log n) memory."""

    def __init__(self) -> None:
        self._stack: list[tuple[int, bytes]] = []
        self.count = 0

    def add(self, leaf: bytes) -> None:
        size, digest = 1, leaf
        while self._stack and self._stack[-1][0] == size:
            _, left = self._stack.pop()
            digest = node_hash(left, digest)
            size *= 2
        self._stack.append((size, digest))
        self.count += 1

    def root(self) -> bytes:
        if not self._stack:
            return EMPTY_ROOT
        digest = self._stack[-1][1]
        for _, left in reversed(self._stack[:-1]):
            digest = node_hash(left, digest)
        return digest


def entry_line(entry: Mapping[str, Any]) -> bytes:
    """The canonical bytes of one entry (no newline): what is stored, hashed and proven."""
    return canonical.dumps(dict(entry))


def top_prefix(key: str, depth: int = 1) -> str:
    """The first ``depth`` path components of a key ("" for an object at the top)."""
    parts = key.split("/")
    return "/".join(parts[:depth]) if len(parts) > depth else ""


@dataclass(frozen=True)
class ManifestInfo:
    """Where a manifest is and what it sums to; ``to_json`` is what a capture's data holds."""

    root: str
    count: int
    bytes: int
    blob: str
    blob_size: int

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "tree": TREE,
            "root": self.root,
            "count": self.count,
            "bytes": self.bytes,
            "blob": self.blob,
        }

    @classmethod
    def from_capture(cls, capture: Capture, *, content: bool = False) -> ManifestInfo:
        """The listing manifest of a capture, or with ``content`` its content manifest."""
        data = capture.data.get("manifest")
        if content:
            section = capture.data.get("content")
            data = section.get("manifest") if isinstance(section, dict) else None
        if capture.status != "ok" or not isinstance(data, dict):
            what = "content manifest" if content else "manifest"
            raise UsageError(
                f"capture {capture.source!r} holds no {what} (status {capture.status})",
                hint="only a successful listing capture has a manifest",
            )
        blob = next((b for b in capture.blobs if b.digest == data.get("blob")), None)
        root, count, size = data.get("root"), data.get("count"), data.get("bytes")
        if blob is None or not isinstance(root, str):
            raise UsageError(f"capture {capture.source!r}: its manifest blob is not listed")
        if not isinstance(count, int) or not isinstance(size, int):
            raise UsageError(f"capture {capture.source!r}: its manifest counts are malformed")
        return cls(root, count, size, blob.digest, blob.size)


def has_content(capture: Capture) -> bool:
    section = capture.data.get("content")
    return isinstance(section, dict) and isinstance(section.get("manifest"), dict)


@dataclass
class PrefixTotals:
    prefix: str
    count: int = 0
    bytes: int = 0


class ManifestWriter:
    """Streams sorted entries into a store blob while building the Merkle tree.

    ``prefixes`` keeps the object count and bytes of each top-level folder; entries arrive in
    key order, so each folder's entries are contiguous and at most ``max_prefixes`` are kept.
    """

    def __init__(self, store: Store, *, max_prefixes: int = 10_000) -> None:
        self._writer: BlobWriter = store.writer()
        self._buffer = bytearray()
        self._tree = MerkleBuilder()
        self._last: str | None = None
        self.count = 0
        self.bytes = 0
        self._prefixes: list[PrefixTotals] = []
        self._top = PrefixTotals("")
        self.prefixes_truncated = False
        self._max_prefixes = max_prefixes

    def add(self, entry: Mapping[str, Any], line: bytes | None = None) -> None:
        """Add one entry; ``line``, when given, is its canonical form already (``entry_line``)."""
        key = entry["key"]
        if self._last is not None and key <= self._last:
            raise OutOfOrder(f"key {key!r} arrived after {self._last!r}")
        if line is None:
            line = entry_line(entry)
        self._tree.add(leaf_hash(line))
        self._buffer += line
        self._buffer += b"\n"
        if len(self._buffer) >= _FLUSH:
            self._writer.write(bytes(self._buffer))
            self._buffer.clear()
        self._last = key
        size = int(entry.get("size", 0))
        self.count += 1
        self.bytes += size
        if not self._max_prefixes:  # no per-folder totals wanted (a git capture's files)
            return
        prefix = top_prefix(key)
        if not prefix:  # objects at the top interleave with folders: one running total
            self._top.count += 1
            self._top.bytes += size
        elif self._prefixes and self._prefixes[-1].prefix == prefix:
            self._prefixes[-1].count += 1
            self._prefixes[-1].bytes += size
        elif len(self._prefixes) < self._max_prefixes:
            self._prefixes.append(PrefixTotals(prefix, 1, size))
        else:
            self.prefixes_truncated = True

    @property
    def prefixes(self) -> list[PrefixTotals]:
        """Per top-level folder, in key order; objects at the top under ``""`` first."""
        return ([self._top] if self._top.count else []) + self._prefixes

    def commit(self) -> ManifestInfo:
        if self._buffer:
            self._writer.write(bytes(self._buffer))
            self._buffer.clear()
        written = self._writer.commit()
        return ManifestInfo(
            root=self._tree.root().hex(),
            count=self.count,
            bytes=self.bytes,
            blob=str(written.digest),
            blob_size=written.size,
        )

    def abort(self) -> None:
        self._writer.abort()


def write_manifest(store: Store, entries: Iterable[Mapping[str, Any]]) -> ManifestInfo:
    writer = ManifestWriter(store)
    try:
        for entry in entries:
            writer.add(entry)
    except BaseException:
        writer.abort()
        raise
    return writer.commit()


def iter_lines(store: Store, blob: str) -> Iterator[bytes]:
    """The manifest's lines (without newlines), checking the blob's blake3 when it ends.

    A corrupt blob raises IntegrityError after its last line: callers that act on entries before
    the end (a diff, a proof) surface the error instead of returning a result.
    """
    digest = Digest.parse(blob)
    hasher = blake3.blake3()
    rest = b""
    with store.open(digest) as handle:
        while chunk := handle.read(CHUNK):
            hasher.update(chunk)
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            yield from lines
    if rest:
        yield rest
    if hasher.hexdigest() != digest.hex:
        raise IntegrityError(
            f"manifest blob {blob} is corrupt: its bytes do not hash to its address",
            hint="run `prov fsck`, or take the blob from an evidence pack",
        )


def iter_entries(store: Store, blob: str) -> Iterator[dict[str, Any]]:
    for line in iter_lines(store, blob):
        entry: dict[str, Any] = canonical.loads(line)
        yield entry


# -- proofs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class InclusionProof:
    """That the entry ``line`` is leaf ``index`` of a ``count``-leaf tree (RFC 9162 2.1.3)."""

    key: str
    line: bytes
    index: int
    count: int
    path: tuple[str, ...]

    @property
    def entry(self) -> dict[str, Any]:
        value: dict[str, Any] = canonical.loads(self.line)
        return value

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": "https://prov.dev/manifest-proof/v1",
            "tree": TREE,
            "key": self.key,
            "entry": self.line.decode(),
            "index": self.index,
            "count": self.count,
            "path": list(self.path),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> InclusionProof:
        try:
            return cls(
                key=str(data["key"]),
                line=str(data["entry"]).encode(),
                index=int(data["index"]),
                count=int(data["count"]),
                path=tuple(str(p) for p in data["path"]),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise VerificationError("the proof is malformed", cause=str(e)) from e


def _path_ranges(index: int, low: int, high: int) -> list[tuple[int, int]]:
    """The leaf ranges whose subtree hashes form the audit path (RFC 6962 2.1.1 PATH)."""
    ranges: list[tuple[int, int]] = []
    while high - low > 1:
        split = 1 << ((high - low - 1).bit_length() - 1)  # largest power of two < n
        if index < low + split:
            ranges.append((low + split, high))
            high = low + split
        else:
            ranges.append((low, low + split))
            low = low + split
    ranges.reverse()  # leaf to root
    return ranges


def prove(store: Store, manifest: ManifestInfo, key: str) -> InclusionProof:
    """An inclusion proof for ``key``, computed in two streaming passes over the manifest."""
    found: tuple[int, bytes] | None = None
    for index, line in enumerate(iter_lines(store, manifest.blob)):
        entry_key = canonical.loads(line)["key"]
        if entry_key == key:
            found = (index, line)
        if entry_key >= key:
            break
    if found is None:
        raise KeyError(key)
    index, line = found
    ranges = _path_ranges(index, 0, manifest.count)
    builders = [MerkleBuilder() for _ in ranges]
    by_start = sorted(range(len(ranges)), key=lambda i: ranges[i][0])
    cursor = 0
    for position, leaf_line in enumerate(iter_lines(store, manifest.blob)):
        while cursor < len(by_start) and ranges[by_start[cursor]][1] <= position:
            cursor += 1
        if cursor == len(by_start):
            break
        which = by_start[cursor]
        if ranges[which][0] <= position:
            builders[which].add(leaf_hash(leaf_line))
    path = tuple(builder.root().hex() for builder in builders)
    return InclusionProof(key=key, line=line, index=index, count=manifest.count, path=path)


def verify_proof(proof: InclusionProof, root: str, count: int) -> dict[str, Any]:
    """Check that ``proof`` leads to ``root`` of a ``count``-entry manifest (both from the
    capture); returns the proven entry or raises VerificationError.

    RFC 9162 section 2.1.3.2, step by step. As in RFC 9162 the tree size comes from the
    verifier's trusted record, not from the proof: a leaf inside the largest perfect subtree has
    the same audit path in trees of several sizes.
    """
    if proof.count != count:
        raise VerificationError(
            f"the proof is for a {proof.count}-entry manifest; the capture has {count}"
        )
    entry = proof.entry
    if entry.get("key") != proof.key:
        raise VerificationError(f"the proven entry is for {entry.get('key')!r}, not {proof.key!r}")
    if canonical.dumps(entry) != proof.line:
        raise VerificationError("the proven entry is not in canonical form")
    if not 0 <= proof.index < proof.count:
        raise VerificationError(f"leaf index {proof.index} is outside a {proof.count}-leaf tree")
    try:
        path = [bytes.fromhex(p) for p in proof.path]
        expected = bytes.fromhex(root)
    except ValueError as e:
        raise VerificationError("the proof or root is not hex", cause=str(e)) from e
    fn, sn = proof.index, proof.count - 1
    digest = leaf_hash(proof.line)
    for sibling in path:
        if sn == 0:
            raise VerificationError("the audit path is longer than the tree is deep")
        if fn & 1 or fn == sn:
            digest = node_hash(sibling, digest)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            digest = node_hash(digest, sibling)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise VerificationError("the audit path is shorter than the tree is deep")
    if digest != expected:
        raise VerificationError(
            f"the proof for {proof.key!r} does not lead to the manifest root",
            cause=f"computed {digest.hex()}, expected {root}",
        )
    return entry


# -- diff ------------------------------------------------------------------------------------


@dataclass
class PrefixChange:
    """Counts and bytes of one prefix's changes. Bytes of changed objects are the new sizes."""

    prefix: str
    added: int = 0
    added_bytes: int = 0
    removed: int = 0
    removed_bytes: int = 0
    changed: int = 0
    changed_bytes: int = 0
    changed_delta: int = 0
    touched: int = 0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ManifestDiff:
    """Added, removed, changed and touched objects between two manifests.

    ``totals`` sums every prefix; ``prefixes`` is sorted by prefix (beyond ``max_prefixes``
    distinct prefixes the rest are summed under ``"(other)"``); ``first_*`` keep the first
    ``limit`` of each kind in key order.
    """

    a_root: str
    b_root: str
    a_count: int
    b_count: int
    depth: int
    limit: int
    totals: PrefixChange = field(default_factory=lambda: PrefixChange("*"))
    unchanged: int = 0
    unchanged_bytes: int = 0
    prefixes: dict[str, PrefixChange] = field(default_factory=dict)
    first_added: list[dict[str, Any]] = field(default_factory=list)
    first_removed: list[dict[str, Any]] = field(default_factory=list)
    first_changed: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    first_touched: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return self.a_root == self.b_root

    @property
    def has_changes(self) -> bool:
        t = self.totals
        return bool(t.added or t.removed or t.changed or t.touched)

    def to_json(self) -> dict[str, Any]:
        return {
            "a": {"root": self.a_root, "count": self.a_count},
            "b": {"root": self.b_root, "count": self.b_count},
            "same_root": self.same,
            "depth": self.depth,
            "limit": self.limit,
            "totals": {
                **self.totals.to_json(),
                "unchanged": self.unchanged,
                "unchanged_bytes": self.unchanged_bytes,
            },
            "prefixes": [self.prefixes[p].to_json() for p in sorted(self.prefixes)],
            "first_added": self.first_added,
            "first_removed": self.first_removed,
            "first_changed": [{"before": a, "after": b} for a, b in self.first_changed],
            "first_touched": [{"before": a, "after": b} for a, b in self.first_touched],
        }


def content_differs(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether an object's bytes changed, by the fields both listings recorded."""
    for name in CONTENT_FIELDS:
        if name in before and name in after and before[name] != after[name]:
            return True
    return False


def diff_entries(
    a: Iterable[Mapping[str, Any]],
    b: Iterable[Mapping[str, Any]],
    *,
    a_root: str = "",
    b_root: str = "",
    a_count: int = 0,
    b_count: int = 0,
    limit: int = 20,
    depth: int = 1,
    max_prefixes: int = 1000,
) -> ManifestDiff:
    """Merge-join two key-sorted entry streams."""
    result = ManifestDiff(a_root, b_root, a_count, b_count, depth, limit)

    def bucket(key: str) -> PrefixChange:
        prefix = top_prefix(key, depth)
        found = result.prefixes.get(prefix)
        if found is None:
            if len(result.prefixes) >= max_prefixes:
                prefix = "(other)"
                found = result.prefixes.get(prefix)
            if found is None:
                found = result.prefixes[prefix] = PrefixChange(prefix)
        return found

    def record(
        kind: str, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None
    ) -> None:
        key = str((after or before or {})["key"])
        for totals in (result.totals, bucket(key)):
            if kind == "added" and after is not None:
                totals.added += 1
                totals.added_bytes += int(after.get("size", 0))
            elif kind == "removed" and before is not None:
                totals.removed += 1
                totals.removed_bytes += int(before.get("size", 0))
            elif kind == "changed" and before is not None and after is not None:
                totals.changed += 1
                totals.changed_bytes += int(after.get("size", 0))
                totals.changed_delta += int(after.get("size", 0)) - int(before.get("size", 0))
            elif kind == "touched":
                totals.touched += 1
        if kind == "added" and after is not None and len(result.first_added) < limit:
            result.first_added.append(dict(after))
        elif kind == "removed" and before is not None and len(result.first_removed) < limit:
            result.first_removed.append(dict(before))
        elif kind in ("changed", "touched") and before is not None and after is not None:
            target = result.first_changed if kind == "changed" else result.first_touched
            if len(target) < limit:
                target.append((dict(before), dict(after)))

    sentinel: Mapping[str, Any] = {}
    left, right = iter(a), iter(b)
    x, y = next(left, sentinel), next(right, sentinel)
    while x is not sentinel or y is not sentinel:
        if y is sentinel or (x is not sentinel and x["key"] < y["key"]):
            record("removed", x, None)
            x = next(left, sentinel)
        elif x is sentinel or y["key"] < x["key"]:
            record("added", None, y)
            y = next(right, sentinel)
        else:
            if content_differs(x, y):
                record("changed", x, y)
            elif x != y:
                record("touched", x, y)
            else:
                result.unchanged += 1
                result.unchanged_bytes += int(y.get("size", 0))
            x, y = next(left, sentinel), next(right, sentinel)
    return result


def diff_manifests(
    store: Store,
    a_capture: Capture,
    b_capture: Capture,
    *,
    limit: int = 20,
    depth: int = 1,
) -> ManifestDiff:
    """Compare two listing captures' manifests, streaming both blobs from the store.

    When both captures hashed the objects' bytes, their content manifests are compared (a
    same-size rewrite then shows as changed). Equal roots mean equal manifests: then neither
    blob is read.
    """
    content = has_content(a_capture) and has_content(b_capture)
    a = ManifestInfo.from_capture(a_capture, content=content)
    b = ManifestInfo.from_capture(b_capture, content=content)
    if a.root == b.root and a.count == b.count:
        result = ManifestDiff(a.root, b.root, a.count, b.count, depth, limit)
        result.unchanged, result.unchanged_bytes = b.count, b.bytes
        return result
    return diff_entries(
        iter_entries(store, a.blob),
        iter_entries(store, b.blob),
        a_root=a.root,
        b_root=b.root,
        a_count=a.count,
        b_count=b.count,
        limit=limit,
        depth=depth,
    )


# -- file manifests of git captures -----------------------------------------------------------


def file_manifest(capture: Capture) -> ManifestInfo | None:
    """The file manifest of a git capture over many files; None for one that lists its files."""
    if capture.kind != "git" or not isinstance(capture.data.get("manifest"), dict):
        return None
    return ManifestInfo.from_capture(capture)


def summarise(lines: Iterable[bytes]) -> tuple[str, int, int]:
    """(Merkle root, entry count, total size) of manifest lines: what a capture signs."""
    tree = MerkleBuilder()
    total = 0
    for line in lines:
        tree.add(leaf_hash(line))
        size = json.loads(line).get("size", 0)
        total += size if isinstance(size, int) else 0
    return tree.root().hex(), tree.count, total


def check_manifest(store: Store, info: ManifestInfo) -> None:
    """Recompute a manifest's root, count and bytes from its blob; VerificationError if any
    differs from what the capture says."""
    root, count, total = summarise(iter_lines(store, info.blob))
    if (root, count, total) != (info.root, info.count, info.bytes):
        raise VerificationError(
            f"manifest {info.blob} does not match its capture",
            cause=f"root {root}, {count} entries, {total} bytes; the capture says root "
            f"{info.root}, {info.count} entries, {info.bytes} bytes",
        )


def referenced_blobs(store: Store, capture: Capture) -> Iterator[tuple[str, str, int]]:
    """(path, blake3 hex, size) of every file blob a capture's file manifest names."""
    info = file_manifest(capture)
    if info is None:
        return
    for line in iter_lines(store, info.blob):
        entry = json.loads(line)
        hexdigest = entry.get("blake3")
        if isinstance(hexdigest, str):
            yield str(entry["key"]), hexdigest, int(entry.get("size", 0))


def capture_blobs(store: Store, capture: Capture) -> Iterator[tuple[str, str, int]]:
    """(name, blake3 address, size) of every blob a capture refers to: its own list, then the
    files its manifest names, once that manifest's root and counts are checked against the
    capture (a git capture over many files)."""
    for blob in capture.blobs:
        yield blob.name, blob.digest, blob.size
    info = file_manifest(capture)
    if info is not None:
        check_manifest(store, info)
        for path, hexdigest, size in referenced_blobs(store, capture):
            yield path, f"blake3:{hexdigest}", size
