"""Digests: a small value type, and streaming blake3 / sha256 helpers."""

from __future__ import annotations

import hashlib
import mmap
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import BinaryIO, Literal

import blake3

Algorithm = Literal["blake3", "sha256"]

_HEX_LENGTH = {"blake3": 64, "sha256": 64}
_PATTERN = re.compile(r"^(blake3|sha256):([0-9a-f]{64})$")
CHUNK = 1 << 20  # 1 MiB reads: large enough to amortise syscalls, small enough for constant memory
WINDOW = 32 << 20  # mapped at a time by blake3_path: room for blake3's threads, bounded RSS
_HEX = re.compile(r"[0-9a-f]*")
_MAP_FLAGS = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)


@dataclass(frozen=True, slots=True)
class Digest:
    """A content digest. Prints as ``blake3:<hex>``."""

    algorithm: Algorithm
    hex: str

    def __post_init__(self) -> None:
        if len(self.hex) != _HEX_LENGTH[self.algorithm] or not _is_lower_hex(self.hex):
            raise ValueError(f"not a {self.algorithm} hex digest: {self.hex!r}")

    def __str__(self) -> str:
        return f"{self.algorithm}:{self.hex}"

    @classmethod
    def parse(cls, text: str) -> Digest:
        match = _PATTERN.match(text)
        if match is None:
            raise ValueError(f"not a digest of the form 'blake3:<64 hex>': {text!r}")
        return cls(match.group(1), match.group(2))  # type: ignore[arg-type]


def _is_lower_hex(text: str) -> bool:
    return _HEX.fullmatch(text) is not None


def blake3_bytes(data: bytes) -> Digest:
    return Digest("blake3", blake3.blake3(data).hexdigest())


def sha256_bytes(data: bytes) -> Digest:
    return Digest("sha256", hashlib.sha256(data).hexdigest())


def blake3_chunks(chunks: Iterable[bytes]) -> tuple[Digest, int]:
    """Hash an iterable of byte strings; return the digest and the total size."""
    hasher = blake3.blake3()
    size = 0
    for chunk in chunks:
        hasher.update(chunk)
        size += len(chunk)
    return Digest("blake3", hasher.hexdigest()), size


def blake3_file(stream: BinaryIO) -> tuple[Digest, int]:
    """Hash a binary stream to its end in constant memory."""
    return blake3_chunks(iter(lambda: stream.read(CHUNK), b""))


def blake3_path(path: str | os.PathLike[str]) -> tuple[Digest, int]:
    """Hash a file that nobody is changing (a store object) as fast as ``b3sum`` does.

    Like b3sum it maps the file and lets blake3 spread the work over every core, but one window
    at a time, so resident memory stays bounded whatever the size. Files that may be truncated
    while being read must go through ``blake3_file``: a mapping of a shrunk file faults.
    """
    hasher = blake3.blake3(max_threads=blake3.blake3.AUTO)
    with open(path, "rb", buffering=0) as handle:
        size = os.fstat(handle.fileno()).st_size
        offset = 0
        while offset < size:
            length = min(WINDOW, size - offset)
            # MAP_POPULATE maps the whole window in one go rather than one fault at a time.
            with mmap.mmap(
                handle.fileno(), length, flags=_MAP_FLAGS, prot=mmap.PROT_READ, offset=offset
            ) as window:
                hasher.update(window)
            offset += length
    return Digest("blake3", hasher.hexdigest()), size
