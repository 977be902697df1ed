"""How each kind of capture is compared (``COMPARERS``: one small function per kind).

git and huggingface list files added / removed / changed with sizes and diff their contents
(structured files as documents, a Python file's module-level constants first, other text as a
unified diff); http shows status, the headers that matter, the body digest and a parsed error
code; listing merges the two manifests object by object. Unknown kinds get ``compare_generic``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from provenance._internal import documents
from provenance.compare import pyconstants
from provenance.compare.diffmodel import Change, DocumentDiff, FileChange
from provenance.compare.document_diff import Volatile, diff_document
from provenance.compare.evidence import BlobSource
from provenance.compare.gitmanifest import expand
from provenance.compare.listing_merge import merge_manifests
from provenance.model import Capture

IMPORTANT_HEADERS: tuple[str, ...] = (
    "etag",
    "last-modified",
    "content-length",
    "content-type",
    "content-encoding",
    "location",
    "x-linked-etag",
    "x-repo-commit",
    "x-amz-version-id",
    "x-goog-generation",
    "x-goog-hash",
)
"""HTTP headers whose change is a real change; every other header change is listed as volatile."""


@dataclass
class Context:
    """What a comparer may use: blobs of each side and the volatile patterns of the source."""

    blobs_a: BlobSource
    blobs_b: BlobSource
    volatile: Volatile


@dataclass
class Parts:
    """What a comparer produces for one capture."""

    documents: list[DocumentDiff] = field(default_factory=list)
    files: list[FileChange] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


Comparer = Callable[[Capture, Capture, Context], Parts]


def _document(
    name: str,
    a: Any,
    b: Any,
    volatile: Volatile,
    *,
    hide: Sequence[str] = (),
    extra: Sequence[Change] = (),
    fmt: Literal["json", "yaml", "toml", "text", "python"] = "json",
) -> DocumentDiff | None:
    changes, patch = diff_document(a, b, volatile, hide=hide)
    changes.extend(extra)
    if not changes and not patch:
        return None
    return DocumentDiff(name=name, format=fmt, changes=tuple(changes), patch=tuple(patch))


def envelope_documents(a: Capture, b: Capture, context: Context) -> list[DocumentDiff]:
    def envelope(c: Capture) -> dict[str, Any]:
        return {
            "status": c.status,
            "establishes": list(c.establishes),
            "error": c.error.model_dump(mode="json") if c.error else None,
        }

    out = [
        _document("capture", envelope(a), envelope(b), Volatile.of([])),
        _document("request", a.request, b.request, context.volatile.plus(["volatile"])),
    ]
    return [d for d in out if d is not None]


def compare_generic(a: Capture, b: Capture, context: Context) -> Parts:
    """Any kind: the data document, field by field."""
    parts = Parts()
    document = _document("data", a.data, b.data, context.volatile)
    if document:
        parts.documents.append(document)
    return parts


def _blob(capture: Capture, name: str) -> tuple[str, int, str | None] | None:
    for blob in capture.blobs:
        if blob.name == name:
            return blob.digest, blob.size, blob.media_type
    return None


def _content_diff(
    path: str,
    a: Capture,
    b: Capture,
    context: Context,
    name: str | None = None,
    media_type: str | None = None,
) -> tuple[DocumentDiff | None, str | None]:
    """Compare the stored bytes of one file: as documents when structured, else as text.

    Returns the document diff (or None) and a notice when the bytes could not be compared.
    """
    blob_a, blob_b = _blob(a, path), _blob(b, path)
    if blob_a is None or blob_b is None or blob_a[0] == blob_b[0]:
        return None, None
    bytes_a, bytes_b = context.blobs_a.get(blob_a[0]), context.blobs_b.get(blob_b[0])
    label = name or f"file:{path}"
    if bytes_a is None or bytes_b is None:
        return None, f"{label}: blob not at hand, compared by digest only"
    fmt = documents.format_of(path, media_type or blob_b[2])
    if fmt is not None:
        try:
            parsed_a = documents.parse(bytes_a, fmt)
            parsed_b = documents.parse(bytes_b, fmt)
        except documents.DocumentParseError as e:
            notice = f"{label}: not parsed as {fmt} ({e}); compared as text"
        else:
            doc = _document(label, parsed_a, parsed_b, context.volatile, fmt=fmt)
            return doc, None
    else:
        notice = None
    text_a, text_b = documents.as_text(bytes_a), documents.as_text(bytes_b)
    if text_a is None or text_b is None:
        return None, notice or f"{label}: binary or large, compared by digest only"
    diff = documents.unified(text_a, text_b, path)
    return DocumentDiff(name=label, format="text", text_diff=diff), notice


def _constants_diff(path: str, a: Capture, b: Capture, context: Context) -> DocumentDiff | None:
    """A Python file's module-level constants, old and new (read from the syntax, never run):
    shown as ``NAME: old -> new`` above the file's text diff."""
    if not path.endswith(".py"):
        return None
    blob_a, blob_b = _blob(a, path), _blob(b, path)
    if blob_a is None or blob_b is None:
        return None
    bytes_a, bytes_b = context.blobs_a.get(blob_a[0]), context.blobs_b.get(blob_b[0])
    if bytes_a is None or bytes_b is None:
        return None
    old, new = pyconstants.read(bytes_a), pyconstants.read(bytes_b)
    if old.error or new.error:
        return None
    return _document(f"constants:{path}", old.values, new.values, Volatile.of([]), fmt="python")


def _files(records: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(records, list):
        return {}
    return {r["path"]: r for r in records if isinstance(r, dict) and isinstance(r.get("path"), str)}


def _size(value: Any) -> int | None:
    # A snapshot's data is any JSON: a file record from another tool (or version) may hold
    # anything; the data document's patch still carries it exactly.
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _label(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else json.dumps(value, sort_keys=True)


def _compare_files(
    a: Capture,
    b: Capture,
    context: Context,
    parts: Parts,
    identity: Callable[[dict[str, Any]], Any],
) -> None:
    files_a, files_b = _files(a.data.get("files")), _files(b.data.get("files"))
    for path in sorted(set(files_a) | set(files_b)):
        old, new = files_a.get(path), files_b.get(path)
        if old is not None and new is not None and identity(old) == identity(new):
            continue
        change: Literal["added", "removed", "changed"] = (
            "added" if old is None else "removed" if new is None else "changed"
        )
        record = FileChange(
            path=path,
            change=change,
            old_size=_size((old or {}).get("size")),
            new_size=_size((new or {}).get("size")),
            old_oid=_label((old or {}).get("oid")),
            new_oid=_label((new or {}).get("oid")),
            old_mode=_label((old or {}).get("mode")),
            new_mode=_label((new or {}).get("mode")),
        )
        if change == "changed":
            constants = _constants_diff(path, a, b, context)
            if constants is not None:
                parts.documents.append(constants)
            document, notice = _content_diff(path, a, b, context)
            if document is not None:
                parts.documents.append(document)
            if notice:
                parts.notices.append(notice)
            content = "digest-only" if notice and document is None else "compared"
            if _blob(a, path) is None or _blob(b, path) is None:
                content = "not-compared"
            record = record.model_copy(update={"content": content})
        parts.files.append(record)


def compare_git(a: Capture, b: Capture, context: Context) -> Parts:
    """Commit and tree moved; files added / removed / changed with sizes; their contents."""
    parts = Parts()
    a, b = expand(a, context.blobs_a), expand(b, context.blobs_b)  # a manifest's files listed
    document = _document("data", a.data, b.data, context.volatile, hide=("files",))
    if document:
        parts.documents.append(document)
    _compare_files(a, b, context, parts, lambda f: (f.get("oid"), f.get("mode"), f.get("type")))
    return parts


def compare_huggingface(a: Capture, b: Capture, context: Context) -> Parts:
    """Revision and commit; files by git oid and LFS sha256; fetched small files' contents."""
    parts = Parts()
    document = _document("data", a.data, b.data, context.volatile, hide=("files",))
    if document:
        parts.documents.append(document)
    _compare_files(a, b, context, parts, lambda f: (f.get("oid"), f.get("lfs_sha256")))
    return parts


def _headers(data: dict[str, Any]) -> dict[str, str]:
    merged: dict[str, list[str]] = {}
    for pair in data.get("headers") or []:
        if isinstance(pair, list) and len(pair) == 2:
            merged.setdefault(str(pair[0]).lower(), []).append(str(pair[1]))
    return {name: ", ".join(values) for name, values in merged.items()}


def _error_view(data: dict[str, Any]) -> dict[str, Any]:
    body = data.get("error_body")
    fields = ("code", "message", "request_id", "host_id")
    if not isinstance(body, dict):
        return dict.fromkeys(fields)
    return {name: body.get(name) for name in fields}


def compare_http(a: Capture, b: Capture, context: Context) -> Parts:
    """Status, the headers that matter, the body by digest (and content), the parsed error."""
    parts = Parts()
    volatile = context.volatile
    extra: list[Change] = []

    headers_a, headers_b = _headers(a.data), _headers(b.data)
    for name in sorted(set(headers_a) | set(headers_b)):
        old, new = headers_a.get(name), headers_b.get(name)
        if old == new:
            continue
        names = ["headers", name]
        extra.append(
            Change(
                path=f"headers.{name}",
                pointer="/headers",
                change="added" if old is None else "removed" if new is None else "changed",
                old=old,
                new=new,
                volatile=name not in IMPORTANT_HEADERS or volatile.matches(names),
            )
        )
    error_a, error_b = _error_view(a.data), _error_view(b.data)
    for name, old in error_a.items():
        new = error_b[name]
        if old != new:
            extra.append(
                Change(
                    path=f"error_body.{name}",
                    pointer=f"/error_body/{name}",
                    change="changed",
                    old=old,
                    new=new,
                    volatile=volatile.matches(["error_body", name]),
                )
            )
    body_a, body_b = _blob(a, "body"), _blob(b, "body")
    if (body_a and body_a[0]) != (body_b and body_b[0]):
        # An S3-style error body embeds its request ids: when the parsed error is the same,
        # new bytes are only new ids.
        same_error = error_a["code"] is not None and all(
            error_a[k] == error_b[k] for k in ("code", "message")
        )
        extra.append(
            Change(
                path="body.digest",
                pointer="/body",
                change="changed",
                old=f"{body_a[0]} ({body_a[1]} bytes)" if body_a else None,
                new=f"{body_b[0]} ({body_b[1]} bytes)" if body_b else None,
                volatile=same_error,
            )
        )
        has_json = a.data.get("json") is not None or b.data.get("json") is not None
        if body_a and body_b and not has_json and not same_error:
            body = b.data.get("body")
            media_type = body.get("media_type") if isinstance(body, dict) else None
            document, notice = _content_diff(
                "body",
                a,
                b,
                context,
                name="body",
                media_type=media_type if isinstance(media_type, str) else None,
            )
            if document is not None:
                parts.documents.append(document)
            if notice:
                parts.notices.append(notice)
    order = {"status": 0, "reason": 1, "error_body.code": 2, "error_body.message": 3}
    document = _document(
        "data", a.data, b.data, volatile, hide=("headers", "error_body", "body"), extra=extra
    )
    if document:
        # An HTTP status is a code, not a quantity: no delta.
        shown = [
            c.model_copy(update={"delta": None, "relative": None}) if c.path == "status" else c
            for c in document.changes
        ]
        ranked = sorted(shown, key=lambda c: (c.volatile, order.get(c.path, 9)))
        document = document.model_copy(update={"changes": tuple(ranked)})
        parts.documents.insert(0, document)
    return parts


MAX_OBJECTS = 1000  # object changes listed per listing capture; the counts cover all


def compare_listing(a: Capture, b: Capture, context: Context) -> Parts:
    """An object-store listing: the manifest root and per-prefix counts, then the objects added,
    removed and changed, by a merge of the two key-sorted manifests (content manifest first)."""
    parts = compare_generic(a, b, context)
    for name in ("content-manifest.jsonl", "manifest.jsonl"):
        blob_a, blob_b = _blob(a, name), _blob(b, name)
        if blob_a is not None and blob_b is not None:
            break
    else:
        return parts
    if blob_a[0] == blob_b[0]:
        return parts
    counts = {"added": 0, "removed": 0, "changed": 0}
    with (
        context.blobs_a.mapped(blob_a[0]) as view_a,
        context.blobs_b.mapped(blob_b[0]) as view_b,
    ):
        if view_a is None or view_b is None:
            parts.notices.append(f"{name}: not at hand, objects compared by the manifest root only")
            return parts
        for change, before, after in merge_manifests(view_a, view_b):
            counts[change] += 1
            if len(parts.files) < MAX_OBJECTS:
                parts.files.append(_object_change(change, before, after))
    listed = sum(counts.values())
    if listed > MAX_OBJECTS:
        parts.notices.append(
            f"{listed:,} objects differ ({counts['added']:,} added, {counts['removed']:,} removed, "
            f"{counts['changed']:,} changed); the first {MAX_OBJECTS:,} by key are listed"
        )
    return parts


def _object_change(
    change: Literal["added", "removed", "changed"],
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> FileChange:
    def identity(entry: dict[str, Any] | None) -> str | None:
        if entry is None:
            return None
        found = entry.get("blake3") or entry.get("etag") or entry.get("git_oid")
        return str(found) if found is not None else None

    key = (after or before or {})["key"]
    return FileChange(
        path=key,
        change=change,
        old_size=(before or {}).get("size"),
        new_size=(after or {}).get("size"),
        old_oid=identity(before),
        new_oid=identity(after),
        content="compared",
    )


COMPARERS: dict[str, Comparer] = {
    "git": compare_git,
    "huggingface": compare_huggingface,
    "http": compare_http,
    "wandb": compare_generic,
    "listing": compare_listing,
}
"""How each kind is presented; a kind not listed gets ``compare_generic``."""
