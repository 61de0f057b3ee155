"""TF1 names TensorFlow 2 dropped from `tf.compat.v1`, put back on `dp.tf`.

`tf.layers` (`dense`, `batch_normalization`, `dropout`, `conv2d`, `max_pooling2d`, `flatten`,
...) and `tf.nn.rnn_cell` (`BasicRNNCell`, `BasicLSTMCell`, `LSTMCell`, `GRUCell`,
`MultiRNNCell`, `DropoutWrapper`, ...) are the TF1 layers and cells of the `tf-keras` package,
loaded when first touched (importing them takes about half a second). TensorFlow's own
`tf.compat.v1.layers` points into Keras 3, which has none of them; `TF_USE_LEGACY_KERAS` would
bring them back but also turn every `tf.keras` of the process into tf_keras, so devplace grafts
the two modules onto `dp.tf` instead and `tf.keras` stays Keras 3. `dp.tf` is
`tensorflow.compat.v1` itself, so the graft is seen there too.

`tf.contrib` and `tf.estimator` are gone from TensorFlow; asking `dp.tf` for them raises
`RemovedApiError` naming what replaced them (an `AttributeError` too, so `hasattr` is False).
"""

from __future__ import annotations

import importlib
import types
import warnings
from typing import Any

from devplace.core.errors import Error

__all__ = ["REPLACEMENTS", "RemovedApiError", "graft"]

#: What replaced each TF1 module TensorFlow 2 removed, as `RemovedApiError` says it.
REPLACEMENTS: dict[str, str] = {
    "contrib": (
        "tf.contrib was removed in TensorFlow 2.0. Its parts moved: tf.contrib.layers."
        "fully_connected -> tf.layers.dense, tf.contrib.layers.batch_norm -> "
        "tf.layers.batch_normalization, tf.contrib.rnn -> tf.nn.rnn_cell, "
        "tf.contrib.layers.variance_scaling_initializer -> tf.variance_scaling_initializer, "
        "tf.contrib.layers.l1_regularizer/l2_regularizer -> tf.keras.regularizers.l1/l2, "
        "tf.contrib.framework.arg_scope -> functools.partial; the rest went to TensorFlow "
        "Addons or was dropped (RFC 'contrib sunset')"
    ),
    "estimator": (
        "tf.estimator was removed in TensorFlow 2.16 (tensorflow-estimator 2.15 was its last "
        "release). Train with a session loop instead (tf.train optimizers, dp.Session, dp.run) "
        "or with Keras (tf.keras.Model.fit); tf.feature_column's numeric columns become plain "
        "placeholders"
    ),
}

# Where tf_keras keeps the TF1 modules (the paths TF_USE_LEGACY_KERAS makes TensorFlow use).
_TF_KERAS_MODULES = {
    "layers": "tf_keras.api._v1.keras.__internal__.legacy.layers",
    "rnn_cell": "tf_keras.api._v1.keras.__internal__.legacy.rnn_cell",
}


class RemovedApiError(Error, AttributeError):
    """A TF1 module TensorFlow 2 removed (`tf.contrib`, `tf.estimator`); says what replaced it."""


class _TfKerasModule(types.ModuleType):
    """A module of tf_keras's TF1 API that imports it on first attribute access."""

    def __init__(self, public_name: str, target: str):
        super().__init__(public_name, f"TF1 `{public_name}` from tf_keras (loaded on first use)")
        self._target = target

    def _load(self) -> types.ModuleType:
        try:
            module = importlib.import_module(self._target)
        except ImportError as err:
            raise ImportError(
                f"{self.__name__} needs the tf-keras package (TF1 layers and cells): "
                f"{err}. Hint: pip install 'tf-keras~=<your TensorFlow major.minor>'"
            ) from err
        # tf_keras warns at each first call that the TF1 name is deprecated: TF1 code is what
        # devplace runs on purpose, so the console stays quiet (as for TF's own deprecation
        # log, which devplace keeps at ERROR).
        warnings.filterwarnings(
            "ignore", r"`tf\.(layers|nn\.rnn_cell)\.\w+` is deprecated", UserWarning
        )
        self.__dict__.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
        return module

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._load(), name)

    def __dir__(self) -> list[str]:
        return sorted(n for n in vars(self._load()) if not n.startswith("_"))


def _removed(module_name: str) -> Any:
    """A module `__getattr__` that raises `RemovedApiError` for the removed TF1 modules."""

    def __getattr__(name: str) -> Any:
        if name in REPLACEMENTS:
            raise RemovedApiError(f"tf.{name} is not in TensorFlow 2: {REPLACEMENTS[name]}.")
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")

    return __getattr__


def graft(tf: Any, wrapped: Any) -> None:
    """Put `tf.layers`, `tf.nn.rnn_cell` and the removed-module errors on `tf` (compat.v1);
    `wrapped` is the module TensorFlow's module wrapper `tf` stands for."""
    # `import tensorflow.compat.v1` (tf_keras does it) runs compat.v1's __init__ once more, as a
    # second module, and that resets `nn.rnn_cell` on the `nn` module both share: done first.
    importlib.import_module("tensorflow.compat.v1")
    tf.layers = _TfKerasModule("tf.layers", _TF_KERAS_MODULES["layers"])
    tf.nn.rnn_cell = _TfKerasModule("tf.nn.rnn_cell", _TF_KERAS_MODULES["rnn_cell"])
    # TF's module wrapper asks the module it wraps for a name it lacks: a PEP 562 hook there
    # answers `tf.contrib` with the reason, and still a plain AttributeError for other names.
    wrapped.__getattr__ = _removed(wrapped.__name__)
