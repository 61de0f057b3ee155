"""Every fenced ```python and ```julia block of README.md and docs/*.md runs as written.

The blocks of one language in one file run in order in one fresh process, in a temporary working
folder, as a reader following the page would (later blocks use names earlier ones made). A block
whose first line is `# not run: <reason>` is shown to readers but not run: it appears here as a
skipped test with that reason (for blocks that need a GPU, Slurm or several hosts, or that are a
fragment on purpose). Errors point at the Markdown file and its line. Julia blocks run with the
project's Julia (tests/julia_runner.py). Fences are found with markdown-it-py (TensorFlow's
dependency through rich), as a Markdown renderer finds them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from julia_runner import REPO, run_julia
from markdown_it import MarkdownIt

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LANGUAGES = ("python", "julia")
NOT_RUN = re.compile(r"#\s*not run:\s*(?P<reason>.+)")
#: Longest a page's blocks of one language may take together (a cluster started and stopped).
TIMEOUT_S = 600


@dataclass(frozen=True)
class Block:
    """One fenced block: its page, language, first code line (1-based) and code."""

    page: Path
    language: str
    line: int
    code: str

    @property
    def not_run_reason(self) -> str | None:
        first = self.code.lstrip("\n").split("\n", 1)[0].strip()
        found = NOT_RUN.fullmatch(first)
        return found["reason"] if found else None


def blocks(page: Path) -> list[Block]:
    """The page's Python and Julia blocks, in page order."""
    tokens = MarkdownIt().parse(page.read_text(encoding="utf-8"))
    return [
        Block(page, t.info.split()[0], t.map[0] + 2, t.content)
        for t in tokens
        if t.type == "fence" and t.info.split()[:1] in ([lang] for lang in LANGUAGES)
    ]


def name(page: Path) -> str:
    return str(page.relative_to(REPO))


ALL = [b for page in PAGES for b in blocks(page)]
RUNS = {
    (name(b.page), b.language): [c for c in ALL if (c.page, c.language) == (b.page, b.language)]
    for b in ALL
}
SKIPPED = [b for b in ALL if b.not_run_reason]

# Each block compiled with its page's name and padded to its line, so errors name that line.
PYTHON_RUNNER = """
import json, sys
namespace = {"__name__": "__main__"}
for page, line, path in json.loads(sys.argv[1]):
    code = "\\n" * (line - 1) + open(path, encoding="utf-8").read()
    exec(compile(code, page, "exec"), namespace)
"""
JULIA_RUNNER = """
for (page, line, path) in zip(ARGS[1:3:end], parse.(Int, ARGS[2:3:end]), ARGS[3:3:end])
    include_string(Main, "\\n"^(line - 1) * read(path, String), page)
end
"""


def run_blocks(page_blocks: list[Block], folder: Path) -> subprocess.CompletedProcess[str]:
    """Run one page's runnable blocks of one language in one process, in `folder`."""
    listed = []
    for i, block in enumerate(b for b in page_blocks if not b.not_run_reason):
        path = folder / f".block{i}"
        path.write_text(block.code, encoding="utf-8")
        listed.append((name(block.page), block.line, str(path)))
    if page_blocks[0].language == "python":
        return subprocess.run(
            [sys.executable, "-c", PYTHON_RUNNER, json.dumps(listed)],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
    flat = [str(item) for entry in listed for item in entry]
    return run_julia(["-e", JULIA_RUNNER, *flat], cwd=folder, timeout=TIMEOUT_S)


def test_blocks_are_found_with_their_lines_and_not_run_markers(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n```python\nx = 1\n```\n\n- item\n\n  ```julia\n  # not run: needs Slurm\n"
        "  y = 2\n  ```\n\n```sh\nls\n```\n",
        encoding="utf-8",
    )
    found = blocks(page)
    assert [(b.language, b.line, b.code) for b in found] == [
        ("python", 4, "x = 1\n"),
        ("julia", 10, "# not run: needs Slurm\ny = 2\n"),
    ]
    assert [b.not_run_reason for b in found] == [None, "needs Slurm"]


def test_a_failing_block_is_named_by_its_page_and_line(tmp_path):
    page = REPO / "docs" / "example-page.md"  # a name only: the page is never written
    code = "x = 1\nassert x == 2, 'x is not 2'\n"
    done = run_blocks(
        [Block(page, "python", 41, "y = 0\n"), Block(page, "python", 50, code)], tmp_path
    )
    assert done.returncode == 1
    assert 'File "docs/example-page.md", line 51' in done.stderr and "x is not 2" in done.stderr


def test_the_pages_have_blocks_of_both_languages():
    assert {lang for _, lang in RUNS} == set(LANGUAGES)
    assert ("README.md", "python") in RUNS and ("README.md", "julia") in RUNS


@pytest.mark.timeout(TIMEOUT_S + 60)
@pytest.mark.parametrize(("page", "language"), sorted(RUNS), ids=lambda v: str(v))
def test_page_blocks_run_in_order(page, language, tmp_path):
    if all(b.not_run_reason for b in RUNS[(page, language)]):
        pytest.skip(f"every {language} block of {page} is marked `# not run`")
    done = run_blocks(RUNS[(page, language)], tmp_path)
    assert done.returncode == 0, (
        f"a {language} block of {page} failed (the traceback names its line):\n"
        f"{done.stdout[-2000:]}\n{done.stderr[-6000:]}"
    )


@pytest.mark.parametrize(
    "block", SKIPPED, ids=[f"{name(b.page)}:{b.line}:{b.language}" for b in SKIPPED]
)
def test_not_run_block(block):
    pytest.skip(f"{name(block.page)} line {block.line}: not run: {block.not_run_reason}")
