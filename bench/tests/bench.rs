//! `cliper-bench suite` and `report` end to end: a short suite run writes JSON records that `report` reads back,
//! and the committed H100 run (docs/benchmarks/) still gives the report the documentation quotes — so a change
//! to the peer matcher or the goals shows up here, not in a wrong table.
//!
//! No timing is asserted (speed goals are judged by the report, not by tests); only structure, that every
//! output check passed, and the committed run's verdicts.

use assert_cmd::Command;
use serde_json::Value;
use std::path::PathBuf;

fn bench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cliper-bench"));
    // The repository's root, where docs/benchmarks/ and scripts/bench/ are.
    c.current_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    c
}

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cliper-bench-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_quick_suite_writes_checked_records_that_report_reads() {
    let dir = scratch("suite");
    let json = dir.join("run.json");
    // The copy ceiling always runs; chain10 exercises ten processes, the chain overhead fields and a check;
    // the transpose gives the bandwidth plot a case.
    let out = bench()
        .args(["suite", "--quick", "--only", "transpose,chain10", "--budget-ms", "50", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let records: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let records = records.as_array().unwrap();
    let cases: Vec<&str> = records.iter().map(|r| r["case"].as_str().unwrap()).collect();
    assert_eq!(cases, ["copy_buffer", "copy_kernel", "transpose_16384", "chain10"]);
    for r in records {
        assert_eq!(r["quick"], true);
        let (median, min, max) =
            (r["median_ms"].as_f64().unwrap(), r["min_ms"].as_f64().unwrap(), r["max_ms"].as_f64().unwrap());
        assert!(min > 0.0 && min <= median && median <= max, "{r}");
        assert!(r["runs"].as_u64().unwrap() >= 3, "{r}");
    }
    assert_eq!((records[2]["size"].as_str(), records[2]["max_error"].as_f64()), (Some("2048x2048"), Some(0.0)));
    let chain = &records[3];
    // 13 on GPUs; 12 on CPU devices, where the row norms are one host command instead of two kernels.
    let commands = chain["commands"].as_u64().unwrap();
    assert!(commands == 13 || commands == 12, "{chain}");
    assert!(chain["max_error"].as_f64().unwrap() <= chain["tolerance"].as_f64().unwrap(), "{chain}");
    assert!(chain["overhead_us_per_process"].is_number() && chain["enqueue_us_per_process"].is_number());
    assert!(records[0]["gbps"].as_f64().unwrap() > 0.0);

    let peers = dir.join("peers.txt");
    std::fs::write(&peers, "numpy   copy                   4194304                 1.0000 ms\n").unwrap();
    let plots = dir.join("plots");
    let md = dir.join("report.md");
    bench()
        .arg("report")
        .arg(&json)
        .arg("--peers")
        .arg(&peers)
        .arg("--markdown")
        .arg(&md)
        .arg("--plots")
        .arg(&plots)
        .assert()
        .success();
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("| chain10 | 256x256 |") && text.contains("numpy 1.0000"), "{text}");
    assert!(plots.join("bandwidth.svg").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_committed_h100_run_reports_as_documented() {
    let out = bench()
        .args([
            "report",
            "docs/benchmarks/h100-2026-11-22.json",
            "--peers",
            "docs/benchmarks/h100-2026-11-22-peers.txt",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    // Every peer line of the call lands on a case except the second filter bank, which the suite does not run.
    assert!(
        text.contains("Peer lines at sizes the suite did not run: cuDNN filterbank 64x64x56x56 * 64x64x3x3."),
        "{text}"
    );
    assert!(text.contains("Goals met: 1 of 20"), "{text}");
    assert!(text.contains("| transpose_16384 | 16384x16384 | 0.7426 | 2892 GB/s | CLBlast 0.7700, CuPy 2.2377, torch 2.3091 | 1.04× | ≤ 0.78 ms | yes |"), "{text}");
    assert!(
        text.contains(
            "| sgemm_4096 | 4096 | 3.9833 | 34.5 TF/s | cuBLAS 2.6710, CLBlast 4.6640 | 0.67× | ≥ 47 TF/s | **no** |"
        ),
        "{text}"
    );
}

#[test]
fn bad_input_is_one_clear_error() {
    let out = bench().args(["report", "no/such/run.json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no/such/run.json") && !stderr.contains("panicked"), "{stderr}");
    let dir = scratch("bad");
    let json = dir.join("not.json");
    std::fs::write(&json, "[{\"case\": 1}]").unwrap();
    let out = bench().arg("report").arg(&json).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(1) && stderr.contains("not a cliper-bench suite JSON"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
