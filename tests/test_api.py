"""The public names of `import devplace as dp`, as docs/design.md's contract lists them."""

import importlib
import pkgutil
import subprocess
import sys
import types

import pytest

import devplace as dp

CONTRACT = [
    "tf",
    "cpu",
    "gpu",
    "device",
    "canonical_device",
    "DeviceSpecError",
    "assign_to_device",
    "round_robin",
    "greedy_by_bytes",
    "PS_OPS",
    "Variable",
    "constant",
    "placeholder",
    "gradients",
    "Session",
    "init",
    "run",
    "run_profile",
    "save_profile",
    "placement",
    "placement_log",
    "batch_norm",
    "bn",
    "UPDATE_OPS",
    "get_collection",
    "control_dependencies",
    "plot_profile",
    "compare_profiles",
    "autoplace",
    "AutoPlacement",
    "DevicePlacementError",
]


@pytest.mark.parametrize("name", CONTRACT)
def test_contract_names_exist(name):
    assert getattr(dp, name) is not None
    assert name in dp.__all__


def test_every_exported_name_resolves():
    for name in dp.__all__:
        assert getattr(dp, name) is not None, name


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        dp.nope  # noqa: B018


def test_tf_is_compat_v1_in_tf1_behaviour():
    assert dp.tf.Variable(1.0).op.type == "VariableV2"
    assert not dp.tf.executing_eagerly()


@pytest.mark.slow
def test_import_leaves_the_heavy_parts_for_first_use():
    heavy = ("devplace.views.plot", "devplace.autoplacer", "devplace.cluster")
    code = f"import sys, devplace; print(*(m in sys.modules for m in {heavy!r}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "False"]


SUBMODULES = sorted(
    info.name.removeprefix("devplace.")
    for info in pkgutil.walk_packages(dp.__path__, "devplace.")
    if info.name.count(".") == 1 and not info.name.endswith("__main__")
)


def test_no_submodule_shares_its_name_with_a_public_attribute():
    # Importing `devplace.x` sets the attribute `devplace.x` to the module, replacing a
    # public name `x` (as `import devplace.placement` once replaced the `placement` function).
    assert {"core", "adapter", "facts", "views", "cluster"} <= set(SUBMODULES)
    assert not set(SUBMODULES) & set(dp.__all__)


def test_importing_every_submodule_leaves_every_public_name_as_it_was():
    before = {name: getattr(dp, name) for name in dp.__all__}
    for name in SUBMODULES:
        module = importlib.import_module(f"devplace.{name}")
        assert getattr(dp, name) is module
    assert {name: getattr(dp, name) for name in dp.__all__} == before
    import devplace.adapter.scopes as scopes

    assert scopes.cpu is dp.cpu and not isinstance(dp.placement, types.ModuleType)
