"""One module per case; importing this package registers them all (``harness.REGISTRY``).

To add a case: one module with one function
decorated ``@case("key")`` that builds its inputs and returns a ``Plan``; and its import here.
"""

from benchmarks.cases import (
    canonical_json,
    diff_listing,
    git_capture,
    hash_file,
    http_sources,
    listing,
    startup,
    store_write,
    verify,
)

__all__ = [
    "canonical_json",
    "diff_listing",
    "git_capture",
    "hash_file",
    "http_sources",
    "listing",
    "startup",
    "store_write",
    "verify",
]
