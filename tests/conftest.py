"""Shared fixtures and device facts for every test.

Tests derive what they expect from the devices this machine really has: `GPUS` lists the local
GPUs TensorFlow sees (empty on CPU-only machines such as CI), and `requires_gpu` skips a test
with a reason where there is none.
"""

import os
import signal

# Before TensorFlow loads: a test process must never take all of a GPU's memory (several test
# processes share one GPU, and TF otherwise maps nearly all of it at the first session).
os.environ.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")

import pytest  # noqa: E402
from julia_runner import find_julia, first_start  # noqa: E402

import devplace as dp  # noqa: E402

#: tiers: the fast tier's rule (no test there starts a process or a server); pytester: its test.
pytest_plugins = ("tiers", "pytester")

GPUS = [f"/device:GPU:{i}" for i, _ in enumerate(dp.tf.config.list_physical_devices("GPU"))]
"""The local GPUs, canonical names, in TensorFlow's order."""

HAS_GPU = bool(GPUS)

#: Where an op with no device request runs: TF's default device, GPU:0 when a GPU exists.
DEFAULT_DEVICE = GPUS[0] if GPUS else "/device:CPU:0"

requires_gpu = pytest.mark.skipif(
    not HAS_GPU, reason="needs a GPU: TensorFlow sees none on this machine"
)
requires_no_gpu = pytest.mark.skipif(
    HAS_GPU, reason="checks CPU-only behaviour (a GPU pin failing without soft placement)"
)


def _starts_julia(item: pytest.Item) -> bool:
    """Is `item` a slow test of a module that runs Julia (through julia_runner or bridge_julia)?"""
    helpers = vars(getattr(item, "module", None) or object).values()
    uses = any(getattr(h, "__module__", None) in ("julia_runner", "bridge_julia") for h in helpers)
    return uses and item.get_closest_marker("slow") is not None


def pytest_collection_finish(session: pytest.Session) -> None:
    """Julia's first start in the session (a cold depot compiles DevPlace: minutes) before the
    first test, outside every test's deadline, when a test that runs Julia is selected."""
    if session.config.option.collectonly or not any(map(_starts_julia, session.items)):
        return
    julia = find_julia()
    if julia is not None:
        first_start(julia)  # a failure is reported by each Julia test (require_julia)


def ignore_sigint() -> None:
    """Ignore SIGINT, as a shell's background job (`nohup make test &`) starts its commands:
    a `preexec_fn` for commands that must stop on Ctrl-C even so."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.fixture(autouse=True)
def fresh_graph():
    """A new default graph for each test, so op names and collections never leak."""
    graph = dp.tf.Graph()
    with graph.as_default():
        yield graph
