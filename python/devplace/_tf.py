"""TensorFlow, imported once in TF1 graph mode (`tf.compat.v1` with v2 behaviour disabled).

TF1 behaviour is what the seeds assume: `Variable` builds `VariableV2` ops (not resource
handles), sessions and collections work, and device functions are accepted by `tf.device`.
"""

import os
import re
import sys

from devplace._fdcapture import capture_fds

# TF's C++ INFO and WARNING lines (oneDNN notices, "GPU trace was not collected" on every
# traced run) drown the placement log, which TF prints to stdout regardless; errors stay.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# Lines TF prints while loading, before it reads TF_CPP_MIN_LOG_LEVEL: notices, not problems.
_LOAD_NOTICES = re.compile(
    r"All log messages before absl::InitializeLog|oneDNN custom operations are on"
    r"|cpu_feature_guard|To enable the following instructions"
)

_loading = None
try:
    with capture_fds((2,)) as _loading:
        import tensorflow as _tensorflow
        from tensorflow.python.util import deprecation as _deprecation
finally:
    if _loading is not None:
        sys.stderr.write(
            "".join(
                line
                for line in _loading.text.splitlines(keepends=True)
                if not _LOAD_NOTICES.search(line)
            )
        )

tf = _tensorflow.compat.v1
with _deprecation.silence():
    tf.disable_v2_behavior()
tf.logging.set_verbosity(tf.logging.ERROR)

__all__ = ["tf"]
