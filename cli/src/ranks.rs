//! Where a run happens: in this process, or — `mpirun -n R cliper …` — shared out over the ranks of an MPI job
//! (the `mpi` feature, docs/scaling.md). Rank 0 hands the files out one at a time and gathers what each rank
//! did: it alone prints the files' lines, the errors and the per-device summary, and writes the manifest. Every
//! rank exits non-zero if any file failed.

use crate::chain::Context;
use crate::failure::CliError;
use cliper::chain::Chain;

/// Runs `chain` and prints what it did: in this process ([`crate::output::run_and_report`]), or over the ranks
/// of the MPI job an MPI launcher started this process in.
pub fn run_and_report(ctx: &mut Context, chain: &Chain) -> Result<(), CliError> {
    match cliper::mpi_launcher_ranks().filter(|&n| n > 1) {
        Some(ranks) => shared(ctx, chain, ranks),
        None => crate::output::run_and_report(ctx, chain),
    }
}

/// Without the `mpi` feature a process launched as one of several ranks would run the whole batch as each of the
/// others does: refused, saying how to build it.
#[cfg(not(feature = "mpi"))]
fn shared(_ctx: &mut Context, _chain: &Chain, ranks: usize) -> Result<(), CliError> {
    Err(CliError::Lib(cliper::Error::invalid(
        "mpirun",
        format!(
            "this process is one of {ranks} ranks of an MPI job, but cliper was built without the `mpi` feature: \
             every rank would run the whole batch; build it with `cargo build --release -p cliper-cli --features \
             mpi` (docs/scaling.md), or run one process"
        ),
    )))
}

#[cfg(feature = "mpi")]
use with_mpi::shared;

#[cfg(feature = "mpi")]
mod with_mpi {
    use super::*;
    use crate::chain::{Manifest, naming, prepare_batch};
    use crate::output::{record_lines, run_json};
    use cliper::chain::RunRecord;
    use cliper::{ClApp, DevicePool, MpiJob, RankReport};
    use serde_json::{Value, json};
    use std::collections::BTreeMap;
    use std::hash::{Hash, Hasher};

    /// Runs `chain` as rank `job.rank()` of the job: a batch is shared out; a single run is rank 0's alone.
    pub fn shared(ctx: &mut Context, chain: &Chain, _ranks: usize) -> Result<(), CliError> {
        let job = MpiJob::init()?;
        let rank = job.rank();
        // Only rank 0 writes the manifest and says what it skipped.
        let prepared = prepare_batch(ctx, chain, rank == 0);
        // Every rank must have the same list: an index names the same file everywhere. A rank that could not
        // list it takes part in the check with a fingerprint that differs, so that all stop together.
        let fingerprint = match &prepared {
            Ok((Some(b), _)) => {
                let mut hasher = std::hash::DefaultHasher::new();
                b.files.hash(&mut hasher);
                hasher.finish()
            }
            Ok((None, _)) => 0,
            Err(_) => u64::MAX - rank as u64,
        };
        let agreed = job.agree("batch files", fingerprint);
        let (batch, manifest) = prepared?;
        agreed?;
        let Some(batch) = batch else {
            // A single input: rank 0 runs it as one process would.
            return if rank == 0 { crate::output::run_and_report(ctx, chain) } else { Ok(()) };
        };
        let apps = match &ctx.devices {
            Some(spec) => ClApp::builder().profiling(ctx.profile).select(spec).build_all()?,
            None => vec![ctx.app()?],
        };
        let pool = DevicePool::new(apps)?;
        let (json_mode, total) = (ctx.json, batch.files.len());
        let mut runs: Vec<Value> = Vec::new();
        let mut worst = 0u8;
        let outcome = job.map(
            &pool,
            &batch.files,
            |_| chain.runner(Some(batch.input)),
            |runner, app, file| Ok(runner.run_file(app, Some(file), false).0),
            |done| report_of(done, &batch.files),
            |r: &RankReport| {
                let report: Value = serde_json::from_str(&r.text).unwrap_or(Value::Null);
                let field = |name: &str| report.get(name).cloned().unwrap_or(Value::Null);
                if !json_mode {
                    for line in field("lines").as_array().into_iter().flatten() {
                        say!("{}", line.as_str().unwrap_or_default());
                    }
                }
                if let Some(error) = field("error").as_str() {
                    eprintln!("error: {error} (rank {}, {})", r.rank, r.device);
                    worst = worst.max(field("code").as_u64().unwrap_or(1).min(255) as u8);
                }
                // The rank that ran it, beside the device.
                let with_rank = |mut v: Value, device: bool| {
                    if let Some(object) = v.as_object_mut() {
                        object.insert("rank".into(), json!(r.rank));
                        if device {
                            object.insert("device".into(), json!(r.device));
                        }
                    }
                    v
                };
                if let Err(e) = manifest.line(with_rank(field("manifest"), false)) {
                    eprintln!("error: {}", crate::chain::one_line(&e));
                }
                let run = with_rank(field("run"), true);
                runs.push(run);
            },
        )?;
        if rank == 0 {
            summarize(&outcome.reports, total);
            if json_mode {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&json!({ "ranks": job.ranks(), "runs": runs })).unwrap_or_default()
                );
            }
        }
        // A manifest that could not be written fails the job.
        manifest.finish()?;
        match outcome.failed {
            0 => Ok(()),
            failed if rank == 0 => Err(CliError::Batch { failed, total, code: worst.max(1) }),
            // Rank 0 has said which files failed.
            _ => Err(CliError::Quiet(1)),
        }
    }

    /// What a rank sends rank 0 of one finished file: its run, manifest entry, output lines and error, as JSON.
    fn report_of(done: &cliper::PoolResult<RunRecord>, files: &[std::path::PathBuf]) -> (bool, String) {
        let record = match &done.result {
            Ok(record) => record,
            Err(e) => &RunRecord::failed(files.get(done.input).cloned(), e.clone()),
        };
        let file = record.input.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        let report = json!({
            "run": run_json(record),
            "manifest": Manifest::entry(record, &done.device, done.seconds),
            "lines": record_lines(record),
            "error": record.error.as_ref().map(|e| naming(&file, e)),
            "code": record.error.as_ref().map(crate::failure::exit_code),
        });
        (record.error.is_none(), report.to_string())
    }

    /// Each rank's and device's share of the batch, on stderr (rank 0).
    fn summarize(reports: &[RankReport], total: usize) {
        let mut shares: BTreeMap<(usize, &str), (usize, f64)> = BTreeMap::new();
        for r in reports {
            let share = shares.entry((r.rank, r.device.as_str())).or_default();
            share.0 += 1;
            share.1 += r.seconds;
        }
        for ((rank, device), (files, seconds)) in &shares {
            eprintln!(
                "rank {rank} device {device}: {files} file(s), {seconds:.2} s, {:.0}% of the files",
                100.0 * *files as f64 / total.max(1) as f64
            );
        }
    }
}
