"""What the Python face adds over the CLI: arrays, DataFrames, stepping by hand, threads."""

import threading
import time
import warnings

import numpy as np
import pytest

import cdpr


def test_robot_arrays_match_the_file():
    robot = cdpr.Robot.load("uvigo8")
    assert robot.frame_anchors.shape == (8, 3) and robot.platform_anchors.shape == (8, 3)
    ik = robot.ik(list(robot.home))
    # l_i = |a_i − (r + R b_i)| at home (no rotation): recomputed here from the arrays.
    home = robot.home
    lengths = np.linalg.norm(robot.frame_anchors - (home[:3] + robot.platform_anchors), axis=1)
    assert np.allclose(ik["lengths"], lengths, rtol=0, atol=1e-12)
    assert robot.to_dict()["name"] == "uvigo8" == robot.name
    assert "uvigo8" in cdpr.robot_names()


def test_an_angle_beyond_a_turn_in_radians_warns_as_the_cli_does():
    robot = cdpr.Robot.load("uvigo8")
    with pytest.warns(UserWarning, match=r"^pose: yaw 90 rad: did you mean degrees=True\?$"):
        robot.ik([0, 0, 0.15, 0, 0, 90])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        robot.ik([0, 0, 0.15, 0, 0, 90], degrees=True)
        robot.ik([0, 0, 0.15, 0, 0, 6.2])


def test_run_data_are_views_of_one_array():
    run = cdpr.simulate("silva4", "pickplace", speed=0.2, model="elastic", control="ideal")
    assert run.values.dtype == np.float64 and run.values.flags.c_contiguous
    z = run.column("z")
    assert np.shares_memory(z, run.values)  # no copy
    frame = run.data
    assert list(frame.columns[:4]) == ["t", "x_cmd", "y_cmd", "z_cmd"]
    assert np.array_equal(frame["z"].to_numpy(), z)
    assert set(run.segment) >= {""} or len(set(run.segment)) > 1


def test_trajectory_arrays_and_dataframes_run_like_the_builtin():
    robot = cdpr.Robot.load("uvigo8")
    # Sampled at the physics step (simulate's dt, 1 ms), as a name is.
    traj = cdpr.trajectory(robot, "seed000", dt=0.001, speed=0.2)
    by_name = cdpr.simulate(robot, "seed000", speed=0.2, model="elastic")
    by_array = cdpr.simulate(robot, traj.to_array(), model="elastic")
    by_frame = cdpr.simulate(robot, traj.to_dataframe(), model="elastic")
    # Same poses; the CSV path estimates velocities by finite differences, which the
    # length-mode drive does not use: the runs agree to rounding.
    assert np.allclose(by_array.actual(), by_name.actual(), atol=1e-9)
    assert np.array_equal(by_array.values, by_frame.values)
    # And a run compared with itself has zero error.
    assert cdpr.compare(by_array, by_array)["rms_3d"] == 0.0


def test_sim_by_hand_settles_where_statics_says():
    """Rest lengths = IK lengths at a pose: the platform sags to the elastic equilibrium
    that `equilibrium` finds by Newton's method (an independent computation)."""
    robot = cdpr.Robot.load("uvigo8")
    pose = [0.0, 0.0, 0.05]
    lengths = robot.ik(pose)["lengths"]
    sim = cdpr.Sim(robot, model="elastic", control="ideal", dt=0.001, pose=pose)
    sim.set_command(lengths)
    sim.step(3000)
    state = sim.state
    assert state["step"] == 3000 and abs(sim.time - 3.0) < 1e-9
    want = robot.equilibrium(sag_at=pose)["pose"]
    assert np.abs(state["pose"][:3] - np.array(want[:3])).max() < 5e-5
    sag = pose[2] - state["pose"][2]
    assert 0.5e-3 < sag < 3e-3  # the README's 0.9–2.8 mm on uvigo8
    assert state["tensions"].shape == (8,) and (state["tensions"] > 0).all()


def test_sim_rejects_a_command_of_the_wrong_size():
    sim = cdpr.Sim(cdpr.Robot.load("uvigo8"), model="elastic")
    with pytest.raises(cdpr.CdprError, match="3 values but the robot has 8 cables"):
        sim.set_command([1.0, 1.0, 1.0])


def test_long_runs_release_the_gil():
    """While simulate() runs in one thread, Python code keeps running in another."""
    ticks = 0
    running = threading.Event()
    done = threading.Event()

    def count():
        nonlocal ticks
        while not done.is_set():
            if running.is_set():
                ticks += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    running.set()
    cdpr.simulate("uvigo8", "seed000", speed=0.4, model="chain")
    running.clear()
    done.set()
    counter.join()
    # With the GIL held for the whole run the counter could tick at most once or twice (when
    # the main thread yields it before the call): counted, not timed.
    assert ticks >= 10, f"{ticks} ticks while simulate() ran"


def test_types_and_docstrings_are_there():
    assert cdpr.simulate.__doc__ and cdpr.Robot.load.__doc__ and cdpr.Sim.step.__doc__
    import importlib.resources as r

    files = r.files("cdpr")
    assert (files / "_cdpr.pyi").is_file() and (files / "py.typed").is_file()


def test_options_and_models_are_the_cores_tables():
    options = {o["name"]: o for o in cdpr.options()}
    assert {"speed", "dt", "model", "control", "compensate", "payload", "remove_lag"} <= set(options)
    dt = options["dt"]
    assert (dt["kind"], dt["min"], dt["max"], dt["default"], dt["unit"]) == ("number", 1e-5, 0.01, 0.001, "s")
    assert options["remove_lag"]["default"] is True
    models = [m["name"] for m in cdpr.models()]
    assert models == options["model"]["choices"]
    surrogate = next(m for m in cdpr.models() if m["name"] == "surrogate")
    assert surrogate["controls"] == ["ideal"] and surrogate["needs_surrogate"]
    # Every option simulate() documents is in its docstring, with its range.
    for name, o in options.items():
        if name not in ("robot", "trajectory"):
            assert f"    {name}: " in cdpr.simulate.__doc__, name


def test_keyword_arguments_are_checked_against_the_table():
    with pytest.raises(TypeError, match="did you mean 'speed'"):
        cdpr.simulate("uvigo8", "seed000", speeed=0.1)
    with pytest.raises(TypeError, match="not one of this function's"):
        cdpr.Sim(cdpr.Robot.load("uvigo8"), speed=0.1)
    with pytest.raises(ValueError, match="model: `rigid` is not one of chain, elastic or surrogate"):
        cdpr.simulate("uvigo8", "seed000", model="rigid")
    with pytest.raises(ValueError, match="substeps: must be a whole number from 1 to 100, got 0"):
        cdpr.Sim(cdpr.Robot.load("uvigo8"), model="chain", substeps=0)


def _box_signed_distance(p, lo, hi):
    q = np.maximum(lo - p, p - hi)
    return np.linalg.norm(np.maximum(q, 0.0), axis=-1) + np.minimum(q.max(axis=-1), 0.0)


def test_interference_distances_match_brute_force_sampling():
    robot = cdpr.Robot.load("silva4-obstacle")
    lo, hi = np.array([-0.07, -0.07, 0.0]), np.array([0.07, 0.07, 0.38])  # the crate, from the file
    pose = np.array([0.15, 0.05, 0.25, 0.0, 0.0, 0.0])
    r = robot.interference(pose, clearance=0.02)
    assert r["clearance"] == 0.02
    cable_crate = [p for p in r["pairs"] if p["kind"] == "cable_obstacle"]
    assert len(cable_crate) == 4
    s = np.linspace(0.0, 1.0, 200001)[:, None]
    for pair in cable_crate:
        i = next(part["cable"] for part in (pair["a"], pair["b"]) if "cable" in part)
        a = robot.frame_anchors[i]
        b = pose[:3] + robot.platform_anchors[i]
        brute = _box_signed_distance(a + s * (b - a), lo, hi).min()
        assert abs(pair["distance"] - brute) < 1e-5, (pair, brute)
    assert r["violations"] == [p for p in r["pairs"] if p["distance"] < p["limit"]]
    # The platform sunk into the crate is flagged; the default clearance is the CLI's.
    inside = robot.interference([0.0, 0.0, 0.2])
    assert inside["clearance"] == 0.01
    assert any(v["kind"] == "platform_obstacle" for v in inside["violations"])
    with pytest.raises(ValueError, match="clearance"):
        robot.interference([0.0, 0.0, 0.2], clearance=-1.0)


def test_every_request_table_is_each_functions_keywords():
    """The type stub's keyword-only arguments of each function are its command's table, with
    the table's defaults; and each is taken at run time."""
    import ast
    import importlib.resources as r

    stub = ast.parse((r.files("cdpr") / "_cdpr.pyi").read_text())
    functions = {}
    for node in ast.walk(stub):
        if isinstance(node, ast.ClassDef):
            for f in node.body:
                if isinstance(f, ast.FunctionDef):
                    functions[f"{node.name}.{f.name}"] = f
        elif isinstance(node, ast.FunctionDef) and node.col_offset == 0:
            functions[node.name] = node
    cases = {
        "Robot.workspace": ("workspace", {"step"}),
        "preflight": ("preflight", set()),
        "feedforward": ("feedforward", set()),
        "compare": ("compare", set()),
        "Robot.fk": ("fk", set()),
    }
    for function, (command, not_python) in cases.items():
        table = {o["name"]: o for o in cdpr.options(command) if o["name"] not in not_python}
        f = functions[function]
        # Keyword-only arguments are the table's; a function may take options positionally
        # too (`fk(lengths, guess, method, max_residual)`), with the table's defaults.
        positional = list(zip(f.args.args[len(f.args.args) - len(f.args.defaults):], f.args.defaults))
        taken = {
            a.arg: ast.literal_eval(d) if d is not None else None
            for a, d in positional + list(zip(f.args.kwonlyargs, f.args.kw_defaults))
        }
        kwonly = {a.arg for a in f.args.kwonlyargs}
        assert kwonly <= set(table) <= set(taken), (function, kwonly, set(table), set(taken))
        stubbed = {name: taken[name] for name in table}
        for name, o in table.items():
            default = o["default"] if o["kind"] != "choice" or o["default"] else None
            if isinstance(o["default"], str) and o["kind"] not in ("choice", "name"):
                default = None  # a default in words ("the robot file's")
            assert stubbed[name] == default, (function, name, stubbed[name], o["default"])
    # A sweep's execute takes the sweep's table (less the command line's listing), `out` and
    # `resume` (the other spelling of `force`) besides.
    f = functions["SweepSpec.execute"]
    taken = {a.arg for a in f.args.args + f.args.kwonlyargs} - {"self", "out", "resume"}
    table = {o["name"] for o in cdpr.options("sweep")} - {"dry_run"}
    assert taken == table, taken ^ table
    # The wrapper's keywords carry the table's defaults too.
    import inspect

    wrapper = inspect.signature(cdpr.compare).parameters
    for o in cdpr.options("compare"):
        assert wrapper[o["name"]].default == o["default"], o["name"]
    robot = cdpr.Robot.load("silva4")
    with pytest.raises(ValueError, match="grid: must be a whole number from 2 to 400"):
        robot.workspace(grid=1)
    with pytest.raises(TypeError, match="did you mean 'grid'"):
        robot.workspace(gird=6)
    lengths = list(robot.ik(list(robot.home))["lengths"])
    with pytest.raises(ValueError, match="max_residual"):
        robot.fk(lengths, max_residual=0.0)
    # The options positionally, in the order fk always took them, as by keyword.
    assert robot.fk(lengths, None, "sphere", 1e-3) == robot.fk(lengths, method="sphere")
    with pytest.raises(ValueError, match="method: `plum` is not one of"):
        robot.fk(lengths, None, "plum")
    with pytest.raises(ValueError, match="max_lag"):
        cdpr.compare("x.csv", "y.csv", max_lag=-1.0)
