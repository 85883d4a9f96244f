//! What a suite case is ([`CaseFn`]: build, time and check one process) and the helpers cases share: timing a
//! process in a one-process pipeline, sample positions and checked indexing for the host checks.

use crate::measure::{Measured, measure};
use cliper::Result;
use cliper::prelude::*;
use std::time::Instant;

/// What every case gets: the device, the sizes to use, and what the records need to know.
pub(crate) struct Ctx<'a> {
    pub(crate) app: &'a ClApp,
    pub(crate) quick: bool,
    pub(crate) budget_ms: f64,
    pub(crate) ceiling_gbps: f64,
    pub(crate) peak: Option<(f64, f64)>,
    pub(crate) date: String,
}

/// What one case hands back before it becomes a suite record.
pub(crate) struct Outcome {
    pub(crate) measured: Measured,
    pub(crate) init_ms: f64,
    pub(crate) algorithm: String,
    pub(crate) bytes: f64,
    pub(crate) flops: f64,
    pub(crate) double: bool,
    pub(crate) check: Option<Check>,
}

/// An output check: the largest error found, the tolerance, and what was compared.
pub(crate) struct Check {
    pub(crate) error: f64,
    pub(crate) tolerance: f64,
    pub(crate) what: String,
}

pub(crate) type CaseFn = fn(&Ctx) -> Result<(String, String, Outcome)>;

/// Initialises `process` (timed), names its algorithm, and measures it in a one-process pipeline.
pub(crate) fn time_process<P: Process + 'static>(
    ctx: &Ctx,
    mut process: P,
    algorithm: impl FnOnce(&P) -> String,
) -> Result<(Measured, f64, String)> {
    ctx.app.finish()?;
    let start = Instant::now();
    process.init()?;
    ctx.app.finish()?;
    let init_ms = start.elapsed().as_secs_f64() * 1e3;
    let algorithm = algorithm(&process);
    let mut pipeline = Pipeline::new(ctx.app).then(process);
    pipeline.init()?;
    Ok((measure(ctx.app, &mut pipeline, ctx.budget_ms)?, init_ms, algorithm))
}

/// Deterministic sample positions in 0..n (all of them when n ≤ count).
pub(crate) fn samples(n: usize, count: usize) -> Vec<usize> {
    if n <= count {
        return (0..n).collect();
    }
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..count)
        .map(|_| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) as usize) % n
        })
        .collect()
}

/// `values[i]` for a host check, or an error naming the index (a bug in the check, not in the device's result).
pub(crate) fn value_at<T: Copy>(values: &[T], i: usize) -> Result<T> {
    values.get(i).copied().ok_or_else(|| {
        cliper::Error::invalid("cliper-bench", format!("host check: index {i} is outside {} values", values.len()))
    })
}

/// `values[range]` for a host check, or an error naming the range.
pub(crate) fn values_in<T>(values: &[T], range: std::ops::Range<usize>) -> Result<&[T]> {
    let len = values.len();
    values.get(range.clone()).ok_or_else(|| {
        cliper::Error::invalid("cliper-bench", format!("host check: values {range:?} are outside {len} values"))
    })
}

/// The last `rank` extents of `shape`, or an error when it has fewer axes.
pub(crate) fn trailing(shape: &[usize], rank: usize) -> Result<&[usize]> {
    shape
        .len()
        .checked_sub(rank)
        .and_then(|lead| shape.get(lead..))
        .ok_or_else(|| cliper::Error::invalid("cliper-bench", format!("shape {shape:?} has fewer than {rank} axes")))
}
