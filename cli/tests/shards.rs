//! Batches cut across cluster jobs: `--shard I/N` (and the same from Slurm and Kubernetes variables) takes
//! disjoint shares that together are the whole batch; `--skip-existing` after an interrupted run does only the
//! rest; `--manifest` has one JSON line per file.

mod common;
use cliper::{HostArray, write_npy};
use common::*;
use std::collections::BTreeSet;
use std::path::Path;

fn batch(dir: &Path, n: usize) -> std::path::PathBuf {
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    for i in 0..n {
        let values: Vec<f32> = (0..12 * 10).map(|k| ((k + 3 * i) % 17) as f32 / 17.0).collect();
        let a = HostArray::F32(ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[12, 10]), values).unwrap());
        write_npy(input.join(format!("f{i:02}.npy")), &a).unwrap();
    }
    input
}

fn outputs(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".npy"))
                .collect()
        })
        .unwrap_or_default()
}

fn clip(input: &Path, out: &Path, extra: &[&str], env: &[(&str, &str)]) -> String {
    let mut command = cliper();
    command.args(["clip", input.to_str().unwrap(), &format!("{}/", out.display()), "--min", "0", "--max", "0.5"]);
    command.args(extra);
    for var in [
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_COUNT",
        "SLURM_ARRAY_TASK_MIN",
        "JOB_COMPLETION_INDEX",
        "CLIPER_SHARDS",
    ] {
        command.env_remove(var);
    }
    command.envs(env.iter().copied());
    let out = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{extra:?} {env:?}: {stderr}");
    stderr
}

#[test]
fn shards_are_disjoint_and_cover_the_batch() {
    let dir = scratch("shards");
    let input = batch(&dir, 17);
    let all: BTreeSet<String> = (0..17).map(|i| format!("f{i:02}.npy")).collect();
    let mut seen = BTreeSet::new();
    for i in 0..3 {
        let out = dir.join(format!("shard{i}"));
        clip(&input, &out, &["--shard", &format!("{i}/3")], &[]);
        let mine = outputs(&out);
        assert!(mine.len() == 5 || mine.len() == 6, "shard {i}: {mine:?}");
        assert!(seen.is_disjoint(&mine), "shard {i} repeats a file");
        seen.extend(mine);
    }
    assert_eq!(seen, all);
    // The same shares from a Slurm array (IDs from 1) and a Kubernetes indexed job.
    for i in 0..3 {
        let slurm = dir.join(format!("slurm{i}"));
        let id = (i + 1).to_string();
        clip(
            &input,
            &slurm,
            &[],
            &[("SLURM_ARRAY_TASK_ID", &id), ("SLURM_ARRAY_TASK_MIN", "1"), ("SLURM_ARRAY_TASK_COUNT", "3")],
        );
        assert_eq!(outputs(&slurm), outputs(&dir.join(format!("shard{i}"))), "Slurm task {id}");
        let k8s = dir.join(format!("k8s{i}"));
        clip(&input, &k8s, &[], &[("JOB_COMPLETION_INDEX", &i.to_string()), ("CLIPER_SHARDS", "3")]);
        assert_eq!(outputs(&k8s), outputs(&dir.join(format!("shard{i}"))), "Kubernetes index {i}");
    }
    // Mistakes are named.
    let e = fails(&["clip", input.to_str().unwrap(), "x/", "--min", "0", "--max", "1", "--shard", "3/3"], 1);
    assert!(e.contains("3/3"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn skip_existing_finishes_an_interrupted_batch_and_the_manifest_says_so() {
    let dir = scratch("skip");
    let input = batch(&dir, 9);
    let out = dir.join("out");
    // A first run that stopped early: only shard 0/3's files were written.
    clip(&input, &out, &["--shard", "0/3"], &[]);
    let first = outputs(&out);
    assert_eq!(first.len(), 3);
    let stamp = |name: &str| std::fs::metadata(out.join(name)).unwrap().modified().unwrap();
    let before: Vec<_> = first.iter().map(|n| stamp(n)).collect();
    let manifest = dir.join("run.jsonl");
    let stderr = clip(&input, &out, &["--skip-existing", "--manifest", manifest.to_str().unwrap()], &[]);
    assert!(stderr.contains("skipping 3 file(s)"), "{stderr}");
    assert_eq!(outputs(&out).len(), 9);
    let after: Vec<_> = first.iter().map(|n| stamp(n)).collect();
    assert_eq!(before, after, "the files already written were not written again");
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(&manifest).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 9);
    let status = |s: &str| lines.iter().filter(|l| l["status"] == s).count();
    assert_eq!((status("skipped"), status("ok"), status("failed")), (3, 6, 0));
    for line in lines.iter().filter(|l| l["status"] == "ok") {
        assert!(
            line["device"].as_str().is_some_and(|d| d.contains(':')) && line["seconds"].as_f64().is_some(),
            "{line}"
        );
        assert_eq!(line["outputs"].as_array().map(Vec::len), Some(1), "{line}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
