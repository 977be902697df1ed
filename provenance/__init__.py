"""prov: provenance snapshots and attestations for open ML training runs."""

__version__ = "0.1.0"
