"""A diff as neutral sections and rows, and the values, numbers and lines every format shares.

The three human formats (``text``, ``markdown``, ``html``) lay out the same sections, so they
always say the same thing; every captured string in a section has its control characters escaped
(``render.escape``) before any format sees it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any, Literal, assert_never

from provenance.compare.claims import ClaimResult, ClaimsReport
from provenance.compare.diff import (
    CaptureDiff,
    Change,
    Diff,
    DocumentDiff,
    FileChange,
    Mover,
    NoteRef,
    SnapshotRef,
)
from provenance.compare.recheck import RecheckRef
from provenance.compare.timeline import LogItem
from provenance.compare.witness import WitnessRef
from provenance.render import escape, shorten
from provenance.store.objects import SnapshotEntry

MAX_VOLATILE = 25
MAX_MOVERS = 8
MAX_DIFF_LINES = 200
MAX_ITEMS = 2000  # members of one list change, listed one a line
MAX_LINES = 2000  # of a whole diff's details, by default (--max-lines); the JSON has everything
SHORT = 80  # characters of a value; a longer one is cut around what differs
MORE = "use --format json or --path"


Tone = Literal["add", "remove", "change", "info"]


MARK: dict[Tone, str] = {"add": "+", "remove": "-", "change": "~", "info": " "}


def _is_hex_id(value: str) -> bool:
    return len(value) in (40, 64) and all(c in "0123456789abcdef" for c in value)


def value(item: Any, limit: int = 80) -> str:
    """A JSON value as a reader wants it: 390,139; "hero-12d8b6f0"; {3 fields}; [9 items]."""
    if item is None or isinstance(item, bool):
        return json.dumps(item)
    if isinstance(item, int):
        return f"{item:,}" if abs(item) >= 10_000 else str(item)
    if isinstance(item, float):
        return f"{item:,}" if abs(item) >= 10_000 else repr(item)
    if isinstance(item, str):
        if _is_hex_id(item) or item.startswith(("blake3:", "sha256:")):
            return item
        text = json.dumps(item, ensure_ascii=False)
        return text if len(text) <= limit else text[: limit - 4] + '..."'
    if isinstance(item, list):
        if len(item) <= 6 and all(not isinstance(v, (dict, list)) for v in item):
            text = "[" + ", ".join(value(v, 30) for v in item) + "]"
            if len(text) <= limit:
                return text
        return f"[{len(item)} items]"
    if isinstance(item, dict):
        parts = []
        for key, inner in item.items():
            if isinstance(inner, dict):
                parts.append(f"{key}: {{{len(inner)} entries}}")
            elif isinstance(inner, list):
                parts.append(f"{key}: [{len(inner)} items]")
            else:
                parts.append(f"{key}: {value(inner, 40)}")
        text = "{" + ", ".join(parts) + "}"
        return text if len(text) <= limit * 2 else f"{{{len(item)} fields}}"
    return str(item)


def percent(ratio: float) -> str:
    """A relative change as a signed percentage with two significant decimals: +0.029%, -3.97%."""
    pct = ratio * 100
    if pct == 0:
        return "0%"
    if abs(pct) >= 1:
        return f"{pct:+.2f}%"
    decimals = min(12, max(2, 1 - math.floor(math.log10(abs(pct)))))
    return f"{pct:+.{decimals}f}%"


def delta(delta: int | float) -> str:
    if isinstance(delta, int):
        return f"{delta:+,}"
    return f"{delta:+,.6g}"


def share(ratio: float | None) -> str:
    return "absent" if ratio is None else f"{ratio * 100:.2f}%"


def mover(m: Mover) -> str:
    return f"{m.key}: {share(m.old)} -> {share(m.new)} ({m.pp:+.2f} pp)"


def size(size: int | None) -> str:
    return "?" if size is None else f"{size:,} bytes"


@dataclass
class Row:
    tone: Tone
    path: str
    detail: str
    children: list[str] = field(default_factory=list)


@dataclass
class Block:
    heading: str | None
    rows: list[Row] = field(default_factory=list)
    hidden: int = 0


@dataclass
class Section:
    title: str
    status: str
    blocks: list[Block] = field(default_factory=list)
    files: list[Row] = field(default_factory=list)
    volatile: list[Row] = field(default_factory=list)
    volatile_hidden: int = 0
    text_diffs: list[tuple[str, str]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    files_hidden: int = 0


@dataclass
class Budget:
    """The lines a whole diff may print; every row (with its children) and text line takes its
    share, and what no longer fits is counted, never cut silently."""

    lines: int | None = MAX_LINES

    def take(self, count: int) -> bool:
        if self.lines is None:
            return True
        if count <= self.lines:
            self.lines -= count
            return True
        self.lines = 0
        return False

    def fit(self, row: Row) -> bool:
        """Take a row; when only its first children fit, keep those and count the rest."""
        if self.take(1 + len(row.children)):
            return True
        room = self.lines or 0
        if not row.children or room < 2:
            return False
        left = len(row.children) - (room - 2)
        row.children = [*row.children[: room - 2], f"… {left:,} more ({MORE})"]
        return self.take(room)


def _member(item: Any) -> str:
    return item if isinstance(item, str) else value(item, SHORT)


def _members(row: Row, marks: Sequence[tuple[str, Any]]) -> Row:
    """One child per member, each cut around what tells it from the others."""
    shown = shorten.distinct([_member(item) for _, item in marks], SHORT)
    children = [f"{mark} {text}" for (mark, _), text in zip(marks, shown, strict=True)]
    row.children = children[:MAX_ITEMS]
    if len(children) > MAX_ITEMS:
        row.children.append(f"… {len(children) - MAX_ITEMS} more ({MORE})")
    return row


def _replacements(removed: list[Any], added: list[Any]) -> list[tuple[str, str]]:
    """Removed and added strings side by side when each added one is a removed one with a
    part replaced (a new revision in every URL): in sorted order, every pair shares at least
    half of its text at the start and the end. Else none: the members are listed one by one."""
    if len(removed) != len(added) or len(removed) < 2:
        return []
    if not all(isinstance(v, str) for v in (*removed, *added)):
        return []
    pairs = list(zip(sorted(removed), sorted(added), strict=True))
    for old, new in pairs:
        shared = shorten.shared(old, new)
        if 2 * shared < min(len(old), len(new)):
            return []
    return pairs


def _moved(old: Any, new: Any) -> list[tuple[str, Any]]:
    """The members of a reordered list that changed place (not in the longest common order)."""
    if not isinstance(old, list) or not isinstance(new, list):
        return []
    keys_a = [json.dumps(v, sort_keys=True) for v in old]
    keys_b = [json.dumps(v, sort_keys=True) for v in new]
    matcher = SequenceMatcher(None, keys_a, keys_b, autojunk=False)
    return [
        (f"~ moved to [{j}]:", new[j])
        for tag, _, _, j1, j2 in matcher.get_opcodes()
        if tag in ("insert", "replace")
        for j in range(j1, j2)
    ]


def _change_row(change: Change, prefix: str = "") -> Row:
    path = prefix + change.path
    kind = change.change
    if kind == "changed":
        old, new = change.old, change.new
        if isinstance(old, str) and isinstance(new, str) and max(len(old), len(new)) > SHORT - 2:
            old, new = shorten.around(old, new, SHORT)
            shown = (
                f"{json.dumps(old, ensure_ascii=False)} -> {json.dumps(new, ensure_ascii=False)}"
            )
        else:
            shown = f"{value(old)} -> {value(new)}"
        detail = shown
        if change.delta is not None:
            extra = delta(change.delta)
            if change.relative is not None:
                extra += f", {percent(change.relative)}"
            detail += f" ({extra})"
        return Row("change", path, detail)
    if kind == "added":
        row = Row("add", path, f"added {value(change.new)}")
        if change.movers:
            row.children.append(
                f"weights vs {change.baseline} ({len(change.movers)} moved, biggest first):"
            )
            row.children.extend("  " + mover(m) for m in change.movers[:MAX_MOVERS])
            if len(change.movers) > MAX_MOVERS:
                row.children.append(f"  ... and {len(change.movers) - MAX_MOVERS} more")
        return row
    if kind == "removed":
        return Row("remove", path, f"removed (was {value(change.old)})")
    if kind == "set":
        added, removed = change.added or [], change.removed or []
        bits = [f"+{value(v, 40)}" for v in added] + [f"-{value(v, 40)}" for v in removed]
        inline = ", ".join(bits)
        if len(bits) <= 6 and len(inline) <= 2 * SHORT:
            return Row("change", path, inline)
        pairs = _replacements(removed, added)
        if pairs:
            row = Row("change", path, f"{len(pairs):,} replaced (removed -> added, side by side)")
            row.children = [
                "~ {} -> {}".format(*shorten.around(old, new, SHORT * 3 // 4)) for old, new in pairs
            ][:MAX_ITEMS]
            if len(pairs) > MAX_ITEMS:
                row.children.append(f"… {len(pairs) - MAX_ITEMS:,} more ({MORE})")
            return row
        row = Row("change", path, f"{len(added):,} added, {len(removed):,} removed")
        return _members(row, [("+", v) for v in added] + [("-", v) for v in removed])
    if kind == "reordered":
        places = _moved(change.old, change.new)
        row = Row("change", path, f"same items, new order ({len(places):,} moved)")
        return _members(row, places) if places else row
    if kind == "weights":
        moved = change.movers or []
        row = Row(
            "change", path, f"{len(moved)} weight(s) moved, biggest first (percentage points)"
        )
        row.children.extend(mover(m) for m in moved[:MAX_MOVERS])
        if len(moved) > MAX_MOVERS:
            row.children.append(f"... and {len(moved) - MAX_MOVERS} more")
        return row
    assert_never(kind)


def _file_row(f: FileChange) -> Row:
    if f.change == "added":
        return Row("add", f.path, f"added ({size(f.new_size)})")
    if f.change == "removed":
        return Row("remove", f.path, f"removed (was {size(f.old_size)})")
    detail = f"{size(f.old_size)} -> {size(f.new_size)}"
    if f.old_size is not None and f.new_size is not None:
        detail = f"{f.old_size:,} -> {f.new_size:,} bytes ({f.new_size - f.old_size:+,})"
    if f.old_mode != f.new_mode:
        detail += f", mode {f.old_mode} -> {f.new_mode}"
    if f.content == "digest-only":
        detail += ", content not at hand"
    return Row("change", f.path, detail)


def _prefix(document: DocumentDiff) -> str:
    return "request." if document.name == "request" else ""


def _heading(document: DocumentDiff) -> str:
    if document.name.startswith("constants:"):
        return f"constants in {document.name.removeprefix('constants:')}"
    return f"in {document.name.removeprefix('file:')}"


def section(capture: CaptureDiff, budget: Budget | None = None) -> Section:
    """A capture's changes as rows, within the diff's line budget (the JSON has everything)."""
    budget = budget or Budget(None)
    out = Section(f"{capture.source} [{capture.kind}]", capture.status)
    if capture.status == "added":
        out.blocks.append(Block(None, [Row("add", capture.source, "new source in B")]))
    elif capture.status == "removed":
        out.blocks.append(Block(None, [Row("remove", capture.source, "source absent from B")]))
    main = Block(None)
    for document in capture.documents:
        inline = document.name in ("capture", "request", "data")
        block = main if inline else Block(_heading(document))
        for change in document.changes:
            row = _change_row(change, _prefix(document))
            if change.volatile:
                if len(out.volatile) < MAX_VOLATILE:
                    if not inline:
                        row.path = f"{document.name.removeprefix('file:')}: {row.path}"
                    out.volatile.append(row)
                else:
                    out.volatile_hidden += 1
            elif budget.fit(row):
                block.rows.append(row)
            else:
                block.hidden += 1
        if document.text_diff:
            out.text_diffs.append((document.name.removeprefix("file:"), _text(document, budget)))
        if not inline and (block.rows or block.hidden):
            out.blocks.append(block)
    if main.rows or main.hidden:
        out.blocks.insert(0, main)
    for f in capture.files:
        if budget.take(1):
            out.files.append(_file_row(f))
        else:
            out.files_hidden += 1
    out.notices = list(capture.notices)
    return _inert(out)


def _text(document: DocumentDiff, budget: Budget) -> str:
    lines = (document.text_diff or "").splitlines()
    kept = 0
    while kept < min(len(lines), MAX_DIFF_LINES) and budget.take(1):
        kept += 1
    text = "\n".join(lines[:kept])
    if len(lines) > kept:
        text += f"\n... {len(lines) - kept} more lines ({MORE})"
    return text


def summary_lines(diff: Diff) -> list[str]:
    """What changed, source by source, before any detail: files added / removed / changed,
    constants changed, other changes, volatile ones; then the sources that did not change."""
    lines = []
    for capture in diff.captures:
        if capture.status == "unchanged" and not capture.documents:
            continue
        bits = []
        if capture.files:
            bits.append(f"{files_word(capture)} {file_counts(capture.files)}")
        real = [(d.name, c) for d in capture.documents for c in d.changes if not c.volatile]
        constants = sum(1 for name, _ in real if name.startswith("constants:"))
        if constants:
            bits.append(f"{constants} constant(s) changed")
        other = len(real) - constants
        if other:
            bits.append(f"{other} change(s)")
        if capture.volatile_changes:
            bits.append(f"{capture.volatile_changes} volatile")
        detail = "; ".join(bits) if capture.status == "changed" else capture.status
        lines.append(escape.text(f"{capture.source} [{capture.kind}]: {detail or 'changed'}"))
    unchanged = [c.source for c in diff.captures if c.status == "unchanged" and not c.documents]
    if unchanged:
        lines.append(escape.text(f"unchanged: {', '.join(unchanged)}"))
    if diff.claims_file is not None:
        lines.append(escape.text(f"claims affected ({diff.claims_file}): {len(diff.claims)}"))
        lines.extend(
            escape.text(
                f"  {c.name}: {VERDICT[c.status_a]} -> {VERDICT[c.status_b]}"
                f" ({value(c.derived_a, 40)} -> {value(c.derived_b, 40)})"
            )
            for c in diff.claims
        )
    return lines


SHOW_ITEMS = 20  # items of a list ``prov show`` names
IDENTITY = ("path", "rfilename", "key", "name", "id", "url", "source")


def list_items(items: Sequence[Any], cap: int = SHOW_ITEMS) -> list[str]:
    """The items of a list as a reader names them: a string itself, a record by its identity
    field (``path``, ``name``...) and size, each cut around what tells it from the others; past
    ``cap``, how many more."""
    named = []
    for item in items[:cap]:
        if isinstance(item, dict):
            key = next((k for k in IDENTITY if isinstance(item.get(k), (str, int))), None)
            text = str(item[key]) if key else value(item, SHORT)
            if key and isinstance(item.get("size"), int):
                text += f" ({item['size']:,} bytes)"
            named.append(text)
        else:
            named.append(item if isinstance(item, str) else value(item, SHORT))
    out = [escape.text(text) for text in shorten.distinct(named, SHORT)]
    if len(items) > cap:
        out.append(f"… {len(items) - cap:,} more (use --format json)")
    return out


def hidden_line(count: int) -> str:
    return f"… {count:,} more change(s) ({MORE})"


def _inert(out: Section) -> Section:
    """Every captured string with its control characters escaped (see render.escape): a file
    name holding a terminal escape sequence prints as ``\\x1b[...``, in every format."""
    t = escape.text

    def row(r: Row) -> Row:
        return Row(r.tone, t(r.path), t(r.detail), [t(c) for c in r.children])

    out.title = t(out.title)
    out.blocks = [
        Block(t(b.heading) if b.heading else None, [row(r) for r in b.rows], b.hidden)
        for b in out.blocks
    ]
    out.files = [row(r) for r in out.files]
    out.volatile = [row(r) for r in out.volatile]
    out.text_diffs = [(t(name), escape.block(text)) for name, text in out.text_diffs]
    out.notices = [t(n) for n in out.notices]
    return out


def summary(diff: Diff) -> str:
    counts = diff.counts
    volatile = f"; {counts.volatile} volatile change(s) not counted" if counts.volatile else ""
    if diff.equal:
        return f"no differences between {diff.a.label} and {diff.b.label}{volatile}"
    return (
        f"{counts.sources_changed} of {len(diff.captures)} source(s) changed: "
        f"{counts.changes} change(s){volatile}"
    )


def note_line(note: NoteRef) -> str:
    text = f"{note.created[:19]}Z  note {note.id[:12]} on {note.snapshot}: {note.text}"
    if note.supersedes:
        text += f"  (supersedes: {', '.join(note.supersedes)})"
    return escape.text(text)


def files_word(capture: CaptureDiff) -> str:
    return "objects" if capture.kind == "listing" else "files"


def file_counts(files: Sequence[FileChange]) -> str:
    counts = {
        kind: sum(1 for f in files if f.change == kind) for kind in ("added", "removed", "changed")
    }
    return ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)


def claim_cells(result: ClaimResult) -> tuple[str, str, str]:
    """derived (or the error, for a claim that could not be evaluated), gap and tolerance, for a
    table row."""
    derived, gap, tolerance = claim_numbers(result)
    return (f"error: {result.error}" if result.status == "error" else derived), gap, tolerance


def diff_line_tone(line: str) -> Literal["add", "remove", "hunk", "info"]:
    """What a line of a unified diff is: an addition, a removal, a hunk header, or context."""
    if line.startswith("+") and not line.startswith("+++"):
        return "add"
    if line.startswith("-") and not line.startswith("---"):
        return "remove"
    return "hunk" if line.startswith("@@") else "info"


def claim_numbers(result: ClaimResult) -> tuple[str, str, str]:
    """derived, gap and tolerance as text."""
    derived = value(result.derived)
    if result.gap is None:
        gap = (
            "—" if result.status == "error" else ("equal" if result.status == "pass" else "differs")
        )
    else:
        gap = delta(result.gap) if result.gap else "0 (exact)"
        if result.relative_gap is not None and result.gap:
            gap += f" ({percent(result.relative_gap)})"
    tolerance = []
    if result.tolerance:
        tolerance.append(f"{result.tolerance * 100:g}%")
    if result.abs_tolerance:
        tolerance.append(f"±{value(result.abs_tolerance)}")
    return derived, gap, " or ".join(tolerance) or "exact"


VERDICT = {"pass": "holds", "fail": "FAILS", "error": "ERROR"}


def one_line(expression: str) -> str:
    return " ".join(expression.split())


def origin(ref: SnapshotRef) -> str:
    """Where a snapshot was read from, unless that is just its label in the store."""
    same = ref.origin == ref.label or ref.origin.startswith(f"{ref.label} (")
    return "" if same else f"  ({ref.origin})"


def claims_summary(report: ClaimsReport) -> str:
    total = len(report.results)
    text = f"{total} claim(s): {report.passed} hold, {report.failed} fail"
    return text + (f", {report.errors} could not be evaluated" if report.errors else "")


def log_change_line(item: LogItem) -> str:
    if item.problem:
        return escape.text(f"not compared: {item.problem}")
    if item.previous is None:
        return "first snapshot"
    if not item.changes:
        return f"no differences since {item.previous}"
    return escape.text(f"changed since {item.previous}: " + "; ".join(item.changes))


def witness_line(witness: WitnessRef) -> str:
    where = witness.operator + (f" ({witness.region})" if witness.region else "")
    key = f"; verified by {', '.join(witness.signers)}" if witness.signers else "; not verified"
    if witness.problem:
        return escape.text(
            f"{witness.created[:19]}Z  witness index entry ({where}) refused: {witness.problem}"
        )
    return escape.text(
        f"{witness.created[:19]}Z  witness {where}: {len(witness.witnessed)} capture(s) "
        f"witnessed{key}"
    )


def recheck_line(recheck: RecheckRef) -> str:
    key = (
        f"; verified, signed by {recheck.signers[0][:16]}" if recheck.signers else "; not verified"
    )
    return escape.text(
        f"{recheck.created[:19]}Z  recheck {recheck.label}: {recheck.summary()}{key}"
    )


def events(item: LogItem) -> list[str]:
    """Notes, witnesses and rechecks of one timeline item, oldest first."""
    dated = [(n.created, note_line(n)) for n in item.notes]
    dated += [(w.created, witness_line(w)) for w in item.witnesses]
    dated += [(r.created, recheck_line(r)) for r in item.rechecks]
    return [line for _, line in sorted(dated, key=lambda pair: pair[0])]


def log_head(entry: SnapshotEntry) -> str:
    failed = f"  FAILED: {', '.join(entry.failed)}" if entry.failed else ""
    return (
        f"{entry.created[:19]}Z  {entry.sha256[:12]}  {entry.label}  "
        f"sources: {', '.join(entry.sources)}  signers: {len(entry.signers)}{failed}"
    )
