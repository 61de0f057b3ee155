"""Device scopes belong to the Python thread that opened them (issue 16.1).

Two threads build ops into one graph with their scopes open at the same time and left in
interleaved order; each thread's ops land on its own scope's device, and nothing is left behind.
Every wait is bounded.
"""

import threading

import devplace as dp

WAIT = 30  # seconds; a barrier that times out fails the test instead of hanging it


def run_threads(*targets):
    """Run each target in its own thread; re-raise the first error any of them hit."""
    errors = []

    def guarded(target):
        try:
            target()
        except BaseException as err:  # noqa: BLE001 - handed to the test thread
            errors.append(err)

    threads = [threading.Thread(target=guarded, args=(t,)) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive(), "a builder thread did not finish"
    if errors:
        raise errors[0]


def test_interleaved_scopes_in_two_threads_place_each_threads_ops_on_its_own_device(
    fresh_graph,
):
    both_inside = threading.Barrier(2, timeout=WAIT)
    first_left = threading.Event()
    built = {}

    def first():
        with fresh_graph.as_default():
            with dp.cpu(1):
                both_inside.wait()
                built["first"] = dp.constant(1.0, name="first")
            first_left.set()  # leaves while the second thread is still inside its scope

    def second():
        with fresh_graph.as_default():
            with dp.gpu(0):
                both_inside.wait()
                assert first_left.wait(WAIT)
                built["second"] = dp.constant(2.0, name="second")
                with dp.device("/job:worker"):
                    built["nested"] = dp.constant(3.0, name="nested")

    run_threads(first, second)
    assert built["first"].device == "/device:CPU:1"
    assert built["second"].device == "/device:GPU:0"
    assert built["nested"].device == "/job:worker/device:GPU:0"
    after = dp.constant(4.0, name="after")
    assert after.device == ""


def test_a_new_thread_starts_outside_the_scopes_of_the_thread_that_started_it(fresh_graph):
    built = {}

    def child():
        with fresh_graph.as_default():
            built["child"] = dp.constant(1.0, name="child")

    with dp.cpu(1):
        run_threads(child)
        mine = dp.constant(2.0, name="mine")
    assert built["child"].device == ""
    assert mine.device == "/device:CPU:1"


def test_many_threads_each_in_its_own_scope_build_and_run_correctly(fresh_graph):
    count = 4
    barrier = threading.Barrier(count, timeout=WAIT)
    built = {}

    def builder(i):
        def build():
            with fresh_graph.as_default():
                with dp.cpu(i):
                    barrier.wait()
                    x = dp.constant(float(i), name=f"x{i}")
                    barrier.wait()
                    built[i] = dp.multiply(x, 2.0, name=f"y{i}")

        return build

    run_threads(*(builder(i) for i in range(count)))
    sess = dp.Session(cpus=count, optimize=False)
    fetches = [built[i] for i in range(count)]
    report = dp.placement(sess, fetches)
    for i in range(count):
        assert report.actual(f"x{i}") == report.actual(f"y{i}") == f"/device:CPU:{i}"
    assert dp.run(sess, fetches) == [2.0 * i for i in range(count)]


def test_plain_tf_scopes_open_before_the_first_devplace_scope_do_not_leak_to_new_threads(
    fresh_graph,
):
    with dp.tf.device("/cpu:1"), dp.tf.control_dependencies([dp.constant(0.0, name="dep")]):
        with dp.cpu(2):
            inside = dp.constant(1.0, name="inside")
    built = {}

    def child():
        with fresh_graph.as_default():
            built["child"] = dp.constant(2.0, name="child")
            with dp.cpu(3):
                built["scoped"] = dp.constant(3.0, name="scoped")

    run_threads(child)
    assert inside.device == "/device:CPU:2"
    assert built["child"].device == "" and not built["child"].op.control_inputs
    assert built["scoped"].device == "/device:CPU:3"
