"""The README's Python examples run as written (a reader copies them first)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_every_python_block_of_the_readme_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README shows no Python example"
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})
