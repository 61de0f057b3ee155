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
from slow_tests import is_slow  # noqa: E402

import devplace as dp  # noqa: E402

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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `slow` the tests slow_tests.py names: `make test-fast` (`-m "not slow"`) skips them."""
    for item in items:
        if is_slow(item.path.name, getattr(item, "originalname", item.name)):
            item.add_marker(pytest.mark.slow)


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
