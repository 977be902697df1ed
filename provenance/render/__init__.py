"""Rendering: what a person or a program reads.

- ``report``: diffs, claims, logs and reports in every ``formats.Format``: ``sections`` (the
  neutral rows every format lays out), ``text``, ``markdown``, ``html`` (the one stylesheet),
  ``shorten`` (long values cut around what differs); ``escape`` keeps captured strings inert.
- ``warc``: captures exported as WARC (ISO 28500) for web-archive tools.
- ``site``: ``prov site``, a static provenance site for a run (``site_evidence``: what it is
  built from, copied and verified; ``site_content``: the verdicts in its model; ``site_model``:
  its ``site.json``; ``site_html``: its pages; ``svgplot``: its inline charts).
- ``show``: ``prov show``: a snapshot, or an in-toto statement that is not one.
- ``storecheck``: ``prov fsck``'s report.
- ``taken``: ``prov snapshot``'s summary of what it wrote.
- ``verdicts``: ``prov verify``'s steps and verdict, for a file, a pack or an image.
- ``witnesses``: recheck reports, witness runs and the evidence per capture, as text.
- ``schemas``: the JSON Schemas of every document prov writes (``schemas/``).
- ``config_doc``: ``docs/config.md``, the prov.toml reference, from the option models.
"""

__all__ = [
    "config_doc",
    "escape",
    "formats",
    "html",
    "markdown",
    "report",
    "schemas",
    "sections",
    "show",
    "site",
    "site_content",
    "site_evidence",
    "site_html",
    "site_model",
    "storecheck",
    "svgplot",
    "taken",
    "text",
    "verdicts",
    "warc",
    "witnesses",
]
