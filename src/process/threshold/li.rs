//! Li's minimum cross-entropy threshold of a float image (scikit-image 0.26's `threshold_li`): an iteration whose
//! every step needs the means of the values above and below the current threshold — one pass over the image on
//! the device (`li_split` in `kernels/threshold.cl`), whose per-group sums the host adds up in group order and
//! turns into the next threshold with numpy's arithmetic in the image's type. Integer images take scikit-image's
//! other path, over their histogram (`li_of_histogram`, run by the histogram search).
//!
//! The stopping rule compares each step's change with scikit-image's default tolerance, half the least gap
//! between distinct values (numpy's `min(diff(unique(image))) / 2`), which takes a sort. The device finds an upper
//! bound of that gap on the way (the least non-zero difference of neighbouring values: every gap between two
//! distinct values is at least the least gap), so a change above half the bound goes on and a change of zero
//! stops without it; only a change in between (seen in none of the images tried: the iteration lands on its
//! fixed point, a change of zero) sorts the values on the host to decide as scikit-image does.

use super::HistogramLayout;
use crate::app::ffi::{self, Region};
use crate::app::{ClApp, Kernel, Program};
use crate::data::{HostCommand, XData};
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use num_complex::Complex64;
use num_traits::Float;
use rayon::prelude::*;

/// Values each group writes in the range pass (the largest of the three passes).
pub(super) const PARTIALS_PER_GROUP: usize = 10;
/// The most steps before the iteration is declared stuck (scikit-image has no limit and would loop for ever;
/// the images tried take fewer than 20).
const MAX_STEPS: usize = 10_000;

/// The device side of Li's iteration: its passes and their partials.
pub(super) struct LiPlan<T: RealElement> {
    range: Kernel,
    mean: Kernel,
    split: Kernel,
    result: Kernel,
    partials: XData<T>,
    /// The region a host step maps for writing (`ffi::with_mapped` maps one; the steps only read).
    note: XData<T>,
    layout: HistogramLayout,
    index: IndexType,
}

/// Li's three passes over the image.
#[derive(Clone, Copy)]
enum Pass {
    /// `li_range`: the extremes and the kinds of values.
    Range,
    /// `li_mean`: the sum of the shifted values and the bound of the least gap.
    Mean,
    /// `li_split`: a step's sums above and below the threshold.
    Split,
}

/// What the range pass found: the finite values' extremes and how many values of each kind there are.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Census {
    min: f64,
    max: f64,
    finite: u64,
    nan: u64,
    positive_infinities: u64,
    negative_infinities: u64,
}

/// One step's pass: the sums and counts of the values above the threshold and of the others.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Split {
    /// The sum of the values above.
    pub above: f64,
    /// How many lie above.
    pub count_above: u64,
    /// The sum of the others.
    pub below: f64,
    /// How many the others are.
    pub count_below: u64,
}

impl<T: RealElement> LiPlan<T> {
    pub(super) fn new(app: &ClApp, program: &Program, layout: HistogramLayout, index: IndexType) -> Result<LiPlan<T>> {
        let k = |name: &str| program.kernel(name).map(|k| k.owned_by("ThresholdValue"));
        Ok(LiPlan {
            range: k("li_range")?,
            mean: k("li_mean")?,
            split: k("li_split")?,
            result: k("li_result")?,
            partials: XData::uninit(app, "ThresholdValue", &[PARTIALS_PER_GROUP * layout.groups])?,
            note: XData::zeros(app, &[1])?,
            layout,
            index,
        })
    }

    pub(super) fn layout(&self) -> HistogramLayout {
        self.layout
    }

    /// Runs the iteration on `input` and writes the threshold into `output` (one element).
    pub(super) fn run(&mut self, input: &XData<T>, output: &XData<T>) -> Result<()> {
        let threshold =
            if T::IS_DOUBLE { self.threshold::<f64>(input)? } else { f64::from(self.threshold::<f32>(input)?) };
        self.result
            .launch()
            .output("y", output)
            .index("y_off", self.index, output.offset() as u64)
            .scalar("value", T::from_c64(Complex64::new(threshold, 0.0)))
            .global(&[1])
            .local(&[1])
            .enqueue()
    }

    /// The threshold in `C`, the image's type (numpy computes in it).
    fn threshold<C: Float + Send + Sync>(&mut self, input: &XData<T>) -> Result<C> {
        let census = self.census(input)?;
        let min = match census.answer() {
            Some(answer) => return Ok(cast(answer)),
            None => cast::<C>(census.min),
        };
        let (sum, bound) = self.mean_and_gap_bound(input, min)?;
        // numpy's mean of `image - image_min`: the sum in the image's type, divided as float64 (an intp count).
        let start = mean::<C>(sum, census.finite);
        let tolerance = Tolerance::AtMost(bound / cast(2.0));
        let exact = || exact_tolerance::<T, C>(input, min);
        let shifted = iterate(start, tolerance, exact, |t| self.split(input, min, t, census.finite))?;
        Ok(shifted + min)
    }

    fn census(&mut self, input: &XData<T>) -> Result<Census> {
        self.pass::<f64>(Pass::Range, input, None, None)?;
        let values = self.partials_on_host(PARTIALS_PER_GROUP)?;
        let mut census = Census {
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            finite: 0,
            nan: 0,
            positive_infinities: 0,
            negative_infinities: 0,
        };
        for group in values.chunks_exact(PARTIALS_PER_GROUP) {
            if let [lo, hi, f, f_rest, q, q_rest, p, p_rest, m, m_rest] = group {
                census.min = census.min.min(*lo);
                census.max = census.max.max(*hi);
                census.finite += count(*f, *f_rest);
                census.nan += count(*q, *q_rest);
                census.positive_infinities += count(*p, *p_rest);
                census.negative_infinities += count(*m, *m_rest);
            }
        }
        Ok(census)
    }

    /// The sum of the shifted finite values and the least non-zero difference of neighbours (an upper bound of
    /// the least gap between distinct values; infinite when no neighbours differ).
    fn mean_and_gap_bound<C: Float>(&mut self, input: &XData<T>, min: C) -> Result<(f64, C)> {
        self.pass(Pass::Mean, input, Some(min), None)?;
        let values = self.partials_on_host(3)?;
        let (mut sum, mut gap) = (0.0, f64::INFINITY);
        for group in values.chunks_exact(3) {
            if let [s, s_rest, g] = group {
                sum += s + s_rest;
                gap = gap.min(*g);
            }
        }
        Ok((sum, cast(gap)))
    }

    /// The sums above and below `t` of the `finite` shifted values.
    fn split<C: Float>(&mut self, input: &XData<T>, min: C, t: C, finite: u64) -> Result<Split> {
        self.pass(Pass::Split, input, Some(min), Some(t))?;
        let values = self.partials_on_host(6)?;
        let mut split = Split { above: 0.0, count_above: 0, below: 0.0, count_below: 0 };
        for group in values.chunks_exact(6) {
            if let [a, a_rest, b, b_rest, c, c_rest] = group {
                split.above += a + a_rest;
                split.below += b + b_rest;
                split.count_above += count(*c, *c_rest);
            }
        }
        split.count_below = finite.saturating_sub(split.count_above);
        Ok(split)
    }

    /// Enqueues one pass over the image (`min` and `t` for the passes that take them).
    fn pass<C: Float>(&mut self, pass: Pass, input: &XData<T>, min: Option<C>, t: Option<C>) -> Result<()> {
        let layout = self.layout;
        let kernel = match pass {
            Pass::Range => &mut self.range,
            Pass::Mean => &mut self.mean,
            Pass::Split => &mut self.split,
        };
        let as_t = |v: C| T::from_c64(Complex64::new(v.to_f64().unwrap_or(f64::NAN), 0.0));
        let mut launch = kernel
            .launch()
            .input("x", input)
            .index("x_off", self.index, input.offset() as u64)
            .index("n", self.index, input.len() as u64)
            .index("block", self.index, layout.block(input.len()) as u64);
        if let Some(min) = min {
            launch = launch.scalar("mn", as_t(min));
        }
        if let Some(t) = t {
            launch = launch.scalar("t", as_t(t));
        }
        launch
            .output("partials", &self.partials)
            .global(&[layout.groups * layout.work_items])
            .local(&[layout.work_items])
            .work((input.len() * std::mem::size_of::<T>()) as u64, 0)
            .enqueue()
    }

    /// The first `per_group` partials of every group, as float64, read in a host command (profiles show it as
    /// `li_step`).
    fn partials_on_host(&self, per_group: usize) -> Result<Vec<f64>> {
        let len = per_group * self.layout.groups;
        let mut values = Vec::new();
        let reads = [Region { buffer: self.partials.storage().buffer(), lo: 0, hi: len }];
        let write = Region { buffer: self.note.storage().buffer(), lo: 0, hi: 1 };
        let bytes = (len * std::mem::size_of::<T>()) as u64;
        HostCommand::new::<T, T>("ThresholdValue", "li_step", &[&self.partials], &[&self.note])?.work(bytes, 0).run(
            |queue| {
                ffi::with_mapped::<T, T, ()>(queue, &reads, &write, |read, _| {
                    values = read.first().map(|r| r.iter().map(|v| v.to_c64().re).collect()).unwrap_or_default();
                })
                .map(|((), event)| event)
            },
        )?;
        Ok(values)
    }
}

impl Census {
    /// scikit-image's answers before any iteration: NaN for an image of NaN alone, the value of an image of one
    /// value (NaN aside; infinities count), 0 for one of both infinities and nothing finite.
    fn answer(&self) -> Option<f64> {
        let kinds = [self.finite > 0, self.positive_infinities > 0, self.negative_infinities > 0];
        match kinds {
            [false, false, false] => Some(f64::NAN),
            [true, false, false] if self.min == self.max => Some(self.min),
            [false, true, false] => Some(f64::INFINITY),
            [false, false, true] => Some(f64::NEG_INFINITY),
            [false, true, true] => Some(0.0),
            _ => None,
        }
    }
}

/// A count the device sent as two T (the nearest T and the rest).
fn count(hi: f64, rest: f64) -> u64 {
    (hi + rest).max(0.0) as u64
}

fn cast<C: Float>(v: f64) -> C {
    C::from(v).unwrap_or_else(C::nan)
}

/// numpy's mean of `n` values of type `C` summing to `sum`: the sum rounded to `C`, divided in float64 by the
/// count (an intp), rounded to `C` (`ret.dtype.type(ret / rcount)`). NaN for no values, as numpy's.
pub(super) fn mean<C: Float>(sum: f64, n: u64) -> C {
    let rounded = cast::<C>(sum).to_f64().unwrap_or(f64::NAN);
    cast(rounded / n as f64)
}

/// What the iteration knows of scikit-image's tolerance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Tolerance<C> {
    /// At most this (the default, before it is needed exactly).
    AtMost(C),
    /// Exactly this.
    Exact(C),
}

impl<C: Float> Tolerance<C> {
    /// scikit-image's `abs(t_next - t_curr) > tolerance`, asking `exact` for the tolerance only when the bound
    /// cannot decide.
    fn exceeded_by(&mut self, change: C, exact: &mut impl FnMut() -> Result<C>) -> Result<bool> {
        match *self {
            Tolerance::Exact(tolerance) => Ok(change > tolerance),
            Tolerance::AtMost(bound) if change > bound => Ok(true),
            // a change of zero (or NaN) exceeds no tolerance
            Tolerance::AtMost(_) if change.is_nan() || change <= C::zero() => Ok(false),
            Tolerance::AtMost(_) => {
                let tolerance = exact()?;
                *self = Tolerance::Exact(tolerance);
                Ok(change > tolerance)
            }
        }
    }
}

/// scikit-image's float iteration from `start` (the mean), in `C`: `split(t)` gives the sums above and below t,
/// `exact` the default tolerance when it is needed. Returns the threshold above the minimum.
pub(super) fn iterate<C: Float>(
    start: C,
    mut tolerance: Tolerance<C>,
    mut exact: impl FnMut() -> Result<C>,
    mut split: impl FnMut(C) -> Result<Split>,
) -> Result<C> {
    // The first test: t_curr = -2 * tolerance, so the change is start + 2·tolerance, more than the tolerance when
    // the start is positive; a start of zero goes on only when the tolerance is.
    let mut t_next = start;
    let goes_on = if start > C::zero() {
        true
    } else if start == C::zero() {
        let t = match tolerance {
            Tolerance::Exact(t) => t,
            Tolerance::AtMost(_) => exact()?,
        };
        tolerance = Tolerance::Exact(t);
        let t_curr = -(t + t);
        (t_next - t_curr).abs() > t
    } else {
        false
    };
    if !goes_on {
        return Ok(t_next);
    }
    for _ in 0..MAX_STEPS {
        let t_curr = t_next;
        let sums = split(t_curr)?;
        let mean_fore = mean::<C>(sums.above, sums.count_above);
        let mean_back = mean::<C>(sums.below, sums.count_below);
        if mean_back == C::zero() {
            return Ok(t_next);
        }
        t_next = (mean_back - mean_fore) / (mean_back.ln() - mean_fore.ln());
        if !tolerance.exceeded_by((t_next - t_curr).abs(), &mut exact)? {
            return Ok(t_next);
        }
    }
    Err(stuck(t_next.to_f64().unwrap_or(f64::NAN)))
}

/// scikit-image's default tolerance of a float image: half the least gap between distinct values of
/// `image - image_min` (the finite ones), in `C` — the values sorted on the host.
fn exact_tolerance<T: RealElement, C: Float + Send + Sync>(input: &XData<T>, min: C) -> Result<C> {
    let mut shifted: Vec<C> = input
        .to_vec()?
        .into_iter()
        .map(|v| v.to_c64().re)
        .filter(|v| v.is_finite())
        .map(|v| cast::<C>(v) - min)
        .collect();
    shifted.par_sort_unstable_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    shifted.dedup();
    let least = shifted.windows(2).filter_map(|w| if let [a, b] = w { Some(*b - *a) } else { None }).reduce(C::min);
    match least {
        Some(gap) => Ok(gap / cast(2.0)),
        None => Err(Error::invalid(
            "threshold-value",
            "Li's tolerance is half the least gap between the image's finite values, and it has one finite value \
             besides its infinities (scikit-image fails here too)",
        )),
    }
}

/// scikit-image's integer-image path of `threshold_li` over the histogram of `image - image_min` (bin k holds
/// the value k): float32 weights, float64 means, tolerance 0.5. Returns the threshold above the minimum. Every
/// sum here is of integers below 2⁵³, so exact in any order, as numpy's are.
///
/// ```
/// // skimage.filters.threshold_li(np.array([0, 1, 2, 3, 10, 11], np.uint8)) is 4.625085081327756
/// let counts = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1];
/// let t = cliper::process::threshold::li_of_histogram(&counts)?;
/// assert!((t - 4.625085081327756).abs() < 1e-14);
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn li_of_histogram(counts: &[u64]) -> Result<f64> {
    let weights: Vec<f64> = counts.iter().map(|&c| f64::from(c as f32)).collect();
    let total: u64 = counts.iter().sum();
    let moment: f64 = counts.iter().enumerate().map(|(k, &c)| k as f64 * c as f64).sum();
    let mut t_next = moment / total as f64;
    let mut t_curr = -1.0;
    let tolerance = 0.5;
    let mut steps = 0;
    while (t_next - t_curr).abs() > tolerance {
        steps += 1;
        if steps > MAX_STEPS {
            return Err(stuck(t_next));
        }
        t_curr = t_next;
        let average = |above: bool| {
            let (mut weighted, mut weight) = (0.0, 0.0);
            for (k, &w) in weights.iter().enumerate() {
                if (k as f64 > t_curr) == above {
                    weighted += k as f64 * w;
                    weight += w;
                }
            }
            weighted / weight
        };
        let (mean_fore, mean_back) = (average(true), average(false));
        if mean_back == 0.0 {
            break;
        }
        t_next = (mean_back - mean_fore) / (mean_back.ln() - mean_fore.ln());
    }
    Ok(t_next)
}

fn stuck(last: f64) -> Error {
    Error::invalid(
        "threshold-value",
        format!("Li's iteration did not settle in {MAX_STEPS} steps (the last threshold above the minimum: {last})"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// scikit-image's float iteration on host values, as numpy runs it (sums exact here: small integers).
    fn split_of(values: &[f64]) -> impl FnMut(f64) -> Result<Split> + '_ {
        move |t| {
            let (above, below): (Vec<f64>, Vec<f64>) = values.iter().partition(|&&v| v > t);
            Ok(Split {
                above: above.iter().sum(),
                count_above: above.len() as u64,
                below: below.iter().sum(),
                count_below: below.len() as u64,
            })
        }
    }

    #[test]
    fn a_change_between_zero_and_the_bound_asks_for_the_exact_tolerance_once() -> Result<()> {
        let mut asked = 0;
        let mut exact = || {
            asked += 1;
            Ok(0.25)
        };
        let mut tolerance = Tolerance::AtMost(1.0);
        assert!(tolerance.exceeded_by(2.0, &mut exact)?);
        assert!(!tolerance.exceeded_by(0.0, &mut exact)?);
        assert!(tolerance.exceeded_by(0.5, &mut exact)?);
        assert!(!tolerance.exceeded_by(0.2, &mut exact)?);
        assert_eq!((asked, tolerance), (1, Tolerance::Exact(0.25)));
        Ok(())
    }

    #[test]
    fn the_iteration_stops_at_its_fixed_point_with_either_tolerance() -> Result<()> {
        // shifted values 0..=9 and a cluster at 30..=33
        let values: Vec<f64> = (0..10).chain(30..34).map(f64::from).collect();
        let start = values.iter().sum::<f64>() / values.len() as f64;
        let bounded = iterate(start, Tolerance::AtMost(0.5), || Ok(0.5), split_of(&values))?;
        let exact = iterate(start, Tolerance::Exact(0.5), || Ok(0.5), split_of(&values))?;
        assert_eq!(bounded, exact);
        assert!(bounded > 9.0 && bounded < 30.0, "{bounded}");
        Ok(())
    }

    #[test]
    fn the_histogram_path_splits_two_clusters() {
        let mut counts = vec![0u64; 40];
        for k in [0, 1, 2, 3] {
            counts[k] = 10;
        }
        for k in [30, 31, 32] {
            counts[k] = 5;
        }
        let t = li_of_histogram(&counts).unwrap();
        assert!(t > 3.0 && t < 30.0, "{t}");
    }
}
