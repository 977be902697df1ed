"""Rendering: what a person or a program reads.

- ``report``: diffs, claims, logs and reports as text, Markdown and self-contained HTML.
- ``warc``: captures exported as WARC (ISO 28500) for web-archive tools.
- ``schemas``: the JSON Schemas of every document prov writes (``schemas/``).
"""

__all__ = ["report", "schemas", "warc"]
