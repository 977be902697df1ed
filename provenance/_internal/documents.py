"""Reading stored bytes as documents: JSON / YAML / TOML parsing and unified text diffs.

Parsed documents are normalised to plain JSON values (dates become ISO strings, tuples lists) so
that the structured differ and RFC 6902 patches see exactly what a JSON reader would. Integers
stay integers: JSON is parsed without floats for them, and YAML / TOML already keep them.
"""

from __future__ import annotations

import datetime
import difflib
import json
import tomllib
from typing import Any, Literal

DocFormat = Literal["json", "yaml", "toml"]

MAX_STRUCTURED = 4 << 20  # parse documents up to 4 MiB
MAX_TEXT = 256 << 10  # show text diffs of files up to 256 KiB

_SUFFIXES: dict[str, DocFormat] = {
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
}


class DocumentParseError(ValueError):
    """The bytes are not a document of the expected format."""


def format_of(name: str, media_type: str | None = None) -> DocFormat | None:
    """The document format a file name or media type implies, if any."""
    lowered = name.lower()
    for suffix, fmt in _SUFFIXES.items():
        if lowered.endswith(suffix):
            return fmt
    if media_type:
        base = media_type.split(";")[0].strip().lower()
        if base == "application/json" or base.endswith("+json"):
            return "json"
        if base in ("application/yaml", "application/x-yaml", "text/yaml"):
            return "yaml"
        if base == "application/toml":
            return "toml"
    return None


def parse(data: bytes, fmt: DocFormat) -> Any:
    """Parse bytes as a document; raises DocumentParseError."""
    if len(data) > MAX_STRUCTURED:
        raise DocumentParseError(f"{len(data):,} bytes is over the {MAX_STRUCTURED:,}-byte limit")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DocumentParseError(f"not UTF-8: {e}") from e
    try:
        if fmt == "json":
            return json.loads(text, parse_constant=_refuse_constant)
        if fmt == "toml":
            return _plain(tomllib.loads(text))
        import yaml

        return _plain(yaml.safe_load(text))
    except DocumentParseError:
        raise
    except (ValueError, RecursionError) as e:
        raise DocumentParseError(str(e).splitlines()[0] if str(e) else type(e).__name__) from e
    except Exception as e:  # yaml.YAMLError has no common base with ValueError
        if type(e).__module__.startswith("yaml"):
            raise DocumentParseError(str(e).splitlines()[0]) from e
        raise


def _refuse_constant(constant: str) -> Any:
    raise DocumentParseError(f"{constant} is not valid JSON")


def _plain(value: Any) -> Any:
    """YAML / TOML values as JSON values: dates as ISO text, keys as strings."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, float) and value != value:  # NaN has no JSON spelling
        return "NaN"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return str(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def as_text(data: bytes) -> str | None:
    """The bytes as text when they look like a small text file, else None."""
    if len(data) > MAX_TEXT or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def unified(old: str, new: str, name: str, context: int = 3) -> str:
    """A unified diff of two texts, as ``git diff`` would show it (a/ and b/ prefixes)."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{name}",
        tofile=f"b/{name}",
        n=context,
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
