//! The PLC library shipped in `assets/twincat/` (GVL_Shadow, FB_CdprShadow, its TcUnit suite
//! and PRG_TEST), read by blark — a parser of TwinCAT's Structured Text in its XML files — as
//! nothing here can compile or run Structured Text:
//! - every `.TcPOU`/`.TcGVL` parses, or the test names the file, the part and blark's error;
//! - GVL_Shadow as blark reads it declares the virtual PLC's symbol table for `uvigo8`
//!   (`[plc]` defaults, the optional pulley arrays too), names and types, 8 cables;
//! - every `GVL_Shadow.<name>` the function block, the suite and PRG_TEST use is declared
//!   there; FB_CdprShadow writes what the shadow reads each cycle and never what it writes;
//!   the suite only reads;
//! - every other name their code uses is declared in the POU (or its method), a method, or
//!   one of TcUnit's API (the asserts with their parameter names) and a few standard functions;
//! - the suite extends `TcUnit.FB_TestSuite`, each test calls `TEST('…')` and
//!   `TEST_FINISHED()`, PRG_TEST calls `TcUnit.RUN()`;
//! - the `MAIN` examples of the TwinCAT README and the guide's page (their ```` ```st ````
//!   and ```` ```iecst ```` blocks) parse too, pass the above, and call FB_CdprShadow with its
//!   own inputs and read its own outputs.
//!
//! blark runs once, in one Python process for all files (a few seconds: its Earley parser).
//! Python comes from `CDPR_PYTHON` (default `.venv-ci/bin/python`, which `.ci/run` creates
//! with blark); without blark the tests print a `SKIPPED` line and pass, unless
//! `CDPR_REQUIRE_PYTHON=1` (CI), when they fail.

use cdpr_ads::PlcSymbols;
use cdpr_ads::server::SymbolTable;
use cdpr_ads::wire::IecType;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The files of the library; the tests also read every other `.TcPOU`/`.TcGVL` beside them.
const LIBRARY: &[&str] = &[
    "GVL_Shadow.TcGVL",
    "FB_CdprShadow.TcPOU",
    "FB_CdprShadow_Test.TcPOU",
    "PRG_TEST.TcPOU",
];

/// Reads the files named on its command line with blark's Python API and prints one JSON
/// object: each part's parse error (or null); the GVLs' variables (constants included, which
/// blark's own summary leaves out); per POU its declarations (blark's summary) and, per method
/// (`scope`; "" for the POU's own body and declaration), the names its code uses, its calls
/// with their parameter names, and the `X.field` selections it reads and writes.
/// Exits 3 when blark is not installed.
const READER: &str = r#"
import dataclasses, json, sys
try:
    import blark
    from blark import transform as tf
    from blark.parse import parse, summarize
except ImportError as e:
    print(f"blark is not installed: {e}", file=sys.stderr)
    sys.exit(3)

def walk(node, out, target=False):
    if isinstance(node, (list, tuple)):
        for n in node:
            walk(n, out, target)
    elif isinstance(node, tf.MultiElementVariable):
        first = node.elements[0] if node.elements else None
        if isinstance(first, tf.FieldSelector):
            use = [str(node.name.name), str(first.field.name)]
            out["fields"].append(use)
            if target:
                out["written"].append(use)
        walk(node.name, out)
        for element in node.elements:
            if isinstance(element, tf.SubscriptList):
                walk(element, out)
    elif isinstance(node, tf.SimpleVariable):
        out["names"].append(str(node.name))
    elif isinstance(node, tf.FunctionCall):
        params = [None if getattr(p, "name", None) is None else str(p.name.name)
                  for p in node.parameters]
        first = node.parameters[0] if node.parameters else None
        first = getattr(first, "value", first)
        out["calls"].append({"name": str(node.name), "params": params,
                             "first": None if first is None else str(first)})
        walk(node.name, out)
        for p in node.parameters:
            walk(getattr(p, "value", p), out)
    elif isinstance(node, tf.AssignmentStatement):
        walk(node.variables, out, target=True)
        walk(node.expression, out)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            if f.name != "meta":
                walk(getattr(node, f.name), out, target)

def declarations(scope, decls):
    return [{"scope": scope, "name": str(d.name), "block": str(d.block), "type": str(d.type)}
            for d in decls.values()]

report = {"blark": blark.__version__, "parts": [], "globals": [], "pous": []}
for path in sys.argv[1:]:
    try:
        results = list(parse(path))
    except Exception as e:
        report["parts"].append({"file": path, "part": None, "error": f"{type(e).__name__}: {e}"})
        continue
    for r in results:
        error = None if r.exception is None else f"{type(r.exception).__name__}: {r.exception}"
        report["parts"].append({"file": path, "part": r.identifier, "error": error})
    if not results or any(r.exception is not None for r in results):
        continue
    uses = {}
    for r in results:
        code = r.transform()
        for item in code.items:
            if isinstance(item, tf.GlobalVariableDeclarations):
                constant = "CONSTANT" in str(item.attrs or "").upper()
                for decl in item.items:
                    value = getattr(decl.init, "value", None)
                    for var in decl.spec.variables:
                        report["globals"].append({
                            "gvl": str(item.name), "name": str(getattr(var, "variable", var)),
                            "type": str(decl.init.full_type_name),
                            "value": None if value is None else str(value),
                            "constant": constant})
        scope = r.identifier.split("/")[0].split(".", 1)
        scope = scope[1] if len(scope) > 1 else ""
        out = uses.setdefault(scope, {"scope": scope, "names": [], "calls": [], "fields": [],
                                      "written": []})
        walk(code.items, out)
    summary = summarize(results)
    for kind, table in (("function_block", summary.function_blocks),
                        ("program", summary.programs), ("function", summary.functions)):
        for name, pou in table.items():
            methods = list(getattr(pou, "methods", []))
            declared = declarations("", pou.declarations)
            for m in methods:
                declared += declarations(str(m.name), m.declarations)
            report["pous"].append({
                "file": path, "name": str(name), "kind": kind,
                "extends": [str(e) for e in (getattr(pou, "extends", None) or [])],
                "methods": [str(m.name) for m in methods], "declared": declared,
                "uses": list(uses.values())})
json.dump(report, sys.stdout)
"#;

#[derive(Debug, Deserialize)]
struct Report {
    blark: String,
    parts: Vec<Part>,
    globals: Vec<Global>,
    pous: Vec<Pou>,
}

#[derive(Debug, Deserialize)]
struct Part {
    file: String,
    part: Option<String>,
    error: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Global {
    gvl: String,
    name: String,
    #[serde(rename = "type")]
    ty: String,
    value: Option<String>,
    constant: bool,
}

#[derive(Debug, Deserialize)]
struct Pou {
    file: String,
    name: String,
    kind: String,
    extends: Vec<String>,
    methods: Vec<String>,
    declared: Vec<Declared>,
    uses: Vec<Uses>,
}

#[derive(Debug, Deserialize)]
struct Declared {
    scope: String,
    name: String,
    block: String,
    #[serde(rename = "type")]
    ty: String,
}

#[derive(Debug, Deserialize)]
struct Uses {
    scope: String,
    names: Vec<String>,
    calls: Vec<Call>,
    fields: Vec<(String, String)>,
    written: Vec<(String, String)>,
}

#[derive(Debug, Deserialize)]
struct Call {
    name: String,
    params: Vec<Option<String>>,
    first: Option<String>,
}

/// The pages whose ```` ```st ````/```` ```iecst ```` blocks are whole POUs blark reads.
const PAGES: &[&str] = &["assets/twincat/README.md", "docs/src/plc-library.md"];

/// The Structured Text blocks of [`PAGES`], each written to `PAGE.blockN.st` in a scratch
/// directory (blark reads a plain `.st` file as source code).
fn snippet_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("twincat_snippets");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the snippets' directory");
    let mut files = Vec::new();
    for page in PAGES {
        let path = cdpr_core::fixtures::workspace_root().join(page);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{page}: {e}"));
        let name = file_name(page);
        let mut block: Option<String> = None;
        let mut count = 0;
        for line in text.lines() {
            let fence = line.trim_start();
            match block.take() {
                Some(code) if fence.starts_with("```") => {
                    count += 1;
                    let file = dir.join(format!("{name}.block{count}.st"));
                    std::fs::write(&file, code).expect("write a snippet");
                    files.push(file);
                }
                Some(mut code) => {
                    code.push_str(line);
                    code.push('\n');
                    block = Some(code);
                }
                None if fence == "```st" || fence == "```iecst" => block = Some(String::new()),
                None => {}
            }
        }
    }
    files
}

fn twincat_dir() -> PathBuf {
    cdpr_core::fixtures::workspace_root().join("assets/twincat")
}

/// Every `.TcPOU`/`.TcGVL` of `assets/twincat`, sorted.
fn twincat_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(twincat_dir())
        .expect("assets/twincat")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e == "TcPOU" || e == "TcGVL")
        })
        .collect();
    files.sort();
    files
}

fn file_name(path: &str) -> &str {
    Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(path)
}

/// Why blark's reading is not there: no Python with blark (a skip, unless required), or the
/// reader itself failed (always a failure).
enum NoReport {
    Missing(String),
    Failed(String),
}

/// blark's reading of the shipped files (one Python run for every test), or None when this
/// machine has no Python with blark: then the test prints why and passes — unless
/// `CDPR_REQUIRE_PYTHON=1`, when it fails.
fn report() -> Option<&'static Report> {
    static REPORT: OnceLock<Result<Report, NoReport>> = OnceLock::new();
    let result = REPORT.get_or_init(|| {
        let python = std::env::var_os("CDPR_PYTHON")
            .map(PathBuf::from)
            .unwrap_or_else(|| cdpr_core::fixtures::workspace_root().join(".venv-ci/bin/python"));
        let output = Command::new(&python)
            .arg("-c")
            .arg(READER)
            .args(twincat_files())
            .args(snippet_files())
            .output()
            .map_err(|e| {
                NoReport::Missing(format!(
                    "no Python at {} ({e}): set CDPR_PYTHON",
                    python.display()
                ))
            })?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if output.status.code() == Some(3) {
            return Err(NoReport::Missing(format!(
                "{}: {}",
                python.display(),
                stderr.trim()
            )));
        }
        if !output.status.success() {
            return Err(NoReport::Failed(format!(
                "blark's reader failed ({}):\n{stderr}",
                output.status
            )));
        }
        serde_json::from_slice(&output.stdout)
            .map_err(|e| NoReport::Failed(format!("the reader's JSON: {e}\n{stderr}")))
    });
    match result {
        Ok(report) => Some(report),
        Err(NoReport::Failed(why)) => panic!("{why}"),
        Err(NoReport::Missing(why)) => {
            assert!(
                std::env::var("CDPR_REQUIRE_PYTHON").as_deref() != Ok("1"),
                "CDPR_REQUIRE_PYTHON=1 but {why} (run .ci/run, or pip install blark)"
            );
            eprintln!("SKIPPED: {why} (pip install blark into .venv-ci, or run .ci/run)");
            None
        }
    }
}

fn pou<'a>(report: &'a Report, name: &str) -> &'a Pou {
    report
        .pous
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| {
            let names: Vec<&str> = report.pous.iter().map(|p| p.name.as_str()).collect();
            panic!("blark found no POU {name} (it found {names:?})")
        })
}

/// The GVL's variables as `GVL.name` → blark's type text with the GVL's constants put in, and
/// the constants apart (`GVL.name` → value).
fn gvl_variables(report: &Report) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let constants: BTreeMap<String, String> = report
        .globals
        .iter()
        .filter(|g| g.constant)
        .map(|g| {
            let value = g
                .value
                .clone()
                .unwrap_or_else(|| panic!("the constant {}.{} has no value", g.gvl, g.name));
            (format!("{}.{}", g.gvl, g.name), value)
        })
        .collect();
    let mut vars = BTreeMap::new();
    for g in report.globals.iter().filter(|g| !g.constant) {
        let mut ty = g.ty.clone();
        for (qualified, value) in &constants {
            let short = qualified.rsplit('.').next().unwrap_or(qualified);
            ty = ty.replace(qualified.as_str(), value).replace(short, value);
        }
        let previous = vars.insert(format!("{}.{}", g.gvl, g.name), ty);
        assert!(previous.is_none(), "{}.{} declared twice", g.gvl, g.name);
    }
    (vars, constants)
}

#[test]
fn every_twincat_file_parses_with_blark() {
    let Some(report) = report() else { return };
    let files = twincat_files();
    for shipped in LIBRARY {
        assert!(
            files.iter().any(|f| f.ends_with(shipped)),
            "assets/twincat/{shipped} is missing"
        );
    }
    let failures: Vec<String> = report
        .parts
        .iter()
        .filter_map(|p| {
            p.error.as_ref().map(|e| {
                format!(
                    "{}: {}: blark {}: {e}",
                    file_name(&p.file),
                    p.part.as_deref().unwrap_or("(the file)"),
                    report.blark
                )
            })
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    for file in &files {
        let parts = report
            .parts
            .iter()
            .filter(|p| Path::new(&p.file) == file.as_path())
            .count();
        assert!(
            parts > 0,
            "blark found no source code in {}",
            file.display()
        );
    }
    let snippets = report
        .parts
        .iter()
        .filter(|p| p.file.ends_with(".st"))
        .count();
    assert!(
        snippets >= 3,
        "the pages' MAIN examples: {:#?}",
        report.parts
    );
    // GVL + FB (declaration, body) + the suite (declaration, body, 4 methods × 2) + PRG_TEST.
    assert!(report.parts.len() - snippets >= 15, "{:#?}", report.parts);
}

#[test]
fn the_pages_main_examples_call_fb_cdprshadow_with_its_own_inputs_and_outputs() {
    let Some(report) = report() else { return };
    let snippets: Vec<&Pou> = report
        .pous
        .iter()
        .filter(|p| p.file.ends_with(".st"))
        .collect();
    // The README's MAIN with the block and by hand, the guide's MAIN.
    assert!(
        snippets.len() >= 3,
        "the pages' MAIN examples: {snippets:?}"
    );
    let fb = report
        .pous
        .iter()
        .find(|p| p.name == "FB_CdprShadow" && p.file.ends_with(".TcPOU"))
        .expect("FB_CdprShadow");
    let members = |blocks: &[&str]| -> Vec<&String> {
        fb.declared
            .iter()
            .filter(|d| d.scope.is_empty() && blocks.contains(&d.block.as_str()))
            .map(|d| &d.name)
            .collect()
    };
    let parameters = members(&["VAR_INPUT", "VAR_IN_OUT", "VAR_OUTPUT"]);
    let in_outs = members(&["VAR_IN_OUT"]);
    let readable = members(&["VAR_INPUT", "VAR_OUTPUT"]);
    assert!(!in_outs.is_empty() && readable.len() >= 6, "{fb:?}");
    let mut calls = 0;
    for p in &report.pous {
        let instances: Vec<&String> = p
            .declared
            .iter()
            .filter(|d| d.ty.eq_ignore_ascii_case("FB_CdprShadow"))
            .map(|d| &d.name)
            .collect();
        for u in &p.uses {
            for call in u
                .calls
                .iter()
                .filter(|c| contains_ignoring_case(instances.iter().copied(), &c.name))
            {
                let given: Vec<&String> = call.params.iter().flatten().collect();
                for g in &given {
                    assert!(
                        contains_ignoring_case(parameters.iter().copied(), g),
                        "{} ({}) passes `{g}`, which FB_CdprShadow does not declare",
                        p.name,
                        file_name(&p.file)
                    );
                }
                for io in &in_outs {
                    assert!(
                        contains_ignoring_case(given.iter().copied(), io),
                        "{} ({}) calls FB_CdprShadow without its VAR_IN_OUT `{io}`",
                        p.name,
                        file_name(&p.file)
                    );
                }
                calls += 1;
            }
            for (head, field) in &u.fields {
                if contains_ignoring_case(instances.iter().copied(), head) {
                    assert!(
                        contains_ignoring_case(readable.iter().copied(), field),
                        "{} ({}) reads {head}.{field}, which FB_CdprShadow does not declare",
                        p.name,
                        file_name(&p.file)
                    );
                }
            }
        }
    }
    assert!(calls >= 2, "the pages call FB_CdprShadow {calls} times");
}

#[test]
fn the_gvl_as_blark_reads_it_is_the_virtual_plcs_symbol_table() {
    let Some(report) = report() else { return };
    let (vars, constants) = gvl_variables(report);
    let robot = cdpr_core::fixtures::uvigo8();
    assert_eq!(
        constants.get("GVL_Shadow.MAX_CABLES").map(String::as_str),
        Some(robot.cable_count().to_string().as_str()),
        "GVL_Shadow.MAX_CABLES is uvigo8's cable count ({constants:?})"
    );
    let symbols = PlcSymbols::of(&robot).expect("uvigo8's [plc]");
    assert_eq!(
        PlcSymbols {
            read_pulleys: false,
            ..symbols.clone()
        },
        PlcSymbols::defaults(),
        "uvigo8 keeps the [plc] defaults, the names the GVL declares"
    );
    // The virtual PLC's table for uvigo8, with the optional pulley arrays and the drives'
    // symbols (uvigo8-drives' drives) the GVL declares too.
    let mut with_drives = robot.clone();
    with_drives.drives = cdpr_core::fixtures::robot("uvigo8-drives").drives;
    let symbols = PlcSymbols::of(&with_drives).expect("uvigo8's [plc]");
    let table = SymbolTable::with_pulleys(&symbols, robot.cable_count(), true).expect("table");
    assert!(table.symbols().len() >= 16, "{:?}", table.symbols());
    for s in table.symbols() {
        let declared = vars
            .get(&s.name)
            .unwrap_or_else(|| panic!("{} (served by cdpr plc) is not in the GVL", s.name));
        let ty = IecType::parse(declared)
            .unwrap_or_else(|| panic!("{}: blark's type `{declared}` is no IEC type", s.name));
        assert_eq!(ty, s.ty, "{}: the GVL's `{declared}`", s.name);
    }
    let served: BTreeSet<&str> = table.symbols().iter().map(|s| s.name.as_str()).collect();
    let extra: Vec<&String> = vars
        .keys()
        .filter(|n| !served.contains(n.as_str()))
        .collect();
    assert!(
        extra.is_empty(),
        "the GVL declares what cdpr plc does not serve: {extra:?}"
    );
    // Every name of the defaults, the optional ones included.
    let defaults = PlcSymbols::defaults();
    let named = [
        &defaults.frame_anchors,
        &defaults.platform_anchors,
        &defaults.lengths,
        &defaults.cable_angles,
        &defaults.tcp_pose,
        &defaults.commanded_lengths,
        &defaults.cycle_counter,
        &defaults.motion_enable,
        &defaults.shadow_pose,
        &defaults.shadow_lengths,
        &defaults.shadow_tensions,
        &defaults.shadow_cycle,
        &defaults.pulley_radii,
        &defaults.pulley_axes,
    ];
    for name in named
        .into_iter()
        .cloned()
        .chain(defaults.writable.iter().cloned())
        .chain([
            defaults.reaction(),
            cdpr_ads::plc_symbols::INTERFERENCE_DEFAULT.to_string(),
        ])
    {
        assert!(
            vars.contains_key(&name),
            "the [plc] default {name} is not in the GVL"
        );
    }
}

/// `GVL.field` of a use, if `gvl` is one of the GVLs blark read (case-insensitively, as ST).
fn gvl_field(gvls: &BTreeSet<String>, (head, field): &(String, String)) -> Option<String> {
    gvls.iter()
        .find(|g| g.eq_ignore_ascii_case(head))
        .map(|g| format!("{g}.{field}"))
}

/// Where a use is, for a message: the POU, its file and the method (if any).
fn place(p: &Pou, u: &Uses) -> String {
    let method = if u.scope.is_empty() {
        String::new()
    } else {
        format!(", method {}", u.scope)
    };
    format!("{} ({}{method})", p.name, file_name(&p.file))
}

fn contains_ignoring_case<'a>(set: impl IntoIterator<Item = &'a String>, name: &str) -> bool {
    set.into_iter().any(|n| n.eq_ignore_ascii_case(name))
}

#[test]
fn the_library_uses_only_symbols_the_gvl_declares() {
    let Some(report) = report() else { return };
    let (vars, constants) = gvl_variables(report);
    let gvls: BTreeSet<String> = report.globals.iter().map(|g| g.gvl.clone()).collect();
    let declared: Vec<&String> = vars.keys().chain(constants.keys()).collect();
    let mut used_by: BTreeMap<&str, (BTreeSet<String>, BTreeSet<String>)> = BTreeMap::new();
    for p in &report.pous {
        let (read, written) = used_by.entry(p.name.as_str()).or_default();
        for u in &p.uses {
            for field in &u.fields {
                if let Some(name) = gvl_field(&gvls, field) {
                    assert!(
                        contains_ignoring_case(declared.iter().copied(), &name),
                        "{} uses {name}, which GVL_Shadow does not declare",
                        place(p, u)
                    );
                    read.insert(name);
                }
            }
            for field in &u.written {
                if let Some(name) = gvl_field(&gvls, field) {
                    written.insert(name);
                }
            }
        }
    }
    let names = PlcSymbols::defaults();
    let of = |name: &str| {
        used_by
            .get(name)
            .unwrap_or_else(|| panic!("blark found no POU {name}"))
    };
    let shadow = of("FB_CdprShadow");
    // What the shadow reads every cycle, and the reaction: FB_CdprShadow writes them.
    for name in [
        &names.commanded_lengths,
        &names.lengths,
        &names.cycle_counter,
        &names.motion_enable,
        &names.reaction(),
    ] {
        assert!(
            shadow.1.contains(name),
            "FB_CdprShadow does not write {name}"
        );
    }
    assert!(
        shadow.0.contains(&names.shadow_cycle),
        "FB_CdprShadow does not read {} (the echo)",
        names.shadow_cycle
    );
    // What the shadow writes is the shadow's.
    for name in names
        .writable
        .iter()
        .chain([&cdpr_ads::plc_symbols::INTERFERENCE_DEFAULT.to_string()])
    {
        assert!(
            !shadow.1.contains(name),
            "FB_CdprShadow writes {name}, which the shadow writes"
        );
    }
    let suite = of("FB_CdprShadow_Test");
    assert!(
        suite.1.is_empty(),
        "the suite only watches, yet writes {:?}",
        suite.1
    );
    for name in [
        &names.shadow_cycle,
        &names.reaction(),
        &names.shadow_pose,
        &names.tcp_pose,
        &names.shadow_tensions,
        &names.motion_enable,
    ] {
        assert!(suite.0.contains(name), "the suite does not read {name}");
    }
    let uses: usize = used_by.values().map(|(r, _)| r.len()).sum();
    assert!(uses >= 12, "too few GVL_Shadow uses found: {used_by:?}");
}

/// TcUnit's API as its sources (tcunit/TcUnit, `FB_TestSuite`'s methods and the functions of
/// `POUs/Functions`) declare it: the name and its parameters (named, all given); None for the
/// functions whose parameters this test does not check.
fn tcunit_api(name: &str) -> Option<Option<&'static [&'static str]>> {
    const SCALARS: &[&str] = &[
        "BOOL",
        "BYTE",
        "DATE",
        "DATE_AND_TIME",
        "DINT",
        "DWORD",
        "INT",
        "LINT",
        "LTIME",
        "LWORD",
        "SINT",
        "STRING",
        "TIME",
        "TIME_OF_DAY",
        "UDINT",
        "UINT",
        "ULINT",
        "USINT",
        "WORD",
        "WSTRING",
    ];
    const ARRAYS: &[&str] = &[
        "BOOL", "BYTE", "DINT", "DWORD", "INT", "LINT", "LWORD", "SINT", "UDINT", "UINT", "ULINT",
        "USINT", "WORD",
    ];
    const FUNCTIONS: &[&str] = &[
        "TEST",
        "TEST_ORDERED",
        "TEST_FINISHED",
        "TEST_FINISHED_NAMED",
        "IS_TEST_FINISHED",
        "RUN",
        "RUN_IN_SEQUENCE",
    ];
    let upper = name.to_ascii_uppercase();
    let is = |n: &str| upper == n.to_ascii_uppercase();
    if FUNCTIONS.iter().any(|f| is(f)) {
        return Some(None);
    }
    if is("AssertTrue") || is("AssertFalse") {
        return Some(Some(&["Condition", "Message"]));
    }
    if is("AssertEquals_LREAL") || is("AssertEquals_REAL") {
        return Some(Some(&["Expected", "Actual", "Delta", "Message"]));
    }
    if is("AssertEquals") || SCALARS.iter().any(|t| is(&format!("AssertEquals_{t}"))) {
        return Some(Some(&["Expected", "Actual", "Message"]));
    }
    if is("AssertArrayEquals_LREAL") || is("AssertArrayEquals_REAL") {
        return Some(Some(&["Expecteds", "Actuals", "Delta", "Message"]));
    }
    if ARRAYS.iter().any(|t| is(&format!("AssertArrayEquals_{t}"))) {
        return Some(Some(&["Expecteds", "Actuals", "Message"]));
    }
    None
}

/// The IEC 61131-3 standard functions the library calls (TwinCAT has them built in).
const STANDARD: &[&str] = &[
    "MAX",
    "MIN",
    "ABS",
    "CONCAT",
    "UDINT_TO_STRING",
    "LREAL_TO_STRING",
];

#[test]
fn the_library_uses_only_names_it_declares_and_tcunits_api() {
    let Some(report) = report() else { return };
    let gvls: BTreeSet<String> = report.globals.iter().map(|g| g.gvl.clone()).collect();
    let mut checked = 0;
    let mut asserts = 0;
    for p in &report.pous {
        let suite = p
            .extends
            .iter()
            .any(|e| e.eq_ignore_ascii_case("TcUnit.FB_TestSuite"));
        for u in &p.uses {
            let own: Vec<&String> = p
                .declared
                .iter()
                .filter(|d| d.scope.is_empty() || d.scope == u.scope)
                .map(|d| &d.name)
                .chain(p.methods.iter())
                .chain(std::iter::once(&u.scope))
                .chain(gvls.iter())
                .collect();
            let r#where = place(p, u);
            for name in &u.names {
                let known = contains_ignoring_case(own.iter().copied(), name)
                    || STANDARD.iter().any(|s| s.eq_ignore_ascii_case(name))
                    || name.eq_ignore_ascii_case("TcUnit")
                    || (suite && tcunit_api(name).is_some());
                assert!(
                    known,
                    "{where} uses `{name}`, declared neither there nor by TcUnit"
                );
                checked += 1;
            }
            for (head, field) in &u.fields {
                if head.eq_ignore_ascii_case("TcUnit") {
                    assert!(
                        tcunit_api(field).is_some(),
                        "{where} calls TcUnit.{field}, which TcUnit does not have"
                    );
                }
            }
            for call in &u.calls {
                let short = call.name.rsplit('.').next().unwrap_or(&call.name);
                let is_api = suite || call.name.to_ascii_uppercase().starts_with("TCUNIT.");
                let Some(Some(params)) = is_api.then(|| tcunit_api(short)).flatten() else {
                    continue;
                };
                let given: Vec<&str> = call.params.iter().flatten().map(String::as_str).collect();
                assert!(
                    given.len() == call.params.len()
                        && given.len() == params.len()
                        && params
                            .iter()
                            .all(|p| given.iter().any(|g| g.eq_ignore_ascii_case(p))),
                    "{where}: {}({:?}) does not name TcUnit's parameters {params:?}",
                    call.name,
                    call.params
                );
                asserts += 1;
            }
        }
    }
    assert!(checked >= 50, "too few names checked: {checked}");
    assert!(asserts >= 8, "too few TcUnit asserts found: {asserts}");
}

fn calls_named<'a>(u: &'a Uses, name: &'a str) -> impl Iterator<Item = &'a Call> {
    u.calls.iter().filter(move |c| c.name == name)
}

#[test]
fn the_tcunit_suite_has_its_tests_and_prg_test_runs_it() {
    let Some(report) = report() else { return };
    let suite = pou(report, "FB_CdprShadow_Test");
    assert_eq!(suite.kind, "function_block");
    assert_eq!(suite.extends, ["TcUnit.FB_TestSuite"]);
    let mut tests = BTreeSet::new();
    for u in &suite.uses {
        let named: Vec<String> = calls_named(u, "TEST")
            .filter_map(|c| c.first.as_deref())
            .map(|n| n.trim_matches('\'').to_string())
            .collect();
        match named.as_slice() {
            [] => {}
            [name] => {
                assert_eq!(name, &u.scope, "a test is named as its method");
                assert!(
                    calls_named(u, "TEST_FINISHED").next().is_some(),
                    "the test {name} never calls TEST_FINISHED()"
                );
                tests.insert(name.clone());
            }
            more => panic!("{}: several tests in one method: {more:?}", u.scope),
        }
    }
    let expected: BTreeSet<String> = [
        "ShadowEchoesWithinTwoCycles",
        "ShadowPoseFollowsCommand",
        "ShadowTensionsPositive",
    ]
    .map(String::from)
    .into();
    assert_eq!(tests, expected);
    // The suite's body calls every test.
    let body = suite
        .uses
        .iter()
        .find(|u| u.scope.is_empty())
        .expect("the suite's body");
    for test in &tests {
        assert!(
            body.calls.iter().any(|c| &c.name == test),
            "the suite's body does not call {test}"
        );
    }
    // Members the guide's table documents, with the types it gives.
    let fb = pou(report, "FB_CdprShadow");
    let member = |name: &str| {
        fb.declared
            .iter()
            .find(|d| d.scope.is_empty() && d.name == name)
            .map(|d| (d.block.as_str(), d.ty.as_str()))
    };
    assert_eq!(
        member("aAxes"),
        Some(("VAR_IN_OUT", "ARRAY [1..GVL_Shadow.MAX_CABLES] OF AXIS_REF"))
    );
    assert_eq!(member("bGroupMoving"), Some(("VAR_INPUT", "BOOL")));
    assert_eq!(member("tStallLimit"), Some(("VAR_INPUT", "TIME")));
    assert_eq!(member("bShadowStalled"), Some(("VAR_OUTPUT", "BOOL")));
    assert_eq!(member("nReactionCycles"), Some(("VAR_OUTPUT", "UDINT")));
    assert_eq!(member("nReactionMax"), Some(("VAR_OUTPUT", "UDINT")));
    let prg = pou(report, "PRG_TEST");
    assert_eq!(prg.kind, "program");
    assert!(
        prg.declared.iter().any(|d| d.ty == "FB_CdprShadow_Test"),
        "PRG_TEST declares no FB_CdprShadow_Test: {:?}",
        prg.declared
    );
    assert!(
        prg.uses
            .iter()
            .any(|u| u.calls.iter().any(|c| c.name == "TcUnit.RUN")),
        "PRG_TEST does not call TcUnit.RUN()"
    );
}

#[test]
fn the_twincat_readme_and_the_guide_name_every_library_file() {
    let root = cdpr_core::fixtures::workspace_root();
    for page in ["assets/twincat/README.md", "docs/src/plc-library.md"] {
        let text = std::fs::read_to_string(root.join(page)).expect(page);
        for file in LIBRARY {
            assert!(text.contains(file), "{page} does not name {file}");
        }
        assert!(
            text.contains("xUnitEnablePublish"),
            "{page} does not say how TcUnit writes its JUnit file"
        );
    }
}
