//! [`PeakLocalMax`]: scikit-image's `peak_local_max`. On the device: the maximum filter (scipy's, mode `nearest`,
//! over the footprint) as a [`RankFilter`], the image's minimum and maximum as [`Statistic`]s, and one kernel
//! (`kernels/feature.cl`) comparing each element with its window's maximum and the threshold, dropping the border
//! and appending the candidates by an atomic count. The host command after it sorts the candidates and keeps them
//! by ensure_spacing's greedy rule ([`select`](super::select)) — sequential steps, whose order decides the result.
//! With labels, each label's box is searched on the host.
//! [`PeakCoordinates`] turns the result into skimage's coordinate table.

use super::select::{Grid, Rules, Spacing, labelled_peaks, unlabelled_peaks};
use crate::app::Kernel;
use crate::app::ffi::{self, Region};
use crate::data::{HostCommand, XData};
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::filter::Border;
use crate::process::rank::{Footprint, RankFilter, RankKind, RankParams, RankStrategy};
use crate::process::reduce::{StatKind, StatParams, Statistic};
use crate::process::{Prepared, Process};
use num_complex::Complex64;
use std::sync::Arc;

const OP: &str = "peak_local_max";

/// skimage's `exclude_border`: how far from the image's edges peaks are dropped.
///
/// ```
/// use cliper::ExcludeBorder;
/// assert_eq!(ExcludeBorder::MinDistance.widths(3, 2)?, vec![3, 3]);
/// assert_eq!(ExcludeBorder::Width(0).widths(3, 2)?, vec![0, 0]); // skimage's False
/// assert!(ExcludeBorder::PerAxis(vec![1]).widths(3, 2).is_err());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExcludeBorder {
    /// skimage's `True`: `min_distance` along every axis.
    MinDistance,
    /// An int (`False` is 0): this many elements along every axis.
    Width(usize),
    /// A tuple: one width per axis.
    PerAxis(Vec<usize>),
}

impl ExcludeBorder {
    /// The width per axis of an image of `ndim` axes.
    pub fn widths(&self, min_distance: usize, ndim: usize) -> Result<Vec<usize>> {
        match self {
            ExcludeBorder::MinDistance => Ok(vec![min_distance; ndim]),
            ExcludeBorder::Width(w) => Ok(vec![*w; ndim]),
            ExcludeBorder::PerAxis(w) if w.len() == ndim => Ok(w.clone()),
            ExcludeBorder::PerAxis(w) => Err(Error::invalid(
                OP,
                format!("exclude_border gives {} widths for an image of {ndim} axes: give one per axis", w.len()),
            )),
        }
    }
}

/// What [`PeakLocalMax`] writes at a peak (0 elsewhere).
///
/// ```
/// use cliper::{ClApp, PeakLocalMax, PeakMark, PeakParams, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[5], &[0.0f32, 2.0, 0.0, 3.0, 0.0])?;
/// let p = PeakParams::new(1).exclude_border(cliper::ExcludeBorder::Width(0));
/// assert_eq!(PeakLocalMax::apply(&x, None, p.clone())?.to_vec()?, vec![0.0, 2.0, 0.0, 1.0, 0.0]); // 3 first
/// assert_eq!(PeakLocalMax::apply(&x, None, p.mark(PeakMark::Mask))?.to_vec()?, vec![0.0, 1.0, 0.0, 1.0, 0.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeakMark {
    /// The peak's place in skimage's list, from 1 (what [`PeakCoordinates`] reads).
    Order,
    /// 1: the peak mask (`mask[tuple(coords.T)] = True`).
    Mask,
}

/// The settings of a [`PeakLocalMax`]: skimage 0.26's parameters and defaults (`num_peaks` and
/// `num_peaks_per_label` of `None` are its `inf`).
///
/// ```
/// use cliper::{ExcludeBorder, PeakParams};
/// let p = PeakParams::new(3).threshold_rel(0.2).exclude_border(ExcludeBorder::Width(0)).num_peaks(10);
/// assert_eq!((p.min_distance, p.threshold_rel, p.num_peaks, p.p_norm), (3, Some(0.2), Some(10), f64::INFINITY));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PeakParams {
    /// Peaks are at least this far apart (p-norm distance) and the window is `2·min_distance + 1` wide.
    pub min_distance: usize,
    /// The least value of a peak (default: the image's minimum).
    pub threshold_abs: Option<f64>,
    /// The least value of a peak as a fraction of the image's maximum (the larger of the two is taken).
    pub threshold_rel: Option<f64>,
    /// Peaks this near the edges are dropped.
    pub exclude_border: ExcludeBorder,
    /// At most this many peaks, the highest.
    pub num_peaks: Option<usize>,
    /// The window of the maximum filter (default: the box `2·min_distance + 1` wide); as many axes as the image.
    pub footprint: Option<Footprint>,
    /// With labels: at most this many peaks per label.
    pub num_peaks_per_label: Option<usize>,
    /// The Minkowski p-norm of the spacing rule, 1 to ∞.
    pub p_norm: f64,
    /// What the output holds at a peak.
    pub mark: PeakMark,
}

impl Default for PeakParams {
    fn default() -> PeakParams {
        PeakParams::new(1)
    }
}

impl PeakParams {
    /// skimage's defaults with `min_distance`; the output holds each peak's order.
    pub fn new(min_distance: usize) -> PeakParams {
        PeakParams {
            min_distance,
            threshold_abs: None,
            threshold_rel: None,
            exclude_border: ExcludeBorder::MinDistance,
            num_peaks: None,
            footprint: None,
            num_peaks_per_label: None,
            p_norm: f64::INFINITY,
            mark: PeakMark::Order,
        }
    }
    /// Sets `threshold_abs`.
    pub fn threshold_abs(mut self, t: f64) -> PeakParams {
        self.threshold_abs = Some(t);
        self
    }
    /// Sets `threshold_rel`.
    pub fn threshold_rel(mut self, t: f64) -> PeakParams {
        self.threshold_rel = Some(t);
        self
    }
    /// Sets `exclude_border`.
    pub fn exclude_border(mut self, e: ExcludeBorder) -> PeakParams {
        self.exclude_border = e;
        self
    }
    /// Sets `num_peaks`.
    pub fn num_peaks(mut self, n: usize) -> PeakParams {
        self.num_peaks = Some(n);
        self
    }
    /// Sets the footprint.
    pub fn footprint(mut self, f: Footprint) -> PeakParams {
        self.footprint = Some(f);
        self
    }
    /// Sets `num_peaks_per_label`.
    pub fn num_peaks_per_label(mut self, n: usize) -> PeakParams {
        self.num_peaks_per_label = Some(n);
        self
    }
    /// Sets `p_norm`.
    pub fn p_norm(mut self, p: f64) -> PeakParams {
        self.p_norm = p;
        self
    }
    /// Sets what the output holds at a peak.
    pub fn mark(mut self, mark: PeakMark) -> PeakParams {
        self.mark = mark;
        self
    }

    /// The footprint on an image of `ndim` axes.
    fn window(&self, ndim: usize) -> Result<Footprint> {
        match &self.footprint {
            Some(f) if f.shape().len() != ndim => Err(Error::invalid(
                OP,
                format!("the footprint has {} axes, the image {ndim}: give one of as many axes", f.shape().len()),
            )),
            Some(f) => Ok(f.clone()),
            None => Footprint::full(&vec![2 * self.min_distance + 1; ndim]),
        }
    }

    /// The rules of the host's selection on an image of `shape`.
    fn rules(&self, shape: &[usize]) -> Result<Rules> {
        let footprint = self.window(shape.len())?;
        Ok(Rules {
            border: self.exclude_border.widths(self.min_distance, shape.len())?,
            taps: taps(&footprint),
            single: footprint.shape().iter().product::<usize>() == 1,
            spacing: Spacing { spacing: self.min_distance, p: self.p_norm },
            num_peaks: self.num_peaks,
            num_peaks_per_label: self.num_peaks_per_label,
        })
    }

    fn check(&self, shape: &[usize]) -> Result<()> {
        if !(1..=3).contains(&shape.len()) || shape.contains(&0) {
            return Err(Error::invalid(OP, format!("takes a non-empty image of 1 to 3 axes; got shape {shape:?}")));
        }
        if shape.iter().product::<usize>() >= 1 << 31 {
            return Err(Error::invalid(OP, format!("counts its candidates in 31 bits: shape {shape:?} is too large")));
        }
        self.check_values()?;
        self.exclude_border.widths(self.min_distance, shape.len())?;
        self.window(shape.len()).map(|_| ())
    }

    /// Refuses settings no image can take: a p-norm below 1, a NaN threshold.
    pub fn check_values(&self) -> Result<()> {
        if self.p_norm.is_nan() || self.p_norm < 1.0 {
            return Err(Error::invalid(OP, format!("p_norm {} is not within [1, inf]", self.p_norm)));
        }
        for (name, t) in [("threshold_abs", self.threshold_abs), ("threshold_rel", self.threshold_rel)] {
            if t.is_some_and(f64::is_nan) {
                return Err(Error::invalid(OP, format!("{name} is NaN")));
            }
        }
        Ok(())
    }
}

/// `_get_threshold` in the image's type: `threshold_abs` (else the image's minimum, NaN when it holds one), raised
/// to `threshold_rel · max` when that is larger (Python's `max`, which keeps the first unless the second is
/// greater).
fn threshold<T: RealElement>(values: &[T], abs: Option<f64>, rel: Option<f64>) -> f64 {
    let round = |v: f64| T::from_c64(Complex64::new(v, 0.0)).to_c64().re;
    let reals = || values.iter().map(|v| v.to_c64().re);
    let nan_min = || reals().fold(f64::INFINITY, |m, v| if v.is_nan() || m.is_nan() { f64::NAN } else { m.min(v) });
    let nan_max = || reals().fold(f64::NEG_INFINITY, |m, v| if v.is_nan() || m.is_nan() { f64::NAN } else { m.max(v) });
    let mut t = abs.map_or_else(nan_min, round);
    if let Some(rel) = rel {
        // A product of two values of the image's type is exact in f64, so one rounding gives numpy's.
        let scaled = round(round(rel) * nan_max());
        if scaled > t {
            t = scaled;
        }
    }
    t
}

/// The footprint's taps as offsets from its centre (`size // 2` per axis: scipy's origin 0).
fn taps(footprint: &Footprint) -> Vec<Vec<isize>> {
    let grid = Grid::new(footprint.shape());
    let centre: Vec<isize> = footprint.shape().iter().map(|&n| (n / 2) as isize).collect();
    footprint
        .mask()
        .iter()
        .enumerate()
        .filter(|(_, on)| **on)
        .map(|(k, _)| grid.coordinates(k).iter().zip(&centre).map(|(&c, &o)| c as isize - o).collect())
        .collect()
}

/// What [`PeakLocalMax`] planned.
///
/// ```
/// use cliper::{ClApp, PeakLocalMax, PeakParams, PeakStrategy, Process, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 3], &[0.0f32, 2.0, 0.0, 1.0, 0.0, 0.0])?;
/// let out = XData::zeros(&app, &[2, 3])?;
/// let mut peaks = PeakLocalMax::new(&x, None, &out, PeakParams::new(1));
/// peaks.init()?;
/// assert!(matches!(peaks.strategy(), Some(PeakStrategy::MaximumFilter(_))));
/// let mut single = PeakLocalMax::new(&x, None, &out, PeakParams::new(0)); // a one-element window
/// single.init()?;
/// assert_eq!(single.strategy(), Some(PeakStrategy::Threshold));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PeakStrategy {
    /// The maximum filter on the device, then the host's selection.
    MaximumFilter(RankStrategy),
    /// A one-element window: the values above the threshold (the device's candidates), sorted on the host.
    Threshold,
    /// With labels: each label's box searched on the host (its own maximum filter, clamped to the box).
    Labelled,
}

impl std::fmt::Display for PeakStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeakStrategy::MaximumFilter(s) => {
                write!(f, "maximum filter ({s}) and candidates on the device, sorted and spaced on the host")
            }
            PeakStrategy::Threshold => write!(f, "values above the threshold on the device, sorted on the host"),
            PeakStrategy::Labelled => write!(f, "per-label boxes searched, sorted and spaced on the host"),
        }
    }
}

/// scikit-image 0.26's `peak_local_max` of a real image of 1 to 3 axes (optionally within labels of its shape and
/// type): an f64 array of the image's shape holding, at each peak, its place in skimage's list from 1 (or 1 with
/// [`PeakMark::Mask`]) and 0 elsewhere; [`PeakCoordinates`] turns it into the list.
///
/// The rules are skimage's exactly: the maximum filter over the footprint (mode `nearest`), `image == max`, no
/// peak in a flat image, `image > threshold` compared in the image's type, the border dropped, the candidates
/// sorted by value (highest first, ties in C order), spaced by `min_distance` in the p-norm (kept greedily, at most
/// `num_peaks`), and with labels each label's box searched alone. The maximum filter, the thresholds, the border
/// and the candidates run on the device (a list of 3 values per element is its scratch); their sort and spacing
/// are sequential and run on the host in a host command (on a GPU its map copies the list back). With labels the
/// boxes are searched on the host (over the mapped image and labels), and a NaN within a label or a threshold
/// below the type's lowest value is refused.
///
/// ```
/// use cliper::{ClApp, PeakCoordinates, PeakLocalMax, PeakParams, XData};
/// let app = ClApp::new()?;
/// let mut v = vec![0.0f64; 49];
/// v[3 * 7 + 4] = 1.0;
/// v[3 * 7 + 2] = 1.5;
/// let image = XData::from_slice(&app, &[7, 7], &v)?;
/// let found = PeakLocalMax::apply(&image, None, PeakParams::new(1))?;
/// assert_eq!(PeakCoordinates::list(&found)?, vec![vec![3, 2], vec![3, 4]]);
/// let spaced = PeakLocalMax::apply(&image, None, PeakParams::new(2))?;
/// assert_eq!(PeakCoordinates::list(&spaced)?, vec![vec![3, 2]]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct PeakLocalMax<T: RealElement> {
    image: XData<T>,
    labels: Option<XData<T>>,
    output: XData<f64>,
    params: PeakParams,
    plan: Prepared<Plan<T>>,
}

struct Plan<T: RealElement> {
    /// `None` with labels: the host searches each label's box.
    candidates: Option<Candidates<T>>,
    strategy: PeakStrategy,
}

/// The device's half without labels: the maximum filter (none for a one-element window), the image's minimum and
/// maximum (for the thresholds), and the candidates' kernel writing into `list`.
struct Candidates<T: RealElement> {
    maximum: Option<(RankFilter<T>, XData<T>)>,
    range: [Statistic<T, T>; 2],
    low: XData<T>,
    high: XData<T>,
    clear: Kernel,
    find: Kernel,
    list: XData<T>,
}

/// The elements of T the list's head takes (two uints: the count and the flag).
fn head_len<T: RealElement>() -> usize {
    8 / std::mem::size_of::<T>()
}

/// The candidates' count and the "not flat" flag, from the list's head.
fn read_head<T: RealElement>(list: &[T]) -> (usize, bool) {
    let bytes: Vec<u8> = list.iter().take(head_len::<T>()).flat_map(|v| v.to_arg_bytes()).collect();
    let word =
        |k: usize| bytes.get(4 * k..4 * k + 4).and_then(|b| <[u8; 4]>::try_from(b).ok()).map_or(0, u32::from_ne_bytes);
    (word(0) as usize, word(1) != 0)
}

/// Writes the marks of `peaks` (in order) into a zeroed output.
fn mark(out: &mut [f64], peaks: &[usize], how: PeakMark) {
    out.fill(0.0);
    for (k, &i) in peaks.iter().enumerate() {
        if let Some(slot) = out.get_mut(i) {
            *slot = match how {
                PeakMark::Order => (k + 1) as f64,
                PeakMark::Mask => 1.0,
            };
        }
    }
}

impl<T: RealElement> PeakLocalMax<T> {
    /// The peaks of `image` (within `labels`, if given) into `output`.
    pub fn new(image: &XData<T>, labels: Option<&XData<T>>, output: &XData<f64>, params: PeakParams) -> Self {
        PeakLocalMax {
            image: image.clone(),
            labels: labels.cloned(),
            output: output.clone(),
            params,
            plan: Prepared::default(),
        }
    }

    /// Allocates the output, finds the peaks into it and returns it.
    pub fn apply(image: &XData<T>, labels: Option<&XData<T>>, params: PeakParams) -> Result<XData<f64>> {
        let output = XData::zeros(image.app(), &Self::output_shape(image.shape(), &params)?)?;
        PeakLocalMax::new(image, labels, &output, params).run()?;
        Ok(output)
    }

    /// The output's shape: the image's (after checking the settings against it).
    ///
    /// ```
    /// use cliper::{PeakLocalMax, PeakParams};
    /// assert_eq!(PeakLocalMax::<f32>::output_shape(&[37, 45], &PeakParams::new(3))?, vec![37, 45]);
    /// assert!(PeakLocalMax::<f32>::output_shape(&[2, 3, 4, 5], &PeakParams::new(1)).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(image: &[usize], params: &PeakParams) -> Result<Vec<usize>> {
        params.check(image)?;
        Ok(image.to_vec())
    }

    /// What `init` planned; `None` before.
    pub fn strategy(&self) -> Option<PeakStrategy> {
        self.plan.as_ref().map(|p| p.strategy)
    }

    /// The host command without labels: the device's candidates sorted and spaced, the marks written.
    fn select_candidates(&self, list: &XData<T>) -> Result<()> {
        let grid = Grid::new(self.image.shape());
        let rules = self.params.rules(self.image.shape())?;
        let reads = [Region { buffer: list.storage().buffer(), lo: 0, hi: list.len() }];
        let write = self.output_region();
        let bytes = (self.output.len() * 8) as u64;
        HostCommand::new::<T, f64>("PeakLocalMax", "peak_selection", &[list], &[&self.output])?.work(bytes, 0).run(
            |queue| {
                ffi::with_mapped::<T, f64, ()>(queue, &reads, &write, |ins, out| {
                    let list = ins.first().copied().unwrap_or(&[]);
                    let (count, not_flat) = read_head(list);
                    let value = |v: &T| v.to_c64().re;
                    let entries = list.get(head_len::<T>()..).unwrap_or(&[]);
                    let candidates: Vec<(usize, f64)> = entries
                        .chunks_exact(3)
                        .take(count)
                        .filter_map(|e| match e {
                            [hi, lo, v] => Some(((value(hi) as usize) << 24 | value(lo) as usize, value(v))),
                            _ => None,
                        })
                        .collect();
                    mark(out, &unlabelled_peaks(&grid, candidates, !not_flat, &rules), self.params.mark);
                })
                .map(|((), event)| event)
            },
        )
    }

    /// The host command with labels: each label's box searched over the mapped image and labels.
    fn select_in_labels(&self, labels: &XData<T>) -> Result<()> {
        let shape = self.image.shape().to_vec();
        let grid = Grid::new(&shape);
        let reads = [whole_region(&self.image), whole_region(labels)];
        let write = self.output_region();
        let lowest = if T::IS_DOUBLE { f64::MIN } else { f64::from(f32::MIN) };
        let mut refusal = None;
        let bytes = (self.image.len() * (2 * std::mem::size_of::<T>() + 8)) as u64;
        HostCommand::new::<T, f64>("PeakLocalMax", "peak_selection", &[&self.image, labels], &[&self.output])?
            .work(bytes, 0)
            .run(|queue| {
                ffi::with_mapped::<T, f64, ()>(queue, &reads, &write, |ins, out| {
                    let [image, labels] = ins else { return };
                    let value = |i: usize| image.get(i).map_or(f64::NAN, |v| v.to_c64().re);
                    let label = |i: usize| labels.get(i).map_or(f64::NAN, |v| v.to_c64().re);
                    let threshold = threshold(image, self.params.threshold_abs, self.params.threshold_rel);
                    let peaks = self
                        .params
                        .rules(&shape)
                        .and_then(|rules| labelled_peaks(&grid, value, label, lowest, threshold, &rules));
                    match peaks {
                        Ok(peaks) => mark(out, &peaks, self.params.mark),
                        Err(e) => {
                            out.fill(0.0);
                            refusal = Some(e);
                        }
                    }
                })
                .map(|((), event)| event)
            })?;
        match refusal {
            Some(e) => {
                self.output.storage().poison("PeakLocalMax", Arc::new(e.clone()));
                Err(e)
            }
            None => Ok(()),
        }
    }

    fn output_region(&self) -> Region<'_> {
        let at = self.output.offset();
        Region { buffer: self.output.storage().buffer(), lo: at, hi: at + self.output.len() }
    }

    /// Plans the device's half without labels.
    fn plan_candidates(&self, footprint: Footprint) -> Result<(Candidates<T>, PeakStrategy)> {
        let shape = self.image.shape().to_vec();
        let app = self.image.app().clone();
        let single = footprint.shape().iter().product::<usize>() == 1 || self.image.len() == 1;
        let (maximum, strategy) = if single {
            (None, PeakStrategy::Threshold)
        } else {
            let maxima = XData::<T>::zeros(&app, &shape)?;
            let params =
                RankParams::new(RankKind::Maximum).footprint(footprint).border(Border::Nearest).rank(shape.len());
            let mut filter = RankFilter::new(&self.image, &maxima, params);
            filter.init()?;
            let strategy = PeakStrategy::MaximumFilter(filter.strategy().unwrap_or(RankStrategy::Nothing));
            (Some((filter, maxima)), strategy)
        };
        let range = |kind: StatKind| -> Result<(Statistic<T, T>, XData<T>)> {
            let params = StatParams::new(kind);
            let out = XData::<T>::zeros(&app, &Statistic::<T, T>::output_shape(&shape, &params)?)?;
            let mut statistic = Statistic::new(&self.image, &out, params);
            statistic.init()?;
            Ok((statistic, out))
        };
        let ((min, low), (max, high)) = (range(StatKind::Min)?, range(StatKind::Max)?);
        let program = app.build_program("feature.cl", &kernels::with_common(kernels::FEATURE), &T::build_options())?;
        let list = XData::<T>::zeros(&app, &[head_len::<T>() + 3 * self.image.len()])?;
        let candidates = Candidates {
            maximum,
            range: [min, max],
            low,
            high,
            clear: program.kernel("peak_head_clear")?.owned_by("PeakLocalMax"),
            find: program.kernel("peak_candidates")?.owned_by("PeakLocalMax"),
            list,
        };
        Ok((candidates, strategy))
    }

    /// Enqueues the device's half: the maximum, the range, the candidates.
    fn find_candidates(&self, c: &mut Candidates<T>) -> Result<()> {
        if let Some((filter, _)) = &mut c.maximum {
            filter.launch()?;
        }
        for statistic in &mut c.range {
            statistic.launch()?;
        }
        c.clear.launch().output("list", &c.list).global(&[1]).local(&[1]).enqueue()?;
        let shape = self.image.shape();
        let [n0, n1, n2] = match shape {
            [a] => [1, 1, *a],
            [a, b] => [1, *a, *b],
            [a, b, c] => [*a, *b, *c],
            _ => return Err(Error::invalid(OP, format!("takes 1 to 3 axes; got shape {shape:?}"))),
        }
        .map(|n| n as u64);
        let widths = self.params.exclude_border.widths(self.params.min_distance, shape.len())?;
        let mut w = [0u64; 3];
        for (slot, width) in w.iter_mut().rev().zip(widths.iter().rev()) {
            *slot = *width as u64;
        }
        let as_t = |v: f64| T::from_c64(Complex64::new(v, 0.0));
        let n = self.image.len();
        let maximum = c.maximum.as_ref().map_or(&self.image, |(_, m)| m);
        let u64 = IndexType::U64;
        c.find
            .launch()
            .input("x", &self.image)
            .index("x_off", u64, self.image.offset() as u64)
            .input("m", maximum)
            .index("m_off", u64, maximum.offset() as u64)
            .input("lo", &c.low)
            .input("hi", &c.high)
            .output("list", &c.list)
            .index("n", u64, n as u64)
            .index("n0", u64, n0)
            .index("n1", u64, n1)
            .index("n2", u64, n2)
            .index("w0", u64, w[0])
            .index("w1", u64, w[1])
            .index("w2", u64, w[2])
            .scalar("single", i32::from(c.maximum.is_none()))
            .scalar("has_abs", i32::from(self.params.threshold_abs.is_some()))
            .scalar("abs_t", as_t(self.params.threshold_abs.unwrap_or(0.0)))
            .scalar("has_rel", i32::from(self.params.threshold_rel.is_some()))
            .scalar("rel_t", as_t(self.params.threshold_rel.unwrap_or(0.0)))
            .global(&[n.div_ceil(GROUP) * GROUP])
            .local(&[GROUP])
            .work((n * 2 * std::mem::size_of::<T>()) as u64, n as u64)
            .enqueue()
    }
}

/// The elements of a contiguous array in its buffer.
fn whole_region<T: RealElement>(x: &XData<T>) -> Region<'_> {
    Region { buffer: x.storage().buffer(), lo: x.offset(), hi: x.offset() + x.len() }
}

/// Work-items per group of the candidates' kernel.
const GROUP: usize = 64;

impl<T: RealElement> Process for PeakLocalMax<T> {
    fn name(&self) -> &str {
        "PeakLocalMax"
    }

    fn init(&mut self) -> Result<()> {
        let shape = self.image.shape().to_vec();
        self.params.check(&shape)?;
        if self.output.shape() != shape.as_slice() {
            return Err(Error::shape_because(OP, &shape, self.output.shape(), "the image's shape"));
        }
        if let Some(labels) = &self.labels
            && labels.shape() != shape.as_slice()
        {
            return Err(Error::shape_because(OP, &shape, labels.shape(), "the labels need the image's shape"));
        }
        let views = [Some(self.image.is_contiguous()), self.labels.as_ref().map(XData::is_contiguous)];
        if views.contains(&Some(false)) || !self.output.is_contiguous() {
            return Err(Error::invalid(OP, "takes contiguous arrays (copy a strided view first)"));
        }
        let footprint = self.params.window(shape.len())?;
        let plan = if self.labels.is_some() {
            Plan { candidates: None, strategy: PeakStrategy::Labelled }
        } else {
            let (candidates, strategy) = self.plan_candidates(footprint)?;
            Plan { candidates: Some(candidates), strategy }
        };
        self.plan.set(plan);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        // The plan is lent out while the host commands borrow the process (a missing plan stays missing).
        let mut prepared = std::mem::take(&mut self.plan);
        let plan = prepared.get("PeakLocalMax")?;
        let done = match (&mut plan.candidates, &self.labels) {
            (Some(candidates), _) => {
                self.find_candidates(candidates).and_then(|()| self.select_candidates(&candidates.list))
            }
            (None, Some(labels)) => self.select_in_labels(labels),
            (None, None) => Err(Error::NotInitialized { op: "PeakLocalMax".into() }),
        };
        self.plan = prepared;
        done
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// How [`PeakCoordinates`] lists the peaks.
///
/// ```
/// use cliper::{ClApp, CoordinatesStrategy, PeakCoordinates, Process, XData};
/// let app = ClApp::new()?;
/// let order = XData::from_slice(&app, &[3], &[0.0, 1.0, 0.0])?;
/// let table = XData::zeros(&app, &[1, 1])?;
/// let mut list = PeakCoordinates::new(&order, &table);
/// list.run()?;
/// assert_eq!((list.strategy(), table.to_vec()?), (Some(CoordinatesStrategy::HostListing), vec![1.0]));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoordinatesStrategy {
    /// A host command reads the marks in place and writes each peak's coordinates in the order they give.
    HostListing,
}

impl std::fmt::Display for CoordinatesStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the marked elements listed in their order on the host")
    }
}

/// The coordinate list of a [`PeakLocalMax`] result ([`PeakMark::Order`]): a `[peaks, ndim]` f64 table, a row per
/// peak in skimage's order (what `peak_local_max` returns). The number of peaks sizes the table: count them with
/// [`PeakCoordinates::count`] first.
///
/// ```
/// use cliper::{ClApp, PeakCoordinates, XData};
/// let app = ClApp::new()?;
/// let order = XData::from_slice(&app, &[2, 3], &[0.0, 2.0, 0.0, 1.0, 0.0, 0.0])?;
/// let table = XData::<f64>::zeros(&app, &[PeakCoordinates::count(&order)?, 2])?;
/// cliper::Process::run(&mut PeakCoordinates::new(&order, &table))?;
/// assert_eq!(table.to_vec()?, vec![1.0, 0.0, 0.0, 1.0]); // the peak marked 1 at (1, 0), then 2 at (0, 1)
/// assert_eq!(PeakCoordinates::apply(&order)?.to_vec()?, table.to_vec()?);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct PeakCoordinates {
    order: XData<f64>,
    table: XData<f64>,
    ready: Prepared<()>,
}

impl PeakCoordinates {
    /// Lists the peaks of `order` into `table`.
    pub fn new(order: &XData<f64>, table: &XData<f64>) -> PeakCoordinates {
        PeakCoordinates { order: order.clone(), table: table.clone(), ready: Prepared::default() }
    }

    /// Counts the peaks of `order` (waiting for it), allocates their table and lists them into it.
    pub fn apply(order: &XData<f64>) -> Result<XData<f64>> {
        let table = XData::zeros(order.app(), &Self::output_shape(order.shape(), Self::count(order)?))?;
        PeakCoordinates::new(order, &table).run()?;
        Ok(table)
    }

    /// What `init` planned; `None` before.
    pub fn strategy(&self) -> Option<CoordinatesStrategy> {
        self.ready.as_ref().map(|()| CoordinatesStrategy::HostListing)
    }

    /// The number of peaks `order` marks (read back from the device: it waits for the result).
    pub fn count(order: &XData<f64>) -> Result<usize> {
        Ok(order.to_vec()?.iter().filter(|&&v| v > 0.0).count())
    }

    /// The peaks' coordinates in order (read back from the device).
    pub fn list(order: &XData<f64>) -> Result<Vec<Vec<usize>>> {
        let grid = Grid::new(order.shape());
        Ok(ordered(&order.to_vec()?).into_iter().map(|i| grid.coordinates(i)).collect())
    }

    /// The table's shape for `count` peaks of an image of `shape`.
    pub fn output_shape(shape: &[usize], count: usize) -> Vec<usize> {
        vec![count, shape.len()]
    }
}

/// The marked elements' indices, by their mark.
fn ordered(order: &[f64]) -> Vec<usize> {
    let mut marked: Vec<(f64, usize)> =
        order.iter().enumerate().filter(|(_, v)| **v > 0.0).map(|(i, &v)| (v, i)).collect();
    marked.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    marked.into_iter().map(|(_, i)| i).collect()
}

impl Process for PeakCoordinates {
    fn name(&self) -> &str {
        "PeakCoordinates"
    }

    fn init(&mut self) -> Result<()> {
        let [rows, cols] = self.table.shape() else {
            return Err(Error::invalid(OP, format!("the table needs 2 axes, got shape {:?}", self.table.shape())));
        };
        if *cols != self.order.ndim() || !self.table.is_contiguous() || !self.order.is_contiguous() {
            return Err(Error::shape_because(
                OP,
                &[*rows, self.order.ndim()],
                self.table.shape(),
                "a contiguous row of coordinates per peak",
            ));
        }
        self.ready.set(());
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        self.ready.get("PeakCoordinates")?;
        let grid = Grid::new(self.order.shape());
        let reads = [Region {
            buffer: self.order.storage().buffer(),
            lo: self.order.offset(),
            hi: self.order.offset() + self.order.len(),
        }];
        let write = Region {
            buffer: self.table.storage().buffer(),
            lo: self.table.offset(),
            hi: self.table.offset() + self.table.len(),
        };
        let rows = self.table.shape().first().copied().unwrap_or(0);
        let mut mismatch = None;
        HostCommand::new::<f64, f64>("PeakCoordinates", "peak_table", &[&self.order], &[&self.table])?
            .work((self.order.len() * 8) as u64, 0)
            .run(|queue| {
                ffi::with_mapped::<f64, f64, ()>(queue, &reads, &write, |ins, table| {
                    let peaks = ins.first().map(|o| ordered(o)).unwrap_or_default();
                    if peaks.len() != rows {
                        mismatch = Some(peaks.len());
                        return;
                    }
                    for (row, i) in table.chunks_exact_mut(grid.shape().len().max(1)).zip(peaks) {
                        for (slot, c) in row.iter_mut().zip(grid.coordinates(i)) {
                            *slot = c as f64;
                        }
                    }
                })
                .map(|((), event)| event)
            })?;
        match mismatch {
            Some(found) => {
                let e = Error::invalid(OP, format!("the table has {rows} rows for {found} peaks"));
                self.table.storage().poison("PeakCoordinates", Arc::new(e.clone()));
                Err(e)
            }
            None => Ok(()),
        }
    }

    fn is_initialized(&self) -> bool {
        self.ready.is_ready()
    }
}
