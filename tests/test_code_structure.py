"""The house rules of the Python package, read from its source with `ast`: no import circles
between devplace's modules, and no function longer than 60 lines; the same length rule for the
Julia package's functions and macros (read by their indentation: `end` under the `function`).

An import counts wherever it is written (at the top, or inside a function, where it only
delays the circle), except under `if TYPE_CHECKING:` and one edge: a Jupyter display hook
(`_repr_html_` and kin) importing `devplace.views.notebook`, the view of them all, to hand it
the object. The renderer imports none of the modules whose objects it shows, not even through
the modules it imports (it is handed them;
`test_the_notebook_renderer_imports_no_module_it_renders`): only `devplace.core.formatting`
and, when it draws a picture, `devplace.views.drawing`, which draws the `Trace` it is handed;
any other import inside a hook counts.

The floors are folders: `devplace/core/`, `adapter/` (TensorFlow's), `facts/` and `views/`,
lowest first (`FLOORS`). A module on a floor reaches, through every import it makes and every
import of what it imports (the other packages' modules included), only modules on its own
floor or below; the package's top holds no module but `__init__`, `__main__` and `demo`.
"""

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "devplace"
JULIA_SOURCE = PACKAGE.parent.parent / "julia" / "DevPlace" / "src"
MAX_FUNCTION_LINES = 60


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
RENDERER = "devplace.views.notebook"
#: The floors, lowest first: each is a folder of the package (see the module's doc).
FLOORS = ("core", "adapter", "facts", "views")
#: The modules at the package's top: the public names, the command line and the demo.
TOP = {"__init__", "__main__", "demo"}


def _is_display_hook(node: ast.AST) -> bool:
    name = getattr(node, "name", "")
    return isinstance(node, ast.FunctionDef) and name.startswith("_repr_") and name.endswith("_")


def _skipped(node: ast.AST) -> bool:
    """Whether the imports under `node` do not count (see the module's doc)."""
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(node: ast.AST, module: str, is_package: bool) -> set[str]:
    """The devplace modules `node` imports, walking into it (a display hook's import of the
    renderer left out)."""
    if _is_display_hook(node):
        return {
            name
            for child in ast.iter_child_nodes(node)
            for name in _imports(child, module, is_package)
            if name != RENDERER
        }
    found: set[str] = set()
    if isinstance(node, ast.Import):
        found.update(a.name for a in node.names if a.name in MODULES)
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            here = module.split(".") if is_package else module.split(".")[:-1]
            here = here[: len(here) - node.level + 1]
            base = ".".join(here + ([node.module] if node.module else []))
        for alias in node.names:  # `from pkg import mod` imports the module pkg.mod
            target = f"{base}.{alias.name}"
            found.add(target if target in MODULES else base)
    for child in ast.iter_child_nodes(node):
        if not _skipped(child):
            found |= _imports(child, module, is_package)
    return found & MODULES.keys()


def import_graph() -> dict[str, set[str]]:
    """Each devplace module -> the devplace modules it imports."""
    return {
        name: _imports(ast.parse(path.read_text()), name, path.name == "__init__.py") - {name}
        for name, path in MODULES.items()
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while (top := stack.pop()) != node:
                component.append(top)
            if component:
                found.append(sorted([node, *component]))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_circle_finder_finds_circles_and_only_them():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_import_graph_sees_imports_inside_functions():
    graph = import_graph()
    assert "devplace.adapter._tf" in graph["devplace.adapter.session"]  # at the top
    assert "devplace.cluster.probe" in graph["devplace.adapter.session"]  # inside a method
    assert "devplace.cluster.spec" in graph["devplace.cluster.errors"]  # `from pkg import mod`


def _parsed(source: str) -> set[str]:
    return _imports(ast.parse(source), "devplace.example", False)


def test_a_display_hook_is_exempt_for_the_renderer_only():
    hook = "class A:\n    def _repr_html_(self):\n        from devplace.{} import x\n"
    assert _parsed(hook.format("views.notebook")) == set()
    assert _parsed(hook.format("facts.report")) == {"devplace.facts.report"}
    assert _parsed("def show():\n    from devplace.views.notebook import x\n") == {RENDERER}


def test_the_notebook_renderer_imports_no_module_it_renders():
    graph = import_graph()
    rendered = {
        name
        for name, path in MODULES.items()
        if any(_is_display_hook(node) for node in ast.walk(ast.parse(path.read_text())))
    }
    facts = {"devplace.facts.report", "devplace.facts.comparison", "devplace.facts.trace"}
    assert facts <= rendered
    reached, todo = set(), [RENDERER]
    while todo:  # everything the renderer imports, directly or through other modules
        for name in graph[todo.pop()] - reached:
            reached.add(name)
            todo.append(name)
    assert "devplace.views.drawing" in reached
    assert reached & rendered == set(), "the renderer takes the objects it is handed"


def test_no_import_circles_within_devplace():
    found = circles(import_graph())
    assert found == [], "modules importing each other, directly or around a circle"


def floor(module: str) -> int | None:
    """The floor of `module` (its index in `FLOORS`), or None for a module on no floor."""
    parts = module.split(".")
    return FLOORS.index(parts[1]) if len(parts) > 2 and parts[1] in FLOORS else None


def floor_breaches(graph: dict[str, set[str]]) -> list[str]:
    """`module -> ... -> higher` for each floor module that reaches a module on a higher floor
    (the shortest way there, breadth first)."""
    found = []
    for start in sorted(m for m in graph if floor(m) is not None):
        came_from: dict[str, str] = {start: ""}
        todo = [start]
        while todo:
            here = todo.pop(0)
            for other in sorted(graph[here] - came_from.keys()):
                came_from[other] = here
                todo.append(other)
        for high in sorted(m for m in came_from if (floor(m) or 0) > floor(start)):
            way = [high]
            while came_from[way[-1]]:
                way.append(came_from[way[-1]])
            found.append(" -> ".join(reversed(way)))
    return found


def test_the_floor_check_follows_imports_through_other_packages():
    graph = {
        "devplace.adapter.a": {"devplace.cluster.x", "devplace.core.c"},
        "devplace.cluster.x": {"devplace.views.v"},
        "devplace.core.c": set(),
        "devplace.views.v": {"devplace.adapter.a"},
    }
    assert floor_breaches(graph) == ["devplace.adapter.a -> devplace.cluster.x -> devplace.views.v"]
    graph["devplace.cluster.x"] = {"devplace.core.c"}
    assert floor_breaches(graph) == []


def test_each_floor_is_a_folder_and_the_top_holds_no_other_module():
    for name in FLOORS:
        assert (PACKAGE / name / "__init__.py").is_file(), f"the floor {name}/ is gone"
    top = {path.stem for path in PACKAGE.glob("*.py")}
    assert top == TOP, "put each module in its floor's folder (or a package of its own)"


def test_no_module_reaches_a_floor_above_its_own():
    found = floor_breaches(import_graph())
    assert found == [], "a module imports from a floor above its own (directly or through these)"


def test_no_function_longer_than_60_lines():
    long = [
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name} "
        f"({node.end_lineno - node.lineno + 1} lines)"
        for path in MODULES.values()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == [], "split these into named steps"


#: A Julia function or macro's first line (`function f(...)`, `@inline function f`, `macro m`).
_JULIA_DEFINITION = re.compile(r"^(\s*)(?:@\w+\s+)*(?:function|macro)\s+([^\s(]+)(.*)$")


def julia_function_lengths(text: str) -> list[tuple[int, str, int]]:
    """Each multi-line function and macro of Julia source `text`: first line, name and lines,
    to the `end` at its own indentation (the Julia files keep that layout)."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        match = _JULIA_DEFINITION.match(line)
        if match is None or re.search(r"\bend\s*(#.*)?$", match.group(3)):
            continue  # `function f end`, one-line bodies
        closing = re.compile(re.escape(match.group(1)) + r"end\b")
        last = next(j for j in range(i + 1, len(lines)) if closing.match(lines[j]))
        found.append((i + 1, match.group(2), last - i + 1))
    return found


def test_julia_function_lengths_are_read_to_their_end():
    text = "function f(x)\n    if x\n        1\n    end\nend\nfunction g end\n"
    text += "@inline function h()\n    2\nend\nmacro m(ex)\n    esc(ex)\nend\n"
    assert julia_function_lengths(text) == [(1, "f", 5), (7, "h", 3), (10, "m", 3)]


def test_no_julia_function_longer_than_60_lines():
    long = [
        f"{path.relative_to(JULIA_SOURCE)}:{line} {name} ({length} lines)"
        for path in sorted(JULIA_SOURCE.rglob("*.jl"))
        for line, name, length in julia_function_lengths(path.read_text(encoding="utf-8"))
        if length > MAX_FUNCTION_LINES
    ]
    assert long == [], "split these into named steps"


def test_no_dated_measurement_in_the_python_source():
    # dated numbers go stale in a docstring: they live in docs/ (docs/autoplace.md's records)
    date = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
    dated = [
        f"{path.relative_to(PACKAGE.parent)}:{i}"
        for path in MODULES.values()
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if date.search(line)
    ]
    assert dated == [], "move these measurements to docs/ and point there"
