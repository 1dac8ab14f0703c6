//! Every face lists the models of core's one table (`cdpr_core::sim::MODELS`) and the run
//! options of core's one table (`cdpr_core::run::OPTIONS`): a model or an option added there
//! reaches `--help`, the sweep spec and the viewer's picker without another edit (Python's
//! `cdpr.models()`/`cdpr.options()` are checked by python/tests).

use cdpr_core::options::Kind;
use cdpr_core::run::OPTIONS;
use cdpr_core::sim::MODELS;
use cdpr_core::sweep::Spec;
use std::process::Command;

fn help(command: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cdpr"))
        .args([command, "--help"])
        .output()
        .expect("cdpr runs");
    assert!(out.status.success(), "{command} --help");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The help text with its line wrapping undone (clap wraps at the terminal's width).
fn unwrapped(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_model_is_in_the_help_of_every_command_that_takes_one() {
    for command in ["simulate", "view", "shadow"] {
        let text = unwrapped(&help(command));
        for m in MODELS {
            assert!(
                text.contains(m.name),
                "`cdpr {command} --help` lacks {}",
                m.name
            );
            // Its help is said in the models' list under the options.
            let first_words: String = m
                .help
                .split_whitespace()
                .take(4)
                .collect::<Vec<_>>()
                .join(" ");
            assert!(
                text.contains(&first_words),
                "`cdpr {command} --help` lacks {}'s help ({first_words})",
                m.name
            );
        }
    }
}

#[test]
fn every_run_option_is_a_flag_of_simulate_with_its_range() {
    let text = unwrapped(&help("simulate"));
    for spec in OPTIONS {
        let flag = format!("--{}", spec.cli_flag());
        assert!(text.contains(&flag), "`cdpr simulate --help` lacks {flag}");
        if let Some(range) = spec.range_text() {
            assert!(
                text.contains(&range),
                "{flag}: its range `{range}` is not in the help"
            );
        }
        if let Kind::Choice(names) = spec.kind {
            for (name, _) in names() {
                assert!(text.contains(name), "{flag}: `{name}` is not in the help");
            }
        }
    }
}

#[test]
fn a_sweep_takes_every_swept_model_and_refuses_the_others_with_the_tables_reason() {
    for m in MODELS {
        let text = format!(
            "robots = [\"uvigo8\"]\ntrajectories = [\"poly5\"]\nmodel = \"{}\"\n",
            m.name
        );
        let parsed = Spec::from_text(&text, "spec.toml");
        match m.not_swept {
            None => {
                let spec = parsed.unwrap_or_else(|e| panic!("{}: {e}", m.name));
                assert_eq!(spec.run.model.name(), m.name);
            }
            Some(why) => {
                let e = parsed
                    .err()
                    .unwrap_or_else(|| panic!("{} is not swept", m.name));
                assert!(e.to_string().contains(why), "{e}");
            }
        }
    }
}

#[cfg(feature = "viewer")]
#[test]
fn the_viewers_picker_lists_the_models_that_need_no_parameter_file() {
    let picked: Vec<&str> = cdpr_viewer::model_choices()
        .iter()
        .map(|(m, _, _)| m.name())
        .collect();
    let expected: Vec<&str> = MODELS
        .iter()
        .filter(|m| !m.needs_surrogate)
        .map(|m| m.name)
        .collect();
    assert_eq!(picked, expected);
}
