"""What Julia is sent of a Python exception (`devplace.bridge.error_text`): short, with a hint
where devplace knows the cause, the full text kept for `DevPlace.last_error()`."""

import json
import re

import pytest

import devplace as dp
from devplace.bridge import error_text

FRAME = re.compile(r'File "([^"]+)"')
THIS_FILE = __file__


def raised(f):
    try:
        f()
    except Exception as exc:  # noqa: BLE001 - the exception is the subject
        return exc
    raise AssertionError("no exception")


def frames(text):
    return FRAME.findall(text)


def test_an_uninitialized_variable_is_short_with_the_init_hint_and_the_full_text_kept():
    y = dp.sin(dp.Variable(1.0))
    kind, message, traceback = error_text.describe(raised(lambda: dp.run(dp.Session(), y)))
    assert kind == "tensorflow.python.framework.errors_impl.FailedPreconditionError"
    assert "Attempting to use uninitialized value Variable" in message
    assert "Hint: init(sess)" in message and "DevPlace.last_error()" in message
    # only the frames outside devplace and TensorFlow stay (here: this test's, the "user's")
    shown = frames(message + traceback)
    assert THIS_FILE in shown
    assert not [f for f in shown if "/tensorflow/" in f or "/python/devplace/" in f]
    assert "Original stack trace for 'Variable/read':" in message  # its frames are this file's
    full = error_text.last_text()
    assert full.startswith(f"{kind}: ") and "Hint" not in full
    assert any("/tensorflow/" in f for f in frames(full))
    assert any("/devplace/adapter/session.py" in f for f in frames(full))


def test_listings_left_without_frames_lose_their_heading():
    text = (
        "Graph execution error:\n\nDetected at node 'x' defined at (most recent call last):\n"
        "    File \"/lib/tensorflow/ops.py\", line 3, in f\nNode: 'x'\nbroken\n\n"
        "Original stack trace for 'x':\n"
        '  File "/lib/tensorflow/ops.py", line 3, in f\n'
    )
    short = error_text._short_message(text, ("/lib/tensorflow/",))
    assert short == "Graph execution error:\n\nNode: 'x'\nbroken"


def test_an_op_on_a_missing_device_hints_soft_placement():
    with dp.cpu(5):
        x = dp.constant(1.0)
    exc = raised(lambda: dp.run(dp.Session(cpus=2), x))
    kind, message, _ = error_text.describe(exc)
    assert kind == "devplace.adapter.session.DevicePlacementError"
    assert message.startswith(str(exc).splitlines()[0])
    assert "Hint: Session(soft=true)" in message


def test_errors_outside_devplace_keep_their_frames_and_need_no_pointer():
    kind, message, traceback = error_text.describe(raised(lambda: json.loads("{x")))
    assert kind == "json.decoder.JSONDecodeError" and message.startswith("Expecting property")
    assert any(f.endswith("json/decoder.py") for f in frames(traceback))
    assert "last_error" not in message  # nothing was left out
    assert error_text.describe(KeyError("missing"))[1] == "missing"
    assert error_text.describe(KeyboardInterrupt())[1] == "interrupted (Ctrl-C)"


def test_devplace_debug_sends_the_full_text(monkeypatch):
    monkeypatch.setenv("DEVPLACE_DEBUG", "1")
    y = dp.sin(dp.Variable(1.0))
    _, message, traceback = error_text.describe(raised(lambda: dp.run(dp.Session(), y)))
    assert "Hint" not in message and "last_error" not in message
    assert any("/tensorflow/" in f for f in frames(message))
    assert any("/devplace/adapter/session.py" in f for f in frames(traceback))
    assert error_text.last_text().startswith("tensorflow.python.framework")


@pytest.mark.parametrize("debug", ["", "0"])
def test_debug_off_values(monkeypatch, debug):
    monkeypatch.setenv("DEVPLACE_DEBUG", debug)
    assert not error_text._debug()


def test_a_line_left_twice_in_a_row_by_the_listings_cut_shows_once():
    listing = (
        "Detected at node 'Variable/read' defined at (most recent call last):\n"
        '    File "/lib/tensorflow/ops.py", line 3, in f\n'
        "Node: 'Variable/read'\n"
    )
    text = f"Graph execution error:\n\n{listing}{listing}Attempting to use uninitialized value"
    short = error_text._short_message(text, ("/lib/tensorflow/",))
    assert short == (
        "Graph execution error:\n\nNode: 'Variable/read'\nAttempting to use uninitialized value"
    )


def test_a_device_scope_refusing_a_malformed_device_shows_no_contextlib_frame():
    def enter():
        with dp.device("nonsense"):  # a generator-based context manager
            pass

    kind, message, traceback = error_text.describe(raised(enter))
    assert "malformed device 'nonsense'" in message
    assert "contextlib" not in message + traceback
    assert THIS_FILE in frames(traceback)  # the user's own frame stays
