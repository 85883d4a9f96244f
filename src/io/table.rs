//! Tables: results of a row per label and named columns (`measure`), printed aligned or saved as CSV or JSON.

use super::host_array::HostArray;
use super::save::write_atomically;
use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// A table of numbers with named columns: what `measure` gives, one row per label.
///
/// Numbers are written so that they read back exactly: Rust's shortest round-trip form, whole numbers without a
/// fraction (`3`, not `3.0`), NaN as `nan` in CSV (numpy's `loadtxt` and pandas read it) and `null` in JSON.
///
/// ```
/// use cliper::Table;
/// let t = Table::new(vec!["label".into(), "mean".into()], vec![vec![1.0, 0.1], vec![2.0, f64::NAN]])?;
/// assert_eq!(t.to_csv(), "label,mean\n1,0.1\n2,nan\n");
/// assert_eq!(t.to_json(), r#"{"label": [1, 2], "mean": [0.1, null]}"#);
/// assert_eq!(t.to_text(), "label  mean\n    1   0.1\n    2   nan\n");
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// The column names.
    pub columns: Vec<String>,
    /// The rows, each as long as `columns`.
    pub rows: Vec<Vec<f64>>,
}

impl Table {
    /// A table of `rows` under `columns`; refuses a row of another length.
    pub fn new(columns: Vec<String>, rows: Vec<Vec<f64>>) -> Result<Table> {
        if let Some((k, row)) = rows.iter().enumerate().find(|(_, r)| r.len() != columns.len()) {
            return Err(Error::invalid(
                "table",
                format!("row {k} has {} values for {} columns {columns:?}", row.len(), columns.len()),
            ));
        }
        Ok(Table { columns, rows })
    }

    /// The table a `[rows, columns]` float64 array holds, under `columns`.
    pub fn from_host(columns: Vec<String>, array: &HostArray) -> Result<Table> {
        let HostArray::F64(values) = array else {
            return Err(Error::invalid("table", format!("a table is float64, not {}", array.dtype().name())));
        };
        let width = columns.len();
        if values.ndim() != 2 || values.shape().get(1) != Some(&width) {
            return Err(Error::invalid(
                "table",
                format!("{width} columns {columns:?} for an array of shape {:?}", values.shape()),
            ));
        }
        let flat: Vec<f64> = values.iter().copied().collect();
        Table::new(columns, flat.chunks(width.max(1)).map(<[f64]>::to_vec).collect())
    }

    /// The CSV text: a header line, then a line per row.
    pub fn to_csv(&self) -> String {
        let mut text = self.columns.join(",") + "\n";
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(|&v| number(v)).collect();
            text += &(cells.join(",") + "\n");
        }
        text
    }

    /// The JSON text: an object of column name → list of values (pandas' `orient="list"`), NaN as `null`.
    pub fn to_json(&self) -> String {
        let columns: Vec<String> = self
            .columns
            .iter()
            .enumerate()
            .map(|(k, name)| {
                let cell = |row: &Vec<f64>| match row.get(k) {
                    Some(v) if v.is_finite() => number(*v),
                    _ => "null".into(),
                };
                let values: Vec<String> = self.rows.iter().map(cell).collect();
                format!("{}: [{}]", json_string(name), values.join(", "))
            })
            .collect();
        format!("{{{}}}", columns.join(", "))
    }

    /// The table as aligned text: each column as wide as its widest cell, numbers right-aligned.
    pub fn to_text(&self) -> String {
        let cells: Vec<Vec<String>> = self.rows.iter().map(|r| r.iter().map(|&v| number(v)).collect()).collect();
        let widths: Vec<usize> = self
            .columns
            .iter()
            .enumerate()
            .map(|(k, name)| {
                cells.iter().filter_map(|r| r.get(k)).map(String::len).chain([name.len()]).max().unwrap_or(0)
            })
            .collect();
        let line = |items: Vec<String>| -> String {
            let padded: Vec<String> = items.iter().zip(&widths).map(|(c, w)| format!("{c:>w$}")).collect();
            padded.join("  ") + "\n"
        };
        let mut text = line(self.columns.clone());
        for row in cells {
            text += &line(row);
        }
        text
    }

    /// Writes the table to `path` as CSV (`.csv`) or JSON (`.json`), through a temporary file (no partial file
    /// on failure). Another extension is refused, naming the path.
    pub fn save(&self, path: &Path) -> Result<()> {
        let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        let text = match extension.as_deref() {
            Some("csv") => self.to_csv(),
            Some("json") => self.to_json() + "\n",
            _ => {
                return Err(Error::Format {
                    path: path.to_path_buf(),
                    reason: "a table is written as .csv or .json (or as an array to .npy)".into(),
                });
            }
        };
        write_atomically(path, |file| file.write_all(text.as_bytes()).map_err(|e| e.to_string()))
    }
}

/// A number as it reads back exactly: the shortest round-trip form, lower-case `nan` and `inf`.
fn number(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        format!("{v}")
    }
}

/// A JSON string literal of `text`.
fn json_string(text: &str) -> String {
    let escaped: String = text
        .chars()
        .flat_map(|c| match c {
            '"' => vec!['\\', '"'],
            '\\' => vec!['\\', '\\'],
            c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32).chars().collect(),
            c => vec![c],
        })
        .collect();
    format!("\"{escaped}\"")
}
