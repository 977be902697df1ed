"""Diff properties over snapshot-shaped data: nothing is lost, nothing is invented.

For snapshots A and B made of captures of every kind (git, huggingface, http, wandb, listing,
and kinds the differ does not know), with structured files and bodies held as blobs:

* ``diff(A, A)`` is empty: equal, no counts, every capture unchanged, nothing listed;
* every document prov compares (the capture's status / establishes / error, its request, its
  data, and each structured file or body it holds) is either reported with an RFC 6902 patch
  that turns A's version into B's, replayed by an independent implementation (python-json-
  patch), or is the same on both sides: a difference is never dropped;
* sources added and removed are exactly the set differences, and every diff can be signed
  (its predicate has a canonical form).

B is either drawn on its own or, more often, made from A by edits (the diffs people read).
"""

from __future__ import annotations

import contextlib
import copy
import json
from typing import Any

import jsonpatch
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from provenance._internal import canonical, documents
from provenance.compare.diff import compare, compare_snapshots, statement
from provenance.compare.evidence import Evidence as DiffEvidence
from provenance.digest import blake3_bytes
from provenance.model import Capture, Snapshot
from tests.reliability import figures
from tests.reliability.evidence import Evidence
from tests.reliability.test_properties import ran

KINDS = ("git", "huggingface", "http", "wandb", "listing", "oci", "other-kind")
TIME = "2026-08-24T15:00:00Z"

# JSON as captures hold it.
# A fixed alphabet (escapes, non-ASCII, astral) keeps generation cheap: a snapshot is big.
text = st.text('abXY09 _-./~\\"\u00e9\u20ac\U0001f600', max_size=6)
leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | text
    # What a snapshot may hold too: any finite double, integers of hundreds of digits.
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(-(10**400), 10**400)
)
names = st.sampled_from(
    ["id", "path", "name", "key", "step", "lr", "_runtime", "status", "x", "data.mix", "a/b~c"]
)
values = st.recursive(
    leaf,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(names | text, inner, max_size=4)
        | st.lists(  # records with an identity, as phases or files are
            st.fixed_dictionaries({"id": st.integers(0, 5)}, optional={"v": inner}),
            max_size=4,
            unique_by=lambda r: r["id"],
        )
    ),
    max_leaves=8,
)
objects = st.dictionaries(names | text, values, max_size=4)


class Blobs:
    """A blob source holding what the strategies made (``get`` as a store would)."""

    def __init__(self) -> None:
        self.held: dict[str, bytes] = {}

    def put(self, data: bytes) -> str:
        digest = str(blake3_bytes(data))
        self.held[digest] = data
        return digest

    def get(self, digest: str) -> bytes | None:
        return self.held.get(digest)


BLOBS = Blobs()  # content-addressed: sharing one across examples changes nothing


@st.composite
def structured_file(draw: st.DrawFn) -> tuple[str, bytes]:
    path = draw(st.sampled_from(["config.json", "conf/train.yaml", "data/mix.json"]))
    document = draw(objects)
    if path.endswith(".yaml"):
        return path, yaml.safe_dump(document, allow_unicode=True).encode()
    return path, json.dumps(document).encode()


@st.composite
def captures(draw: st.DrawFn, source: str, kind: str | None = None) -> Capture:
    kind = kind or draw(st.sampled_from(KINDS))
    request: dict[str, Any] = draw(objects)
    data: dict[str, Any] = draw(objects)
    blobs: list[dict[str, Any]] = []
    if kind in ("git", "huggingface"):
        files = []
        for path, content in draw(
            st.lists(structured_file(), max_size=2, unique_by=lambda f: f[0])
        ):
            digest = BLOBS.put(content)
            blobs.append({"name": path, "digest": digest, "size": len(content)})
            files.append(
                {"path": path, "oid": digest[-40:], "mode": "100644", "size": len(content)}
            )
        data["files"] = files
    elif kind == "http":
        data["status"] = draw(st.sampled_from([200, 403, 404, 503]))
        data["headers"] = draw(
            st.lists(st.tuples(st.sampled_from(["ETag", "Date", "Server", "x-amz-request-id"]),
                               text).map(list), max_size=4)
        )  # fmt: skip
        if draw(st.booleans()):
            content = json.dumps(draw(objects)).encode()
            digest = BLOBS.put(content)
            blobs.append({"name": "body", "digest": digest, "size": len(content),
                          "media_type": "application/json"})  # fmt: skip
            data["body"] = {"size": len(content), "media_type": "application/json"}
    failed = draw(st.booleans()) and draw(st.booleans())
    error = (
        {"type": draw(st.sampled_from(["timeout", "reset", "http-status"])), "message": "x"}
        if failed
        else None
    )
    establishes = draw(
        st.lists(st.sampled_from(["observed", "provider-asserted", "tls-bound"]), unique=True)
    )
    content_digest = Capture.content_digest(kind, request, data, blobs, error)
    return Capture.model_validate(
        {
            "source": source,
            "kind": kind,
            "tool_version": "0.0.0",
            "started": TIME,
            "ended": TIME,
            "request": request,
            "status": "failed" if failed else "ok",
            "establishes": establishes,
            "data": data,
            "blobs": blobs,
            "error": error,
            "digest": content_digest,
        }
    )


sources = st.lists(st.sampled_from(["code", "run", "data", "card", "image", "a.b"]), unique=True)


@st.composite
def snapshots(draw: st.DrawFn, label: str = "a") -> Snapshot:
    chosen = draw(sources)
    return Snapshot(label=label, created=TIME, captures=tuple(draw(captures(s)) for s in chosen))


@st.composite
def edited_snapshot(draw: st.DrawFn, a: Snapshot) -> Snapshot:
    """B made from A: captures kept, edited (request, data, status, a file), dropped, added."""
    out: list[Capture] = []
    for capture in a.captures:
        how = draw(st.sampled_from(["keep", "edit", "edit", "drop", "replace"]))
        if how == "keep":
            out.append(capture)
        elif how == "replace":
            out.append(draw(captures(capture.source, capture.kind)))
        elif how == "edit":
            out.append(draw(_edited_capture(capture)))
    present = {c.source for c in out}
    for source in draw(sources):
        if source not in present and source not in {c.source for c in a.captures}:
            out.append(draw(captures(source)))
    return Snapshot(label="b", created=TIME, captures=tuple(out))


@st.composite
def edited(draw: st.DrawFn, document: Any) -> Any:
    """``document`` with one to three nodes replaced (by JSON a capture may hold) or removed."""
    document = copy.deepcopy(document)
    for _ in range(draw(st.integers(1, 3))):
        nodes: list[tuple[Any, Any]] = []
        stack = [document]
        while stack:
            node = stack.pop()
            items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(
                node, list) else ()  # fmt: skip
            for key, child in items:
                nodes.append((node, key))
                stack.append(child)
        if not nodes:
            return draw(objects)
        parent, key = draw(st.sampled_from(nodes))
        if isinstance(parent, dict) and draw(st.booleans()):
            del parent[key]
        else:
            parent[key] = draw(values)
    return document


@st.composite
def _edited_capture(draw: st.DrawFn, capture: Capture) -> Capture:
    document = capture.model_dump(mode="json")
    part = draw(st.sampled_from(["request", "data", "data", "error", "files"]))
    if part in ("request", "data"):
        document[part] = draw(edited(document[part]))
    elif part == "error":
        failed = document["error"] is None
        document["status"] = "failed" if failed else "ok"
        document["error"] = {"type": "timeout", "message": "late"} if failed else None
    elif document["blobs"] and isinstance(document["data"].get("files"), list):
        # A structured file edited: its blob, size and oid change together.
        blob = document["blobs"][0]
        old = BLOBS.get(blob["digest"])
        fmt = documents.format_of(blob["name"])
        assert old is not None and fmt is not None
        changed = draw(edited(documents.parse(old, fmt)))
        content = (
            yaml.safe_dump(changed, allow_unicode=True).encode()
            if fmt == "yaml"
            else json.dumps(changed).encode()
        )
        blob["digest"], blob["size"] = BLOBS.put(content), len(content)
        for record in document["data"]["files"]:
            if isinstance(record, dict) and record.get("path") == blob["name"]:
                record.update(oid=blob["digest"][-40:], size=len(content))
    document["digest"] = Capture.content_digest(
        document["kind"], document["request"], document["data"], document["blobs"],
        document["error"],
    )  # fmt: skip
    return Capture.model_validate(document)


# -- the properties ----------------------------------------------------------------------------

# Snapshots are big examples (tens of milliseconds each): a share of the CI budget, all of it
# under `make reliability`.
BUDGET = settings(max_examples=settings().max_examples if figures.full() else 75)


def same(x: Any, y: Any) -> bool:
    """Equal as JSON values (true is not 1; 1 and 1.0 are one number)."""
    return bool(canonical.dumps(x) == canonical.dumps(y))


def replay(document: Any, patch: tuple[dict[str, Any], ...]) -> Any:
    return jsonpatch.JsonPatch(list(patch)).apply(copy.deepcopy(document))


def _envelope(capture: Capture) -> dict[str, Any]:
    return {
        "status": capture.status,
        "establishes": list(capture.establishes),
        "error": capture.error.model_dump(mode="json") if capture.error else None,
    }


def _structured(capture: Capture) -> dict[str, Any]:
    """Each structured file or body the capture holds, parsed, by its document name."""
    out = {}
    for blob in capture.blobs:
        fmt = documents.format_of(blob.name, blob.media_type)
        data = BLOBS.get(blob.digest)
        if fmt is not None and data is not None:
            name = "body" if blob.name == "body" else f"file:{blob.name}"
            # Not parseable: prov compares it as text, there is no patch to replay.
            with contextlib.suppress(documents.DocumentParseError):
                out[name] = documents.parse(data, fmt)
    return out


def _diff(a: Snapshot, b: Snapshot) -> Any:
    return compare(DiffEvidence(a, a.label, 0, BLOBS), DiffEvidence(b, b.label, 0, BLOBS))


def check_pair(a: Snapshot, b: Snapshot) -> None:
    diff = _diff(a, b)
    canonical.dumps(json.loads(statement(diff)))  # every diff can be signed
    by_source_a = {c.source: c for c in a.captures}
    by_source_b = {c.source: c for c in b.captures}
    listed = {c.source: c for c in diff.captures}
    assert set(listed) == set(by_source_a) | set(by_source_b)
    assert {s for s, c in listed.items() if c.status == "added"} == set(by_source_b) - set(
        by_source_a
    )
    assert {s for s, c in listed.items() if c.status == "removed"} == set(by_source_a) - set(
        by_source_b
    )
    for source, result in listed.items():
        ca, cb = by_source_a.get(source), by_source_b.get(source)
        if ca is None or cb is None or ca.kind != cb.kind:
            continue
        if ca.digest == cb.digest:  # the same observation (its digest omits only times)
            assert result.status == "unchanged"
            continue
        reported = {d.name: d for d in result.documents}
        sides = {"capture": (_envelope(ca), _envelope(cb)), "request": (ca.request, cb.request),
                 "data": (ca.data, cb.data)}  # fmt: skip
        files_a, files_b = _structured(ca), _structured(cb)
        for name in set(files_a) & set(files_b):
            sides[name] = (files_a[name], files_b[name])
        for name, (old, new) in sides.items():
            document = reported.get(name)
            if document is None:
                if name.startswith(("file:", "body")):
                    continue  # unchanged bytes, or a body presented by its parsed error
                assert same(old, new), f"{source}: {name} differs but is not reported"
                continue
            if document.format == "text":
                continue
            assert same(replay(old, document.patch), new), f"{source}: {name}"
        figures.count("diff", "documents replayed", len(reported))


@BUDGET
@given(snapshots())
def test_diff_of_a_snapshot_with_itself_is_empty(a: Snapshot) -> None:
    ran("diff: diff(a, a) is empty")
    for b in (a, Snapshot.model_validate(json.loads(a.model_dump_json()))):
        diff = _diff(a, b)
        assert diff.equal and diff.counts.changes == 0 and diff.counts.volatile == 0
        for result in diff.captures:
            assert result.status == "unchanged", result
            assert not result.documents and not result.files and not result.notices
    assert compare_snapshots(a, a).equal


@BUDGET
@given(snapshots().flatmap(lambda a: st.tuples(st.just(a), edited_snapshot(a))))
def test_a_patch_turns_every_document_of_a_into_b_edited(pair: tuple[Snapshot, Snapshot]) -> None:
    ran("diff: patches replay (b an edit of a)")
    check_pair(*pair)


@BUDGET
@given(snapshots(), snapshots("b"))
def test_a_patch_turns_every_document_of_a_into_any_b(a: Snapshot, b: Snapshot) -> None:
    ran("diff: patches replay (any a, b)")
    check_pair(a, b)


def test_the_real_milestones_replay(evidence: Evidence) -> None:
    """The DSSE evidence's two signed snapshots, one commit apart, and each with itself."""
    m1 = Snapshot.model_validate(evidence.statement("m1")["predicate"])
    m2 = Snapshot.model_validate(evidence.statement("m2")["predicate"])
    check_pair(m1, m2)
    check_pair(m2, m1)
    assert compare_snapshots(m1, m1).equal and not compare_snapshots(m1, m2).equal


def _one(kind: str, data: dict[str, Any], label: str) -> Snapshot:
    blobs: list[dict[str, Any]] = []
    capture = Capture.model_validate(
        {"source": "s", "kind": kind, "tool_version": "0", "started": TIME, "ended": TIME,
         "request": {}, "status": "ok", "data": data, "blobs": blobs,
         "digest": Capture.content_digest(kind, {}, data, blobs, None)}
    )  # fmt: skip
    return Snapshot(label=label, created=TIME, captures=(capture,))


def test_what_the_properties_found_stays_fixed() -> None:
    """Schema-valid snapshots that made `prov diff` raise (found by the properties above)."""
    cases = [
        # a file record whose oid is not a string (FileChange refused it)
        ({"files": [{"path": "a.json", "oid": "1" * 40}]}, {"files": [{"path": "a.json",
                                                                          "oid": []}]}),
        # integers no double holds: (new - old) / old overflowed
        ({"n": 10**400}, {"n": 1}),
        ({"n": 1}, {"n": -(10**400)}),
        # doubles whose difference is infinite: the diff had no canonical form to be signed
        ({"x": 1.7e308}, {"x": -1.7e308}),
        ({"x": 5e-324}, {"x": 1.7e308}),
    ]  # fmt: skip
    for old, new in cases:
        for kind in ("git", "wandb"):
            check_pair(_one(kind, old, "a"), _one(kind, new, "b"))
