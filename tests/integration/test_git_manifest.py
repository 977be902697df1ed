"""A git capture over many files signs a manifest's root, not its list: same answers, small
statement, proofs for one file, and the files travel in the store and the evidence pack."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from provenance.capture import git as git_collector
from provenance.store.objects import Store
from tests.conftest import GitRepo, rewrite_object

Prov = Callable[..., Result]


def _repo(path: Path, files: int) -> GitRepo:
    repo = GitRepo(path)
    for index in range(files):
        repo.write(f"src/m{index % 7}/f{index:04d}.txt", f"file {index}\n")
    repo.write("conf/train.json", json.dumps({"steps": 390139, "batch": 11264}))
    repo.commit("v1")
    return repo


def _two_snapshots(project: Path, prov: Prov, repo: GitRepo) -> None:
    (project / "prov.toml").write_text(
        f'[[sources]]\nname = "code"\nkind = "git"\nrepo = "{repo.path}"\n'
    )
    assert prov("keygen", "alice").exit_code == 0
    result = prov("snapshot", "--label", "v1", "--key", "keys/alice.key")
    assert result.exit_code == 0, result.output
    repo.write("conf/train.json", json.dumps({"steps": 390251, "batch": 11264}))
    repo.write("src/m1/f0001.txt", "changed\n")
    (repo.path / "src" / "m2" / "f0002.txt").unlink()
    repo.write("new.txt", "added\n")
    repo.commit("v2")
    result = prov("snapshot", "--label", "v2", "--key", "keys/alice.key")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("threshold", [10, 10**9])
def test_manifest_and_list_captures_diff_and_claim_alike(
    tmp_path: Path,
    project: Path,
    prov: Prov,
    monkeypatch: pytest.MonkeyPatch,
    threshold: int,
) -> None:
    monkeypatch.setattr(git_collector, "MANIFEST_ABOVE", threshold)
    _two_snapshots(project, prov, _repo(tmp_path / "repo", 40))
    shown = json.loads(prov("show", "v2", "--format", "json").stdout)
    capture = shown["snapshot"]["captures"][0]
    assert ("manifest" in capture["data"]) == (threshold == 10)
    assert ("files" in capture["data"]) == (threshold != 10)

    result = prov("diff", "v1", "v2", "--format", "json")
    assert result.exit_code == 1, result.output
    files = json.loads(result.stdout)["captures"][0]["files"]
    changes = sorted((f["path"], f["change"], f.get("content")) for f in files)
    assert changes == [
        ("conf/train.json", "changed", "compared"),
        ("new.txt", "added", "not-compared"),
        ("src/m1/f0001.txt", "changed", "compared"),
        ("src/m2/f0002.txt", "removed", "not-compared"),
    ]
    (project / "claims.toml").write_text(
        '[[claims]]\nname = "steps"\nclaimed = "390251"\n'
        "derived = \"captures['code'].documents['conf/train.json'].steps\"\n"
    )
    result = prov("check", "--claims", "claims.toml", "v2")
    assert result.exit_code == 0, result.output
    for label in ("v1", "v2"):
        result = prov(
            "verify", f"attestations/{label}.intoto.jsonl", "--key", "keys/alice.pub",
            "--store", ".prov",
        )  # fmt: skip
        assert result.exit_code == 0, result.output


def test_the_statement_does_not_grow_with_the_files(
    tmp_path: Path, project: Path, prov: Prov, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(git_collector, "MANIFEST_ABOVE", 10)
    assert prov("keygen", "alice").exit_code == 0
    sizes = []
    for files in (20, 2000):
        repo = _repo(tmp_path / f"repo-{files}", files)
        (project / "prov.toml").write_text(
            f'[[sources]]\nname = "code"\nkind = "git"\nrepo = "{repo.path}"\n'
        )
        result = prov("snapshot", "--label", f"n{files}", "--key", "keys/alice.key")
        assert result.exit_code == 0, result.output
        sizes.append((project / "attestations" / f"n{files}.intoto.jsonl").stat().st_size)
    assert abs(sizes[0] - sizes[1]) < 200, sizes


def test_prove_one_file_and_check_it_against_the_signed_root(
    tmp_path: Path, project: Path, prov: Prov, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(git_collector, "MANIFEST_ABOVE", 10)
    _two_snapshots(project, prov, _repo(tmp_path / "repo", 100))
    result = prov("prove", "v2", "conf/train.json")
    assert result.exit_code == 0, result.output
    proof = json.loads(result.stdout)
    entry = json.loads(proof["proof"]["entry"])
    assert entry["key"] == "conf/train.json" and entry["size"] > 0
    assert len(proof["proof"]["path"]) == 7  # ceil(log2(102)) hashes
    (project / "proof.json").write_text(result.stdout)

    # The auditor has the attestation alone: no store, no manifest.
    auditor = tmp_path / "auditor"
    auditor.mkdir()
    (auditor / "v2.intoto.jsonl").write_bytes(
        (project / "attestations/v2.intoto.jsonl").read_bytes()
    )
    checked = prov(
        "prove", str(auditor / "v2.intoto.jsonl"), "--check", "proof.json", "--store",
        str(auditor / "none"),
    )  # fmt: skip
    assert checked.exit_code == 0, checked.output
    assert "proven: 'conf/train.json'" in checked.output
    # Against the other snapshot's root, or with the entry changed, it fails.
    other = prov("prove", "v1", "--check", "proof.json")
    assert other.exit_code == 1 and "does not lead to the manifest root" in other.output
    forged = dict(proof, proof={**proof["proof"], "entry": proof["proof"]["entry"].replace(
        entry["blake3"], "0" * 64)})  # fmt: skip
    (project / "forged.json").write_text(json.dumps(forged))
    assert prov("prove", "v2", "--check", "forged.json").exit_code == 1
    missing = prov("prove", "v2", "no/such/file")
    assert missing.exit_code == 2 and "is not in the manifest" in missing.output


def test_the_files_travel_in_the_evidence_pack_and_tampering_is_caught(
    tmp_path: Path, project: Path, prov: Prov, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(git_collector, "MANIFEST_ABOVE", 10)
    _two_snapshots(project, prov, _repo(tmp_path / "repo", 30))
    for label in ("v1", "v2"):
        packed = prov(
            "pack", f"attestations/{label}.intoto.jsonl", "-o", f"{label}.tar", "--key",
            "keys/alice.pub",
        )  # fmt: skip
        assert packed.exit_code == 0, packed.output
    verified = prov("verify", "v2.tar", "--key", "keys/alice.pub")
    assert verified.exit_code == 0, verified.output
    assert "6. blobs: 32 blob(s)" in verified.output, verified.output  # manifest + 31 files
    result = prov("diff", "v1.tar", "v2.tar", "--format", "json")
    assert result.exit_code == 1
    paths = {f["path"] for f in json.loads(result.stdout)["captures"][0]["files"]}
    assert paths == {"conf/train.json", "new.txt", "src/m1/f0001.txt", "src/m2/f0002.txt"}

    store = Store(project / ".prov")
    hexdigest = json.loads(
        prov("prove", "v2", "src/m3/f0003.txt").stdout
    )["proof"]["entry"]  # fmt: skip
    blake3_hex = json.loads(hexdigest)["blake3"]
    rewrite_object(store.root, blake3_hex, lambda data: data.upper())
    result = prov(
        "verify", "attestations/v2.intoto.jsonl", "--key", "keys/alice.pub", "--store", ".prov"
    )
    assert result.exit_code == 1
    assert "blob 'src/m3/f0003.txt' of source 'code'" in result.output
