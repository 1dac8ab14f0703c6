"""Type stubs of cdpr's native module (crates/cdpr-py). Every numeric argument is SI:
metres, radians (unless ``degrees=True``), kilograms, newtons, seconds."""

from os import PathLike
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

class CdprError(Exception):
    """An error of the cdpr core, with the message the `cdpr` command prints after `error: `."""

    run: Any

Pose = Sequence[float]
TrajectorySource = Union[str, npt.NDArray[np.float64]]

def robot_names() -> List[str]:
    """Names of the shipped robots."""

class Robot:
    """A robot: a shipped one by name or a robot file (TOML), validated as `cdpr check`."""

    @staticmethod
    def load(name_or_path: str) -> Robot:
        """Loads a robot: a file path, or the name of a shipped robot."""
    @staticmethod
    def from_toml(text: str, origin: str = "<string>") -> Robot:
        """Parses a robot file's text; `origin` names it in error messages."""
    def with_payload(self, mass: float) -> Robot:
        """The same robot with a total moving mass of `mass` kg, like `--payload`."""
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def is_cable_robot(self) -> bool: ...
    @property
    def mass(self) -> float: ...
    @property
    def cable_names(self) -> List[str]: ...
    @property
    def frame_anchors(self) -> npt.NDArray[np.float64]:
        """(m, 3) frame anchors a_i, world frame, m."""
    @property
    def platform_anchors(self) -> npt.NDArray[np.float64]:
        """(m, 3) platform anchors b_i, platform frame, m."""
    @property
    def home(self) -> npt.NDArray[np.float64]:
        """Home pose (x, y, z, roll, pitch, yaw)."""
    def to_dict(self) -> Dict[str, Any]:
        """The robot as `cdpr check --json` prints it."""
    def ik(self, pose: Pose, degrees: bool = False) -> Dict[str, Any]:
        """`cdpr ik --json`: lengths, directions, seed 000's angles (legs: actuators)."""
    def fk(
        self,
        lengths: Sequence[float],
        guess: Optional[Pose] = None,
        method: str = "lm",
        max_residual: float = 0.001,
        degrees: bool = False,
    ) -> Dict[str, Any]:
        """`cdpr fk --json`: pose, residual, iterations ("lm" or seed 003's "sphere")."""
    def tensions(
        self,
        pose: Pose,
        f_min: Optional[float] = None,
        f_max: Optional[float] = None,
        degrees: bool = False,
    ) -> Dict[str, Any]:
        """`cdpr tensions --json`: minimum-2-norm tensions within the bounds."""
    def equilibrium(
        self,
        rest_lengths: Optional[Sequence[float]] = None,
        sag_at: Optional[Pose] = None,
        pretensioned_at: Optional[Pose] = None,
        guess: Optional[Pose] = None,
        f_min: Optional[float] = None,
        f_max: Optional[float] = None,
        degrees: bool = False,
    ) -> Dict[str, Any]:
        """`cdpr equilibrium --json`: where elastic unilateral cables hold the platform."""
    def workspace(
        self,
        plot: Optional[Union[str, PathLike[str]]] = None,
        *,
        grid: int = 30,
        region: Optional[Sequence[float]] = None,
        orientation: Optional[float] = None,
        levels: int = 3,
        f_min: Optional[float] = None,
        f_max: Optional[float] = None,
        min_tension: float = 5.0,
        interference: Union[bool, float] = False,
        clearance: float = 0.01,
    ) -> Dict[str, Any]:
        """`cdpr workspace --json`: the wrench-feasible workspace on a grid³ (`interference`:
        True, or a clearance in m, as `--interference --clearance`)."""
    def interference(
        self, pose: Pose, clearance: Optional[float] = None, degrees: bool = False
    ) -> Dict[str, Any]:
        """Every pair's distance at `pose` and those closer than `clearance` (m)."""

class Sim:
    """The physics core stepped by hand: `set_command`, then `step(n)`; `state` after."""

    def __init__(
        self,
        robot: Robot,
        pose: Optional[Pose] = None,
        degrees: bool = False,
        **options: Any,
    ) -> None:
        """At rest at `pose` (default home); `options`: the physics run options (`model`,
        `control`, `dt`, `substeps`, `pgs`, `link_mass`, `cable_nodes`, `surrogate`,
        `combine`)."""
    def set_command(self, values: Sequence[float]) -> None:
        """Payouts (m; control "length"/"ideal") or tensions (N; "tension"), one per cable."""
    def step(self, n: int = 1) -> None:
        """Advances `n` fixed steps with the GIL released."""
    @property
    def time(self) -> float: ...
    @property
    def state(self) -> Dict[str, Any]:
        """time, step, pose (6), twist (6), winch, lengths, tensions (at the platform),
        winch_tensions (winch side of the pulleys), wrench_residual."""

def trajectory(
    robot: Robot,
    name: str,
    dt: Optional[float] = None,
    **options: Any,
) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.int64], List[str]]:
    """(t, pose (n, 6), segment index, segment names) of a built-in or a CSV trajectory;
    `options`: the trajectory run options (`speed`, `profile`, `accel`, `jerk`, `transition`)."""

def simulate(
    robot: Robot,
    trajectory: TrajectorySource,
    columns: Optional[Sequence[str]] = None,
    **options: Any,
) -> Tuple[Dict[str, Any], List[str], npt.NDArray[np.float64], List[str]]:
    """(`cdpr simulate --json`'s object, column names, (n, k) values, segment per row);
    `options`: every run option but `robot` and `trajectory` (see `options()`)."""

def options(command: Optional[str] = None) -> List[Dict[str, Any]]:
    """An options table: name, group, kind, unit, min, max, choices, default, help; the run
    options', or those of "workspace", "preflight", "feedforward", "compare", "fk" or "sweep"."""

def models() -> List[Dict[str, Any]]:
    """The models' table: name, help, controls, legs, needs_surrogate, swept."""

def feedforward(
    robot: Robot,
    trajectory: TrajectorySource,
    columns: Optional[Sequence[str]] = None,
    *,
    difference_step: float = 0.001,
    plain_lengths: bool = False,
    **options: Any,
) -> Dict[str, Any]:
    """`cdpr feedforward`'s table: ``columns``, ``values`` (one row per sample), ``drives``."""
    ...

def prediction(
    robot: Robot,
    predicted: Any,
    measured: Any,
    period: float,
    percent: bool = True,
) -> List[Dict[str, Any]]:
    """Per drive the RMS and largest measured − predicted and the best-aligning lag."""
    ...

def preflight(
    robot: Robot,
    trajectory: TrajectorySource,
    columns: Optional[Sequence[str]] = None,
    *,
    step: float = 0.001,
    angle_step: float = 0.001,
    time_step: float = 0.01,
    clearance: float = 0.01,
    f_min: Optional[float] = None,
    f_max: Optional[float] = None,
    **options: Any,
) -> Dict[str, Any]:
    """`cdpr preflight --json`'s object for a trajectory on a robot."""
    ...

def compare(
    reference: TrajectorySource,
    actual: TrajectorySource,
    reference_columns: Optional[Sequence[str]] = None,
    actual_columns: Optional[Sequence[str]] = None,
    *,
    reference_suffix: str = "",
    actual_suffix: str = "",
    remove_lag: bool = True,
    max_lag: float = 1.0,
) -> Dict[str, Any]:
    """`cdpr compare --json`: seed 000's metrics of `actual` against `reference`."""

class SweepSpec:
    """A sweep's spec (`cdpr sweep SPEC.toml`): its runs one at a time or on a thread pool."""

    @staticmethod
    def load(path: Union[str, PathLike[str]]) -> SweepSpec: ...
    @staticmethod
    def from_toml(text: str, origin: str = "<string>") -> SweepSpec: ...
    def count(self) -> int: ...
    def columns(self) -> List[str]: ...
    def run(self, index: int) -> List[Any]:
        """Run `index`'s row (GIL released); a failed run has status "error"."""
    def execute(
        self,
        out: Optional[Union[str, PathLike[str]]] = None,
        jobs: Optional[int] = None,
        shard: Union[Tuple[int, int], str, None] = None,
        resume: Optional[bool] = None,
        *,
        record_dir: Optional[Union[str, PathLike[str]]] = None,
        force: bool = False,
    ) -> Tuple[List[List[Any]], Dict[str, Any]]:
        """(rows done now, summary) of the sweep with `cdpr sweep`'s options (`options("sweep")`):
        `jobs` threads (None or 0: every core), shard (i, n) or "i/n", `record_dir` for each
        run's MCAP, `force` (or `resume=False`) to overwrite `out`."""
