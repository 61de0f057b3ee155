"""TF's `_SOURCE` event is no op, but its numbers are checked like every other event's: a trace
whose `_SOURCE` has a negative or non-finite duration or time is refused (docs/profiles.md)."""

import json

import pytest
from trace_builders import hand_trace

from devplace.facts.trace import TraceError, read_trace

SOURCE = 5  # hand_trace()'s traceEvents index of `_SOURCE`


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("dur", -1, "traceEvents[5].dur is -1, expected a number of µs from 0"),
        ("dur", float("inf"), "traceEvents[5].dur is inf"),
        ("dur", float("nan"), "traceEvents[5].dur is nan"),
        ("ts", float("nan"), "traceEvents[5].ts is nan"),
    ],
)
def test_a_bad_source_event_is_refused_like_any_other(tmp_path, field, value, problem):
    data = hand_trace()
    assert data["traceEvents"][SOURCE]["args"]["name"] == "_SOURCE"
    data["traceEvents"][SOURCE][field] = value
    path = tmp_path / "source.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TraceError, match="profile trace") as err:
        read_trace(path)
    assert problem in str(err.value)


def test_a_good_source_event_is_read_and_is_no_op(tmp_path):
    path = tmp_path / "good.json"
    path.write_text(json.dumps(hand_trace()))
    assert "_SOURCE" not in {o.name for o in read_trace(path).ops}
