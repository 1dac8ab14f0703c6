//! The Python package (`python/`, `import cdpr`) under `cargo test`: builds its abi3 wheel with
//! maturin from this checkout, installs it into the test's Python, and runs the pytest suite
//! (`python/tests`: results equal to the CLI's bit for bit, errors, the GIL released, the Dask
//! LocalCluster sweep, the MuJoCo cross-check of `cdpr export --mjcf`).
//!
//! Python comes from `CDPR_PYTHON` (default `.venv-ci/bin/python`, which `.ci/run` creates with
//! maturin, pytest, numpy, pandas, dask[distributed] and mujoco). Without it the test is
//! reported as ignored, its name saying `[SKIPPED: …]` and why, unless `CDPR_REQUIRE_PYTHON=1`
//! (CI sets it), when it fails. A libtest-mimic harness (`harness = false`): libtest cannot skip
//! at run time.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;

const NEEDS: &str = "import maturin, pytest, numpy";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn python() -> Result<PathBuf, String> {
    let candidate = std::env::var_os("CDPR_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join(".venv-ci/bin/python"));
    match Command::new(&candidate).args(["-c", NEEDS]).output() {
        Ok(o) if o.status.success() => Ok(candidate),
        Ok(o) => Err(format!(
            "{} lacks maturin/pytest/numpy ({}): set CDPR_PYTHON or run .ci/run",
            candidate.display(),
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("")
        )),
        Err(e) => Err(format!(
            "no Python at {} ({e}): set CDPR_PYTHON or run .ci/run",
            candidate.display()
        )),
    }
}

fn run(what: &str, command: &mut Command) -> Result<(), Failed> {
    let status = command
        .status()
        .map_err(|e| Failed::from(format!("{what}: cannot start: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({status})").into())
    }
}

/// The wheel built from this checkout (maturin, the dev profile: it shares the compiled
/// dependencies of `cargo test`), installed over any earlier one, then pytest.
fn build_install_and_test(python: &Path) -> Result<(), Failed> {
    let root = root();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let wheels = target.join("python-wheels");
    let _ = std::fs::remove_dir_all(&wheels);
    let mut maturin = Command::new(python);
    // Cargo's variables for this test (CARGO_MANIFEST_*, CARGO_PKG_*, …) would mislead the
    // cargo that maturin runs.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("CARGO_") && key != "CARGO_HOME" {
            maturin.env_remove(key.as_ref());
        }
    }
    run(
        "maturin build",
        maturin
            // No auditwheel repair (it needs patchelf): the wheel is installed right here.
            .args(["-m", "maturin", "build", "--profile", "dev", "--quiet"])
            .args(["--auditwheel", "skip", "--out"])
            .arg(&wheels)
            // python/pyproject.toml names the crate (crates/cdpr-py) and the features.
            .current_dir(root.join("python"))
            .env("CARGO_TARGET_DIR", &target),
    )?;
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|e| Failed::from(format!("reading {}: {e}", wheels.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| Failed::from(format!("no wheel in {}", wheels.display())))?;
    let name = wheel.file_name().map(|n| n.to_string_lossy().into_owned());
    if !name.as_deref().is_some_and(|n| n.contains("-abi3-")) {
        return Err(format!("{} is not an abi3 wheel", wheel.display()).into());
    }
    run(
        "pip install the wheel",
        Command::new(python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-deps",
                "--force-reinstall",
            ])
            .arg(&wheel),
    )?;
    run(
        "pytest python/tests",
        Command::new(python)
            .args(["-m", "pytest", "-q", "-ra", "-p", "no:cacheprovider"])
            .arg(root.join("python/tests"))
            // Imported from the installed wheel, not from the source tree.
            .current_dir(&target)
            .env("CDPR_BIN", env!("CARGO_BIN_EXE_cdpr"))
            .env("CDPR_ROOT", &root),
    )
}

fn main() {
    let args = Arguments::from_args();
    let required = std::env::var("CDPR_REQUIRE_PYTHON").is_ok_and(|v| v == "1");
    let trial = match python() {
        Ok(python) => Trial::test(
            "python_package_builds_installs_and_passes_pytest",
            move || build_install_and_test(&python),
        ),
        Err(why) if required => Trial::test(
            "python_package_builds_installs_and_passes_pytest",
            move || Err(format!("CDPR_REQUIRE_PYTHON=1 but {why}").into()),
        ),
        Err(why) => Trial::test(
            format!("python_package_builds_installs_and_passes_pytest [SKIPPED: {why}]"),
            || Ok(()),
        )
        .with_ignored_flag(true),
    };
    libtest_mimic::run(&args, vec![trial]).exit();
}
