//! The crate's layers, declared once and checked against the code: every `crate::…`,
//! `super::…` and `self::…` path in a module's source (tests left out) may only name a module
//! of a lower layer or of its own module, and the modules inside one module never use each
//! other in a circle. A new circle fails this test with the files and paths that make it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules, bottom layer first; modules of one layer do not use each other.
const LAYERS: &[&[&str]] = &[
    &[
        "choice",
        "text",
        "toml_location",
        "plotting",
        "colors",
        "csv_input",
    ],
    &["pose", "options"],
    &["legs"],
    &["robot"],
    &["kinematics"],
    &["statics", "interference"],
    &["trajectory"],
    &["metrics", "workspace", "export", "preflight"],
    &["surrogate"],
    &["sim"],
    &["run"],
    &["recording"],
    &["job"],
    &["identify", "calibrate", "sweep", "report"],
];

/// Test-only modules, which may use anything.
const TEST_ONLY: &[&str] = &["fixtures", "layers"];

type ModulePath = Vec<String>;

/// One use of a module by a source file: the file, the module it is in, and the path used.
#[derive(Debug, Clone)]
struct Use {
    file: PathBuf,
    from: ModulePath,
    to: ModulePath,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file below `dir`, with the module path it defines.
fn modules(dir: &Path, prefix: &[String], out: &mut Vec<(PathBuf, ModulePath)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let Some(stem) = path
            .file_stem()
            .and_then(|s| s.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        if path.is_dir() {
            let mut sub = prefix.to_vec();
            sub.push(stem);
            modules(&path, &sub, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let module = match stem.as_str() {
                "mod" | "lib" => prefix.to_vec(),
                _ => {
                    let mut m = prefix.to_vec();
                    m.push(stem);
                    m
                }
            };
            out.push((path, module));
        }
    }
}

/// The source without comments, string contents and test modules (`#[cfg(test)]` items).
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let next = bytes.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < bytes.len() && bytes[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < bytes.len() && !(bytes[i] == '*' && bytes[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < bytes.len() && bytes[i] != '"' {
                if bytes[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            out.push('"');
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    // `#[cfg(test)]` before an item: drop the item (a `mod … { … }` block or `mod …;`).
    let mut code = out;
    while let Some(at) = code.find("#[cfg(test)]") {
        let rest = &code[at..];
        let end = match (rest.find('{'), rest.find(';')) {
            (Some(open), semi) if semi.is_none_or(|s| open < s) => {
                let mut depth = 0;
                let mut end = rest.len();
                for (k, ch) in rest[open..].char_indices() {
                    match ch {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = open + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (_, Some(semi)) => semi + 1,
            _ => rest.len(),
        };
        code.replace_range(at..at + end, "");
    }
    code
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths a piece of code names: `crate::a::b`, `super::x`, `self::y`, with `{…}` groups
/// expanded (`use super::{a, b::c}` names `super::a` and `super::b::c`).
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = ["crate::", "super::", "self::"]
            .iter()
            .find(|p| code_at(&chars, i, p))
            .copied();
        let boundary = i == 0 || !is_ident(chars[i - 1]) && chars[i - 1] != ':';
        match starts {
            Some(p) if boundary => {
                let head = p.trim_end_matches("::").to_string();
                let (paths, end) = parse_tail(&chars, i + p.len(), vec![head]);
                out.extend(paths);
                i = end.max(i + 1);
            }
            _ => i += 1,
        }
    }
    out
}

fn code_at(chars: &[char], i: usize, pattern: &str) -> bool {
    pattern
        .chars()
        .enumerate()
        .all(|(k, p)| chars.get(i + k) == Some(&p))
}

/// Parses what follows `prefix::` at `i`: identifiers joined by `::`, or a `{…}` group.
fn parse_tail(chars: &[char], mut i: usize, prefix: Vec<String>) -> (Vec<Vec<String>>, usize) {
    let mut path = prefix;
    loop {
        while chars.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        if chars.get(i) == Some(&'{') {
            i += 1;
            let mut all = Vec::new();
            loop {
                while chars.get(i).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    i += 1;
                }
                match chars.get(i) {
                    None => return (all, i),
                    Some('}') => return (all, i + 1),
                    _ => {
                        let (paths, end) = parse_tail(chars, i, path.clone());
                        all.extend(paths);
                        if end == i {
                            i += 1;
                        } else {
                            i = end;
                        }
                    }
                }
            }
        }
        let start = i;
        while chars.get(i).copied().is_some_and(is_ident) {
            i += 1;
        }
        if i == start {
            return (vec![path], i);
        }
        path.push(chars[start..i].iter().collect());
        if code_at(chars, i, "::") {
            i += 2;
        } else {
            // `self as x`, `Name as Other`: the path ends here.
            return (vec![path], i);
        }
    }
}

/// The module a path names: its longest prefix that is a module of `known`.
fn module_of(path: &[String], known: &BTreeSet<ModulePath>) -> ModulePath {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| known.contains(p))
        .unwrap_or_default()
}

/// Every use of a module in the crate's sources (tests left out).
fn uses() -> Vec<Use> {
    let mut files = Vec::new();
    modules(&src_dir(), &[], &mut files);
    let known: BTreeSet<ModulePath> = files.iter().map(|(_, m)| m.clone()).collect();
    let mut out = Vec::new();
    for (file, module) in &files {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let top = module.first().map(String::as_str).unwrap_or("");
        if name == "tests.rs" || TEST_ONLY.contains(&top) || module.is_empty() {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("a source file of the crate");
        for path in paths_in(&code_of(&text)) {
            // Resolve `self`/`super` against the file's module (a `foo.rs` file's `super` is
            // its parent module, as for `foo/mod.rs`).
            let mut absolute: ModulePath = module.clone();
            let mut rest = path.as_slice();
            match rest.first().map(String::as_str) {
                Some("crate") => {
                    absolute.clear();
                    rest = &rest[1..];
                }
                Some("self") => rest = &rest[1..],
                _ => {}
            }
            while rest.first().map(String::as_str) == Some("super") {
                absolute.pop();
                rest = &rest[1..];
            }
            absolute.extend(rest.iter().cloned());
            out.push(Use {
                file: file.clone(),
                from: module.clone(),
                to: module_of(&absolute, &known),
            });
        }
    }
    out
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

#[test]
fn every_top_level_module_is_in_one_layer() {
    let mut files = Vec::new();
    modules(&src_dir(), &[], &mut files);
    let tops: BTreeSet<String> = files
        .iter()
        .filter_map(|(_, m)| m.first().cloned())
        .collect();
    for top in &tops {
        if TEST_ONLY.contains(&top.as_str()) {
            continue;
        }
        assert!(
            layer_of(top).is_some(),
            "`{top}` is in no layer: add it to LAYERS in src/layers.rs (and lib.rs' docs)"
        );
    }
    let declared: Vec<&str> = LAYERS.iter().flat_map(|l| l.iter().copied()).collect();
    for d in &declared {
        assert!(tops.contains(*d), "LAYERS names `{d}`, which is no module");
    }
}

#[test]
fn modules_use_only_lower_layers() {
    let mut wrong = Vec::new();
    for u in uses() {
        let (Some(from), Some(to)) = (u.from.first(), u.to.first()) else {
            continue;
        };
        if from == to || TEST_ONLY.contains(&to.as_str()) {
            continue;
        }
        let (Some(lf), Some(lt)) = (layer_of(from), layer_of(to)) else {
            continue;
        };
        if lt >= lf {
            wrong.push(format!(
                "{}: `{}` (layer {lf}) uses `{}` (layer {lt})",
                u.file.strip_prefix(src_dir()).unwrap_or(&u.file).display(),
                u.from.join("::"),
                u.to.join("::")
            ));
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "uses against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_module_uses_its_siblings_in_a_circle() {
    // Edges between siblings: the children of a common parent that the two paths go through.
    let mut edges: BTreeMap<ModulePath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mut witness: BTreeMap<(ModulePath, String, String), PathBuf> = BTreeMap::new();
    for u in uses() {
        let common = u.from.iter().zip(&u.to).take_while(|(a, b)| a == b).count();
        let (Some(a), Some(b)) = (u.from.get(common), u.to.get(common)) else {
            continue; // a module using its own parent or its own children
        };
        let parent = u.from[..common].to_vec();
        if parent.is_empty() {
            continue; // top level: the layers test covers it
        }
        edges
            .entry(parent.clone())
            .or_default()
            .entry(a.clone())
            .or_default()
            .insert(b.clone());
        witness
            .entry((parent, a.clone(), b.clone()))
            .or_insert(u.file.clone());
    }
    let mut circles = Vec::new();
    for (parent, graph) in &edges {
        if let Some(cycle) = find_cycle(graph) {
            let steps: Vec<String> = cycle
                .windows(2)
                .map(|w| {
                    let file = witness
                        .get(&(parent.clone(), w[0].clone(), w[1].clone()))
                        .map(|f| f.strip_prefix(src_dir()).unwrap_or(f).display().to_string())
                        .unwrap_or_default();
                    format!("{} → {} (in {file})", w[0], w[1])
                })
                .collect();
            circles.push(format!("in `{}`: {}", parent.join("::"), steps.join(", ")));
        }
    }
    assert!(
        circles.is_empty(),
        "module circles:\n{}",
        circles.join("\n")
    );
}

/// A cycle of `graph` as a closed walk (first node repeated at the end), if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(c) = visit(node, graph, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn the_checker_sees_paths_groups_and_circles() {
    let code = code_of(
        "use super::{a, b::{c, d}};\n// use crate::hidden;\nlet s = \"crate::text\";\n\
         fn f() { crate::sim::Sim::new(); }\n#[cfg(test)]\nmod tests { use crate::x; }\n",
    );
    let paths = paths_in(&code);
    let names: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        names,
        [
            "super::a",
            "super::b::c",
            "super::b::d",
            "crate::sim::Sim::new"
        ]
    );
    let mut graph = BTreeMap::new();
    graph.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    graph.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".to_string(), "b".to_string(), "a".to_string()])
    );
    graph.remove("b");
    assert_eq!(find_cycle(&graph), None);
}

/// ARCHITECTURE.md's layer table is this one: a row per layer, in order, naming exactly the
/// layer's modules (the doc cannot drift from the code, and a new module needs its row).
#[test]
fn the_architecture_guide_shows_this_table() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path).expect("ARCHITECTURE.md is readable");
    let rows: Vec<(String, Vec<String>)> = text
        .lines()
        .skip_while(|l| !l.starts_with("| layer | modules |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let modules = cells[2]
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect();
            (cells[1].to_string(), modules)
        })
        .collect();
    let wanted: Vec<(String, Vec<String>)> = LAYERS
        .iter()
        .enumerate()
        .map(|(k, layer)| {
            (
                (k + 1).to_string(),
                layer.iter().map(|m| m.to_string()).collect(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        wanted,
        "{}'s layer table (left) is not layers.rs's LAYERS (right)",
        path.display()
    );
}
