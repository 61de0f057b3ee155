"""TF1 programs run whole through `tf = dp.tf`: `tf.layers` and `tf.nn.rnn_cell` (tf_keras's TF1
layers and cells) build, train and place as in TensorFlow 1; batch-norm updates land in
UPDATE_OPS and run on the CPU; removed modules say what replaced them; `tf.keras` stays Keras 3."""

import subprocess
import sys

import numpy as np
import pytest
from conftest import GPUS

import devplace as dp

pytestmark = pytest.mark.filterwarnings("ignore:`tf.*` is deprecated:UserWarning")

tf = dp.tf

#: Where the seeds put the model: the GPU when there is one, else a second logical CPU.
MODEL_DEVICE = GPUS[0] if GPUS else "/device:CPU:1"


@pytest.fixture(autouse=True)
def full_float32_precision():
    """Float32 products at full precision: on Ampere and later GPUs TensorFlow multiplies in
    TensorFloat-32 by default (about 1e-3 relative error, seen on an H200), which the numpy
    comparisons here are not about."""
    before = tf.config.experimental.tensor_float_32_execution_enabled()
    tf.config.experimental.enable_tensor_float_32_execution(False)
    yield
    tf.config.experimental.enable_tensor_float_32_execution(before)


def classification_data(rows: int = 256, features: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Two Gaussian blobs, labels 0 and 1."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, rows)
    x = rng.normal(0.0, 1.0, (rows, features)) + labels[:, None] * 1.5
    return x.astype(np.float32), labels.astype(np.int64)


def build_mlp() -> dict:
    """The book's multilayer network: dense, batch norm, dropout, ELU, a softmax output."""
    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [None, 10], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    training = tf.placeholder_with_default(False, [], name="training")
    with dp.device(dp.assign_to_device(MODEL_DEVICE)):
        hidden = tf.layers.dense(x, 32, name="hidden1")
        hidden = tf.layers.batch_normalization(hidden, training=training, momentum=0.9)
        hidden = tf.layers.dropout(tf.nn.elu(hidden), 0.1, training=training)
        logits = tf.layers.dense(hidden, 2, name="outputs")
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        )
    with dp.cpu(0):
        update_ops = dp.get_collection(tf.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(update_ops):
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return {"x": x, "y": y, "training": training, "loss": loss, "train": train}


def test_multilayer_network_with_batch_norm_trains_and_updates_run_on_the_cpu():
    net = build_mlp()
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == dp.get_collection(dp.UPDATE_OPS)
    assert len(dp.get_collection(dp.UPDATE_OPS)) == 2  # moving mean and moving variance
    xs, ys = classification_data()
    feed = {net["x"]: xs, net["y"]: ys}
    sess = dp.Session(cpus=2, soft=True, optimize=False)  # ops as built, none fused
    dp.init(sess)
    moving_mean = next(v for v in tf.global_variables() if "moving_mean" in v.name)
    before = dp.run(sess, net["loss"], feed)
    for _ in range(60):
        dp.run(sess, net["train"], {**feed, net["training"]: True})
    after = dp.run(sess, net["loss"], feed)
    assert after < 0.5 * before
    assert np.abs(dp.run(sess, moving_mean)).max() > 0.1  # the updates ran with each step

    report = dp.placement(sess, net["train"], {**feed, net["training"]: True})
    # The moving-average arithmetic; its Switch only forwards the batch's moments from the model.
    updates = [p for p in report.ops if "/AssignMovingAvg" in p.name and p.op_type != "Switch"]
    assert sum(p.op_type == "AssignSub" for p in updates) == 2, [p.name for p in report.ops]
    assert {p.actual for p in updates} == {"/device:CPU:0"}
    assert report.actual("hidden1/MatMul") == MODEL_DEVICE


def test_lstm_with_dynamic_rnn_trains():
    tf.set_random_seed(0)
    steps, inputs, units = 5, 3, 16
    x = tf.placeholder(tf.float32, [None, steps, inputs])
    target = tf.placeholder(tf.float32, [None, 1])
    cell = tf.nn.rnn_cell.BasicLSTMCell(num_units=units)
    outputs, states = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    prediction = tf.layers.dense(states.h, 1)
    loss = tf.reduce_mean(tf.square(prediction - target))
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    rng = np.random.default_rng(1)
    xs = rng.normal(size=(128, steps, inputs)).astype(np.float32)
    ys = xs.sum(axis=(1, 2))[:, None].astype(np.float32) / 4
    sess = dp.Session()
    dp.init(sess)
    before = dp.run(sess, loss, {x: xs, target: ys})
    for _ in range(80):
        dp.run(sess, train, {x: xs, target: ys})
    assert dp.run(sess, loss, {x: xs, target: ys}) < 0.5 * before
    assert outputs.shape.as_list() == [None, steps, units]


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _basic_rnn_step(w: dict, scope: str, x: np.ndarray, h: np.ndarray) -> np.ndarray:
    """BasicRNNCell: h' = tanh([x, h] W + b)."""
    return np.tanh(np.concatenate([x, h], 1) @ w[f"{scope}/kernel"] + w[f"{scope}/bias"])


def _gru_step(w: dict, scope: str, x: np.ndarray, h: np.ndarray) -> np.ndarray:
    """GRUCell: reset and update gates, then h' = u h + (1 - u) tanh([x, r h] C + c)."""
    gates = _sigmoid(
        np.concatenate([x, h], 1) @ w[f"{scope}/gates/kernel"] + w[f"{scope}/gates/bias"]
    )
    r, u = np.split(gates, 2, axis=1)
    candidate = np.concatenate([x, r * h], 1) @ w[f"{scope}/candidate/kernel"]
    return u * h + (1 - u) * np.tanh(candidate + w[f"{scope}/candidate/bias"])


def numpy_basic_rnn(w: dict, xs: np.ndarray, outputs: np.ndarray) -> np.ndarray:
    h = np.zeros((xs.shape[0], 4))
    steps = []
    for t in range(xs.shape[1]):
        h = _basic_rnn_step(w, "basic_rnn_cell", xs[:, t], h)
        steps.append(h)
    return np.stack(steps, 1)


def numpy_peephole_lstm(w: dict, xs: np.ndarray, outputs: np.ndarray) -> np.ndarray:
    """LSTMCell(use_peepholes=True): gates i, j, f, o; forget bias 1; diagonal peepholes."""
    c = m = np.zeros((xs.shape[0], 4))
    steps = []
    for t in range(xs.shape[1]):
        z = np.concatenate([xs[:, t], m], 1) @ w["lstm_cell/kernel"] + w["lstm_cell/bias"]
        i, j, f, o = np.split(z, 4, axis=1)
        c = _sigmoid(f + 1.0 + w["lstm_cell/w_f_diag"] * c) * c + _sigmoid(
            i + w["lstm_cell/w_i_diag"] * c
        ) * np.tanh(j)
        m = _sigmoid(o + w["lstm_cell/w_o_diag"] * c) * np.tanh(c)
        steps.append(m)
    return np.stack(steps, 1)


def numpy_gru_stack(*scopes: str):
    """GRU cells stacked (the output of one the input of the next), as MultiRNNCell runs them."""

    def run(w: dict, xs: np.ndarray, outputs: np.ndarray) -> np.ndarray:
        hs = [np.zeros((xs.shape[0], 4)) for _ in scopes]
        steps = []
        for t in range(xs.shape[1]):
            inputs = xs[:, t]
            for k, scope in enumerate(scopes):
                hs[k] = inputs = _gru_step(w, scope, inputs, hs[k])
            steps.append(inputs)
        return np.stack(steps, 1)

    return run


#: The share of inputs DropoutWrapper keeps (and scales by its inverse) in the test below.
KEEP = 0.5
#: Every way DropoutWrapper(input_keep_prob=KEEP) may keep (1) or drop (0) the 5 inputs of a step.
MASKS = np.array([[(k >> i) & 1 for i in range(5)] for k in range(32)], np.float64)


def numpy_input_dropout_rnn(w: dict, xs: np.ndarray, outputs: np.ndarray) -> np.ndarray:
    """BasicRNNCell on inputs kept with probability KEEP (and scaled by 1 / KEEP) or dropped:
    per step, the mask that explains TensorFlow's output best (the draws are TensorFlow's own)."""
    h = np.zeros((xs.shape[0], 4))
    steps, kept = [], []
    for t in range(xs.shape[1]):
        dropped = xs[:, t, None, :] * MASKS / KEEP  # [batch, mask, input]
        held = np.repeat(h[:, None, :], len(MASKS), 1)
        tried = np.tanh(
            np.concatenate([dropped, held], 2) @ w["basic_rnn_cell/kernel"]
            + w["basic_rnn_cell/bias"]
        )
        best = np.abs(tried - outputs[:, t, None, :]).max(2).argmin(1)
        h = tried[np.arange(len(best)), best]
        steps.append(h)
        kept.append(MASKS[best])
    # Each input kept or not, independently: the share kept is within 5 sigma of KEEP.
    draws = np.size(kept)
    bound = 5 * np.sqrt(KEEP * (1 - KEEP) / draws)
    assert abs(np.mean(kept) - KEEP) <= bound, f"{np.mean(kept)} of {draws} inputs kept"
    return np.stack(steps, 1)


def random_weights(sess) -> dict[str, np.ndarray]:
    """Give every variable random values (biases too), by name without `rnn/` and `:0`."""
    rng = np.random.default_rng(1)
    weights = {}
    for var in tf.global_variables():
        value = rng.normal(0.0, 0.5, var.shape.as_list())
        var.load(value.astype(np.float32), sess)
        weights[var.name.removeprefix("rnn/").removesuffix(":0")] = value
    return weights


@pytest.mark.parametrize(
    ("make_cell", "numpy_cell"),
    [
        (lambda: tf.nn.rnn_cell.BasicRNNCell(4), numpy_basic_rnn),
        (lambda: tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True), numpy_peephole_lstm),
        (lambda: tf.nn.rnn_cell.GRUCell(4), numpy_gru_stack("gru_cell")),
        (
            lambda: tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(4) for _ in range(2)]),
            numpy_gru_stack("multi_rnn_cell/cell_0/gru_cell", "multi_rnn_cell/cell_1/gru_cell"),
        ),
        (
            lambda: tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(4), KEEP),
            numpy_input_dropout_rnn,
        ),
    ],
    ids=["BasicRNNCell", "LSTMCell", "GRUCell", "MultiRNNCell", "DropoutWrapper"],
)
def test_rnn_cells_unroll_to_numpys_values(make_cell, numpy_cell):
    # 64 sequences: DropoutWrapper's 960 draws bound the share it keeps to KEEP ± 0.08.
    x = tf.placeholder(tf.float32, [64, 3, 5])
    outputs, _ = tf.nn.dynamic_rnn(make_cell(), x, dtype=tf.float32)
    sess = dp.Session()
    dp.init(sess)
    weights = random_weights(sess)
    xs = np.random.default_rng(2).normal(0.0, 1.0, (64, 3, 5)).astype(np.float32)
    got = dp.run(sess, outputs, {x: xs})
    assert got.shape == (64, 3, 4)
    np.testing.assert_allclose(got, numpy_cell(weights, xs, got), rtol=1e-4, atol=1e-5)


def test_convolution_pooling_flatten_layers_compute_as_numpy():
    images = tf.placeholder(tf.float32, [None, 8, 8, 1])
    conv = tf.layers.conv2d(images, filters=4, kernel_size=3, padding="same", activation=tf.nn.relu)
    pool = tf.layers.max_pooling2d(conv, pool_size=2, strides=2)
    flat = tf.layers.flatten(pool)
    sess = dp.Session()
    dp.init(sess)
    assert {v.op.type for v in tf.global_variables()} == {"VariableV2"}
    w = random_weights(sess)
    xs = np.random.default_rng(3).normal(0.0, 1.0, (3, 8, 8, 1)).astype(np.float32)
    got = dp.run(sess, flat, {images: xs})
    padded = np.pad(xs, ((0, 0), (1, 1), (1, 1), (0, 0)))  # "same" for a 3x3 kernel
    windows = np.stack(
        [padded[:, i : i + 8, j : j + 8, :] for i in range(3) for j in range(3)], 3
    )  # [image, row, column, kernel position, channel]
    kernel = w["conv2d/kernel"].reshape(9, 1, 4)
    relu = np.maximum(np.einsum("brcpk,pkf->brcf", windows, kernel) + w["conv2d/bias"], 0)
    pooled = relu.reshape(3, 4, 2, 4, 2, 4).max(axis=(2, 4))
    np.testing.assert_allclose(got, pooled.reshape(3, 64), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("name", "replacement"), [("contrib", "tf.layers.dense"), ("estimator", "tf.keras.Model.fit")]
)
def test_removed_modules_say_what_replaced_them(name, replacement):
    with pytest.raises(dp.RemovedApiError, match=f"tf.{name} is not in TensorFlow 2") as err:
        getattr(tf, name)
    assert replacement in str(err.value)
    assert isinstance(err.value, dp.Error) and isinstance(err.value, AttributeError)
    assert not hasattr(tf, name)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'") as other:
        tf.no_such_name  # noqa: B018
    assert not isinstance(other.value, dp.Error)


@pytest.mark.slow
def test_keras_and_tf_keras_load_on_first_touch_and_leave_tf_keras_alone():
    # TensorFlow's import would load Keras at once (0.6 s); `tf.keras` loads it when first used
    code = (
        "import sys, devplace as dp\n"
        "tf = dp.tf; tf.constant(1.0)\n"
        "import tensorflow\n"
        "print('tf_keras' in sys.modules, 'keras' in sys.modules)\n"
        "x = tf.placeholder(tf.float32, [None, 3])\n"
        "h = tf.layers.dropout(tf.layers.dense(x, 2), 0.5, training=True)\n"
        "c = tf.nn.rnn_cell.GRUCell(2)\n"
        "print('tf_keras' in sys.modules, tensorflow.keras.layers.Dense.__module__)\n"
        "print(type(tensorflow.keras.optimizers.SGD(0.1)).__module__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        *("False", "False"),
        *("True", "keras.src.layers.core.dense"),
        "keras.src.optimizers.sgd",
    ]
    assert done.stderr == ""  # no deprecation warnings from tf_keras's TF1 names
