"""Attesting: in-toto statements and the envelopes that sign them.

- ``statement``: the in-toto Statement v1 around a snapshot (serialised once) and its subject.
- ``dsse``: DSSE envelopes, their PAE and signature checks; ``envelope`` reads one from a file.
- ``keys``: local key pairs (ed25519, ECDSA P-256), PKCS#8 PEM, passphrases.
- ``signing``: the ``Attester`` seam: local keys or Sigstore, one interface.
- ``sigstore``: keyless signing and bundle verification (``_bundle_verifier`` fills the gaps
  sigstore-python leaves: every registry algorithm (``_signature_schemes``), every log entry
  kind (``_log_entries``), v0.1 promises, GitHub's log-less instance, managed keys, roots
  inside chains).
- ``timestamp``: RFC 3161 tokens over a signature, and their checks against a TSA the auditor names.

Nothing here knows a source or the store: attest signs bytes and checks signatures.
"""

__all__ = ["dsse", "envelope", "keys", "signing", "sigstore", "statement", "timestamp"]
