"""`prov snapshot` twice over a real repository with the real git collector, then `prov diff`."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import jsonpatch
from click.testing import Result

from provenance._internal import documents
from provenance.digest import Digest
from provenance.store.objects import Store
from provenance.verify.resolve import load
from tests.conftest import GitRepo

Prov = Callable[..., Result]

MIX_V1 = {
    "generated_at": "2026-08-18T10:00:00Z",
    "phases": [{"name": "phase0", "start_step": 0, "weights": {"c07q3": 0.6, "c14q1": 0.4}}],
}
MIX_V2 = {
    "generated_at": "2026-09-14T09:30:00Z",
    "phases": [
        {"name": "phase0", "start_step": 0, "weights": {"c07q3": 0.55, "c14q1": 0.45}},
        {"name": "phase0b", "start_step": 108000, "weights": {"c07q3": 0.2, "c14q1": 0.8}},
    ],
}


def test_diff_of_two_real_snapshots(project: Path, prov: Prov) -> None:
    repo = GitRepo(project / "launcher")
    repo.write("conf/train.yaml", "trainer:\n  num_train_steps: 390139\n  batch: 11264\n")
    repo.write("pyproject.toml", '[project]\nname = "launcher"\nversion = "0.1.0"\n')
    repo.write("conf/mix.json", json.dumps(MIX_V1, indent=2))
    repo.write("NOTES.txt", "phase switch at 312,192\nsequence length 4096\n")
    repo.write("weights.bin", bytes(range(256)) * 4)
    repo.write("old.txt", "to be removed\n")
    repo.commit("v1")
    (project / "prov.toml").write_text(
        '[[sources]]\nname = "launcher"\nkind = "git"\nrepo = "launcher"\n'
        'volatile = ["generated_at"]\n'
    )
    assert prov("keygen", "alice").exit_code == 0
    first = prov("snapshot", "--label", "v1", "--key", "keys/alice.key")
    assert first.exit_code == 0, first.output

    repo.write("conf/train.yaml", "trainer:\n  num_train_steps: 390251\n  batch: 11264\n")
    repo.write("pyproject.toml", '[project]\nname = "launcher"\nversion = "0.2.0"\n')
    repo.write("conf/mix.json", json.dumps(MIX_V2, indent=2))
    repo.write(
        "NOTES.txt", "phase switch at 312,192\nmix switch at 108,000\nsequence length 4096\n"
    )
    repo.write("weights.bin", bytes(range(255, -1, -1)) * 4)
    (repo.path / "old.txt").unlink()
    repo.write("new.txt", "added\n")
    repo.commit("v2")
    second = prov("snapshot", "--label", "v2", "--key", "keys/alice.key")
    assert second.exit_code == 0, second.output

    store = Store(project / ".prov")
    v1 = load("v1", store).snapshot.capture("launcher")
    assert v1.request["volatile"] == ["generated_at"]  # recorded for any later auditor

    result = prov("diff", "v1", "v2")
    assert result.exit_code == 1, result.output
    out = result.output
    assert f"commit: {v1.data['commit']} -> " in out
    assert "trainer.num_train_steps: 390,139 -> 390,251 (+112, +0.029%)" in out  # YAML
    assert 'project.version: "0.1.0" -> "0.2.0"' in out  # TOML
    assert "+ phases[name=phase0b]: added" in out  # JSON, records by identity
    assert "weights vs phases[name=phase0].weights" in out
    assert "~ phases[name=phase0].weights: 2 weight(s) moved" in out
    assert "c14q1: 40.00% -> 45.00% (+5.00 pp)" in out
    assert "+mix switch at 108,000" in out  # a unified diff of a text file
    assert "file:weights.bin: binary or large, compared by digest only" in out
    assert "- old.txt: removed (was 14 bytes)" in out
    assert "+ new.txt: added (6 bytes)" in out
    assert "~ weights.bin: 1,024 -> 1,024 bytes (+0)" in out
    real, _, volatile = out.partition("volatile (not counted as differences):")
    assert "conf/mix.json: generated_at" in volatile and "generated_at" not in real

    diff = json.loads(prov("diff", "v1", "v2", "--format", "json").stdout)
    (capture,) = diff["captures"]
    assert {f["path"]: f["change"] for f in capture["files"]} == {
        "NOTES.txt": "changed",
        "conf/mix.json": "changed",
        "conf/train.yaml": "changed",
        "new.txt": "added",
        "old.txt": "removed",
        "pyproject.toml": "changed",
        "weights.bin": "changed",
    }
    v2 = load("v2", store).snapshot.capture("launcher")
    replayed = 0
    for document in capture["documents"]:
        if not document["name"].startswith("file:") or document["format"] == "text":
            continue
        path = document["name"].removeprefix("file:")
        fmt = documents.format_of(path)
        assert fmt is not None

        def read(c: object, path: str = path, fmt: str = fmt) -> object:
            blob = next(b for b in c.blobs if b.name == path)  # type: ignore[attr-defined]
            return documents.parse(store.read(Digest.parse(blob.digest)), fmt)  # type: ignore[arg-type]

        patched = jsonpatch.JsonPatch(document["patch"]).apply(copy.deepcopy(read(v1)))
        assert patched == read(v2)
        replayed += 1
    assert replayed == 3

    log = prov("log")
    assert "changed since v1: launcher (commit " in log.output
