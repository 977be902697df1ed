"""Errors raised by prov.

Every error a user can meet is a ``ProvError``. It carries a one-line summary, the likely cause,
what to try next, and the process exit code the command line uses (docs/design.md, "Errors and
exit codes")::

    ProvError                      exit 3: could not run
    ├── UsageError                 exit 2: the invocation or an input file is wrong
    │   ├── ConfigError            prov.toml (file and line)
    │   └── ClaimsError            claims.toml, unsafe or failing expressions
    ├── InputError                 a file named on the command line is missing or unreadable
    ├── CollectorError             a collector could not run at all (not a remote failure: those
    │   │                          are evidence, recorded in the capture)
    │   ├── SourceGoneError        what was asked for no longer exists (a ref, a commit)
    │   ├── GitError               git failed; keeps git's stderr
    │   └── ContentFailed          a content-hashing shard kept failing; keeps the attempts
    ├── StoreError                 the content store cannot be read or written
    │   └── IntegrityError         an object's bytes do not match its address
    ├── KeyFileError               a key file cannot be read, decrypted or used
    ├── RegistryError              an OCI registry refused or failed a request (keeps the status)
    ├── SigningError               signing failed
    ├── TimestampError             a time-stamping authority could not be reached or refused
    ├── ReleaseError               the GitHub API refused or failed a release operation
    ├── MissingDependencyError     an optional package is not installed
    └── VerificationError          exit 1: evidence was checked and found wanting
        └── PackError              an evidence pack is malformed, incomplete or altered
"""

from __future__ import annotations

from typing import Any, ClassVar


class ProvError(Exception):
    """The root of prov's errors: a message, a likely cause and a hint."""

    exit_code: ClassVar[int] = 3

    def __init__(self, message: str, *, cause: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause
        self.hint = hint

    def diagnostics(self) -> str:
        """The text shown to a user: what happened, why it probably did, what to do."""
        lines = [f"error: {self.message}"]
        if self.cause:
            lines.append(f"  cause: {self.cause}")
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(lines)


class UsageError(ProvError):
    """The command line or an input file is wrong; nothing was done."""

    exit_code = 2


class ConfigError(UsageError):
    """prov.toml is missing, malformed or invalid."""


class ClaimsError(UsageError):
    """A claims file is malformed or an expression is refused."""


class InputError(ProvError):
    """A file the command was given (claims, an attestation) does not exist or cannot be read."""


class CollectorError(ProvError):
    """A collector could not run (its own failure, not the remote side's)."""


class SourceGoneError(CollectorError):
    """What a source was asked for no longer exists there (a ref, a commit, a revision)."""


class GitError(CollectorError):
    """The git binary failed; ``stderr`` keeps what git said."""

    def __init__(self, message: str, *, stderr: str = "", hint: str | None = None) -> None:
        super().__init__(message, cause=stderr.strip() or None, hint=hint)
        self.stderr = stderr


class ContentFailed(CollectorError):
    """A shard kept failing: the objects could not be read. Carries the attempts made."""

    def __init__(self, message: str, *, attempts: list[dict[str, Any]]) -> None:
        super().__init__(message, hint="check that the objects are readable; raise retries")
        self.attempts = attempts


class StoreError(ProvError):
    """The content store cannot be read or written."""


class IntegrityError(StoreError):
    """Stored bytes do not hash to the address they are stored under."""


class KeyFileError(ProvError):
    """A key cannot be read, decrypted or used."""


class SigningError(ProvError):
    """Signing failed."""


class TimestampError(ProvError):
    """A timestamp authority could not be reached or refused the request."""


class ReleaseError(ProvError):
    """The GitHub API refused or failed a release operation."""


class RegistryError(ProvError):
    """An OCI registry answered with an error status or could not be reached.

    ``status`` is the HTTP status (None for a transport failure), ``kind`` one of the capture
    error types (``http-status``, ``timeout``, ``connect``, ``protocol``, ``digest-mismatch``...),
    ``detail`` what the registry said (challenge parameters, error codes), never credentials.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str = "http-status",
        status: int | None = None,
        detail: dict[str, object] | None = None,
        cause: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, cause=cause, hint=hint)
        self.kind = kind
        self.status = status
        self.detail = detail or {}


class MissingDependencyError(ProvError):
    """An optional package that this feature needs is not installed."""


class VerificationError(ProvError):
    """Evidence was checked and did not hold. Carries the report of what was checked."""

    exit_code = 1

    def __init__(
        self,
        message: str,
        *,
        cause: str | None = None,
        hint: str | None = None,
        report: object | None = None,
    ) -> None:
        super().__init__(message, cause=cause, hint=hint)
        self.report = report


class PackError(VerificationError):
    """An evidence pack is malformed, incomplete or altered."""
