"""ADCME's views (src/kit.jl, ADCMEKit.jl) for DevPlace.jl: the figures they draw.

Julia computes the numbers (losses along a line or on a mesh, finite-difference errors) and
each `*_view` function here draws one view on matplotlib's pyplot in the host, as ADCME drew
with PyPlot: it closes every figure, draws on a new current one and saves nothing, so the
caller's `savefig` (PyPlot's, or `pyplot.savefig`) writes it. Without a display pyplot uses Agg.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import matplotlib
import numpy as np

__all__ = [
    "convergence_view",
    "line_view",
    "mesh_view",
    "pcolormesh_view",
    "pyplot",
    "save_animation",
]


def pyplot() -> Any:
    """matplotlib's pyplot, with the Agg backend unless one was chosen (the host has no window)."""
    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415 (after choosing the backend)

    return plt


def line_view(losses: Sequence[float]) -> None:
    """ADCME's `lineview(losses)`: the losses against α from 0 to 1."""
    plt = pyplot()
    plt.close("all")
    plt.plot(np.linspace(0.0, 1.0, len(losses)), losses)
    plt.xlabel("$\\alpha$")
    plt.ylabel("loss")
    plt.grid(True)


def mesh_view(alpha: Any, beta: Any, losses: Any) -> None:
    """ADCME's `meshview(losses)`: the losses as a wireframe over (α, β), the center in red."""
    plt = pyplot()
    plt.close("all")
    ax = plt.figure().add_subplot(projection="3d")
    ax.plot_wireframe(alpha, beta, losses)
    ax.set_xlabel("$\\alpha$")
    ax.set_ylabel("$\\beta$")
    ax.set_zlabel("loss")
    m, n = np.shape(losses)
    c = ((m + 1) // 2 - 1, (n + 1) // 2 - 1)
    ax.scatter3D(alpha[c], beta[c], losses[c], color="red", s=100)


def pcolormesh_view(alpha: Any, beta: Any, losses: Any) -> None:
    """ADCME's `pcolormeshview(losses)`: the losses in color over (α, β), the center a star."""
    plt = pyplot()
    plt.close("all")
    plt.pcolormesh(alpha, beta, losses)
    plt.xlabel("$\\alpha$")
    plt.ylabel("$\\beta$")
    plt.scatter(0.0, 0.0, marker="*", s=100)
    plt.colorbar()


def convergence_view(
    gammas: Sequence[float], fd: Sequence[float], ad: Sequence[float], file: str | None = None
) -> None:
    """ADCME's gradient tests (`gradview`, `jacview`, `PCLview`): the errors of the
    finite-difference and the linearized (automatic differentiation) predictions of a
    perturbation of size γ, with O(γ) and O(γ²) guides, on log axes with γ decreasing to the
    right; saved to `file` if given."""
    plt = pyplot()
    g, fd, ad = np.asarray(gammas), np.abs(fd), np.abs(ad)
    plt.close("all")
    plt.loglog(g, fd, "*-", label="finite difference")
    plt.loglog(g, ad, "+-", label="automatic linearization")
    plt.loglog(g, g**2 * 0.5 * ad[0] / g[0] ** 2, "--", label="$\\mathcal{O}(\\gamma^2)$")
    plt.loglog(g, g * 0.5 * fd[0] / g[0], "--", label="$\\mathcal{O}(\\gamma)$")
    plt.gca().invert_xaxis()
    plt.legend()
    plt.xlabel("$\\gamma$")
    plt.ylabel("Error")
    if file is not None:
        plt.savefig(file)


def save_animation(anim: Any, filename: str, **kwargs: Any) -> None:
    """ADCME's `saveanim`: write `anim` with ImageMagick as ADCME does, or with Pillow (which
    matplotlib always has) where ImageMagick is not installed."""
    from matplotlib import animation  # noqa: PLC0415 (only for animations)

    writer = "imagemagick" if animation.writers.is_available("imagemagick") else "pillow"
    anim.save(filename, writer, **kwargs)
