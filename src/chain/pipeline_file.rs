//! Pipeline files (`cliper run`, docs/cli.md): named inputs, steps that each run one [`Op`] on named arrays, and
//! the arrays to save; parsed and checked here, run by `run.rs`.

use super::any_data::{FileSpec, OutputOptions, Precision};
use super::ops::{ConvolveArgs, Op};
use crate::{Dtype, Error, Result, Scale};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// One step: an operation, the arrays it reads and the name of the array it writes.
///
/// ```
/// let chain = cliper::chain::Chain::from_file("pipelines/demo.toml".as_ref())?;
/// let first = &chain.steps[0];
/// assert_eq!((first.op.name(), first.inputs.as_slice(), first.output.as_str()), ("pad", &["image".to_string()][..], "padded"));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Step {
    /// The operation and its parameters.
    pub op: Op,
    /// The names of the arrays it reads.
    pub inputs: Vec<String>,
    /// The name of the array it writes.
    pub output: String,
}

/// A whole chain: inputs (files, or one directory/glob for a batch), steps, and the arrays to save.
///
/// ```
/// use cliper::chain::Chain;
/// let text = r#"
///     input = { image = "data/phantom_256.png" }
///     [[step]]
///     op = "convolve"
///     kernel = "gaussian:2"
///     in = "image"
///     out = "smooth"
///     [output]
///     smooth = "out/smooth.tif"
/// "#;
/// let chain = Chain::from_toml(text, std::path::Path::new("blur.toml"))?;
/// assert_eq!((chain.steps.len(), chain.outputs[0].1.as_str()), (1, "out/smooth.tif"));
/// let err = Chain::from_toml(&text.replace("in = \"image\"", "in = \"img\""), "b.toml".as_ref()).unwrap_err();
/// assert!(err.to_string().contains("reads `img`, which no input or earlier step defines"));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Chain {
    /// The precision the device computes in.
    pub precision: Precision,
    /// Input name and file spec (a file, `FILE.mat:VAR`, or a directory/glob for a batch).
    pub inputs: Vec<(String, String)>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// Array name, file (or directory / `{stem}` template), and its own conversion when the file gives one.
    pub outputs: Vec<(String, String, Option<OutputOptions>)>,
    /// The conversion for outputs without their own (the command line's --type/--scale/--clip).
    pub options: OutputOptions,
}

/// An `[output]` entry: a path, or a table with the path and how to convert.
#[derive(Deserialize)]
#[serde(untagged)]
enum OutputEntry {
    Path(String),
    Full {
        path: String,
        #[serde(rename = "type", default, deserialize_with = "dtype_name")]
        dtype: Option<Dtype>,
        #[serde(default, deserialize_with = "scale_name")]
        scale: Option<Scale>,
        #[serde(default)]
        clip: bool,
    },
}

fn dtype_name<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Dtype>, D::Error> {
    Dtype::parse(&String::deserialize(d)?).map(Some).map_err(serde::de::Error::custom)
}

fn scale_name<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Scale>, D::Error> {
    String::deserialize(d)?.parse().map(Some).map_err(serde::de::Error::custom)
}

/// The TOML layout of a pipeline file (see docs/cli.md).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PipelineToml {
    #[serde(default)]
    precision: Precision,
    input: BTreeMap<String, String>,
    #[serde(default)]
    step: Vec<toml::Table>,
    #[serde(default)]
    output: BTreeMap<String, OutputEntry>,
}

impl Chain {
    /// Reads a pipeline file; every mistake is an error naming the file and the step.
    ///
    /// Relative paths in the file — inputs, outputs, filter files — are relative to the file's folder, so a
    /// pipeline runs the same from any current directory (paths given on the command line with `--input` /
    /// `--output` stay relative to the current directory).
    pub fn from_file(path: &Path) -> Result<Chain> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        let mut chain = Chain::from_toml(&text, path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            chain.resolve_from(dir);
        }
        Ok(chain)
    }

    /// Makes the relative paths of the chain's files relative to `dir` instead.
    fn resolve_from(&mut self, dir: &Path) {
        let resolve = |spec: &mut String| {
            if Path::new(spec.as_str()).is_relative() {
                *spec = dir.join(spec.as_str()).to_string_lossy().into_owned();
            }
        };
        self.inputs.iter_mut().for_each(|(_, spec)| resolve(spec));
        self.outputs.iter_mut().for_each(|(_, spec, _)| resolve(spec));
        for step in &mut self.steps {
            // A filter file, not a named filter (`gaussian:1.5`, `sobel-x`): it ends in a file format's extension.
            let file_like = |k: &str| {
                let path = FileSpec::parse(k).path;
                let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
                ["npy", "mat", "png", "tif", "tiff", "cfl", "hdr", "nii", "gz", "nrrd", "nhdr", "mha", "mhd"]
                    .contains(&ext.as_str())
            };
            if let Op::Convolve(ConvolveArgs { kernel, .. }) = &mut step.op
                && file_like(kernel)
            {
                resolve(kernel);
            }
        }
    }

    /// Parses a pipeline file's text; `path` names it in errors.
    pub fn from_toml(text: &str, path: &Path) -> Result<Chain> {
        let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
        let file: PipelineToml = toml::from_str(text).map_err(|e| bad(toml_error(&e, text)))?;
        let mut steps = Vec::with_capacity(file.step.len());
        for (i, mut table) in file.step.into_iter().enumerate() {
            let n = i + 1;
            let inputs = match table.remove("in") {
                Some(toml::Value::String(s)) => vec![s],
                Some(toml::Value::Array(a)) => a
                    .into_iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| bad(format!("step {n}: `in` must be a name or a list of names")))?,
                Some(_) => return Err(bad(format!("step {n}: `in` must be a name or a list of names"))),
                None => return Err(bad(format!("step {n} has no `in` (the array(s) it reads)"))),
            };
            let output = match table.remove("out") {
                Some(toml::Value::String(s)) => s,
                _ => return Err(bad(format!("step {n} needs `out = \"NAME\"` (the array it writes)"))),
            };
            let op = Op::deserialize(toml::Value::Table(table))
                .map_err(|e| bad(format!("step {n}: {}", e.to_string().trim_end().replace('\n', " "))))?;
            steps.push(Step { op, inputs, output });
        }
        let chain = Chain {
            precision: file.precision,
            inputs: file.input.into_iter().collect(),
            steps,
            outputs: file
                .output
                .into_iter()
                .map(|(name, entry)| match entry {
                    OutputEntry::Path(path) => (name, path, None),
                    OutputEntry::Full { path, dtype, scale, clip } => {
                        (name, path, Some(OutputOptions { dtype, scale, clip }))
                    }
                })
                .collect(),
            options: OutputOptions::default(),
        };
        chain.check().map_err(bad)?;
        Ok(chain)
    }

    /// Names are defined before use, once; each step has the inputs its operation takes.
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.steps.is_empty() {
            return Err("the pipeline has no [[step]]".into());
        }
        let mut defined: Vec<&str> = self.inputs.iter().map(|(n, _)| n.as_str()).collect();
        for (i, step) in self.steps.iter().enumerate() {
            for name in &step.inputs {
                if !defined.contains(&name.as_str()) {
                    return Err(format!(
                        "step {} ({}) reads `{name}`, which no input or earlier step defines; defined so far: {defined:?}",
                        i + 1,
                        step.op.name()
                    ));
                }
            }
            if !step.op.takes(step.inputs.len()) {
                return Err(format!(
                    "step {} ({}) takes {} input(s), `in` names {}",
                    i + 1,
                    step.op.name(),
                    step.op.arity(),
                    step.inputs.len()
                ));
            }
            if defined.contains(&step.output.as_str()) {
                return Err(format!("step {} writes `{}`, a name already in use", i + 1, step.output));
            }
            defined.push(&step.output);
        }
        for (name, _, _) in &self.outputs {
            if !defined.contains(&name.as_str()) {
                return Err(format!("[output] names `{name}`, which is not an input or a step's output"));
            }
        }
        Ok(())
    }

    /// Replaces an input's file (`--input NAME=PATH`).
    pub fn set_input(&mut self, assignment: &str) -> Result<()> {
        let (name, value) = split_assignment(assignment, "input")?;
        let names: Vec<String> = self.inputs.iter().map(|(n, _)| n.clone()).collect();
        let entry = self.inputs.iter_mut().find(|(n, _)| n == name).ok_or_else(|| unknown("input", name, &names))?;
        entry.1 = value.to_string();
        Ok(())
    }

    /// Replaces an output's file, or saves one more array (`--output NAME=PATH`).
    pub fn set_output(&mut self, assignment: &str) -> Result<()> {
        let (name, value) = split_assignment(assignment, "output")?;
        match self.outputs.iter_mut().find(|(n, _, _)| n == name) {
            Some(entry) => entry.1 = value.to_string(),
            None => self.outputs.push((name.to_string(), value.to_string(), None)),
        }
        self.check().map_err(|reason| Error::invalid("--output", reason))
    }
}

fn split_assignment<'a>(text: &'a str, what: &str) -> Result<(&'a str, &'a str)> {
    text.split_once('=').ok_or_else(|| Error::invalid(what, format!("`{text}` is not NAME=PATH")))
}

fn unknown(what: &str, name: &str, names: &[String]) -> Error {
    Error::invalid(what, format!("the pipeline has no {what} `{name}`; it has {names:?}"))
}

/// A TOML error on one line: where (line and column, from 1) and what, without the quoted source the parser's
/// own message spreads over several lines.
fn toml_error(e: &toml::de::Error, text: &str) -> String {
    let message = e.message().trim_end().replace('\n', "; ");
    match e.span() {
        Some(span) => {
            let before = text.get(..span.start).unwrap_or_default();
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().unwrap_or_default().chars().count() + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GemmPrecision;
    use crate::chain::ops::MatmulArgs;

    /// A matmul step's `gemm_precision` reaches the op; an unknown one is refused naming it and the choices.
    #[test]
    fn matmul_steps_take_a_gemm_precision() {
        let text = r#"
            input = { a = "a.npy", b = "b.npy" }
            [[step]]
            op = "matmul"
            in = ["a", "b"]
            gemm_precision = "tf32"
            out = "c"
            [output]
            c = "c.npy"
        "#;
        let chain = Chain::from_toml(text, Path::new("p.toml")).unwrap();
        let Some(Op::Matmul(MatmulArgs { gemm_precision, .. })) = chain.steps.first().map(|s| &s.op) else {
            panic!("{:?}", chain.steps)
        };
        assert_eq!(*gemm_precision, GemmPrecision::Tf32);
        let err = Chain::from_toml(&text.replace("\"tf32\"", "\"half\""), Path::new("p.toml")).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("half") && message.contains("fp32-split") && message.contains("p.toml"), "{message}");
    }
}
