"""Properties of the value codec: round trips, and malformed bytes fail with DecodeError only."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from bridge_vectors import same
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from devplace.bridge.wire import DTYPE_CODES, MAX_DEPTH, DecodeError, Handle, decode, encode_bytes

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary()
    | st.builds(Handle, st.integers(min_value=0, max_value=2**64 - 1))
)
arrays = st.sampled_from(sorted(DTYPE_CODES)).flatmap(
    lambda code: hnp.arrays(
        DTYPE_CODES[code],
        hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=4),
        elements=None if DTYPE_CODES[code].kind != "f" else {"allow_nan": False},
    )
)
values = st.recursive(
    scalars | arrays,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(st.text(max_size=5) | st.integers(-(2**63), 2**63 - 1), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_round_trip(value: Any) -> None:
    assert same(decode(encode_bytes(value)), value)


@settings(max_examples=300, deadline=None)
@given(values, st.data())
def test_truncated_encoding_is_a_decode_error(value: Any, data: st.DataObject) -> None:
    encoded = encode_bytes(value)
    cut = data.draw(st.integers(min_value=0, max_value=len(encoded) - 1))
    with pytest.raises(DecodeError):
        decode(encoded[:cut])


@settings(max_examples=1000, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_decode_or_fail_cleanly(data: bytes) -> None:
    try:
        decode(data)
    except DecodeError:
        pass


def test_arrays_are_column_major_on_the_wire() -> None:
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int64)
    data = encode_bytes(a)
    assert np.frombuffer(data[-48:], dtype="<i8").tolist() == [1, 4, 2, 5, 3, 6]
    assert same(decode(encode_bytes(np.asfortranarray(a))), a)
    assert same(decode(encode_bytes(a[:, ::2])), a[:, ::2])  # non-contiguous views


def test_deep_nesting_is_refused_both_ways() -> None:
    deep: Any = 1
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(ValueError, match="nested deeper"):
        encode_bytes(deep)
    forged = bytes.fromhex("0601000000") * (MAX_DEPTH + 5) + bytes([0])
    with pytest.raises(DecodeError, match="nested deeper"):
        decode(forged)


def test_forged_sizes_do_not_allocate() -> None:
    with pytest.raises(DecodeError, match="exceeds the frame"):
        decode(bytes.fromhex("0b0c01") + (2**40).to_bytes(8, "little"))
    with pytest.raises(DecodeError, match="claims"):
        decode(bytes.fromhex("06ffffffff"))


def test_unknown_tag_and_dtype_are_named() -> None:
    with pytest.raises(DecodeError, match="tag 0x7f"):
        decode(b"\x7f")
    with pytest.raises(DecodeError, match="dtype code 99"):
        decode(b"\x0a\x63")
