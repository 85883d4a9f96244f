//! The API table of docs/api.md against the code: every process (a type that implements `Process` under
//! src/process/) has a row with all four columns filled, is re-exported at the crate root, and its strategy type
//! is re-exported and printable; README.md names every process. The page's own code (an `apply` of every
//! process) runs as a doctest.

use std::collections::BTreeSet;
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

/// The types `impl … Process for Name<…>` names.
fn processes(sources: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in sources.lines().filter(|l| l.starts_with("impl") && l.contains(" Process for ")) {
        let after = line.split(" Process for ").nth(1).unwrap();
        let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        found.insert(name);
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
fn the_api_table_has_every_process_and_no_hole() {
    let sources = process_sources();
    let in_code = processes(&sources);
    assert!(in_code.len() >= 27, "found only {in_code:?}");
    let rows = table();
    let in_table: BTreeSet<String> = rows.iter().map(|r| r.process.clone()).collect();
    assert_eq!(in_table, in_code, "docs/api.md and src/process/ disagree");
    let exports = root_exports(&read("src/lib.rs"));
    for row in &rows {
        let p = &row.process;
        assert!(exports.contains(p), "{p} is not re-exported in src/lib.rs");
        let [_, _, _, new, apply, shape, strategy, _] = &row.cells[..] else { panic!("{p}: {:?}", row.cells) };
        assert!(new.starts_with("new(") && apply.starts_with("apply(") && shape.starts_with("output_shape("), "{p}");
        for (column, cell) in [("new", new), ("apply", apply), ("output_shape", shape)] {
            let name = cell.split('(').next().unwrap();
            assert!(
                sources.contains(&format!("pub fn {name}(")) || sources.contains(&format!("pub fn {name}<")),
                "{p}: no `pub fn {column}` in src/process"
            );
        }
        assert!(exports.contains(strategy.as_str()), "{p}'s strategy type {strategy} is not re-exported");
        assert!(
            sources.contains(&format!("impl std::fmt::Display for {strategy} ")),
            "{strategy} ({p}'s strategy) has no Display"
        );
        assert!(sources.contains(&format!("-> Option<{strategy}>")), "{p}: no strategy() returning {strategy}");
    }
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
        .take_while(|l| l.trim_start().starts_with("///") || l.trim_start().starts_with("#["))
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
