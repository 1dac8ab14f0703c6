//! Issue 15 (plots2): runs describe themselves (a first `#` comment line in the CSVs cdpr
//! writes), every reader skips comment lines, `report` titles come from the descriptions, and
//! no text of a report or workspace plot lies outside its SVG.

mod common;

use common::*;
use std::path::Path;

/// Every `<text>` element of an SVG: (x, y of the baseline, font size, anchor, content).
fn texts(svg: &str) -> Vec<(f64, f64, f64, String, String)> {
    let mut out = Vec::new();
    for chunk in svg.split("<text").skip(1) {
        let Some((attrs, rest)) = chunk.split_once('>') else {
            continue;
        };
        let content = rest
            .split("</text>")
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        let attr = |name: &str| -> Option<String> {
            let start = attrs.find(&format!(" {name}=\""))? + name.len() + 3;
            let end = attrs[start..].find('"')? + start;
            Some(attrs[start..end].to_string())
        };
        let number = |name: &str| attr(name).and_then(|v| v.parse::<f64>().ok());
        let (Some(x), Some(y), Some(size)) = (
            number("x").or(Some(0.0)),
            number("y").or(Some(0.0)),
            number("font-size"),
        ) else {
            continue;
        };
        let anchor = attr("text-anchor").unwrap_or_else(|| "start".into());
        // The baseline: y shifted by dy (`0.5ex`, `-0.5ex`, `0.76em`; an ex is ~0.5 em).
        let dy = attr("dy").map_or(0.0, |d| {
            let (value, em) = match d.strip_suffix("em") {
                Some(v) => (v, 1.0),
                None => (d.strip_suffix("ex").unwrap_or(&d), 0.5),
            };
            value.parse::<f64>().unwrap_or(0.0) * em * size
        });
        let y = if attrs.contains("rotate(") { y } else { y + dy };
        out.push((x, y, size, anchor, content));
    }
    out
}

fn size_of(svg: &str) -> (f64, f64) {
    let attr = |name: &str| -> f64 {
        let start = svg.find(&format!("{name}=\"")).expect("svg size") + name.len() + 2;
        let end = svg[start..].find('"').expect("quote") + start;
        svg[start..end].parse().expect("a number")
    };
    (attr("width"), attr("height"))
}

/// Asserts that every text of the SVG at `path` lies inside its width × height, its width
/// estimated as 0.5 em a character (sans-serif digits and lower case are 0.5–0.56 em; the
/// test is for text drawn past the edge, not a pixel or two).
fn assert_texts_inside(path: &Path) {
    let svg = std::fs::read_to_string(path).expect("svg written");
    let (width, height) = size_of(&svg);
    let all = texts(&svg);
    assert!(!all.is_empty(), "{}: no text", path.display());
    for (x, y, size, anchor, content) in all {
        let w = 0.5 * size * content.chars().count() as f64;
        let (left, right) = match anchor.as_str() {
            "end" => (x - w, x),
            "middle" => (x - w / 2.0, x + w / 2.0),
            _ => (x, x + w),
        };
        let rotated = svg.contains(&format!("rotate(270, {x}, {y})"))
            || svg.contains(&format!("rotate(270,{x},{y})"))
            || svg.contains(&format!("rotate(270, {x},{y})"));
        let (left, right, top, bottom) = if rotated {
            // rotate(270) about (x, y) after dy = 0.76 em: the glyphs stand in x .. x + 1 em.
            (x, x + size, y - right + x, y - left + x)
        } else {
            // Capitals rise ~0.72 em above the baseline, descenders reach ~0.21 em below.
            (left, right, y - 0.75 * size, y + 0.22 * size)
        };
        assert!(
            left >= -1.0 && right <= width + 1.0 && top >= -1.0 && bottom <= height + 1.0,
            "{}: `{content}` ({size} px at {x},{y}, {anchor}) spans x {left:.0}..{right:.0}, \
             y {top:.0}..{bottom:.0}: outside {width}×{height}",
            path.display()
        );
    }
}

#[test]
fn report_titles_come_from_the_runs_and_commented_csvs_load_everywhere() {
    let dir = scratch("report-titles");
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
    let first = |p: &Path| {
        let text = std::fs::read_to_string(p).expect("written");
        text.lines().next().expect("a line").to_string()
    };
    assert_eq!(
        first(&reference),
        "# cdpr trajectory: robot uvigo8, trajectory seed000, speed 0.4 m/s"
    );
    assert_eq!(
        first(&run),
        "# cdpr simulate: robot uvigo8, trajectory seed000, speed 0.4 m/s, model elastic, \
         control ideal, compensated, dt 0.001 s"
    );
    // Commented files load in compare (both ways a run is compared) …
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
            "# cdpr trajectory: robot uvigo8, trajectory {}, perturbed copy (delay 0.03 s, \
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
            .filter(|t| t.1 < 64.0 && t.3 == "start")
            .map(|t| t.4)
            .collect();
        assert_eq!(lines.join(" "), expected, "{name}.svg");
    }
    for name in ["axes", "error", "paths"] {
        assert_texts_inside(&rep.join(format!("{name}.svg")));
    }
    // A file without a description falls back to its stem.
    let bare = dir.join("bare-run.csv");
    let body: Vec<&str> = text.lines().skip(1).collect();
    std::fs::write(&bare, body.join("\n") + "\n").expect("written");
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

#[test]
fn surrogate_messages_name_the_model_and_round_the_bounds() {
    let dir = scratch("report-titles-surrogate");
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let run = dir.join("run.csv");
    let o = cdpr(&with(
        "simulate -r uvigo8 -t seed000 --speed 0.4 --model elastic --control ideal --compensate --out",
        &[&s(&run)],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    // A recorded run (with its description line) fits; the bounds it hits read plainly.
    let o = cdpr(&with(
        "surrogate fit --robot uvigo8 --reference",
        &[&s(&run), "--out", &s(&dir.join("params.toml"))],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("warning: z: f_n = 100 Hz sits on its search bound (0.1 … 100 Hz)"),
        "{e}"
    );
    assert!(
        e.contains("warning: z: ζ = 0.2 sits on its search bound (0.2 … 4);"),
        "{e}"
    );
    // Generated runs: the model by its option name, not a Rust value.
    let o = cdpr(&with(
        "surrogate fit --robot uvigo8 --signals steps --dofs z --out",
        &[&s(&dir.join("z.toml"))],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("running 1 identification runs (steps on z, elastic model)"),
        "{e}"
    );
}

#[test]
fn workspace_plots_keep_every_text_inside_and_the_legend_off_the_data() {
    let dir = scratch("report-titles-workspace");
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let ws = dir.join("ws.png");
    let o = cdpr(&with("workspace -r uvigo8 --grid 6 --plot", &[&s(&ws)]));
    assert!(o.status.code() == Some(0), "{}", stderr(&o));
    assert_texts_inside(&dir.join("ws.svg"));
    // keops' coverage plot: the legend on a header row, above the views (no text of it
    // below the header), every text inside.
    let keops = dir.join("keops.svg");
    let o = cdpr(&with(
        "workspace -r keops --step 0.02 --plot",
        &[&s(&keops)],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_texts_inside(&keops);
    let svg = std::fs::read_to_string(&keops).expect("svg");
    for (_, y, _, _, content) in texts(&svg) {
        if content == "reachable" || content == "beyond the stroke" {
            assert!(y < 96.0, "legend entry `{content}` at y {y}: inside a view");
        }
    }
}
