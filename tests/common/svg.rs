//! The text of the SVG plots cdpr writes: where each `<text>` lies, and whether it is readable.

use std::path::Path;

/// One `<text>` element of an SVG.
#[derive(Debug, Clone)]
pub struct Text {
    /// x of its anchor and y of its baseline, SVG units.
    pub x: f64,
    pub y: f64,
    pub size: f64,
    /// `start`, `middle` or `end`.
    pub anchor: String,
    pub content: String,
}

/// Every `<text>` element of `svg` that has a font size.
pub fn texts(svg: &str) -> Vec<Text> {
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
        let (x, y) = (number("x").unwrap_or(0.0), number("y").unwrap_or(0.0));
        let Some(size) = number("font-size") else {
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
        out.push(Text {
            x,
            y,
            size,
            anchor,
            content,
        });
    }
    out
}

/// (width, height) of the SVG document.
pub fn size_of(svg: &str) -> (f64, f64) {
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
pub fn assert_texts_inside(path: &Path) {
    let svg = std::fs::read_to_string(path).expect("svg written");
    let (width, height) = size_of(&svg);
    let all = texts(&svg);
    assert!(!all.is_empty(), "{}: no text", path.display());
    for Text {
        x,
        y,
        size,
        anchor,
        content,
    } in all
    {
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

/// The texts of the SVG at `path`, asserted readable: no "-0", "-0.0", … tick labels; every
/// text at least `min_size` (SVG units; plotters writes px / 1.24) on a figure at most 1800
/// wide.
pub fn readable(path: &Path, min_size: f64) -> Vec<String> {
    let svg = std::fs::read_to_string(path).expect("svg");
    let texts = texts(&svg);
    assert!(!texts.is_empty(), "{}", path.display());
    for Text { size, content, .. } in &texts {
        let negative_zero = content.starts_with('-')
            && content[1..]
                .parse::<f64>()
                .map(|v| v == 0.0)
                .unwrap_or(false);
        assert!(!negative_zero, "{}: tick label `{content}`", path.display());
        assert!(
            *size >= min_size,
            "{}: `{content}` at font-size {size} < {min_size}",
            path.display()
        );
    }
    assert!(size_of(&svg).0 <= 1800.0, "{}", path.display());
    texts.into_iter().map(|t| t.content).collect()
}
