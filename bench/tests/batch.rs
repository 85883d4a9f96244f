//! `cliper-bench batch` end to end on tiny batches (two files of 16 × 32 × 32, PNGs of 32 × 32): the data made
//! by scripts/bench/peer_batch.py, `cliper run` timed beside the scipy peer, the outputs checked against the
//! peer's, and the table and JSON the documentation describes. No timing is asserted (the goals are judged by
//! the table on real sizes); the check must pass — a case whose cliper output differs from scipy's fails the run.
//!
//! Skipped, with the reason printed, when python3 lacks what peer_batch.py imports.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Why the peers cannot run here, if they cannot.
fn python_missing() -> Option<String> {
    let probe =
        std::process::Command::new("python3").args(["-c", "import numpy, scipy, nibabel, pydicom, PIL"]).output();
    match probe {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("").to_string()),
        Err(e) => Some(format!("python3: {e}")),
    }
}

/// The `cliper` binary of this build: cliper-cli is another package, so it is built here into the same target
/// directory and profile (nothing to do when it is up to date) — with every feature, as `make test` builds it:
/// a build without them would replace the binary the CLI's own tests (the `mpi` one) run meanwhile.
fn cliper_binary() -> PathBuf {
    let bench = PathBuf::from(env!("CARGO_BIN_EXE_cliper-bench"));
    let dir = bench.parent().unwrap().to_path_buf();
    let mut build = std::process::Command::new(env!("CARGO"));
    build.args(["build", "-q", "-p", "cliper-cli", "--all-features", "--bin", "cliper"]).current_dir(root());
    if dir.file_name().is_some_and(|n| n == "release") {
        build.arg("--release");
    }
    assert!(build.status().unwrap().success(), "building cliper-cli failed");
    dir.join("cliper")
}

#[test]
fn a_tiny_batch_is_timed_checked_and_recorded() {
    if let Some(reason) = python_missing() {
        println!("skipped: python3 cannot run scripts/bench/peer_batch.py ({reason})");
        return;
    }
    let dir = std::env::temp_dir().join(format!("cliper-bench-batch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let json = dir.join("batch.json");
    let out = Command::new(env!("CARGO_BIN_EXE_cliper-bench"))
        .current_dir(root())
        .args(["batch", "--quick", "--count", "2", "--shape", "16,32,32", "--peers", "scipy", "--dir"])
        .arg(dir.join("work"))
        .arg("--cliper")
        .arg(cliper_binary())
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));

    // One table per case, each with cliper, the scipy peer and the copy limit, and the goal lines.
    for case in ["batch_ct", "batch_png", "batch_dicom"] {
        assert!(stdout.contains(&format!("{case}: 2 × ")), "{case}\n{stdout}");
    }
    assert_eq!(stdout.matches("| tool | wall s | files/s | × vs cliper |").count(), 3, "{stdout}");
    assert_eq!(stdout.matches("check: passed").count(), 3, "{stdout}");
    assert_eq!(stdout.matches("goal ≤ 1.5× the copy limit: ").count(), 3, "{stdout}");
    assert!(stdout.contains("| nibabel/pydicom/Pillow + scipy, one process | "), "{stdout}");

    let records: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let records = records.as_array().unwrap();
    let ids: Vec<&str> = records.iter().map(|r| r["case"].as_str().unwrap()).collect();
    assert_eq!(ids, ["batch_ct", "batch_png", "batch_dicom"]);
    for (r, (shape, input_files)) in records.iter().zip([("16x32x32", 2), ("32x32", 2), ("16x32x32", 32)]) {
        assert_eq!((r["failed"].as_bool(), r["check"]["passed"].as_bool()), (Some(false), Some(true)), "{r}");
        assert_eq!((r["count"].as_u64(), r["shape"].as_str()), (Some(2), Some(shape)), "{r}");
        // A DICOM series is a folder of slices: every slice is read, one NIfTI written per series.
        assert_eq!((r["input_files"].as_u64(), r["output_files"].as_u64()), (Some(input_files), Some(2)), "{r}");
        let tools: Vec<&str> = r["tools"].as_array().unwrap().iter().map(|t| t["tool"].as_str().unwrap()).collect();
        assert_eq!(tools, ["cliper", "scipy", "copy-once", "copy-once-fsync"], "{r}");
        for t in r["tools"].as_array().unwrap() {
            let wall = t["wall_s"].as_f64().unwrap();
            assert!(wall > 0.0 && t["files_per_s"].as_f64().unwrap() > 0.0, "{t}");
            assert_eq!(t["runs_s"].as_array().unwrap().len(), 1, "{t}");
        }
        assert_eq!(r["tools"][0]["vs_cliper"].as_f64(), Some(1.0));
        let peak = r["peak_rss_bytes"].as_u64().unwrap();
        assert!(peak > 1 << 20 && peak < r["host_budget_bytes"].as_u64().unwrap(), "{r}");
        assert_eq!(r["peer_lines"].as_array().unwrap().len(), 1, "{r}");
        assert!(r["peer_lines"][0].as_str().unwrap().starts_with("scipy batch-"), "{r}");
        let goals: Vec<&str> = r["goals"].as_array().unwrap().iter().map(|g| g["goal"].as_str().unwrap()).collect();
        assert!(goals.contains(&"≤ 1.5× the copy limit") && goals.contains(&"peak RSS within the host budget"));
    }
    // Outputs are removed (no --keep); the data stays for the next run.
    assert!(!dir.join("work/out/ct").exists());
    assert!(dir.join("work/data/dicom-2x16x32x32/series001").is_dir());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_wrong_cliper_output_marks_the_case_failed() {
    if let Some(reason) = python_missing() {
        println!("skipped: python3 cannot run scripts/bench/peer_batch.py ({reason})");
        return;
    }
    // The CT pipeline with another threshold: a different image, which the check must catch.
    let dir = std::env::temp_dir().join(format!("cliper-bench-batch-wrong-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let pipelines = dir.join("pipelines");
    std::fs::create_dir_all(&pipelines).unwrap();
    let right = std::fs::read_to_string(root().join("pipelines/bench/ct-batch.toml")).unwrap();
    assert!(right.contains("value = 300\n"));
    std::fs::write(pipelines.join("ct-batch.toml"), right.replace("value = 300\n", "value = 250\n")).unwrap();
    let json = dir.join("batch.json");
    let out = Command::new(env!("CARGO_BIN_EXE_cliper-bench"))
        .current_dir(root())
        .args(["batch", "--cases", "ct", "--count", "2", "--shape", "16,32,32", "--peers", "scipy", "--dir"])
        .arg(dir.join("work"))
        .arg("--cliper")
        .arg(cliper_binary())
        .arg("--pipelines")
        .arg(&pipelines)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("check: FAILED: ") && !stderr.contains("panicked"), "{stdout}\n{stderr}");
    assert!(stderr.contains("batch_ct: ") && stderr.lines().count() == 1, "{stderr}");
    let records: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let r = &records[0];
    assert_eq!((r["failed"].as_bool(), r["check"]["passed"].as_bool()), (Some(true), Some(false)), "{r}");
    // The timings are still there: a failed check does not hide them.
    assert!(r["tools"][0]["wall_s"].as_f64().unwrap() > 0.0, "{r}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_shape_is_one_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_cliper-bench"))
        .current_dir(root())
        .args(["batch", "--shape", "32,32", "--cases", "ct"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--shape [32, 32]: give Z,Y,X") && !stderr.contains("panicked"), "{stderr}");
}
