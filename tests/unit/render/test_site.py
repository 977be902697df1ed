"""`prov site`: a static provenance site built from the store or from a folder of evidence.

The Marin milestones are real signed attestations with their blobs in a real store; the site is
built through the real command, its links and downloads are checked as a visitor would, the
verify commands it prints are run, and it is opened in headless Chromium at 375 and 1,400 px.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner, Result

from provenance.attest import keys
from provenance.cli import cli
from provenance.digest import Digest
from tests import marin_fixture as marin
from tests import site_checks
from tests.browser import needs_chromium
from tests.conftest import ROOT

CLAIMS = marin.CLAIMS


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def milestones(tmp_path_factory: pytest.TempPathFactory) -> marin.Marin:
    return marin.build(tmp_path_factory.mktemp("marin"))


@pytest.fixture(scope="module")
def site(milestones: marin.Marin) -> Path:
    out = milestones.root / "site"
    result = run(
        "site", "-o", str(out), "--store", str(milestones.store.root),
        "--key", str(milestones.pub), "--claims", str(CLAIMS), "--title", "Marin <535B>",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "m1: verified" in result.output and "m2: verified" in result.output
    return out


def test_site_json_matches_its_schema_and_the_claims(site: Path) -> None:
    document = json.loads((site / "site.json").read_text())
    schema = json.loads((ROOT / "schemas" / "site.v1.schema.json").read_text())
    jsonschema.validate(document, schema)
    assert json.loads((site / "site.schema.json").read_text()) == schema
    assert [m["label"] for m in document["milestones"]] == ["m1", "m2"]
    assert all(m["verification"]["verified"] for m in document["milestones"])
    claims = {c["name"]: c for c in document["milestones"][0]["claims"]["results"]}
    tokens = claims["total training tokens"]
    assert tokens["verdict"] == "fails" and tokens["derived"] == 18_005_144_633_344
    # the values the expression read, each with the capture it came from
    assert {(r["path"].split(".")[-1], r["value"], r["source"]) for r in tokens["reads"]} == {
        ("train_batch_size", 11264, "hero-run"),
        ("max_seq_len", 4096, "hero-run"),
        ("num_train_steps", 390251, "hero-run"),
    }
    (interval,) = document["intervals"]
    assert (interval["a"], interval["b"], interval["equal"]) == ("m1", "m2", False)
    changed = {s["source"] for s in interval["sources"] if s["status"] == "changed"}
    assert changed == {"harrier-store-artifact", "hero-run", "launcher"}
    assert document["trust"]["keys"][0]["keyid"] == keys.load_verifier(marin_pub(site)).keyid


def marin_pub(site: Path) -> Path:
    return site / "files" / "auditor.pub"


def test_every_link_resolves_and_every_download_matches(site: Path) -> None:
    assert site_checks.check_links(site) > 40
    document = site_checks.check_downloads(site)
    roles = {d["role"] for d in document["downloads"]}
    assert {"attestation", "pack", "key", "diff"} <= roles
    site_checks.check_self_contained(site)
    site_checks.check_structure(site)


def test_the_verify_commands_on_the_site_pass(site: Path) -> None:
    """The exact `prov verify` commands shown, run in the downloads folder."""
    document = json.loads((site / "site.json").read_text())
    commands = [c for m in document["milestones"] for c in m["commands"]]
    assert len(commands) == 4  # an attestation and a pack per milestone
    for command in commands:
        argv = shlex.split(command)
        assert argv[:2] == ["prov", "verify"]
        done = subprocess.run(
            [sys.executable, "-m", "provenance", *argv[1:]],
            cwd=site / "files",
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, command + done.stdout + done.stderr
        assert "verified:" in done.stdout


def test_captured_strings_are_escaped(site: Path) -> None:
    index = (site / "index.html").read_text()
    assert "Marin &lt;535B&gt;" in index and "<535B>" not in index


def test_a_tampered_blob_refuses_to_build_or_is_shown_failed(tmp_path: Path) -> None:
    work = marin.build(tmp_path / "marin")
    blob = next(
        b
        for c in work.s2.captures
        for b in c.blobs
        if c.source == "hero-run" and b.name == "graphql-response.json"
    )
    path = work.store.object_path(Digest.parse(blob.digest))
    path.chmod(0o644)
    path.write_bytes(path.read_bytes().replace(b"390251", b"390139"))
    out = tmp_path / "site"
    args = ["site", "-o", str(out), "--store", str(work.store.root), "--key", str(work.pub)]
    refused = run(*args, "--claims", str(CLAIMS))
    assert refused.exit_code == 1, refused.output
    assert "failed verification" in refused.output and "m2" in refused.output
    assert not out.exists()

    shown = run(*args, "--claims", str(CLAIMS), "--show-failed")
    assert shown.exit_code == 1, shown.output
    assert "m2: FAILED verification" in shown.output
    document = json.loads((out / "site.json").read_text())
    m1, m2 = document["milestones"]
    assert m1["verification"]["verified"] and not m2["verification"]["verified"]
    assert m2["claims"] is None and m2["captures"] == [] and document["intervals"] == []
    assert "blob" in m2["verification"]["error"]
    page = (out / "m" / "m2.html").read_text()
    assert 'class="badge bad">FAILED verification' in page and "badge ok" not in page
    index = (out / "index.html").read_text()
    assert 'class="milestone failed" id="m-m2"' in index
    site_checks.check_links(out)
    site_checks.check_downloads(out)


def test_a_forged_attestation_in_a_folder_is_never_verified(
    milestones: marin.Marin, tmp_path: Path
) -> None:
    folder = tmp_path / "evidence"
    folder.mkdir()
    shutil.copy(milestones.m1, folder)
    # m2 signed by someone else: a valid signature, by a key the auditor did not name
    stranger, _ = keys.generate(tmp_path, "stranger")
    forged = folder / "m2.intoto.jsonl"
    from provenance.store.objects import Store

    # signed aside: the shared store's index must keep naming the real m2
    marin.publish(Store(tmp_path / "aside").init(), milestones.s2, stranger, forged)
    out = tmp_path / "site"
    args = ["site", str(folder), "-o", str(out), "--key", str(milestones.pub)]
    refused = run(*args)
    assert refused.exit_code == 1 and not out.exists()
    assert "m2.intoto.jsonl" in refused.output
    shown = run(*args, "--show-failed")
    assert shown.exit_code == 1
    document = json.loads((out / "site.json").read_text())
    verdicts = {m["label"]: m["verification"]["verified"] for m in document["milestones"]}
    assert verdicts == {"m1": True, "m2": False}
    # without blobs at hand the page says so instead of claiming they were checked
    (m1,) = [m for m in document["milestones"] if m["label"] == "m1"]
    assert "were not checked" in m1["verification"]["summary"]


def test_a_folder_of_packs_and_attestations(site: Path, tmp_path: Path) -> None:
    folder = tmp_path / "downloads"
    shutil.copytree(site / "files", folder)
    out = tmp_path / "again"
    result = run(
        "site", str(folder), "-o", str(out), "--key", str(folder / "auditor.pub"),
        "--claims", str(CLAIMS),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads((out / "site.json").read_text())
    assert [m["label"] for m in document["milestones"]] == ["m1", "m2"]
    assert all(m["pack"] for m in document["milestones"])
    # the packs bring the blobs, so the file contents were compared and checked
    assert all("recorded blake3" in m["verification"]["summary"] for m in document["milestones"])


def test_refuses_without_trust_and_over_a_folder_it_did_not_make(
    milestones: marin.Marin, tmp_path: Path
) -> None:
    no_trust = run("site", "-o", str(tmp_path / "s"), "--store", str(milestones.store.root))
    assert no_trust.exit_code == 2 and "no trust policy" in no_trust.output
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    over = run(
        "site", "-o", str(precious), "--store", str(milestones.store.root),
        "--key", str(milestones.pub),
    )  # fmt: skip
    assert over.exit_code == 2 and "is not a prov site" in over.output
    assert (precious / "thesis.tex").read_text() == "years of work"


@needs_chromium
def test_chromium_renders_every_page_at_phone_and_desktop_width(site: Path, tmp_path: Path) -> None:
    seen = site_checks.check_in_chromium(site, tmp_path / "profile", "site")
    assert seen == {"375": 4, "1400": 4}  # index, two milestones, one diff


def _witness(work: marin.Marin, key: Path, operator: str) -> None:
    """A witness statement over m1, as `prov witness` writes and indexes it."""
    from provenance.attest import statement as statements
    from provenance.attest.signing import DsseAttester
    from provenance.compare import witness
    from provenance.compare.recheck import link
    from provenance.model import WITNESS_PREDICATE_TYPE, Vantage, WitnessedCapture
    from provenance.model import Witness as WitnessModel

    seen = tuple(
        WitnessedCapture(
            source=c.source,
            kind=c.kind,
            digest=c.digest,
            observed=c.digest,
            match="digest",
            started="2026-08-25T00:00:00Z",
            ended="2026-08-25T00:00:01Z",
        )
        for c in work.s1.captures
        if c.source != "hero-run"
    )
    predicate = WitnessModel(
        snapshot=link(work.s1),
        created="2026-08-25T00:00:02Z",
        vantage=Vantage(operator=operator, region="us-east-1"),
        witnessed=seen,
    )
    subject = {"name": statements.subject_name("m1"), "digest": {"sha256": work.s1.sha256().hex}}
    statement = statements.wrap(
        [subject], WITNESS_PREDICATE_TYPE, predicate.model_dump(mode="json")
    )
    attester = DsseAttester([keys.load_signer(key)])
    output = work.root / f"m1.witness.{operator}.intoto.jsonl"
    witness.record(statement, attester, output, work.store)


def test_witnesses_and_rechecks_are_shown_under_their_milestone(tmp_path: Path) -> None:
    from provenance.compare.recheck import link
    from provenance.model import Recheck, Snapshot

    work = marin.build(tmp_path / "marin")
    witness_key, witness_pub = keys.generate(tmp_path, "acme")
    stranger, _ = keys.generate(tmp_path, "stranger")
    _witness(work, witness_key, "acme-audit")
    _witness(work, stranger, "nobody-knows")
    outcomes = {c.source: "same" for c in work.s1.captures} | {"hero-run": "changed"}
    recheck = Snapshot(
        label="m1.recheck-20260930T000000Z",
        created="2026-09-30T00:00:00.000000Z",
        captures=work.s1.captures,
        recheck=Recheck(of=link(work.s1), outcomes=outcomes),  # type: ignore[arg-type]
    )
    marin.publish(
        work.store, recheck, work.key, work.root / "attestations" / "recheck.intoto.jsonl"
    )
    out = tmp_path / "site"
    result = run(
        "site", "-o", str(out), "--store", str(work.store.root),
        "--key", str(work.pub), "--key", str(witness_pub),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = site_checks.check_downloads(out)
    assert [m["label"] for m in document["milestones"]] == ["m1", "m2"]  # a recheck is not one
    (drift,) = document["rechecks"]
    assert drift["milestone"] == "m1" and drift["drift"] and drift["changed"] == ["hero-run"]
    witnesses = {w["vantage"].split(",")[0]: w for w in document["witnesses"]}
    assert witnesses["acme-audit"]["verified"] and witnesses["acme-audit"]["milestone"] == "m1"
    assert "hero-run" not in witnesses["acme-audit"]["detail"]
    assert not witnesses["unknown"]["verified"]
    page = (out / "m" / "m1.html").read_text()
    assert 'class="bad">Recheck' in page and "DRIFT: hero-run changed" in page
    assert 'class="ok">Witness acme.pub' in page
    assert 'class="bad">Witness no trusted key' in page
    site_checks.check_links(out)


def test_a_replayed_attestation_or_pack_is_never_verified(site: Path, tmp_path: Path) -> None:
    """m1's attestation or pack published under m2's name fails the label check."""
    for name in ("intoto.jsonl", "evidence.tar"):
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(site / "files" / f"m1.{name}", folder / f"m2.{name}")
        out = tmp_path / f"site-{name}"
        result = run(
            "site", str(folder), "-o", str(out), "--key", str(site / "files" / "auditor.pub"),
            "--show-failed",
        )  # fmt: skip
        assert result.exit_code == 1, result.output
        (milestone,) = json.loads((out / "site.json").read_text())["milestones"]
        assert not milestone["verification"]["verified"]
        assert "'m1'" in milestone["verification"]["error"], milestone["verification"]


def test_a_signed_note_supersedes_and_a_forged_one_is_marked(tmp_path: Path) -> None:
    from provenance.attest.signing import DsseAttester
    from provenance.compare import notes

    work = marin.build(tmp_path / "marin")
    signed = notes.record(
        work.store, work.s2, "the mix changed at step 108,000", DsseAttester(
            [keys.load_signer(work.key)]
        ), supersedes=("total training tokens",),
    )  # fmt: skip
    stranger, _ = keys.generate(tmp_path, "stranger")
    forged = notes.record(
        work.store, work.s2, "Alice signed off on every number", DsseAttester(
            [keys.load_signer(stranger)]
        ), supersedes=("training steps",),
    )  # fmt: skip
    out = tmp_path / "site"
    result = run(
        "site", "-o", str(out), "--store", str(work.store.root), "--key", str(work.pub),
        "--claims", str(CLAIMS),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = site_checks.check_downloads(out)
    m2 = document["milestones"][1]
    shown = {n["id"]: n for n in m2["notes"]}
    assert shown[signed.id]["verified"] and shown[signed.id]["download"]
    assert not shown[forged.id]["verified"] and shown[forged.id]["download"] is None
    claims = {c["name"]: c for c in m2["claims"]["results"]}
    assert claims["total training tokens"]["superseded_by"]  # the signed note counts
    assert claims["training steps"]["superseded_by"] == []  # the forged one never does
    page = (out / "m" / "m2.html").read_text()
    assert "NOT verified" in page and "Alice signed off" in page
    site_checks.check_links(out)


def test_a_tampered_pack_is_shown_failed(site: Path, tmp_path: Path) -> None:
    """One byte of a blob inside m2's pack changed: the pack's own sha256 list catches it."""
    import tarfile

    folder = tmp_path / "evidence"
    folder.mkdir()
    shutil.copy(site / "files" / "m1.evidence.tar", folder)
    original = site / "files" / "m2.evidence.tar"
    with tarfile.open(original) as tar:
        blob = next(m for m in tar.getmembers() if m.name.startswith("blobs/"))
        offset = blob.offset_data
    data = bytearray(original.read_bytes())
    data[offset] ^= 0x01
    (folder / "m2.evidence.tar").write_bytes(bytes(data))
    out = tmp_path / "site"
    pub = str(site / "files" / "auditor.pub")
    refused = run("site", str(folder), "-o", str(out), "--key", pub)
    assert refused.exit_code == 1 and "m2.evidence.tar" in refused.output and not out.exists()
    shown = run("site", str(folder), "-o", str(out), "--key", pub, "--show-failed")
    assert shown.exit_code == 1
    document = json.loads((out / "site.json").read_text())
    verdicts = {m["id"]: m["verification"]["verified"] for m in document["milestones"]}
    assert verdicts == {"m1": True, "m2": False}
    assert 'class="badge bad">FAILED verification' in (out / "m" / "m2.html").read_text()


def test_a_site_of_sigstore_bundles(project: Path, make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Keyless bundles from a local Sigstore instance, trusted by repository and root."""
    from provenance import config as configuration
    from provenance._testing.sigstore import LocalSigstore
    from provenance.attest import sigstore
    from provenance.capture.snapshot import take
    from provenance.store.objects import Store

    identity = "https://github.com/example/project/.github/workflows/release.yml@refs/tags/v1"
    instance = LocalSigstore(
        signer_identity=identity, issuer="https://token.actions.githubusercontent.com"
    )
    repo = make_repo("code")
    (project / "prov.toml").write_text(
        f'[[sources]]\nname = "launcher"\nkind = "git"\nrepo = "{repo.path}"\nref = "HEAD"\n'
    )
    store = Store(project / ".prov")
    for number, label in enumerate(("v0.9", "v1.0")):
        repo.write("train.py", f"steps = {390139 + 112 * number}\n")
        repo.commit(label)
        config = configuration.load(project / "prov.toml")
        take(config, store, sigstore.SigstoreAttester(instance), label=label)
    root = instance.write_trusted_root(tmp_path / "root.json")
    out = tmp_path / "site"
    result = run(
        "site", "-o", str(out), "--store", str(store.root), "--repository", "example/project",
        "--trusted-root", str(root),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = site_checks.check_downloads(out)
    assert [m["kind"] for m in document["milestones"]] == ["sigstore", "sigstore"]
    assert document["trust"]["identity"].startswith("repository example/project")
    assert document["intervals"][0]["sources_changed"] == 1
    for command in (c for m in document["milestones"] for c in m["commands"]):
        assert "--repository example/project" in command
        done = subprocess.run(
            [sys.executable, "-m", "provenance", *shlex.split(command)[1:]],
            cwd=out / "files",
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, command + done.stdout + done.stderr
    wrong = run(
        "site", "-o", str(tmp_path / "wrong"), "--store", str(store.root),
        "--repository", "example/other", "--trusted-root", str(root),
    )  # fmt: skip
    assert wrong.exit_code == 1 and not (tmp_path / "wrong").exists()


HOSTILE = "<img src=x onerror=alert(1)>\"'&"


def test_hostile_strings_stay_text(milestones: marin.Marin, tmp_path: Path) -> None:
    """A claims file from anyone: its names, sources and string literals never become markup."""
    claims = tmp_path / "claims.toml"
    claims.write_text(
        "[[claims]]\n"
        f"name = {json.dumps(HOSTILE)}\n"
        f"claimed = {json.dumps(HOSTILE)}\n"
        f"source = {json.dumps(HOSTILE)}\n"
        f"derived = {json.dumps(repr(HOSTILE))}\n"
    )
    out = tmp_path / "site"
    result = run(
        "site", "-o", str(out), "--store", str(milestones.store.root),
        "--key", str(milestones.pub), "--claims", str(claims), "--title", HOSTILE,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    from html.parser import HTMLParser

    class Tags(HTMLParser):
        found: list[tuple[str, str]] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.found.extend((tag, name) for name, _ in attrs)
            self.found.append((tag, ""))

    for page in site_checks.pages(out):
        tags = Tags()
        tags.feed(page.read_text())
        assert not [t for t, a in tags.found if t == "img" or a.startswith("on")], page
    index = (out / "index.html").read_text()
    assert "&lt;img src=x onerror=alert(1)&gt;&quot;&#x27;&amp;" in index
    document = json.loads((out / "site.json").read_text())
    (claim,) = document["milestones"][0]["claims"]["results"]
    assert claim["name"] == HOSTILE and claim["verdict"] == "holds"


def test_a_failed_milestone_keeps_its_signed_place(tmp_path: Path) -> None:
    """m1's signature holds but a blob was altered: shown failed, first, at its signed time."""
    work = marin.build(tmp_path / "marin")
    blob = next(b for c in work.s1.captures for b in c.blobs if c.source == "hero-run")
    path = work.store.object_path(Digest.parse(blob.digest))
    path.chmod(0o644)
    path.write_bytes(path.read_bytes() + b"\n")
    out = tmp_path / "site"
    result = run(
        "site", "-o", str(out), "--store", str(work.store.root), "--key", str(work.pub),
        "--show-failed",
    )  # fmt: skip
    assert result.exit_code == 1
    document = json.loads((out / "site.json").read_text())
    shown = [
        (m["label"], m["verification"]["verified"], m["created"]) for m in document["milestones"]
    ]
    assert shown == [("m1", False, work.s1.created), ("m2", True, work.s2.created)]
    assert document["intervals"] == []  # nothing is compared with a failed milestone
