//! The whole headless job as `cdpr simulate --model elastic` runs it (uvigo8, seed000 at
//! 0.1 m/s, dt 1 ms, 31 395 steps): loading, physics, digest, metrics, and the file when there
//! is one. The figure to compare with a bare physics step (`--bench sim`) and with MuJoCo's
//! step of the exported model: per step, the job's time over 31 395.
//! Run: cargo bench --no-default-features --bench job

use cdpr_core::job::{Job, Sink};
use cdpr_core::recording::sidecar::Sidecar;
use cdpr_core::run::RunRequest;
use cdpr_core::sim::ModelKind;
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn request() -> RunRequest {
    RunRequest {
        robot: Some("uvigo8".into()),
        trajectory: Some("seed000".into()),
        model: ModelKind::ELASTIC,
        ..RunRequest::default()
    }
}

fn benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("job_elastic_uvigo8_seed000");
    group.sample_size(10);
    group.bench_function("report_only", |b| {
        b.iter(|| {
            let job = Job::new(&request()).expect("prepares");
            black_box(job.run(Sink::None, &mut |_| {}, None).expect("runs"))
        })
    });
    let dir = std::env::temp_dir().join(format!("cdpr-bench-job-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for name in ["run.csv", "run.mcap"] {
        let path = dir.join(name);
        group.bench_function(name.replace('.', "_"), |b| {
            b.iter(|| {
                let job = Job::new(&request()).expect("prepares");
                let sink = Sink::File {
                    path: &path,
                    meta: Sidecar::new("bench"),
                };
                black_box(job.run(sink, &mut |_| {}, None).expect("runs"))
            })
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(job, benches);
criterion_main!(job);
