//! [`ChamferDistance`]: scipy.ndimage.distance_transform_cdt — the chamfer distance from every non-zero element to
//! the nearest zero element over the steps a 3 × … × 3 structure allows (`chessboard`: every neighbour, the
//! L∞ distance; `taxicab`: the faces, the L1 distance; or any structure), or the index of that zero element.
//!
//! scipy computes it by two raster passes (`NI_DistanceTransformOnePass`): forward in C order over the structure's
//! first half, then over the array reversed. Each element's value depends on the ones the same pass has just
//! written, so the passes are sequential; they run on the host, in the mapped device buffers, as one
//! [`HostCommand`] in the queue's order, one batch item per core — which also keeps scipy's choice among equally
//! near zeros (the first structure neighbour in its order, the forward pass's unless the backward one is strictly
//! nearer), on which the indices depend.

use crate::app::ffi::{self, Region};
use crate::data::{HostCommand, XData};
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::process::rank::Footprint;
use crate::process::{Prepared, Process};
use num_complex::Complex64;
use rayon::prelude::*;

/// The settings of a [`ChamferDistance`]: the structure (its axes are the last ones of the input: 3 per axis) and
/// whether the result is the distances or the indices of the nearest zero elements.
///
/// ```
/// use cliper::{ChamferParams, Footprint};
/// let p = ChamferParams::taxicab(2)?;
/// assert_eq!(p.structure, Footprint::binary_structure(2, 1)?);
/// assert!(ChamferParams::chessboard(3)?.indices(true).indices);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ChamferParams {
    /// The steps: a 3^rank box, non-zero = a neighbour one step away (its centre is ignored).
    pub structure: Footprint,
    /// The result is the index of each element's nearest zero element (a leading axis of one component per axis
    /// of the input, whole numbers), not the distance.
    pub indices: bool,
}

impl ChamferParams {
    /// Every neighbour one step away (scipy's default metric `chessboard`): the L∞ distance.
    pub fn chessboard(rank: usize) -> Result<ChamferParams> {
        Ok(ChamferParams { structure: Footprint::binary_structure(rank, rank)?, indices: false })
    }
    /// The face neighbours one step away (scipy's `taxicab`, `cityblock`, `manhattan`): the L1 distance.
    pub fn taxicab(rank: usize) -> Result<ChamferParams> {
        Ok(ChamferParams { structure: Footprint::binary_structure(rank, 1)?, indices: false })
    }
    /// The steps of `structure` (scipy's `metric` array: 3 along every axis).
    pub fn structure(structure: Footprint) -> ChamferParams {
        ChamferParams { structure, indices: false }
    }
    /// Sets whether the result is the indices of the nearest zero elements instead of the distances.
    pub fn indices(mut self, indices: bool) -> ChamferParams {
        self.indices = indices;
        self
    }

    /// The structure's rank, checked against an input of `ndim` axes.
    fn rank(&self, ndim: usize) -> Result<usize> {
        let shape = self.structure.shape();
        if shape.iter().any(|&n| n != 3) {
            return Err(Error::invalid(
                "distance_transform_cdt",
                format!("a structure (metric) must be 3 along every axis, not {shape:?}"),
            ));
        }
        if shape.len() > ndim {
            return Err(Error::invalid(
                "distance_transform_cdt",
                format!("a structure of {} axes does not fit an input of {ndim}", shape.len()),
            ));
        }
        Ok(shape.len())
    }

    /// The steps of the structure's first half (before its centre, in C order) as offsets per axis, in order.
    fn first_half(&self) -> Vec<Vec<isize>> {
        let shape = self.structure.shape();
        let half = self.structure.mask().len() / 2;
        self.structure
            .mask()
            .iter()
            .take(half)
            .enumerate()
            .filter(|&(_, &on)| on)
            .map(|(s, _)| coordinates(s, shape).iter().map(|&c| c as isize - 1).collect())
            .collect()
    }
}

/// What a [`ChamferDistance`] runs.
///
/// ```
/// use cliper::{ChamferDistance, ChamferParams, ClApp, Process, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[5, 6])?;
/// let mut p = ChamferDistance::new(&x, &XData::zeros(&app, &[5, 6])?, ChamferParams::taxicab(2)?);
/// p.init()?;
/// assert_eq!(p.strategy().unwrap().steps, 2);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChamferStrategy {
    /// The structure's steps each pass looks at (its first half).
    pub steps: usize,
}

impl std::fmt::Display for ChamferStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "two raster passes on the host over {} structure step(s), one batch item per core", self.steps)
    }
}

/// The chamfer distance transform of real data (scipy.ndimage.distance_transform_cdt): each non-zero element
/// gets the fewest structure steps to a zero element (whole numbers), zero elements 0, and elements no zero
/// can be reached from -1 (every element of an input without a zero) — scipy's int32 values, held here in the
/// input's type. The structure spans the input's last axes; the axes before are a batch, each item alone.
///
/// With [`ChamferParams::indices`] the result is scipy's `return_indices`: shape `[ndim, ...shape]`, component
/// `a` of element `i` the coordinate along axis `a` of the zero element nearest to `i` (the element's own where
/// none can be reached, and on the batch axes), scipy's choice on ties.
///
/// Sequential passes on the host (see the module): for chessboard and taxicab, the exact L∞ and L1 distances.
///
/// ```
/// use cliper::{ChamferDistance, ChamferParams, ClApp, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 3], &[0.0f64, 1.0, 1.0, 1.0, 1.0, 1.0])?;
/// let d = ChamferDistance::apply(&x, ChamferParams::taxicab(2)?)?.to_vec()?;
/// assert_eq!(d, vec![0.0, 1.0, 2.0, 1.0, 2.0, 3.0]);
/// let d = ChamferDistance::apply(&x, ChamferParams::chessboard(2)?)?.to_vec()?;
/// assert_eq!(d, vec![0.0, 1.0, 2.0, 1.0, 1.0, 2.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct ChamferDistance<T: RealElement> {
    input: XData<T>,
    output: XData<T>,
    params: ChamferParams,
    plan: Prepared<Plan>,
}

/// The item layout and the structure's first-half steps.
struct Plan {
    /// The spanned axes' extents (the structure's rank of them).
    spanned: Vec<usize>,
    /// The batch axes' extents.
    batch: Vec<usize>,
    offsets: Vec<Vec<isize>>,
}

impl<T: RealElement> ChamferDistance<T> {
    /// `output = distance_transform_cdt(input)`.
    pub fn new(input: &XData<T>, output: &XData<T>, params: ChamferParams) -> ChamferDistance<T> {
        ChamferDistance { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, runs once and returns it.
    pub fn apply(input: &XData<T>, params: ChamferParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), "ChamferDistance", &Self::output_shape(input.shape(), &params)?)?;
        ChamferDistance::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the input's (after checking the structure against it), or with `indices` a leading axis
    /// of one component per axis before it.
    ///
    /// ```
    /// use cliper::{ChamferDistance, ChamferParams};
    /// assert_eq!(ChamferDistance::<f32>::output_shape(&[4, 5], &ChamferParams::taxicab(2)?)?, vec![4, 5]);
    /// let indices = ChamferParams::chessboard(2)?.indices(true);
    /// assert_eq!(ChamferDistance::<f32>::output_shape(&[4, 5], &indices)?, vec![2, 4, 5]);
    /// assert!(ChamferDistance::<f32>::output_shape(&[5], &ChamferParams::taxicab(2)?).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], params: &ChamferParams) -> Result<Vec<usize>> {
        params.rank(input.len())?;
        let count: usize = input.iter().product();
        // Whole numbers up to the element count (distances, positions) must be exact in T.
        let most = if std::mem::size_of::<T>() == 4 { 1usize << 24 } else { i32::MAX as usize };
        if count > most {
            return Err(Error::Unsupported {
                what: format!(
                    "distance_transform_cdt of shape {input:?} in {}: at most {most} elements (scipy's int32 \
                     positions{})",
                    T::NAME,
                    if most < i32::MAX as usize { ", exact in float32 to 2^24; use float64" } else { "" }
                ),
            });
        }
        Ok(if params.indices { [&[input.len()], input].concat() } else { input.to_vec() })
    }

    /// What `init` planned; `None` before.
    pub fn strategy(&self) -> Option<ChamferStrategy> {
        self.plan.as_ref().map(|p| ChamferStrategy { steps: p.offsets.len() })
    }
}

impl<T: RealElement> Process for ChamferDistance<T> {
    fn name(&self) -> &str {
        "distance_transform_cdt"
    }

    fn init(&mut self) -> Result<()> {
        let shape = self.input.shape().to_vec();
        let expected = Self::output_shape(&shape, &self.params)?;
        if self.output.shape() != expected.as_slice() {
            return Err(Error::shape_because(self.name(), &expected, self.output.shape(), "the input's shape"));
        }
        for (what, a) in [("input", &self.input), ("output", &self.output)] {
            if !a.is_contiguous() {
                return Err(Error::Unsupported {
                    what: format!(
                        "{} of an {what} view of shape {:?} and strides {:?}; make it contiguous first",
                        self.name(),
                        a.shape(),
                        a.strides()
                    ),
                });
            }
        }
        if !self.input.app().same_as(self.output.app()) {
            return Err(Error::invalid(self.name(), "the input and output belong to different ClApps"));
        }
        let rank = self.params.rank(shape.len())?;
        let (batch, spanned) = shape.split_at(shape.len() - rank);
        self.plan.set(Plan { spanned: spanned.to_vec(), batch: batch.to_vec(), offsets: self.params.first_half() });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let indices = self.params.indices;
        let plan = self.plan.get("ChamferDistance")?;
        let per_item: usize = plan.spanned.iter().product();
        let items: usize = plan.batch.iter().product();
        let count = per_item * items;
        let out_len = if indices { count * (plan.batch.len() + plan.spanned.len()) } else { count };
        let (input, output) = (&self.input, &self.output);
        let reads = [Region { buffer: input.storage().buffer(), lo: input.offset(), hi: input.offset() + count }];
        let write = Region { buffer: output.storage().buffer(), lo: output.offset(), hi: output.offset() + out_len };
        let taps = plan.offsets.len() as u64;
        HostCommand::new::<T, T>("ChamferDistance", "chamfer_passes", &[input], &[output])?
            .work((count * 2 * std::mem::size_of::<T>()) as u64, 2 * taps * count as u64)
            .run(|queue| {
                ffi::with_mapped::<T, T, ()>(queue, &reads, &write, |read, out| {
                    let values = read.first().copied().unwrap_or_default();
                    let results: Vec<Item> = values
                        .par_chunks(per_item.max(1))
                        .map(|item| chamfer_item(item, &plan.spanned, &plan.offsets))
                        .collect();
                    if indices {
                        write_indices(&results, &plan.batch, &plan.spanned, out);
                    } else {
                        write_distances(&results, out);
                    }
                })
                .map(|((), event)| event)
            })
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// One batch item's distances (scipy's int32, -1 unreached) and features (the nearest zero's position in the item).
struct Item {
    distances: Vec<i32>,
    features: Vec<u32>,
}

/// scipy's chamfer of one item: zeros 0 and others -1, each element its own feature, then the forward and the
/// backward raster pass.
fn chamfer_item<T: RealElement>(values: &[T], shape: &[usize], offsets: &[Vec<isize>]) -> Item {
    let mut item = Item {
        distances: values.iter().map(|v| if v.to_c64().re == 0.0 { 0 } else { -1 }).collect(),
        features: (0..values.len() as u32).collect(),
    };
    raster_pass(&mut item, shape, offsets, true);
    raster_pass(&mut item, shape, offsets, false);
    item
}

/// One raster pass (scipy's `NI_DistanceTransformOnePass`): every element not a zero takes one more than the
/// smallest distance among its reached structure neighbours already visited — the first in the structure's order
/// on ties, and only if strictly nearer than what it holds — and that neighbour's feature. Forward walks in C
/// order with the first half's steps; backward walks in reverse with the steps negated (scipy reverses the array
/// and runs the same pass).
fn raster_pass(item: &mut Item, shape: &[usize], offsets: &[Vec<isize>], forward: bool) {
    let n = item.distances.len();
    let strides = c_strides(shape);
    let sign = if forward { 1 } else { -1 };
    // Each step as its move in the flattened item (signed for the direction), with its move per axis.
    let steps: Vec<(isize, &[isize])> = offsets
        .iter()
        .map(|o| (sign * o.iter().zip(&strides).map(|(&d, &s)| d * s as isize).sum::<isize>(), o.as_slice()))
        .collect();
    // The coordinates of the element visited, kept by counting (no division per element).
    let mut here: Vec<usize> =
        if forward { vec![0; shape.len()] } else { shape.iter().map(|&e| e.saturating_sub(1)).collect() };
    for visit in 0..n {
        let i = if forward { visit } else { n - 1 - visit };
        let value = item.distances.get(i).copied().unwrap_or(0);
        if value != 0 {
            let (mut best, mut from) = (value, None);
            for &(flat, offset) in &steps {
                let inside = here
                    .iter()
                    .zip(offset)
                    .zip(shape)
                    .all(|((&c, &o), &e)| c.checked_add_signed(sign * o).is_some_and(|m| m < e));
                let Some(j) = i.checked_add_signed(flat).filter(|_| inside) else { continue };
                let reached = item.distances.get(j).copied().unwrap_or(-1);
                if reached >= 0 && (best < 0 || reached + 1 < best) {
                    best = reached + 1;
                    from = Some(j);
                }
            }
            if let Some(d) = item.distances.get_mut(i) {
                *d = best;
            }
            if let Some(feature) = from.and_then(|j| item.features.get(j).copied())
                && let Some(slot) = item.features.get_mut(i)
            {
                *slot = feature;
            }
        }
        step_coordinates(&mut here, shape, forward);
    }
}

/// The next element's coordinates in C order (`forward`) or the previous one's, as an odometer.
fn step_coordinates(here: &mut [usize], shape: &[usize], forward: bool) {
    for (c, &e) in here.iter_mut().zip(shape).rev() {
        if forward {
            if *c + 1 < e {
                *c += 1;
                return;
            }
            *c = 0;
        } else {
            if *c > 0 {
                *c -= 1;
                return;
            }
            *c = e.saturating_sub(1);
        }
    }
}

/// Each axis's C-order stride in `shape`.
fn c_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for a in (0..shape.len().saturating_sub(1)).rev() {
        let next = strides.get(a + 1).copied().unwrap_or(1) * shape.get(a + 1).copied().unwrap_or(1);
        if let Some(s) = strides.get_mut(a) {
            *s = next;
        }
    }
    strides
}

/// The coordinates of position `flat` (C order) in `shape`.
fn coordinates(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for (slot, &n) in c.iter_mut().zip(shape).rev() {
        *slot = flat % n.max(1);
        flat /= n.max(1);
    }
    c
}

fn whole<T: RealElement>(v: i64) -> T {
    T::from_c64(Complex64::new(v as f64, 0.0))
}

/// The items' distances, one after the other.
fn write_distances<T: RealElement>(items: &[Item], out: &mut [T]) {
    for (slot, &d) in out.iter_mut().zip(items.iter().flat_map(|item| &item.distances)) {
        *slot = whole(i64::from(d));
    }
}

/// The index array: component `a` of every element, for each axis in turn — the item's own coordinate on a batch
/// axis, the feature's on a spanned one.
fn write_indices<T: RealElement>(items: &[Item], batch: &[usize], spanned: &[usize], out: &mut [T]) {
    let per_item: usize = spanned.iter().product();
    let count = per_item * items.len();
    let mut components = out.chunks_mut(count.max(1));
    for a in 0..batch.len() {
        let Some(component) = components.next() else { return };
        for (k, chunk) in component.chunks_mut(per_item.max(1)).enumerate() {
            let own = coordinates(k, batch).get(a).copied().unwrap_or(0);
            chunk.fill(whole(own as i64));
        }
    }
    for a in 0..spanned.len() {
        let Some(component) = components.next() else { return };
        for (item, chunk) in items.iter().zip(component.chunks_mut(per_item.max(1))) {
            for (slot, &f) in chunk.iter_mut().zip(&item.features) {
                *slot = whole(coordinates(f as usize, spanned).get(a).copied().unwrap_or(0) as i64);
            }
        }
    }
}
