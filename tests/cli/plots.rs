//! The plots cdpr writes (`report`, `workspace`) are readable: fonts large enough, no "-0"
//! tick labels, every text inside the figure and the legend off the data, the title naming the
//! run, both series drawn.

use crate::common;

use crate::common::svg::{assert_texts_inside, readable, texts};
use crate::common::*;
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn report_plots_are_readable_and_show_both_series() {
    let dir = scratch("plots_report");
    let o = cdpr_in(
        &dir,
        "simulate -r uvigo8 -t seed000 --speed 0.4 --model elastic --control ideal --compensate --out run.csv",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = cdpr_in(
        &dir,
        "report --reference run.csv --reference-columns _cmd --actual run.csv --out rep",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    for name in ["axes", "error", "paths"] {
        let path = dir.join("rep").join(format!("{name}.svg"));
        let texts = readable(&path, 19.0);
        // The title names the run (its description, on one or two lines) and what is
        // compared, not file names.
        assert!(
            texts.join(" ").contains(
                "simulate: robot uvigo8, trajectory seed000, speed 0.4 m/s, model elastic, \
                 control ideal, compensated, dt 0.001 s: platform vs commanded"
            ),
            "{name}: {texts:?}"
        );
        assert!(
            !texts.iter().any(|t| t.contains(".csv")),
            "{name}: {texts:?}"
        );
    }
    // The actual (blue) is drawn translucent over the wide translucent reference (red).
    let svg = std::fs::read_to_string(dir.join("rep/axes.svg")).unwrap();
    let curve = |colour: &str| {
        svg.split("<polyline")
            .skip(1)
            .filter_map(|p| p.split("/>").next())
            // The legend's sample line has 2 points; the curves have hundreds.
            .filter(|p| p.contains(&format!("stroke=\"{colour}\"")) && p.len() > 500)
            .map(|p| {
                p.split("opacity=\"")
                    .nth(1)
                    .and_then(|s| s.split('"').next())
                    .and_then(|s| s.parse::<f64>().ok())
                    .unwrap_or(1.0)
            })
            .collect::<Vec<_>>()
    };
    let (actual, reference) = (curve("#1F77B4"), curve("#D62728"));
    assert_eq!(actual.len(), 3, "one actual curve per axis");
    assert_eq!(reference.len(), 3, "one reference curve per axis");
    assert!(
        actual.iter().chain(&reference).all(|o| *o < 1.0),
        "{actual:?} {reference:?}"
    );
}

#[test]
fn workspace_plot_is_readable_with_a_defined_colour_bar() {
    let dir = scratch("plots_workspace");
    let plot = dir.join("ws.png");
    let o = cdpr(&with("workspace -r uvigo8 --grid 8 --plot", &[s(&plot)]));
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(2),
        "{}",
        stderr(&o)
    );
    let texts = readable(&dir.join("ws.svg"), 19.0);
    assert!(
        texts
            .iter()
            .any(|t| t == "largest reachable minimum tension [N]"),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("uvigo8: wrench-feasible workspace")),
        "{texts:?}"
    );
}

#[test]
fn workspace_plots_keep_every_text_inside_and_the_legend_off_the_data() {
    let dir = scratch("plots_workspace_texts");
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
    for common::svg::Text { y, content, .. } in texts(&svg) {
        if content == "reachable" || content == "beyond the stroke" {
            assert!(y < 96.0, "legend entry `{content}` at y {y}: inside a view");
        }
    }
}
