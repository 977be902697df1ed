"""Content mode on a local Ray cluster: the same manifest as the single-process path, even
when a worker dies in the middle of a shard."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="needs ray: pip install -e '.[dev]' (make install does)")

from provenance._internal.objectstore import StoreSpec  # noqa: E402
from provenance.capture.base import CollectContext  # noqa: E402
from provenance.capture.content import (  # noqa: E402
    LocalExecutor,
    RayExecutor,
    ShardItem,
    ShardResult,
    hash_listing,
    hash_shard,
)
from provenance.capture.listing import ListingCollector, ListingOptions  # noqa: E402
from provenance.store.manifest import ManifestInfo, iter_entries  # noqa: E402
from provenance.store.objects import Store  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="ERROR",
        runtime_env={"env_vars": {"PYTHONWARNINGS": "ignore"}},
    )
    yield
    ray.shutdown()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    for cell in range(6):
        for shard in range(25):
            path = root / f"c{cell:02d}q{cell % 5}" / f"part-{shard:05d}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(os.urandom(shard * 37 + cell))
    return root


def collect(tmp_path: Path, store: Store, url: str, **options: object) -> ListingCollector:
    opts = ListingOptions(name="harrier", kind="listing", url=url, **options)  # type: ignore[arg-type]
    return ListingCollector(opts, CollectContext(store=store, base_dir=tmp_path, retries=2))


def test_ray_gives_the_single_process_manifest(cluster: None, tree: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / ".prov").init()
    local = collect(tmp_path, store, str(tree), content=True, shard_objects=8).collect()
    on_ray = collect(
        tmp_path, store, str(tree), content=True, shard_objects=8, ray_address="auto"
    ).collect()
    assert local.status == on_ray.status == "ok"
    assert on_ray.data == local.data
    assert on_ray.digest == local.digest
    assert on_ray.blobs == local.blobs  # the content manifest blob is the same, byte for byte
    content = on_ray.data["content"]
    assert isinstance(content, dict) and content["hashed"] == 150


def crash_once(marker: str, victim: str):  # type: ignore[no-untyped-def]
    """A shard function whose worker process dies on its first attempt at ``victim``."""

    def shard(spec: StoreSpec, items: list[ShardItem]) -> ShardResult:
        if any(key == victim for key, _ in items) and not os.path.exists(marker):
            with open(marker, "w") as handle:
                handle.write(str(os.getpid()))
            os._exit(1)
        return hash_shard(spec, items)

    return shard


def test_a_killed_worker_is_retried_and_the_result_is_identical(
    cluster: None, tree: Path, tmp_path: Path
) -> None:
    store = Store(tmp_path / ".prov").init()
    listing = collect(tmp_path, store, str(tree)).collect()
    info = ManifestInfo.from_capture(listing)
    spec = StoreSpec("file", str(tree))
    expected = hash_listing(store, spec, info, LocalExecutor(), shard_objects=10)

    marker = tmp_path / "crashed"
    victim = "c03q3/part-00012.jsonl"
    executor = RayExecutor("auto", crash_once(str(marker), victim))
    progress: list[tuple[int, int, int, int]] = []
    result = hash_listing(
        store,
        spec,
        info,
        executor,
        shard_objects=10,
        retries=2,
        progress=lambda *values: progress.append(values),
    )
    assert marker.exists(), "the worker really died once"
    assert int(marker.read_text()) != os.getpid()
    assert result.manifest == expected.manifest
    assert list(iter_entries(store, result.manifest.blob)) == list(
        iter_entries(store, expected.manifest.blob)
    )
    [attempt] = result.attempts
    assert attempt["attempt"] == 1 and attempt["executor"] == "ray"
    assert attempt["error"] in ("WorkerCrashedError", "ActorDiedError", "RayTaskError")
    assert progress[-1][0] == progress[-1][1] == 150
    assert [p[3] for p in progress] == sorted(p[3] for p in progress)


def test_the_collector_records_the_retry(cluster: None, tree: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / ".prov").init()
    plain = collect(tmp_path, store, str(tree), content=True, shard_objects=20).collect()
    opts = ListingOptions(
        name="harrier",
        kind="listing",
        url=str(tree),
        content=True,
        shard_objects=20,
        ray_address="auto",
    )
    marker = tmp_path / "crashed"
    collector = ListingCollector(
        opts,
        CollectContext(store=store, base_dir=tmp_path, retries=2),
        shard_fn=crash_once(str(marker), "c00q0/part-00003.jsonl"),
    )
    capture = collector.collect()
    assert marker.exists()
    assert capture.digest == plain.digest and capture.data == plain.data
    assert len(capture.attempts) == 1 and capture.attempts[0]["shard"] == 0
