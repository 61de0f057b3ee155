"""Every fenced ```python and ```julia block of README.md and docs/*.md runs as written.

The blocks of one language in one file run in order in one fresh process, in a temporary working
folder, as a reader following the page would (later blocks use names earlier ones made). A block
whose first line is `# not run: <reason>` is shown to readers but not run: it appears here as a
skipped test with that reason (for blocks that need a GPU, Slurm or several hosts, or that are a
fragment on purpose). Errors point at the Markdown file and its line. Julia blocks run with the
project's Julia (tests/julia_runner.py). Fences are found with markdown-it-py (TensorFlow's
dependency through rich), as a Markdown renderer finds them.

Where a page shows what a block prints, in an ```output block right after it, the printed lines
must be those, line for line; `...` in a shown line stands for text that varies from run to run
(timings, addresses, PIDs) and matches anything there.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from julia_runner import REPO, run_julia
from markdown_it import MarkdownIt

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LANGUAGES = ("python", "julia")
NOT_RUN = re.compile(r"#\s*not run:\s*(?P<reason>.+)")
#: Printed by the runners before each block's own output, so that each block's can be told apart.
BLOCK_START = "\x1edevplace-docs-block"
#: Longest a page's blocks of one language may take together (a cluster started and stopped).
TIMEOUT_S = 600


@dataclass(frozen=True)
class Block:
    """One fenced block: its page, language, first code line (1-based) and code, and the
    output the page shows for it (None if none)."""

    page: Path
    language: str
    line: int
    code: str
    output: str | None = None

    @property
    def not_run_reason(self) -> str | None:
        first = self.code.lstrip("\n").split("\n", 1)[0].strip()
        found = NOT_RUN.fullmatch(first)
        return found["reason"] if found else None


def blocks(page: Path) -> list[Block]:
    """The page's Python and Julia blocks, in page order, each with the ```output block that
    follows it."""
    fences = [t for t in MarkdownIt().parse(page.read_text(encoding="utf-8")) if t.type == "fence"]
    found = []
    for i, t in enumerate(fences):
        if t.info.split()[:1] in ([lang] for lang in LANGUAGES):
            after = fences[i + 1] if i + 1 < len(fences) else None
            shown = after.content if after and after.info.split()[:1] == ["output"] else None
            found.append(Block(page, t.info.split()[0], t.map[0] + 2, t.content, shown))
    return found


def output_problem(shown: str, printed: str) -> str | None:
    """How `printed` differs from what the page `shows` (`...` matching anything); None if it
    does not."""
    want, got = shown.rstrip("\n").split("\n"), printed.rstrip("\n").split("\n")
    for number, (line, text) in enumerate(zip(want, got, strict=False), 1):
        pattern = ".*".join(re.escape(part) for part in line.rstrip().split("..."))
        if not re.fullmatch(pattern, text.rstrip()):
            return f"line {number}: the page shows {line!r}, the block printed {text!r}"
    if len(want) != len(got):
        return f"the page shows {len(want)} lines, the block printed {len(got)}:\n{printed}"
    return None


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
    print(BLOCK_START, flush=True)
    code = "\\n" * (line - 1) + open(path, encoding="utf-8").read()
    exec(compile(code, page, "exec"), namespace)
""".replace("BLOCK_START", json.dumps(BLOCK_START))
JULIA_RUNNER = """
for (page, line, path) in zip(ARGS[1:3:end], parse.(Int, ARGS[2:3:end]), ARGS[3:3:end])
    println(BLOCK_START); flush(stdout)
    include_string(Main, "\\n"^(line - 1) * read(path, String), page)
end
""".replace("BLOCK_START", json.dumps(BLOCK_START))


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


@pytest.mark.slow
def test_a_failing_block_is_named_by_its_page_and_line(tmp_path):
    page = REPO / "docs" / "example-page.md"  # a name only: the page is never written
    code = "x = 1\nassert x == 2, 'x is not 2'\n"
    done = run_blocks(
        [Block(page, "python", 41, "y = 0\n"), Block(page, "python", 50, code)], tmp_path
    )
    assert done.returncode == 1
    assert 'File "docs/example-page.md", line 51' in done.stderr and "x is not 2" in done.stderr


@pytest.mark.slow
def test_the_output_a_page_shows_is_compared_line_by_line_but_for_its_dots(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nprint('a', 1)\nprint('took 3 ms')\n```\n\n```output\na 1\ntook ... ms\n```\n"
        "\n```python\nprint(2)\n```\n",
        encoding="utf-8",
    )
    shown, unshown = blocks(page)
    assert (shown.output, unshown.output) == ("a 1\ntook ... ms\n", None)
    named = REPO / "docs" / "example-page.md"  # a name only: the page is never written
    done = run_blocks([replace(b, page=named) for b in (shown, unshown)], tmp_path)
    first, second = done.stdout.split(BLOCK_START + "\n")[1:]
    assert (first, second) == ("a 1\ntook 3 ms\n", "2\n")
    assert output_problem(shown.output, first) is None
    assert "shows 'a 1', the block printed 'a 2'" in output_problem(shown.output, "a 2\ntook 3 ms")
    assert "shows 2 lines, the block printed 3" in output_problem(shown.output, first + "more\n")
    assert output_problem("took ... ms", "took 3 s") is not None


def test_the_pages_have_blocks_of_both_languages():
    assert {lang for _, lang in RUNS} == set(LANGUAGES)
    assert ("README.md", "python") in RUNS and ("README.md", "julia") in RUNS


@pytest.mark.slow
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
    ran = [b for b in RUNS[(page, language)] if not b.not_run_reason]
    printed = done.stdout.split(BLOCK_START + "\n")[1:]
    assert len(printed) == len(ran), done.stdout[-2000:]
    for block, text in zip(ran, printed, strict=True):
        if block.output is not None and (problem := output_problem(block.output, text)):
            pytest.fail(f"{page} line {block.line}: the output shown after the block: {problem}")


@pytest.mark.parametrize(
    "block", SKIPPED, ids=[f"{name(b.page)}:{b.line}:{b.language}" for b in SKIPPED]
)
def test_not_run_block(block):
    pytest.skip(f"{name(block.page)} line {block.line}: not run: {block.not_run_reason}")
