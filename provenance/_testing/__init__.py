"""Real local services for tests and the demo (no mocks): a server speaking the wire formats of
W&B, the Hugging Face Hub and object stores, a time-stamping authority, a Sigstore instance made of
a local CA, CT log and transparency log, and a GitHub releases API. Nothing in the library imports
this package."""
