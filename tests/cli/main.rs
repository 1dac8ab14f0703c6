//! The `cdpr` binary's integration tests, as one test binary (each file in `tests/` would be a
//! binary of its own, linked against every dependency: linking dominated a cold `cargo test`).
//! One module per command or behaviour checked; `tests/common` drives the real binary.
//!
//! Run one module: `cargo test --test cli simulate::` (or a test's name).
//! The window tests (`tests/viewer_screenshot.rs`) and the Python package
//! (`tests/python_package.rs`) are binaries of their own: libtest-mimic harnesses that report
//! what the machine lacks as skipped.

#[path = "../common/mod.rs"]
mod common;

/// Work budgets: products of options and oversized inputs refused with the numbers.
mod budgets;
/// `cdpr compare`.
mod compare;
/// Every CSV cdpr writes opens with pandas' and numpy's defaults (header first, no comment).
mod csv_readers;
/// The drives as built: feed-forward, torques in runs and pre-flight.
mod drives;
/// Each cause and each name said once in an error.
mod error_messages;
/// `cdpr export --mjcf`.
mod export;
/// The user guide's command examples run; its links resolve.
mod guide_examples;
/// The help texts, completion scripts, a build without the viewer.
mod help;
/// Help texts: every option and argument explained, the shipped robots named once.
mod help_texts;
/// Every typed option of every subcommand against the hostile values.
mod hostile_numbers;
/// Numbers in the wrong unit or the wrong file: hints rather than a later failure.
mod input_hints;
/// `cdpr ik`, `fk`, `tensions`, `equilibrium`.
mod kinematics_statics;
/// The robots with rigid legs (keops, rssu2) through the binary.
mod legged_robots;
/// `--foxglove`: the live view of `cdpr plc` and `cdpr shadow`.
mod live_view;
/// The model and option tables reach every face: help, sweeps, the viewer's picker.
mod model_registry;
/// Numbers printed as people write them.
mod number_format;
/// `cdpr plc`: the virtual PLC process.
mod plc;
/// The SVG plots are readable.
mod plots;
/// No port starves another (2 000 idle connections at each, ADS and a viewer still served),
/// no flood floods the log.
mod ports;
/// `cdpr preflight`: violations found at the time computed independently; exit statuses.
mod preflight;
/// `cdpr proxy` between `cdpr shadow` and `cdpr plc`: a plant network's faults rehearsed.
mod proxy;
/// MCAP recordings checked by an independent reader (Python's `mcap`) against the CSV.
mod recordings;
/// `cdpr report`.
mod report;
/// `cdpr check` on good, bad and hostile robot files.
mod robot_files;
/// The one robot lookup rule: a name, robots/NAME.toml, NAME.toml; a path must exist.
mod robot_lookup;
/// `cdpr robots`.
mod robots_listing;
/// `cdpr discover`, `cdpr route add` against `cdpr plc`: the ADS UDP service.
mod route;
/// Runs describe themselves (the CSV's sidecar) and title their reports.
mod run_descriptions;
/// Secure ADS (TLS) on the wire, checked with the `openssl` command-line tool: `s_client`
/// against `cdpr plc --secure`, `s_server` standing in for a PLC's TLS endpoint.
mod secure_ads;
/// `cdpr shadow --secure` against `cdpr plc --secure`: shared CA and PSK, a mode's options,
/// plain ADS at Secure ADS's port.
mod secure_shadow;
/// `cdpr shadow` against `cdpr plc`: two processes over loopback ADS.
mod shadow;
/// `cdpr shadow` under faults: a lost PLC, signals during blocked waits, stalled samples.
mod shadow_faults;
/// Why `cdpr shadow` cannot reach its PLC, told apart.
mod shadow_unreachable_plc;
/// `cdpr simulate`.
mod simulate;
/// `cdpr surrogate fit` / `validate`, `simulate --model surrogate`.
mod surrogate;
/// `cdpr sweep`.
mod sweep;
/// Colour codes and status lines: terminal or pipe.
mod terminal_output;
/// `cdpr test`: suites, verdicts, JUnit read back by junitparser, the report, a PLC over ADS.
mod test_suites;
/// `cdpr trajectory`.
mod trajectory;
/// The viewer's app, headless, steps exactly as `cdpr simulate` (with the viewer only).
#[cfg(feature = "viewer")]
mod viewer_matches_simulate;
/// `cdpr workspace`.
mod workspace;
