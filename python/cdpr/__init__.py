"""cdpr: the open digital shadow for cable-driven parallel robots, from Python.

The same Rust core as the ``cdpr`` command line (``cdpr._cdpr``, built by maturin): every
result here equals the CLI's bit for bit.

>>> import cdpr
>>> robot = cdpr.Robot.load("uvigo8")                  # a shipped robot, or a TOML path
>>> robot.ik([0, 0, 0.15])["lengths"][:2]              # cdpr ik --json
>>> run = cdpr.simulate("uvigo8", "seed000", speed=0.1)
>>> run["rms_3d"], run.data                            # metrics; the run (DataFrame/arrays)

Errors are :class:`CdprError` carrying the CLI's message; out-of-range arguments are
``ValueError`` worded like the CLI's. Long computations release the GIL, so threads run in
parallel. Sweeps: :func:`sweep` (all cores), :func:`sweep_plan` and :func:`sweep_run` (one run
of a spec, for Dask/Ray/Slurm; see ``python/examples/dask_sweep.py``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

import numpy as np

from . import _cdpr
from ._cdpr import CdprError, Robot, Sim, SweepSpec, __version__, robot_names

def prediction(robot: RobotLike, predicted: Any, measured: Any, period: float, percent: bool = True) -> List[Dict[str, Any]]:
    """How well a model predicts the drives, as ``cdpr shadow`` reports it beside a PLC that
    gives their actual torques: ``predicted`` and ``measured`` are arrays (or DataFrames) of one
    row per sample, taken every ``period`` s, and one column per drive (a shadow's record has
    ``motor_torque_i`` and ``actual_torque_i``). Per drive: ``rms`` and ``max`` of measured −
    predicted (N·m; ``rms_percent``, ``max_percent`` of the rated torque unless
    ``percent=False``, for other series such as payouts in m), ``best_lag_s`` (the lag, up to
    ±50 samples, at which the error spreads least about its mean: positive when the
    measurement comes after the prediction) and ``rms_at_best_lag``."""
    return _cdpr.prediction(
        load(robot),
        np.ascontiguousarray(predicted, dtype=np.float64),
        np.ascontiguousarray(measured, dtype=np.float64),
        float(period),
        percent,
    )


__all__ = [
    "CdprError",
    "options",
    "models",
    "Robot",
    "Sim",
    "Run",
    "Trajectory",
    "robot_names",
    "load",
    "trajectory",
    "simulate",
    "compare",
    "preflight",
    "feedforward",
    "prediction",
    "SweepSpec",
    "sweep",
    "sweep_spec",
    "sweep_run",
    "__version__",
]

PathLike = Union[str, "os.PathLike[str]"]
RobotLike = Union[Robot, PathLike]

POSE_COLUMNS = ["x", "y", "z", "roll", "pitch", "yaw"]


def load(robot: RobotLike) -> Robot:
    """A :class:`Robot`: returned as is, or loaded from a shipped name or a TOML path."""
    if isinstance(robot, Robot):
        return robot
    return Robot.load(os.fspath(robot))


def _pandas():
    try:
        import pandas
    except ImportError:  # pandas is optional
        return None
    return pandas


@dataclass(frozen=True)
class Trajectory:
    """A trajectory's samples: ``t`` (n,), ``pose`` (n, 6: x, y, z, roll, pitch, yaw),
    ``segment`` (n,; index into ``segment_names``, −1 untagged)."""

    t: np.ndarray
    pose: np.ndarray
    segment: np.ndarray
    segment_names: List[str]

    def to_array(self) -> np.ndarray:
        """(n, 7): t, x, y, z, roll, pitch, yaw — what :func:`simulate` takes."""
        return np.column_stack([self.t, self.pose])

    def to_dataframe(self):
        """A pandas DataFrame with columns t, x, …, yaw, segment (needs pandas)."""
        pandas = _pandas()
        if pandas is None:
            raise ImportError("to_dataframe needs pandas (pip install pandas)")
        frame = pandas.DataFrame(self.to_array(), columns=["t"] + POSE_COLUMNS)
        names = np.array([""] + list(self.segment_names), dtype=object)
        frame["segment"] = names[self.segment + 1]
        return frame

    def __len__(self) -> int:
        return len(self.t)


def trajectory(robot: RobotLike, name: PathLike, dt: Optional[float] = None, **options: Any) -> Trajectory:
    """A built-in trajectory (``seed000``, ``pickplace``, ``poly5``, ``tilt``, …) sampled every
    ``dt`` (s; default 2 ms, as ``cdpr trajectory``), or a CSV file — as ``cdpr trajectory``.
    ``options`` shape a built-in: ``speed``, ``profile``, ``accel``, ``jerk``, ``transition``
    (the run options of :func:`options`, same names, ranges and defaults as the CLI's)."""
    t, pose, segment, names = _cdpr.trajectory(load(robot), os.fspath(name), dt, **options)
    return Trajectory(t, pose, segment, list(names))


def _source(trajectory: Any, columns: Optional[Sequence[str]]):
    """(what the native module takes, column names) for a trajectory given as a name or
    path, a :class:`Trajectory`, a :class:`Run` (its actual path), a DataFrame or an array."""
    if isinstance(trajectory, (str, os.PathLike)):
        return os.fspath(trajectory), None
    if isinstance(trajectory, Trajectory):
        return np.ascontiguousarray(trajectory.to_array()), ["t"] + POSE_COLUMNS
    if isinstance(trajectory, Run):
        return np.ascontiguousarray(trajectory.actual()), ["t"] + POSE_COLUMNS
    pandas = _pandas()
    if pandas is not None and isinstance(trajectory, pandas.DataFrame):
        numeric = trajectory.select_dtypes("number")
        return np.ascontiguousarray(numeric.to_numpy(dtype=np.float64)), list(numeric.columns)
    values = np.ascontiguousarray(np.asarray(trajectory, dtype=np.float64))
    if values.ndim != 2:
        raise ValueError(
            f"trajectory: an array must be 2-D (rows of t, x, y, z[, roll, pitch, yaw]), got {values.ndim}-D"
        )
    return values, (list(columns) if columns is not None else None)


class Run(Mapping):
    """A simulated run. As a mapping it holds the metrics: ``run["rms_3d"]`` (m), ``rms``
    (x, y, z), ``max_3d``, ``frechet``, ``lag_s``, ``tension_min``/``tension_max``, ``steps``,
    … (the totals of ``cdpr simulate --json`` and its run-level keys).

    ``report`` is the whole ``cdpr simulate --json`` object (per-segment metrics included);
    ``values`` the recorded steps as one (n, k) float64 array named by ``columns`` (those of
    ``cdpr simulate --out``); ``segment`` each row's segment name; ``data`` a pandas DataFrame
    of it when pandas is installed, else a dict of column views.
    """

    def __init__(self, report: Dict[str, Any], columns: List[str], values: np.ndarray, segment: List[str]):
        self.report = report
        self.columns = list(columns)
        self.values = values
        self.segment = segment
        # The totals are the report's top-level keys (the CLI's JSON flattens them).
        self.metrics = {k: v for k, v in report.items() if k != "segments"}

    def __getitem__(self, key: str) -> Any:
        return self.metrics[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.metrics)

    def __len__(self) -> int:
        return len(self.metrics)

    def column(self, name: str) -> np.ndarray:
        """One recorded column (a view, no copy)."""
        try:
            return self.values[:, self.columns.index(name)]
        except ValueError:
            raise KeyError(f"no column {name!r}; the run has {', '.join(self.columns)}") from None

    def actual(self) -> np.ndarray:
        """(n, 7): t and the simulated pose."""
        return self.values[:, [self.columns.index(c) for c in ["t"] + POSE_COLUMNS]]

    def commanded(self) -> np.ndarray:
        """(n, 7): t and the commanded pose."""
        return self.values[:, [self.columns.index(c) for c in ["t"] + [p + "_cmd" for p in POSE_COLUMNS]]]

    @property
    def data(self):
        pandas = _pandas()
        if pandas is None:
            return {name: self.values[:, k] for k, name in enumerate(self.columns)}
        frame = pandas.DataFrame(self.values, columns=self.columns, copy=False)
        frame["segment"] = self.segment
        return frame

    def __repr__(self) -> str:
        rms = self.metrics.get("rms_3d")
        shown = f"rms_3d {rms * 1e3:.3f} mm, " if isinstance(rms, float) else ""
        return f"<cdpr.Run {len(self.values)} steps, {shown}model {self.metrics.get('model')}>"


def simulate(robot: RobotLike, trajectory: Any, columns: Optional[Sequence[str]] = None, **options: Any) -> Run:
    """Runs a trajectory through the physics core, as ``cdpr simulate`` (same options, same
    defaults: the ``chain`` model, ``length`` winches, dt 1 ms).

    ``trajectory`` is a built-in's name (``seed000``, …), a CSV path, a :class:`Trajectory`,
    a DataFrame or an (n, k) array whose columns are ``columns`` (default t, x, y, z[, roll,
    pitch, yaw]). ``options`` are the run options of ``cdpr simulate`` by name (``speed``,
    ``model``, ``control``, ``dt``, ``compensate``, ``payload``, …: :func:`options` lists them
    all with their units, ranges and defaults; the list is also below). A value out of range is
    a ``ValueError`` naming the option, an unknown name a ``TypeError``. Raises
    :class:`CdprError` as the CLI fails; a run that stops early raises with what was computed
    in ``error.run``.
    """
    if "surrogate" in options and options["surrogate"] is not None:
        options["surrogate"] = os.fspath(options["surrogate"])
    source, names = _source(trajectory, columns)
    report, cols, values, segment = _cdpr.simulate(load(robot), source, names, **options)
    run = Run(report, cols, values, segment)
    failure = report.get("error")
    if failure is None and "escape_message" in report:
        failure = report["escape_message"]
    elif failure is not None:
        failure = f"the run stopped early; the {max(len(values) - 1, 0)} steps before are kept: {failure}"
    if failure is not None:
        error = CdprError(failure)
        error.run = run
        raise error
    return run


def preflight(robot: RobotLike, trajectory: Any, columns: Optional[Sequence[str]] = None, **options: Any) -> Dict[str, Any]:
    """Checks a whole trajectory before it goes to the real robot, as ``cdpr preflight``: the
    ``--json`` object as a dict (``ok``, ``first_violation``, ``total`` and ``segments`` with
    every check's worst value and margin). ``trajectory`` is taken as by :func:`simulate`;
    ``options``: ``step``, ``angle_step``, ``time_step``, ``clearance``, ``f_min``, ``f_max``
    and the robot and trajectory run options (``payload``, ``speed``, ``profile``, …)."""
    source, names = _source(trajectory, columns)
    return _cdpr.preflight(load(robot), source, names, **options)


def feedforward(robot: RobotLike, trajectory: Any, columns: Optional[Sequence[str]] = None, **options: Any) -> Dict[str, Any]:
    """Per drive the torque a trajectory needs, as ``cdpr feedforward``: ``columns`` (``t``,
    then per drive ``torque_i`` N·m, ``payout_i`` m, ``payout_rate_i`` m/s,
    ``payout_acceleration_i`` m/s², ``winch_tension_i`` N), ``values`` (an array, one row per
    trajectory sample) and ``drives`` (per drive its peak and RMS torque, in N·m and % of
    rated, and the time at its limit). The robot must describe its drives (``uvigo8-drives``).
    ``trajectory`` is taken as by :func:`simulate`; ``options``: ``difference_step``,
    ``plain_lengths`` and the robot and trajectory run options (``payload``, ``speed``, …)."""
    source, names = _source(trajectory, columns)
    return _cdpr.feedforward(load(robot), source, names, **options)


def options(command: Optional[str] = None) -> List[Dict[str, Any]]:
    """Every run option (the core's one table, which the CLI, sweeps and the viewer read too):
    ``name``, ``group`` (robot, trajectory, physics, run), ``kind`` (number, whole, flag,
    choice, name, file), ``unit``, ``min``, ``max``, ``choices``, ``default`` and ``help``.
    :func:`simulate` takes every one but ``robot`` and ``trajectory`` as a keyword argument;
    :class:`Sim` the physics ones; :func:`trajectory` the trajectory ones. ``command``
    (``"workspace"``, ``"preflight"``, ``"compare"``, ``"fk"``): that command's own table, the
    keyword arguments of :meth:`Robot.workspace`, :func:`preflight`, :func:`compare` and
    :meth:`Robot.fk`."""
    return _cdpr.options(command)


def models() -> List[Dict[str, Any]]:
    """Every physical model (the core's table): ``name``, ``help``, the winch modes it takes
    (``controls``), whether it models robots with legs, needs the surrogate's parameters and
    can be swept."""
    return _cdpr.models()


def _options_doc() -> str:
    lines = ["", "Run options (keyword arguments):", ""]
    for o in _cdpr.options():
        if o["name"] in ("robot", "trajectory"):
            continue
        what = o["help"]
        if o["kind"] in ("number", "whole"):
            unit = f" {o['unit']}" if o.get("unit") else ""
            what += f" ({o['min']:g} to {o['max']:g}{unit})"
        elif o["kind"] == "choice":
            what += f" ({', '.join(o['choices'])})"
        lines.append(f"    {o['name']}: {what} [default: {o['default']}]")
    return "\n".join(lines)


simulate.__doc__ = (simulate.__doc__ or "") + _options_doc()


def compare(
    reference: Any,
    actual: Any,
    remove_lag: bool = True,
    max_lag: float = 1.0,
    reference_columns: Optional[Sequence[str]] = None,
    actual_columns: Optional[Sequence[str]] = None,
    reference_suffix: str = "",
    actual_suffix: str = "",
) -> Dict[str, Any]:
    """Seed 000's metrics of ``actual`` against ``reference`` (``cdpr compare --json``): lag
    by cross-correlation, RMS per axis and 3D, Fréchet, per segment and in total. Each is a
    CSV path (``*_suffix="_cmd"`` reads a run's commanded pose), a :class:`Trajectory`, a
    :class:`Run` (its simulated path), a DataFrame or an array."""
    ref, ref_names = _source(reference, reference_columns)
    act, act_names = _source(actual, actual_columns)
    return _cdpr.compare(
        ref,
        act,
        ref_names,
        act_names,
        reference_suffix=reference_suffix,
        actual_suffix=actual_suffix,
        remove_lag=remove_lag,
        max_lag=max_lag,
    )


# ---------------------------------------------------------------------------- sweeps


def sweep_spec(spec: Union[SweepSpec, PathLike]) -> SweepSpec:
    """A :class:`SweepSpec`: returned as is, or read from a TOML file (``cdpr sweep``'s)."""
    if isinstance(spec, SweepSpec):
        return spec
    return SweepSpec.load(os.fspath(spec))


def _rows(columns: List[str], rows: List[list]):
    pandas = _pandas()
    if pandas is not None:
        return pandas.DataFrame(rows, columns=columns)
    return [dict(zip(columns, r)) for r in rows]


def sweep(
    spec: Union[SweepSpec, PathLike],
    out: Optional[PathLike] = None,
    jobs: Optional[int] = None,
    shard: Union[Sequence[int], str, None] = None,
    resume: Optional[bool] = None,
    *,
    record_dir: Optional[PathLike] = None,
    force: bool = False,
):
    """Runs a sweep as ``cdpr sweep SPEC --out OUT`` does, with its options
    (``cdpr.options("sweep")``): on ``jobs`` threads (None or 0: every core), only shard
    ``(i, n)`` (or ``"i/n"``) if given, each run's steps recorded in ``record_dir`` when given,
    appending to ``out`` (resumed: runs already there are skipped, unless ``force``; ``resume=False``
    is ``force=True``). Returns the rows done by this call, by index — a DataFrame with pandas,
    else a list of dicts; ``sweep.last_summary`` holds the counts and runs per second."""
    s = sweep_spec(spec)
    if shard is not None and not isinstance(shard, str):
        shard = tuple(shard)
    rows, summary = s.execute(
        None if out is None else os.fspath(out),
        jobs,
        shard,
        resume,
        record_dir=None if record_dir is None else os.fspath(record_dir),
        force=force,
    )
    sweep.last_summary = summary
    return _rows(s.columns(), rows)


sweep.last_summary = None


_SPECS: Dict[str, SweepSpec] = {}


def sweep_run(spec_path: PathLike, index: int) -> Dict[str, Any]:
    """Run ``index`` of the spec file as a dict (one CSV row of ``cdpr sweep``): the unit of
    work to hand to Dask, Ray or any scheduler. The spec is read once per process."""
    key = os.fspath(spec_path)
    s = _SPECS.get(key)
    if s is None:
        s = _SPECS[key] = SweepSpec.load(key)
    return dict(zip(s.columns(), s.run(index)))
