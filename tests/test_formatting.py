"""How devplace writes numbers for people: one format per kind of number, in every view."""

import pytest

import devplace as dp
from devplace.bridge.julia_semantics import summary
from devplace.core.formatting import (
    article,
    byte_count,
    fetched_line,
    format_bytes,
    format_time,
    plural,
)
from devplace.facts.trace import Fetch


def test_counts_take_their_noun_in_the_singular_only_for_one():
    assert [plural(n, "op") for n in (0, 1, 2)] == ["0 ops", "1 op", "2 ops"]
    assert plural(1, "memory copy", "memory copies") == "1 memory copy"
    assert plural(3, "memory copy", "memory copies") == "3 memory copies"


def test_a_type_name_takes_the_article_its_first_letter_asks_for():
    assert [article(t) for t in ("int", "float", "str", "Operation")] == [
        "an int",
        "a float",
        "a str",
        "an Operation",
    ]


def test_durations_read_in_one_unit_by_size():
    assert format_time(950) == "950 µs"
    assert format_time(1900) == "1,900 µs"  # as explain() writes its sums: digits grouped
    assert format_time(-300) == "-300 µs"
    assert format_time(-20_000) == "-20 ms"  # a negative gap takes its size's unit
    assert format_time(12_345) == "12.3 ms"
    assert format_time(2_500_000) == "2.5 s"


def test_byte_counts_and_the_fetch_line():
    assert [format_bytes(n) for n in (None, 4, 10_000, 3 * 2**20)] == [
        "?",
        "4 B",
        "9.8 KiB",
        "3.0 MiB",
    ]
    assert [byte_count(n) for n in (1, 4, 8192.0)] == ["1 byte", "4 bytes", "8,192 bytes"]
    one = [Fetch("y:0", "/device:CPU:0", 1)]
    assert fetched_line(one) == "fetched to the client: 1 tensor, 1 byte, from /device:CPU:0"
    two = [*one, Fetch("z:0", "/device:CPU:1", 8)]
    assert fetched_line(two) == (
        "fetched to the client: 2 tensors, 9 bytes, from /device:CPU:0 (1), /device:CPU:1 (1)"
    )


def test_a_bad_argument_names_its_type_with_the_right_article():
    with pytest.raises(TypeError, match=r"soft must be .*, got 1 \(an int\)"):
        dp.Session(soft=1)
    with pytest.raises(dp.Error, match=r"an int is not a device string"):
        dp.canonical_device(5)


def test_julias_one_line_summaries_count_in_the_singular_for_one():
    report = dp.placement(dp.Session(), dp.constant(1.0, name="one"))
    (device,) = report.devices
    assert summary(report) == f"PlacementReport(1 op on {device}, 0 transfers, 0 bytes)"
