"""Real local services for tests and the demo (no mocks): a time-stamping authority, a Sigstore
instance made of a local CA, CT log and transparency log, and a GitHub releases API."""
