"""Every relative link in README.md and docs/*.md points at a file (and heading) that exists."""

import ast
import re
from fnmatch import fnmatch
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """The anchor a Markdown renderer (GitHub's rule) gives a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", text, re.M)}


def links(page: Path) -> list[str]:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    found = [a or b for a, b in _LINK.findall(text)]
    return [t for t in found if not re.match(r"[a-z][a-z0-9+.-]*:", t)]  # not http:, mailto:


def test_slugs_follow_the_renderers_rule():
    assert slug("TF2 code") == "tf2-code"
    assert slug("Placers (`placers/`, one module each)") == "placers-placers-one-module-each"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(
                f"{target}: no {file.relative_to(ROOT) if ROOT in file.parents else file}"
            )
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def test_the_pages_link_to_each_other():
    assert any(t.startswith("docs/design.md") for t in links(ROOT / "README.md"))
    assert "layout.md" in links(ROOT / "docs" / "design.md")


PACKAGE = ROOT / "python" / "devplace"
#: The packages whose `__init__.py` docstring maps its modules: after a `Modules:` line, one
#: `- `name`: what it owns` line per module or subpackage (several names may share a line).
MAPPED = ("core", "adapter", "facts", "views", "bridge", "bridge/adcme", "bridge/transports")


def package_map(doc: str) -> set[str]:
    """The names a package docstring's map lists (those before the `:` of each `- ` line)."""
    section = doc.partition("\nModules:\n")[2]
    heads = (line.split(":", 1)[0] for line in section.splitlines() if line.startswith("- "))
    return {name for head in heads for name in re.findall(r"`(\w+)`", head)}


def package_contents(folder: Path) -> set[str]:
    """A package's modules (but `__init__`) and subpackages."""
    modules = {p.stem for p in folder.glob("*.py")} - {"__init__"}
    return modules | {p.parent.name for p in folder.glob("*/__init__.py")}


def test_a_package_map_is_read_from_its_lines_of_modules():
    doc = "Doc `x`.\n\nModules:\n\n- `a`: one\n  `b` in a sentence\n- `c`, `d`: two: `e`\n"
    assert package_map(doc) == {"a", "c", "d"}
    assert package_contents(PACKAGE / "bridge") >= {"adcme", "transports", "wire", "__main__"}


@pytest.mark.parametrize("package", MAPPED)
def test_each_package_map_lists_exactly_its_modules(package):
    folder = PACKAGE / package
    listed = package_map(ast.get_docstring(ast.parse((folder / "__init__.py").read_text())) or "")
    assert listed - package_contents(folder) == set(), f"{package}/__init__.py maps modules gone"
    assert package_contents(folder) - listed == set(), f"{package}/__init__.py does not map these"


def test_layout_lists_every_module_and_nothing_gone():
    # a mapped package's modules are listed by its map; layout.md lists the package
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    python = text[text.index("## Python") : text.index("## Julia")]
    julia = text[text.index("## Julia") : text.index("## Around")]
    modules = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")}
    placers = {m for m in modules if re.fullmatch(r"autoplacer/placers/[a-z]\w*\.py", m)}
    mapped = {m for m in modules if str(Path(m).parent) in MAPPED and "__init__" not in m}
    missing = sorted(m for m in modules - placers - mapped if f"`{m}`" not in python)
    missing += sorted(p for p in placers if f"`{Path(p).stem}`" not in python)
    assert not missing, f"docs/layout.md does not list: {missing}"
    src = ROOT / "julia" / "DevPlace" / "src"
    # Julia: a row per floor, its module file first, then the files in its folder; DevPlace's own
    floors = re.findall(r"^\| `(\w+)/(\w+\.jl)` \|.*\| (.*) \|$", julia, re.M)
    listed = {f"{folder}/{module}" for folder, module, _ in floors}
    listed |= {f"{d}/{f}" for d, _, files in floors for f in re.findall(r"`([\w*]+\.jl)`", files)}
    listed |= set(re.findall(r"^`(\w+\.jl)`", julia, re.M))
    sources = {p.relative_to(src).as_posix() for p in src.rglob("*.jl")}
    missing = sorted(s for s in sources if not any(fnmatch(s, pattern) for pattern in listed))
    assert not missing, f"docs/layout.md does not list: {missing}"
    gone = [m for m in re.findall(r"`([\w/]+\.(?:py|tsv))`", python) if not (PACKAGE / m).exists()]
    gone += sorted(p for p in listed if not any(fnmatch(s, p) for s in sources))
    assert not gone, f"docs/layout.md lists files that are gone: {gone}"
