"""Reading stored bytes as documents: JSON / YAML / TOML parsing and unified text diffs.

Parsed documents are normalised to plain JSON values (dates become ISO strings, tuples lists) so
that the structured differ and RFC 6902 patches see exactly what a JSON reader would. Integers
stay integers: JSON is parsed without floats for them, and YAML / TOML already keep them.

A captured file is anyone's bytes. YAML aliases let 500 bytes stand for billions of nodes (the
"billion laughs"), so a YAML document may use at most ``MAX_ALIASES`` aliases and expand to at
most ``MAX_NODES`` nodes, counted on the composed graph before anything is built.
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
MAX_ALIASES = 64  # YAML aliases (*name) in one document
MAX_NODES = 500_000  # nodes of a YAML document with aliases, once they are expanded

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
        return _plain(_yaml(text))
    except DocumentParseError:
        raise
    except (ValueError, RecursionError) as e:
        raise DocumentParseError(str(e).splitlines()[0] if str(e) else type(e).__name__) from e
    except Exception as e:  # yaml.YAMLError has no common base with ValueError
        if type(e).__module__.startswith("yaml"):
            raise DocumentParseError(str(e).splitlines()[0]) from e
        raise


def _yaml(text: str) -> Any:
    return load_yaml(text)


def load_yaml(text: str | bytes, loader: Any = None) -> Any:
    """YAML with aliases and their expansion bounded (a ``yaml.SafeLoader`` subclass may add
    resolvers: ``loader``); raises DocumentParseError for a document over the bounds."""
    instance = bounded(loader)(text)
    try:
        node = instance.get_single_node()
        if node is None:
            return None
        if instance.aliases:
            _check_expansion(node)
        return instance.construct_document(node)
    finally:
        instance.dispose()


_BOUNDED: dict[Any, Any] = {}


def bounded(loader: Any = None) -> Any:
    """``loader`` (default ``yaml.SafeLoader``) refusing a document with more than MAX_ALIASES
    aliases before it builds anything; made once per loader."""
    import yaml

    base = loader or yaml.SafeLoader
    if base not in _BOUNDED:

        class BoundedLoader(base):  # type: ignore[misc, valid-type]
            aliases = 0

            def compose_node(self, parent: Any, index: Any) -> Any:
                if self.check_event(yaml.AliasEvent):
                    self.aliases += 1
                    if self.aliases > MAX_ALIASES:
                        raise DocumentParseError(
                            f"more than {MAX_ALIASES} YAML aliases: refused unexpanded"
                        )
                return super().compose_node(parent, index)

        _BOUNDED[base] = BoundedLoader
    return _BOUNDED[base]


def _check_expansion(root: Any) -> None:
    """Count the nodes of the composed graph as if every alias were copied out, in linear time
    (a node's count is kept once computed); refuse beyond MAX_NODES or a node that holds itself."""
    import yaml

    sizes: dict[int, int] = {}
    active: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [item for pair in node.value for item in pair]
        else:
            sizes[key] = 1
            continue
        if not children_done:
            if key in active:
                raise DocumentParseError("a YAML alias refers to a node that contains it")
            active.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        active.discard(key)
        total = 1 + sum(sizes[id(child)] for child in children)
        if total > MAX_NODES:
            raise DocumentParseError(
                f"the YAML document expands to more than {MAX_NODES:,} nodes through its aliases"
            )
        sizes[key] = total


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
