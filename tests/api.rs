//! The API table of docs/api.md against the code: every process (a type that implements `Process` under
//! src/process/) has a row, and every row is compiled (`api/rows.rs`: its constructors, `apply`, `output_shape` and
//! `strategy` exist with the arities the row lists, through the crate root, and the strategy type is printable);
//! README.md names every process. The page's own code (an `apply` of every process) runs as a doctest.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// All of src/process/ as one text.
fn process_sources() -> String {
    let mut files = Vec::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/process"), &mut files);
    files.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect::<Vec<_>>().join("\n")
}

/// The public types `impl … Process for Name<…>` names (a private adaptor, such as the pipeline's stage a caller
/// keeps a handle to, is no process of the API).
fn processes(sources: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in sources.lines().filter(|l| l.starts_with("impl") && l.contains(" Process for ")) {
        let after = line.split(" Process for ").nth(1).unwrap();
        let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if sources.contains(&format!("pub struct {name}")) {
            found.insert(name);
        }
    }
    found
}

/// The names `pub use` brings to the crate root (outside the prelude module).
fn root_exports(lib: &str) -> BTreeSet<String> {
    let top = lib.split("pub mod prelude").next().unwrap();
    let mut names = BTreeSet::new();
    let mut in_use = false;
    for line in top.lines() {
        let line = line.trim();
        if line.starts_with("pub use ") {
            in_use = true;
        }
        if in_use {
            let list = line.rsplit("::").next().unwrap_or(line);
            for word in list.split([',', '{', '}', ';', ' ']).filter(|w| !w.is_empty()) {
                names.insert(word.to_string());
            }
        }
        if line.ends_with(';') {
            in_use = false;
        }
    }
    names
}

struct Row {
    process: String,
    cells: Vec<String>,
}

/// The rows of the process table.
fn table() -> Vec<Row> {
    read("docs/api.md")
        .lines()
        .filter(|l| l.starts_with("| ") && l.matches('`').count() >= 2 && !l.contains("---"))
        .filter_map(|l| {
            let cells: Vec<String> = l.split('|').map(|c| c.trim().trim_matches('`').to_string()).collect();
            // | family | process | new | apply | output_shape | strategy |
            (cells.len() == 8 && cells[3].starts_with("new(")).then(|| Row { process: cells[2].clone(), cells })
        })
        .collect()
}

#[test]
fn the_api_table_has_every_process() {
    let in_code = processes(&process_sources());
    assert!(in_code.len() >= 27, "found only {in_code:?}");
    let in_table: BTreeSet<String> = table().into_iter().map(|r| r.process).collect();
    assert_eq!(in_table, in_code, "docs/api.md and src/process/ disagree");
}

/// The rows compiled in `api/rows.rs`: one test per row of the table (see that file).
#[path = "api/rows.rs"]
mod rows;

const ROWS_FILE: &str = "tests/api/rows.rs";
/// The line after which `api/rows.rs` holds the rows, one `row!` per line.
const ROWS_MARKER: &str = "// The rows (generated from docs/api.md";

/// What a `row!` line adds to its table row: the process with its element types (`Fft<Complex32>`) and, for an
/// `apply` generic in its arguments, the ` | apply as fn(…)` that pins it.
struct Instance {
    process: String,
    pinned: String,
}

/// The instances of the `row!` lines of `rows`, by process name.
fn instances(rows: &str) -> BTreeMap<String, Instance> {
    let mut found = BTreeMap::new();
    for line in rows.lines().filter_map(|l| l.strip_prefix("row! { ")?.strip_suffix(" }")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let (Some(process), Some(rest)) = (cells.get(1), cells.get(6..)) else { continue };
        let name: String = process.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let pinned = rest.iter().map(|cell| format!(" | {cell}")).collect();
        found.insert(name, Instance { process: process.to_string(), pinned });
    }
    found
}

/// The `row!` line of a table row, with the instance its committed line gives (`<f32>` for a new row).
fn row_line(row: &Row, instance: Option<&Instance>) -> String {
    let [_, family, _, new, apply, shape, strategy, _] = &row.cells[..] else {
        panic!("{}: a row of {} cells", row.process, row.cells.len())
    };
    let (process, pinned) = instance.map_or((format!("{}<f32>", row.process), ""), |i| (i.process.clone(), &i.pinned));
    // WalshMaps lists two constructors, each in backticks: `new(…)`; `from_kspace(…)`.
    let new = new.replace('`', "");
    format!("row! {{ {family} | {process} | {new} | {apply} | {shape} | {strategy}{pinned} }}")
}

#[test]
fn every_row_of_the_api_table_is_compiled() {
    let text = read(ROWS_FILE);
    let at = text.find(ROWS_MARKER).expect("the rows' marker line in tests/api/rows.rs");
    let marker_end = at + text[at..].find('\n').unwrap_or(text.len() - at);
    let (head, rows) = text.split_at(marker_end);
    let compiled = instances(rows);
    let expected: Vec<String> = table().iter().map(|row| row_line(row, compiled.get(&row.process))).collect();
    let got: Vec<&str> = rows.lines().filter(|l| !l.trim().is_empty()).collect();
    if got == expected {
        return;
    }
    if std::env::var_os("CLIPER_BLESS").is_some() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(ROWS_FILE);
        std::fs::write(path, format!("{head}\n{}\n", expected.join("\n"))).unwrap();
        return;
    }
    let missing: Vec<&String> = expected.iter().filter(|line| !got.contains(&line.as_str())).collect();
    let stale: Vec<&&str> = got.iter().filter(|line| !expected.contains(&line.to_string())).collect();
    panic!(
        "tests/api/rows.rs is not docs/api.md's table (CLIPER_BLESS=1 cargo test --test api rewrites it)\n\
         rows the table has: {missing:#?}\nrows it does not: {stale:#?}"
    );
}

#[test]
fn the_readme_names_every_process() {
    let readme = read("README.md");
    for p in processes(&process_sources()) {
        assert!(readme.contains(&format!("`{p}`")), "README.md does not name {p}");
    }
}

/// The doc comment (and attributes) right above line `i`.
fn doc_above(lines: &[&str], i: usize) -> Vec<String> {
    lines[..i]
        .iter()
        .rev()
        // Doc lines, attributes, and the lines of an attribute written over several (`#[command(\n    …\n)]`).
        .take_while(|l| {
            let t = l.trim_start();
            t.starts_with("///")
                || t.starts_with("#[")
                || t.starts_with(")]")
                || (l.starts_with("    ") && !t.is_empty())
        })
        .map(|l| l.to_string())
        .collect()
}

#[test]
fn every_public_type_has_a_runnable_example() {
    let lib = read("src/lib.rs");
    let exports = root_exports(&lib);
    let mut files = Vec::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    let mut checked = 0;
    let mut missing = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let public_module = file.components().any(|c| c.as_os_str() == "chain");
        for (i, line) in lines.iter().enumerate() {
            let Some(rest) = ["pub struct ", "pub enum ", "pub trait "].iter().find_map(|p| line.strip_prefix(p))
            else {
                continue;
            };
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !exports.contains(&name) && !public_module {
                continue;
            }
            checked += 1;
            if !doc_above(&lines, i).iter().any(|l| l.contains("```")) {
                missing.push(format!("{name} ({})", file.display()));
            }
        }
    }
    assert!(checked > 80, "only {checked} public types found");
    assert!(missing.is_empty(), "public types without a runnable example: {missing:#?}");
}
