"""The replay check for attestations attached to an image (`prov verify oci://`).

A file is checked against the label its name implies; an attachment against the name its
layer carries (as `prov push` writes it), or ``--expect-label``. Against a real registry
(Debian's docker-registry, as tests/integration/test_oci.py runs it).
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.oci_support import Pusher, Registry, running
from tests.reliability import figures
from tests.reliability.evidence import Evidence, run_cli

pytestmark = pytest.mark.skipif(
    shutil.which("docker-registry") is None,
    reason="needs a local OCI registry: apt-get install docker-registry (.ci/run does)",
)


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    with running(tmp_path_factory.mktemp("registry")) as started:
        yield started


@pytest.fixture
def image(registry: Registry) -> Iterator[str]:
    pusher = Pusher(registry)
    repository = f"team/trainer-{uuid.uuid4().hex[:8]}"
    pusher.image(repository, "v1", {})
    yield f"oci://{registry.host}/{repository}:v1"
    pusher.close()


def attach(ev: Evidence, label: str, name: str, image: str, tmp_path: Path) -> None:
    folder = tmp_path / uuid.uuid4().hex
    folder.mkdir()
    renamed = folder / name
    renamed.write_bytes(ev.attestation(label).read_bytes())
    code, out, err, unexpected = run_cli("push", str(renamed), image, "--plain-http")
    assert code == 0 and unexpected is None, out + err


def verify(ev: Evidence, image: str, *extra: str) -> tuple[int, str, str]:
    code, out, err, unexpected = run_cli(
        "verify", image, "--key", ev.pub("alice"), "--plain-http", *extra
    )
    assert unexpected is None, unexpected
    return code, out, err


def test_an_attachment_is_checked_against_the_label_its_name_gives(
    evidence: Evidence, image: str, tmp_path: Path
) -> None:
    attach(evidence, "m2", "m2.intoto.jsonl", image, tmp_path)
    code, out, err = verify(evidence, image)
    assert code == 0, out + err
    assert "signed label 'm2' is the one expected" in out

    # m1, genuine and signed, attached as if it were m2: the replay.
    attach(evidence, "m1", "m2.intoto.jsonl", image, tmp_path)
    code, out, err = verify(evidence, image)
    assert code == 1, out + err
    assert "the attestation is signed for label 'm1', not 'm2'" in out
    assert "1 of 2 attestation(s)" in err
    figures.count("oci replay", "replayed attachments refused")


def test_expect_label_applies_to_every_attachment(
    evidence: Evidence, image: str, tmp_path: Path
) -> None:
    attach(evidence, "m1", "m1.intoto.jsonl", image, tmp_path)
    assert verify(evidence, image)[0] == 0
    code, out, _ = verify(evidence, image, "--expect-label", "m2")
    assert code == 1 and "signed for label 'm1', not 'm2'" in out
    assert verify(evidence, image, "--expect-label", "m1")[0] == 0
    figures.count("oci replay", "replayed attachments refused")


def test_an_attachment_without_a_label_name_says_so(
    evidence: Evidence, image: str, tmp_path: Path
) -> None:
    attach(evidence, "m1", "attestation.json", image, tmp_path)
    code, out, err = verify(evidence, image)
    assert code == 0, out + err
    assert "the signed label was not checked (pass --expect-label)" in out
