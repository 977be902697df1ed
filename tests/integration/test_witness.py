"""Rechecks and witnesses end to end, through the real CLI, against the local wire-format server.

The server serves the Marin demo's two states (examples/marin/fixtures.py): A as the sources stood
on 2026-08-23, B as on 2026-09-15 (the launcher commits a new mixture phase, the W&B run is
resumed under a new id, the store answers 200 instead of 403, the tracker issue gets comments;
the Hub's token counts stay as they were). The launcher is a real git repository.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import Result

from provenance._testing.server import LocalServer
from tests.conftest import ROOT, GitRepo

SOURCES = (
    "hero-run",
    "launcher",
    "store-artifact",
    "store-listing",
    "token-counts",
    "tracker-issue",
)


def _marin_fixtures() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "marin_demo_fixtures", ROOT / "examples" / "marin" / "fixtures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


MARIN = _marin_fixtures()


@dataclass
class Run:
    """A project folder with prov.toml, keys, a launcher repository and the server in state A."""

    root: Path
    repo: GitRepo
    server: LocalServer
    prov: Callable[..., Result]

    def state(self, milestone: int) -> None:
        """Move every source to a milestone: a launcher commit, and the server's fixtures."""
        for relative, text in MARIN.launcher_files(milestone).items():
            self.repo.write(relative, text)
        commit = self.repo.commit(f"milestone {milestone}")
        self.server.fixtures = MARIN.server_fixtures(milestone, commit)

    def ok(self, *args: str, code: int = 0) -> Result:
        result = self.prov(*args)
        assert result.exit_code == code, result.output
        return result

    def json(self, *args: str, code: int = 0) -> Any:
        return json.loads(self.ok(*args, "--format", "json", code=code).stdout)


def _config(server: LocalServer, repo: Path) -> str:
    run = f"marin-community/marin_moe/{MARIN.RUNS[1]}"
    return f"""
[[sources]]
name = "launcher"
kind = "git"
repo = "{repo}"
ref = "main"
paths = ["experiments/grug/moe_hero_ep"]

[[sources]]
name = "hero-run"
kind = "wandb"
run = "{run}"

[[sources]]
name = "token-counts"
kind = "huggingface"
repo = "marin-community/token-counts"
repo_type = "dataset"
files = ["data/token_counts.csv"]

[[sources]]
name = "store-artifact"
kind = "http"
url = "{server.url}/marin/datakit/store_4d2e363d/.artifact.json"

[[sources]]
name = "store-listing"
kind = "http"
url = "{server.url}/marin?list-type=2&prefix=datakit/store_4d2e363d/"

[[sources]]
name = "tracker-issue"
kind = "http"
url = "{server.url}/repos/marin-community/marin/issues/8435"
headers = {{ Accept = "application/vnd.github+json" }}
"""


@pytest.fixture
def run(
    project: Path, prov: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Run]:
    repo = GitRepo(project / "marin")
    with LocalServer() as server:
        monkeypatch.setenv("WANDB_BASE_URL", server.url)
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("WANDB_API_KEY", MARIN.wandb_api_key())
        monkeypatch.delenv("HF_TOKEN", raising=False)
        marin = Run(project, repo, server, prov)
        marin.state(1)
        (project / "prov.toml").write_text(_config(server, repo.path))
        for name in ("publisher", "aws", "gcp", "azure"):
            marin.ok("keygen", name, "--dir", "keys")
        marin.ok("snapshot", "--label", "m1", "--key", "keys/publisher.key")
        yield marin


ATTESTATION = "attestations/m1.intoto.jsonl"


def _outcomes(report: dict[str, Any]) -> dict[str, str]:
    return {s["source"]: s["outcome"] for s in report["sources"]}


def _schema_valid(document: dict[str, Any]) -> dict[str, Any]:
    """The JSON output matches the committed schema its ``schema`` tag names."""
    import jsonschema

    name = document["schema"].rsplit("/", 2)[-2] + ".v1.schema.json"
    schema = json.loads((ROOT / "schemas" / name).read_text())
    assert schema["$id"] == document["schema"]
    jsonschema.validate(document, schema)
    return document


def test_recheck_in_the_same_state_is_all_same_then_drift_is_exactly_what_changed(
    run: Run,
) -> None:
    same = run.json("recheck", ATTESTATION)
    assert _outcomes(same) == dict.fromkeys(SOURCES, "same")
    assert same["same"] is True and same["counts"]["same"] == len(SOURCES)
    # The http answers carry an elapsed time that differs: the same content, not the same digest.
    matches = {s["source"]: s["match"] for s in same["sources"]}
    assert matches["store-artifact"] == "content" and matches["launcher"] == "digest"

    run.state(2)
    drift = _schema_valid(run.json("recheck", ATTESTATION, code=1))
    assert _outcomes(drift) == {
        "hero-run": "gone",  # B serves the run resumed under a new id; the old one is no more
        "launcher": "changed",  # main moved to the commit with the new mixture phase
        "store-artifact": "changed",  # 403 AccessDenied -> 200
        "store-listing": "changed",
        "token-counts": "same",  # the one source whose fixture is the same in both states
        "tracker-issue": "changed",  # 41 -> 67 comments
    }
    artifact = next(s for s in drift["sources"] if s["source"] == "store-artifact")
    changes = {c["path"]: c for d in artifact["diff"]["documents"] for c in d["changes"]}
    assert (changes["status"]["old"], changes["status"]["new"]) == (403, 200)
    assert not changes["status"]["volatile"]

    text = run.ok("recheck", ATTESTATION, "--key", "keys/publisher.key", code=1).stdout
    assert "gone        hero-run [wandb]" in text and "1 same, 4 changed, 1 gone" in text
    signed = next((run.root / "attestations").glob("m1.recheck-*.intoto.jsonl"))
    verified = run.json("verify", str(signed), "--key", "keys/publisher.pub", "--store", ".prov")
    assert verified["verified"] is True
    shown = run.json("show", str(signed))["snapshot"]
    assert shown["recheck"]["of"]["label"] == "m1"
    assert shown["recheck"]["outcomes"]["hero-run"] == "gone"
    original = run.json("show", ATTESTATION)
    assert shown["recheck"]["of"]["sha256"] == original["sha256"]
    # The signed recheck is a snapshot like any other: diff shows the drift from its blobs.
    assert run.prov("diff", ATTESTATION, str(signed)).exit_code == 1


def test_an_unsigned_recheck_writes_nothing(run: Run) -> None:
    before = sorted(p.name for p in (run.root / "attestations").iterdir())
    run.ok("recheck", ATTESTATION)
    assert sorted(p.name for p in (run.root / "attestations").iterdir()) == before


def _witness(run: Run, name: str, region: str, *extra: str, code: int = 0) -> Any:
    return _schema_valid(run.json(
        "witness", ATTESTATION, "--key", f"keys/{name}.key", "--operator", name,
        "--region", region, *extra, code=code,
    ))  # fmt: skip


def _verify(run: Run, *args: str, code: int = 0) -> Any:
    return run.json("verify", ATTESTATION, "--key", "keys/publisher.pub", *args, code=code)


def test_two_witnesses_meet_a_requirement_of_two_and_one_does_not(run: Run) -> None:
    aws = _witness(run, "aws", "us-east-1")
    gcp = _witness(run, "gcp", "europe-west4")
    assert sorted(aws["witnessed"]) == sorted(SOURCES) and gcp["statement"]

    both = _verify(
        run, "--key", "keys/aws.pub", "--key", "keys/gcp.pub", "--require-witnesses", "2"
    )
    captures = {c["source"]: c for c in both["observers"]["captures"]}
    assert set(captures) == set(SOURCES)
    for capture in captures.values():
        assert (capture["signers"], capture["witnesses"], capture["met"]) == (3, 2, True)
        assert capture["level"] == "multi-vantage"
        assert {o["region"] for o in capture["observers"] if o["role"] == "witness"} == {
            "us-east-1",
            "europe-west4",
        }
    assert any("provider's word" in t for t in captures["hero-run"]["not_proven"])

    one = _verify(run, "--key", "keys/aws.pub", "--require-witnesses", "2", code=1)
    assert one["verified"] is False
    assert {c["witnesses"] for c in one["observers"]["captures"]} == {1}
    assert [s["status"] for s in one["steps"] if s["name"] == "witnesses"] == ["failed"]


def test_a_witness_whose_capture_differed_signs_nothing_for_it(run: Run) -> None:
    _witness(run, "aws", "us-east-1")
    run.state(2)
    late = _witness(run, "gcp", "europe-west4", code=1)
    assert late["witnessed"] == ["token-counts"]
    statement = Path(late["statement"])
    payload = json.loads(_payload(statement))
    assert [c["source"] for c in payload["predicate"]["witnessed"]] == ["token-counts"]

    report = _verify(
        run, "--key", "keys/aws.pub", "--key", "keys/gcp.pub", "--require-witnesses", "2", code=1
    )
    counted = {c["source"]: c["witnesses"] for c in report["observers"]["captures"]}
    assert counted == {**dict.fromkeys(SOURCES, 1), "token-counts": 2}


def _payload(path: Path) -> str:
    import base64

    return base64.b64decode(json.loads(path.read_text())["payload"]).decode()


def test_quorum_counts_distinct_keys_never_statements(run: Run) -> None:
    _witness(run, "aws", "us-east-1")
    _witness(run, "aws", "us-east-1", "-o", "again.intoto.jsonl")
    # The publisher's own key witnessing its snapshot is not an independent witness.
    run.ok("witness", ATTESTATION, "--key", "keys/publisher.key", "-o", "self.intoto.jsonl")
    paths = [str(p) for p in (run.root / "attestations").glob("m1.witness.*.intoto.jsonl")]
    report = _verify(
        run,
        "--key",
        "keys/aws.pub",
        *[a for p in [*paths, "again.intoto.jsonl", "self.intoto.jsonl"] for a in ("--witness", p)],
        "--require-witnesses",
        "2",
        code=1,
    )
    assert {c["witnesses"] for c in report["observers"]["captures"]} == {1}
    assert {c["signers"] for c in report["observers"]["captures"]} == {2}
    assert len(report["observers"]["witnesses"]) == 3


def test_a_statement_for_another_capture_is_not_counted(run: Run) -> None:
    """A witness statement signed by a trusted key, but for another snapshot, counts nothing."""
    run.ok("snapshot", "--label", "m1b", "--key", "keys/publisher.key")
    run.ok(
        "witness", "attestations/m1b.intoto.jsonl", "--key", "keys/aws.key",
        "-o", "other.intoto.jsonl",
    )  # fmt: skip
    report = _verify(
        run, "--key", "keys/aws.pub", "--witness", "other.intoto.jsonl",
        "--require-witnesses", "1", code=1,
    )  # fmt: skip
    [check] = report["observers"]["witnesses"]
    assert check["verified"] is False and "not this one" in check["problem"]


def test_a_witness_policy_groups_witnesses_by_region(run: Run) -> None:
    _witness(run, "aws", "us-east-1")
    _witness(run, "gcp", "us-east-1")
    policy = run.root / "witnesses.toml"
    policy.write_text(
        'quorum = "regions"\n'
        + "".join(
            f'[[witness]]\nname = "{n}"\nkey = "keys/{n}.pub"\nregion = "{r}"\n'
            for n, r in (("aws", "us-east-1"), ("gcp", "europe-west4"), ("azure", "westeurope"))
        )
        + '[[group]]\nname = "regions"\nk = 2\nby = "region"\nmembers = ["aws", "gcp", "azure"]\n'
    )
    # The policy's labels win: gcp said us-east-1, the auditor knows it as europe-west4.
    report = _verify(run, "--witness-policy", str(policy))
    capture = report["observers"]["captures"][0]
    assert capture["met"] is True
    assert capture["quorum"] == "2 of 3 witnesses, 2 region(s), 2 operator(s)"
    # Asked for both, both must hold: the policy's two regions are not three witnesses.
    both = _verify(run, "--witness-policy", str(policy), "--require-witnesses", "3", code=1)
    assert both["observers"]["captures"][0]["quorum"].startswith("2 of 3 required witnesses, ")

    policy.write_text(policy.read_text().replace('"europe-west4"', '"us-east-1"'))
    failed = _verify(run, "--witness-policy", str(policy), code=1)
    assert not any(c["met"] for c in failed["observers"]["captures"])


def test_independent_verifiers_accept_the_envelopes(run: Run) -> None:
    """securesystemslib verifies the DSSE signatures; in-toto's reference library the statements."""
    from google.protobuf.json_format import ParseDict
    from in_toto_attestation.v1 import resource_descriptor_pb2, statement
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import SSlibKey

    from provenance.attest import keys

    witness = Path(_witness(run, "aws", "us-east-1")["statement"])
    run.ok("recheck", ATTESTATION, "--key", "keys/publisher.key")
    recheck = next((run.root / "attestations").glob("m1.recheck-*.intoto.jsonl"))
    for path, key in ((witness, "aws"), (recheck, "publisher")):
        envelope = Envelope.from_dict(json.loads(path.read_text()))
        verifier = keys.load_verifier(run.root / "keys" / f"{key}.pub")
        accepted = envelope.verify([SSlibKey.from_crypto(verifier.public, keyid=verifier.keyid)], 1)
        assert list(accepted) == [verifier.keyid]
        document = json.loads(_payload(path))
        subjects = [
            ParseDict(s, resource_descriptor_pb2.ResourceDescriptor()) for s in document["subject"]
        ]
        statement.Statement(subjects, document["predicateType"], document["predicate"]).validate()


def test_log_shows_witnesses_and_rechecks_under_their_snapshot(run: Run) -> None:
    _witness(run, "aws", "us-east-1")
    run.state(2)
    run.ok("recheck", ATTESTATION, "--key", "keys/publisher.key", code=1)
    text = run.ok("log").stdout
    assert text.count("m1.recheck-") == 1  # shown under m1, not as a milestone of its own
    assert "witness aws (us-east-1): 6 capture(s) witnessed" in text
    assert "recheck m1.recheck-" in text and "1 gone (hero-run)" in text
    document = run.json("log")
    [item] = document["snapshots"]
    assert item["label"] == "m1"
    assert [w["operator"] for w in item["witnesses"]] == ["aws"]
    assert item["rechecks"][0]["outcomes"]["token-counts"] == "same"
    # The index is unsigned: a witness is shown as verified only with the auditor's keys.
    assert "6 capture(s) witnessed; not verified" in text
    trusted = run.ok("log", "--key", "keys/publisher.pub", "--key", "keys/aws.pub").stdout
    assert "6 capture(s) witnessed; verified by keys/aws.pub" in trusted
    other = run.ok("log", "--key", "keys/publisher.pub", "--key", "keys/gcp.pub").stdout
    assert "refused: not signed by a trusted key" in other


def test_an_https_capture_is_tls_bound_and_rechecks_with_the_rechecker_s_trust(
    project: Path, prov: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    from provenance._testing.fixtures import Fixtures, Route

    routes = [Route("/doc", body=b'{"ok": true}', headers=[("Content-Type", "application/json")])]
    with LocalServer(Fixtures(routes=routes), tls=True) as server:
        (project / "prov.toml").write_text(
            f'[[sources]]\nname = "doc"\nkind = "http"\nurl = "{server.url}/doc"\n'
            f'ca_bundle = "{server.ca_file}"\n'
        )
        assert prov("keygen", "k").exit_code == 0
        assert prov("snapshot", "--label", "t1", "--key", "keys/k.key").exit_code == 0
        attestation = "attestations/t1.intoto.jsonl"
        result = prov("verify", attestation, "--key", "keys/k.pub", "--format", "json")
        [capture] = json.loads(result.stdout)["observers"]["captures"]
        assert capture["levels"] == ["observed", "tls-bound"]
        # The CA bundle is the capturer's setting, not part of the request: the rechecker's own
        # trust decides. Without it, the local CA is unknown and nothing can be observed now.
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        untrusted = json.loads(prov("recheck", attestation, "--format", "json").stdout)
        assert _outcomes(untrusted) == {"doc": "failed-now"}
        monkeypatch.setenv("SSL_CERT_FILE", str(server.ca_file))
        trusted = json.loads(prov("recheck", attestation, "--format", "json").stdout)
        assert _outcomes(trusted) == {"doc": "same"}


def test_a_witness_records_the_address_a_source_saw_it_from(
    project: Path, prov: Callable[..., Result]
) -> None:
    from provenance._testing.fixtures import Fixtures, Route

    route = Route("/doc", body=b"same", client_address_header="X-Client-IP")
    with LocalServer(Fixtures(routes=[route])) as server:
        (project / "prov.toml").write_text(
            f'[[sources]]\nname = "doc"\nkind = "http"\nurl = "{server.url}/doc"\n'
        )
        for name in ("pub", "w"):
            assert prov("keygen", name).exit_code == 0
        assert prov("snapshot", "--label", "v1", "--key", "keys/pub.key").exit_code == 0
        result = prov(
            "witness", "attestations/v1.intoto.jsonl", "--key", "keys/w.key", "--format", "json"
        )
    assert result.exit_code == 0, result.output
    vantage = json.loads(result.stdout)["vantage"]
    assert (vantage["reported_ip"], vantage["reported_by"]) == ("127.0.0.1", "doc: x-client-ip")
    assert vantage["operator"]  # the host name, when no --operator is given
    statement = json.loads(_payload(Path(json.loads(result.stdout)["statement"])))
    assert statement["predicate"]["vantage"]["reported_ip"] == "127.0.0.1"  # signed, not only shown


def test_log_does_not_take_a_hand_edited_witness_index_at_its_word(run: Run) -> None:
    _witness(run, "aws", "us-east-1")
    [entry] = (run.root / ".prov" / "witnesses").glob("*.json")
    forged = json.loads(entry.read_text())
    forged["witness"]["vantage"]["region"] = "eu-north-1"
    entry.write_text(json.dumps(forged))
    text = run.ok("log").stdout
    assert "witness aws (eu-north-1): 6 capture(s) witnessed" not in text
    assert "witness index entry (aws (eu-north-1)) refused: the index entry does not match" in text


def test_an_evidence_pack_can_be_rechecked_with_its_own_blobs(run: Run) -> None:
    run.ok("pack", ATTESTATION, "-o", "m1.evidence.tar", "--key", "keys/publisher.pub")
    (run.root / ".prov").rename(run.root / "elsewhere")  # only the pack holds the blobs now
    run.state(2)
    report = run.json("recheck", "m1.evidence.tar", code=1)
    assert _outcomes(report)["store-artifact"] == "changed"
    launcher = next(s for s in report["sources"] if s["source"] == "launcher")
    # The attested files are read from the pack, the new ones from the recheck's own store.
    changed = [f for f in launcher["diff"]["files"] if f["change"] == "changed"]
    assert changed and {f["content"] for f in changed} == {"compared"}
    assert not (run.root / ".prov").exists()  # an unsigned recheck keeps nothing


def test_witness_statements_beside_a_pack_are_counted(run: Run) -> None:
    statement = Path(_witness(run, "aws", "us-east-1")["statement"])
    run.ok("pack", ATTESTATION, "-o", "packs/m1.evidence.tar", "--key", "keys/publisher.pub")
    statement.rename(run.root / "packs" / statement.name)
    report = run.json(
        "verify", "packs/m1.evidence.tar", "--key", "keys/publisher.pub", "--key", "keys/aws.pub",
        "--require-witnesses", "1",
    )  # fmt: skip
    assert {c["witnesses"] for c in report["observers"]["captures"]} == {1}


def test_a_witness_statement_verifies_on_its_own(run: Run) -> None:
    statement = _witness(run, "aws", "us-east-1")["statement"]
    alone = run.ok("verify", statement, "--key", "keys/aws.pub").stdout
    assert "verified: a signed witness about m1" in alone
    assert "a witness of 6 capture(s) of m1 from aws, us-east-1" in alone
    assert run.prov("verify", statement, "--key", "keys/gcp.pub").exit_code == 1


def test_bad_input_says_what(run: Run) -> None:
    missing = run.prov("recheck", "attestations/nope.intoto.jsonl")
    assert missing.exit_code == 3 and "nope.intoto.jsonl" in missing.output  # missing input
    assert run.prov("witness", ATTESTATION).exit_code == 2  # --key is required
    assert run.prov("verify", ATTESTATION, "--key", "keys/publisher.pub",
                    "--require-witnesses", "0").exit_code == 2  # fmt: skip
    (run.root / "bad.toml").write_text('quorum = "x"\n[[witness]]\nname = "x"\n')
    bad = run.prov(
        "verify", ATTESTATION, "--key", "keys/publisher.pub", "--witness-policy", "bad.toml"
    )
    assert bad.exit_code == 2 and "bad.toml" in bad.output and "key" in bad.output


def test_a_keyless_snapshot_counts_its_identity_and_its_witnesses(
    project: Path, make_repo: Callable[[str], GitRepo], prov: Callable[..., Result], tmp_path: Path
) -> None:
    """The publisher is a Sigstore identity (a local instance), the witness a key."""
    from provenance import config as configuration
    from provenance._testing.sigstore import LocalSigstore
    from provenance.attest import sigstore
    from provenance.capture.snapshot import take
    from provenance.store.objects import Store

    identity = "https://github.com/example/project/.github/workflows/release.yml@refs/tags/v1.0"
    issuer = "https://token.actions.githubusercontent.com"
    instance = LocalSigstore(signer_identity=identity, issuer=issuer)
    repo = make_repo("code")
    repo.write("train.py", "steps = 390251\n")
    repo.commit("launcher")
    (project / "prov.toml").write_text(
        f'[[sources]]\nname = "launcher"\nkind = "git"\nrepo = "{repo.path}"\nref = "HEAD"\n'
    )
    config = configuration.load(project / "prov.toml")
    bundle = take(
        config, Store(project / ".prov"), sigstore.SigstoreAttester(instance), label="v1.0"
    ).attestation
    root = instance.write_trusted_root(tmp_path / "trusted_root.json")
    assert prov("keygen", "w").exit_code == 0
    witnessed = prov("witness", str(bundle), "--key", "keys/w.key", "--operator", "w")
    assert witnessed.exit_code == 0, witnessed.output
    result = prov(
        "verify", str(bundle), "--cert-identity", identity, "--cert-oidc-issuer", issuer,
        "--trusted-root", str(root), "--key", "keys/w.pub", "--require-witnesses", "1",
        "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    [capture] = json.loads(result.stdout)["observers"]["captures"]
    roles = {o["role"]: o["keyid"] for o in capture["observers"]}
    assert identity in roles["publisher"] and capture["witnesses"] == 1
    assert "time-anchored" in capture["levels"]  # the transparency log's integrated time
