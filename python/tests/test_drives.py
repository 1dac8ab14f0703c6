"""The drives as built from Python: `cdpr.feedforward` equals `cdpr feedforward --out` read by
pandas' default reader, and its torques obey the motor equation of the robot file's numbers."""

import math
import subprocess

import numpy as np
import pandas as pd
import pytest

import cdpr


def test_feedforward_equals_the_cli_csv(cdpr_bin, tmp_path):
    out = tmp_path / "ff.csv"
    o = subprocess.run(
        [cdpr_bin, "feedforward", "--robot", "uvigo8-drives", "--trajectory", "poly5",
         "--speed", "0.5", "--out", str(out)],
        capture_output=True, text=True,
    )
    assert o.returncode == 0, o.stderr
    got = cdpr.feedforward("uvigo8-drives", "poly5", speed=0.5)
    frame = pd.read_csv(out)
    assert list(frame.columns) == got["columns"]
    assert np.array_equal(frame.to_numpy(), got["values"])  # bit for bit
    assert [d["drive"] for d in got["drives"]] == list(range(1, 9))


def test_feedforward_obeys_the_motor_equation():
    # robots/uvigo8-drives.toml: r, p, N, J, b, τ_c; ω₀ = 0.1 rad/s (the guide's drives page).
    r, p, n, j, b, tc = 0.025, 0.003, 5.0, 1.2e-5, 2.0e-5, 0.01
    rho = math.hypot(r, p / (2 * math.pi)) / n
    got = cdpr.feedforward("uvigo8-drives", "poly5", speed=0.5)
    table = dict(zip(got["columns"], got["values"].T))
    for i in range(1, 9):
        omega = table[f"payout_rate_{i}"] / rho
        expected = (j * table[f"payout_acceleration_{i}"] / rho + b * omega
                    + tc * np.tanh(omega / 0.1) - rho * table[f"winch_tension_{i}"])
        assert np.allclose(table[f"torque_{i}"], expected, rtol=1e-9, atol=1e-12)


def test_a_robot_without_drives_is_refused():
    with pytest.raises(cdpr.CdprError, match="describes no drives"):
        cdpr.feedforward("uvigo8", "poly5")
