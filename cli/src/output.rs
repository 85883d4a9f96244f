//! What a run prints: the files written, small results, the profile table — as text or as JSON.

use crate::chain::{Context, run, run_files, select_batch};
use crate::failure::CliError;
use cliper::chain::{Chain, ElementKind, Outcome, RunRecord};
use cliper::{Report, show_value};
use num_complex::Complex64;
use serde_json::{Value, json};

/// Runs `chain` and prints what it did — each file's lines as soon as it is done, so a piped or interrupted
/// batch keeps its log; a batch in which some files failed ends in [`CliError::Batch`].
/// This process alone: `crate::ranks::run_and_report` calls it unless MPI shares the run out.
pub fn run_and_report(ctx: &mut Context, chain: &Chain) -> Result<(), CliError> {
    let json = ctx.json;
    let mut outcome = run(ctx, chain, |record| {
        if !json {
            print_record(record);
        }
    })?;
    let app = ctx.app()?;
    let batch = outcome.records.len() > 1 || outcome.records.first().is_some_and(|r| r.input.is_some());
    if !batch && let Some(e) = outcome.records.first_mut().and_then(|r| r.error.take()) {
        return Err(CliError::Lib(e));
    }
    if ctx.json {
        say!("{}", serde_json::to_string_pretty(&to_json(&app.device().name, &outcome)).unwrap_or_default());
    } else {
        if !batch && let Some(r) = outcome.records.first() {
            print_record(r);
        }
        if let Some(report) = &outcome.report {
            let transfers = outcome.records.first().map_or(0, |r| r.transfers);
            say!("\ndevice: {}\n{report}", app.device().name);
            say!("host↔device copies during the chain: {transfers}");
        }
    }
    let failed = outcome.failures().count();
    if failed > 0 {
        let code = outcome.failures().map(crate::failure::exit_code).max().unwrap_or(1);
        return Err(CliError::Batch { failed, total: outcome.records.len(), code });
    }
    Ok(())
}

/// Prints the lines of one run ([`record_lines`]).
/// `cliper run --dry-run`: every file the run would read and write — this job's share of a batch, less what
/// `--skip-existing` skips — checked as a run checks them; nothing is opened for writing.
pub fn dry_run(ctx: &Context, chain: &Chain) -> Result<(), CliError> {
    let (batch, skipped) = select_batch(ctx, chain)?;
    let files = run_files(ctx, chain, batch.as_ref())?;
    let skipped: Vec<String> = skipped.iter().map(|p| p.display().to_string()).collect();
    if ctx.json {
        let list = |files: &[(String, String)]| -> Vec<Value> {
            files.iter().map(|(role, path)| json!({ "role": role, "path": path })).collect()
        };
        let value = json!({ "reads": list(&files.reads), "writes": list(&files.writes), "skipped": skipped });
        say!("{}", serde_json::to_string_pretty(&value).unwrap_or_default());
        return Ok(());
    }
    for (role, path) in &files.reads {
        say!("read   {path}   ({role})");
    }
    for (role, path) in &files.writes {
        say!("write  {path}   ({role})");
    }
    for path in &skipped {
        say!("skip   {path}   (its outputs exist: --skip-existing)");
    }
    Ok(())
}

fn print_record(r: &RunRecord) {
    for line in record_lines(r) {
        say!("{line}");
    }
}

/// The lines of one run: the files written (with the type each file holds) and the small results; none for a
/// failed run (its error is printed on stderr).
pub fn record_lines(r: &RunRecord) -> Vec<String> {
    let mut lines = Vec::new();
    if r.error.is_some() {
        return lines;
    }
    let from = r.input.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default();
    for (name, path, shape, kind) in &r.written {
        lines.push(format!("{from}wrote {name} {shape:?} {kind} to {}", path.display()));
    }
    for (name, shape, values, kind) in &r.values {
        let single = matches!(kind, ElementKind::F32 | ElementKind::C32);
        if values.is_empty() {
            lines.push(format!(
                "{from}{name} {shape:?}: {} values (save them with -o FILE)",
                shape.iter().product::<usize>()
            ));
        } else if let ([], [value]) = (shape.as_slice(), values.as_slice()) {
            lines.push(format!("{from}{name} = {}", show_value(*value, single)));
        } else {
            let shown: Vec<String> = values.iter().map(|&v| show_value(v, single)).collect();
            lines.push(format!("{from}{name} {shape:?} = [{}]", shown.join(", ")));
        }
    }
    for (name, table) in &r.tables {
        lines.push(format!("{from}{name}: {} row(s)", table.rows.len()));
        lines.extend(table.to_text().lines().map(str::to_string));
    }
    lines
}

/// A value as JSON: a number for real types, `[re, im]` for complex ones — always, so a reader's schema does not
/// depend on whether an imaginary part happens to be zero.
fn number(v: Complex64, kind: ElementKind) -> Value {
    if matches!(kind, ElementKind::C32 | ElementKind::C64) { json!([v.re, v.im]) } else { json!(v.re) }
}

/// The per-kernel profile as JSON records.
pub fn report_json(report: &Report) -> Value {
    json!({
        "total_ms": report.total_ms(),
        "kernels": report.launches.iter().map(|l| json!({
            "process": l.process, "kernel": l.kernel, "global": l.global, "local": l.local,
            "device_ms": l.device_ms, "gb_per_s": l.gb_per_s(), "gflop_per_s": l.gflop_per_s(),
        })).collect::<Vec<_>>(),
    })
}

/// One run as JSON: its input, the files written, the small results, the copies during the chain, the error.
pub fn run_json(r: &RunRecord) -> Value {
    json!({
        "input": r.input.as_ref().map(|p| p.display().to_string()),
        "written": r.written.iter().map(|(name, path, shape, kind)| json!({
            "name": name, "path": path.display().to_string(), "shape": shape, "type": kind,
        })).collect::<Vec<_>>(),
        "values": r.values.iter().map(|(name, shape, values, kind)| json!({
            "name": name, "shape": shape,
            "values": if shape.is_empty() { values.first().map(|&v| number(v, *kind)).unwrap_or(Value::Null) }
                      else { Value::Array(values.iter().map(|&v| number(v, *kind)).collect()) },
        })).collect::<Vec<_>>(),
        "tables": r.tables.iter().map(|(name, table)| json!({
            "name": name,
            "columns": serde_json::from_str::<Value>(&table.to_json()).unwrap_or(Value::Null),
        })).collect::<Vec<_>>(),
        "transfers_during_chain": r.transfers,
        "error": r.error.as_ref().map(crate::chain::one_line),
    })
}

fn to_json(device: &str, outcome: &Outcome) -> Value {
    let runs: Vec<Value> = outcome.records.iter().map(run_json).collect();
    json!({ "device": device, "runs": runs, "profile": outcome.report.as_ref().map(report_json) })
}
