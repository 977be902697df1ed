"""The tamper corpus: systematic mutations of valid attestations, and what ``prov verify`` must say.

Two kinds of case:

* ``must-fail``: forged, damaged or replayed evidence. ``prov verify`` must exit 1 and its
  diagnostics must match ``expect`` (which names the step and the reason).
* ``equivalent``: the same signed bytes spelled another way that DSSE or JSON allows (URL-safe or
  unpadded base64, line breaks in base64, key order, a byte order mark, an absent keyid, a P1363
  ECDSA signature...). These must verify: a verifier that refuses them is wrong too.

A case builds its file (and, for store damage, its own copy of the store) in a fresh folder, so
cases never see each other. New corpora (sigstore bundles) add a module with a ``cases()``
function of the same shape and a line in ``CORPORA``.
"""

from __future__ import annotations

import base64
import json
import random
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cryptography.hazmat.primitives.asymmetric import utils

from provenance._internal import canonical
from provenance.digest import Digest
from provenance.store.objects import Store
from tests.conftest import unpack_store
from tests.reliability.evidence import PAYLOAD_TYPE, Evidence

Kind = Literal["must-fail", "equivalent"]

# Messages, as the verifier words them (regular expressions over stderr).
STEP1 = r"step 1 \(envelope\) failed: "
STEP2 = r"step 2 \(signatures\) failed: signature check failed: "
STEP3 = r"step 4 \(statement\) failed: "
STEP4 = r"step 5 \(subject\) failed: "
STEP5 = r"step 6 \(blobs\) failed: "
NONE_TRUSTED = STEP2 + r"0 distinct trusted key\(s\) verified, 1 required; 1 signature\(s\) not"
ONE_OF_TWO = STEP2 + r"1 distinct trusted key\(s\) verified, 2 required"
SIGNED_BUT_WRONG = r"step (4 \(statement\)|5 \(subject\)) failed: "

P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
ED25519_ORDER = 2**252 + 27742317777372353535851937790883648493


@dataclass(frozen=True)
class Trial:
    """What one case hands to the command line: a file and the arguments after it."""

    file: Path
    args: tuple[str, ...]
    command: str = "verify"


@dataclass(frozen=True)
class Case:
    id: str
    kind: Kind
    build: Callable[[Evidence, Path], Trial]
    expect: str = ""  # must-fail: a regular expression the diagnostics must match
    exit_code: int = 1  # must-fail: the exit code (1: verification failed)
    tags: tuple[str, ...] = field(default=())


# -- spelling envelopes ------------------------------------------------------------------------


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def line(document: Any) -> bytes:
    return json.dumps(document, separators=(",", ":")).encode() + b"\n"


def put(work: Path, data: bytes, name: str = "m1.intoto.jsonl") -> Path:
    path = work / name
    path.write_bytes(data)
    return path


def envelope(payload: bytes, signatures: list[tuple[str, bytes]], ptype: str = PAYLOAD_TYPE) -> Any:
    return {
        "payload": b64(payload),
        "payloadType": ptype,
        "signatures": [{"keyid": keyid, "sig": b64(sig)} for keyid, sig in signatures],
    }


def alice_sig(ev: Evidence, label: str = "m1") -> dict[str, str]:
    signature: dict[str, str] = ev.envelope(label)["signatures"][0]
    return signature


def bob_sig(ev: Evidence) -> dict[str, str]:
    signature: dict[str, str] = ev.envelope("m2")["signatures"][1]
    return signature


def edited(build: Callable[[dict[str, Any]], Any], label: str = "m1") -> Callable[..., Trial]:
    """A case that edits a copy of ``label``'s envelope (as JSON) and trusts its signers."""

    def make(ev: Evidence, work: Path) -> Trial:
        document = ev.envelope(label)
        result = build(document)
        data = result if isinstance(result, bytes) else line(document)
        trust = ev.trust("alice") if label == "m1" else ev.trust("alice", "bob", threshold=2)
        return Trial(put(work, data, f"{label}.intoto.jsonl"), trust)

    return make


def resigned(
    payload: Callable[[Evidence], bytes], ptype: str = PAYLOAD_TYPE, signer: str = "alice"
) -> Callable[..., Trial]:
    """A case whose payload a key (trusted alice, unless said) really signed."""

    def make(ev: Evidence, work: Path) -> Trial:
        data = payload(ev)
        keyid = ev.keyid("alice")  # mallory's signatures claim to be alice's
        doc = envelope(data, [(keyid, ev.sign(signer, data, ptype))], ptype)
        return Trial(put(work, line(doc)), ev.trust("alice"))

    return make


def statement_bytes(document: Any) -> bytes:
    return canonical.dumps(document)


# -- the corpus --------------------------------------------------------------------------------


def cases(ev: Evidence) -> Iterator[Case]:
    """The DSSE corpus. ``ev`` gives the shape of the statement whose every field is mutated."""
    yield from envelope_structure()
    yield from payload_types()
    yield from payload_bytes()
    yield from signature_bytes()
    yield from thresholds()
    yield from impersonation()
    yield from wrong_bytes_signed()
    yield from base64_spellings()
    yield from statement_fields(ev.statement("m1"), signed=False)
    yield from statement_fields(ev.statement("m1"), signed=True)
    yield from statement_envelope()
    yield from store_damage()
    yield from replays()
    yield from equivalents()


def envelope_structure() -> Iterator[Case]:
    expect = {
        "payload": STEP1 + r".*'payload' is not a base64 string",
        "payloadType": STEP1 + r".* has no payloadType",
        "signatures": STEP1 + r".* has no signatures list",
    }
    for key, message in expect.items():

        def drop(d: dict[str, Any], key: str = key) -> None:
            del d[key]

        yield Case(f"envelope/missing-{key}", "must-fail", edited(drop), message)
        for value in (None, 1, True, [], {}, "x"):
            if key == "signatures" and value == []:
                message_for = r"step 2 \(signatures\) failed: the envelope has no signatures"
            elif key == "payload" and value == "x":
                message_for = STEP1 + r".*'payload' is not valid base64"
            elif key == "payloadType" and value == "x":
                message_for = STEP1 + r"payloadType is 'x'"
            else:
                message_for = message

            def retype(d: dict[str, Any], key: str = key, value: Any = value) -> None:
                d[key] = value

            yield Case(f"envelope/{key}={value!r}", "must-fail", edited(retype), message_for)
    for extra in ("payloadHash", "signature", "_type", "Payload"):

        def add(d: dict[str, Any], extra: str = extra) -> None:
            d[extra] = d["payload"] if extra == "Payload" else "x"

        yield Case(f"envelope/unknown-field-{extra}", "must-fail", edited(add), "unknown fields")

    def duplicate(key: str, value: Callable[[Evidence], Any]) -> Callable[..., Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            text = line(ev.envelope("m1")).decode()
            # The repeated key comes first: Python keeps the last value, others the first.
            text = "{" + json.dumps(key) + ":" + json.dumps(value(ev)) + "," + text[1:]
            return Trial(put(work, text.encode()), ev.trust("alice"))

        return make

    repeats: dict[str, Callable[[Evidence], Any]] = {
        "payload": lambda ev: ev.envelope("m2")["payload"],
        "payloadType": lambda ev: "application/json",
        "signatures": lambda ev: ev.envelope("m2")["signatures"],
    }
    for key, value in repeats.items():
        yield Case(
            f"envelope/repeated-{key}",
            "must-fail",
            duplicate(key, value),
            STEP1 + f"the envelope repeats the key '{key}'",
        )

    def repeated_sig(ev: Evidence, work: Path) -> Trial:
        sig = alice_sig(ev)
        forged = b64(ev.sign("mallory", ev.payload("m1")))
        text = line(ev.envelope("m1")).decode()
        text = text.replace(f'"sig":"{sig["sig"]}"', f'"sig":"{forged}","sig":"{sig["sig"]}"')
        return Trial(put(work, text.encode()), ev.trust("alice"))

    yield Case(
        "envelope/repeated-sig", "must-fail", repeated_sig, STEP1 + "the envelope repeats the key"
    )
    for value in ([], "m1", 1, None, True):
        yield Case(
            f"envelope/top-level={value!r}",
            "must-fail",
            edited(lambda d, value=value: line(value)),
            STEP1 + r".* is not a JSON object",
        )
    for fraction in (0.0, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99):

        def cut(ev: Evidence, work: Path, fraction: float = fraction) -> Trial:
            data = ev.attestation("m1").read_bytes().rstrip(b"\n")
            return Trial(put(work, data[: max(1, int(len(data) * fraction))]), ev.trust("alice"))

        yield Case(
            f"envelope/truncated-{fraction:.0%}", "must-fail", cut, STEP1 + r".* is not JSON"
        )

    def drop_brace(ev: Evidence, work: Path) -> Trial:
        data = ev.attestation("m1").read_bytes().rstrip(b"\n")[:-1]
        return Trial(put(work, data), ev.trust("alice"))

    yield Case("envelope/truncated-last-brace", "must-fail", drop_brace, STEP1 + r".* is not JSON")
    for name, data in (("empty", b""), ("blank-lines", b"\n\n"), ("spaces", b"   \n")):
        yield Case(
            f"envelope/{name}",
            "must-fail",
            lambda ev, work, data=data: Trial(put(work, data), ev.trust("alice")),
            STEP1 + r".* is empty",
        )

    def two(first: str, second: str) -> Callable[..., Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            data = ev.attestation(first).read_bytes() + ev.attestation(second).read_bytes()
            return Trial(put(work, data), ev.trust("alice"))

        return make

    yield Case("envelope/two-envelopes", "must-fail", two("m1", "m2"), STEP1 + r".* holds 2 lines")
    yield Case("envelope/same-twice", "must-fail", two("m1", "m1"), STEP1 + r".* holds 2 lines")
    yield Case(
        "envelope/pretty-printed",
        "must-fail",
        edited(lambda d: json.dumps(d, indent=2).encode()),
        STEP1 + r".* holds \d+ lines",
    )
    yield Case(
        "envelope/utf-16",
        "must-fail",
        edited(lambda d: json.dumps(d).encode("utf-16")),
        STEP1 + r".* is not UTF-8 JSON",
    )
    yield Case(
        "envelope/nul-prefix",
        "must-fail",
        edited(lambda d: b"\0" + line(d)),
        STEP1 + r".* is not JSON",
    )
    for seed in range(3):
        noise = random.Random(seed).randbytes(300).replace(b"\n", b" ")
        yield Case(
            f"envelope/random-bytes-{seed}",
            "must-fail",
            edited(lambda d, noise=noise: noise),
            STEP1 + r".* is not (UTF-8 )?JSON",
        )
    yield Case(
        "envelope/deeply-nested",
        "must-fail",
        edited(lambda d: b'{"payload":' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
        STEP1 + r".* nests JSON too deeply",
    )


SWAPPED_TYPES = (
    "application/json",
    "",
    "application/vnd.in-toto+json; charset=utf-8",
    "APPLICATION/VND.IN-TOTO+JSON",
    "application/vnd.in-toto+json ",
    " application/vnd.in-toto+json",
    "application/vnd.in-toto+json\u0000",
    "application/vnd.in-toto+jsonl",
    "application/vnd.dev.sigstore.bundle.v0.3+json",
    "application/vnd.in-toto.statement+json",
    "text/plain",
    "application/vnd.in-toto+json\u200b",
)


def payload_types() -> Iterator[Case]:
    for ptype in SWAPPED_TYPES:

        def swap(d: dict[str, Any], ptype: str = ptype) -> None:
            d["payloadType"] = ptype

        yield Case(
            f"payloadType/swap={ptype!r}", "must-fail", edited(swap), STEP1 + "payloadType is"
        )
        # The swap signed by the trusted key itself: still not an in-toto statement.
        yield Case(
            f"payloadType/signed-swap={ptype!r}",
            "must-fail",
            resigned(lambda ev: ev.payload("m1"), ptype=ptype),
            STEP1 + "payloadType is",
        )

    def surrogate(ev: Evidence, work: Path) -> Trial:
        text = line(ev.envelope("m1")).decode()
        text = text.replace(f'"payloadType":"{PAYLOAD_TYPE}"', '"payloadType":"\\ud800"')
        return Trial(put(work, text.encode()), ev.trust("alice"))

    yield Case(
        "payloadType/lone-surrogate",
        "must-fail",
        surrogate,
        STEP1 + r".*'payloadType' is not valid Unicode",
    )

    def signed_for_other_type(ev: Evidence, work: Path) -> Trial:
        data = ev.payload("m1")
        doc = envelope(data, [(ev.keyid("alice"), ev.sign("alice", data, "application/json"))])
        return Trial(put(work, line(doc)), ev.trust("alice"))

    yield Case(
        "payloadType/signed-under-another-type", "must-fail", signed_for_other_type, NONE_TRUSTED
    )


def _flip(data: bytes, index: int) -> bytes:
    return data[:index] + bytes([data[index] ^ (1 << (index % 8))]) + data[index + 1 :]


def payload_bytes() -> Iterator[Case]:
    """Single-bit flips at 65 places spread over the signed payload bytes (first to last)."""
    for step in range(65):

        def flip_payload(d: dict[str, Any], step: int = step) -> None:
            payload = base64.b64decode(d["payload"])
            d["payload"] = b64(_flip(payload, (len(payload) - 1) * step // 64))

        yield Case(
            f"payload/flip-byte-at-{step}/64", "must-fail", edited(flip_payload), NONE_TRUSTED
        )


def signature_bytes() -> Iterator[Case]:
    for index in range(64):

        def flip_alice(d: dict[str, Any], index: int = index) -> None:
            sig = base64.b64decode(d["signatures"][0]["sig"])
            d["signatures"][0]["sig"] = b64(_flip(sig, index))

        yield Case(
            f"signature/ed25519-flip-byte-{index}", "must-fail", edited(flip_alice), NONE_TRUSTED
        )
    for index in range(72):  # a DER ECDSA signature is 70 to 72 bytes

        def flip_bob(d: dict[str, Any], index: int = index) -> None:
            sig = base64.b64decode(d["signatures"][1]["sig"])
            d["signatures"][1]["sig"] = b64(_flip(sig, index % len(sig)))

        yield Case(
            f"signature/ecdsa-flip-byte-{index}", "must-fail", edited(flip_bob, "m2"), ONE_OF_TWO
        )

    def ed25519(change: Callable[[bytes], bytes]) -> Callable[[dict[str, Any]], None]:
        def apply(d: dict[str, Any]) -> None:
            d["signatures"][0]["sig"] = b64(change(base64.b64decode(d["signatures"][0]["sig"])))

        return apply

    def malleate(sig: bytes) -> bytes:  # S + L: the same point equation, a non-canonical S
        s = int.from_bytes(sig[32:], "little") + ED25519_ORDER
        return sig[:32] + s.to_bytes(32, "little")

    variants: dict[str, Callable[[bytes], bytes]] = {
        "s-plus-l": malleate,
        "truncated-63": lambda s: s[:63],
        "extended-65": lambda s: s + b"\0",
        "zeros": lambda s: bytes(64),
        "empty": lambda s: b"",
        "r-only": lambda s: s[:32],
        "halves-swapped": lambda s: s[32:] + s[:32],
    }
    for name, change in variants.items():
        yield Case(f"signature/ed25519-{name}", "must-fail", edited(ed25519(change)), NONE_TRUSTED)

    def ecdsa(change: Callable[[int, int, bytes], bytes]) -> Callable[[dict[str, Any]], None]:
        def apply(d: dict[str, Any]) -> None:
            sig = base64.b64decode(d["signatures"][1]["sig"])
            r, s = utils.decode_dss_signature(sig)
            d["signatures"][1]["sig"] = b64(change(r, s, sig))

        return apply

    def der_int(value: int, pad: bytes = b"") -> bytes:
        body = pad + value.to_bytes((value.bit_length() + 8) // 8, "big")
        return b"\x02" + bytes([len(body)]) + body

    def der(*parts: bytes) -> bytes:
        body = b"".join(parts)
        return b"\x30" + bytes([len(body)]) + body

    ecdsa_variants: dict[str, Callable[[int, int, bytes], bytes]] = {
        "trailing-byte": lambda r, s, sig: sig + b"\0",
        "ber-long-length": lambda r, s, sig: b"\x30\x81" + sig[1:],
        "r-leading-zero": lambda r, s, sig: der(der_int(r, b"\0"), der_int(s)),
        "r-s-swapped": lambda r, s, sig: utils.encode_dss_signature(s, r),
        "r-plus-n": lambda r, s, sig: utils.encode_dss_signature(r + P256_ORDER, s),
        "s-zero": lambda r, s, sig: utils.encode_dss_signature(r, 0),
        "p1363-swapped": lambda r, s, sig: s.to_bytes(32, "big") + r.to_bytes(32, "big"),
        "p1363-truncated": lambda r, s, sig: (r.to_bytes(32, "big") + s.to_bytes(32, "big"))[:63],
    }
    for name, change in ecdsa_variants.items():
        yield Case(f"signature/ecdsa-{name}", "must-fail", edited(ecdsa(change), "m2"), ONE_OF_TWO)
    for name, value in (("sig-missing", None), ("sig-number", 5), ("sig-list", [])):

        def broken(d: dict[str, Any], value: Any = value) -> None:
            if value is None:
                del d["signatures"][0]["sig"]
            else:
                d["signatures"][0]["sig"] = value

        yield Case(
            f"signature/{name}",
            "must-fail",
            edited(broken),
            STEP1 + r".*'signatures\[0\]\.sig' is not a base64 string",
        )
    for name, entry in (
        ("entry-string", "sig"),
        ("entry-null", None),
        ("entry-extra-field", "extra"),
    ):

        def malformed(d: dict[str, Any], entry: Any = entry) -> None:
            if entry == "extra":
                d["signatures"][0]["cert"] = "x"
            else:
                d["signatures"][0] = entry

        yield Case(
            f"signature/{name}",
            "must-fail",
            edited(malformed),
            STEP1 + r".*signature #1 is malformed",
        )

    def keyid_number(d: dict[str, Any]) -> None:
        d["signatures"][0]["keyid"] = 7

    yield Case(
        "signature/keyid-number", "must-fail", edited(keyid_number), STEP1 + r".*non-string keyid"
    )


def thresholds() -> Iterator[Case]:
    def make(
        sigs: Callable[[Evidence], list[dict[str, str]]],
        trusted: tuple[str, ...] = ("alice", "bob"),
        threshold: int = 2,
        label: str = "m1",
    ) -> Callable[..., Trial]:
        def build(ev: Evidence, work: Path) -> Trial:
            document = ev.envelope(label)
            document["signatures"] = sigs(ev)
            args: list[str] = []
            for name in trusted:
                args += ["--key", str(ev.keys / f"{name}.pub")]
            return Trial(put(work, line(document)), (*args, "--threshold", str(threshold)))

        return build

    def bob_signs_m1(ev: Evidence) -> dict[str, str]:
        return {"keyid": ev.keyid("bob"), "sig": b64(ev.sign("bob", ev.payload("m1")))}

    def high_s(sig: dict[str, str]) -> dict[str, str]:
        r, s = utils.decode_dss_signature(base64.b64decode(sig["sig"]))
        return {**sig, "sig": b64(utils.encode_dss_signature(r, P256_ORDER - s))}

    def p1363(sig: dict[str, str]) -> dict[str, str]:
        r, s = utils.decode_dss_signature(base64.b64decode(sig["sig"]))
        return {**sig, "sig": b64(r.to_bytes(32, "big") + s.to_bytes(32, "big"))}

    repeated = ONE_OF_TWO + r"; 1 repeated signature\(s\) by an already counted key"
    yield Case(
        "threshold/same-signature-twice",
        "must-fail",
        make(lambda ev: [alice_sig(ev)] * 2),
        repeated,
    )
    yield Case(
        "threshold/same-signature-claiming-another-key",
        "must-fail",
        make(lambda ev: [alice_sig(ev), {**alice_sig(ev), "keyid": ev.keyid("bob")}]),
        repeated,
    )
    yield Case(
        "threshold/same-signature-five-times",
        "must-fail",
        make(lambda ev: [alice_sig(ev)] * 5),
        ONE_OF_TWO + r"; 4 repeated signature\(s\)",
    )
    yield Case(
        "threshold/two-distinct-ecdsa-signatures-by-one-key",
        "must-fail",
        make(lambda ev: [bob_signs_m1(ev), bob_signs_m1(ev)]),
        repeated,
    )
    yield Case(
        "threshold/ecdsa-signature-and-its-high-s-twin",
        "must-fail",
        make(lambda ev: [bob_sig(ev), high_s(bob_sig(ev))], label="m2"),
        repeated,
    )
    yield Case(
        "threshold/ecdsa-signature-in-der-and-p1363",
        "must-fail",
        make(lambda ev: [bob_sig(ev), p1363(bob_sig(ev))], label="m2"),
        repeated,
    )
    yield Case(
        "threshold/one-key-trusted-under-two-files",
        "must-fail",
        make(lambda ev: [alice_sig(ev)], trusted=("alice", "alice-copy")),
        ONE_OF_TWO,
    )
    yield Case(
        "threshold/one-key-trusted-as-two-point-encodings",
        "must-fail",
        make(lambda ev: [bob_signs_m1(ev), bob_signs_m1(ev)], trusted=("bob", "bob-compressed")),
        repeated,
    )
    yield Case(
        "threshold/two-signers-of-three-required",
        "must-fail",
        make(lambda ev: ev.envelope("m2")["signatures"], ("alice", "bob", "carol"), 3, "m2"),
        STEP2 + r"2 distinct trusted key\(s\) verified, 3 required",
    )
    yield Case(
        "threshold/second-signer-replaced-by-first",
        "must-fail",
        make(lambda ev: [alice_sig(ev, "m2")] * 2, label="m2"),
        repeated,
    )


def impersonation() -> Iterator[Case]:
    """A keyid that names a trusted key, on a signature made by another key."""

    def mallory_as_alice(ev: Evidence, work: Path) -> Trial:
        data = ev.payload("m1")
        doc = envelope(data, [(ev.keyid("alice"), ev.sign("mallory", data))])
        return Trial(put(work, line(doc)), ev.trust("alice"))

    yield Case("keyid/mallory-signs-as-alice", "must-fail", mallory_as_alice, NONE_TRUSTED)

    def forged_statement(ev: Evidence) -> bytes:
        statement = ev.statement("m1")
        statement["predicate"]["captures"][0]["data"]["commit"] = "0" * 40
        sha = canonical.dumps(statement["predicate"])
        import hashlib

        statement["subject"][0]["digest"]["sha256"] = hashlib.sha256(sha).hexdigest()
        return statement_bytes(statement)

    yield Case(
        "keyid/mallory-signs-a-consistent-forgery-as-alice",
        "must-fail",
        resigned(forged_statement, signer="mallory"),
        NONE_TRUSTED,
    )

    def bob_as_alice(ev: Evidence, work: Path) -> Trial:
        data = ev.payload("m1")
        doc = envelope(data, [(ev.keyid("alice"), ev.sign("bob", data))])
        return Trial(put(work, line(doc)), ev.trust("alice"))

    yield Case(
        "keyid/bob-signs-as-alice-when-only-alice-is-trusted",
        "must-fail",
        bob_as_alice,
        NONE_TRUSTED,
    )

    def m2_mallory_as_bob(ev: Evidence, work: Path) -> Trial:
        document = ev.envelope("m2")
        data = ev.payload("m2")
        document["signatures"][1] = {"keyid": ev.keyid("bob"), "sig": b64(ev.sign("mallory", data))}
        return Trial(
            put(work, line(document), "m2.intoto.jsonl"), ev.trust("alice", "bob", threshold=2)
        )

    yield Case(
        "keyid/mallory-replaces-bob-under-bobs-keyid", "must-fail", m2_mallory_as_bob, ONE_OF_TWO
    )

    def mallory_beside_broken_alice(ev: Evidence, work: Path) -> Trial:
        document = ev.envelope("m1")
        sig = base64.b64decode(document["signatures"][0]["sig"])
        document["signatures"][0]["sig"] = b64(_flip(sig, 0))
        document["signatures"].append(
            {"keyid": ev.keyid("alice"), "sig": b64(ev.sign("mallory", ev.payload("m1")))}
        )
        return Trial(put(work, line(document)), ev.trust("alice"))

    yield Case(
        "keyid/mallory-beside-a-broken-alice-signature",
        "must-fail",
        mallory_beside_broken_alice,
        STEP2 + r"0 distinct trusted key\(s\) verified, 1 required; 2 signature\(s\) not",
    )


def wrong_bytes_signed() -> Iterator[Case]:
    """Signatures by the trusted key, over something other than this envelope's PAE."""
    import hashlib

    from provenance.attest import dsse

    def signed(message: Callable[[Evidence], bytes]) -> Callable[..., Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            data = ev.payload("m1")
            sig = ev.signer("alice").sign(message(ev))
            doc = envelope(data, [(ev.keyid("alice"), sig)])
            return Trial(put(work, line(doc)), ev.trust("alice"))

        return make

    messages: dict[str, Callable[[Evidence], bytes]] = {
        "payload-without-pae": lambda ev: ev.payload("m1"),
        "pae-of-the-base64-text": lambda ev: dsse.pae(PAYLOAD_TYPE, b64(ev.payload("m1")).encode()),
        "pae-version-0": lambda ev: dsse.pae(PAYLOAD_TYPE, ev.payload("m1")).replace(
            b"DSSEv1", b"DSSEv0", 1
        ),
        "pae-without-lengths": lambda ev: (
            b"DSSEv1 " + PAYLOAD_TYPE.encode() + b" " + ev.payload("m1")
        ),
        "sha256-of-the-pae": lambda ev: hashlib.sha256(
            dsse.pae(PAYLOAD_TYPE, ev.payload("m1"))
        ).digest(),
        "pae-of-m2": lambda ev: dsse.pae(PAYLOAD_TYPE, ev.payload("m2")),
        "the-envelope-file": lambda ev: ev.attestation("m1").read_bytes(),
    }
    for name, message in messages.items():
        yield Case(f"signed-bytes/{name}", "must-fail", signed(message), NONE_TRUSTED)

    def m2_signature_on_m1(ev: Evidence, work: Path) -> Trial:
        document = ev.envelope("m1")
        document["signatures"] = [ev.envelope("m2")["signatures"][0]]
        return Trial(put(work, line(document)), ev.trust("alice"))

    yield Case(
        "signed-bytes/m2-signature-transplanted-onto-m1",
        "must-fail",
        m2_signature_on_m1,
        NONE_TRUSTED,
    )


def base64_spellings() -> Iterator[Case]:
    """Strings that are not valid base64 of any bytes. (Valid re-spellings are equivalents.)"""

    def field_edit(where: str, change: Callable[[str], str]) -> Callable[[dict[str, Any]], None]:
        def apply(d: dict[str, Any]) -> None:
            if where == "payload":
                d["payload"] = change(d["payload"])
            else:
                d["signatures"][0]["sig"] = change(d["signatures"][0]["sig"])

        return apply

    def mixed(text: str) -> str:
        urlsafe = text.replace("+", "-").replace("/", "_")
        if "-" not in urlsafe and "_" not in urlsafe:
            urlsafe = "-" + urlsafe[1:]
        # put one standard-alphabet character back
        return urlsafe[:4] + "+" + urlsafe[5:]

    def wrong_padding(text: str) -> str:
        stripped = text.rstrip("=")
        needed = -len(stripped) % 4
        return stripped + "=" * (needed + 1 if needed < 2 else 1)

    def pad_bits(text: str) -> str:
        stripped = text.rstrip("=")
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        if len(stripped) % 4 == 0:  # no partial last group: no pad bits to set
            return stripped[:-1] + "!"
        last = alphabet.index(stripped[-1]) | 1
        return stripped[:-1] + alphabet[last] + text[len(stripped) :]

    def one_mod_four(text: str) -> str:  # no base64 string has this length
        stripped = text.rstrip("=")
        return stripped + "A" * ((1 - len(stripped)) % 4 or 4)

    changes: dict[str, tuple[Callable[[str], str], str]] = {
        "bang-inside": (lambda t: t[:8] + "!" + t[8:], "is not valid base64"),
        "padding-inside": (lambda t: t[:8] + "==" + t[8:], "is not valid base64"),
        "mixed-alphabets": (mixed, "mixes base64 alphabets"),
        "excess-padding": (lambda t: t + "===", "has wrong base64 padding"),
        "wrong-padding": (wrong_padding, "has wrong base64 padding"),
        "non-ascii-letter": (lambda t: t[:8] + "\u00e9" + t[9:], "is not valid base64"),
        "arabic-digit": (lambda t: t[:8] + "\u0661" + t[9:], "is not valid base64"),
        "unicode-space": (lambda t: t[:8] + "\u2003" + t[8:], "is not valid base64"),
        "length-1-mod-4": (one_mod_four, "is not valid base64"),
        "percent-encoded": (
            lambda t: t.replace("+", "%2B").replace("/", "%2F") + "%3D",
            "is not valid base64",
        ),
    }
    for where, field_name in (("payload", "payload"), ("sig", r"signatures\[0\]\.sig")):
        for name, (change, message) in changes.items():
            yield Case(
                f"base64/{where}-{name}",
                "must-fail",
                edited(field_edit(where, change)),
                STEP1 + f".*'{field_name}' {message}",
            )
    yield Case(
        "base64/sig-non-zero-padding-bits",
        "must-fail",
        edited(field_edit("sig", pad_bits)),
        STEP1 + r".*'signatures\[0\]\.sig' has non-zero base64 padding bits",
    )


# -- every field of the statement and its predicate ------------------------------------------


Path_ = tuple[str | int, ...]


def walk(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every node below ``value`` (objects and arrays too), depth first."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from walk(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from walk(item, (*path, index))


def mutated(value: Any) -> Any:
    """A different value of the same JSON type that still looks plausible."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 2 + 1
    if value is None:
        return "x"
    if isinstance(value, str):
        if not value:
            return "x"
        last = value[-1]
        if last in "0123456789abcdef":
            swap = "0123456789abcdef"
            return value[:-1] + swap[(swap.index(last) + 1) % 16]
        return value[:-1] + ("a" if last != "a" else "b")
    if isinstance(value, list):
        return [*value, value[0] if value else "x"]
    if isinstance(value, dict):
        return {**value, "zz": 1} if value else {"x": 1}
    raise TypeError(value)


def _at(document: Any, path: Path_) -> Any:
    for step in path:
        document = document[step]
    return document


def _name(path: Path_) -> str:
    return "/".join(str(p) for p in path) or "(root)"


def field_mutations(
    statement: dict[str, Any], under: Path_ = ()
) -> Iterator[tuple[str, Callable[[Any], None]]]:
    """(description, edit) for every node: change its value, remove it, add a sibling."""
    for path, value in walk(_at(statement, under), under):
        if not path:
            continue
        parent_path, last = path[:-1], path[-1]

        def change(doc: Any, parent_path: Path_ = parent_path, last: Any = last) -> None:
            parent = _at(doc, parent_path)
            parent[last] = mutated(parent[last])

        yield f"change {_name(path)}", change

        def remove(doc: Any, parent_path: Path_ = parent_path, last: Any = last) -> None:
            del _at(doc, parent_path)[last]

        yield f"remove {_name(path)}", remove
        if isinstance(value, dict):

            def add(doc: Any, path: Path_ = path) -> None:
                _at(doc, path)["zz_added"] = 1

            yield f"add a key to {_name(path)}", add


def statement_fields(template: dict[str, Any], *, signed: bool) -> Iterator[Case]:
    """Every field of the statement (stale signature) or of the predicate (signed again).

    With the original signature, any change must fail at the signature step. Signed again by
    the trusted key (a buggy or coerced signer), a changed predicate must still fail: at the
    schema check or at the subject digest, whichever notices first.
    """
    under: Path_ = ("predicate",) if signed else ()
    for description, edit in field_mutations(template, under):

        def build(ev: Evidence, work: Path, edit: Callable[[Any], None] = edit) -> Trial:
            statement = ev.statement("m1")
            edit(statement)
            data = statement_bytes(statement)
            if signed:
                doc = envelope(data, [(ev.keyid("alice"), ev.sign("alice", data))])
            else:
                doc = {**ev.envelope("m1"), "payload": b64(data)}
            return Trial(put(work, line(doc)), ev.trust("alice"))

        kind = "signed" if signed else "stale"
        yield Case(
            f"statement-{kind}/{description}",
            "must-fail",
            build,
            SIGNED_BUT_WRONG if signed else NONE_TRUSTED,
        )


def statement_envelope() -> Iterator[Case]:
    """The statement's own fields, signed by the trusted key: each has a specific refusal."""
    import hashlib

    def edit(change: Callable[[Evidence, dict[str, Any]], Any]) -> Callable[[Evidence], bytes]:
        def payload(ev: Evidence) -> bytes:
            statement = ev.statement("m1")
            result = change(ev, statement)
            return result if isinstance(result, bytes) else statement_bytes(statement)

        return payload

    def set_(path: Path_, value: Any) -> Callable[[Evidence, dict[str, Any]], None]:
        def change(ev: Evidence, statement: dict[str, Any]) -> None:
            _at(statement, path[:-1])[path[-1]] = value

        return change

    for value in (
        "https://in-toto.io/Statement/v0.1",
        "",
        "https://in-toto.io/Statement/v1 ",
        None,
        1,
    ):
        yield Case(
            f"statement-signed/_type={value!r}",
            "must-fail",
            resigned(edit(set_(("_type",), value))),
            STEP3 + "the statement type is",
        )
    for value in (
        "https://slsa.dev/provenance/v1",
        "https://prov.dev/snapshot/v2",
        "https://prov.dev/snapshot/v1/",
        "HTTPS://PROV.DEV/SNAPSHOT/V1",
    ):
        yield Case(
            f"statement-signed/predicateType={value!r}",
            "must-fail",
            resigned(edit(set_(("predicateType",), value))),
            STEP3 + "unknown predicateType",
        )

    def other_sha(ev: Evidence, statement: dict[str, Any]) -> None:
        statement["subject"][0]["digest"]["sha256"] = ev.sha256["m2"]

    def upper(ev: Evidence, statement: dict[str, Any]) -> None:
        digest = statement["subject"][0]["digest"]
        digest["sha256"] = digest["sha256"].upper()

    def renamed_algorithm(ev: Evidence, statement: dict[str, Any]) -> None:
        digest = statement["subject"][0]["digest"]
        digest["sha512"] = digest.pop("sha256")

    def sha_of_payload(ev: Evidence, statement: dict[str, Any]) -> None:
        statement["subject"][0]["digest"]["sha256"] = hashlib.sha256(ev.payload("m1")).hexdigest()

    def sha_of_pretty_predicate(ev: Evidence, statement: dict[str, Any]) -> None:
        pretty = json.dumps(statement["predicate"], indent=2).encode()
        statement["subject"][0]["digest"]["sha256"] = hashlib.sha256(pretty).hexdigest()

    def blake3_instead(ev: Evidence, statement: dict[str, Any]) -> None:
        import blake3

        digest = blake3.blake3(canonical.dumps(statement["predicate"])).hexdigest()
        statement["subject"][0]["digest"] = {"blake3": digest}

    mismatches: dict[str, Callable[[Evidence, dict[str, Any]], Any]] = {
        "digest-of-m2": other_sha,
        "digest-in-upper-case": upper,
        "digest-under-sha512": renamed_algorithm,
        "digest-of-the-payload": sha_of_payload,
        "digest-of-non-canonical-predicate": sha_of_pretty_predicate,
        "blake3-digest-only": blake3_instead,
        "predicate-of-m2": lambda ev, st: st.__setitem__(
            "predicate", ev.statement("m2")["predicate"]
        ),
    }
    for name, change in mismatches.items():
        yield Case(
            f"statement-signed/subject-{name}",
            "must-fail",
            resigned(edit(change)),
            STEP4 + "the subject digest does not match the snapshot",
        )
    yield Case(
        "statement-signed/predicateType=''",
        "must-fail",
        resigned(edit(set_(("predicateType",), ""))),
        STEP3 + "the statement is not a valid in-toto Statement v1(.|\n)*Predicate type required",
    )
    for name in ("prov-snapshot:m2", "m1", "prov-snapshot:m1 ", ""):
        yield Case(
            f"statement-signed/subject-name={name!r}",
            "must-fail",
            resigned(edit(set_(("subject", 0, "name"), name))),
            STEP4 + "the subject is named",
        )
    yield Case(
        "statement-signed/no-subject",
        "must-fail",
        resigned(edit(set_(("subject",), []))),
        STEP3 + "the statement is not a valid in-toto Statement v1",
    )
    yield Case(
        "statement-signed/predicate-empty",
        "must-fail",
        resigned(edit(set_(("predicate",), {}))),
        STEP3 + "the predicate does not match its schema",
    )
    yield Case(
        "statement-signed/predicate-a-list",
        "must-fail",
        resigned(edit(set_(("predicate",), []))),
        STEP3 + "the statement lacks subject, predicateType or predicate",
    )
    raw_payloads: dict[str, tuple[Callable[[Evidence], bytes], str]] = {
        "not-json": (lambda ev: b"hello", "the payload is not JSON"),
        "json-array": (lambda ev: b"[]", "the payload is not a JSON object"),
        "repeated-predicate-key": (
            lambda ev: ev.payload("m1").replace(
                b'"predicate":',
                b'"predicate":'
                + canonical.dumps(ev.statement("m2")["predicate"])
                + b',"predicate":',
                1,
            ),
            "the payload is not JSON(.|\n)*the key 'predicate' is repeated",
        ),
        "number-beyond-double": (
            lambda ev: ev.payload("m1").replace(b'"dirty":false', b'"dirty":1e999', 1),
            "the payload is not JSON(.|\n)*too large for a double",
        ),
        "deeply-nested-data": (
            lambda ev: ev.payload("m1").replace(
                b'"dirty":false', b'"dirty":' + b"[" * 50_000 + b"]" * 50_000, 1
            ),
            "the payload is not JSON(.|\n)*nests too deeply",
        ),
        "lone-surrogate-in-data": (
            lambda ev: ev.payload("m1").replace(
                b'"ref_kind":"symbolic"', b'"ref_kind":"\\ud800"', 1
            ),
            "",
        ),
    }
    for name, (payload, message) in raw_payloads.items():
        yield Case(
            f"statement-signed/payload-{name}",
            "must-fail",
            resigned(payload),
            (STEP3 + message) if message else STEP4 + "the snapshot has no canonical form",
        )


# -- the store and replays ---------------------------------------------------------------------


def _store_copy(ev: Evidence, work: Path, *, loose: bool = True) -> Path:
    """A copy of the evidence's store; ``loose``: its packs turned into loose files (the layout
    before packs, still read), so that each harm below reaches one object's own file."""
    store = work / "store"
    shutil.copytree(ev.store, store, symlinks=True)
    if loose:
        unpack_store(store)
    return store


def _blob_path(store: Path, ev: Evidence, index: int) -> tuple[Path, str]:
    blob = ev.statement("m1")["predicate"]["captures"][0]["blobs"][index]
    hex_ = blob["digest"].removeprefix("blake3:")
    return store / "objects" / hex_[:2] / hex_[2:], blob["name"]


def store_damage() -> Iterator[Case]:
    def damage(index: int, how: Callable[[Path, Path, Evidence], None]) -> Callable[..., Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            store = _store_copy(ev, work)
            path, _ = _blob_path(store, ev, index)
            path.chmod(0o644)
            how(path, store, ev)
            file = put(work, ev.attestation("m1").read_bytes())
            return Trial(file, (*ev.trust("alice"), "--store", str(store)))

        return make

    def other_blob(path: Path, store: Path, ev: Evidence) -> Path:
        index = next(i for i in range(3) if _blob_path(store, ev, i)[0] != path)
        return _blob_path(store, ev, index)[0]

    def flip(path: Path, store: Path, ev: Evidence) -> None:
        data = path.read_bytes()
        path.write_bytes(_flip(data, len(data) // 2))

    def swap_bytes(path: Path, store: Path, ev: Evidence) -> None:
        path.write_bytes(other_blob(path, store, ev).read_bytes())

    def swap_files(path: Path, store: Path, ev: Evidence) -> None:
        other = other_blob(path, store, ev)
        other.chmod(0o644)
        temp = path.with_name("swap")
        path.rename(temp)
        other.rename(path)
        temp.rename(other)

    def symlink(path: Path, store: Path, ev: Evidence) -> None:
        target = other_blob(path, store, ev)
        path.unlink()
        path.symlink_to(target)

    def directory(path: Path, store: Path, ev: Evidence) -> None:
        path.unlink()
        path.mkdir()

    harms: dict[str, tuple[Callable[[Path, Path, Evidence], None], str]] = {
        "byte-flipped": (flip, "is corrupt"),
        "truncated": (
            lambda p, s, e: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
            "is corrupt",
        ),
        "emptied": (lambda p, s, e: p.write_bytes(b""), "is corrupt"),
        "extended": (lambda p, s, e: p.write_bytes(p.read_bytes() + b"\n"), "is corrupt"),
        "deleted": (lambda p, s, e: p.unlink(), "is missing from the store"),
        "replaced-by-another-blob": (swap_bytes, "is corrupt"),
        "swapped-with-another-blob": (swap_files, "is corrupt"),
        "symlinked-to-another-blob": (symlink, "is corrupt"),
        "replaced-by-a-directory": (directory, "cannot be read from the store"),
    }
    for index in range(3):
        for name, (how, message) in harms.items():
            yield Case(
                f"store/blob-{index}-{name}",
                "must-fail",
                damage(index, how),
                STEP5 + rf"blob '[^']+' of source 'code': object blake3:[0-9a-f]+ {message}",
            )
    yield from pack_damage()


def pack_damage() -> Iterator[Case]:
    """The same blobs in the store's pack: its bytes, its index, the files themselves."""

    def damage(how: Callable[[Path, Path, Path], None]) -> Callable[..., Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            store = _store_copy(ev, work, loose=False)
            hex_ = _blob_path(store, ev, 0)[0]
            pack = Store(store).locate(Digest("blake3", hex_.parent.name + hex_.name)).path
            index = pack.with_suffix(".idx")
            for path in (index, pack):
                path.chmod(0o644)
            how(store, index, pack)
            file = put(work, ev.attestation("m1").read_bytes())
            return Trial(file, (*ev.trust("alice"), "--store", str(store)))

        return make

    def flip_blob(store: Path, index: Path, pack: Path) -> None:
        data = bytearray(pack.read_bytes())
        data[len(data) // 2] ^= 0x01
        pack.write_bytes(bytes(data))

    def flip_index_digest(store: Path, index: Path, pack: Path) -> None:
        data = bytearray(index.read_bytes())
        data[8 + 8 + 1024] ^= 0x80  # the first digest: its object is no longer found
        index.write_bytes(bytes(data))

    def flip_index_offset(store: Path, index: Path, pack: Path) -> None:
        data = bytearray(index.read_bytes())
        count = int.from_bytes(data[8:16], "little")
        for position in range(count):  # every offset moved by one: wrong bytes everywhere
            at = 8 + 8 + 1024 + 32 * count + 8 * position
            data[at] ^= 0x01
        index.write_bytes(bytes(data))

    harms: dict[str, tuple[Callable[[Path, Path, Path], None], str]] = {
        "pack-byte-flipped": (flip_blob, "is corrupt"),
        "pack-truncated": (
            lambda s, i, p: p.write_bytes(p.read_bytes()[:12]),
            "cannot be read from the store",
        ),
        "pack-deleted": (lambda s, i, p: p.unlink(), "is missing from the store"),
        "index-deleted": (lambda s, i, p: i.unlink(), "is missing from the store"),
        "index-truncated": (
            lambda s, i, p: i.write_bytes(i.read_bytes()[:100]),
            "is missing from the store",
        ),
        "index-digest-flipped": (flip_index_digest, "is missing from the store"),
        "index-offsets-moved": (flip_index_offset, "is corrupt"),
    }
    for name, (how, message) in harms.items():
        yield Case(
            f"store/{name}",
            "must-fail",
            damage(how),
            STEP5 + rf"blob '[^']+' of source 'code': object blake3:[0-9a-f]+ {message}",
        )


def replays() -> Iterator[Case]:
    """An older valid attestation presented as a newer one (see verify.check_label)."""

    def as_name(label: str, name: str, *extra: str) -> Callable[..., Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            file = put(work, ev.attestation(label).read_bytes(), name)
            return Trial(file, (*ev.trust("alice"), *extra))

        return make

    replayed = STEP4 + r"the attestation is signed for label '{0}', not '{1}'"
    yield Case(
        "replay/m1-renamed-m2",
        "must-fail",
        as_name("m1", "m2.intoto.jsonl"),
        replayed.format("m1", "m2"),
    )
    yield Case(
        "replay/m1-renamed-m3",
        "must-fail",
        as_name("m1", "m3.intoto.jsonl"),
        replayed.format("m1", "m3"),
    )
    yield Case(
        "replay/m1-renamed-to-a-dated-label",
        "must-fail",
        as_name("m1", "snapshot-20260914T000000Z.intoto.jsonl"),
        replayed.format("m1", "snapshot-20260914T000000Z"),
    )
    yield Case(
        "replay/m1-expected-as-m2",
        "must-fail",
        as_name("m1", "m1.intoto.jsonl", "--expect-label", "m2"),
        replayed.format("m1", "m2"),
    )
    yield Case(
        "replay/m1-under-any-name-expected-as-m2",
        "must-fail",
        as_name("m1", "release.json", "--expect-label", "m2"),
        replayed.format("m1", "m2"),
    )
    yield Case(
        "replay/m2-renamed-m1",
        "must-fail",
        as_name("m2", "m1.intoto.jsonl"),
        replayed.format("m2", "m1"),
    )

    def relabelled(ev: Evidence, work: Path) -> Trial:
        statement = ev.statement("m1")
        statement["predicate"]["label"] = "m2"
        statement["subject"][0]["name"] = "prov-snapshot:m2"
        document = {**ev.envelope("m1"), "payload": b64(statement_bytes(statement))}
        return Trial(put(work, line(document), "m2.intoto.jsonl"), ev.trust("alice"))

    yield Case("replay/m1-relabelled-inside", "must-fail", relabelled, NONE_TRUSTED)

    def index_points_elsewhere(ev: Evidence, work: Path) -> Trial:
        store = _store_copy(ev, work)
        entries = {
            json.loads(p.read_text())["label"]: p for p in (store / "snapshots").glob("*.json")
        }
        m1, m2 = json.loads(entries["m1"].read_text()), json.loads(entries["m2"].read_text())
        m2["attestation"] = m1["attestation"]
        entries["m2"].write_text(json.dumps(m2))
        return Trial(Path("m2"), ("--store", str(store)), command="show")

    yield Case(
        "replay/store-index-points-m2-at-m1",
        "must-fail",
        index_points_elsewhere,
        r"the index entry of 'm2' \([0-9a-f]{12}\) points at the attestation of 'm1'",
        exit_code=3,
    )


# -- equivalent spellings: must verify ---------------------------------------------------------


def equivalents() -> Iterator[Case]:
    def urlsafe(text: str) -> str:
        return text.replace("+", "-").replace("/", "_")

    def spell(where: str, change: Callable[[str], str]) -> Callable[[dict[str, Any]], None]:
        def apply(d: dict[str, Any]) -> None:
            if where in ("payload", "both"):
                d["payload"] = change(d["payload"])
            if where in ("sig", "both"):
                for sig in d["signatures"]:
                    sig["sig"] = change(sig["sig"])

        return apply

    spellings: dict[str, Callable[[str], str]] = {
        "url-safe": urlsafe,
        "unpadded": lambda t: t.rstrip("="),
        "url-safe-unpadded": lambda t: urlsafe(t).rstrip("="),
        "wrapped-at-76": lambda t: "\n".join(t[i : i + 76] for i in range(0, len(t), 76)),
        "wrapped-crlf": lambda t: "\r\n".join(t[i : i + 64] for i in range(0, len(t), 64)),
        "spaced": lambda t: " ".join(t[i : i + 4] for i in range(0, len(t), 4)),
        "trailing-newline": lambda t: t + "\n",
    }
    for where in ("payload", "sig", "both"):
        for name, change in spellings.items():
            yield Case(f"equivalent/{where}-{name}", "equivalent", edited(spell(where, change)))
    yield Case(
        "equivalent/ecdsa-signatures-url-safe",
        "equivalent",
        edited(spell("sig", urlsafe), "m2"),
    )

    def text_edit(change: Callable[[str], str], label: str = "m1") -> Callable[..., Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            text = ev.attestation(label).read_text()
            return Trial(put(work, change(text).encode()), ev.trust("alice"))

        return make

    def escaped_names(text: str) -> str:
        return text.replace('"payload"', '"\\u0070ayload"').replace('"sig"', '"\\u0073ig"')

    yield Case(
        "equivalent/spaces-between-tokens",
        "equivalent",
        edited(lambda d: (json.dumps(d) + "\n").encode()),
    )
    yield Case(
        "equivalent/keys-reordered",
        "equivalent",
        edited(lambda d: line(dict(reversed(list(d.items()))))),
    )
    yield Case("equivalent/escaped-key-names", "equivalent", text_edit(escaped_names))
    yield Case(
        "equivalent/escaped-payload-type",
        "equivalent",
        text_edit(
            lambda t: t.replace(
                "application/vnd.in-toto+json", "application\\/vnd.in-toto\\u002bjson"
            )
        ),
    )
    yield Case("equivalent/utf8-byte-order-mark", "equivalent", text_edit(lambda t: "\ufeff" + t))
    yield Case(
        "equivalent/crlf-line-end", "equivalent", text_edit(lambda t: t.rstrip("\n") + "\r\n")
    )
    yield Case(
        "equivalent/blank-lines-around", "equivalent", text_edit(lambda t: "\n\n" + t + "\n\n")
    )
    yield Case("equivalent/no-final-newline", "equivalent", text_edit(lambda t: t.rstrip("\n")))

    def keyid(value: Any) -> Callable[[dict[str, Any]], None]:
        def apply(d: dict[str, Any]) -> None:
            if value is None:
                del d["signatures"][0]["keyid"]
            else:
                d["signatures"][0]["keyid"] = value

        return apply

    # DSSE: the keyid is an unauthenticated hint; the key that verifies is what counts.
    for name, value in (
        ("absent", None),
        ("empty", ""),
        ("garbage", "not-a-key-id"),
        ("mallorys", "MALLORY"),
    ):
        yield Case(f"equivalent/keyid-{name}", "equivalent", edited(keyid(value)))

    def mallory_keyid(ev: Evidence, work: Path) -> Trial:
        document = ev.envelope("m1")
        document["signatures"][0]["keyid"] = ev.keyid("mallory")
        return Trial(put(work, line(document)), ev.trust("alice"))

    yield Case("equivalent/keyid-of-an-untrusted-key", "equivalent", mallory_keyid)

    def extra_signatures(extra: Callable[[Evidence], dict[str, str]]) -> Callable[..., Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            document = ev.envelope("m1")
            document["signatures"] = [extra(ev), *document["signatures"], extra(ev)]
            return Trial(put(work, line(document)), ev.trust("alice"))

        return make

    yield Case(
        "equivalent/garbage-signatures-beside-a-good-one",
        "equivalent",
        extra_signatures(lambda ev: {"keyid": "x", "sig": "AAAA"}),
    )
    yield Case(
        "equivalent/untrusted-signatures-beside-a-good-one",
        "equivalent",
        extra_signatures(
            lambda ev: {
                "keyid": ev.keyid("mallory"),
                "sig": b64(ev.sign("mallory", ev.payload("m1"))),
            }
        ),
    )
    yield Case(
        "equivalent/the-good-signature-twice-at-threshold-1",
        "equivalent",
        extra_signatures(lambda ev: alice_sig(ev)),
    )

    def ecdsa(change: Callable[[int, int], bytes]) -> Callable[[dict[str, Any]], None]:
        def apply(d: dict[str, Any]) -> None:
            r, s = utils.decode_dss_signature(base64.b64decode(d["signatures"][1]["sig"]))
            d["signatures"][1]["sig"] = b64(change(r, s))

        return apply

    # Both spell the same (r, s); high S is the other valid signature of the same key.
    yield Case(
        "equivalent/ecdsa-as-p1363",
        "equivalent",
        edited(ecdsa(lambda r, s: r.to_bytes(32, "big") + s.to_bytes(32, "big")), "m2"),
    )
    yield Case(
        "equivalent/ecdsa-high-s",
        "equivalent",
        edited(ecdsa(lambda r, s: utils.encode_dss_signature(r, P256_ORDER - s)), "m2"),
    )

    def renamed(name: str, *extra: str, label: str = "m1") -> Callable[..., Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            return Trial(
                put(work, ev.attestation(label).read_bytes(), name), (*ev.trust("alice"), *extra)
            )

        return make

    yield Case(
        "equivalent/renamed-with-expect-label",
        "equivalent",
        renamed("release.intoto.jsonl", "--expect-label", "m1"),
    )
    yield Case("equivalent/name-outside-the-convention", "equivalent", renamed("m1.json"))
    yield Case(
        "equivalent/m2-at-threshold-1-trusting-alice",
        "equivalent",
        renamed("m2.intoto.jsonl", label="m2"),
    )

    def trusting(*names: str, threshold: int, label: str) -> Callable[..., Trial]:
        def make(ev: Evidence, work: Path) -> Trial:
            file = put(work, ev.attestation(label).read_bytes(), f"{label}.intoto.jsonl")
            return Trial(file, ev.trust(*names, threshold=threshold))

        return make

    yield Case(
        "equivalent/an-untrusted-key-among-the-trusted",
        "equivalent",
        trusting("mallory", "alice", threshold=1, label="m1"),
    )
    yield Case(
        "equivalent/bobs-key-as-a-compressed-point",
        "equivalent",
        trusting("alice", "bob-compressed", threshold=2, label="m2"),
    )

    def with_store(ev: Evidence, work: Path) -> Trial:
        file = put(work, ev.attestation("m2").read_bytes(), "m2.intoto.jsonl")
        return Trial(file, (*ev.trust("alice", "bob", threshold=2), "--store", str(ev.store)))

    yield Case("equivalent/m2-with-its-store", "equivalent", with_store)


def _sigstore(ev: Evidence) -> Iterator[Case]:
    from tests.reliability import bundle_corpus  # it imports this module

    return bundle_corpus.cases(ev)


CORPORA: dict[str, Callable[[Evidence], Iterator[Case]]] = {"dsse": cases, "sigstore": _sigstore}
