"""Device strings: every form TF accepts, canonical output, and clear errors."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import devplace as dp


@pytest.mark.parametrize(
    ("spec", "canonical"),
    [
        ("/cpu:0", "/device:CPU:0"),
        ("/CPU:0", "/device:CPU:0"),
        ("/GPU:1", "/device:GPU:1"),
        ("/gpu:1", "/device:GPU:1"),
        ("/device:GPU:0", "/device:GPU:0"),
        ("/device:gpu:0", "/device:GPU:0"),
        ("cpu:0", "/device:CPU:0"),
        ("/device:CPU:*", "/device:CPU:*"),
        ("/job:ps/task:0/cpu:0", "/job:ps/task:0/device:CPU:0"),
        ("/job:worker/replica:0/task:1/device:GPU:0", "/job:worker/replica:0/task:1/device:GPU:0"),
        ("/job:ps", "/job:ps"),
        ("/task:3", "/task:3"),
        ("", ""),
        ("/tpu:0", "/device:TPU:0"),
    ],
)
def test_canonical_forms_match_tensorflow(spec, canonical):
    assert dp.canonical_device(spec) == canonical
    # Where TF's own parser agrees on the meaning, the strings are identical.
    assert dp.tf.DeviceSpec.from_string(canonical).to_string() == canonical


def test_device_spec_objects_are_accepted():
    spec = dp.tf.DeviceSpec(job="ps", task=1, device_type="GPU", device_index=0)
    assert dp.canonical_device(spec) == "/job:ps/task:1/device:GPU:0"
    assert dp.parse_device(spec).task == 1


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("/gpu:x", "index must be a non-negative integer"),
        ("/gpu:-1", "index must be a non-negative integer"),
        ("/foo", "cannot read the part 'foo'"),
        ("/device:GPU", "cannot read the part 'device:GPU'"),
        ("/job:a/job:b", "'job' is given twice"),
        ("/CPU:0/GPU:1", "given twice"),
        ("/job:1x", "not an identifier"),
        ("/task:one", "task must be a non-negative integer"),
        ("/cpu:0//gpu", "cannot read the part ''"),
    ],
)
def test_malformed_strings_raise_device_spec_error_quoting_input(spec, fragment):
    with pytest.raises(dp.DeviceSpecError) as info:
        dp.canonical_device(spec)
    message = str(info.value)
    assert repr(spec) in message
    assert fragment in message
    assert "expected e.g." in message  # the hint
    assert isinstance(info.value, ValueError)


def test_non_strings_are_rejected_by_type_name():
    with pytest.raises(dp.DeviceSpecError, match="a int is not a device string"):
        dp.canonical_device(3)


def test_merge_follows_nesting_rules():
    outer = dp.parse_device("/job:worker/device:GPU:0")
    assert str(outer.merge(dp.parse_device("/device:CPU:1"))) == "/job:worker/device:CPU:1"
    assert str(outer.merge(dp.parse_device("/job:ps"))) == "/job:ps/device:GPU:0"


devices = st.builds(
    dp.Device,
    job=st.none() | st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True),
    replica=st.none() | st.integers(0, 100),
    task=st.none() | st.integers(0, 100),
    device_type=st.none() | st.sampled_from(["CPU", "GPU", "TPU", "XLA_CPU"]),
    device_index=st.none() | st.integers(0, 64),
).filter(lambda d: d.device_type is not None or d.device_index is None)


@given(devices)
def test_round_trip(device):
    assert dp.parse_device(device.to_string()) == device
    assert dp.canonical_device(device.to_string()) == device.to_string()


@given(devices)
def test_tensorflow_reads_our_canonical_strings_the_same(device):
    ours = device.to_string()
    assert dp.tf.DeviceSpec.from_string(ours).to_string() == ours


@given(st.text(max_size=40))
def test_arbitrary_text_parses_or_raises_device_spec_error(text):
    try:
        result = dp.canonical_device(text)
    except dp.DeviceSpecError as err:
        assert repr(text) in str(err)
    else:
        assert dp.canonical_device(result) == result
