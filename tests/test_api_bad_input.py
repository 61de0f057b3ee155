"""Bad input through the Python API: one table, each row a call that must fail clearly.

Every row asserts the error type (a devplace error that is also the built-in type callers
catch), that the message names the input, and that it says what to do next. Nothing here may
fail deep inside TensorFlow or be silently taken as something else (a truthy string).
"""

import importlib
import inspect
import math
import pkgutil

import pytest

import devplace as dp
from devplace.bridge.handles import UnknownHandleError
from devplace.core.atomic import FileWriteError

tf = dp.tf
HINT = ("Hint:", "expected e.g.")  # devplace's two ways of saying what a valid input is


def session(**options):
    return lambda: dp.Session(**options)


def no_op_argument():
    return "/cpu:0"


def two_arguments(op, other):
    return "/cpu:0"


def in_device_scope(fn):
    """Build one op inside `dp.device(fn)`."""

    def build():
        with dp.device(fn):
            dp.constant(1.0)

    return build


BAD_INPUT = [
    # Session options: types (a string is not a bool) ...
    ("soft='no'", session(soft="no"), TypeError, ("soft must be True or False", "'no'")),
    ("optimize='false'", session(optimize="false"), TypeError, ("optimize must be", "'false'")),
    (
        "per_session_threads='yes'",
        session(per_session_threads="yes"),
        TypeError,
        ("per_session_threads", "'yes'"),
    ),
    ("log_placement=[]", session(log_placement=[]), TypeError, ("log_placement must be", "got []")),
    (
        "allow_growth='yes'",
        session(allow_growth="yes"),
        TypeError,
        ("allow_growth must be", "'yes'"),
    ),
    ("inter=1.5", session(inter=1.5), TypeError, ("inter must be an integer", "1.5")),
    ("cpus=True", session(cpus=True), TypeError, ("cpus must be an integer", "got True")),
    ("timeout='soon'", session(timeout="soon"), TypeError, ("timeout must be", "'soon'")),
    (
        "config={}",
        session(config={"a": 1}),
        TypeError,
        ("config must be a tf.ConfigProto", "{'a': 1}"),
    ),
    ("graph=5", session(graph=5), TypeError, ("graph must be a tf.Graph", "got 5")),
    (
        "cpu=2 (misspelt)",
        session(cpu=2),
        TypeError,
        ("keyword must be one of cpus", "'cpu'", "did you mean cpus=2?"),
    ),
    # ... ranges ...
    (
        "inter=2**40",
        session(inter=2**40),
        ValueError,
        ("inter must be", "to 4096", "1099511627776"),
    ),
    ("cpus=2**31", session(cpus=2**31), ValueError, ("cpus must be", "to 1024", "2147483648")),
    ("cpus=-1", session(cpus=-1), ValueError, ("cpus must be", "got -1")),
    # No CPU device: TensorFlow would fail with "No CPU devices are available", no hint.
    (
        "cpus=0",
        session(cpus=0),
        ValueError,
        ("cpus must be an integer from 1", "needs a CPU device", "got 0"),
    ),
    (
        "Session(2, 'x')",
        lambda: dp.Session(2, "x"),
        TypeError,
        ("Session: its arguments must be keyword arguments", "(2, 'x')", "dp.Session(cpus=2"),
    ),
    ("timeout=NaN", session(timeout=math.nan), ValueError, ("timeout must be a finite", "nan")),
    ("timeout=Inf", session(timeout=math.inf), ValueError, ("timeout must be", "got inf")),
    ("timeout=0", session(timeout=0), ValueError, ("timeout must be", "greater than 0", "got 0")),
    (
        "gpu_memory_fraction=1.5",
        session(gpu_memory_fraction=1.5),
        ValueError,
        ("gpu_memory_fraction", "1.5"),
    ),
    # ... and targets, refused at once instead of failing in TF or after a timeout.
    ("target='grpc://'", session(target="grpc://"), ValueError, ("target must be", "'grpc://'")),
    ("target='local'", session(target="local"), ValueError, ("target must be", "'local'")),
    ("target='http://...'", session(target="http://h:1"), ValueError, ("target", "'http://h:1'")),
    ("target port 99999", session(target="grpc://127.0.0.1:99999"), ValueError, ("port", ":99999")),
    ("target=5", session(target=5), TypeError, ("target must be a string", "got 5")),
    (
        "ClusterSession timeout",
        lambda: dp.ClusterSession({"worker": ["localhost:2222"]}, timeout="soon"),
        TypeError,
        ("Session: timeout must be", "'soon'"),
    ),
    # Device strings and scopes.
    ("cpu(10**30)", lambda: dp.cpu(10**30), ValueError, f"/cpu:{10**30}"),
    ("gpu('0')", lambda: dp.gpu("0"), TypeError, ("gpu: i must be an integer", "'0'", "gpu(0)")),
    ("cpu('/cpu:1')", lambda: dp.cpu("/cpu:1"), TypeError, ("'/cpu:1'", "dp.device('/cpu:1')")),
    ("huge index", lambda: dp.canonical_device("/cpu:" + "9" * 40), ValueError, "9" * 40),
    ("long job", lambda: dp.canonical_device("/job:" + "a" * 10000), ValueError, "'/job:aaa"),
    ("' / '", lambda: dp.canonical_device(" / "), ValueError, "' / '"),
    ("'/'", lambda: dp.canonical_device("/"), ValueError, "'/'"),
    ("device(3)", lambda: dp.device(3).__enter__(), ValueError, "an int is not a device"),
    ("gpu:x scope", lambda: dp.device("/gpu:x").__enter__(), ValueError, "'/gpu:x'"),
    # Device functions.
    ("by_op_type('MatMul')", lambda: dp.by_op_type("MatMul"), TypeError, "'MatMul'"),
    ("by_op_type bad device", lambda: dp.by_op_type({"MatMul": "/gpu:x"}), ValueError, "/gpu:x"),
    ("round_robin([])", lambda: dp.round_robin([]), ValueError, "round_robin: devices"),
    ("assign_to_device", lambda: dp.assign_to_device("gpu0"), ValueError, "'gpu0'"),
    (
        "device function of no argument",
        in_device_scope(no_op_argument),
        TypeError,
        ("no_op_argument() takes no arguments", "a device function takes one argument, the op"),
    ),
    (
        "device function of two arguments",
        in_device_scope(two_arguments),
        TypeError,
        ("two_arguments(op, other) takes 2 arguments", "takes one argument, the op"),
    ),
    # Sessions where a session belongs.
    (
        "placement(None, c)",
        lambda: dp.placement(None, dp.constant(1.0)),
        TypeError,
        ("placement: sess must be a session", "got None", "sess = dp.Session()"),
    ),
    (
        "run_profile(sess='x')",
        lambda: dp.run_profile(sess="x", fetches=dp.constant(1.0)),
        TypeError,
        ("run_profile: sess must be a session", "got 'x'", "run_profile(sess, fetches)"),
    ),
    (
        "run('x', c)",
        lambda: dp.run("x", dp.constant(1.0)),
        TypeError,
        ("run: sess must be a session", "got 'x'"),
    ),
    ("init(None)", lambda: dp.init(None), TypeError, ("init: sess must be a session", "got None")),
    (
        "run_profile repeat=0",
        lambda: dp.run_profile(dp.Session(), dp.constant(1.0), repeat=0),
        ValueError,
        ("run_profile: repeat must be a positive integer", "got 0"),
    ),
    # Gradients, layers, logs.
    (
        "colocate='yes'",
        lambda: dp.gradients(dp.constant(1.0), dp.constant(2.0), colocate="yes"),
        TypeError,
        "colocate must be True or False, got 'yes'",
    ),
    (
        "bn momentum",
        lambda: dp.bn(dp.placeholder(tf.float32, [None, 2]), momentum=2.0),
        ValueError,
        "momentum must be in [0, 1), got 2.0",
    ),
    ("bn on a scalar", lambda: dp.bn(1.0), ValueError, "batch_norm: x must be"),
    ("placement_log", lambda: dp.placement_log(dp.Session()), ValueError, "log_placement=True"),
]


@pytest.mark.parametrize(
    ("call", "error", "named"), [row[1:] for row in BAD_INPUT], ids=[row[0] for row in BAD_INPUT]
)
def test_bad_input_fails_at_once_with_a_message_naming_it_and_a_hint(call, error, named):
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, dp.Error)
    message = str(info.value)
    for fragment in (named,) if isinstance(named, str) else named:
        assert fragment in message
    assert any(hint in message for hint in HINT), message
    assert len(message) < 1000  # a message, not a dump of the input


def test_a_bad_device_function_result_names_the_function_and_the_op():
    def to_symbol(op):
        return 3

    with pytest.raises(dp.DeviceSpecError, match=r"to_symbol returned it for op 'c'") as info:
        with dp.device(to_symbol):
            dp.constant(1.0, name="c")
    assert "expected e.g." in str(info.value)


def test_every_devplace_exception_is_a_devplace_error():
    # `except dp.Error` catches whatever devplace raises, and every warning it issues is a
    # dp.DevplaceWarning; private control-flow exceptions aside. Each keeps the built-in type
    # callers catch (FileWriteError: OSError).
    stray = []
    for module in pkgutil.walk_packages(dp.__path__, "devplace."):
        if module.name.rsplit(".", 1)[-1] == "__main__":
            continue  # running it is what importing it does
        loaded = importlib.import_module(module.name)
        for name, value in vars(loaded).items():
            if (
                inspect.isclass(value)
                and value.__module__ == loaded.__name__
                and issubclass(value, Exception)
                and not name.startswith("_")
                and not issubclass(
                    value, dp.DevplaceWarning if issubclass(value, Warning) else dp.Error
                )
            ):
                stray.append(f"{module.name}.{name}")
    assert stray == []
    assert not issubclass(dp.NoGpuWarning, dp.Error)  # a warning is not an error to catch
    assert issubclass(FileWriteError, OSError) and issubclass(UnknownHandleError, KeyError)
