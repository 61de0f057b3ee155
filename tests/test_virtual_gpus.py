"""`virtual_gpus`: each GPU split into logical GPUs, checked, configured, warned about.

GPU-only tests run in fresh processes: the first session of a process fixes its GPU devices, and
pytest's process has made sessions long before.
"""

import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from conftest import GPUS, requires_gpu, requires_no_gpu

import devplace as dp
from devplace.adapter.session_options import check_option
from devplace.adapter.virtual_gpus import DEFAULT_SHARE, memory_split, set_virtual_gpus
from devplace.cli import main

tf = dp.tf


def run_python(script):
    """Run `script` in a fresh Python process; its stdout lines."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, TF_FORCE_GPU_ALLOW_GROWTH="true"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


@pytest.mark.parametrize(
    "bad, kind",
    [
        (0, dp.SessionOptionError),
        (-2, dp.SessionOptionError),
        (1025, dp.SessionOptionError),
        ([], dp.SessionOptionError),
        ([1024, 0], dp.SessionOptionError),
        ([-512], dp.SessionOptionError),
        ([2**21], dp.SessionOptionError),
        (2.5, TypeError),
        (True, TypeError),
        ("4", TypeError),
        ([1024.5], TypeError),
        ([1024, "a"], TypeError),
        (np.ones((2, 2), int), TypeError),
    ],
)
def test_bad_values_name_the_option_what_it_takes_and_a_hint(bad, kind):
    with pytest.raises(kind) as caught:
        dp.Session(virtual_gpus=bad)
    assert isinstance(caught.value, dp.SessionOptionError)
    message = str(caught.value)
    assert message.startswith("Session: virtual_gpus must be a count of logical GPUs")
    assert "Hint: virtual_gpus=4 gives /device:GPU:0..3 on one GPU" in message


def test_counts_and_mib_lists_are_normalised_from_numpy_and_julia_vectors():
    assert check_option("virtual_gpus", np.int64(4)) == 4
    assert check_option("virtual_gpus", [1024, np.int32(2048)]) == (1024, 2048)
    assert check_option("virtual_gpus", np.array([512, 512])) == (512, 512)  # a Julia Vector
    assert check_option("virtual_gpus", None) is None


def test_a_count_shares_the_memory_equally_and_a_list_is_used_as_given():
    assert memory_split(4, [81559]) == [[int(81559 * DEFAULT_SHARE) // 4] * 4]
    assert memory_split(2, [16384, 8192], share=0.5) == [[4096, 4096], [2048, 2048]]
    assert memory_split((1024, 3072), [16384, None]) == [[1024, 3072], [1024, 3072]]


def test_more_memory_than_the_gpu_has_is_refused_naming_the_gpu():
    with pytest.raises(dp.SessionOptionError, match=r"at most 8192 MiB in all, the memory of "):
        memory_split((4096, 4097), [16384, 8192])
    with pytest.raises(dp.SessionOptionError, match="the CUDA driver did not report"):
        memory_split(4, [None])


def test_the_config_tensorflow_receives_has_one_entry_per_gpu():
    proto = tf.ConfigProto(allow_soft_placement=True)
    set_virtual_gpus(proto, 4, totals=[16384])
    (device,) = proto.gpu_options.experimental.virtual_devices
    assert list(device.memory_limit_mb) == [int(16384 * DEFAULT_SHARE) // 4] * 4
    # gpu_memory_fraction is the share divided, then cleared (TensorFlow refuses both)
    proto = tf.ConfigProto()
    proto.gpu_options.per_process_gpu_memory_fraction = 0.5
    set_virtual_gpus(proto, 2, totals=[16384, 16384])
    assert [list(d.memory_limit_mb) for d in proto.gpu_options.experimental.virtual_devices] == [
        [4096, 4096],
        [4096, 4096],
    ]
    assert proto.gpu_options.per_process_gpu_memory_fraction == 0


@requires_no_gpu
@pytest.mark.filterwarnings("ignore::devplace.GpuMemoryOptionsWarning")  # an earlier session
def test_a_session_is_made_with_that_config():
    # TF's GPU build obeys it (the GPU tests below, in fresh processes); here it is ignored
    proto = tf.ConfigProto()
    set_virtual_gpus(proto, 2, totals=[16384])
    sess = dp.Session(config=proto)
    assert sess.config.gpu_options.experimental.virtual_devices == (
        proto.gpu_options.experimental.virtual_devices
    )
    assert sess.devices() == ["/device:CPU:0"]


def test_mib_with_a_memory_fraction_is_refused():
    proto = tf.ConfigProto()
    proto.gpu_options.per_process_gpu_memory_fraction = 0.4
    with pytest.raises(dp.SessionOptionError, match="a count when gpu_memory_fraction is given"):
        set_virtual_gpus(proto, (1024, 1024), totals=[16384])


def test_gpus_cannot_narrow_what_virtual_gpus_splits():
    with pytest.raises(dp.SessionOptionError, match="gpus must be left out with virtual_gpus"):
        dp.Session(gpus=0, virtual_gpus=2)


@requires_no_gpu
def test_without_a_gpu_it_is_an_error_saying_why():
    with pytest.raises(dp.NoGpuError) as caught:
        dp.Session(virtual_gpus=2)
    message = str(caught.value)
    assert "virtual_gpus=2 splits each GPU into logical GPUs, but TensorFlow sees no GPU" in message
    assert "\n  no GPU: " in message  # the reason: CPU-only build, no driver, ...
    assert "Hint: run on a machine with a GPU, or pass soft=True" in message


@requires_no_gpu
def test_without_a_gpu_soft_placement_warns_and_runs_on_the_cpu():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sess = dp.Session(virtual_gpus=[1024, 1024], soft=True, optimize=False)
    (warning,) = [w for w in caught if w.category is dp.NoGpuWarning]
    assert warning.filename == __file__  # points at the caller's line
    assert "Soft placement is on: ops pinned to /GPU:i run on the CPU" in str(warning.message)
    assert not sess.config.gpu_options.experimental.virtual_devices
    with dp.gpu(1):
        y = dp.sin(dp.constant(1.0), name="y")
    assert dp.placement(sess, y).actual("y") == "/device:CPU:0"


@requires_no_gpu
def test_devices_command_says_why_there_are_no_virtual_gpus(capsys):
    assert main(["devices", "--virtual-gpus", "4"]) == 1
    error = capsys.readouterr().err
    assert "devplace devices: error: Session: virtual_gpus=4 splits each GPU" in error
    assert "Hint: --virtual-gpus needs a GPU to split" in error  # not the Session's soft=True


def test_devices_command_refuses_a_malformed_request(capsys):
    with pytest.raises(SystemExit):
        main(["devices", "--virtual-gpus", "1024,x"])
    assert "expected a count like 4 or MiB per logical GPU like 2048,2048" in (
        capsys.readouterr().err
    )


@pytest.mark.slow
def test_a_later_different_request_warns_once_naming_both():
    # configs carrying virtual devices: TF's CPU build ignores them, a GPU build obeys; the
    # second asks for GPU:0 only, which the first created, so it works on both
    lines = run_python(
        """
        import warnings
        import devplace as dp

        def config(*sizes):  # one entry per GPU, as TensorFlow wants
            proto = dp.tf.ConfigProto()
            for _ in range(max(1, len(dp.tf.config.list_physical_devices("GPU")))):
                proto.gpu_options.experimental.virtual_devices.add(memory_limit_mb=sizes)
            return proto

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dp.Session(config=config(1024, 1024))  # fixes the process's logical GPUs
            dp.Session()  # asks for nothing: no warning
            dp.Session(config=config(1024, 1024))  # agrees: no warning
            dp.Session(config=config(512))
            dp.Session(config=config(512))  # the same again: no warning
        for w in caught:
            print(w.category.__name__, w.message)
        """
    )
    assert len(lines) == 1, lines
    assert lines[0].startswith("GpuMemoryOptionsWarning this Session asks for ")
    assert "asks for virtual_gpus=[512] MiB on physical GPU 0" in lines[0]
    assert "but the process already has virtual_gpus=[1024, 1024] MiB on physical GPU 0" in lines[0]
    assert "logical GPUs for the whole process at its first session" in lines[0]


# --- on a GPU: logical GPUs really exist, and each tower runs on its own ---------------------

LOGICAL_GPUS = """
    import json
    import warnings
    import devplace as dp

    warnings.simplefilter("ignore")
    sess = dp.Session(virtual_gpus={request!r})
    print(json.dumps([
        [d.name.split("device:")[-1], d.memory_limit_bytes]
        for d in sess.list_devices() if d.device_type == "GPU"
    ]))
"""


@requires_gpu
def test_a_mib_list_makes_logical_gpus_of_those_sizes_on_each_gpu():
    (line,) = run_python(LOGICAL_GPUS.format(request=[1024, 2048]))
    devices = json.loads(line)
    assert [name for name, _ in devices] == [f"GPU:{i}" for i in range(2 * len(GPUS))]
    for (_, first), (_, second) in zip(devices[::2], devices[1::2], strict=True):
        assert first == pytest.approx(1024 << 20, rel=0.05)
        assert second == pytest.approx(2048 << 20, rel=0.05)


@requires_gpu
def test_a_count_makes_that_many_equal_logical_gpus():
    (line,) = run_python(LOGICAL_GPUS.format(request=4))
    sizes = [size for _, size in json.loads(line)]
    assert len(sizes) == 4 * len(GPUS)
    assert max(sizes) == pytest.approx(min(sizes), rel=0.01)


@requires_gpu
def test_a_later_session_asking_for_other_virtual_gpus_is_warned():
    lines = run_python(
        """
        import warnings
        import devplace as dp

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dp.Session(virtual_gpus=[1024, 1024])
            dp.Session(virtual_gpus=[512])
        print(*(w.message for w in caught if w.category is dp.GpuMemoryOptionsWarning))
        """
    )
    assert "asks for virtual_gpus=[512] MiB on physical GPU 0" in lines[0]


TOWERS = """
    import json
    import devplace as dp

    tf = dp.tf
    towers = []
    for i in range(4):
        with dp.gpu(i), tf.name_scope(f"tower{{i}}"):
            a = tf.random.normal([256, 256], seed=i)
            towers.append(tf.reduce_sum(tf.matmul(a, a)))
    with dp.cpu(0):
        total = tf.add_n(towers)
    sess = dp.Session(virtual_gpus={request!r}, optimize=False)
    report = dp.placement(sess, total)
    print(json.dumps({{op.name: op.actual for op in report.ops}}))
"""


@requires_gpu
@pytest.mark.parametrize("request_", [4, [512, 512, 512, 512]])
def test_each_tower_runs_on_its_own_logical_gpu(request_):
    # from RunMetadata (dp.placement reads the partition graphs the runtime executed)
    (line,) = run_python(TOWERS.format(request=request_))
    actual = json.loads(line)
    for i in range(4):
        ran = {device for name, device in actual.items() if name.startswith(f"tower{i}/")}
        assert ran == {f"/device:GPU:{i}"}, (i, ran)
    assert actual["AddN"] == "/device:CPU:0"


@requires_gpu
def test_devices_command_lists_the_logical_gpus_with_their_memory():
    done = subprocess.run(
        [sys.executable, "-m", "devplace", "devices", "--virtual-gpus", "1024,2048", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    gpus = [row for row in json.loads(done.stdout) if row["type"] == "GPU"]
    assert [row["name"] for row in gpus] == [f"/device:GPU:{i}" for i in range(2 * len(GPUS))]
    assert [round(row["memory_bytes"] / 2**20, -2) for row in gpus[:2]] == [1000, 2000]
