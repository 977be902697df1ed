"""Acceptance: a bad source of each network kind exits 2 naming the source, the field, the line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

CASES = [
    pytest.param(
        'kind = "wandb"\nrun = "marin-community/hero-12d8b6f0-dee637"',
        "run",
        "entity/project/run_id",
        id="wandb-malformed-run-path",
    ),
    pytest.param('kind = "wandb"', "path", "run =", id="wandb-nothing-to-capture"),
    pytest.param(
        'kind = "wandb"\nrun = "a/b/c"\nbase_url = "ftp://example.org"',
        "base_url",
        "'ftp'",
        id="wandb-base-url-scheme",
    ),
    pytest.param(
        'kind = "huggingface"\nrepo = "marin--community/token counts"',
        "repo",
        "not a Hugging Face repo id",
        id="hf-bad-repo-id",
    ),
    pytest.param(
        'kind = "huggingface"\nrepo = "datasets/marin-community/token-counts"',
        "repo",
        "not a Hugging Face repo id",
        id="hf-repo-id-with-type",
    ),
    pytest.param(
        'kind = "huggingface"\nrepo = "a/b"\nrepo_type = "paper"',
        "repo_type",
        "model",
        id="hf-repo-type",
    ),
    pytest.param(
        'kind = "huggingface"\nrepo = "a/b"\nfiles = ["../etc/passwd"]',
        "files",
        "relative path",
        id="hf-file-outside-repo",
    ),
    pytest.param(
        'kind = "http"\nurl = "ftp://marin-us-east-02a.cwobject.com/marin/x"',
        "url",
        "http:// or https://",
        id="http-non-http-scheme",
    ),
    pytest.param(
        'kind = "http"\nurl = "https://example.org/x"\nmethod = "DELETE"',
        "method",
        "GET",
        id="http-method",
    ),
    pytest.param(
        'kind = "http"\nurl = "https://example.org/x"\ntimeout = -5',
        "timeout",
        "greater than 0",
        id="http-negative-timeout",
    ),
    pytest.param(
        'kind = "wandb"\nrun = "a/b/c"\ntimeout = -1',
        "timeout",
        "greater than 0",
        id="wandb-negative-timeout",
    ),
    pytest.param(
        'kind = "http"\nurl = "https://example.org/x"\nheaders = { "Bad Header" = "x" }',
        "headers",
        "not a valid header name",
        id="http-header-name",
    ),
    pytest.param(
        'kind = "huggingface"\nrepo = "a/b"\nmax_file_bytes = -1',
        "max_file_bytes",
        "greater than or equal to 0",
        id="hf-negative-size",
    ),
]


@pytest.mark.parametrize(("body", "field", "message"), CASES)
def test_a_bad_source_exits_2_naming_the_source_and_the_field(
    project: Path, prov: Callable[..., Result], body: str, field: str, message: str
) -> None:
    (project / "prov.toml").write_text(f'[[sources]]\nname = "bad-one"\n{body}\n')
    result = prov("snapshot", "--no-sign")

    assert result.exit_code == 2, result.output + result.stderr
    assert "source 'bad-one'" in result.stderr
    assert f"field {field!r}" in result.stderr
    assert message in result.stderr
    line = next(
        (n for n, text in enumerate(body.splitlines(), start=3) if text.startswith(field)), 1
    )
    assert f"prov.toml:{line}:" in result.stderr
    assert not (project / ".prov").exists()  # nothing was collected


def test_a_signed_url_is_not_repeated_in_a_config_error(
    project: Path, prov: Callable[..., Result]
) -> None:
    secret = "sig0123456789abcdef0123456789"
    (project / "prov.toml").write_text(
        f'[[sources]]\nname = "s"\nkind = "http"\nurl = "gs://bucket/o?X-Goog-Signature={secret}"\n'
    )
    result = prov("snapshot", "--no-sign")

    assert result.exit_code == 2
    assert secret not in result.stderr and "'gs'" in result.stderr
