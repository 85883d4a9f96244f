//! What every CLI test file shares: running the binary from the repository root, scratch folders, reading
//! results back and comparing them.
#![allow(dead_code)] // each test file uses its own share of these

use assert_cmd::Command;
use cliper::{ClApp, HostArray, read_file};
use ndarray::ArrayD;
use std::path::{Path, PathBuf};

/// The repository's root: the sample data and pipelines are named from there, as the README runs them.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn cliper() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cliper"));
    c.current_dir(root());
    c
}

/// The device the binary also picks (the best one, or CLIPER_DEVICE's), for library calls to compare with.
pub fn app() -> ClApp {
    ClApp::builder().use_env(true).build().unwrap()
}

pub fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cliper-cli-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs and returns stdout, asserting success.
pub fn ok(args: &[&str]) -> String {
    let out = cliper().args(args).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "cliper {args:?} failed:\n{stdout}\n{stderr}");
    stdout.into_owned()
}

/// Runs, expects failure with `code`, returns stderr (which must be free of panics and backtraces).
pub fn fails(args: &[&str], code: i32) -> String {
    let out = cliper().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "cliper {args:?}: {stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"), "{stderr}");
    stderr
}

pub fn f32s(path: &Path) -> ArrayD<f64> {
    match read_file(path).unwrap() {
        HostArray::F32(a) => a.mapv(f64::from),
        HostArray::F64(a) => a,
        // Labels (int32) and masks (uint8) are written in scipy's types: their values, exactly.
        whole @ (HostArray::I32(_) | HostArray::U8(_)) => whole.to_elements::<f64>(path).unwrap(),
        other => panic!("{} holds {:?}", path.display(), other.dtype()),
    }
}

/// `got` equals `want` within `rel` of the largest magnitude of `want`.
pub fn close(got: &ArrayD<f64>, want: &ArrayD<f64>, rel: f64, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-30);
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= rel * scale, "{what}: {g} vs {w}");
    }
}

/// A CSV table the binary wrote (`measure`, `regionprops`, `peak-local-max`): its header and rows of numbers.
pub fn csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(str::to_string).collect();
    let rows = lines.map(|l| l.split(',').map(|v| v.parse::<f64>().unwrap()).collect()).collect();
    (header, rows)
}
