"""Device strings: every form TF accepts, canonical output, TF's merge rule, and clear errors.

Parse and merge are checked against TensorFlow's own `DeviceSpec` and against what a real
nested `tf.device` writes into `op.device`.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import devplace as dp
from devplace.adapter.devices import (
    MAX_INDEX,
    MAX_SPEC_LENGTH,
    matches,
    runtime_device,
    short_device,
    split_lane,
)


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
        (f"/cpu:{MAX_INDEX}", f"/device:CPU:{MAX_INDEX}"),
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
        (" / ", "contain no spaces"),
        ("/cpu:0 ", "contain no spaces"),
        ("/", "names no device"),
        ("/cpu:" + "9" * 40, f"above the maximum {MAX_INDEX}"),
        (f"/task:{MAX_INDEX + 1}", f"task '{MAX_INDEX + 1}' is above the maximum {MAX_INDEX}"),
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
    assert isinstance(info.value, dp.Error)


def test_overlong_specs_are_refused_with_the_limit_and_a_shortened_quote():
    spec = "/job:" + "a" * 10000
    with pytest.raises(dp.DeviceSpecError) as info:
        dp.canonical_device(spec)
    message = str(info.value)
    assert f"longer than the maximum of {MAX_SPEC_LENGTH} characters" in message
    assert "'/job:aaaa" in message and "(10005 characters)" in message
    assert len(message) < 400


def test_non_strings_are_rejected_by_type_name():
    with pytest.raises(dp.DeviceSpecError, match="an int is not a device string"):
        dp.canonical_device(3)


def test_merge_follows_tensorflows_nesting_rule():
    outer = dp.parse_device("/job:worker/device:GPU:0")
    assert str(outer.merge(dp.parse_device("/device:CPU:1"))) == "/job:worker/device:CPU:1"
    assert str(outer.merge(dp.parse_device("/device:CPU:*"))) == "/job:worker/device:CPU:0"
    assert str(outer.merge(dp.parse_device("/job:ps"))) == "/job:ps/device:GPU:0"


@pytest.mark.parametrize(
    ("name", "device", "lane"),
    [
        ("/job:localhost/replica:0/task:0/device:CPU:0", "/device:CPU:0", ""),
        ("/job:localhost/replica:0/task:0/device:GPU:0/stream:13", "/device:GPU:0", "stream:13"),
        ("/device:GPU:0/stream:14<MemcpyH2D>", "/device:GPU:0", "stream:14<MemcpyH2D>"),
        ("/device:GPU:0/memcpy", "/device:GPU:0", "memcpy"),
        (
            "/job:worker/replica:0/task:1/device:CPU:0",
            "/job:worker/replica:0/task:1/device:CPU:0",
            "",
        ),
        ("/cpu:1", "/device:CPU:1", ""),
        ("", "", ""),
    ],
)
def test_runtime_names_split_into_short_device_and_lane(name, device, lane):
    assert split_lane(name) == (device, lane)
    assert short_device(name) == (f"{device}/{lane}" if lane else device)


def test_runtime_and_short_names_convert_both_ways():
    assert runtime_device("/cpu:1") == "/job:localhost/replica:0/task:0/device:CPU:1"
    assert runtime_device("/job:ps/task:2/gpu:0") == "/job:ps/replica:0/task:2/device:GPU:0"
    assert short_device(runtime_device("/gpu:3")) == "/device:GPU:3"
    with pytest.raises(dp.DeviceSpecError, match="needs a device type and index"):
        runtime_device("/device:CPU:*")


@pytest.mark.parametrize(
    ("spec", "device", "expected"),
    [
        ("/gpu:0", "/job:localhost/replica:0/task:0/device:GPU:0", True),
        ("/device:CPU:*", "/device:CPU:3", True),
        ("/cpu:0", "/device:CPU:1", False),
        ("/job:localhost/cpu:0", "/device:CPU:0", True),
        ("/job:ps/cpu:0", "/device:CPU:0", False),
        ("/job:ps", "/job:ps/replica:0/task:0/device:GPU:1", True),
        ("/task:1", "/job:ps/replica:0/task:0/device:CPU:0", False),
        ("", "/device:GPU:0", True),
    ],
)
def test_a_partial_spec_matches_the_devices_that_agree_on_every_field_it_names(
    spec, device, expected
):
    assert matches(spec, device) is expected


def test_session_device_names_match_their_own_short_names():
    with dp.Session(cpus=2) as sess:
        for d in sess.list_devices():
            assert matches(short_device(d.name), d.name)
            assert runtime_device(short_device(d.name)) == d.name


devices = st.builds(
    lambda job, replica, task, kind, index: dp.Device(
        job, replica, task, kind, None if kind is None else index
    ),
    job=st.none() | st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True),
    replica=st.none() | st.integers(0, 100),
    task=st.none() | st.integers(0, 100),
    kind=st.none() | st.sampled_from(["CPU", "GPU", "TPU", "XLA_CPU"]),
    index=st.none() | st.integers(0, 64),
)


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"task": -1}, "task must be an integer from 0"),
        ({"replica": True}, "replica must be an integer"),
        ({"device_type": "GPU", "device_index": MAX_INDEX + 1}, "device_index must be"),
        ({"job": "a/b"}, "job name 'a/b' is not an identifier"),
        ({"device_index": 0}, "a device index needs a device type"),
        ({"device_type": "gpu", "device_index": 0}, "device type 'gpu' is not like CPU"),
    ],
)
def test_a_device_built_from_fields_is_checked_like_a_parsed_one(fields, problem):
    with pytest.raises(dp.DeviceSpecError, match=problem):
        dp.Device(**fields)


@st.composite
def written_forms(draw):
    """A device and one of the ways a user may write it (short or long, any case of type)."""
    device = draw(devices)
    parts = [str(dp.Device(device.job, device.replica, device.task))]
    if device.device_type is not None:
        kind = draw(st.sampled_from([str.lower, str.upper]))(device.device_type)
        index = "*" if device.device_index is None else device.device_index
        # TF reads the short form only for the types it knows (not XLA_CPU).
        short_ok = device.device_index is not None and device.device_type in ("CPU", "GPU", "TPU")
        long = not short_ok or draw(st.booleans())
        parts.append(f"/device:{kind}:{index}" if long else f"/{kind}:{index}")
    return device, "".join(parts)


def _tf_fields(spec):
    # TF upper-cases only cpu and gpu; the runtime's type names are upper case, so are ours.
    kind = spec.device_type and spec.device_type.upper()
    return (spec.job, spec.replica, spec.task, kind, spec.device_index)


@given(written_forms())
def test_parse_agrees_with_tensorflows_device_spec(form):
    device, text = form
    ours = dp.parse_device(text)
    assert ours == device
    theirs = dp.tf.DeviceSpec.from_string(text)
    assert (ours.job, ours.replica, ours.task, ours.device_type, ours.device_index) == (
        _tf_fields(theirs)
    )
    assert dp.canonical_device(text) == dp.tf.DeviceSpec(*_tf_fields(theirs)).to_string()


@given(devices)
def test_round_trip(device):
    assert dp.parse_device(device.to_string()) == device
    assert dp.canonical_device(device.to_string()) == device.to_string()


@given(devices, devices)
def test_merge_equals_tensorflows_make_merged_spec(outer, inner):
    theirs = dp.tf.DeviceSpec.from_string(str(outer)).make_merged_spec(
        dp.tf.DeviceSpec.from_string(str(inner))
    )
    assert str(outer.merge(inner)) == theirs.to_string()


@given(devices, devices)
def test_merge_equals_what_nested_tf_device_scopes_write(outer, inner):
    with dp.tf.Graph().as_default():
        with dp.tf.device(str(outer)), dp.tf.device(str(inner)):
            op = dp.constant(1.0).op
    assert str(outer.merge(inner)) == op.device


@given(st.text(max_size=40))
def test_arbitrary_text_parses_or_raises_device_spec_error(text):
    try:
        result = dp.canonical_device(text)
    except dp.DeviceSpecError as err:
        assert repr(text) in str(err)
    else:
        assert dp.canonical_device(result) == result


@pytest.mark.parametrize(
    "spec", ["/job:ps/task:0", "/job:worker/replica:0/task:1/device:GPU:0", "/cpu:1", "/GPU:*"]
)
def test_device_reads_a_device_string_given_alone(spec):
    assert dp.Device(spec) == dp.parse_device(spec)
    assert str(dp.Device(spec)) == dp.canonical_device(spec)


def test_device_string_beside_fields_is_refused_saying_how_to_pass_it():
    with pytest.raises(dp.DeviceSpecError, match="device string is read when it is Device's only"):
        dp.Device("/job:ps", task=1)
    with pytest.raises(dp.DeviceSpecError, match="cannot read the part"):
        dp.Device("/job:ps/bogus")
