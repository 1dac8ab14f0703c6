"""`cdpr.preflight`: the `cdpr preflight --json` object, and a violation where it is known."""

import numpy as np
import pytest

import cdpr


def test_preflight_equals_cli(cdpr_bin):
    import json
    import subprocess

    got = cdpr.preflight("uvigo8", "seed000", profile="scurve", speed=1.5)
    o = subprocess.run(
        [cdpr_bin, "preflight", "--robot", "uvigo8", "--trajectory", "seed000", "--profile", "scurve",
         "--speed", "1.5", "--json"],
        capture_output=True, text=True,
    )
    assert o.returncode == 3, o.stderr
    assert got == json.loads(o.stdout)
    assert got["ok"] is False and got["first_violation"]["check"] == "velocity"


def test_leaving_the_box_is_found_at_the_closed_form_time():
    # x = 0.0003 + 0.08 t at z = 0.15: uvigo8's box ends at x = 0.1, crossed at t = 1.24625 s.
    t = np.linspace(0.0, 2.0, 11)
    rows = np.column_stack([t, 0.0003 + 0.08 * t, np.zeros_like(t), np.full_like(t, 0.15)])
    r = cdpr.preflight("uvigo8", rows, columns=["t", "x", "y", "z"])
    first = r["first_violation"]
    assert first["check"] == "workspace" and first["subject"] == "x max"
    crossing = (0.1 - 0.0003) / 0.08
    assert crossing <= first["t"] <= crossing + 0.01 + 1e-9


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="step"):
        cdpr.preflight("uvigo8", "seed000", step=0.0)
    with pytest.raises(TypeError):
        cdpr.preflight("uvigo8", "seed000", model="chain")
