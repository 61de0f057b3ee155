"""What README.md and docs/placement.md tell a new reader holds, in the order they need it."""

import re
import subprocess

import pytest
from markdown_it import MarkdownIt
from test_docs_blocks import REPO, blocks

import devplace as dp

README = (REPO / "README.md").read_text(encoding="utf-8")


def test_an_unplaceable_op_fails_a_fetch_that_does_not_need_it_and_the_docs_say_so():
    with dp.cpu(0):
        y = dp.sin(dp.constant(1.0), name="y")
    with dp.cpu(1):
        dp.cos(dp.constant(2.0), name="unrelated")
    with pytest.raises(dp.DevicePlacementError, match="cannot place op 'unrelated'"):
        dp.run(dp.Session(cpus=1), y)
    placement = (REPO / "docs" / "placement.md").read_text(encoding="utf-8")
    assert "reachable from a fetch is placed" not in placement
    assert "The whole graph is placed at the first `run`" in placement


def test_readme_profiles_and_reports_one_fetch_built_once():
    first = next(b for b in blocks(REPO / "README.md") if b.language == "python").code
    profiled = re.findall(r"dp\.run_profile\(sess, ([^)]*)\)", first)
    reported = re.findall(r"dp\.placement\(sess, ([^)]*)\)", first)
    assert profiled == reported == ["fetch"]  # a name: `g + c` twice would build two adds


def test_readme_says_where_commands_live_before_using_them():
    two_commands = README.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    assert "`make setup`" in two_commands and "about 50 minutes" in two_commands
    assert README.index(".venv/bin/devplace") < README.index("`devplace devices`")
    julia = README.split("## Julia", 1)[1]
    assert julia.index("`make setup` (and `make test`; `make demo` sets up only Python)") < 200


def shell_blocks(markdown: str) -> list[str]:
    """The `sh` fenced blocks of `markdown`, in order."""
    tokens = MarkdownIt().parse(markdown)
    return [t.content for t in tokens if t.type == "fence" and t.info.split()[:1] == ["sh"]]


def make_commands(target: str) -> str:
    """What `make TARGET` would run from scratch (a dry run: nothing is built)."""
    done = subprocess.run(
        ["make", "--dry-run", "--always-make", target],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


@pytest.mark.slow
def test_the_julia_section_starts_with_the_command_that_provides_its_julia():
    julia = README.split("## Julia", 1)[1].split("\n## ", 1)[0]
    first = shell_blocks(julia)[0].splitlines()
    target = re.fullmatch(r"make (\S+)\s+#.*", first[0])
    assert target, f"the Julia section's first command should be a make target, got {first[0]!r}"
    assert "tools/setup-julia.sh" in make_commands(target[1])  # it provides .julia-runtime/julia
    assert first[1].startswith(".julia-runtime/julia --project=julia/DevPlace")
    assert "tools/setup-julia.sh" not in make_commands("demo")  # as the section says
