"""The output formats of every command (one enum; a command offers the ones it can write)."""

from __future__ import annotations

import enum

__all__ = ["Format"]


class Format(enum.StrEnum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    HTML = "html"
