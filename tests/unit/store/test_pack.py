"""Evidence packs: verify and load with no store and no network; hostile packs are refused."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from provenance.digest import Digest
from provenance.errors import PackError, StoreError
from provenance.store.pack import open_pack
from provenance.verify.resolve import load


@pytest.fixture
def packs(project: Path, make_repo, prov: Callable[..., Result]) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    """Two packs of the same source at two milestones."""
    repo = make_repo("code")
    repo.write("train.py", "steps = 390139\n")
    repo.write("mix.json", '{"web": 0.7, "code": 0.3}\n')
    repo.commit("first")
    (project / "prov.toml").write_text(
        f'[[sources]]\nname = "launcher"\nkind = "git"\nrepo = "{repo.path}"\nref = "HEAD"\n'
    )
    assert prov("keygen", "alice").exit_code == 0
    made = []
    for label in ("m1", "m2"):
        if label == "m2":
            repo.write("train.py", "steps = 390251\n")
            repo.commit("second")
        assert prov("snapshot", "--key", "keys/alice.key", "--label", label).exit_code == 0
        out = project / f"{label}.evidence.tar"
        packed = prov(
            "pack", f"attestations/{label}.intoto.jsonl", "-o", str(out), "--key", "keys/alice.pub"
        )
        assert packed.exit_code == 0, packed.output
        made.append(out)
    return made[0], made[1]


def _offline(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        command = [unshare, "-n", *command]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROV_")}
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env, timeout=120)


def test_pack_verifies_and_loads_with_no_store_and_no_network(
    packs: tuple[Path, Path], tmp_path: Path
) -> None:
    auditor = tmp_path / "auditor"
    auditor.mkdir()
    for pack in packs:
        shutil.copy(pack, auditor)
    prov = str(Path(sys.executable).with_name("prov"))

    refused = _offline([prov, "verify", "m1.evidence.tar"], auditor)
    assert refused.returncode == 2 and "--trust-pack" in refused.stderr, refused.stderr
    result = _offline([prov, "verify", "m1.evidence.tar", "--trust-pack"], auditor)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[ok  ] 6. blobs: 2 blob(s)" in result.stdout
    assert "trusted from the pack (--trust-pack): key sha256:" in result.stdout
    assert "signed label 'm1' is the one expected" in result.stdout
    assert "verified: m1" in result.stdout
    assert sorted(p.name for p in auditor.iterdir()) == ["m1.evidence.tar", "m2.evidence.tar"]

    shown = _offline([prov, "show", "m2.evidence.tar"], auditor)
    assert shown.returncode == 0 and "(evidence pack)" in shown.stdout

    # What `prov diff` does with two packs: resolve.load, then read blobs through Loaded.store.
    old, new = load(str(packs[0]), None), load(str(packs[1]), None)
    assert old.store is not None and new.store is not None
    old_blobs = {b.name: b.digest for b in old.snapshot.captures[0].blobs}
    new_blobs = {b.name: b.digest for b in new.snapshot.captures[0].blobs}
    assert sorted(p for p in new_blobs if new_blobs[p] != old_blobs[p]) == ["train.py"]
    assert old.store.read(Digest.parse(old_blobs["train.py"])) == b"steps = 390139\n"
    assert new.store.read(Digest.parse(new_blobs["train.py"])) == b"steps = 390251\n"
    with pytest.raises(StoreError, match="read-only"):
        new.store.put_bytes(b"x")


def test_packs_diff_offline(packs: tuple[Path, Path], tmp_path: Path) -> None:
    prov = str(Path(sys.executable).with_name("prov"))
    result = _offline([prov, "diff", str(packs[0]), str(packs[1])], tmp_path)
    assert result.returncode == 1, result.stderr  # differences found
    assert "train.py" in result.stdout


def test_verify_pack_fails_on_a_changed_key(
    packs: tuple[Path, Path], project: Path, prov: Callable[..., Result]
) -> None:
    assert prov("keygen", "mallory").exit_code == 0
    result = prov("verify", "--pack", str(packs[0]), "--key", "keys/mallory.pub")
    assert result.exit_code == 1
    assert "[FAIL] 2. signatures" in result.output


def test_pack_refuses_an_attestation_that_does_not_verify(
    packs: tuple[Path, Path], project: Path, prov: Callable[..., Result]
) -> None:
    assert prov("keygen", "mallory").exit_code == 0
    result = prov(
        "pack", "attestations/m1.intoto.jsonl", "-o", "x.tar", "--key", "keys/mallory.pub"
    )
    assert result.exit_code == 1 and not (project / "x.tar").exists()


# -- hostile packs ------------------------------------------------------------------------------


def _members(pack: Path) -> dict[str, bytes]:
    with tarfile.open(pack) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]


def _write(target: Path, members: dict[str, bytes], extra: list[tarfile.TarInfo] = ()) -> Path:  # type: ignore[assignment]
    with tarfile.open(target, "w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info in extra:
            tar.addfile(info, io.BytesIO(b"x" * info.size) if info.isreg() else None)
    return target


@pytest.fixture
def fresh_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point tempfile at an empty folder, to see that nothing is left behind."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _regular(name: str, size: int = 1) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    return info


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("missing-member", "missing from the pack"),
        ("extra-member", "not listed in the manifest"),
        ("dotdot", "is not part of an evidence pack"),
        ("absolute", "is not part of an evidence pack"),
        ("symlink", "is not a regular file"),
        ("hardlink", "is not a regular file"),
        ("altered-blob", "does not match the manifest"),
        ("duplicate", "appear twice"),
        ("no-manifest", "has no manifest.json"),
    ],
)
def test_hostile_pack_is_refused_without_writing_outside(
    packs: tuple[Path, Path], tmp_path: Path, fresh_tmp: Path, case: str, message: str
) -> None:
    members = _members(packs[0])
    blob = next(name for name in members if name.startswith("blobs/"))
    extra: list[tarfile.TarInfo] = []
    escape = tmp_path / "x"
    if case == "missing-member":
        del members[blob]
    elif case == "extra-member":
        members["blobs/" + "0" * 64] = b"unlisted"
    elif case == "dotdot":
        extra.append(_regular("../x"))
    elif case == "absolute":
        extra.append(_regular("/etc/x"))
    elif case == "symlink":
        link = tarfile.TarInfo("keys/evil.pub")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        extra.append(link)
    elif case == "hardlink":
        link = tarfile.TarInfo("keys/evil.pub")
        link.type, link.linkname = tarfile.LNKTYPE, "/etc/passwd"
        extra.append(link)
    elif case == "altered-blob":
        members[blob] = members[blob] + b"!"
    elif case == "duplicate":
        extra.append(_regular(blob))
    elif case == "no-manifest":
        del members["manifest.json"]
    (tmp_path / "work").mkdir()
    hostile = _write(tmp_path / "work" / "hostile.tar", members, extra)
    cwd = os.getcwd()
    os.chdir(tmp_path / "work")
    try:
        with pytest.raises(PackError, match=message):
            open_pack(hostile)
    finally:
        os.chdir(cwd)
    assert not escape.exists() and not Path("/etc/x").exists()
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["hostile.tar"]
    assert list(fresh_tmp.iterdir()) == []  # the temporary folder is gone too


def test_blob_named_by_the_wrong_digest_is_refused(
    packs: tuple[Path, Path], tmp_path: Path, fresh_tmp: Path
) -> None:
    members = _members(packs[0])
    manifest = json.loads(members["manifest.json"])
    blob = next(m for m in manifest["members"] if m["role"] == "blob")
    data = members.pop(blob["name"])
    forged = "blobs/" + "ab" * 32  # listed with the right sha256, but not its blake3
    members[forged] = data
    blob["name"] = forged
    members["manifest.json"] = json.dumps(manifest).encode()
    with pytest.raises(PackError, match="whose blake3 is"):
        open_pack(_write(tmp_path / "forged.tar", members))
    assert list(fresh_tmp.iterdir()) == []


def test_opened_pack_is_removed_on_close(packs: tuple[Path, Path], fresh_tmp: Path) -> None:
    with open_pack(packs[0]) as opened:
        assert opened.attestation.is_file() and len(opened.keys) == 1
        assert opened.manifest.kind == "dsse" and opened.manifest.label == "m1"
    assert list(fresh_tmp.iterdir()) == []
