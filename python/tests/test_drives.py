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


def test_prediction_finds_a_delay_and_its_figures_are_numpys():
    # A measured torque that is the predicted one 5 samples late, plus 0.02 N·m: the lag is
    # found, the offset stays at it, and the lag-0 figures are numpy's own.
    period = 0.01
    t = np.arange(800) * period
    predicted = np.stack([0.1 * np.sin(0.9 * t + k) for k in range(8)], axis=1)
    late = np.stack([0.1 * np.sin(0.9 * (t - 5 * period) + k) for k in range(8)], axis=1)
    measured = late + 0.02
    got = cdpr.prediction("uvigo8-drives", predicted, measured, period)
    assert len(got) == 8
    for k, e in enumerate(got):
        error = measured[:, k] - predicted[:, k]
        assert e["rms"] == pytest.approx(np.sqrt(np.mean(error**2)), rel=1e-12)
        assert e["max"] == pytest.approx(np.max(np.abs(error)), rel=1e-12)
        assert e["rms_percent"] == pytest.approx(100 * e["rms"] / 0.5, rel=1e-12)
        assert e["best_lag_s"] == pytest.approx(0.05, abs=1e-12)
        assert e["rms_at_best_lag"] == pytest.approx(0.02, rel=1e-6)
    # Lengths have no percentages; shapes and numbers are checked.
    lengths = cdpr.prediction("uvigo8", predicted, predicted, period, percent=False)
    assert all("rms_percent" not in e and e["rms"] == 0.0 for e in lengths)
    with pytest.raises(ValueError, match="one column per drive"):
        cdpr.prediction("uvigo8-drives", predicted[:, :7], measured[:, :7], period)
    with pytest.raises(ValueError, match="no drives"):
        cdpr.prediction("uvigo8", predicted, measured, period)
    bad = measured.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"measured\[3, 2\] is not a finite number"):
        cdpr.prediction("uvigo8-drives", predicted, bad, period)
