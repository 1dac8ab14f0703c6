"""Runs per second of a sweep on 1 thread, all threads and a 2-worker Dask LocalCluster (README table)."""
import time, sys, os, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdpr, dask_sweep
from dask.distributed import LocalCluster, Client
base = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../robots/sweeps/uvigo8-stiffness.toml")).read()
specs = {}
for n, pay in [(12, "[0.0, 0.5]"), (48, "[0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75]")]:
    text = base.replace("payload = [0.0, 0.5]", "payload = " + pay)
    p = os.path.join(tempfile.gettempdir(), f"cdpr-spec{n}.toml"); open(p, "w").write(text); specs[n] = p
def main():
    cl = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None); c = Client(cl)
    for n, p in specs.items():
        assert cdpr.SweepSpec.load(p).count() == n
        r = {}
        for jobs in (1, 2):
            cdpr.sweep(p, jobs=jobs); r[jobs] = cdpr.sweep.last_summary["runs_per_s"]
        dask_sweep.run_on_dask(p, c)  # warm the workers
        rows, wall = dask_sweep.run_on_dask(p, c)
        print(f"{n} runs: 1 core {r[1]:.1f} runs/s, 2 cores {r[2]:.1f} runs/s, LocalCluster(2) {n/wall:.1f} runs/s")
    c.close(); cl.close()

if __name__ == '__main__':
    main()
