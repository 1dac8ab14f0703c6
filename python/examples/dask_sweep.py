"""The same sweep as `cdpr sweep SPEC.toml`, scaled out on Dask distributed.

Each task is one run (`cdpr.sweep_run(spec, index)`): the spec file is shipped by path, every
worker reads it once, and a run's result depends only on the spec and its index — so the rows
equal `cdpr sweep`'s whatever the cluster. Run it on a laptop (a LocalCluster) or point
`--scheduler` at a real cluster (dask-jobqueue on Slurm, dask-kubernetes, …):

    python python/examples/dask_sweep.py robots/sweeps/uvigo8-stiffness.toml --workers 2 --out runs.csv
    python python/examples/dask_sweep.py SPEC.toml --scheduler tcp://scheduler:8786
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import cdpr


def run_on_dask(spec_path: str, client, indices=None):
    """(rows sorted by index, wall seconds): every run of the spec as one Dask task."""
    spec_path = os.path.abspath(spec_path)
    spec = cdpr.SweepSpec.load(spec_path)
    indices = list(range(spec.count())) if indices is None else list(indices)
    started = time.perf_counter()
    futures = client.map(cdpr.sweep_run, [spec_path] * len(indices), indices, pure=False)
    rows = client.gather(futures)
    wall = time.perf_counter() - started
    return sorted(rows, key=lambda r: r["index"]), wall


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spec", help="sweep spec (TOML), as for `cdpr sweep`")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (default 2)")
    parser.add_argument("--scheduler", help="address of an existing Dask scheduler instead of a LocalCluster")
    parser.add_argument("--out", help="write the rows to this CSV (needs pandas)")
    args = parser.parse_args(argv)

    from dask.distributed import Client, LocalCluster

    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True)
        client = Client(cluster)
    with client:
        rows, wall = run_on_dask(args.spec, client)
    failed = sum(r["status"] != "ok" for r in rows)
    print(f"{len(rows)} runs in {wall:.2f} s ({len(rows) / wall:.1f} runs/s), {failed} failed", file=sys.stderr)
    if args.out:
        import pandas

        pandas.DataFrame(rows).to_csv(args.out, index=False)
        print(f"wrote {args.out}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
