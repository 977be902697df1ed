"""Inputs the benchmarks generate for themselves: deterministic (seeded), sizes adjustable.

Every generator writes into a work directory and returns what it made. Content is pseudo-random
text (compressible like source code, unique per file so nothing deduplicates by accident).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.org",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git_env() -> dict[str, str]:
    return {**os.environ, **GIT_ENV}


def big_file(path: Path, size: int) -> Path:
    """``size`` random bytes (incompressible, like model weights or a shard of a data set)."""
    if path.is_file() and path.stat().st_size == size:
        return path
    rng = random.Random(7)
    chunk = 1 << 20
    with path.open("wb") as handle:
        written = 0
        while written < size:
            n = min(chunk, size - written)
            handle.write(rng.randbytes(n))
            written += n
    return path


class _Text:
    """Slices of a fixed pool of random words: text that compresses like source code."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        letters = "abcdefghijklmnopqrstuvwxyz_"
        words = ["".join(self.rng.choices(letters, k=self.rng.randint(2, 10))) for _ in range(4096)]
        lines = []
        size = 0
        while size < 4 << 20:
            line = " ".join(self.rng.choices(words, k=self.rng.randint(3, 12))) + "\n"
            lines.append(line)
            size += len(line)
        self.pool = "".join(lines).encode()

    def size(self) -> int:
        # Log-normal sizes: median ~1.5 KiB, mean ~2.5 KiB, a long tail capped at 256 KiB.
        return max(16, min(256 << 10, int(self.rng.lognormvariate(7.3, 1.0))))

    def content(self, header: str) -> bytes:
        size = self.size()
        start = self.rng.randrange(0, len(self.pool) - size)
        return header.encode() + self.pool[start : start + size]


def repo_paths(count: int) -> list[str]:
    """A monorepo-like layout: top-level packages, sub-packages, ~50 files per directory."""
    paths = []
    per_dir, per_pkg = 50, 20
    for index in range(count):
        leaf, rest = index % per_dir, index // per_dir
        sub, top = rest % per_pkg, rest // per_pkg
        paths.append(f"pkg{top:03d}/mod{sub:02d}/file{leaf:02d}.py")
    return paths


@dataclass(frozen=True)
class Repo:
    path: Path
    files: list[str]
    base: str  # the first commit, all files
    updates: list[str]  # commits, each changing ``changed`` files of its parent
    changed: int


def git_repo(path: Path, files: int, updates: int, changed_fraction: float) -> Repo:
    """A repository of ``files`` files, then ``updates`` commits each changing a fraction of them.

    Built with ``git fast-import`` (one pack, like a cloned monorepo) and checked out, so the
    working tree and a stat-clean index exist for ``git status`` and for the baseline's b3sum.
    """
    marker = path / ".bench-done"
    paths = repo_paths(files)
    changed = max(1, int(files * changed_fraction))
    if marker.is_file():
        info = json.loads(marker.read_text())
        if info["files"] == files and info["updates"] >= updates and info["changed"] == changed:
            return Repo(path, paths, info["base"], info["commits"][:updates], changed)
    subprocess.run(["rm", "-rf", str(path)], check=True)
    path.mkdir(parents=True)
    env = git_env()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=env)
    text = _Text(seed=11)
    process = subprocess.Popen(
        ["git", "fast-import", "--quiet", "--done"], cwd=path, stdin=subprocess.PIPE, env=env
    )
    assert process.stdin
    out = process.stdin
    mark = 0

    def blob(data: bytes) -> int:
        nonlocal mark
        mark += 1
        out.write(b"blob\nmark :%d\ndata %d\n%b\n" % (mark, len(data), data))
        return mark

    def commit(
        ref: str, message: str, entries: Iterator[tuple[str, int]], parent: str | None
    ) -> None:
        nonlocal mark
        mark += 1
        body = message.encode()
        out.write(b"commit %b\nmark :%d\n" % (ref.encode(), mark))
        out.write(b"committer Bench <bench@example.org> 1787270400 +0000\n")
        out.write(b"data %d\n%b\n" % (len(body), body))
        if parent:
            out.write(b"from %b\n" % parent.encode())
        for name, blob_mark in entries:
            out.write(b"M 100644 :%d %b\n" % (blob_mark, name.encode()))
        out.write(b"\n")

    marks = [blob(text.content(f"# {name}\n")) for name in paths]
    commit("refs/heads/main", "base", iter(zip(paths, marks, strict=True)), None)
    rng = random.Random(13)
    parent = "refs/heads/main"
    for update in range(1, updates + 1):
        chosen = sorted(rng.sample(range(files), changed))
        new = [(paths[i], blob(text.content(f"# {paths[i]} v{update}\n"))) for i in chosen]
        commit(f"refs/heads/update{update}", f"update {update}", iter(new), parent)
        parent = f"refs/heads/update{update}"
    out.write(b"done\n")
    out.close()
    if process.wait() != 0:
        raise RuntimeError("git fast-import failed")
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=path, check=True, env=env)

    def rev(ref: str) -> str:
        result = subprocess.run(
            ["git", "rev-parse", ref], cwd=path, check=True, env=env, capture_output=True, text=True
        )
        return result.stdout.strip()

    base = rev("main")
    commits = [rev(f"update{u}") for u in range(1, updates + 1)]
    info = {
        "files": files,
        "updates": updates,
        "changed": changed,
        "base": base,
        "commits": commits,
    }
    marker.write_text(json.dumps(info))
    return Repo(path, paths, base, commits, changed)


def wandb_config(target_bytes: int, seed: int = 5) -> dict[str, object]:
    """A W&B-style run config of about ``target_bytes`` of JSON: nested sections of floats
    (learning rates, betas, mixture weights), big integers (steps, token counts), strings
    and lists, with the ``{"value": ...}`` wrappers already removed."""
    rng = random.Random(seed)
    config: dict[str, object] = {
        "trainer": {
            "train_batch_size": 11264,
            "num_train_steps": 390251,
            "seq_len": 4096,
            "total_tokens": 18_005_144_633_344,
            "mp": "p=f32,c=bfloat16",
            "checkpointer": {"keep": [{"every": 10000}], "save_interval": "10m"},
        },
        "optimizer": {
            "learning_rate": 3e-4,
            "weight_decay": 0.1,
            "beta1": 0.9,
            "beta2": 0.95,
            "epsilon": 1e-8,
            "max_grad_norm": 1.0,
            "warmup": 0.01,
            "min_lr_ratio": 0.0,
            "lr_schedule": "cosine",
            "cycles": [312192, 390251],
        },
        "model": {"hidden_dim": 4096, "num_layers": 48, "num_experts": 128, "rope_theta": 1e6},
    }
    components: dict[str, object] = {}
    size = 600
    index = 0
    while size < target_bytes:
        family = rng.choice(["dclm", "starcoder", "proofpile", "arxiv", "wiki", "stack"])
        name = f"{family}-{index:05d}"
        component = {
            "weight": rng.random() / 50,
            "tokens": rng.randrange(10**9, 10**12),
            "path": f"gs://marin-us-central2/tokenized/{name}-{rng.getrandbits(32):08x}",
            "epochs": rng.choice([1.0, 2.0, 0.5, 1.25]),
            "quality": [round(rng.gauss(0, 1), rng.randint(2, 6)) for _ in range(4)],
            "loss_scale": rng.choice([1e-5, 2.5e-7, 1.0, 0.125, 1e21, 12345.678]),
            "enabled": rng.random() < 0.9,
            "tags": rng.sample(["code", "math", "web", "books", "papers", "qa"], 2),
        }
        components[name] = component
        size += len(json.dumps(component)) + len(name) + 4
        index += 1
    config["data"] = {"tokenizer": "meta-llama/Meta-Llama-3.1-8B", "components": components}
    return config


@dataclass(frozen=True)
class ListingPair:
    store: Path
    before: str  # snapshot labels in the store
    after: str
    manifests: tuple[Path, Path]  # the two manifest blobs, as files in the store
    count: int
    differing: int  # objects added, removed or changed
    changed: int
    removed: int
    added: int

    @property
    def manifest_bytes(self) -> int:
        return self.manifests[0].stat().st_size


def _listing_entry(index: int, key: str, version: int) -> dict[str, object]:
    import hashlib

    seed = f"{key}@{version}".encode()
    size = 1 << 20 if version == 0 else (1 << 20) + 4096 * version
    size += int.from_bytes(hashlib.blake2s(seed, digest_size=2).digest(), "big")
    day, second = divmod(index // 7 + 86400 * version, 86400)
    return {
        "key": key,
        "size": size,
        "etag": f'"{hashlib.md5(seed, usedforsecurity=False).hexdigest()}"',
        "last_modified": f"2026-08-{18 + day:02d}T{second // 3600:02d}:{second // 60 % 60:02d}:"
        f"{second % 60:02d}Z",
        "storage_class": "STANDARD",
    }


def listing_pair(path: Path, count: int, changed_fraction: float) -> ListingPair:
    """Two snapshots of an S3-shaped listing of ``count`` objects (one ``listing`` capture each,
    signed, in one store), the second with ``changed_fraction`` of the objects differing: three
    fifths rewritten (new size, ETag, Last-Modified), one fifth deleted, one fifth new keys.

    Manifests are written with prov's own ``ManifestWriter`` (canonical lines, Merkle root), the
    captures shaped as the listing collector shapes them (docs/captures.md, "listing").
    """
    from provenance import __version__
    from provenance.attest import keys
    from provenance.attest import statement as statements
    from provenance.attest.signing import DsseAttester
    from provenance.model import BlobRef, Capture, Snapshot
    from provenance.store.manifest import BLOB_NAME, MEDIA_TYPE, ManifestWriter
    from provenance.store.objects import SnapshotEntry, Store

    differing = max(5, int(count * changed_fraction))
    removed = added = differing // 5
    changed = differing - removed - added
    marker = path / ".bench-done"
    summary = {"count": count, "changed": changed, "removed": removed, "added": added}
    labels = ("listing-before", "listing-after")
    store = Store(path / "store")

    def manifest_paths() -> tuple[Path, Path]:
        from provenance.digest import Digest
        from provenance.verify.resolve import load

        found = []
        for label in labels:
            capture = load(label, store).snapshot.captures[0]
            found.append(store.object_path(Digest.parse(capture.blobs[0].digest)))
        return found[0], found[1]

    def pair() -> ListingPair:
        return ListingPair(
            store.root, *labels, manifest_paths(), count, differing, changed, removed, added
        )

    if marker.is_file() and json.loads(marker.read_text()) == summary:
        return pair()
    subprocess.run(["rm", "-rf", str(path)], check=True)
    path.mkdir(parents=True)
    store.init()
    rng = random.Random(17)
    picked = rng.sample(range(count), changed + removed + added)
    rewritten, deleted, inserted = (
        set(picked[:changed]),
        set(picked[changed : changed + removed]),
        set(picked[changed + removed :]),
    )
    per_cell = 5000

    def entries(after: bool) -> Iterator[dict[str, object]]:
        for index in range(count):
            key = f"c{index // per_cell:04d}/shard-{index:07d}.jsonl.zst"
            if not (after and index in deleted):
                yield _listing_entry(index, key, 1 if after and index in rewritten else 0)
            if after and index in inserted:  # ".p" sorts after ".j": right after its neighbour
                extra = f"c{index // per_cell:04d}/shard-{index:07d}.part2.jsonl.zst"
                yield _listing_entry(index, extra, 0)

    key_dir = path / "key"
    key_dir.mkdir()
    signer = keys.load_signer(keys.generate(key_dir, "bench")[0])
    attester = DsseAttester([signer])
    for label, after in zip(labels, (False, True), strict=True):
        writer = ManifestWriter(store)
        for entry in entries(after):
            writer.add(entry)
        info = writer.commit()
        request = {
            "url": "s3://bench-bucket/tokenized/",
            "endpoint_url": None,
            "anonymous": True,
            "versions": False,
            "content": False,
        }
        data = {
            "protocol": "s3",
            "manifest": info.to_json(),
            "prefixes": [p.__dict__ for p in writer.prefixes],
            "prefixes_truncated": writer.prefixes_truncated,
        }
        blob = BlobRef(name=BLOB_NAME, digest=info.blob, size=info.blob_size, media_type=MEDIA_TYPE)
        moment = "2026-08-18T00:00:00Z" if not after else "2026-08-25T00:00:00Z"
        capture = Capture(
            source="tokenized",
            kind="listing",
            tool_version=__version__,
            started=moment,
            ended=moment,
            request=request,
            status="ok",
            establishes=("provider-asserted",),
            data=data,
            blobs=(blob,),
            digest=Capture.content_digest(
                "listing", request, data, [blob.model_dump(mode="json")], None
            ),
        )
        snapshot = Snapshot(label=label, created=moment, captures=(capture,))
        document = attester.attest(statements.build(snapshot))
        envelope = store.put_bytes(document)
        (path / f"{label}.intoto.jsonl").write_bytes(document)
        store.add_snapshot(
            SnapshotEntry(
                sha256=snapshot.sha256().hex,
                label=label,
                created=moment,
                attestation=str(envelope.digest),
                path=str(path / f"{label}.intoto.jsonl"),
                signers=attester.signer_ids(),
                sources=["tokenized"],
                failed=[],
            )
        )
    marker.write_text(json.dumps(summary))
    return pair()
