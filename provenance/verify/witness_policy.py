"""A witness policy: whom an auditor trusts to witness, and how many of them must agree.

In the spirit of Sigsum's policy format (witnesses, groups with a threshold, one quorum), written
as TOML next to prov.toml's style::

    quorum = "clouds"                # the group (or witness) that must be satisfied

    [[witness]]
    name = "aws"
    key = "keys/aws.pub"             # relative to this file
    operator = "acme"                # the auditor's labels; without them the statement's own
    region = "us-east-1"

    [[group]]
    name = "clouds"
    k = 2                            # a number, "all" or "any"
    members = ["aws", "gcp", "azure"]  # witnesses or other groups
    by = "region"                    # optional: count distinct regions (or operators)

A group holds for a capture when ``k`` of its members hold (a witness holds when its key signed
a verified witness statement that lists the capture); with ``by``, when the members that hold
span ``k`` distinct regions or operators. Trust comes from this file: its keys verify witness
statements; the labels a statement gives are used only where the file gives none.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from provenance.attest import keys as keyfiles
from provenance.attest.keys import VerifyingKey
from provenance.errors import UsageError

__all__ = ["WitnessPolicy", "load"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _WitnessTable(_Strict):
    name: str = Field(min_length=1)
    key: str
    operator: str | None = None
    region: str | None = None


class _GroupTable(_Strict):
    name: str = Field(min_length=1)
    k: int | Literal["all", "any"]
    members: list[str] = Field(min_length=1)
    by: Literal["region", "operator"] | None = None


class _PolicyFile(_Strict):
    quorum: str
    witness: list[_WitnessTable] = Field(min_length=1)
    group: list[_GroupTable] = Field(default_factory=list)


class Seen(Protocol):
    @property
    def keyid(self) -> str: ...

    @property
    def region(self) -> str | None: ...

    @property
    def operator(self) -> str | None: ...


@dataclass(frozen=True)
class WitnessPolicy:
    path: str
    quorum: str
    witnesses: dict[str, _WitnessTable]
    keys: dict[str, VerifyingKey]  # witness name -> key
    groups: dict[str, _GroupTable]

    @property
    def verifiers(self) -> list[VerifyingKey]:
        return list(self.keys.values())

    def labels(
        self, keyid: str, operator: str | None, region: str | None
    ) -> tuple[str | None, str | None]:
        """The auditor's labels for a key, else the statement's own."""
        for name, key in self.keys.items():
            if key.keyid == keyid:
                table = self.witnesses[name]
                return table.operator or operator, table.region or region
        return operator, region

    def _need(self, group: _GroupTable) -> int:
        if group.k == "all":
            return len(group.members)
        if group.k == "any":
            return 1
        return group.k

    def _holds(self, name: str, seen: dict[str, Seen]) -> tuple[bool, list[Seen]]:
        if name in self.keys:
            found = seen.get(self.keys[name].keyid)
            return found is not None, [found] if found else []
        group = self.groups[name]
        held: list[Seen] = []
        members = 0
        for member in group.members:
            ok, who = self._holds(member, seen)
            members += ok
            held.extend(who)
        if group.by is not None:
            values = {getattr(s, group.by) for s in held if getattr(s, group.by)}
            return len(values) >= self._need(group), held
        return members >= self._need(group), held

    def evaluate(self, seen: Sequence[Seen]) -> tuple[bool, str]:
        """Whether the quorum holds for one capture, and the line that says how far it got."""
        by_key = {s.keyid: s for s in seen}
        ok, held = self._holds(self.quorum, by_key)
        total = len(self.keys)
        regions = {s.region for s in held if s.region}
        operators = {s.operator for s in held if s.operator}
        line = (
            f"{len(held)} of {total} witnesses, {len(regions)} region(s), "
            f"{len(operators)} operator(s)"
        )
        return ok, line

    def describe(self) -> str:
        group = self.groups.get(self.quorum)
        if group is None:
            return f"{self.path}: quorum {self.quorum!r} (one witness)"
        by = f" distinct {group.by}s" if group.by else ""
        return f"{self.path}: quorum {self.quorum!r}, {group.k} of {len(group.members)}{by}"


def load(path: Path) -> WitnessPolicy:
    """Read and check a witness policy file; UsageError says what is wrong and where."""
    try:
        raw: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise UsageError(f"cannot read the witness policy {path}", cause=str(e)) from e
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"{path} is not valid TOML", cause=str(e)) from e
    try:
        parsed = _PolicyFile.model_validate(raw)
    except ValidationError as e:
        error = e.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise UsageError(f"{path}: {where}: {error['msg']}", hint="see docs/evidence.md") from e
    witnesses = {w.name: w for w in parsed.witness}
    groups = {g.name: g for g in parsed.group}
    names = set(witnesses) | set(groups)
    if len(names) != len(parsed.witness) + len(parsed.group):
        raise UsageError(f"{path}: witness and group names must be unique")
    if parsed.quorum not in names:
        raise UsageError(f"{path}: quorum {parsed.quorum!r} names no witness or group")
    for group in parsed.group:
        for member in group.members:
            if member not in names:
                raise UsageError(f"{path}: group {group.name!r}: unknown member {member!r}")
        if isinstance(group.k, int) and not 1 <= group.k <= len(group.members):
            raise UsageError(
                f"{path}: group {group.name!r}: k = {group.k} of {len(group.members)} members"
            )
    _check_cycles(path, groups)
    loaded = {
        name: keyfiles.load_verifier((path.parent / table.key).expanduser())
        for name, table in witnesses.items()
    }
    keyids = [k.keyid for k in loaded.values()]
    if len(set(keyids)) != len(keyids):
        raise UsageError(
            f"{path}: two witnesses share a key",
            hint="a quorum counts distinct keys: one key is one witness",
        )
    return WitnessPolicy(str(path), parsed.quorum, witnesses, loaded, groups)


def _check_cycles(path: Path, groups: dict[str, _GroupTable]) -> None:
    def visit(name: str, trail: tuple[str, ...]) -> None:
        if name in trail:
            raise UsageError(
                f"{path}: groups refer to each other in a cycle: {' -> '.join((*trail, name))}"
            )
        for member in groups[name].members if name in groups else []:
            visit(member, (*trail, name))

    for name in groups:
        visit(name, ())
