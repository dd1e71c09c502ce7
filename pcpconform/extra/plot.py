"""Figures of an interpolation replay: what the archive holds against what a fetch returns.

One panel per (metric, instance) with any observation or any value in the samples, in the
replay's metric order and then instance order, at most ``max_panels`` (24) of them; the
figure says when panels were left out. Each panel shows, against seconds from the archive
start:

* the archive's observations (filled circles, no line; ``gid="observations"``);
* the values the samples return (a line with small squares; ``gid="interpolated"``): a
  straight line for COUNTER metrics, steps for INSTANT and DISCRETE ones, broken (NaN)
  where a sample has no value;
* the samples without a value, as ``x`` markers along the bottom of the panel, one series
  per reason (``gid="novalue:<reason>"``, the reason in the legend);
* marks, as vertical dashed lines (one line, ``gid="marks"``);
* non-finite numbers (NaN, ±inf), which have no place on a value axis, as ``^`` markers
  along the top (``gid="nonfinite"``), their position in the value lines being NaN;
* given ``rates`` (the samples after ``--rate``), a COUNTER's rates per second on an axis
  of their own at the right (a dotted line, ``gid="rates"``).

``STRING``, aggregate, event (and unknown) types have no value axis: such a panel is a
timeline with the observations on a row ``archive`` (y = 1) and the samples with a value
on a row ``replay`` (y = 0).

Drawing never raises on archive content: a panel that cannot be drawn says so in its
place. Only matplotlib's object API and the Agg canvas are used (no pyplot, no screen).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from typing import TYPE_CHECKING, Any, Protocol

from pcpconform.extra import require
from pcpconform.format.cnum import NUMERIC_TYPES
from pcpconform.format.pmtypes import PM_IN_NULL, PmSem, PmType
from pcpconform.oracles.interp.replay import NoValue, Sample

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure
else:  # without matplotlib, say which extra provides it
    Figure = require("matplotlib.figure", "plot", "pcpconform.extra.plot").Figure

__all__ = ["MAX_PANELS", "PlotSource", "Panel", "panels", "build_figure", "plot_replay"]


class PlotSource(Protocol):
    """What a figure reads of its source: a :class:`~pcpconform.oracles.interp.replay.Replay`,
    or the derive command's derived metrics over their operands' replay."""

    @property
    def descs(self) -> Mapping[int, Any]: ...

    @property
    def series(self) -> Mapping[tuple[int, int], Any]: ...

    @property
    def instances(self) -> Mapping[int, Sequence[int]]: ...

    @property
    def marks(self) -> Sequence[float]: ...

    @property
    def rules(self) -> str: ...

    @property
    def archive(self) -> Any: ...

    def rel(self, t: Any) -> float: ...

MAX_PANELS = 24
_EOL = "end of log"
_MISSING = "not returned"
_REASON_STYLE = {               # colour of each reason's "x" markers
    "no prior": "tab:purple", "no next": "tab:orange", "mark": "tab:gray",
    "counter across mark": "tab:brown", "not alive": "tab:olive", _EOL: "black",
    _MISSING: "tab:pink",
}
_OBS_COLOR, _VAL_COLOR, _RATE_COLOR = "tab:blue", "tab:red", "tab:green"


def _obs_style(n: int) -> dict[str, Any]:
    """Few observations: hollow circles on top, a fetched value at an observation's time
    showing inside one. Many: small dots under the fetched values, so those stay visible."""
    if n <= 150:
        return {"linestyle": "none", "marker": "o", "markersize": 6, "markeredgewidth": 1.3,
                "markerfacecolor": "none", "color": _OBS_COLOR, "zorder": 5}
    return {"linestyle": "none", "marker": ".", "markersize": max(1.5, 6 * math.sqrt(150 / n)),
            "markeredgewidth": 0, "color": _OBS_COLOR, "alpha": 0.6, "zorder": 2}


@dataclass
class Panel:
    """What one panel shows; times are seconds from the archive start."""

    pmid: int
    inst: int
    title: str
    numeric: bool
    sem: int
    obs_times: list[float] = field(default_factory=list)
    obs_values: list[Any] = field(default_factory=list)
    sample_times: list[float] = field(default_factory=list)   # every sample, end of log too
    sample_values: list[Any] = field(default_factory=list)    # value, or NoValue
    marks: list[float] = field(default_factory=list)
    rate_values: list[Any] | None = None                      # per sample, for counters

    @property
    def has_value(self) -> bool:
        return any(not isinstance(v, NoValue) for v in self.sample_values)


def _number(v: Any) -> float | None:
    """A value as a float for the value axis; None if it is not a number."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        return float(v)
    except (OverflowError, ValueError, TypeError):   # an int beyond double range
        return math.copysign(math.inf, v) if isinstance(v, int) else None


def _finite(v: Any) -> float:
    """The plotted y of a value: NaN for non-numbers and non-finite numbers."""
    x = _number(v)
    return x if x is not None and math.isfinite(x) else math.nan


def _safe(fn: Any, *args: Any, default: Any = None) -> Any:
    try:
        return fn(*args)
    except Exception:
        return default


def _instance_names(replay: Any, desc: Any) -> dict[int, str]:
    if desc is None or desc.indom.is_null:
        return {}
    names: dict[int, str] = {}
    for rec in _safe(replay.archive.indom_history, desc.indom, default=[]) or []:
        names.update(rec.instances)       # the latest name of each instance wins
    return names


def _metric_label(replay: Any, pmid: int, desc: Any, names: Callable[[int], str] | None) -> str:
    name = _safe(names or replay.archive.metric_name, pmid, default=None) or str(pmid)
    if desc is None:
        return name
    try:
        ptype = PmType(desc.type).token
    except ValueError:
        ptype = f"type {desc.type}"
    try:
        sem = PmSem(desc.sem).name.lower()
    except ValueError:
        sem = f"sem {desc.sem}"
    return f"{name} ({ptype} {sem})"


def panels(replay: PlotSource, samples: Sequence[Sample], *, rates: Sequence[Sample] | None = None,
           names: Callable[[int], str] | None = None) -> list[Panel]:
    """Every (metric, instance) with an observation in the replay or a value in the
    samples, in the replay's metric order, then instance order: the panels to draw.
    ``rates`` (as many samples) adds each COUNTER's rates; ``names`` names the metrics."""
    descs: dict[int, Any] = dict(getattr(replay, "descs", {}) or {})
    series: dict[tuple[int, int], Any] = dict(getattr(replay, "series", {}) or {})
    known: dict[int, list[int]] = dict(getattr(replay, "instances", {}) or {})
    marks = sorted(float(m) for m in getattr(replay, "marks", []) or [])
    times = [_safe(replay.rel, s.time, default=math.nan) for s in samples]

    pmids = list(descs)
    for pmid, _ in series:
        if pmid not in descs and pmid not in pmids:
            pmids.append(pmid)
    for s in samples:
        for pmid in s.values:
            if pmid not in pmids:
                pmids.append(pmid)

    out: list[Panel] = []
    for pmid in pmids:
        desc = descs.get(pmid)
        insts = list(known.get(pmid, []))
        extra = {i for p, i in series if p == pmid}
        for s in samples:
            extra.update(s.values.get(pmid, {}))
        insts += sorted(extra - set(insts))
        inst_names = _instance_names(replay, desc)
        label = _metric_label(replay, pmid, desc, names)
        numeric = desc is not None and desc.type in NUMERIC_TYPES
        sem = desc.sem if desc is not None else PmSem.INSTANT
        for inst in insts:
            obs = series.get((pmid, inst))
            values: list[Any] = []
            for s in samples:
                if s.eol:
                    values.append(NoValue(_EOL))
                else:
                    values.append(s.values.get(pmid, {}).get(inst, NoValue(_MISSING)))
            panel = Panel(pmid, inst, label if inst == PM_IN_NULL else
                          f"{label} [{inst_names.get(inst, f'inst {inst}')}]", numeric, sem,
                          list(obs.times) if obs is not None else [],
                          list(obs.values) if obs is not None else [],
                          list(times), values, marks)
            if rates is not None and sem == PmSem.COUNTER and numeric:
                panel.rate_values = [NoValue(_EOL) if r.eol else
                                     r.values.get(pmid, {}).get(inst, NoValue(_MISSING)) for r in rates]
            if panel.obs_times or panel.has_value:
                out.append(panel)
    return out


def _draw_marks(ax: Any, marks: list[float]) -> None:
    if not marks:
        return
    xs: list[float] = []
    ys: list[float] = []
    for m in marks:
        xs += [m, m, math.nan]
        ys += [0.0, 1.0, math.nan]
    ax.plot(xs, ys, transform=ax.get_xaxis_transform(), linestyle="--", linewidth=0.9,
            color="0.45", label="mark", gid="marks")


def _draw_novalues(ax: Any, panel: Panel) -> None:
    by_reason: dict[str, list[float]] = {}
    for t, v in zip(panel.sample_times, panel.sample_values):
        if isinstance(v, NoValue) and math.isfinite(t):
            by_reason.setdefault(v.reason, []).append(t)
    for reason, xs in by_reason.items():
        ax.plot(xs, [0.03] * len(xs), transform=ax.get_xaxis_transform(), linestyle="none",
                marker="x", markersize=4, color=_REASON_STYLE.get(reason, "tab:cyan"),
                label=f"no value: {reason}", gid=f"novalue:{reason}", clip_on=False)


def _draw_numeric(ax: Any, panel: Panel, rules: str) -> None:
    obs_y = [_finite(v) for v in panel.obs_values]
    ax.plot(panel.obs_times, obs_y, label="archive", gid="observations",
            **_obs_style(len(obs_y)))
    val_x, val_y = [], []
    for t, v in zip(panel.sample_times, panel.sample_values):
        if math.isfinite(t):
            val_x.append(t)
            val_y.append(math.nan if isinstance(v, NoValue) else _finite(v))
    ax.plot(val_x, val_y, linestyle="-", linewidth=1.0, marker="s", markersize=2.5,
            color=_VAL_COLOR, label=f"fetched ({rules})" if rules else "fetched",
            gid="interpolated", zorder=4,
            drawstyle="default" if panel.sem == PmSem.COUNTER else "steps-post")
    bad = [t for t, v in zip(panel.obs_times, panel.obs_values) if not math.isfinite(_num0(v))]
    bad += [t for t, v in zip(panel.sample_times, panel.sample_values)
            if not isinstance(v, NoValue) and math.isfinite(t) and not math.isfinite(_num0(v))]
    if bad:
        ax.plot(bad, [0.97] * len(bad), transform=ax.get_xaxis_transform(), linestyle="none",
                marker="^", markersize=4, color="tab:green", label="NaN / inf",
                gid="nonfinite", clip_on=False)
    if panel.rate_values is not None:
        _draw_rates(ax, panel)
    if not any(math.isfinite(y) for y in obs_y + val_y):
        ax.set_ylim(-1, 1)
    else:
        lo = min(y for y in obs_y + val_y if math.isfinite(y))
        hi = max(y for y in obs_y + val_y if math.isfinite(y))
        if not math.isfinite(hi - lo):            # e.g. -1e308 .. 1e308: no usable scale
            ax.set_yscale("symlog")


def _draw_rates(ax: Any, panel: Panel) -> None:
    """A counter's rates per second, on their own axis at the right (INTERP-RATE-1)."""
    assert panel.rate_values is not None
    twin = ax.twinx()
    xs, ys = [], []
    for t, v in zip(panel.sample_times, panel.rate_values):
        if math.isfinite(t):
            xs.append(t)
            ys.append(math.nan if isinstance(v, NoValue) else _finite(v))
    twin.plot(xs, ys, linestyle=":", linewidth=1.2, marker=".", markersize=3, color=_RATE_COLOR,
              label="rate (per second)", gid="rates")
    twin.set_ylabel("per second", fontsize="x-small", color=_RATE_COLOR)
    twin.tick_params(labelsize="x-small", colors=_RATE_COLOR)
    if not any(math.isfinite(y) for y in ys):
        twin.set_ylim(-1, 1)


def _num0(v: Any) -> float:
    x = _number(v)
    return 0.0 if x is None else x


def _draw_timeline(ax: Any, panel: Panel, rules: str) -> None:
    ax.plot(panel.obs_times, [1.0] * len(panel.obs_times), label="archive",
            gid="observations", **_obs_style(len(panel.obs_times)))
    xs = [t for t, v in zip(panel.sample_times, panel.sample_values)
          if not isinstance(v, NoValue) and math.isfinite(t)]
    ax.plot(xs, [0.0] * len(xs), linestyle="none", marker="s", markersize=2.5,
            color=_VAL_COLOR, label=f"fetched ({rules})" if rules else "fetched",
            gid="interpolated")
    ax.set_ylim(-0.6, 1.6)
    ax.set_yticks([0.0, 1.0], ["replay", "archive"])


def _draw_panel(ax: Any, panel: Panel, rules: str) -> None:
    ax.set_title(panel.title, fontsize="small")
    _draw_marks(ax, panel.marks)
    (_draw_numeric if panel.numeric else _draw_timeline)(ax, panel, rules)
    _draw_novalues(ax, panel)
    ax.grid(True, linewidth=0.3, alpha=0.6)
    ax.tick_params(labelsize="x-small")


def build_figure(replay: PlotSource, samples: Sequence[Sample], *, title: str | None = None,
                 max_panels: int = MAX_PANELS, rates: Sequence[Sample] | None = None,
                 names: Callable[[int], str] | None = None) -> Figure:
    """The figure ``plot_replay`` saves (not attached to any screen)."""
    todo = panels(replay, samples, rates=rates, names=names)
    shown = todo[:max(max_panels, 0)]
    n = len(shown)
    ncols = 1 if n <= 3 else 2 if n <= 12 else 3
    nrows = max(math.ceil(n / ncols), 1)
    # fixed margins in inches (constrained layout doubles the time a 24-panel figure takes)
    width, height = 6.4 * ncols, 2.7 * nrows + 1.5
    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(left=0.75 / width, right=1 - 0.2 / width, bottom=0.55 / height,
                        top=1 - 1.35 / height, hspace=0.62 / 2.05, wspace=0.95 / 5.45)
    rules = str(getattr(replay, "rules", "") or "")
    heading = title if title is not None else (
        f"{_safe(lambda: replay.archive.hostname, default='archive')}: "
        f"{len(samples)} fetches, rules {rules}")
    if len(todo) > n:
        heading += f"\n(showing {n} of {len(todo)} metric-instance panels)"
    fig.suptitle(heading, fontsize="medium", y=1 - 0.08 / height, va="top")
    if n == 0:
        fig.text(0.5, 0.5, "no observations and no values to plot", ha="center", va="center")
        return fig
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True).ravel()
    for ax in axes[n:]:
        fig.delaxes(ax)
    for ax, panel in zip(axes, shown):
        try:
            _draw_panel(ax, panel, rules)
        except Exception as exc:
            ax.clear()
            ax.set_title(panel.title, fontsize="small")
            ax.text(0.5, 0.5, f"cannot draw: {type(exc).__name__}: {exc}"[:120],
                    ha="center", va="center", transform=ax.transAxes, fontsize="x-small")
    _figure_legend(fig, fig.axes, height)        # the rate axes too
    for i, ax in enumerate(axes[:n]):
        if i + ncols >= n:                  # no panel below (the last row may be short)
            ax.set_xlabel("seconds from archive start", fontsize="x-small")
            ax.xaxis.set_tick_params(labelbottom=True)
    return fig


def _figure_legend(fig: Any, axes: Any, height: float) -> None:
    """One legend for all panels: every series has the same style in every panel."""
    seen: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    if seen:
        fig.legend(list(seen.values()), list(seen), loc="upper center", ncols=min(len(seen), 5),
                   bbox_to_anchor=(0.5, 1 - 0.5 / height), fontsize="x-small", frameon=False)


def plot_replay(replay: PlotSource, samples: Sequence[Sample], path: str | PathLike[str], *,
                title: str | None = None, max_panels: int = MAX_PANELS,
                rates: Sequence[Sample] | None = None,
                names: Callable[[int], str] | None = None) -> None:
    """Draw ``samples`` of ``replay`` against the archive's observations into ``path``
    (PNG, or any format matplotlib infers from the suffix)."""
    try:
        with warnings.catch_warnings():   # ticks over ranges near 1e308 overflow harmlessly
            warnings.simplefilter("ignore", RuntimeWarning)
            build_figure(replay, samples, title=title, max_panels=max_panels, rates=rates,
                         names=names).savefig(path, dpi=100)
    except (ValueError, OverflowError, RuntimeError) as exc:
        # a scale Agg cannot render: fall back to a figure saying so rather than raising
        plain = Figure(figsize=(6.4, 2.0))
        plain.suptitle(title or "interpolation replay", fontsize="medium")
        plain.text(0.5, 0.4, f"cannot render: {type(exc).__name__}: {exc}"[:160],
                   ha="center", va="center", fontsize="small")
        plain.savefig(path, dpi=100)
