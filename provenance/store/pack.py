"""Evidence packs: one tar file an auditor can verify and diff with nothing else.

Layout (every member a regular file; names are fixed patterns, so none can escape a folder)::

    manifest.json                  what is in the pack, with each member's sha256 and size
    attestation/<file>             the attestation (``*.intoto.jsonl`` or ``*.sigstore.json``)
    attestation/<file>.tsr         its RFC 3161 token, for a DSSE attestation that has one
    blobs/<blake3 hex>             every blob the snapshot references
    keys/<name>.pub                the public keys a DSSE attestation verifies with
    trust/trusted_root.json        the Sigstore trust root a bundle verifies with
    trust/tsa-chain.pem            the TSA chain its timestamp verifies with

Opening a pack checks everything before anything is used: no member outside the patterns, none
missing from or extra to the manifest, every sha256 as listed, every blob named by its blake3. It
extracts into a fresh temporary folder only, from which a read-only ``Store`` serves the blobs.
The keys and trust root in a pack say what the packer trusted; ``prov verify`` prints them so an
auditor can compare them with what the publisher announced.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import stat
import tarfile
import tempfile
import weakref
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from provenance import __version__
from provenance._internal.progress import advance, task
from provenance.digest import Digest
from provenance.errors import InputError, PackError, StoreError, UsageError
from provenance.model import Snapshot, utc_now
from provenance.store.manifest import referenced_blobs
from provenance.store.objects import (
    SMALL_OBJECT,
    Batch,
    BlobWriter,
    Location,
    SnapshotEntry,
    Store,
)

SCHEMA = "https://prov.dev/evidence-pack/v1"
MANIFEST = "manifest.json"
_MEMBER = re.compile(
    r"^(attestation/[A-Za-z0-9][A-Za-z0-9._+-]{0,250}"
    r"|blobs/[0-9a-f]{64}"
    r"|keys/[A-Za-z0-9][A-Za-z0-9._+-]{0,200}\.pub"
    r"|trust/trusted_root\.json|trust/tsa-chain\.pem)$"
)
MAX_MEMBER = 1 << 34  # 16 GiB: beyond any blob a collector keeps; bounds a hostile header
MAX_MEMBERS = 1 << 20  # members read before a pack is refused: headers cost memory and time
MAX_MANIFEST = 256 << 20  # bytes of manifest.json (a million members listed is ~200 MB)

Role = Literal["attestation", "timestamp", "blob", "key", "trusted-root", "tsa-chain"]


class Member(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    role: Role
    sha256: str
    size: int


class PackPolicy(BaseModel):
    """The trust policy the packer verified with (a record; verifiers may override it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    threshold: int = 1
    identity: str | None = None
    issuer: str | None = None
    repository: str | None = None
    ref: str | None = None


class Manifest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_: str
    created: str
    tool: str
    label: str
    snapshot_sha256: str
    kind: Literal["dsse", "sigstore"]
    attestation: str
    policy: PackPolicy
    members: tuple[Member, ...]

    def to_json(self) -> bytes:
        document = self.model_dump(mode="json")
        document["schema"] = document.pop("schema_")
        import json

        return json.dumps(document, indent=2, sort_keys=True).encode() + b"\n"

    @classmethod
    def from_json(cls, data: bytes) -> Manifest:
        """Parse a manifest; raises ValueError (pydantic's ValidationError is one) if malformed.

        Repeated keys are refused, as in envelopes and bundles: which value would count?
        """
        from provenance._internal import strictjson

        try:
            document = strictjson.loads(data)  # its JSONError is a ValueError
        except strictjson.RepeatedKey as e:
            raise ValueError(f"the manifest repeats the key {e.key!r}") from e
        if not isinstance(document, dict) or document.get("schema") != SCHEMA:
            raise ValueError(f"not a prov evidence pack manifest (schema {SCHEMA})")
        document["schema_"] = document.pop("schema")
        return cls.model_validate(document)

    def named(self, role: Role) -> list[Member]:
        return [m for m in self.members if m.role == role]


# -- writing -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PackInput:
    """What goes into a pack besides the blobs, which come from the store."""

    attestation: Path
    kind: Literal["dsse", "sigstore"]
    snapshot: Snapshot
    policy: PackPolicy
    keys: Sequence[Path] = ()
    trusted_root: Path | None = None
    tsa_chain: Path | None = None
    timestamp: Path | None = None


def write_pack(source: PackInput, store: Store, output: Path) -> Manifest:
    """Write the pack to ``output`` (atomically; refuses to overwrite). Returns its manifest."""
    files: list[tuple[str, Role, Content]] = [
        (f"attestation/{source.attestation.name}", "attestation", source.attestation)
    ]
    if source.timestamp is not None:
        files.append((f"attestation/{source.timestamp.name}", "timestamp", source.timestamp))
    seen: set[str] = set()
    for capture in source.snapshot.captures:
        named = [Digest.parse(blob.digest).hex for blob in capture.blobs]
        # A git capture over many files names its files' blobs in its manifest.
        named += [hexdigest for _, hexdigest, _ in referenced_blobs(store, capture)]
        for hexdigest in named:
            if hexdigest not in seen:
                seen.add(hexdigest)
                location = store.locate(Digest("blake3", hexdigest))
                files.append((f"blobs/{hexdigest}", "blob", location))
    for key in source.keys:
        files.append((f"keys/{_safe_key_name(key)}", "key", key))
    if source.trusted_root is not None:
        files.append(("trust/trusted_root.json", "trusted-root", source.trusted_root))
    if source.tsa_chain is not None:
        files.append(("trust/tsa-chain.pem", "tsa-chain", source.tsa_chain))
    names = [name for name, _, _ in files]
    bad = [n for n in names if not _MEMBER.match(n)]
    if bad or len(set(names)) != len(names):
        raise UsageError(f"cannot pack these file names: {', '.join(bad) or 'duplicates'}")

    members = []
    for name, role, content in files:
        sha256, size = _sha256_of(content)
        members.append(Member(name=name, role=role, sha256=sha256, size=size))
    manifest = Manifest(
        schema_=SCHEMA,
        created=utc_now(),
        tool=f"prov {__version__}",
        label=source.snapshot.label,
        snapshot_sha256=source.snapshot.sha256().hex,
        kind=source.kind,
        attestation=files[0][0],
        policy=source.policy,
        members=tuple(members),
    )
    if output.exists():
        raise UsageError(f"{output} already exists", hint="choose another -o, or remove it")
    output.parent.mkdir(parents=True, exist_ok=True)
    temp = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    try:
        with (
            task(f"packing {output.name}", unit="B", total=sum(m.size for m in members)),
            tarfile.open(temp, "w", format=tarfile.PAX_FORMAT) as tar,
        ):
            _add(tar, MANIFEST, manifest.to_json())
            for (name, _, content), member in zip(files, members, strict=True):
                _add(tar, name, content)
                advance(member.size)
        os.link(temp, output)
    except FileExistsError as e:
        raise UsageError(f"{output} was created meanwhile; nothing was replaced") from e
    except OSError as e:
        raise StoreError(f"cannot write the evidence pack {output}", cause=str(e)) from e
    finally:
        temp.unlink(missing_ok=True)
    return manifest


def _safe_key_name(path: Path) -> str:
    stem = re.sub(r"[^A-Za-z0-9._+-]", "_", path.name.removesuffix(".pub")).lstrip("._-")
    return f"{stem or 'key'}.pub"


Content = bytes | Path | Location
"""A member's bytes: in memory, a file, or an object's range in the store (maybe a pack)."""


def _open(content: Path | Location) -> tuple[BinaryIO, int]:
    """A handle at the start of the bytes, and how many there are."""
    if isinstance(content, Path):
        handle = content.open("rb")
        return handle, os.fstat(handle.fileno()).st_size
    handle = content.path.open("rb")
    handle.seek(content.offset)
    return handle, content.length


def _sha256_of(content: Content) -> tuple[str, int]:
    if isinstance(content, bytes):
        return hashlib.sha256(content).hexdigest(), len(content)
    hasher, size = hashlib.sha256(), 0
    try:
        handle, length = _open(content)
        with handle:
            while size < length and (chunk := handle.read(min(1 << 20, length - size))):
                hasher.update(chunk)
                size += len(chunk)
    except FileNotFoundError as e:
        raise UsageError(f"{content} does not exist: it cannot be packed") from e
    return hasher.hexdigest(), size


def _add(tar: tarfile.TarFile, name: str, content: Content) -> None:
    # Deterministic headers: no owner, no time, no mode beyond read.
    info = tarfile.TarInfo(name)
    info.mode = 0o444
    info.mtime = 0
    if isinstance(content, bytes):
        info.size = len(content)
        tar.addfile(info, io.BytesIO(content))
        return
    handle, info.size = _open(content)
    with handle:
        tar.addfile(info, handle)  # reads exactly info.size bytes


# -- reading -----------------------------------------------------------------------------------


def is_pack(path: Path) -> bool:
    """Whether ``path`` is a tar file (an evidence pack, if anything prov reads)."""
    try:
        return path.is_file() and tarfile.is_tarfile(path)
    except OSError:
        return False


class ReadOnlyStore(Store):
    """The blobs of an opened pack: readable like any store, never written."""

    def init(self) -> Store:
        return self

    def writer(self, *, threads: bool = False) -> BlobWriter:
        raise StoreError(f"the evidence pack's store at {self.root} is read-only")

    def batch(self, *, workers: int = 16) -> Batch:
        raise StoreError(f"the evidence pack's store at {self.root} is read-only")

    def add_snapshot(self, entry: SnapshotEntry) -> None:
        raise StoreError(f"the evidence pack's store at {self.root} is read-only")


@dataclass
class OpenedPack:
    """A checked pack, extracted into a temporary folder that ``close`` (or exit) removes."""

    source: Path
    root: Path
    manifest: Manifest
    store: ReadOnlyStore

    @property
    def attestation(self) -> Path:
        return self.root / self.manifest.attestation

    @property
    def keys(self) -> list[Path]:
        return [self.root / m.name for m in self.manifest.named("key")]

    @property
    def trusted_root(self) -> Path | None:
        found = self.manifest.named("trusted-root")
        return self.root / found[0].name if found else None

    @property
    def tsa_chain(self) -> Path | None:
        found = self.manifest.named("tsa-chain")
        return self.root / found[0].name if found else None

    def close(self) -> None:
        _remove_tree(self.root)

    def __enter__(self) -> OpenedPack:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_pack(path: Path) -> OpenedPack:
    """Check and extract a pack. Raises PackError (exit 1) on anything out of place.

    The temporary folder lives until ``close()``, or until the returned store is garbage
    collected, or the process exits, whichever comes first.
    """
    try:
        tar = tarfile.open(path, "r:*")  # noqa: SIM115 (closed by the `with tar` below)
    except FileNotFoundError as e:
        raise InputError(
            f"{path} does not exist", hint="check the path of the evidence pack"
        ) from e
    except (tarfile.TarError, OSError) as e:
        raise PackError(f"{path} is not a readable evidence pack (tar)", cause=str(e)) from e
    root = Path(tempfile.mkdtemp(prefix="prov-pack-"))
    try:
        with tar:
            manifest = _extract(tar, root, path)
        store = ReadOnlyStore(root / "store")
        _stock_store(manifest, root, store, path)
        _make_read_only(root)
    except BaseException:
        _remove_tree(root)
        raise
    weakref.finalize(store, _remove_tree, root)
    return OpenedPack(path, root, manifest, store)


def _members(tar: tarfile.TarFile, path: Path) -> list[tarfile.TarInfo]:
    """Every member header, each checked, before anything is written.

    Links, devices, folders and odd or escaping names are refused; so are sparse members (a
    10 KB sparse tar can declare, and make a reader write, gigabytes of zeros) and more than
    ``MAX_MEMBERS`` headers. Duplicates are found by counting, in O(n log n).
    """
    members: list[tarfile.TarInfo] = []
    for member in tar:
        if len(members) >= MAX_MEMBERS:
            raise PackError(f"{path}: more than {MAX_MEMBERS:,} members; no pack has as many")
        if member.name != MANIFEST and not _MEMBER.match(member.name):
            raise PackError(
                f"{path}: member {member.name!r} is not part of an evidence pack",
                hint="the pack was altered or not made by `prov pack`; nothing was extracted",
            )
        if not member.isreg() or member.issparse():
            what = "a sparse file" if member.isreg() else "not a regular file"
            raise PackError(f"{path}: member {member.name!r} is {what}")
        if member.size > (MAX_MANIFEST if member.name == MANIFEST else MAX_MEMBER):
            raise PackError(f"{path}: member {member.name!r} is implausibly large")
        members.append(member)
    counts = Counter(m.name for m in members)
    duplicates = sorted(name for name, n in counts.items() if n > 1)
    if duplicates:
        shown = ", ".join(duplicates[:5]) + (
            f" and {len(duplicates) - 5} more" if len(duplicates) > 5 else ""
        )
        raise PackError(f"{path}: members appear twice: {shown}")
    return members


def _extract(tar: tarfile.TarFile, root: Path, path: Path) -> Manifest:
    members = _members(tar, path)
    names = [m.name for m in members]
    manifest_member = next((m for m in members if m.name == MANIFEST), None)
    if manifest_member is None:
        raise PackError(f"{path} has no {MANIFEST}", hint="it is not a prov evidence pack")
    manifest_file = tar.extractfile(manifest_member)
    assert manifest_file is not None
    try:
        manifest = Manifest.from_json(manifest_file.read(MAX_MANIFEST + 1))
    except (ValueError, ValidationError) as e:
        raise PackError(f"{path}: {MANIFEST} is malformed", cause=str(e)[:300]) from e

    listed = {m.name: m for m in manifest.members}
    present = set(names) - {MANIFEST}
    missing = sorted(set(listed) - present)
    extra = sorted(present - set(listed))
    if missing:
        raise PackError(f"{path}: member(s) missing from the pack: {', '.join(missing)}")
    if extra:
        raise PackError(f"{path}: member(s) not listed in the manifest: {', '.join(extra)}")
    if manifest.attestation not in listed or listed[manifest.attestation].role != "attestation":
        raise PackError(f"{path}: the manifest's attestation is not a member")
    for name in listed:
        if not _MEMBER.match(name):
            raise PackError(f"{path}: the manifest lists an invalid member name {name!r}")

    for member in members:
        entry = listed.get(member.name)
        if entry is not None and member.size != entry.size:
            raise PackError(
                f"{path}: member {member.name} does not match the manifest: it holds "
                f"{member.size:,} bytes, the manifest lists {entry.size:,}",
                hint="the pack was altered; nothing more was extracted",
            )
    for member in members:
        if member.name == MANIFEST:
            continue
        source = tar.extractfile(member)
        assert source is not None
        target = root / member.name
        target.parent.mkdir(exist_ok=True)
        hasher, size = hashlib.sha256(), 0
        entry = listed[member.name]
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as out:
            # Never more than the manifest declares: the header and the manifest agree (above).
            while size <= entry.size and (
                chunk := source.read(min(1 << 20, entry.size + 1 - size))
            ):
                hasher.update(chunk)
                size += len(chunk)
                out.write(chunk)
        if hasher.hexdigest() != entry.sha256 or size != entry.size:
            raise PackError(
                f"{path}: member {member.name} does not match the manifest",
                cause=f"sha256 {hasher.hexdigest()} ({size} bytes), "
                f"listed {entry.sha256} ({entry.size} bytes)",
            )
    return manifest


def _stock_store(manifest: Manifest, root: Path, store: Store, path: Path) -> None:
    # Blobs move into a store layout; the store's own hashing proves each name is its blake3.
    for directory in (store.objects_dir, store.packs_dir, store.tmp_dir, store.snapshots_dir):
        directory.mkdir(parents=True, exist_ok=True)
    with Batch(store) as batch:  # small blobs into one pack, large ones streamed
        for member in manifest.named("blob"):
            source = root / member.name
            if member.size <= SMALL_OBJECT:
                written = batch.put_bytes(source.read_bytes())
            else:
                with source.open("rb") as handle, BlobWriter(store) as writer:
                    for chunk in iter(lambda: handle.read(1 << 20), b""):
                        writer.write(chunk)
                    written = writer.commit()
            if written.digest.hex != member.name.removeprefix("blobs/"):
                raise PackError(
                    f"{path}: blob {member.name} holds bytes whose blake3 is {written.digest.hex}"
                )
            source.unlink()
    (root / "blobs").mkdir(exist_ok=True)
    (root / "blobs").rmdir()


def _make_read_only(root: Path) -> None:
    for folder, _, files in os.walk(root):
        for name in files:
            os.chmod(os.path.join(folder, name), 0o444)
        os.chmod(folder, 0o555)  # noqa: S103 (read + enter only: a read-only tree)


def _remove_tree(root: Path) -> None:
    if not root.exists():
        return
    for folder, _, _ in os.walk(root):
        os.chmod(folder, stat.S_IRWXU)
    shutil.rmtree(root, ignore_errors=True)
