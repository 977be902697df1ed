"""Witness policy files: what is refused, and how a quorum is reached."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from provenance.attest import keys
from provenance.errors import UsageError
from provenance.verify.witness_policy import WitnessPolicy, load


@dataclass(frozen=True)
class Seen:
    keyid: str
    region: str | None = None
    operator: str | None = None


WITNESSES = (
    ("aws", "us-east-1", "acme"),
    ("gcp", "europe-west4", "acme"),
    ("az", "westeurope", "lab"),
)


def _write(tmp_path: Path, groups: str, quorum: str = "clouds", with_labels: bool = True) -> Path:
    text = f'quorum = "{quorum}"\n'
    for name, region, operator in WITNESSES:
        if not (tmp_path / "keys" / f"{name}.pub").exists():
            keys.generate(tmp_path / "keys", name)
        text += f'[[witness]]\nname = "{name}"\nkey = "keys/{name}.pub"\n'
        if with_labels:
            text += f'region = "{region}"\noperator = "{operator}"\n'
    path = tmp_path / "witnesses.toml"
    path.write_text(text + groups)
    return path


def _seen(policy: WitnessPolicy, *names: str) -> list[Seen]:
    out = []
    for name in names:
        table = policy.witnesses[name]
        out.append(Seen(policy.keys[name].keyid, table.region, table.operator))
    return out


def test_k_of_n_and_distinct_regions(tmp_path: Path) -> None:
    group = '[[group]]\nname = "clouds"\nk = 2\nmembers = ["aws", "gcp", "az"]\n'
    policy = load(_write(tmp_path, group))
    assert policy.evaluate(_seen(policy, "aws")) == (
        False,
        "1 of 3 witnesses, 1 region(s), 1 operator(s)",
    )
    assert policy.evaluate(_seen(policy, "aws", "az"))[0]
    by_operator = load(_write(tmp_path, group.replace("k = 2", 'k = 2\nby = "operator"')))
    assert not by_operator.evaluate(_seen(by_operator, "aws", "gcp"))[0]  # both acme
    assert by_operator.evaluate(_seen(by_operator, "gcp", "az"))[0]


def test_groups_nest_and_all_any(tmp_path: Path) -> None:
    groups = (
        '[[group]]\nname = "acme"\nk = "all"\nmembers = ["aws", "gcp"]\n'
        '[[group]]\nname = "clouds"\nk = "any"\nmembers = ["acme", "az"]\n'
    )
    policy = load(_write(tmp_path, groups))
    assert not policy.evaluate(_seen(policy, "aws"))[0]
    assert policy.evaluate(_seen(policy, "aws", "gcp"))[0]
    assert policy.evaluate(_seen(policy, "az"))[0]


@pytest.mark.parametrize(
    ("groups", "quorum", "message"),
    [
        ('[[group]]\nname = "clouds"\nk = 4\nmembers = ["aws", "gcp", "az"]\n', "clouds", "k = 4"),
        ('[[group]]\nname = "clouds"\nk = 1\nmembers = ["nope"]\n', "clouds", "unknown member"),
        ("", "nobody", "names no witness or group"),
        (
            '[[group]]\nname = "a"\nk = 1\nmembers = ["b"]\n'
            '[[group]]\nname = "b"\nk = 1\nmembers = ["a"]\n',
            "a",
            "cycle",
        ),
        ('[[group]]\nname = "clouds"\nk = 1\nmembers = ["aws"]\nextra = 1\n', "clouds", "extra"),
    ],
)
def test_bad_policies_are_refused(tmp_path: Path, groups: str, quorum: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        load(_write(tmp_path, groups, quorum))


def test_one_key_is_one_witness(tmp_path: Path) -> None:
    path = _write(tmp_path, '[[group]]\nname = "clouds"\nk = 1\nmembers = ["aws"]\n')
    path.write_text(path.read_text().replace("keys/gcp.pub", "keys/aws.pub"))
    with pytest.raises(UsageError, match="share a key"):
        load(path)


def test_the_auditors_labels_win(tmp_path: Path) -> None:
    policy = load(_write(tmp_path, '[[group]]\nname = "clouds"\nk = 1\nmembers = ["aws"]\n'))
    keyid = policy.keys["aws"].keyid
    assert policy.labels(keyid, "claimed", "mars-1") == ("acme", "us-east-1")
    assert policy.labels("other", "claimed", "mars-1") == ("claimed", "mars-1")
    bare = load(
        _write(
            tmp_path, '[[group]]\nname = "clouds"\nk = 1\nmembers = ["aws"]\n', with_labels=False
        )
    )
    assert bare.labels(keyid, "claimed", "mars-1") == ("claimed", "mars-1")
