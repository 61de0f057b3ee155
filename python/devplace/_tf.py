"""TensorFlow, imported once in TF1 graph mode (`tf.compat.v1` with v2 behaviour disabled).

TF1 behaviour is what the seeds assume: `Variable` builds `VariableV2` ops (not resource
handles), sessions and collections work, and device functions are accepted by `tf.device`.
"""

import os

# TF's C++ INFO and WARNING lines (oneDNN notices, "GPU trace was not collected" on every
# traced run) drown the placement log, which TF prints to stdout regardless; errors stay.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as _tensorflow  # noqa: E402
from tensorflow.python.util import deprecation as _deprecation  # noqa: E402

tf = _tensorflow.compat.v1
with _deprecation.silence():
    tf.disable_v2_behavior()
tf.logging.set_verbosity(tf.logging.ERROR)

__all__ = ["tf"]
