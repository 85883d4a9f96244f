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

/// This machine as cliper names it in temporary files: the host name and the process-id namespace (read here
/// the way the kernel gives them, not through cliper).
fn this_machine() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let namespace = std::fs::read_link("/proc/self/ns/pid").unwrap();
    let digits: String = namespace.to_string_lossy().chars().filter(char::is_ascii_digit).collect();
    format!("{}~{digits}", host.trim())
}

/// A process id that has ended: a child that ran and was waited for.
fn ended_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// Temporary files as `kill -9` leaves them, in `out`: an ended process's of this machine, a day-old one of
/// another machine, a day-old one of an older cliper (no machine in the name), beside a fresh one of a
/// process on another machine sharing the folder and one of a live process here (this test's). Gives the
/// names that must go and those that must stay.
fn leave_temporaries(out: &Path) -> (Vec<String>, Vec<String>) {
    std::fs::create_dir_all(out).unwrap();
    let here = this_machine();
    let day_old = std::time::SystemTime::now() - std::time::Duration::from_secs(25 * 3600);
    let stale = vec![
        format!(".f00.npy.cliper-tmp-{here}-{}-0", ended_pid()),
        ".f01.npy.cliper-tmp-node-17.cluster~4026531836-4242-3".to_string(),
        ".f02.npy.cliper-tmp-31337-0".to_string(),
    ];
    let live = vec![
        ".f03.npy.cliper-tmp-node-17.cluster~4026531836-4242-4".to_string(),
        format!(".f04.npy.cliper-tmp-{here}-{}-0", std::process::id()),
    ];
    for (k, name) in stale.iter().chain(&live).enumerate() {
        let file = std::fs::File::create(out.join(name)).unwrap();
        file.set_len(4096).unwrap();
        if k == 1 || k == 2 {
            file.set_modified(day_old).unwrap();
        }
    }
    (stale, live)
}

fn hidden(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect()
}

#[test]
fn the_next_run_removes_temporaries_whose_writer_is_gone() {
    let dir = scratch("stale");
    let input = batch(&dir, 3);
    let out = dir.join("out");
    let (stale, live) = leave_temporaries(&out);
    clip(&input, &out, &[], &[]);
    assert_eq!(outputs(&out).len(), 3);
    assert_eq!(hidden(&out), live.iter().cloned().collect(), "removed {stale:?}, kept {live:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn skip_existing_removes_stale_temporaries_though_nothing_is_written() {
    let dir = scratch("stale-skip");
    let input = batch(&dir, 3);
    let out = dir.join("out");
    clip(&input, &out, &[], &[]);
    let (_, live) = leave_temporaries(&out);
    let stderr = clip(&input, &out, &["--skip-existing"], &[]);
    assert!(stderr.contains("skipping 3 file(s)"), "{stderr}");
    assert_eq!(hidden(&out), live.iter().cloned().collect());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_rewritten_file_keeps_its_mode_and_a_new_one_gets_the_umasks() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("mode");
    let input = batch(&dir, 2);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    // f00's output exists, private to its owner (not what the umask gives); f01's is new.
    let kept = out.join("f00.npy");
    std::fs::write(&kept, b"old").unwrap();
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut command = std::process::Command::new("sh");
    command.arg("-c").arg(format!(
        "umask 027 && exec '{}' clip '{}' '{}/' --min 0 --max 0.5",
        env!("CARGO_BIN_EXE_cliper"),
        input.display(),
        out.display()
    ));
    let run = command.output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let mode = |name: &str| std::fs::metadata(out.join(name)).unwrap().permissions().mode() & 0o7777;
    assert_ne!(std::fs::read(&kept).unwrap(), b"old", "the file was rewritten");
    assert_eq!(format!("{:o}", mode("f00.npy")), "600", "as `cp` onto an existing file");
    assert_eq!(format!("{:o}", mode("f01.npy")), "640", "0666 less the umask 027");
    // A read-only output is replaced as well (the folder is writable) and stays read-only.
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o444)).unwrap();
    clip(&input, &out, &[], &[]);
    assert_eq!(format!("{:o}", mode("f00.npy")), "444");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn skip_existing_redoes_a_torn_or_lone_cfl_output() {
    let dir = scratch("torn-cfl");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let scan = |i: usize| {
        let values = (0..24).map(|k| num_complex::Complex32::new((k + 10 * i) as f32, i as f32)).collect();
        HostArray::C32(ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[4, 6]), values).unwrap())
    };
    for i in 0..3 {
        cliper::write_cfl(input.join(format!("k{i}.cfl")), &scan(i)).unwrap();
    }
    let out = dir.join("out");
    let transpose = |extra: &[&str]| {
        let mut args = vec!["transpose", input.to_str().unwrap(), out.to_str().unwrap()];
        args.extend(extra);
        let run = cliper().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
        assert!(run.status.success(), "{stderr}");
        stderr
    };
    std::fs::create_dir_all(&out).unwrap();
    transpose(&[]);
    // k1: another file's data of the same size under k1's header (a kill between the two renames of an older
    // cliper, data first); k2: the data without its header.
    std::fs::copy(out.join("k0.cfl"), out.join("k1.cfl")).unwrap();
    std::fs::remove_file(out.join("k2.hdr")).unwrap();
    let stderr = transpose(&["--skip-existing"]);
    assert!(stderr.contains("skipping 1 file(s)"), "only k0 is whole: {stderr}");
    for i in 0..3 {
        let want = match scan(i) {
            HostArray::C32(a) => HostArray::C32(a.t().as_standard_layout().into_owned()),
            _ => unreachable!(),
        };
        assert_eq!(cliper::read_cfl(out.join(format!("k{i}.cfl"))).unwrap(), want, "k{i}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
