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


@pytest.mark.parametrize(
    "make_cell",
    [
        lambda: tf.nn.rnn_cell.BasicRNNCell(4),
        lambda: tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True),
        lambda: tf.nn.rnn_cell.GRUCell(4),
        lambda: tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(4) for _ in range(2)]),
        lambda: tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(4), 0.5),
    ],
    ids=["BasicRNNCell", "LSTMCell", "GRUCell", "MultiRNNCell", "DropoutWrapper"],
)
def test_rnn_cells_unroll(make_cell):
    x = tf.placeholder(tf.float32, [2, 3, 5])
    outputs, _ = tf.nn.dynamic_rnn(make_cell(), x, dtype=tf.float32)
    sess = dp.Session()
    dp.init(sess)
    assert dp.run(sess, outputs, {x: np.ones((2, 3, 5), np.float32)}).shape == (2, 3, 4)


def test_convolution_pooling_flatten_layers():
    images = tf.placeholder(tf.float32, [None, 8, 8, 1])
    conv = tf.layers.conv2d(images, filters=4, kernel_size=3, padding="same", activation=tf.nn.relu)
    pool = tf.layers.max_pooling2d(conv, pool_size=2, strides=2)
    flat = tf.layers.flatten(pool)
    sess = dp.Session()
    dp.init(sess)
    assert dp.run(sess, flat, {images: np.ones((3, 8, 8, 1), np.float32)}).shape == (3, 64)
    assert {v.op.type for v in tf.global_variables()} == {"VariableV2"}


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


def test_tf_keras_loads_on_first_touch_and_leaves_tf_keras_alone():
    code = (
        "import sys, devplace as dp\n"
        "tf = dp.tf; tf.constant(1.0)\n"
        "import tensorflow\n"
        "print('tf_keras' in sys.modules)\n"
        "x = tf.placeholder(tf.float32, [None, 3])\n"
        "h = tf.layers.dropout(tf.layers.dense(x, 2), 0.5, training=True)\n"
        "c = tf.nn.rnn_cell.GRUCell(2)\n"
        "print('tf_keras' in sys.modules, tensorflow.keras.layers.Dense.__module__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "keras.src.layers.core.dense"]
    assert done.stderr == ""  # no deprecation warnings from tf_keras's TF1 names
