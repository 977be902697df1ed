"""The Sigstore bundle corpus: every field of real bundles mutated, swapped or respelled.

Bundles come from bundle_evidence.py (LocalSigstore, offline): ``m1`` keyless with an RFC 3161
timestamp, ``m2`` keyless without, ``m1-managed`` signed with a managed ECDSA key. Each case
writes one file and runs ``prov verify`` on it with the identity policy (or the managed key)
and the instance's trust root, like the DSSE corpus (corpus.py), whose ``Case`` and ``Trial``
it shares. A must-fail case names the step and the reason; an equivalent is another valid
protobuf-JSON spelling of the same bundle and must verify.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.reliability.bundle_evidence import (
    ISSUER,
    OTHER_IDENTITY,
    Bundles,
    bundles,
)
from tests.reliability.corpus import Case, Trial, put
from tests.reliability.evidence import Evidence

STEP1 = r"step 1 \(bundle\) failed: "
STEP2 = r"step 2 \(bundle\) failed: "
STEP4 = r"step 5 \(subject\) failed: "
RESPELLED = STEP1 + r".*: the field {path} does not read back as it is written"
REPEATS = STEP1 + r".* repeats the key '{key}'"
MALFORMED_DSSE = STEP1 + r".* has a malformed DSSE envelope"
NO_DSSE = STEP1 + r".* holds no DSSE envelope"
INVALID_SIGNATURE = STEP2 + r".*DSSE: invalid signature"
TIMESTAMP = STEP2 + (
    r".*signed timestamp #1 (does not verify against the trust root's timestamp"
    r"|covers another signature)"
)
SET = STEP2 + r".*invalid log entry: SET: invalid inclusion promise"
PROOF = STEP2 + r".*invalid log entry: (inclusion proof|checkpoint|invalid inclusion proof)"
CHAIN = STEP2 + r".*failed to build timestamp certificate chain"
NOT_A_BUNDLE = r"is a DSSE envelope: identity options apply to Sigstore bundles"

Document = dict[str, Any]
Path_ = tuple[str | int, ...]


def _line(document: Any) -> bytes:
    return json.dumps(document, separators=(",", ":")).encode() + b"\n"


def _get(document: Any, path: Path_) -> Any:
    for step in path:
        document = document[step]
    return document


def _set(document: Any, path: Path_, value: Any) -> None:
    _get(document, path[:-1])[path[-1]] = value


def _dotted(path: Path_) -> str:
    return ".".join(str(p) for p in path)


def _slashed(path: Path_) -> str:
    return "/" + "/".join(str(p) for p in path)


def _flip_b64(text: str, fraction: float) -> str:
    raw = bytearray(base64.b64decode(text))
    index = min(len(raw) - 1, int(len(raw) * fraction))
    raw[index] ^= 1 << (index % 8)
    return base64.b64encode(bytes(raw)).decode()


def edited(
    base: str,
    edit: Callable[[Document], Any],
    *,
    trust: str = "policy",
    name: str = "m1",
) -> Callable[[Evidence, Path], Trial]:
    """A case that edits a copy of bundle ``base`` (as JSON) and verifies it as ``name``."""

    def make(ev: Evidence, work: Path) -> Trial:
        b = bundles(ev)
        document = b.document(base)
        result = edit(document)
        data = result if isinstance(result, bytes) else _line(document)
        return Trial(put(work, data, f"{name}.sigstore.json"), _trust(b, trust))

    return make


def _trust(b: Bundles, trust: str) -> tuple[str, ...]:
    if trust == "policy":
        return b.policy()
    if trust == "managed":
        return b.managed_key()
    raise AssertionError(trust)


def cases(ev: Evidence) -> Iterator[Case]:
    b = bundles(ev)
    yield from structure(b.document("m1"), "m1", "policy")
    yield from structure(b.document("m1-managed"), "m1-managed", "managed")
    yield from repeated_keys(b.document("m1"))
    yield from respellings(b.document("m1"))
    yield from bit_flips()
    yield from swaps()
    yield from media_types()
    yield from log_entries()
    yield from policies()
    yield from managed()
    yield from equivalents()


# -- every field: missing, null, of another type, with an unknown neighbour ---------------------


def _paths(document: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    if isinstance(document, dict):
        for key, value in document.items():
            yield (*prefix, key)
            yield from _paths(value, (*prefix, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield (*prefix, index)
            yield from _paths(value, (*prefix, index))


RETYPES: dict[str, Any] = {"null": None, "1": 1, "true": True, "list": [], "object": {}, "x": "x"}


def structure(document: Document, base: str, trust: str) -> Iterator[Case]:
    for path in _paths(document):
        value = _get(document, path)
        where = _slashed(path)
        if isinstance(path[-1], str):

            def drop(d: Document, path: Path_ = path) -> None:
                del _get(d, path[:-1])[path[-1]]

            expect = _expect_missing(path, trust)
            yield Case(
                f"{base}/missing{where}",
                "must-fail" if expect else "equivalent",
                edited(base, drop, trust=trust),
                **expect,
            )
        for name, replacement in RETYPES.items():
            if type(replacement) is type(value) and name != "x":
                continue  # the same type: not a retype (lists, objects)
            if replacement == value:
                continue

            def retype(d: Document, path: Path_ = path, replacement: Any = replacement) -> None:
                _set(d, path, replacement)

            expect = _expect_retyped(path, name, value, trust)
            yield Case(
                f"{base}/retyped{where}={name}",
                "must-fail" if expect else "equivalent",
                edited(base, retype, trust=trust),
                **expect,
            )
        if isinstance(value, dict):

            def extra(d: Document, path: Path_ = path) -> None:
                _get(d, path)["extraField"] = "x"

            if path == ("dsseEnvelope",):
                expect = {"expect": STEP1 + ".* has unknown fields: extraField"}
            elif path[0] == "dsseEnvelope":
                expect = {"expect": STEP1 + ".* signature #1 is malformed"}
            else:
                expect = _load_error(path, "extraField")
            yield Case(
                f"{base}/unknown-field{where}/extraField",
                "must-fail",
                edited(base, extra, trust=trust),
                **expect,
            )

    def top_extra(d: Document) -> None:
        d["extraField"] = "x"

    yield Case(
        f"{base}/unknown-field/extraField",
        "must-fail",
        edited(base, top_extra, trust=trust),
        **_load_error((), "extraField"),
    )


def _load_error(path: Path_, field: str | None = None) -> dict[str, Any]:
    """sigstore's bundle parser refuses it, naming the field."""
    dotted = _dotted((*path, field) if field else path)
    where = re.escape(dotted) + r"(\.\S*)? " if dotted else ""
    return {"expect": STEP2 + r".*failed to load bundle: .*\n  cause: " + where}


def _expect_missing(path: Path_, trust: str) -> dict[str, Any]:
    """What deleting the field at ``path`` must give (``kind`` equivalent when it verifies)."""
    tail = path[-1]
    if path == ("mediaType",):
        return {"expect": STEP1 + ".* has no Sigstore bundle mediaType"}
    if path[0] == "dsseEnvelope":
        return _envelope_field(path, None)
    if path[-2:] in (
        ("verificationMaterial", "certificate"),
        ("verificationMaterial", "publicKey"),
    ):
        return {"expect": _oneof()}
    if tail == "integratedTime":
        return {"expect": STEP2 + ".*inclusion promise but no integrated time"}
    if tail == "inclusionPromise":
        # Without its promise the entry still proves inclusion (proof and checkpoint); the
        # bundle keeps one source of time only if it has a signed timestamp.
        if trust == "policy":
            return EQUIVALENT
        return {"expect": STEP2 + ".*not enough sources of verified time"}
    if tail in ("checkpoint", "inclusionProof"):
        return {"expect": STEP2 + ".*entry must contain inclusion proof, with checkpoint"}
    if tail == "tlogEntries":
        return {"expect": STEP2 + ".*expected exactly one log entry in bundle, found none"}
    if tail in ("timestampVerificationData", "rfc3161Timestamps"):
        return EQUIVALENT  # the log's promise still dates the signature
    return _load_error(path)


def _expect_retyped(path: Path_, name: str, value: Any, trust: str) -> dict[str, Any]:
    tail = path[-1]
    if path == ("mediaType",):
        return {"expect": STEP1 + ".* has no Sigstore bundle mediaType"}
    if path[0] == "dsseEnvelope":
        return _envelope_field(path, name)
    if tail == "hint" and name in ("null", "x"):
        return EQUIVALENT
    if tail == "kind" and name == "x":
        return {"expect": STEP2 + ".*integrated time is not supported for x/0.0.1 entries"}
    if tail == "version" and name == "x":
        return {"expect": STEP2 + ".*unsupported log entry version dsse/x"}
    if tail == "envelope" and name == "x":
        return {"expect": STEP2 + ".*invalid log entry: note must contain one blank line"}
    if name == "null" and path[-2:] in (
        ("verificationMaterial", "certificate"),
        ("verificationMaterial", "publicKey"),
    ):
        return {"expect": _oneof()}
    if name == "null" and tail in (
        "integratedTime",
        "inclusionPromise",
        "checkpoint",
        "inclusionProof",
    ):
        return _expect_missing(path, trust)
    if name == "null" and tail == "timestampVerificationData":
        return EQUIVALENT
    return _load_error(path)


EQUIVALENT: dict[str, Any] = {}


def _oneof() -> str:
    return (
        STEP2 + r".*failed to load bundle: .*\n  cause: verificationMaterial Value error, "
        "Exactly one of publicKey, x509CertificateChain, or certificate must be set"
    )


def _envelope_field(path: Path_, retyped: str | None) -> dict[str, Any]:
    """The DSSE envelope inside a bundle is read by prov's DSSE parser (step 1)."""
    tail = path[-1]
    absent = retyped in (None, "null")
    if path == ("dsseEnvelope",):
        return {"expect": NO_DSSE}
    if tail in ("payload", "sig"):
        field = "payload" if tail == "payload" else r"signatures\[0\]\.sig"
        reason = "is not valid base64" if retyped == "x" else "is not a base64 string"
        return {"expect": STEP1 + f"envelope field '{field}' {reason}"}
    if tail == "payloadType":
        if retyped == "x":
            return {"expect": STEP1 + "payloadType is 'x'"}
        return {"expect": STEP1 + ".* has no payloadType"}
    if tail == "signatures":
        return {"expect": STEP1 + ".* has no signatures list"}
    if tail == "keyid":
        if absent or retyped == "x":
            return EQUIVALENT  # a hint, as in DSSE
        return {"expect": STEP1 + ".* signature #1 has a non-string keyid"}
    if path[1:] == ("signatures", 0):
        return {"expect": STEP1 + ".* signature #1 is malformed"}
    raise AssertionError(path)


# -- repeated keys -------------------------------------------------------------------------------


def repeated_keys(document: Document) -> Iterator[Case]:
    """Each object's first key, given twice: once with another value (first), once as it is.

    Python keeps the last value, so does pydantic today; a parser that keeps the first would
    verify one bundle and report another. Refused wherever it happens.
    """
    objects: list[Path_] = [()] + [
        p for p in _paths(document) if isinstance(_get(document, p), dict)
    ]
    for path in objects:
        node = _get(document, path)
        key = next(iter(node))

        def repeat(d: Document, path: Path_ = path, key: str = key) -> bytes:
            text = json.dumps(d, separators=(",", ":"))
            inner = json.dumps(_get(d, path), separators=(",", ":"))
            doubled = "{" + json.dumps(key) + ":" + json.dumps(_decoy(_get(d, path)[key])) + ","
            doubled += inner[1:]
            return (text.replace(inner, doubled, 1) + "\n").encode()

        yield Case(
            f"repeated-key{_slashed(path)}/{key}",
            "must-fail",
            edited("m1", repeat),
            REPEATS.format(key=re.escape(key)),
        )


def _decoy(value: Any) -> Any:
    if isinstance(value, str):
        return value[::-1] or "x"
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {}
    return "x"


# -- respellings that sigstore's parser would read as something else -----------------------------


B64_FIELDS: tuple[Path_, ...] = (
    ("verificationMaterial", "certificate", "rawBytes"),
    ("verificationMaterial", "tlogEntries", 0, "logId", "keyId"),
    ("verificationMaterial", "tlogEntries", 0, "inclusionPromise", "signedEntryTimestamp"),
    ("verificationMaterial", "tlogEntries", 0, "inclusionProof", "rootHash"),
    ("verificationMaterial", "tlogEntries", 0, "canonicalizedBody"),
    ("verificationMaterial", "timestampVerificationData", "rfc3161Timestamps", 0,
     "signedTimestamp"),
)  # fmt: skip
U64_FIELDS: tuple[Path_, ...] = (
    ("verificationMaterial", "tlogEntries", 0, "logIndex"),
    ("verificationMaterial", "tlogEntries", 0, "integratedTime"),
    ("verificationMaterial", "tlogEntries", 0, "inclusionProof", "logIndex"),
    ("verificationMaterial", "tlogEntries", 0, "inclusionProof", "treeSize"),
)


def respellings(document: Document) -> Iterator[Case]:
    """Spellings sigstore's parser reads but that are not the field as written.

    Its base64 decoder skips characters outside the alphabet and its integers go through
    Python's ``int()``: each of these verified before ``check_form``.
    """
    b64_edits: dict[str, Callable[[str], str]] = {
        "junk-inside": lambda t: t[:8] + "!!!!" + t[8:],
        "spaces-inside": lambda t: t[:8] + "    " + t[8:],
        "tab-inside": lambda t: t[:8] + "\t" + t[8:],
        "urlsafe-junk": lambda t: t[:8] + "-_-_" + t[8:],
        "unicode-inside": lambda t: t[:8] + "\u00e9\u00e9\u00e9\u00e9" + t[8:],
        "trailing-data-after-padding": lambda t: t + "AAAA" if t.endswith("=") else t + "====",
    }
    for path in B64_FIELDS:
        for name, change in b64_edits.items():

            def respell(d: Document, path: Path_ = path, change: Any = change) -> None:
                _set(d, path, change(_get(d, path)))

            yield Case(
                f"respelled{_slashed(path)}/{name}",
                "must-fail",
                edited("m1", respell),
                **_respelled_expect(path, name),
            )
    u64_edits: dict[str, Callable[[str], str]] = {
        "leading-space": lambda t: " " + t,
        "trailing-space": lambda t: t + " ",
        "underscore": lambda t: t[:1] + "_" + t[1:] if len(t) > 1 else "0_" + t,
        "leading-zero": lambda t: "0" + t,
        "plus-sign": lambda t: "+" + t,
        "arabic-indic-digits": lambda t: "".join(chr(0x0660 + int(c)) for c in t),
        "fullwidth-digits": lambda t: "".join(chr(0xFF10 + int(c)) for c in t),
    }
    for path in U64_FIELDS:
        for name, change in u64_edits.items():

            def renumber(d: Document, path: Path_ = path, change: Any = change) -> None:
                _set(d, path, change(_get(d, path)))

            yield Case(
                f"respelled{_slashed(path)}/{name}",
                "must-fail",
                edited("m1", renumber),
                RESPELLED.format(path=re.escape(_slashed(path))),
            )


def _respelled_expect(path: Path_, name: str) -> dict[str, Any]:
    if name in ("unicode-inside",):
        return _load_error(path)  # not ASCII: even the lenient decoder refuses it
    return {"expect": RESPELLED.format(path=re.escape(_slashed(path)))}


# -- bit flips in every signed or hashed field ---------------------------------------------------


def bit_flips() -> Iterator[Case]:
    material = ("verificationMaterial",)
    entry = (*material, "tlogEntries", 0)
    fields: list[tuple[str, str, Path_, int, str]] = [
        # (bundle, trust, field, how many places, expected failure)
        ("m1", "policy", ("dsseEnvelope", "payload"), 16, INVALID_SIGNATURE),
        ("m2", "policy", ("dsseEnvelope", "payload"), 8, INVALID_SIGNATURE),
        ("m1-managed", "managed", ("dsseEnvelope", "payload"), 8, INVALID_SIGNATURE),
        # m1's timestamp covers the signature: a changed signature fails that first.
        ("m1", "policy", ("dsseEnvelope", "signatures", 0, "sig"), 12, TIMESTAMP),
        ("m2", "policy", ("dsseEnvelope", "signatures", 0, "sig"), 12, SIG_OR_LOG),
        ("m1-managed", "managed", ("dsseEnvelope", "signatures", 0, "sig"), 8, SIG_OR_LOG),
        ("m1", "policy", (*material, "certificate", "rawBytes"), 24, CERTIFICATE),
        ("m1", "policy", (*entry, "inclusionPromise", "signedEntryTimestamp"), 8, SET),
        ("m1-managed", "managed", (*entry, "inclusionPromise", "signedEntryTimestamp"), 4, SET),
        ("m1", "policy", (*entry, "canonicalizedBody"), 12, PROOF),
        ("m1-managed", "managed", (*entry, "canonicalizedBody"), 6, PROOF),
        ("m1", "policy", (*entry, "inclusionProof", "rootHash"), 4, PROOF),
        ("m1", "policy", (*entry, "logId", "keyId"), 4, LOG_KEY),
        ("m1", "policy", (*material, "timestampVerificationData", "rfc3161Timestamps", 0,
                          "signedTimestamp"), 12, TIMESTAMP_DAMAGED),
    ]  # fmt: skip
    for base, trust, path, places, expect in fields:
        for place in range(places):
            fraction = place / max(1, places - 1) * 0.999

            def flip(d: Document, path: Path_ = path, fraction: float = fraction) -> None:
                _set(d, path, _flip_b64(_get(d, path), fraction))

            name = "m1" if base.startswith("m1") else "m2"
            yield Case(
                f"{base}/flip{_slashed(path)}@{place}/{places}",
                "must-fail",
                edited(base, flip, trust=trust, name=name),
                expect,
            )


SIG_OR_LOG = STEP2 + r".*(DSSE: invalid signature|log entry signatures do not match bundle)"
CERTIFICATE = STEP2 + (
    r".*(failed to build timestamp certificate chain|the bundle is malformed: error parsing asn1)"
)
LOG_KEY = STEP2 + r".*(no key with id|invalid log entry)"
TIMESTAMP_DAMAGED = STEP2 + (
    r".*(signed timestamp #1 does not verify|Invalid Timestamp Response|the bundle is malformed: "
    r"Malformed TimestampToken)"
)


# -- swapping parts between bundles, and replays --------------------------------------------------


def swaps() -> Iterator[Case]:
    def from_other(path: Path_, source: str = "m2") -> Callable[[Evidence, Path], Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            b = bundles(ev)
            document = b.document("m1")
            _set(document, path, _get(b.document(source), path))
            return Trial(put(work, _line(document), "m1.sigstore.json"), b.policy())

        return make

    def without_timestamp(edit: Callable[[Document, Bundles], None]) -> Callable[..., Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            b = bundles(ev)
            document = b.document("m1")
            del document["verificationMaterial"]["timestampVerificationData"]
            edit(document, b)
            return Trial(put(work, _line(document), "m1.sigstore.json"), b.policy())

        return make

    envelope = ("dsseEnvelope",)
    yield Case("swap/m2-envelope", "must-fail", from_other(envelope), TIMESTAMP)
    yield Case(
        "swap/m2-envelope-without-timestamp",
        "must-fail",
        without_timestamp(lambda d, b: d.__setitem__("dsseEnvelope", b.document("m2")[
            "dsseEnvelope"])),
        STEP2 + ".*(log entry|DSSE: invalid signature|inconsistent)",
    )  # fmt: skip
    yield Case(
        "swap/m2-payload", "must-fail", from_other((*envelope, "payload")), INVALID_SIGNATURE
    )
    yield Case("swap/m2-signature", "must-fail", from_other((*envelope, "signatures")), TIMESTAMP)
    yield Case(
        "swap/m2-signature-without-timestamp",
        "must-fail",
        without_timestamp(lambda d, b: d["dsseEnvelope"].__setitem__("signatures", b.document(
            "m2")["dsseEnvelope"]["signatures"])),
        STEP2 + ".*(DSSE: invalid signature|log entry)",
    )  # fmt: skip
    tlog = ("verificationMaterial", "tlogEntries")
    yield Case(
        "swap/m2-log-entry",
        "must-fail",
        from_other(tlog),
        STEP2 + ".*log entry .*does not match|inconsistent",
    )
    yield Case(
        "swap/m2-certificate",
        "must-fail",
        from_other(("verificationMaterial", "certificate")),
        STEP2 + ".*(DSSE: invalid signature|log entry|inconsistent|transparency log)",
    )
    yield Case(
        "swap/other-instance-log-entry",
        "must-fail",
        from_other(tlog, "m1-other-instance"),
        STEP2 + ".*(no key with id|invalid log entry|log entry|inconsistent)",
    )
    yield Case(
        "swap/other-instance-certificate",
        "must-fail",
        from_other(("verificationMaterial", "certificate"), "m1-other-instance"),
        CHAIN,
    )
    yield Case(
        "swap/managed-log-entry-into-keyless",
        "must-fail",
        from_other(tlog, "m1-managed"),
        STEP2 + ".*(log entry|inconsistent)",
    )

    def with_tokens(
        tokens: Callable[[Bundles], list[Any]], base: str = "m1"
    ) -> Callable[..., Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            b = bundles(ev)
            document = b.document(base)
            document["verificationMaterial"]["timestampVerificationData"] = {
                "rfc3161Timestamps": tokens(b)
            }
            return Trial(put(work, _line(document), f"{base}.sigstore.json"), b.policy())

        return make

    def token(b: Bundles) -> dict[str, Any]:
        found: dict[str, Any] = b.document("m1")["verificationMaterial"][
            "timestampVerificationData"
        ]["rfc3161Timestamps"][0]
        return found  # fmt: skip

    yield Case(
        "timestamp/m1-token-on-m2", "must-fail", with_tokens(lambda b: [token(b)], "m2"), TIMESTAMP
    )
    yield Case(
        "timestamp/same-token-twice",
        "must-fail",
        with_tokens(lambda b: [token(b), token(b)]),
        STEP2 + ".*duplicate timestamp found",
    )
    yield Case(
        "timestamp/33-tokens",
        "must-fail",
        with_tokens(lambda b: [token(b)] * 33),
        STEP2 + ".*too many signed timestamps: 33",
    )
    yield Case(
        "timestamp/a-valid-token-and-a-forged-one",
        "must-fail",
        with_tokens(lambda b: [token(b), {"signedTimestamp": _flip_b64(token(b)[
            "signedTimestamp"], 0.98)}]),
        STEP2 + r".*signed timestamp #2 does not verify",
    )  # fmt: skip

    def renamed(bundle: str, name: str, *extra: str) -> Callable[[Evidence, Path], Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            b = bundles(ev)
            return Trial(put(work, b.data(bundle), f"{name}.sigstore.json"), (*b.policy(), *extra))

        return make

    yield Case(
        "replay/m1-presented-as-m2",
        "must-fail",
        renamed("m1", "m2"),
        STEP4 + "the attestation is signed for label 'm1', not 'm2'",
    )
    yield Case(
        "replay/m2-presented-as-m1",
        "must-fail",
        renamed("m2", "m1"),
        STEP4 + "the attestation is signed for label 'm2', not 'm1'",
    )
    yield Case(
        "replay/m1-presented-as-m3",
        "must-fail",
        renamed("m1", "m3"),
        STEP4 + "the attestation is signed for label 'm1', not 'm3'",
    )
    yield Case(
        "replay/m1-with-expect-label-m2",
        "must-fail",
        renamed("m1", "release", "--expect-label", "m2"),
        STEP4 + "the attestation is signed for label 'm1', not 'm2'",
    )


# -- media types --------------------------------------------------------------------------------


def media_types() -> Iterator[Case]:
    refused = {
        "application/vnd.dev.sigstore.bundle+json;version=0.1": CERT_CHAIN,
        "application/vnd.dev.sigstore.bundle+json;version=0.2": CERT_CHAIN,
        "application/vnd.dev.sigstore.bundle.v0.4+json": _load_error(("mediaType",))["expect"],
        "application/vnd.dev.sigstore.bundle.v0.3+json ": _load_error(("mediaType",))["expect"],
        "application/vnd.dev.sigstore.bundle.v0.3+jsonx": _load_error(("mediaType",))["expect"],
        "application/vnd.dev.sigstore.bundle+json": _load_error(("mediaType",))["expect"],
        "application/vnd.dev.sigstore.bundle.v0.3": _load_error(("mediaType",))["expect"],
        "APPLICATION/VND.DEV.SIGSTORE.BUNDLE.V0.3+JSON": STEP1 + ".* has no Sigstore bundle",
        " application/vnd.dev.sigstore.bundle.v0.3+json": STEP1 + ".* has no Sigstore bundle",
        "application/vnd.in-toto+json": STEP1 + ".* has no Sigstore bundle mediaType",
        "application/json": STEP1 + ".* has no Sigstore bundle mediaType",
        "": STEP1 + ".* has no Sigstore bundle mediaType",
    }
    for media_type, expect in refused.items():

        def swap(d: Document, media_type: str = media_type) -> None:
            d["mediaType"] = media_type

        yield Case(f"mediaType/{media_type!r}", "must-fail", edited("m1", swap), expect)


CERT_CHAIN = STEP2 + ".*expected certificate chain in bundle"
MALFORMED_INTEGER = STEP2 + r".*the bundle is malformed: .*(exceeds safe integer|out of range)"


# -- the log entry, field by field --------------------------------------------------------------


def log_entries() -> Iterator[Case]:
    entry: Path_ = ("verificationMaterial", "tlogEntries", 0)

    def number(path: Path_, change: Callable[[int], int]) -> Callable[[Document], None]:
        def apply(d: Document) -> None:
            _set(d, path, str(change(int(_get(d, path)))))

        return apply

    changes: dict[str, Callable[[int], int]] = {
        "+1": lambda n: n + 1,
        "-1": lambda n: max(0, n - 1) if n else n + 7,
        "+3600": lambda n: n + 3600,
        "x2": lambda n: n * 2 + 1,
        "2^63": lambda n: 2**63,
    }
    # The proof's index must be below the tree size: sigstore's parser checks that first.
    beyond = STEP2 + r".*failed to load bundle: .*\n  cause: verificationMaterial.tlogEntries.0."
    beyond += r"inclusionProof Value error, logIndex \d+ must be less than treeSize \d+"
    expectations: dict[str, str] = {
        "logIndex": SET + "|" + MALFORMED_INTEGER,
        # A time moved outside the certificate's ten minutes fails that check first (the time
        # is used before the promise binding it is checked, as upstream orders it).
        "integratedTime": SET
        + "|"
        + STEP2
        + ".*cert is not valid at validation time|"
        + MALFORMED_INTEGER,
        "inclusionProof/logIndex": beyond,
        "inclusionProof/treeSize": PROOF + "|" + beyond,
    }
    for field, expect in expectations.items():
        path = (*entry, *field.split("/"))
        for name, change in changes.items():
            yield Case(
                f"log/{field}{name}", "must-fail", edited("m1", number(path, change)), expect
            )
    yield Case(
        "log/integratedTime=0",
        "must-fail",
        edited("m1", lambda d: _set(d, (*entry, "integratedTime"), "0")),
        STEP2 + ".*inclusion promise but no integrated time",
    )
    for kind, version, expect in (
        ("hashedrekord", "0.0.1", STEP2 + ".*Unsupported DSSE log entry type: hashedrekord"),
        ("intoto", "0.0.2", STEP2 + ".*inconsistent with other materials"),
        ("intoto", "0.0.1", STEP2 + ".*(integrated time is not supported|Unsupported|Expected)"),
        ("dsse", "0.0.2", STEP2 + ".*(SET|integrated time|Unsupported|inconsistent)"),
        ("rekord", "0.0.1", STEP2 + ".*(integrated time is not supported|Unsupported)"),
    ):

        def retag(d: Document, kind: str = kind, version: str = version) -> None:
            _set(d, (*entry, "kindVersion"), {"kind": kind, "version": version})

        yield Case(f"log/kind={kind}-{version}", "must-fail", edited("m1", retag), expect)

    def hashes(d: Document) -> None:
        _get(d, (*entry, "inclusionProof", "hashes")).append(base64.b64encode(bytes(32)).decode())

    yield Case("log/proof-with-an-extra-hash", "must-fail", edited("m1", hashes), PROOF)

    def checkpoint(change: Callable[[list[str]], list[str]]) -> Callable[[Document], None]:
        def apply(d: Document) -> None:
            path = (*entry, "inclusionProof", "checkpoint", "envelope")
            lines = _get(d, path).split("\n")
            _set(d, path, "\n".join(change(lines)))

        return apply

    checkpoint_edits: dict[str, Callable[[list[str]], list[str]]] = {
        "origin": lambda lines: ["evil-rekor - 1", *lines[1:]],
        "size": lambda lines: [lines[0], str(int(lines[1]) + 1), *lines[2:]],
        "root": lambda lines: [*lines[:2], base64.b64encode(bytes(32)).decode(), *lines[3:]],
        "no-signature": lambda lines: lines[:4],
        "signature": lambda lines: [*lines[:4], lines[4][:-8] + "AAAAAAA=", *lines[5:]],
    }  # fmt: skip
    for name, change in checkpoint_edits.items():
        yield Case(
            f"log/checkpoint-{name}",
            "must-fail",
            edited("m1", checkpoint(change)),
            STEP2 + ".*invalid log entry",
        )
    yield Case(
        "log/no-entries",
        "must-fail",
        edited("m1", lambda d: _set(d, ("verificationMaterial", "tlogEntries"), [])),
        STEP2 + ".*expected exactly one log entry in bundle",
    )
    yield Case(
        "log/the-entry-twice",
        "must-fail",
        edited("m1", lambda d: _get(d, ("verificationMaterial", "tlogEntries")).append(
            _get(d, entry))),
        STEP2 + ".*expected exactly one log entry in bundle",
    )  # fmt: skip
    for count in (0, 2):

        def signatures(d: Document, count: int = count) -> None:
            sigs = d["dsseEnvelope"]["signatures"]
            d["dsseEnvelope"]["signatures"] = (sigs * 2)[:count]

        yield Case(
            f"envelope/{count}-signatures",
            "must-fail",
            edited("m1", signatures),
            STEP2 + ".*envelope must contain exactly one signature",
        )


# -- trust: identity policy, trust root, keys ---------------------------------------------------


def policies() -> Iterator[Case]:
    from tests.reliability.bundle_evidence import IDENTITY

    def verify_with(*args: str, base: str = "m1", root: bool = True) -> Callable[..., Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            b = bundles(ev)
            resolved = [a.replace("{root}", str(b.root)) for a in args]
            extra = ("--trusted-root", str(b.trusted_root)) if root else ()
            return Trial(put(work, b.data(base), "m1.sigstore.json"), (*resolved, *extra))

        return make

    sans = STEP2 + ".*Certificate's SANs do not match"
    for name, identity in (
        ("another-tag", IDENTITY.replace("refs/tags/m1", "refs/tags/m2")),
        ("a-prefix", IDENTITY[:-3]),
        ("with-a-trailing-slash", IDENTITY + "/"),
        ("another-workflow", OTHER_IDENTITY),
        ("in-upper-case", IDENTITY.upper()),
        ("http-not-https", IDENTITY.replace("https://", "http://")),
    ):
        yield Case(
            f"policy/identity-{name}",
            "must-fail",
            verify_with("--cert-identity", identity, "--cert-oidc-issuer", ISSUER),
            sans,
        )
    for name, issuer in (
        ("another", "https://accounts.google.com"),
        ("trailing-slash", ISSUER + "/"),
        ("http", ISSUER.replace("https://", "http://")),
    ):
        yield Case(
            f"policy/issuer-{name}",
            "must-fail",
            verify_with("--cert-identity", IDENTITY, "--cert-oidc-issuer", issuer),
            STEP2 + ".*(OIDCIssuer|issuer)",
        )
    yield Case(
        "policy/another-repository",
        "must-fail",
        verify_with("--repository", "marin-community/other"),
        STEP2 + ".*https://github.com/marin-community/other",
    )
    yield Case(
        "policy/another-ref",
        "must-fail",
        verify_with("--repository", "marin-community/marin", "--ref", "refs/tags/m2"),
        STEP2 + ".*refs/tags/m2",
    )
    yield Case(
        "policy/other-identity-bundle",
        "must-fail",
        verify_with(*_policy_args(), base="m1-other-identity"),
        sans,
    )
    yield Case(
        "trust/another-instance-bundle",
        "must-fail",
        verify_with(*_policy_args(), base="m1-other-instance"),
        CHAIN,
    )
    yield Case(
        "trust/production-root",
        "must-fail",
        verify_with(*_policy_args(), root=False),
        CHAIN + "|" + STEP2 + ".*timestamp",
    )
    yield Case(
        "trust/root-without-the-tsa",
        "must-fail",
        verify_with(*_policy_args(), "--trusted-root", "{root}/root-without-tsa.json", root=False),
        STEP2 + ".*trusted root has no timestamp authority",
    )
    yield Case(
        "trust/another-instance-root",
        "must-fail",
        verify_with(*_policy_args(), "--trusted-root", "{root}/other-root.json", root=False),
        CHAIN + "|" + STEP2 + ".*(timestamp|log)",
    )
    yield Case(
        "trust/another-instance-root-for-a-bundle-without-timestamp",
        "must-fail",
        verify_with(*_policy_args(), "--trusted-root", "{root}/other-root.json", base="m2",
                    root=False),
        CHAIN,
    )  # fmt: skip
    yield Case(
        "trust/tsa-certs-of-another-tsa",
        "must-fail",
        verify_with(*_policy_args(), "--tsa-certs", "{root}/other-tsa-chain.pem"),
        r"step 3 \(timestamp\) failed: .*issued by another TSA",
    )
    yield Case(
        "trust/tsa-certs-but-no-token",
        "must-fail",
        verify_with(*_policy_args(), "--tsa-certs", "{root}/tsa-chain.pem", base="m2"),
        r"step 3 \(timestamp\) failed: --tsa-certs was given but there is no timestamp token",
    )
    yield Case(
        "trust/keyless-bundle-with-a-key",
        "must-fail",
        verify_with("--key", "{root}/managed.pub"),
        STEP2 + ".*signed with a certificate, not a key",
    )
    yield Case(
        "trust/managed-bundle-with-a-policy",
        "must-fail",
        verify_with(*_policy_args(), base="m1-managed"),
        STEP2 + ".*signed with a managed key, not a certificate",
    )
    yield Case(
        "trust/managed-bundle-with-another-key",
        "must-fail",
        verify_with("--key", "{root}/managed-other.pub", base="m1-managed"),
        INVALID_SIGNATURE,
    )
    yield Case(
        "trust/managed-bundle-by-an-untrusted-key",
        "must-fail",
        verify_with("--key", "{root}/managed.pub", base="m1-managed-other"),
        STEP2 + ".*(DSSE: invalid signature|log entry signatures do not match)",
    )
    yield Case(
        "trust/managed-bundle-with-two-keys",
        "must-fail",
        verify_with("--key", "{root}/managed.pub", "--key", "{root}/managed-other.pub",
                    base="m1-managed"),
        STEP2 + ".*a Sigstore bundle is verified against an identity policy",
    )  # fmt: skip


def _policy_args() -> tuple[str, ...]:
    from tests.reliability.bundle_evidence import IDENTITY

    return ("--cert-identity", IDENTITY, "--cert-oidc-issuer", ISSUER)


# -- managed-key bundles ------------------------------------------------------------------------


def managed() -> Iterator[Case]:
    def swap(path: Path_, source: str) -> Callable[[Evidence, Path], Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            b = bundles(ev)
            document = b.document("m1-managed")
            _set(document, path, _get(b.document(source), path))
            return Trial(put(work, _line(document), "m1.sigstore.json"), b.managed_key())

        return make

    yield Case(
        "managed/keyless-log-entry",
        "must-fail",
        swap(("verificationMaterial", "tlogEntries"), "m1"),
        STEP2 + ".*(log entry signatures do not match bundle|log entry)",
    )
    yield Case(
        "managed/keyless-envelope",
        "must-fail",
        swap(("dsseEnvelope",), "m1"),
        INVALID_SIGNATURE,
    )
    yield Case(
        "managed/other-keys-envelope",
        "must-fail",
        swap(("dsseEnvelope",), "m1-managed-other"),
        INVALID_SIGNATURE,
    )
    yield Case(
        "managed/other-keys-log-entry",
        "must-fail",
        swap(("verificationMaterial", "tlogEntries"), "m1-managed-other"),
        STEP2 + ".*log entry",
    )

    def both(d: Document) -> None:
        d["verificationMaterial"]["certificate"] = {"rawBytes": base64.b64encode(b"x").decode()}

    yield Case(
        "managed/certificate-beside-the-key",
        "must-fail",
        edited("m1-managed", both, trust="managed"),
        _oneof(),
    )


# -- equivalent spellings: these must verify ----------------------------------------------------


def equivalents() -> Iterator[Case]:
    def text(change: Callable[[str], str], base: str = "m1") -> Callable[..., Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            b = bundles(ev)
            data = change(b.data(base).decode()).encode()
            trust = b.managed_key() if "managed" in base else b.policy()
            return Trial(put(work, data, "m1.sigstore.json"), trust)

        return make

    def reordered(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: reordered(value[k]) for k in reversed(list(value))}
        if isinstance(value, list):
            return [reordered(v) for v in value]
        return value

    yield Case(
        "equivalent/pretty-printed",
        "equivalent",
        text(lambda t: json.dumps(json.loads(t), indent=2)),
    )
    yield Case(
        "equivalent/keys-reversed",
        "equivalent",
        text(lambda t: json.dumps(reordered(json.loads(t)))),
    )
    yield Case(
        "equivalent/ascii-escaped",
        "equivalent",
        text(lambda t: json.dumps(json.loads(t), ensure_ascii=True).replace("a", "\\u0061")),
    )
    yield Case("equivalent/no-final-newline", "equivalent", text(lambda t: t.rstrip("\n")))
    yield Case("equivalent/blank-lines-around", "equivalent", text(lambda t: "\n\n" + t + "\n"))
    yield Case(
        "equivalent/managed-pretty-printed",
        "equivalent",
        text(lambda t: json.dumps(json.loads(t), indent=1), base="m1-managed"),
    )
    for path in (*B64_FIELDS, ("dsseEnvelope", "payload"), ("dsseEnvelope", "signatures", 0,
                                                              "sig")):  # fmt: skip

        def wrap(d: Document, path: Path_ = path) -> None:
            value = _get(d, path)
            _set(d, path, "\n".join(value[i : i + 64] for i in range(0, len(value), 64)))

        yield Case(f"equivalent/wrapped-base64{_slashed(path)}", "equivalent", edited("m1", wrap))

    # The signer name on a checkpoint's signature line is not signed (the note's text is);
    # sigstore-python finds the log's signature by its key hint. A hint, like a DSSE keyid.
    def signer_name(d: Document) -> None:
        path = ("verificationMaterial", "tlogEntries", 0, "inclusionProof", "checkpoint",
                "envelope")  # fmt: skip
        _set(d, path, _get(d, path).replace("\u2014 127.0.0.1/rekor ", "\u2014 another-name "))

    yield Case("equivalent/checkpoint-signer-name", "equivalent", edited("m1", signer_name))
    yield Case(
        "equivalent/media-type-v0.3-alias",
        "equivalent",
        edited("m1", lambda d: d.__setitem__(
            "mediaType", "application/vnd.dev.sigstore.bundle+json;version=0.3")),
    )  # fmt: skip
    for name, value in (("garbage", "not-a-key-id"), ("empty", ""), ("null", None)):

        def keyid(d: Document, value: Any = value) -> None:
            d["dsseEnvelope"]["signatures"][0]["keyid"] = value

        yield Case(f"equivalent/keyid-{name}", "equivalent", edited("m1", keyid))

    def stripped_timestamp(d: Document) -> None:
        del d["verificationMaterial"]["timestampVerificationData"]

    yield Case(
        "equivalent/without-its-timestamp (the log still dates it)",
        "equivalent",
        edited("m1", stripped_timestamp),
    )

    def stripped_promise(d: Document) -> None:
        del d["verificationMaterial"]["tlogEntries"][0]["inclusionPromise"]

    yield Case(
        "equivalent/without-its-promise (the timestamp still dates it)",
        "equivalent",
        edited("m1", stripped_promise),
    )

    def stripped_both(d: Document) -> None:
        stripped_timestamp(d)
        stripped_promise(d)

    yield Case(
        "stripped/timestamp-and-promise",
        "must-fail",
        edited("m1", stripped_both),
        STEP2 + ".*bundle must contain an inclusion promise or signed timestamp",
    )
