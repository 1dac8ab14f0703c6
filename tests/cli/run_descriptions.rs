//! Runs describe themselves: a sidecar next to each CSV cdpr writes (`trajectory`,
//! `simulate`, a perturbed copy: `run.csv.meta.toml`), whose CSV starts with its header;
//! every reader skips comment lines (files written before the sidecar start with one), and
//! `report` titles come from the descriptions (on two lines when long, every text inside its
//! SVG), the sidecar's or an old file's comment line.

use crate::common::svg::{assert_texts_inside, texts};
use crate::common::*;
use cdpr_core::recording::sidecar;
use std::path::Path;

#[test]
fn report_titles_come_from_the_runs_and_commented_csvs_load_everywhere() {
    let dir = scratch("run_descriptions");
    let (reference, run, rep) = (dir.join("ref.csv"), dir.join("run.csv"), dir.join("report"));
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let o = cdpr(&with(
        "trajectory -r uvigo8 --name seed000 --speed 0.4 --out",
        &[&s(&reference)],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = cdpr(&with(
        "simulate -r uvigo8 -t seed000 --speed 0.4 --model elastic --control ideal --compensate --out",
        &[&s(&run)],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    // The CSV starts with its header; the description is in the sidecar.
    let first = |p: &Path| {
        let text = std::fs::read_to_string(p).expect("written");
        assert!(text.starts_with("t,"), "{}", &text[..text.len().min(80)]);
        assert!(std::path::PathBuf::from(format!("{}.meta.toml", p.display())).is_file());
        let meta = sidecar::read(p).expect("read").expect("a sidecar");
        assert_eq!(meta.robot.as_deref(), Some("uvigo8"), "{meta:?}");
        assert_eq!(meta.cdpr_version, env!("CARGO_PKG_VERSION"));
        let command = meta.command.expect("command");
        assert!(
            command.contains(" --out ") && command.contains(&*p.to_string_lossy()),
            "{command}"
        );
        meta.description
    };
    assert_eq!(
        first(&reference),
        "cdpr trajectory: robot uvigo8, trajectory seed000, speed 0.4 m/s"
    );
    assert_eq!(
        first(&run),
        "cdpr simulate: robot uvigo8, trajectory seed000, speed 0.4 m/s, model elastic, \
         control ideal, compensated, dt 0.001 s"
    );
    // Described files load in compare (both ways a run is compared) …
    let o = cdpr(&with(
        "compare --reference",
        &[&s(&reference), "--actual", &s(&run)],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = cdpr(&with(
        "compare --reference-columns _cmd --reference",
        &[&s(&run), "--actual", &s(&run)],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    // … as a trajectory (simulate and trajectory read CSVs), with comment lines anywhere.
    let text = std::fs::read_to_string(&reference).expect("read");
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(5, "# a note in the middle");
    let noted = dir.join("noted.csv");
    std::fs::write(&noted, lines.join("\n") + "\n").expect("written");
    let o = cdpr(&with("trajectory -r uvigo8 --name", &[&s(&noted)]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("samples"), "{}", stdout(&o));

    // A perturbed copy says how it was perturbed.
    let shadow = dir.join("shadow.csv");
    let o = cdpr(&with(
        "trajectory -r uvigo8 --delay 0.03 --lowpass 8 --offset 0,0,-0.0005 --resample 0.05 --name",
        &[&s(&reference), "--out", &s(&shadow)],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        first(&shadow),
        format!(
            "cdpr trajectory: robot uvigo8, trajectory {}, perturbed copy (delay 0.03 s, \
             low-pass 8 Hz, offset 0,0,-0.0005 m, resampled every 0.05 s)",
            s(&reference)
        )
    );

    // The report's title: the runs' descriptions, not the file names.
    let o = cdpr(&with(
        "report --reference",
        &[&s(&reference), "--actual", &s(&run), "--out", &s(&rep)],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(rep.join("report.md")).expect("report.md");
    let title = md.lines().next().expect("a title");
    assert_eq!(
        title,
        "# simulate: robot uvigo8, trajectory seed000, speed 0.4 m/s, model elastic, control \
         ideal, compensated, dt 0.001 s vs trajectory: robot uvigo8, trajectory seed000, speed \
         0.4 m/s"
    );
    // Too long for one line beside the legend: two lines in the header, nothing cut.
    let expected = title.trim_start_matches("# ");
    for name in ["axes", "error", "paths"] {
        let svg = std::fs::read_to_string(rep.join(format!("{name}.svg"))).expect("svg");
        let lines: Vec<String> = texts(&svg)
            .into_iter()
            .filter(|t| t.y < 64.0 && t.anchor == "start")
            .map(|t| t.content)
            .collect();
        assert_eq!(lines.join(" "), expected, "{name}.svg");
    }
    for name in ["axes", "error", "paths"] {
        assert_texts_inside(&rep.join(format!("{name}.svg")));
    }
    // A file without a description falls back to its stem.
    let bare = dir.join("bare-run.csv");
    std::fs::write(&bare, &text).expect("written");
    let rep2 = dir.join("report2");
    let o = cdpr(&with(
        "report --reference",
        &[&s(&bare), "--actual", &s(&run), "--out", &s(&rep2)],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(rep2.join("report.md")).expect("report.md");
    assert!(
        md.lines().next().unwrap_or("").ends_with(" vs bare-run"),
        "{md}"
    );
    // A file written before the sidecar: its first comment line describes it.
    let old = dir.join("old-run.csv");
    std::fs::write(&old, format!("# cdpr trajectory: an old one\n{text}")).expect("written");
    let rep4 = dir.join("report4");
    let o = cdpr(&with(
        "report --reference",
        &[&s(&old), "--actual", &s(&run), "--out", &s(&rep4)],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(rep4.join("report.md")).expect("report.md");
    assert!(
        md.lines()
            .next()
            .unwrap_or("")
            .ends_with(" vs trajectory: an old one"),
        "{md}"
    );
    // The same run both ways: "description: platform vs commanded".
    let rep3 = dir.join("report3");
    let o = cdpr(&with(
        "report --reference-columns _cmd --reference",
        &[&s(&run), "--actual", &s(&run), "--out", &s(&rep3)],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(rep3.join("report.md")).expect("report.md");
    let title = md.lines().next().unwrap_or("");
    assert!(
        title.starts_with("# simulate: robot uvigo8") && title.ends_with(": platform vs commanded"),
        "{title}"
    );
}
