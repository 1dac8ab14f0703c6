"""The Python package gives the CLI's results bit for bit, on the README's examples.

Both call the same core functions; these tests catch a face that drifts (another default,
another rounding, a lost column). Floats are compared with ==: the CLI prints them in their
shortest round-trip form, so equal text means equal bits.
"""

import csv
import functools
import json
import math
import subprocess

import numpy as np
import pytest

import cdpr

TIMING = {"wall_s", "rtf", "wall_split"}


def without_timing(report):
    return {k: v for k, v in report.items() if k not in TIMING and k != "escape_message"}


def test_ik_equals_cli(cli_json):
    robot = cdpr.Robot.load("uvigo8")
    assert robot.ik([0, 0, 0.15]) == cli_json("ik", "--robot", "uvigo8", "--pose", "0,0,0.15")
    assert robot.ik([0.1, -0.05, 0.2, 0.02, -0.01, 0.03]) == cli_json(
        "ik", "--robot", "uvigo8", "--pose", "0.1,-0.05,0.2,0.02,-0.01,0.03"
    )
    # Degrees as --degrees.
    assert robot.ik([0, 0, 0.15, 2, 0, 5], degrees=True) == cli_json(
        "ik", "--robot", "uvigo8", "--pose", "0,0,0.15,2,0,5", "--degrees"
    )


def test_ik_of_a_robot_with_legs_equals_cli(cli_json):
    assert cdpr.Robot.load("keops").ik([0, 0, -0.6]) == cli_json("ik", "--robot", "keops", "--pose", "0,0,-0.6")


def test_fk_equals_cli_on_seed003_table2(cli_json):
    lengths = [1.36206030, 1.42183276, 1.22378845, 1.15380164]
    got = cdpr.Robot.load("silva4").fk(lengths, method="sphere")
    want = cli_json("fk", "--robot", "silva4", "--method", "sphere", "--lengths", ",".join(map(str, lengths)))
    assert got == want
    # Seed 003's Table 2 point, independently of the CLI: (−100, 184.88, 471.62) mm.
    assert abs(got["pose"][0] + 0.1) < 1e-6 and abs(got["pose"][1] - 0.18488) < 1e-5


def test_tensions_equal_cli_with_payload(cli_json):
    robot = cdpr.Robot.load("caroca").with_payload(15)
    got = robot.tensions([0, 0, 1.5])
    assert got == cli_json("tensions", "--robot", "caroca", "--pose", "0,0,1.5", "--payload", "15")
    # Statics by hand: the vertical components of the tensions carry m g.
    a = robot.frame_anchors
    b = robot.platform_anchors
    l = a - (np.array([0, 0, 1.5]) + b)
    d = l / np.linalg.norm(l, axis=1)[:, None]
    assert abs(float(d[:, 2] @ np.array(got["tensions"])) - 15 * 9.81) < 1e-6


@pytest.mark.parametrize("how", ["sag_at", "pretensioned_at"])
def test_equilibrium_equals_cli(cli_json, how):
    got = cdpr.Robot.load("uvigo8").equilibrium(**{how: [0, 0, 0.05]})
    flag = "--" + how.replace("_", "-")
    assert got == cli_json("equilibrium", "--robot", "uvigo8", flag, "0,0,0.05")


def test_workspace_equals_cli(cli_json):
    got = cdpr.Robot.load("silva4").workspace(grid=6)
    want = cli_json("workspace", "--robot", "silva4", "--grid", "6", "--no-plot")
    assert without_timing(got) == without_timing(want)


def test_workspace_with_interference_equals_cli(cli_json):
    got = cdpr.Robot.load("silva4-obstacle").workspace(grid=10, interference=0.02)
    want = cli_json(
        "workspace", "--robot", "silva4-obstacle", "--grid", "10", "--no-plot",
        "--interference", "--clearance", "0.02",
    )
    assert without_timing(got) == without_timing(want)
    i = got["interference"]
    assert i["clearance"] == 0.02 and i["cells_by_kind"]["cable_obstacle"] > 0
    assert got["volume"]["volume"] <= i["volume_before"]


@functools.cache
def simulated(robot, trajectory, speed, **options):
    """cdpr.simulate(robot, trajectory, speed=speed, **options), run once per arguments."""
    return cdpr.simulate(robot, trajectory, speed=speed, **options)


def read_run_csv(path):
    with open(path) as f:
        rows = [r for r in csv.reader(line for line in f if not line.startswith("#"))]
    header, body = rows[0], rows[1:]
    values = np.array([[float(x) for x in r[:-1]] for r in body])
    return header, values, [r[-1] for r in body]


@pytest.mark.parametrize(
    "robot, trajectory, speed, extra",
    [
        ("uvigo8", "seed000", 0.1, []),  # the README's example (chain model, PID winches)
        ("silva4", "pickplace", 0.2, ["--model", "elastic", "--control", "ideal", "--compensate"]),
        ("keops", "seed000", 0.1, []),  # rigid legs: the chain model
        # Drives as built: the motor_torque_i, motor_velocity_i, following_error_i columns.
        ("uvigo8-drives", "poly5", 0.5, ["--model", "elastic", "--compensate"]),
    ],
)
def test_simulate_equals_cli_bit_for_bit(cdpr_bin, tmp_path, robot, trajectory, speed, extra):
    out = tmp_path / "run.csv"
    # The command line runs beside the Python run (simulate() releases the GIL).
    args = ["simulate", "--robot", robot, "--trajectory", trajectory, "--speed", speed,
            *extra, "--json", "--out", out]
    command = subprocess.Popen([cdpr_bin, "--quiet", *map(str, args)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    options = {}
    for flag, value in zip(extra[::2], extra[1::2]):
        options[flag[2:]] = value
    if "--compensate" in extra:
        options = {k: v for k, v in options.items() if k != "compensate"}
        options["compensate"] = True
    run = simulated(robot, trajectory, speed, **options)
    stdout, stderr = command.communicate()
    assert command.returncode in (0, 2), stderr
    want = json.loads(stdout)
    assert without_timing(run.report) == without_timing(want)
    header, values, segment = read_run_csv(out)
    assert header[:-1] == run.columns and header[-1] == "segment"
    assert values.shape == run.values.shape
    assert np.array_equal(values, run.values)  # bit for bit
    assert segment == list(run.segment)
    assert run["rms_3d"] == want["rms_3d"]


def test_the_readme_line():
    # cdpr.simulate("uvigo8", "seed000", speed=0.1)["rms_3d"], as run above.
    rms = simulated("uvigo8", "seed000", 0.1)["rms_3d"]
    # Seed 000's chain shadow at 100 mm/s: millimetres, not metres nor micrometres.
    assert 1e-4 < rms < 1e-2


def test_compare_equals_cli(cli, cli_json, tmp_path):
    ref, late = tmp_path / "ref.csv", tmp_path / "late.csv"
    cli("trajectory", "--name", "seed000", "--robot", "uvigo8", "--speed", "0.1", "--out", ref)
    cli("trajectory", "--name", "seed000", "--robot", "uvigo8", "--speed", "0.1", "--delay", "0.03",
        "--lowpass", "8", "--offset", "0,0,-0.0005", "--resample", "0.05", "--out", late)
    want = cli_json("compare", "--reference", ref, "--actual", late)
    assert cdpr.compare(str(ref), str(late)) == want
    # The 30 ms delay is found (within one 50 ms resampling step).
    assert abs(want["lag_s"] - 0.03) <= 0.05


def test_trajectory_equals_cli_csv(cli, tmp_path):
    out = tmp_path / "t.csv"
    cli("trajectory", "--name", "pickplace", "--robot", "uvigo8", "--speed", "0.2", "--dt", "0.001", "--out", out)
    with open(out) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    traj = cdpr.trajectory("uvigo8", "pickplace", dt=0.001, speed=0.2)
    assert len(traj) == len(rows)
    assert np.array_equal(traj.t, [float(r["t"]) for r in rows])
    assert np.array_equal(traj.pose[:, 2], [float(r["z"]) for r in rows])


def test_errors_carry_the_cli_message(cli):
    done = cli("ik", "--robot", "nope", "--pose", "0,0,0", check=False)
    assert done.returncode == 1
    with pytest.raises(cdpr.CdprError) as e:
        cdpr.Robot.load("nope")
    assert done.stderr.strip() == f"error: {e.value}"
    done = cli("simulate", "--robot", "uvigo8", "--trajectory", "nowhere.csv", check=False)
    with pytest.raises(cdpr.CdprError) as e:
        cdpr.simulate("uvigo8", "nowhere.csv")
    assert done.stderr.strip() == f"error: {e.value}"


def test_out_of_range_arguments_are_value_errors_worded_as_the_cli(cli):
    done = cli("simulate", "--robot", "uvigo8", "--trajectory", "seed000", "--speed", "100", check=False)
    assert done.returncode == 2
    with pytest.raises(ValueError) as e:
        cdpr.simulate("uvigo8", "seed000", speed=100)
    # "speed: must be between 1e-3 and 10 m/s, got 100" ~ "'--speed <M/S>': must be between …"
    assert str(e.value).split(": ", 1)[1] in done.stderr
    with pytest.raises(ValueError, match="dt: must be between"):
        cdpr.simulate("uvigo8", "seed000", dt=math.nan)
