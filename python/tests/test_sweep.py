"""Sweeps from Python: `cdpr.sweep` equals `cdpr sweep`, and the Dask LocalCluster example
(two worker processes) gives the same rows."""

import csv
import importlib.util
import os
from pathlib import Path

import pytest

import cdpr

ROOT = Path(os.environ.get("CDPR_ROOT", Path(__file__).resolve().parents[2]))
SPEC = ROOT / "robots" / "sweeps" / "uvigo8-stiffness.toml"
# Columns that time the run (they differ from one execution to the next).
TIMING = {"wall_s", "rtf"}


def rows_of_csv(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def same(a, b):
    """Rows equal as the CLI writes them (numbers in shortest round-trip form)."""
    keys = [k for k in a if k not in TIMING]
    fmt = lambda v: "" if v is None else (repr(v) if isinstance(v, float) else str(v))
    return all(fmt(a[k]) == fmt(b[k]) or _num_eq(a[k], b[k]) for k in keys)


def _num_eq(x, y):
    try:
        return float(x) == float(y)
    except (TypeError, ValueError):
        return False


def records(frame):
    return frame.to_dict("records") if hasattr(frame, "to_dict") else frame


def test_python_sweep_equals_the_cli(cli, tmp_path):
    out = tmp_path / "cli.csv"
    cli("sweep", SPEC, "--out", out)
    want = sorted(rows_of_csv(out), key=lambda r: int(r["index"]))  # written as they finish
    got = records(cdpr.sweep(SPEC, jobs=2))
    assert len(got) == len(want) == cdpr.SweepSpec.load(str(SPEC)).count() == 12
    for g, w in zip(got, want):
        assert same(g, {k: w[k] for k in g}), (g, w)
    assert cdpr.sweep.last_summary["done"] == 12


def test_shards_and_resume_from_python(tmp_path):
    out = tmp_path / "runs.csv"
    first = records(cdpr.sweep(SPEC, out=out, shard=(0, 2)))
    assert sorted(r["index"] for r in first) == list(range(0, 12, 2))
    rest = records(cdpr.sweep(SPEC, out=out))  # resumed: only the odd runs remain
    assert sorted(r["index"] for r in rest) == list(range(1, 12, 2))
    assert cdpr.sweep.last_summary["skipped"] == 6
    assert sorted(int(r["index"]) for r in rows_of_csv(out)) == list(range(12))


def test_the_sweeps_options_from_python_are_the_command_lines(tmp_path):
    """A shard as text, a recording per run and an overwrite, each checked by core's table."""
    out = tmp_path / "runs.csv"
    first = records(cdpr.sweep(SPEC, out=out, shard="1/4", record_dir=tmp_path / "mcap"))
    assert sorted(r["index"] for r in first) == [1, 5, 9]
    assert sorted(p.name for p in (tmp_path / "mcap").iterdir()) == [
        "run-000001.mcap", "run-000005.mcap", "run-000009.mcap"]
    again = records(cdpr.sweep(SPEC, out=out, shard=(1, 4), force=True))
    assert sorted(r["index"] for r in again) == [1, 5, 9]  # overwritten, not resumed
    assert sorted(int(r["index"]) for r in rows_of_csv(out)) == [1, 5, 9]
    with pytest.raises(ValueError, match="shard: .*I must be from 0 to N − 1 = 3, got 4"):
        cdpr.sweep(SPEC, shard=(4, 4))
    with pytest.raises(ValueError, match="jobs: must be a whole number from 1 to 1024"):
        cdpr.sweep(SPEC, jobs=5000)
    names = {o["name"] for o in cdpr.options("sweep")}
    assert names == {"jobs", "shard", "record_dir", "force", "dry_run"}


def test_one_run_is_a_dict_and_bad_indices_are_refused():
    row = cdpr.sweep_run(SPEC, 3)
    assert row["index"] == 3 and row["status"] == "ok" and row["rms_3d"] > 0
    with pytest.raises(ValueError, match="the spec has 12 runs"):
        cdpr.SweepSpec.load(str(SPEC)).run(12)
    with pytest.raises(cdpr.CdprError):
        cdpr.SweepSpec.from_toml("robots = ['uvigo8']\nbogus = 1\n", "bad.toml")


def test_dask_local_cluster_gives_the_same_rows():
    distributed = pytest.importorskip("dask.distributed")
    example = ROOT / "python" / "examples" / "dask_sweep.py"
    spec = importlib.util.spec_from_file_location("dask_sweep", example)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    want = records(cdpr.sweep(SPEC, jobs=1))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        rows, wall = module.run_on_dask(str(SPEC), client)
        workers = {w for w in client.scheduler_info()["workers"]}
    assert len(workers) == 2
    assert [r["index"] for r in rows] == list(range(12))
    for g, w in zip(rows, want):
        assert same(g, w), (g, w)
    assert wall > 0
