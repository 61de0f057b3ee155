"""The wheel a user installs: built offline from this checkout, it carries the workloads, the
licence and the metadata, and works from outside the repository."""

import ast
import os
import shutil
import subprocess
import sys
import zipfile
from email.message import Message
from email.parser import Parser
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = ["bert-l3-operators.json", "bert24-layers.json", "resnet50-layers.json"]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from a copy of the checkout (the build writes build/ and egg-info)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "python",
        source / "python",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )
    out = tmp_path_factory.mktemp("wheel")
    # No build isolation: setuptools from this venv, so no network is needed.
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + [str(source), "-w", str(out)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    (built,) = out.glob("devplace-*.whl")
    return built


def test_wheel_holds_the_workloads_the_licence_and_the_opcode_table(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for workload in [*WORKLOADS, "README.md", "LICENSE.txt"]:
        assert f"devplace/workloads/{workload}" in names
    assert "devplace/bridge/opcodes.tsv" in names
    licence = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
    assert "MIT License" in zipfile.ZipFile(wheel).read(licence).decode()
    assert not any(n.startswith(("tests/", "benchmarks/", "examples/")) for n in names)


def _metadata(wheel: Path) -> Message:
    archive = zipfile.ZipFile(wheel)
    return Parser().parsestr(
        archive.read(next(n for n in archive.namelist() if n.endswith("METADATA"))).decode()
    )


def test_metadata_names_licence_author_python_range_and_dependencies(wheel):
    meta = _metadata(wheel)
    assert meta["License-Expression"] == "MIT"
    assert meta["Author"] == "devplace developers"
    assert SpecifierSet(meta["Requires-Python"]) == SpecifierSet(">=3.10,<3.14")
    classifiers = meta.get_all("Classifier")
    assert "Programming Language :: Python :: 3.13" in classifiers
    requires = meta.get_all("Requires-Dist")
    assert any(r.startswith("tensorflow>=") for r in requires)
    assert not any(r.startswith("tensorflow-cpu") for r in requires)
    assert 'tensorflow[and-cuda]>=2.16; extra == "gpu"' in requires
    assert "gpu" in meta.get_all("Provides-Extra")


def test_installed_wheel_finds_its_workloads_outside_the_repository(wheel, tmp_path):
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site)]
        + [str(wheel)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    code = (
        "import devplace, sys\n"
        "from devplace.autoplacer import workloads as w\n"
        "print(devplace.__file__)\n"
        "print(len(w.shared_workloads()))\n"
        "print(w._FORMAT_HINT)\n"
        "print('tensorflow' in sys.modules)\n"
    )
    # PYTHONPATH puts the installed copy before the checkout's editable path.
    env = dict(os.environ, PYTHONPATH=str(site))
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd="/", env=env
    )
    assert ran.returncode == 0, ran.stderr
    where, count, hint, tf_loaded = ran.stdout.splitlines()
    assert where.startswith(str(site))
    assert count == "3"
    readme = hint.removeprefix("see the format in ")
    assert readme.startswith(str(site)) and Path(readme).is_file()
    assert tf_loaded == "False"


def _imported_by_tests() -> set[str]:
    """The top-level modules tests/ imports that are neither the standard library, devplace
    nor modules of this checkout (tests' helpers, the benchmarks they run)."""
    local = {p.stem for folder in ("tests", "benchmarks") for p in (ROOT / folder).rglob("*.py")}
    found = set()
    for path in (ROOT / "tests").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - local - {"__future__", "devplace"}


def test_every_package_the_tests_import_is_named_by_pyproject(wheel):
    requirements = _metadata(wheel).get_all("Requires-Dist")  # dependencies and extras
    named = {canonicalize_name(Requirement(r).name) for r in requirements}
    providers = packages_distributions()
    unnamed = {
        module: providers.get(module, ["not installed"])
        for module in _imported_by_tests()
        if not named & {canonicalize_name(d) for d in providers.get(module, [])}
    }
    assert unnamed == {}, "name these in pyproject.toml's dev extra (not only through another)"
