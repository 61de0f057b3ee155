"""`feed_dict=`, TensorFlow's name for what devplace calls `feed=`, accepted wherever `feed` is.

Every TF1 program writes `sess.run(y, feed_dict={x: ...})`; `dp.run`, `dp.run_profile`,
`dp.placement`, ... take the same dict as `feed` and, through `accepts_feed_dict`, as `feed_dict`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from devplace.core.errors import ArgumentTypeError

__all__ = ["accepts_feed_dict"]

F = TypeVar("F", bound=Callable[..., Any])


def accepts_feed_dict(function: F) -> F:
    """`function` (which has a `feed` parameter) also taking `feed_dict=` for it; both at once
    is an error naming both."""
    signature = inspect.signature(function)
    name = function.__qualname__

    @functools.wraps(function)
    def with_feed_dict(*args: Any, **kwargs: Any) -> Any:
        if "feed_dict" not in kwargs:
            return function(*args, **kwargs)
        feed_dict = kwargs.pop("feed_dict")
        if signature.bind_partial(*args, **kwargs).arguments.get("feed") is not None:
            raise ArgumentTypeError(
                name,
                "feed_dict",
                feed_dict,
                "left out when feed is given (they are two names for one argument)",
                f"pass the dict once: {name}(sess, fetches, feed_dict={{x: value}})",
            )
        return function(*args, **kwargs, feed=feed_dict)

    parameters = list(signature.parameters.values())
    at = len(parameters) - (parameters[-1].kind is inspect.Parameter.VAR_KEYWORD)
    keyword = inspect.Parameter("feed_dict", inspect.Parameter.KEYWORD_ONLY, default=None)
    parameters.insert(at, keyword)
    with_feed_dict.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return with_feed_dict  # type: ignore[return-value]
