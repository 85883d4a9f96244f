//! The host-side geometry the segment family's floods share: a grid padded on every side, its elements' flat
//! indices, the raveled offsets of a footprint's taps in scikit-image's order, and scipy's integer connectivity as
//! a footprint.

use crate::error::{Error, Result};
use crate::process::rank::Footprint;

/// The footprint `generate_binary_structure(rank, connectivity)` makes: the taps at most `connectivity` orthogonal
/// steps from the centre of a 3×…×3 box. As scipy, a connectivity below 1 counts as 1 and one above `rank` as
/// `rank` (every tap).
pub(super) fn binary_structure(rank: usize, connectivity: i64) -> Result<Footprint> {
    let steps = connectivity.clamp(1, rank.max(1) as i64) as usize;
    Footprint::binary_structure(rank, steps)
}

/// A grid of shape `inner` with `pad` elements before and after it along every axis, raveled in C order: the floods
/// run on it so that a neighbour offset never leaves the buffer (the padding is never flooded).
pub(super) struct PaddedGrid {
    inner: Vec<usize>,
    pad: Vec<usize>,
    shape: Vec<usize>,
    strides: Vec<usize>,
}

impl PaddedGrid {
    /// The grid of `inner` padded by `pad[axis]` on both sides of each axis.
    pub(super) fn new(inner: &[usize], pad: &[usize]) -> PaddedGrid {
        let shape: Vec<usize> = inner.iter().zip(pad).map(|(n, p)| n + 2 * p).collect();
        let mut strides = vec![1; shape.len()];
        for axis in (0..shape.len().saturating_sub(1)).rev() {
            let next = strides.get(axis + 1).copied().unwrap_or(1) * shape.get(axis + 1).copied().unwrap_or(1);
            if let Some(stride) = strides.get_mut(axis) {
                *stride = next;
            }
        }
        PaddedGrid { inner: inner.to_vec(), pad: pad.to_vec(), shape, strides }
    }

    /// The padded shape.
    pub(super) fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The padded grid's strides, in elements.
    pub(super) fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// Elements of the padded grid.
    pub(super) fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// The padded flat index of every element of the inner grid, in C order.
    pub(super) fn inner_indices(&self) -> Vec<usize> {
        let count: usize = self.inner.iter().product();
        let mut indices = Vec::with_capacity(count);
        if count == 0 {
            return indices;
        }
        let base: usize = self.pad.iter().zip(&self.strides).map(|(p, s)| p * s).sum();
        let mut coordinate = vec![0usize; self.inner.len()];
        let mut flat = base;
        for _ in 0..count {
            indices.push(flat);
            // The odometer: the last axis steps first; an axis that wraps steps the one before it.
            for axis in (0..self.inner.len()).rev() {
                let (Some(c), Some(&n), Some(&s)) =
                    (coordinate.get_mut(axis), self.inner.get(axis), self.strides.get(axis))
                else {
                    break;
                };
                *c += 1;
                flat += s;
                if *c < n {
                    break;
                }
                *c = 0;
                flat -= n * s;
            }
        }
        indices
    }

    /// `values` (C order over the inner grid) placed in a padded buffer filled with `fill`.
    pub(super) fn padded<V: Copy>(&self, values: impl IntoIterator<Item = V>, fill: V, indices: &[usize]) -> Vec<V> {
        let mut out = vec![fill; self.len()];
        for (value, &at) in values.into_iter().zip(indices) {
            if let Some(slot) = out.get_mut(at) {
                *slot = value;
            }
        }
        out
    }
}

/// The flat offsets, in a C-ordered grid of shape `grid`, from `centre` to every tap of `footprint`, as
/// scikit-image's `_offsets_to_raveled_neighbors` orders them: the taps in C order, sorted (stably) by their
/// Euclidean distance from the centre, repeated offsets dropped when an axis of the grid is shorter than the
/// footprint's, and the first — the centre itself, for a footprint that holds it — left out.
pub(super) fn raveled_neighbours(grid: &[usize], footprint: &Footprint, centre: &[usize]) -> Vec<isize> {
    let shape = footprint.shape();
    let mut ravel = vec![1isize; grid.len()];
    for axis in (0..grid.len().saturating_sub(1)).rev() {
        let next = ravel.get(axis + 1).copied().unwrap_or(1) * grid.get(axis + 1).map_or(1, |&n| n as isize);
        if let Some(r) = ravel.get_mut(axis) {
            *r = next;
        }
    }
    let mut taps: Vec<(f64, isize)> = Vec::new();
    for (flat, _) in footprint.mask().iter().enumerate().filter(|(_, on)| **on) {
        let mut rest = flat;
        let mut offset = 0isize;
        let mut squares = 0.0f64;
        for axis in (0..shape.len()).rev() {
            let n = shape.get(axis).copied().unwrap_or(1).max(1);
            let step = (rest % n) as isize - centre.get(axis).map_or(0, |&c| c as isize);
            rest /= n;
            offset += step * ravel.get(axis).copied().unwrap_or(0);
            squares += (step * step) as f64;
        }
        taps.push((squares.sqrt(), offset));
    }
    taps.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut offsets: Vec<isize> = taps.into_iter().map(|(_, offset)| offset).collect();
    if grid.iter().zip(shape).any(|(g, f)| g < f) {
        let mut seen = std::collections::HashSet::new();
        offsets.retain(|o| seen.insert(*o));
    }
    offsets.into_iter().skip(1).collect()
}

/// The refusal of a footprint whose rank is not the image's, or whose `offset` (its centre) lies outside it or
/// leaves taps farther on one side than the other (the padding of that width would not hold them).
pub(super) fn check_centre(op: &str, footprint: &Footprint, offset: &[usize], shape: &[usize]) -> Result<()> {
    let fs = footprint.shape();
    if fs.len() != shape.len() {
        return Err(Error::invalid(
            op,
            format!("connectivity of shape {fs:?} for an image of shape {shape:?}: the ranks differ"),
        ));
    }
    if offset.len() != fs.len() || offset.iter().zip(fs).any(|(&o, &n)| o >= n || n - 1 - o > o) {
        return Err(Error::invalid(
            op,
            format!(
                "offset {offset:?} of a connectivity of shape {fs:?}: give the centre, or a point with no more taps \
                 after it than before along each axis"
            ),
        ));
    }
    Ok(())
}
