"""prov.toml: every complaint names the file and the line, and nothing is collected."""

from __future__ import annotations

from pathlib import Path

import pytest

from provenance import config
from provenance.capture.base import validate_source
from provenance.errors import ConfigError

GOOD = """\
[store]
path = ".prov"

[[sources]]
name = "launcher"
kind = "git"
repo = "."
ref = "main"
paths = ["experiments/grug/moe_hero_ep"]
"""


def parse(text: str) -> config.Config:
    return config.parse(text, Path("prov.toml"))


def test_a_valid_file_loads_with_positions() -> None:
    loaded = parse(GOOD)
    (source,) = loaded.sources
    assert (source.name, source.kind, source.line) == ("launcher", "git", 4)
    assert source.key_lines["paths"] == 9
    _, options = validate_source(source)
    assert options.paths == ["experiments/grug/moe_hero_ep"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            GOOD + 'colour = "red"\n',
            r"prov.toml:10: source 'launcher', field 'colour': unknown key",
        ),
        (
            GOOD.replace('repo = "."\n', ""),
            r"prov.toml:4: source 'launcher', field 'repo': required",
        ),
        (GOOD.replace('kind = "git"', 'kind = "svn"'), r"prov.toml:6: .*unknown kind 'svn'"),
        (
            GOOD + GOOD.split("\n", 3)[3],
            r"prov.toml:11: duplicate source name 'launcher' \(first defined at line 5\)",
        ),
        ("[store]\npath = 1\n", r"prov.toml:2: store.path"),
        ("[stor]\npath = 'x'\n", r"prov.toml:1: stor: unknown key"),
        ("[[sources]]\nkind = 'git'\n", r"prov.toml:1: source #1: 'name' is required"),
        ("[[sources]\nname = 'x'\n", r"prov.toml: not valid TOML"),
        (GOOD + "timeout = -1\n", r"prov.toml:10: source 'launcher', field 'timeout'"),
    ],
)
def test_bad_files_are_rejected_with_file_and_line(text: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        loaded = parse(text)
        for source in loaded.sources:
            validate_source(source)


def test_missing_file_says_how_to_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        config.load(tmp_path / "prov.toml")
    assert "prov init" in caught.value.diagnostics()


def test_the_init_template_is_valid() -> None:
    loaded = parse(config.TEMPLATE)
    for source in loaded.sources:
        validate_source(source)
