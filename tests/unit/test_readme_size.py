"""The README stays a front door (issue 46): what the adapter is, the two commands, configs as
tables, one example per feature, in at most 400 lines. Detail goes to docs/, one topic per file."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
MAX_LINES = 400


def test_the_readme_is_at_most_400_lines() -> None:
    lines = len(README.read_text().splitlines())
    assert lines <= MAX_LINES, f"README.md has {lines} lines (at most {MAX_LINES}): move detail to docs/"
