"""The snapshot as claim expressions see it: captures, their stored files, Python constants.

``captures[NAME]`` is a capture; ``.X`` reads its data, then its own fields; ``.documents[PATH]``
parses a stored file; ``.constants[PATH].NAME`` is a module-level constant of a stored Python
file, read from its syntax tree (``pyconstants``: nothing is run). Every missing thing is an
``EvaluationError`` that names the path and says what is there instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from provenance._internal import documents
from provenance._internal.safe_eval import Compiled, EvaluationError, Evaluator, View
from provenance.compare import pyconstants
from provenance.compare.evidence import BlobSource, Evidence
from provenance.compare.gitmanifest import expand
from provenance.model import Capture

NAMES = ("captures", "snapshot", "cross_checks")
ENVELOPE_FIELDS = (
    "source",
    "kind",
    "tool_version",
    "started",
    "ended",
    "request",
    "status",
    "establishes",
    "error",
    "blobs",
    "attempts",
    "digest",
)


class DocumentsView(View):
    """``captures[NAME].documents[PATH]``: a stored file of a capture, parsed."""

    def __init__(self, capture: Capture, blobs: BlobSource) -> None:
        self.capture = capture
        self.blobs = blobs

    def raw(self, key: str | int, where: str) -> tuple[bytes, str | None]:
        """The stored bytes of a file and its media type."""
        blob = next((b for b in self.capture.blobs if b.name == key), None)
        if blob is None:
            names = ", ".join(b.name for b in self.capture.blobs[:10])
            more = ", ..." if len(self.capture.blobs) > 10 else ""
            raise EvaluationError(
                f"{where} has no stored file {key!r}"
                + (f" (it has: {names}{more})" if names else "")
            )
        data = self.blobs.get(blob.digest)
        if data is None:
            raise EvaluationError(
                f"{where}[{key!r}]: the blob {blob.digest} is not in the store or pack"
            )
        return data, blob.media_type

    def lookup(self, key: str | int, where: str) -> Any:
        data, media_type = self.raw(key, where)
        fmt = documents.format_of(str(key), media_type)
        if fmt is None:
            text = documents.as_text(data)
            if text is None:
                raise EvaluationError(f"{where}[{key!r}] is binary or too large to read")
            return text
        try:
            return documents.parse(data, fmt)
        except documents.DocumentParseError as e:
            raise EvaluationError(f"{where}[{key!r}] is not valid {fmt}: {e}") from e


class ConstantsView(View):
    """``captures[NAME].constants[PATH]``: the module-level constants of a stored Python file."""

    def __init__(self, files: DocumentsView) -> None:
        self.files = files

    def lookup(self, key: str | int, where: str) -> Any:
        data, _ = self.files.raw(key, where.replace(".constants", ".documents"))
        return ModuleView(pyconstants.read(data), f"{where}[{key!r}]")


class ModuleView(View):
    """One Python file's constants: ``.NAME`` is the value, or an error saying why it is none."""

    def __init__(self, module: pyconstants.ModuleConstants, where: str) -> None:
        self.module = module
        self.where = where

    def lookup(self, key: str | int, where: str) -> Any:
        module = self.module
        if module.error:
            raise EvaluationError(f"{self.where} is not readable Python: {module.error}")
        if isinstance(key, str) and key in module.values:
            return module.values[key]
        if isinstance(key, str) and key in module.skipped:
            item = module.skipped[key]
            raise EvaluationError(
                f"{self.where}.{key} (line {item.line}) is not a constant: {item.reason} "
                "(prov reads the file's syntax; it runs nothing)"
            )
        names = list(module.values)
        listed = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
        raise EvaluationError(
            f"{self.where} has no module-level constant {key!r}"
            + (f" (it has: {listed})" if listed else " (it has none)")
        )


class CaptureView(View):
    def __init__(self, capture: Capture, blobs: BlobSource) -> None:
        self.capture = capture
        self.blobs = blobs
        self.envelope = capture.model_dump(mode="json")

    def lookup(self, key: str | int, where: str) -> Any:
        data = self.capture.data
        if isinstance(key, str):
            if key in data:
                return data[key]
            if key == "data":
                return data
            if key == "envelope":
                return self.envelope
            if key == "documents":
                return DocumentsView(self.capture, self.blobs)
            if key == "constants":
                return ConstantsView(DocumentsView(self.capture, self.blobs))
            if key in ENVELOPE_FIELDS:
                return self.envelope[key]
        fields = ", ".join(list(data)[:20]) or "none"
        failed = ""
        if self.capture.status == "failed" and self.capture.error:
            failed = (
                f"; the capture failed ({self.capture.error.type}: {self.capture.error.message})"
            )
        raise EvaluationError(
            f"{where} has no field {key!r} (data fields: {fields}; also data, envelope, "
            f"documents, constants, {', '.join(ENVELOPE_FIELDS)}){failed}"
        )


class CapturesView(View):
    def __init__(self, evidence: Evidence) -> None:
        self.evidence = evidence
        self.by_source = {c.source: c for c in evidence.snapshot.captures}

    def lookup(self, key: str | int, where: str) -> Any:
        capture = self.by_source.get(key) if isinstance(key, str) else None
        if capture is None:
            names = ", ".join(sorted(self.by_source)) or "none"
            raise EvaluationError(
                f"{where}[{key!r}]: snapshot {self.evidence.snapshot.label!r} has no capture "
                f"of that source (it has: {names})"
            )
        return CaptureView(expand(capture, self.evidence.blobs), self.evidence.blobs)


def names_for(evidence: Evidence) -> dict[str, Any]:
    snapshot = evidence.snapshot
    return {
        "captures": CapturesView(evidence),
        "snapshot": {
            "label": snapshot.label,
            "created": snapshot.created,
            "sha256": snapshot.sha256().hex,
        },
        # Comparisons between captures made at snapshot time, e.g.
        # cross_checks['trainer-image/revision'].matches (an image label against a git commit).
        "cross_checks": {
            key: check.model_dump(mode="json") for key, check in snapshot.cross_checks.items()
        },
    }


class LetNames(Mapping[str, Any]):
    """The snapshot's names and a claims file's ``[let]`` names, each evaluated once, when first
    used (a name whose evaluation fails is an error for the claims that use it, and only them)."""

    def __init__(self, base: Mapping[str, Any], lets: tuple[tuple[str, Compiled], ...]) -> None:
        self.base = base
        self.lets = dict(lets)
        self.done: dict[str, Any] = {}
        self.failed: dict[str, str] = {}
        self.evaluator = Evaluator(self)

    def __contains__(self, key: object) -> bool:
        return key in self.base or key in self.lets

    def __getitem__(self, key: str) -> Any:
        if key in self.base:
            return self.base[key]
        if key in self.failed:
            raise EvaluationError(self.failed[key])
        if key not in self.done:
            try:
                self.done[key] = self.evaluator.run(self.lets[key])
            except EvaluationError as e:
                self.failed[key] = f"{key} (from [let]): {e}"
                raise EvaluationError(self.failed[key]) from e
        return self.done[key]

    def __iter__(self) -> Iterator[str]:
        yield from self.base
        yield from self.lets

    def __len__(self) -> int:
        return len(self.base) + len(self.lets)
