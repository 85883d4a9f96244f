//! `cliper-bench report`: reads a suite's JSON and the peers' output from the same call, matches peer lines to
//! suite cases by operation and size, and writes a Markdown table (ratios, goals met or not) and SVG plots.
//!
//! Peer lines look like `peer op… size ms ms GFLOP/s GFLOP/s GB/s GB/s` (clblast_bench, peer_torch.py,
//! peer_filterbank.py, scripts/bench/peer_numpy.py); anything else in the files is ignored.

use crate::peers::{PeerTime, family, peers_for, read_peers};
use crate::plot;
use crate::suite::Record;
use cliper::Result;
use cliper::prelude::*;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Reads the suite's records.
pub(crate) fn read_records(path: &Path) -> Result<Vec<Record>> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    serde_json::from_str(&text)
        .map_err(|e| Error::Format { path: path.to_path_buf(), reason: format!("not a cliper-bench suite JSON: {e}") })
}

/// A performance goal from the issues, judged on the back-to-back time (the peers' method).
#[derive(Clone, Copy, Debug)]
enum Goal {
    /// At most this many ms.
    MaxMs(f64),
    /// At least this many TFLOP/s.
    MinTflops(f64),
    /// At most this many µs of host time per process beyond the device time.
    MaxOverheadUs(f64),
    /// At least `factor` times faster than the named peer at the same size.
    Faster(&'static str, f64),
    /// At most `factor` times the named peer's time at the same size.
    Within(&'static str, f64),
    /// At least this percentage of the copy ceiling measured in the same run.
    MinBandwidthPct(f64),
}

impl Goal {
    fn text(self) -> String {
        match self {
            Goal::MaxMs(ms) => format!("≤ {ms} ms"),
            Goal::MinTflops(t) => format!("≥ {t} TF/s"),
            Goal::MaxOverheadUs(us) => format!("≤ {us} µs/process"),
            Goal::Faster(peer, 1.0) => format!("not slower than {peer}"),
            Goal::Faster(peer, f) => format!("≥ {f}× {peer}"),
            Goal::Within(peer, f) => format!("≤ {f}× {peer}'s time"),
            Goal::MinBandwidthPct(p) => format!("≥ {p} % of copy"),
        }
    }

    /// Whether the record meets the goal (`None` when it cannot be judged, e.g. the peer was not measured).
    fn met(self, r: &Record, peers: &[&PeerTime]) -> Option<bool> {
        let tflops = |r: &Record| r.gflops.map(|g| g / 1e3 * r.median_ms / r.stream_ms);
        match self {
            Goal::MaxMs(ms) => Some(r.stream_ms <= ms),
            Goal::MinBandwidthPct(p) => r.pct_bandwidth.map(|v| v >= p),
            Goal::MinTflops(t) => tflops(r).map(|v| v >= t),
            Goal::MaxOverheadUs(us) => r.overhead_us_per_process.map(|o| o <= us),
            Goal::Faster(peer, factor) => {
                peers.iter().find(|p| p.peer == peer).map(|p| p.ms / r.stream_ms >= factor * 0.9999)
            }
            Goal::Within(peer, factor) => {
                peers.iter().find(|p| p.peer == peer).map(|p| r.stream_ms <= factor * p.ms * 1.0001)
            }
        }
    }
}

/// The goals the issues set for a case on this kind of device.
fn goal(r: &Record) -> Option<Goal> {
    let h100 = r.device.contains("H100") && !r.quick;
    let cpu_quick = r.quick && !r.device.contains("NVIDIA");
    if h100 {
        let g = match r.case.as_str() {
            "sgemm_4096" | "sgemm_8192" => Goal::MinTflops(47.0),
            "sgemm_1024" => Goal::MinTflops(30.0),
            "cgemm_4096" => Goal::MinTflops(49.0),
            "matpow100_4096" => Goal::MaxMs(21.0),
            "norm2_f32_2e28" => Goal::MaxMs(0.37),
            "normp20_f32_2e28" => Goal::MaxMs(0.40),
            "dot_f32_2e28" => Goal::MaxMs(0.74),
            "transpose_16384" => Goal::MaxMs(0.78),
            "pad8_constant_8192" | "pad8_reflect_8192" => Goal::MaxMs(0.20),
            "conv3_8192" => Goal::MaxMs(0.20),
            "conv5_8192" => Goal::MaxMs(0.25),
            "conv7_8192" => Goal::MaxMs(0.35),
            "conv15_8192" => Goal::MaxMs(1.0),
            "conv31_8192" => Goal::MaxMs(3.0),
            "conv63_8192" => Goal::MaxMs(4.0),
            "conv3_batch64_512" => Goal::MaxMs(0.10),
            "conv3d3_512" => Goal::MaxMs(0.45),
            "chain10" => Goal::MaxOverheadUs(10.0),
            "fft2_8192" | "fft2_batch64_512" | "fft3_256" | "fft1_2e24" => Goal::Within("cuFFT", 1.25),
            "fft2_4093" => Goal::Within("cuFFT", 2.0),
            c if c.starts_with("recon_") => Goal::Within("torch", 1.0),
            "ewchain_8192" | "ewhypot_8192" => Goal::MinBandwidthPct(90.0),
            "median3_8192" | "median7_8192" | "median5x5x5_512" | "erosion15_8192" => Goal::Faster("CuPy", 3.0),
            "zoom2o3_512" => Goal::Faster("CuPy", 2.0),
            // Not an issue target: rotate is measured to show the gather against CuPy's.
            "rotate30o3_8192" | "label_8192" => Goal::Faster("CuPy", 1.0),
            _ => return None,
        };
        return Some(g);
    }
    if cpu_quick {
        return match family(&r.case) {
            "conv3" => Some(Goal::Faster("scipy", 2.0)),
            "conv15" => Some(Goal::Faster("scipy", 4.0)),
            "median5" => Some(Goal::Faster("scipy", 2.0)),
            "transpose" => Some(Goal::Faster("numpy", 5.0)),
            "sgemm" | "cgemm" => Some(Goal::Faster("CLBlast", 1.0)),
            _ => None,
        };
    }
    None
}

/// Runs the `report` subcommand.
pub(crate) fn run(
    ours: &Path,
    peer_files: &[std::path::PathBuf],
    markdown: Option<&Path>,
    plots: Option<&Path>,
) -> Result<()> {
    let records = read_records(ours)?;
    let peers = read_peers(peer_files)?;
    let text = markdown_report(&records, &peers, ours, peer_files);
    match markdown {
        Some(path) => {
            std::fs::write(path, &text).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
            println!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    if let Some(dir) = plots {
        for written in plot::write_all(dir, &records, &peers)? {
            println!("wrote {}", written.display());
        }
    }
    Ok(())
}

/// A record with its peers, its goal and the verdict.
type Row<'a> = (&'a Record, Vec<&'a PeerTime>, Option<Goal>, Option<bool>);

fn markdown_report(records: &[Record], peers: &[PeerTime], ours: &Path, peer_files: &[std::path::PathBuf]) -> String {
    let Some(first) = records.first() else {
        return "No records.\n".into();
    };
    let mut md = header(records, first, ours, peer_files);
    let rows: Vec<Row> = records
        .iter()
        .map(|r| {
            let found = peers_for(r, peers);
            let goal = goal(r);
            let verdict = goal.and_then(|g| g.met(r, &found));
            (r, found, goal, verdict)
        })
        .collect();
    summary_table(&mut md, &rows);
    full_table(&mut md, &rows);
    let mut unused: BTreeMap<String, usize> = BTreeMap::new();
    for p in peers {
        if !records.iter().any(|r| family(&r.case) == p.family && r.size == p.size) {
            *unused.entry(format!("{} {} {}", p.peer, p.family, p.size)).or_default() += 1;
        }
    }
    if !unused.is_empty() {
        let list: Vec<&str> = unused.keys().map(String::as_str).collect();
        let _ = writeln!(md, "\nPeer lines at sizes the suite did not run: {}.", list.join("; "));
    }
    md
}

/// The report's title and how to read it: date, device, where the numbers come from, the copy ceiling.
fn header(records: &[Record], first: &Record, ours: &Path, peer_files: &[std::path::PathBuf]) -> String {
    let mut md = String::new();
    let ceiling = records.iter().filter(|r| family(&r.case) == "copy").filter_map(|r| r.gbps).fold(0.0, f64::max);
    let peak = records.iter().find_map(|r| (r.dtype == "f32").then_some(r.gflops? * 100.0 / r.pct_flops?));
    let _ = writeln!(
        md,
        "### {} — {} (driver {}){}\n",
        first.date,
        first.device,
        first.driver,
        if first.quick { ", `--quick` sizes" } else { "" }
    );
    let files: Vec<String> = peer_files.iter().map(|p| format!("`{}`", p.display())).collect();
    let _ = writeln!(
        md,
        "From `{}` and {} (same call). Copy ceiling {:.1} GB/s; peak FP32 {}. cliper columns: device time \
         from profiling events (median, min–max), back-to-back time per launch (the peers' method; ratios and goals \
         use it), host time of `init`. Ratio = best peer time / cliper time (> 1: cliper faster).\n",
        ours.display(),
        if files.is_empty() { "no peer files".to_string() } else { files.join(", ") },
        ceiling,
        peak.map_or("unknown".to_string(), |p| format!("{p:.0} GFLOP/s (estimate, or as given)"))
    );
    md
}

fn peer_text(found: &[&PeerTime]) -> Vec<String> {
    found.iter().map(|p| format!("{} {:.4}", p.peer, p.ms)).collect()
}

fn ratio(r: &Record, found: &[&PeerTime]) -> String {
    found.first().map_or(String::new(), |b| format!("{:.2}×", b.ms / r.stream_ms))
}

fn verdict_text(goal: Option<Goal>, verdict: Option<bool>) -> &'static str {
    verdict.map_or(if goal.is_some() { "?" } else { "" }, |ok| if ok { "yes" } else { "**no**" })
}

/// The short table: one line per case with its rate, peers, ratio and goal.
fn summary_table(md: &mut String, rows: &[Row]) {
    md.push_str("| case | size | cliper ms (back-to-back) | rate | peers, same call (ms) | ratio | goal | met |\n");
    md.push_str("|---|---|---|---|---|---|---|---|\n");
    for (r, found, goal, verdict) in rows {
        // Arithmetic rate for the compute-bound cases, bandwidth for the rest, both from the back-to-back time.
        let scale = r.median_ms / r.stream_ms;
        // The resource nearer its limit: FLOP/s where the share of peak FLOP/s is larger than that of bandwidth.
        let compute_bound = r.pct_flops.unwrap_or(0.0) > r.pct_bandwidth.unwrap_or(0.0) || r.gbps.is_none();
        let rate = match (r.gflops, r.gbps) {
            (Some(g), _) if compute_bound => {
                let g = g * scale;
                if g >= 1e3 { format!("{:.1} TF/s", g / 1e3) } else { format!("{g:.1} GFLOP/s") }
            }
            (_, Some(b)) => {
                let b = b * scale;
                if b >= 100.0 { format!("{b:.0} GB/s") } else { format!("{b:.1} GB/s") }
            }
            _ => r.overhead_us_per_process.map_or(String::new(), |o| format!("{o:.2} µs/process over device")),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {:.4} | {} | {} | {} | {} | {} |",
            r.case,
            r.size.replace('*', "⊛"),
            r.stream_ms,
            rate,
            peer_text(found).join(", "),
            ratio(r, found),
            goal.map_or(String::new(), Goal::text),
            verdict_text(*goal, *verdict)
        );
    }
}

/// The full table, then the count of goals met.
fn full_table(md: &mut String, rows: &[Row]) {
    md.push_str("\nIn full:\n\n");
    md.push_str(
        "| case | size | type | device ms (min–max) | back-to-back ms | init ms | GFLOP/s | GB/s | % copy | % peak | peers (ms) | ratio | goal | met | check | algorithm |\n",
    );
    md.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    let (mut met, mut judged) = (0, 0);
    let mut unmet = Vec::new();
    for (r, found, goal, verdict) in rows {
        let opt = |v: Option<f64>, p: usize| v.map_or(String::new(), |v| format!("{v:.p$}"));
        if let Some(ok) = *verdict {
            judged += 1;
            if ok {
                met += 1;
            } else {
                unmet.push(r.case.clone());
            }
        }
        let check = match (r.correct(), r.max_error) {
            (Some(true), Some(e)) => format!("ok ({e:.1e})"),
            (Some(false), Some(e)) => format!("**wrong** ({e:.1e})"),
            _ => "—".into(),
        };
        let algorithm = match (r.overhead_us_per_process, r.enqueue_us_per_process) {
            (Some(o), Some(e)) => {
                format!("host time beyond device time {o:.2} µs/process, enqueue {e:.2} µs/process; {}", r.algorithm)
            }
            _ => r.algorithm.clone(),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.4} ({:.4}–{:.4}) | {:.4} | {:.1} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.case,
            r.size.replace('*', "⊛"),
            r.dtype,
            r.median_ms,
            r.min_ms,
            r.max_ms,
            r.stream_ms,
            r.init_ms,
            opt(r.gflops, 0),
            opt(r.gbps, 0),
            opt(r.pct_bandwidth, 0),
            opt(r.pct_flops, 0),
            peer_text(found).join(", "),
            ratio(r, found),
            goal.map_or(String::new(), Goal::text),
            verdict_text(*goal, *verdict),
            check,
            algorithm.replace('|', "/")
        );
    }
    let _ = writeln!(
        md,
        "\nGoals met: {met} of {judged}{}.",
        if unmet.is_empty() { String::new() } else { format!(" (not met: {})", unmet.join(", ")) }
    );
}
