"""`cdpr export --mjcf` cross-checked in MuJoCo (issue 17).

The exported model is stepped in MuJoCo on seed 000's trajectory with the rest lengths of a
`cdpr simulate --model elastic --control ideal --compensate` run, and the two platform paths are
compared; and the model's statics are checked against `cdpr equilibrium`, an independent
computation (a Newton search on the static balance, no time stepping).

Needs: the environment variable CDPR_BIN (path of the `cdpr` binary), numpy and mujoco
(`pip install mujoco`). Run:
    CDPR_BIN=target/debug/cdpr python -m pytest python/tests/test_mjcf.py -q
"""

import csv
import json
import os
import subprocess

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

CDPR = os.environ.get("CDPR_BIN")
if not CDPR:
    pytest.skip("set CDPR_BIN to the path of the cdpr binary", allow_module_level=True)

HOME = np.array([0.0, 0.0, 0.15])  # robots/uvigo8.toml `home`
DT = 0.001


def cdpr(*args, cwd=None):
    """Runs cdpr, fails the test with its stderr when it fails, returns its stdout."""
    r = subprocess.run([CDPR, *args], capture_output=True, text=True, cwd=cwd, timeout=600)
    assert r.returncode == 0, f"cdpr {' '.join(args)} failed ({r.returncode}): {r.stderr}"
    return r.stdout


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("mjcf")


@pytest.fixture(scope="module")
def xml(workdir):
    path = workdir / "uvigo8.xml"
    cdpr("export", "--robot", "uvigo8", "--mjcf", str(path), "--dt", str(DT))
    return path


def load(xml):
    model = mujoco.MjModel.from_xml_path(str(xml))
    return model, mujoco.MjData(model)


def settle(model, data, seconds):
    for _ in range(int(round(seconds / model.opt.timestep))):
        mujoco.mj_step(model, data)


def test_the_document_is_the_robot(xml):
    model, data = load(xml)
    assert model.ntendon == 8 and model.nu == 8 and model.nq == 7
    assert model.opt.timestep == DT
    np.testing.assert_allclose(model.opt.gravity, [0, 0, -9.81])
    body = model.body("platform")
    assert body.mass[0] == 1.0
    np.testing.assert_allclose(model.tendon_stiffness, 20000.0)
    np.testing.assert_allclose(model.tendon_damping, 50.0)
    np.testing.assert_allclose(model.site("upper0_frame").pos, [1.32545, 1.09656, 0.825])
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(data.qpos[:3], HOME)
    # The springs' dead band starts at 0: a cable only pulls, once longer than its rest length.
    assert (model.tendon_lengthspring[:, 0] == 0).all()
    stretch = data.ten_length - model.tendon_lengthspring[:, 1]
    assert (stretch > 0).all(), "every cable taut at home (pre-tensioned)"


@pytest.mark.parametrize("robot", ["uvigo8", "silva4", "caroca", "uvigo8-pulleys"])
def test_the_exported_model_hangs_at_home(workdir, robot):
    """The pre-tensioned rest lengths L0 = L − f*/k hold the platform at home in MuJoCo too
    (measured: 3e-13 mm on uvigo8 and caroca, 0 on silva4, after 3 s)."""
    xml = workdir / f"{robot}-home.xml"
    cdpr("export", "--robot", robot, "--mjcf", str(xml))
    model, data = load(xml)
    home = model.qpos0.copy()  # the body's pose in the file: the robot's home
    if robot == "uvigo8":
        np.testing.assert_allclose(home[:3], HOME)
    settle(model, data, 3.0)
    drift = np.linalg.norm(data.qpos[:3] - home[:3])
    assert drift < 1e-4, f"{robot}: the platform moved {drift * 1e3:.4f} mm from home"
    turn = 2 * np.arccos(min(1.0, abs(np.dot(data.qpos[3:7], home[3:7]))))
    assert turn < 1e-6, f"{robot}: the platform turned {turn} rad"
    assert np.linalg.norm(data.qvel) < 1e-6, "at rest"


def test_with_ik_rest_lengths_it_sags_as_cdpr_equilibrium_says(xml):
    """Rest lengths = IK lengths at home (no pre-stretch): the platform sags under its weight.
    MuJoCo's settled pose against cdpr's static equilibrium, found by a Newton search."""
    model, data = load(xml)
    mujoco.mj_forward(model, data)
    model.tendon_lengthspring[:, 1] = data.ten_length  # the IK lengths at home
    settle(model, data, 3.0)
    ours = json.loads(cdpr("equilibrium", "--robot", "uvigo8", "--sag-at", "0,0,0.15", "--json"))
    sag = -ours["displacement"][2]
    assert 0.9e-3 <= sag <= 2.8e-3, f"cdpr says uvigo8 sags {sag * 1e3:.3f} mm at home"
    diff = np.linalg.norm(data.qpos[:3] - np.array(ours["pose"][:3]))
    # Both are the same static balance: only the settling (damped to ~1e-10 m) is left.
    assert diff < 1e-6, (
        f"MuJoCo settles at {data.qpos[:3]}, cdpr equilibrium at {ours['pose'][:3]}: "
        f"{diff * 1e3:.4f} mm apart"
    )


def test_a_slack_cable_does_not_push(xml):
    """springlength="0 L0" is a dead band: a cable shorter than its rest length exerts no spring
    force (a two-sided spring would push the platform up). With every rest length 50 mm longer
    than the cable and the dampers off (MuJoCo's damper acts on slack cables too, ours does not),
    the platform falls freely: after n semi-implicit Euler steps z drops g·dt²·n(n+1)/2."""
    model, data = load(xml)
    mujoco.mj_forward(model, data)
    model.tendon_lengthspring[:, 1] = data.ten_length + 0.05
    model.tendon_damping[:] = 0
    n = 100
    for _ in range(n):
        mujoco.mj_step(model, data)
    assert (data.ten_length < model.tendon_lengthspring[:, 1]).all(), "still slack"
    drop = HOME[2] - data.qpos[2]
    assert drop == pytest.approx(9.81 * DT**2 * n * (n + 1) / 2, rel=1e-9)
    np.testing.assert_allclose(data.qpos[:2], 0, atol=1e-12)


def read_run(path):
    with open(path, newline="") as f:
        rows = [line for line in f if not line.startswith("#")]
    table = list(csv.DictReader(rows))
    t = np.array([float(r["t"]) for r in table])
    xyz = np.array([[float(r[k]) for k in ("x", "y", "z")] for r in table])
    cables = sum(1 for k in table[0] if k.startswith("length_cmd_"))
    rest = np.array([[float(r[f"length_cmd_{i}"]) for i in range(1, cables + 1)] for r in table])
    return t, xyz, rest


@pytest.fixture(scope="module")
def seed000_run(workdir):
    """seed 000's trajectory at 0.1 m/s in cdpr's elastic model with ideal winches: the payout
    is the command, so the CSV's `length_cmd_i` is cable i's rest length L0_i at that step
    (--compensate subtracts the pre-stretch f*/k so that the platform lands on target)."""
    run = workdir / "run.csv"
    cdpr(
        "simulate", "--robot", "uvigo8", "--trajectory", "seed000", "--speed", "0.1",
        "--model", "elastic", "--control", "ideal", "--compensate", "--dt", str(DT),
        "--out", str(run),
    )
    return read_run(run)


# MuJoCo − cdpr on seed000, m: (integrator, RMS limit, max limit). Measured with mujoco 4.0.0:
# implicitfast RMS 0.050 mm, max 0.080 mm; RK4 RMS 0.0014 mm, max 0.0070 mm; on a 202 mm path.
PATH_LIMITS = [("implicitfast", 0.1e-3, 0.2e-3), ("rk4", 0.01e-3, 0.03e-3)]


@pytest.mark.parametrize("integrator,rms_limit,max_limit", PATH_LIMITS)
def test_mujoco_follows_cdpr_on_seed000(workdir, seed000_run, integrator, rms_limit, max_limit):
    """The exported model stepped in MuJoCo with the run's rest lengths set every step
    (model.tendon_lengthspring[i] = [0, L0_i(t)]) follows cdpr's platform path.

    Both integrate the same equations (a rigid platform, unilateral spring-dampers whose damper
    acts on d(L − L0)/dt: the export's motors add c·dL0/dt, their ctrl set to the payout rate;
    without it the paths differ by 0.2 mm RMS), at the same step, from the same state. What is
    left is the integrators' own error. cdpr's is a Störmer–Verlet splitting (second order);
    MuJoCo's implicitfast is a semi-implicit Euler (first order): its difference from cdpr
    halves with the step (0.099, 0.050, 0.025 mm RMS at 2, 1, 0.5 ms) and is about half a step
    of travel, v·dt/2 = 0.05 mm at 0.1 m/s. With RK4 (fourth order) the two agree to microns."""
    t, ours, rest = seed000_run
    assert np.allclose(np.diff(t), DT)
    xml = workdir / f"uvigo8-{integrator}.xml"
    cdpr("export", "--robot", "uvigo8", "--mjcf", str(xml), "--dt", str(DT),
         "--integrator", integrator)
    model, data = load(xml)
    # Start where cdpr's run starts: at rest, where the first rest lengths hold the platform.
    data.qpos[:3] = ours[0]
    data.qpos[3:7] = [1, 0, 0, 0]
    data.qvel[:] = 0
    path = np.empty_like(ours)
    path[0] = data.qpos[:3]
    for n in range(1, len(t)):
        model.tendon_lengthspring[:, 1] = rest[n]
        data.ctrl[:] = (rest[n] - rest[n - 1]) / DT  # the payout rates, m/s
        mujoco.mj_step(model, data)
        path[n] = data.qpos[:3]
    diff = np.linalg.norm(path - ours, axis=1)
    rms, worst = np.sqrt(np.mean(diff**2)), diff.max()
    size = np.ptp(ours, axis=0).max()
    print(
        f"seed000 uvigo8 {integrator}: {len(t)} steps, path {size * 1e3:.0f} mm, MuJoCo − cdpr "
        f"RMS {rms * 1e3:.4f} mm, max {worst * 1e3:.4f} mm"
    )
    assert size > 0.15, "the path spans the test volume"
    assert rms < rms_limit and worst < max_limit, (
        f"RMS {rms * 1e3:.4f} mm, max {worst * 1e3:.4f} mm (limits {rms_limit * 1e3} and "
        f"{max_limit * 1e3} mm)"
    )


def rpy_quat(roll, pitch, yaw):
    """R = Rz(yaw)·Ry(pitch)·Rx(roll) as MuJoCo's quaternion w x y z."""
    cr, sr = np.cos(roll / 2), np.sin(roll / 2)
    cp, sp = np.cos(pitch / 2), np.sin(pitch / 2)
    cy, sy = np.cos(yaw / 2), np.sin(yaw / 2)
    return [
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    ]


PULLEY_POSES = [
    [0.0, 0.0, 0.15, 0.0, 0.0, 0.0],
    [0.05, -0.05, 0.10, 0.0, 0.0, 0.1],
    [-0.08, 0.06, 0.22, 0.05, -0.05, -0.1],
    [-0.1, -0.1, 0.05, 0.1, 0.1, 0.2],
]


@pytest.mark.parametrize("pose", PULLEY_POSES)
def test_pulleys_wrap_as_cdpr_ik_says(workdir, pose):
    """uvigo8-pulleys exported: each tendon runs from its _winch site (a lead-in upstream of the
    swivel point, the distance between the two sites) over its wheel to the platform, so its
    MuJoCo length minus the lead-in is cdpr's IK length (swivel point → wheel → platform).

    At home, where the wheels are turned, both are the same path: equal to rounding (measured
    4e-16 m). Away from home cdpr's wheel swivels by δγ so that its plane holds the platform
    anchor; MuJoCo's stays turned to home and wraps the cable round the fixed cylinder as a
    helix. The length then differs at second order in δγ (the swivel is where the length is
    stationary): measured with mujoco 4.0.0, |MuJoCo − cdpr| = 0.24 … 0.33 r δγ² on every
    cable at four poses across the workspace (δγ up to 0.083 rad: 5e-5 m), so the bound is
    0.5 r δγ², δγ from `cdpr ik`'s swivel angles here and at home."""
    xml = workdir / "uvigo8-pulleys.xml"
    if not xml.exists():
        cdpr("export", "--robot", "uvigo8-pulleys", "--mjcf", str(xml))
    model, data = load(xml)
    names = [model.tendon(i).name for i in range(model.ntendon)]
    assert len(names) == 8
    assert [int(model.tendon_num[i]) for i in range(8)] == [3] * 8, "winch, wheel, platform"
    assert sum(model.geom(g).name.endswith("_wheel") for g in range(model.ngeom)) == 8
    lead = np.array(
        [np.linalg.norm(model.site(f"{n}_winch").pos - model.site(f"{n}_frame").pos) for n in names]
    )
    np.testing.assert_allclose(lead, 0.1 * 0.025, rtol=1e-12)  # 0.1 r, r = 25 mm
    data.qpos[:3] = pose[:3]
    data.qpos[3:7] = rpy_quat(*pose[3:])
    mujoco.mj_forward(model, data)

    def ik(p):
        return json.loads(
            cdpr("ik", "--robot", "uvigo8-pulleys", "--pose", ",".join(map(str, p)), "--json")
        )

    ours, home = ik(pose), ik(PULLEY_POSES[0])
    diff = data.ten_length - lead - np.array(ours["lengths"])
    swivel = np.array(ours["swivel_angles"]) - np.array(home["swivel_angles"])
    bound = 0.5 * 0.025 * swivel**2 + 1e-12
    print(
        f"uvigo8-pulleys at {pose}: MuJoCo − cdpr max {np.abs(diff).max():.3e} m, "
        f"δγ max {np.abs(swivel).max():.4f} rad"
    )
    assert (np.abs(diff) <= bound).all(), f"{diff} against {bound} m"
    if pose != PULLEY_POSES[0]:
        # Not vacuous: the fixed wheel does change the length (the bound is not loose).
        assert (np.abs(diff) > 0.1 * 0.025 * swivel**2).all(), f"{diff}"
