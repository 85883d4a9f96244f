//! The host half of [`PeakLocalMax`](super::PeakLocalMax): scikit-image 0.26's exact rules for which candidates
//! become peaks and in which order (`skimage/feature/peak.py` and `ensure_spacing` in `skimage/_shared/coord.py`).
//! These steps are sequential by definition — a candidate is kept or not by the peaks kept before it, in the
//! order of a stable sort — so they run on the host, inside the process's host command: over the device's
//! candidates without labels, over the mapped image and labels with them (each label's box searched here).
//!
//! The image's values are compared in their own type (numpy's: a Python float threshold is cast to the image's
//! type, `threshold_rel · max` is computed in it), which the labelled search does by converting values that are
//! already of that type to f64 (exact) and thresholds rounded to it first.

use crate::error::{Error, Result};
use std::collections::{BTreeMap, HashMap};

/// An image's shape with its row-major strides: linear index ↔ coordinates.
#[derive(Clone, Debug)]
pub(crate) struct Grid {
    shape: Vec<usize>,
    strides: Vec<usize>,
}

impl Grid {
    pub(crate) fn new(shape: &[usize]) -> Grid {
        let mut strides = vec![1; shape.len()];
        for k in (0..shape.len().saturating_sub(1)).rev() {
            let next = strides.get(k + 1).copied().unwrap_or(1) * shape.get(k + 1).copied().unwrap_or(1);
            if let Some(s) = strides.get_mut(k) {
                *s = next;
            }
        }
        Grid { shape: shape.to_vec(), strides }
    }

    pub(crate) fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub(crate) fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The coordinates of linear index `i`.
    pub(crate) fn coordinates(&self, i: usize) -> Vec<usize> {
        self.shape.iter().zip(&self.strides).map(|(&n, &s)| (i / s) % n.max(1)).collect()
    }

    fn index(&self, coordinates: &[usize]) -> usize {
        coordinates.iter().zip(&self.strides).map(|(c, s)| c * s).sum()
    }

    /// Whether `i` lies within `border[k]` elements of either end of some axis k (skimage's `_exclude_border`).
    fn in_border(&self, i: usize, border: &[usize]) -> bool {
        self.shape.iter().zip(&self.strides).zip(border).any(|((&n, &s), &w)| {
            let c = (i / s) % n.max(1);
            w > 0 && (c < w || c + w >= n)
        })
    }
}

/// ensure_spacing's distance rule: two peaks are too close when scipy's cKDTree finds one within `spacing` of
/// the other (Σ|d|^p ≤ spacing^p, or the largest |d| ≤ spacing for p = ∞) and scipy's `cdist` Minkowski distance
/// ((Σ|d|^p)^(1/p), in float64 as scipy computes it) is below `spacing`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spacing {
    pub(crate) spacing: usize,
    pub(crate) p: f64,
}

impl Spacing {
    fn too_close(&self, a: &[usize], b: &[usize]) -> bool {
        let s = self.spacing as f64;
        let d = || a.iter().zip(b).map(|(&x, &y)| x.abs_diff(y) as f64);
        if self.p == f64::INFINITY {
            return d().fold(0.0, f64::max) < s;
        }
        if self.p == 1.0 {
            return d().sum::<f64>() < s;
        }
        if self.p == 2.0 {
            let squares: f64 = d().map(|v| v * v).sum();
            return squares <= s * s && squares.sqrt() < s;
        }
        let powers: f64 = d().map(|v| v.powf(self.p)).sum();
        powers <= s.powf(self.p) && powers.powf(1.0 / self.p) < s
    }
}

/// skimage's `ensure_spacing`: `sorted` (linear indices, highest first) kept greedily — a candidate stays unless a
/// candidate kept before it is too close — up to `max_out` kept. A grid of cells `spacing` wide finds the kept
/// peaks near a candidate (each axis's |d| < spacing for every p ≥ 1, so only the neighbouring cells can hold one).
pub(crate) fn ensure_spacing(grid: &Grid, sorted: &[usize], rule: Spacing, max_out: Option<usize>) -> Vec<usize> {
    let cell_width = rule.spacing.max(1);
    let cells: Vec<usize> = grid.shape().iter().map(|n| n / cell_width + 1).collect();
    let mut kept_in: HashMap<usize, Vec<(usize, Vec<usize>)>> = HashMap::new();
    let mut kept = Vec::new();
    for &i in sorted {
        if max_out.is_some_and(|m| kept.len() >= m) {
            break;
        }
        let at = grid.coordinates(i);
        let cell: Vec<usize> = at.iter().map(|c| c / cell_width).collect();
        let close = neighbour_cells(&cell, &cells).any(|key| {
            kept_in.get(&key).is_some_and(|peaks| peaks.iter().any(|(_, other)| rule.too_close(&at, other)))
        });
        if !close {
            kept_in.entry(cell_key(&cell, &cells)).or_default().push((i, at));
            kept.push(i);
        }
    }
    kept
}

fn cell_key(cell: &[usize], cells: &[usize]) -> usize {
    cell.iter().zip(cells).fold(0, |key, (&c, &n)| key * n + c)
}

/// The keys of the cells within one step of `cell` along every axis (itself included).
fn neighbour_cells<'a>(cell: &'a [usize], cells: &'a [usize]) -> impl Iterator<Item = usize> + 'a {
    let count = 3usize.pow(cell.len() as u32);
    (0..count).filter_map(move |mut code| {
        let mut key = 0;
        for (&c, &n) in cell.iter().zip(cells) {
            let step = code % 3;
            code /= 3;
            let moved = (c + step).checked_sub(1).filter(|&m| m < n)?;
            key = key * n + moved;
        }
        Some(key)
    })
}

/// The candidates in skimage's order: `np.argsort(-intensities, kind="stable")` over their C order — highest
/// first, ties by position (whatever order they come in). `value` gives each one's intensity (never NaN: a NaN is
/// no candidate).
fn highest_first(candidates: &mut [usize], value: impl Fn(usize) -> f64) {
    candidates.sort_by(|&a, &b| value(b).total_cmp(&value(a)).then(a.cmp(&b)));
}

/// `_get_high_intensity_peaks`: the candidates sorted, spaced when `min_distance > 1`, at most `num_peaks`.
fn high_intensity_peaks(
    grid: &Grid,
    mut candidates: Vec<usize>,
    value: impl Fn(usize) -> f64,
    num_peaks: Option<usize>,
    spacing: Spacing,
) -> Vec<usize> {
    highest_first(&mut candidates, value);
    let mut peaks =
        if spacing.spacing > 1 { ensure_spacing(grid, &candidates, spacing, num_peaks) } else { candidates };
    if let Some(n) = num_peaks {
        peaks.truncate(n);
    }
    peaks
}

/// What decides peaks, besides the image.
#[derive(Clone, Debug)]
pub(crate) struct Rules {
    /// skimage's border widths per axis.
    pub(crate) border: Vec<usize>,
    /// The footprint's taps as offsets from its centre (`size // 2`, scipy's origin 0), and whether it is one
    /// element (then a peak is any value above the threshold).
    pub(crate) taps: Vec<Vec<isize>>,
    pub(crate) single: bool,
    pub(crate) spacing: Spacing,
    pub(crate) num_peaks: Option<usize>,
    pub(crate) num_peaks_per_label: Option<usize>,
}

/// The peaks of an image without labels from its candidates — `(index, value)` of the elements that are their
/// window's maximum, above the threshold and outside the border, in any order (the device's) — and whether the
/// image is flat (every element its window's maximum; skimage then finds none, unless the window is one element):
/// `_get_high_intensity_peaks`.
pub(crate) fn unlabelled_peaks(grid: &Grid, candidates: Vec<(usize, f64)>, flat: bool, rules: &Rules) -> Vec<usize> {
    if flat && !(rules.single || grid.len() == 1) {
        return Vec::new();
    }
    let values: HashMap<usize, f64> = candidates.iter().copied().collect();
    let indices = candidates.into_iter().map(|(i, _)| i).collect();
    high_intensity_peaks(grid, indices, |i| values.get(&i).copied().unwrap_or(f64::NAN), rules.num_peaks, rules.spacing)
}

/// The box of a label's elements: first and last coordinate per axis.
#[derive(Clone, Debug)]
struct Region {
    lo: Vec<usize>,
    hi: Vec<usize>,
}

/// The peaks of an image within labels: skimage's loop over `find_objects` of the labels with their border set to
/// 0, each region's box cropped, the elements of other labels set to the type's lowest value, its own peaks found
/// in the crop (the maximum filter clamped to the crop, scipy's `nearest`), at most `num_peaks_per_label` each;
/// then, when more than `num_peaks` in all, the highest of them again with spacing across labels.
///
/// `threshold` is skimage's, rounded to the image's type (`image > threshold` keeps a candidate); `lowest` is
/// `np.finfo(dtype).min`. A threshold below it would make elements of other labels peaks (skimage
/// then returns some twice); that, NaN values and labels that are not whole numbers ≥ 0 are refused.
pub(crate) fn labelled_peaks(
    grid: &Grid,
    value: impl Fn(usize) -> f64,
    label: impl Fn(usize) -> f64,
    lowest: f64,
    threshold: f64,
    rules: &Rules,
) -> Result<Vec<usize>> {
    let op = "peak_local_max";
    if threshold < lowest {
        return Err(Error::invalid(
            op,
            format!(
                "with labels, a threshold of {} (below the type's lowest value {lowest:e}, as an image holding \
                 -inf gives) would make other labels' elements peaks: set threshold_abs",
                threshold
            ),
        ));
    }
    let regions = regions(grid, &label, &rules.border)?;
    if threshold.is_nan() {
        // `image > NaN` holds nowhere (an image holding NaN has a NaN minimum, the default threshold).
        return Ok(Vec::new());
    }
    let mut peaks = Vec::new();
    for (&id, region) in &regions {
        let crop = Crop { grid, region, id, label: &label, value: &value, lowest };
        let candidates = crop.candidates(threshold, rules)?;
        peaks.extend(high_intensity_peaks(grid, candidates, &value, rules.num_peaks_per_label, rules.spacing));
    }
    match rules.num_peaks {
        Some(n) if peaks.len() > n => {
            peaks.sort_unstable();
            peaks.dedup();
            Ok(high_intensity_peaks(grid, peaks, &value, Some(n), rules.spacing))
        }
        _ => Ok(peaks),
    }
}

/// `find_objects` of the labels with the border set to 0: the box of every label above 0, by label.
fn regions(grid: &Grid, label: &impl Fn(usize) -> f64, border: &[usize]) -> Result<BTreeMap<u64, Region>> {
    let mut regions: BTreeMap<u64, Region> = BTreeMap::new();
    for i in 0..grid.len() {
        let l = label(i);
        if !(l >= 0.0 && l.fract() == 0.0) {
            return Err(Error::invalid(
                "peak_local_max",
                format!("the labels hold {l}: labels are whole numbers ≥ 0 (0 is the background)"),
            ));
        }
        if l == 0.0 || grid.in_border(i, border) {
            continue;
        }
        let at = grid.coordinates(i);
        let region = regions.entry(l as u64).or_insert_with(|| Region { lo: at.clone(), hi: at.clone() });
        for ((lo, hi), &c) in region.lo.iter_mut().zip(region.hi.iter_mut()).zip(&at) {
            *lo = (*lo).min(c);
            *hi = (*hi).max(c);
        }
    }
    Ok(regions)
}

/// One label's box: the image there with other labels' elements at `lowest` (skimage's `img_object`).
struct Crop<'a, V, L> {
    grid: &'a Grid,
    region: &'a Region,
    id: u64,
    label: &'a L,
    value: &'a V,
    lowest: f64,
}

impl<V: Fn(usize) -> f64, L: Fn(usize) -> f64> Crop<'_, V, L> {
    fn inside(&self, i: usize) -> bool {
        (self.label)(i) == self.id as f64
    }

    fn masked(&self, i: usize) -> f64 {
        if self.inside(i) { (self.value)(i) } else { self.lowest }
    }

    /// The label's elements, in C order.
    fn elements(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let extent: Vec<usize> = self.region.lo.iter().zip(&self.region.hi).map(|(lo, hi)| hi - lo + 1).collect();
        let within = Grid::new(&extent);
        for k in 0..within.len() {
            let at: Vec<usize> = within.coordinates(k).iter().zip(&self.region.lo).map(|(c, lo)| c + lo).collect();
            let i = self.grid.index(&at);
            if self.inside(i) {
                out.push(i);
            }
        }
        out
    }

    /// The element at coordinates `at` moved by `offset`, clamped to the box (scipy's `nearest` on the crop).
    fn clamped(&self, at: &[usize], offset: &[isize]) -> usize {
        let box_axes = self.region.lo.iter().zip(&self.region.hi);
        at.iter()
            .zip(offset)
            .zip(box_axes)
            .zip(&self.grid.strides)
            .map(|(((&c, &o), (&lo, &hi)), &stride)| (c as isize + o).clamp(lo as isize, hi as isize) as usize * stride)
            .sum()
    }

    /// Whether the element at `i` equals the maximum over the footprint in the crop (`image == image_max`).
    fn is_maximum(&self, i: usize, taps: &[Vec<isize>]) -> bool {
        let here = self.masked(i);
        let at = self.grid.coordinates(i);
        let mut most = f64::NEG_INFINITY;
        for tap in taps {
            let v = self.masked(self.clamped(&at, tap));
            if v > here {
                return false;
            }
            most = most.max(v);
        }
        here == most
    }

    /// The element at `i` is in the label but not in its binary opening (scipy's default cross, the crop's outside
    /// 0): skimage's "isolated pixels" of a flat region.
    fn isolated(&self, i: usize) -> bool {
        let ndim = self.grid.shape().len();
        let cross: Vec<Vec<isize>> = std::iter::once(vec![0; ndim])
            .chain((0..ndim).flat_map(|k| {
                [-1isize, 1].map(|s| (0..ndim).map(|j| if j == k { s } else { 0 }).collect::<Vec<isize>>())
            }))
            .collect();
        let moved = |i: usize, offset: &[isize]| -> Option<usize> {
            let at: Option<Vec<usize>> = self
                .grid
                .coordinates(i)
                .iter()
                .zip(offset)
                .zip(self.region.lo.iter().zip(&self.region.hi))
                .map(|((&c, &o), (&lo, &hi))| {
                    let m = c as isize + o;
                    (m >= lo as isize && m <= hi as isize).then_some(m as usize)
                })
                .collect();
            at.map(|at| self.grid.index(&at))
        };
        let eroded = |j: usize| cross.iter().all(|o| moved(j, o).is_some_and(|k| self.inside(k)));
        !cross.iter().any(|o| moved(i, o).is_some_and(eroded))
    }

    /// `_get_peak_mask` on the crop: the label's elements that are their window's maximum and above the threshold
    /// (or, when every element of the label is, its isolated elements above it), in C order.
    fn candidates(&self, threshold: f64, rules: &Rules) -> Result<Vec<usize>> {
        let elements = self.elements();
        if let Some(&i) = elements.iter().find(|&&i| (self.value)(i).is_nan()) {
            return Err(Error::invalid(
                "peak_local_max",
                format!(
                    "label {} holds NaN (at {:?}): scipy's maximum filter decides NaN windows by its own order, \
                     which the labelled search does not repeat",
                    self.id,
                    self.grid.coordinates(i)
                ),
            ));
        }
        let single = rules.single || self.region.lo == self.region.hi;
        let above = |i: &usize| self.masked(*i) > threshold;
        if single {
            return Ok(elements.into_iter().filter(above).collect());
        }
        let maxima: Vec<bool> = elements.iter().map(|&i| self.is_maximum(i, &rules.taps)).collect();
        if maxima.iter().all(|&m| m) {
            return Ok(elements.into_iter().filter(|&i| self.isolated(i)).filter(above).collect());
        }
        Ok(elements.into_iter().zip(maxima).filter(|(_, m)| *m).map(|(i, _)| i).filter(above).collect())
    }
}
