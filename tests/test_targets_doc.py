"""docs/targets.md's worked example runs with libtpu and prints what the page shows:
the words and the verdicts always, the figures on the JAX release the page was written
with (libtpu's releases place buffers a little differently, and the one of JAX 0.9
compiles a program over the memory rather than refusing it)."""

import pathlib
import re
import subprocess
import sys

import jax
import pytest

pytestmark = pytest.mark.targets

PAGE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "targets.md"
#: The release whose libtpu made the figures the page shows.
WRITTEN_WITH = "0.10.2"


def blocks(kind: str) -> list[str]:
    section = PAGE.read_text().split("## A worked example", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{kind}\n(.*?)```", section, re.S)


def figures_masked(text: str) -> str:
    """The words without the figures; of the memory answer, the verdict alone (an
    older libtpu compiles what a newer one refuses for lack of memory: the answer
    then comes from the live-range peak, in other words, with the same verdict)."""
    lines = []
    for line in text.splitlines():
        if line.strip().startswith("device memory:"):
            line = ":".join(line.split(":")[:2])
        lines.append(re.sub(r"\d+(\.\d+)?", "N", line))
    return "\n".join(lines)


def test_the_worked_example_prints_what_the_page_shows(tmp_path):
    code, shown = blocks("python"), blocks("text")
    assert len(code) == 2 and len(shown) == 2
    (tmp_path / "example.py").write_text("\n".join(code))
    proc = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = "".join(shown)
    if jax.__version__ == WRITTEN_WITH:
        assert proc.stdout == expected
    else:
        assert figures_masked(proc.stdout) == figures_masked(expected)
