//! `mpirun -n 2 cliper …` (the `mpi` feature): the two ranks share a batch of 20 files and give the same files
//! one process gives; rank 0 alone writes the manifest, one line per file; a file that fails is named, the others
//! are done, and the job exits non-zero. Without the feature, a process launched as one of several ranks refuses.

mod common;
use cliper::{HostArray, write_npy};
use common::*;
use std::path::Path;

/// 20 files of different shapes (none a multiple of a work-group's size), values not symmetric.
fn batch(dir: &Path) -> std::path::PathBuf {
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    for i in 0..20 {
        let (rows, cols) = (37 + 3 * i, 29 + i);
        let values: Vec<f32> = (0..rows * cols).map(|k| ((k * 7 + 5 * i) % 23) as f32 / 23.0 - 0.3).collect();
        let a = HostArray::F32(ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[rows, cols]), values).unwrap());
        write_npy(input.join(format!("f{i:02}.npy")), &a).unwrap();
    }
    input
}

fn mpirun(args: &[&str]) -> std::process::Output {
    // Open MPI refuses root and more ranks than cores unless told; CI runs as root on 2 cores.
    let mut command = std::process::Command::new("mpirun");
    command.args(["-n", "2", "--allow-run-as-root", "--oversubscribe", env!("CARGO_BIN_EXE_cliper")]).args(args);
    command.current_dir(root());
    for var in ["SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "JOB_COMPLETION_INDEX", "CLIPER_SHARDS"] {
        command.env_remove(var);
    }
    command.output().expect("mpirun is missing: scripts/install-mpi.sh installs Open MPI (make test runs it)")
}

#[test]
#[cfg_attr(
    not(feature = "mpi"),
    ignore = "needs the `mpi` feature: cargo test -p cliper-cli --features mpi (make test builds every feature)"
)]
fn two_ranks_share_a_batch_and_write_what_one_process_writes() {
    let dir = scratch("mpi");
    let input = batch(&dir);
    let (one, two) = (dir.join("one"), dir.join("two"));
    let manifest = dir.join("manifest.jsonl");
    let blur =
        |out: &Path| vec!["gaussian-filter".to_string(), input.display().to_string(), format!("{}/", out.display())];
    let mut args = blur(&one);
    args.extend(["--sigma".into(), "1.5".into()]);
    ok(&args.iter().map(String::as_str).collect::<Vec<_>>());

    let mut args = blur(&two);
    args.extend(["--sigma".into(), "1.5".into(), "--manifest".into(), manifest.display().to_string()]);
    let out = mpirun(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "mpirun failed: {stderr}");
    for i in 0..20 {
        let name = format!("f{i:02}.npy");
        let (a, b) = (std::fs::read(one.join(&name)).unwrap(), std::fs::read(two.join(&name)).unwrap());
        assert!(a == b, "{name}: two ranks wrote a different file than one process");
    }
    // One line per file, from rank 0 only; each says which rank ran it.
    let text = std::fs::read_to_string(&manifest).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 20, "{text}");
    let mut inputs: Vec<&str> = lines.iter().map(|l| l["input"].as_str().unwrap()).collect();
    inputs.sort();
    inputs.dedup();
    assert_eq!(inputs.len(), 20, "a file ran twice or not at all: {text}");
    assert!(lines.iter().all(|l| l["status"] == "ok" && l["rank"].as_u64().unwrap() < 2), "{text}");
    // The per-device summary comes from rank 0 and counts every file once.
    let counted: usize = stderr
        .lines()
        .filter(|l| l.starts_with("rank "))
        .map(|l| l.split(": ").nth(1).unwrap().split(' ').next().unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(counted, 20, "{stderr}");

    // A broken file: named once (by rank 0), the other 19 done, the job fails.
    std::fs::write(input.join("f07.npy"), b"not an array").unwrap();
    let three = dir.join("three");
    let _ = std::fs::remove_file(&manifest);
    let mut args = blur(&three);
    args.extend(["--sigma".into(), "1.5".into(), "--manifest".into(), manifest.display().to_string()]);
    let out = mpirun(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a failed file must fail the job: {stderr}");
    assert_eq!(stderr.matches("f07.npy: not an NPY file").count(), 1, "{stderr}");
    assert!(stderr.contains("1 of 20 files failed"), "{stderr}");
    assert_eq!(std::fs::read_dir(&three).unwrap().count(), 19);
    let text = std::fs::read_to_string(&manifest).unwrap();
    let failed: Vec<&str> = text.lines().filter(|l| l.contains("\"failed\"")).collect();
    assert!(failed.len() == 1 && failed[0].contains("f07.npy"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A binary without the feature, launched as one of two ranks (the launcher's variable set by hand), refuses
/// rather than running the whole batch twice.
#[cfg(not(feature = "mpi"))]
#[test]
fn a_rank_without_the_feature_refuses() {
    let dir = scratch("mpi-refuses");
    let input = batch(&dir);
    let out = cliper()
        .args(["gaussian-filter", input.to_str().unwrap(), &format!("{}/out/", dir.display()), "--sigma", "1"])
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("one of 2 ranks") && stderr.contains("--features mpi"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!dir.join("out").exists());
    std::fs::remove_dir_all(&dir).ok();
}
