//! How cliper-bench times things: the sweeps' batch method ([`time_pipeline`]) and the suite's fuller
//! measurement ([`measure`]), plus the pseudo-random data every case uses.

use clap::Args;
use cliper::Result;
use cliper::prelude::*;
use num_complex::Complex64;
use std::time::Instant;

/// How a case is timed: `--reps` and `--batches`, flattened into the cases that use these defaults (the
/// heavier cases keep their own, smaller ones).
#[derive(Args, Clone, Copy)]
pub(crate) struct Timing {
    /// Launches per timed batch.
    #[arg(long, default_value_t = 20)]
    pub(crate) reps: usize,
    /// Timed batches (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub(crate) batches: usize,
}

/// Median wall-clock ms per launch (batches of back-to-back launches, one `finish` each) and median event ms
/// of a pipeline.
pub(crate) fn time_pipeline(app: &ClApp, pipeline: &mut Pipeline, t: Timing) -> Result<(f64, f64)> {
    pipeline.init()?;
    for _ in 0..3 {
        pipeline.launch()?;
    }
    app.finish()?;
    let mut wall = Vec::with_capacity(t.batches);
    for _ in 0..t.batches {
        let start = Instant::now();
        for _ in 0..t.reps {
            pipeline.launch()?;
        }
        app.finish()?;
        wall.push(start.elapsed().as_secs_f64() * 1e3 / t.reps as f64);
    }
    let mut events = Vec::with_capacity(t.reps);
    for _ in 0..t.reps {
        events.push(pipeline.profile()?.total_ms());
    }
    Ok((median(&mut wall), median(&mut events)))
}

/// Median, minimum and maximum of repeated measurements, in milliseconds.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Stats {
    pub(crate) median: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

impl Stats {
    pub(crate) fn of(values: &mut [f64]) -> Stats {
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Stats { median: median(values), min, max }
    }
}

/// What [`measure`] found for one pipeline.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Measured {
    /// Device time of one run: the sum over every command the pipeline enqueued, from profiling events.
    pub(crate) device: Stats,
    /// Host wall time of one `launch` followed by `finish` (what a caller waiting for one result sees).
    pub(crate) launch: Stats,
    /// Host time spent inside `launch` alone (enqueueing; the device works on in the background).
    pub(crate) enqueue: Stats,
    /// Host wall time per launch of back-to-back launches with one `finish` at the end (the peers' method:
    /// CLBlast's bench and CUDA events around a loop), median of three batches.
    pub(crate) stream_ms: f64,
    /// Commands enqueued per run.
    pub(crate) commands: usize,
    /// Timed runs behind `device`, `launch` and `enqueue`.
    pub(crate) runs: usize,
}

/// Times an initialised pipeline: two warm-up runs, then enough profiled runs and plain runs to fill about
/// `budget_ms` (at least 3, at most 50 of each), then three batches of back-to-back launches.
pub(crate) fn measure(app: &ClApp, pipeline: &mut Pipeline, budget_ms: f64) -> Result<Measured> {
    let first = pipeline.profile()?;
    pipeline.run()?;
    let estimate = first.total_ms().max(1e-3);
    // Each run is one profiled and one plain launch, each followed by a wait.
    let runs = ((budget_ms / 2.0 / (2.0 * estimate + 0.02)) as usize).clamp(3, 50);
    let mut device = Vec::with_capacity(runs);
    let host = host_times(app, pipeline, runs, estimate, budget_ms, |p| {
        device.push(p.profile()?.total_ms());
        Ok(())
    })?;
    Ok(Measured {
        device: Stats::of(&mut device),
        launch: host.launch,
        enqueue: host.enqueue,
        stream_ms: host.stream_ms,
        commands: first.launches.len(),
        runs,
    })
}

/// The commands one run of `pipeline` enqueues, grouped by process in order: `Pad[pad] → Convolution[conv_blocked,
/// conv_blocked] → …` (from a profiled run; `app` must profile). The profile names processes, not stages, so
/// consecutive stages of the same process type show as one group.
pub(crate) fn commands_by_process(pipeline: &mut Pipeline) -> Result<String> {
    let report = pipeline.profile()?;
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for launch in report.launches {
        match groups.last_mut() {
            Some((process, kernels)) if *process == launch.process => kernels.push(launch.kernel),
            _ => groups.push((launch.process, vec![launch.kernel])),
        }
    }
    Ok(groups
        .iter()
        .map(|(process, kernels)| format!("{process}[{}]", kernels.join(", ")))
        .collect::<Vec<_>>()
        .join(" → "))
}

/// What a program that does not profile sees of a pipeline: the host time inside `launch`, of `launch` +
/// `finish`, and per launch back to back (no device times: `app` need not profile).
pub(crate) struct HostTimes {
    pub(crate) launch: Stats,
    pub(crate) enqueue: Stats,
    pub(crate) stream_ms: f64,
}

/// [`measure`]'s host side alone, for an app without profiling: warm-up, then timed single runs and three
/// batches of back-to-back runs.
pub(crate) fn measure_host(app: &ClApp, pipeline: &mut Pipeline, budget_ms: f64) -> Result<HostTimes> {
    let start = Instant::now();
    pipeline.run()?;
    app.finish()?;
    let estimate = (start.elapsed().as_secs_f64() * 1e3).max(1e-3);
    let runs = ((budget_ms / 2.0 / (estimate + 0.02)) as usize).clamp(3, 50);
    host_times(app, pipeline, runs, estimate, budget_ms, |_| Ok(()))
}

/// `runs` single launches (each after `before_each`, timed inside `launch` and to the end of `finish`), then
/// three batches of back-to-back launches filling about a sixth of `budget_ms` each.
fn host_times(
    app: &ClApp,
    pipeline: &mut Pipeline,
    runs: usize,
    estimate_ms: f64,
    budget_ms: f64,
    mut before_each: impl FnMut(&mut Pipeline) -> Result<()>,
) -> Result<HostTimes> {
    let (mut launch, mut enqueue) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..runs {
        before_each(pipeline)?;
        let start = Instant::now();
        pipeline.launch()?;
        enqueue.push(start.elapsed().as_secs_f64() * 1e3);
        app.finish()?;
        launch.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let reps = ((budget_ms / 2.0 / 3.0 / estimate_ms) as usize).clamp(3, 200);
    let mut stream = Vec::with_capacity(3);
    for _ in 0..3 {
        let start = Instant::now();
        for _ in 0..reps {
            pipeline.launch()?;
        }
        app.finish()?;
        stream.push(start.elapsed().as_secs_f64() * 1e3 / reps as f64);
    }
    Ok(HostTimes { launch: Stats::of(&mut launch), enqueue: Stats::of(&mut enqueue), stream_ms: median(&mut stream) })
}

pub(crate) fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Pseudo-random values in [-1, 1) (never zeros: timing on zeros can flatter a kernel).
pub(crate) fn random_data<T: Element>(n: usize) -> Vec<T> {
    random_data_seeded(n, 0x2545_F491_4F6C_DD1D)
}

/// [`random_data`] from another seed (xorshift64; the seed must not be 0).
pub(crate) fn random_data_seeded<T: Element>(n: usize, seed: u64) -> Vec<T> {
    let mut state = seed;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    };
    (0..n).map(|_| T::from_c64(Complex64::new(next(), next()))).collect()
}

/// `8192x8192` for `[8192, 8192]`.
pub(crate) fn shape_text(shape: &[usize]) -> String {
    shape.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("x")
}
