"""Hypothesis strategies for prov's inputs: JSON values, TOML files, envelopes, statements.

Each input strategy mixes three sources: arbitrary bytes or text (the parser's outer wall),
documents shaped like the real thing with wrong types and values in every slot (its inner
checks), and small random edits of a real, valid input (the cases closest to acceptance).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from hypothesis import strategies as st

from provenance.attest.statement import PAYLOAD_TYPE, STATEMENT_TYPE
from provenance.model import PREDICATE_TYPE

# -- JSON --------------------------------------------------------------------------------------

finite_floats = st.floats(allow_nan=False, allow_infinity=False)
# Strings as JSON can carry them, lone surrogates excepted (canonical JSON refuses those).
json_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
json_scalars = st.none() | st.booleans() | st.integers() | finite_floats | json_text


def json_values(scalars: st.SearchStrategy[Any] = json_scalars) -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=5) | st.dictionaries(json_text, children, max_size=5)
        ),
        max_leaves=25,
    )


# Anything Python's json module could hand back, and worse: lone surrogates, huge integers.
wild_scalars = (
    json_scalars
    | st.text(max_size=10)
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats()
)
wild_json = json_values(wild_scalars)


# -- edits of real inputs ----------------------------------------------------------------------


@st.composite
def edited_bytes(draw: st.DrawFn, original: bytes) -> bytes:
    """``original`` with one to four byte-level edits: replace, insert, delete, or cut."""
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        how = draw(st.sampled_from(["replace", "insert", "delete", "cut"]))
        byte = draw(st.sampled_from(b'{}[]":,0aA=+/-_\\ \n\x00\xff'))
        if how == "replace":
            data[at] = byte
        elif how == "insert":
            data.insert(at, byte)
        elif how == "delete":
            del data[at]
        else:
            del data[at:]
    return bytes(data)


# -- DSSE envelopes ----------------------------------------------------------------------------

base64_text = st.binary(max_size=64).map(lambda b: base64.b64encode(b).decode())
base64_ish = (
    base64_text
    | base64_text.map(lambda t: t.replace("+", "-").rstrip("="))
    | st.text("ABCabc0189+/-_= \n\u00e9", max_size=16)
)


def envelope_documents(payloads: st.SearchStrategy[bytes]) -> st.SearchStrategy[Any]:
    """Dicts shaped like DSSE envelopes, any slot possibly of the wrong type."""
    slot = wild_json | base64_ish
    signature = st.dictionaries(
        st.sampled_from(["keyid", "sig", "cert"]), slot | base64_ish, max_size=3
    )
    return st.fixed_dictionaries(
        {},
        optional={
            "payload": payloads.map(lambda b: base64.b64encode(b).decode()) | slot,
            "payloadType": st.sampled_from([PAYLOAD_TYPE, "application/json", ""]) | slot,
            "signatures": st.lists(signature | slot, max_size=3) | slot,
            "extra": slot,
        },
    )


# -- in-toto statements ------------------------------------------------------------------------

hex64 = st.text("0123456789abcdef", min_size=64, max_size=64)


def statement_documents(predicates: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    subject = st.fixed_dictionaries(
        {},
        optional={
            "name": st.text(max_size=20) | wild_json,
            "digest": st.dictionaries(
                st.sampled_from(["sha256", "sha512", "blake3"]), hex64 | wild_json, max_size=2
            )
            | wild_json,
            "uri": wild_json,
        },
    )
    return st.fixed_dictionaries(
        {},
        optional={
            "_type": st.sampled_from([STATEMENT_TYPE, "https://in-toto.io/Statement/v0.1"])
            | wild_json,
            "subject": st.lists(subject | wild_json, max_size=3) | wild_json,
            "predicateType": st.sampled_from([PREDICATE_TYPE, "https://slsa.dev/provenance/v1"])
            | wild_json,
            "predicate": predicates | wild_json,
        },
    )


@st.composite
def edited_json(draw: st.DrawFn, document: Any) -> Any:
    """``document`` with one to three of its nodes replaced by arbitrary JSON or removed."""
    document = json.loads(json.dumps(document))
    for _ in range(draw(st.integers(1, 3))):
        parent, key = _pick(draw, document)
        if parent is None:
            return draw(wild_json)
        if isinstance(parent, dict) and draw(st.booleans()):
            del parent[key]
        else:
            parent[key] = draw(wild_json)
    return document


def _pick(draw: st.DrawFn, document: Any) -> tuple[Any, Any]:
    nodes: list[tuple[Any, Any]] = [(None, None)]
    stack = [document]
    while stack:
        node = stack.pop()
        children = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else []
        )
        for key, child in children:
            nodes.append((node, key))
            stack.append(child)
    return draw(st.sampled_from(nodes))


# -- prov.toml ---------------------------------------------------------------------------------

toml_keys = st.sampled_from(
    ["name", "kind", "repo", "ref", "paths", "timeout", "volatile", "url", "path", "dir", "x"]
) | st.text("abcxyz_-", min_size=1, max_size=6)
toml_scalars = (
    st.text(max_size=12).map(lambda t: json.dumps(t, ensure_ascii=False))
    | st.integers(-(10**20), 10**20).map(str)
    | finite_floats.map(repr)
    | st.sampled_from(["true", "false", "nan", "inf", "-inf", "1979-05-27T07:32:00Z", "0x1f"])
)
toml_values = st.recursive(
    toml_scalars,
    lambda children: (
        st.lists(children, max_size=3).map(lambda items: "[" + ", ".join(items) + "]")
        | st.dictionaries(toml_keys, children, max_size=3).map(
            lambda d: "{" + ", ".join(f"{json.dumps(k)} = {v}" for k, v in d.items()) + "}"
        )
    ),
    max_leaves=8,
)
toml_tables = st.lists(
    st.tuples(
        st.sampled_from(["[store]", "[attestations]", "[defaults]", "[[sources]]", "[other]"]),
        st.dictionaries(toml_keys, toml_values, max_size=5),
    ),
    max_size=5,
)


@st.composite
def toml_documents(draw: st.DrawFn) -> str:
    """prov.toml-shaped text: the known tables, known and unknown keys, values of any type."""
    lines: list[str] = []
    for key, value in draw(st.dictionaries(toml_keys, toml_values, max_size=2)).items():
        lines.append(f"{json.dumps(key)} = {value}")
    for header, table in draw(toml_tables):
        lines.append(header)
        lines.extend(f"{json.dumps(key)} = {value}" for key, value in table.items())
    return "\n".join(lines) + "\n"


# -- Sigstore bundles and evidence-pack manifests ----------------------------------------------


def bundle_documents() -> st.SearchStrategy[Any]:
    """Dicts shaped like Sigstore bundles, any slot possibly of the wrong type."""
    slot = wild_json | base64_ish
    entry = st.fixed_dictionaries(
        {},
        optional={
            "logIndex": st.integers(0, 10).map(str) | slot,
            "logId": st.fixed_dictionaries({"keyId": base64_ish}) | slot,
            "kindVersion": st.fixed_dictionaries(
                {"kind": st.sampled_from(["dsse", "hashedrekord", "intoto"]) | slot,
                 "version": st.sampled_from(["0.0.1", "0.0.2"]) | slot}
            ) | slot,
            "integratedTime": st.integers(0, 2**40).map(str) | slot,
            "inclusionPromise": st.fixed_dictionaries({"signedEntryTimestamp": base64_ish}) | slot,
            "inclusionProof": st.dictionaries(
                st.sampled_from(["logIndex", "rootHash", "treeSize", "hashes", "checkpoint"]),
                slot, max_size=5,
            ) | slot,
            "canonicalizedBody": base64_ish | slot,
        },
    )  # fmt: skip
    material = st.fixed_dictionaries(
        {},
        optional={
            "certificate": st.fixed_dictionaries({"rawBytes": base64_ish}) | slot,
            "publicKey": st.fixed_dictionaries({"hint": st.text(max_size=8)}) | slot,
            "x509CertificateChain": slot,
            "tlogEntries": st.lists(entry | slot, max_size=2) | slot,
            "timestampVerificationData": st.fixed_dictionaries(
                {"rfc3161Timestamps": st.lists(
                    st.fixed_dictionaries({"signedTimestamp": base64_ish}), max_size=2)}
            ) | slot,
        },
    )  # fmt: skip
    return st.fixed_dictionaries(
        {},
        optional={
            "mediaType": st.sampled_from(
                [
                    "application/vnd.dev.sigstore.bundle.v0.3+json",
                    "application/vnd.dev.sigstore.bundle+json;version=0.2",
                    "application/vnd.dev.sigstore.bundle",
                ]
            )
            | slot,
            "verificationMaterial": material | slot,
            "dsseEnvelope": envelope_documents(st.binary(max_size=40)) | slot,
            "messageSignature": slot,
        },
    )


@st.composite
def repeated_key(draw: st.DrawFn, document: Any) -> tuple[bytes, str]:
    """``document`` as JSON text with one object's key written twice (the copy first or last,
    holding the same value or another). Returns the text and the repeated key."""
    objects: list[Any] = []
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node:
                objects.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    target = draw(st.sampled_from(objects))
    key = draw(st.sampled_from(sorted(target)))
    value = draw(st.just(target[key]) | json_values())
    first = draw(st.booleans())
    marker = "\u0000repeat\u0000"
    original = dict(target)
    target.clear()
    target.update({marker: None, **original} if first else {**original, marker: None})
    try:
        text = json.dumps(document, separators=(",", ":"))
    finally:
        target.clear()
        target.update(original)
    pair = json.dumps(key) + ":" + json.dumps(value)
    return text.replace(json.dumps(marker) + ":null", pair, 1).encode(), key
