"""The reliability diagrams: the binned one of a :func:`forecast_scores` result and the
smoothed one of a :func:`smooth_ece` result. matplotlib is imported when one is drawn,
never by ``import coherence``."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

import numpy as np
import pandas as pd

from .._docstrings import fill_doc
from .._validation import param_error
from ._calibration import SmoothECEResult
from ._forecast import ForecastScoresResult
from ._ids import POOLED

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["plot_reliability", "plot_smooth_reliability"]


def plot_reliability(result: ForecastScoresResult, *, group: Any = POOLED,
                     ax: Axes | None = None) -> Axes:
    """Reliability diagram of one model (or the pooled forecasts).

    Draws the observed frequency against the mean forecast of each non-empty
    bin (marker area proportional to the bin count), the diagonal of perfect
    calibration, and the ECE in the legend.

    Parameters
    ----------
    result : ForecastScoresResult
        From :func:`forecast_scores`.
    group : str
        A model name, or ``'(all)'`` (default) for the pooled forecasts.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made when omitted.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on (``ax``, or those of a new figure): the observed
        frequency against the mean forecast of each bin of ``group``'s forecasts.

    See Also
    --------
    forecast_scores : the result plotted.
    plot_smooth_reliability : the smoothed reliability diagram of :func:`smooth_ece`.
    """
    owner = "plot_reliability"
    if not isinstance(result, ForecastScoresResult):
        raise TypeError(param_error("result", owner, "a ForecastScoresResult",
                                    type(result).__name__))
    table = result.reliability_table
    groups = list(pd.unique(table[result.by]))
    if group not in groups:
        raise ValueError(param_error("group", owner, f"one of {groups}", group))
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 4.5))
    t = table.loc[(table[result.by] == group) & (table["n"] > 0)]
    ece = float(result.calibration.set_index(result.by).loc[group, "ece"])
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1)
    sizes = 20 + 200 * t["n"].to_numpy() / max(int(t["n"].max()), 1)
    # the next colour of the axes' cycle: curves overlaid on one ``ax`` stay apart
    line = ax.plot(t["mean_forecast"], t["observed_frequency"], linewidth=1)[0]
    ax.scatter(t["mean_forecast"], t["observed_frequency"], s=sizes, color=line.get_color(),
               label=f"{group} (ECE = {ece:.3f})", zorder=3)
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="mean forecast (confidence)",
           ylabel="observed frequency", title="Reliability diagram")
    ax.legend(loc="upper left")
    return ax


@fill_doc
def plot_smooth_reliability(result: SmoothECEResult, *, ax: Axes | None = None) -> Axes:
    """Smoothed reliability diagram of a :func:`smooth_ece` result.

    The line is :math:`t + \\hat r(t)`, its width proportional to the density
    of the forecasts; the grey band is the pointwise bootstrap band (when the
    result has one); the dashed diagonal is perfect calibration.

    Parameters
    ----------
    result : SmoothECEResult
    %(ax)s

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on (``ax``, or those of a new figure): the smoothed
        reliability curve.

    See Also
    --------
    smooth_ece : the result plotted.
    plot_reliability : the binned reliability diagram of :func:`forecast_scores`.
    """
    if not isinstance(result, SmoothECEResult):
        raise TypeError(param_error("result", "plot_smooth_reliability", "a SmoothECEResult",
                                    type(result).__name__))
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection

    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 4.5))
    tab = result.table
    t = tab["t"].to_numpy()
    s = tab["smoothed"].to_numpy()
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1)
    if np.isfinite(tab["band_low"]).any():
        ax.fill_between(t, tab["band_low"], tab["band_high"], color="grey", alpha=0.3,
                        linewidth=0, label="bootstrap band")
    dens = tab["density"].to_numpy()
    widths = 0.5 + 5.0 * dens / max(float(np.nanmax(dens)), 1e-12)
    points = np.column_stack([t, s]).reshape(-1, 1, 2)
    segments = np.concatenate([points[:-1], points[1:]], axis=1)
    ax.add_collection(LineCollection(list(segments), linewidths=widths[:-1], colors="C3",
                                     label=f"smECE = {result.statistic:.3f}"))
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="forecast", ylabel="smoothed observed frequency",
           title="Smoothed reliability diagram")
    ax.legend(loc="upper left")
    return ax
