//! regionprops' `area_convex`: the number of elements of a label's box whose centre lies in (or on) the convex
//! hull of the label's elements, each widened by scikit-image's "diamond" (± ½ along each axis).
//!
//! scikit-image (0.26, `convex_hull_image` with its defaults) finds the hull by qhull in floating point and tests
//! the grid against it with a tolerance. Here every coordinate is an integer — pixel centres doubled, so that the
//! diamond's ± ½ become ± 1 — and every predicate (turns, orientations, the half-space tests) is exact in 128-bit
//! integers: a centre on the hull's boundary counts, as skimage's tolerance (1e-10, far below the least distance
//! of a grid point off a facet) makes it count. The hull of a region is that of its rows' first and last elements
//! (every element lies between them), so only those are gathered, one host pass over the labels; the count walks
//! the box's lines and intersects each with the hull's half-spaces, O(lines · facets) and not O(elements).
//!
//! In 3-D, skimage first takes the hull of the voxel centres alone; when they are affinely flat (one slice, one
//! line, a single voxel, a plane at an angle) qhull fails, skimage warns and its hull image is empty: the area is
//! 0 (and the solidity infinite). The same rule holds here. A 2-D region always has a hull (the diamonds have an
//! area), a single pixel's holding that pixel alone.
//!
//! regionprops' `feret_diameter_max` is the longest distance between the points skimage's `find_contours` (2-D)
//! or `marching_cubes` (3-D) put on the boundary of the hull image padded with zeros, at level ½: on a binary
//! image each such point is the midpoint between an element inside and its neighbour outside along one axis
//! (marching cubes' extra points in ambiguous cubes lie inside the hull of those, so they never lengthen the
//! diameter). Along every line of the box the hull image is one interval, so those midpoints are its two ends
//! pushed out by ½ along each axis; the longest distance is found exactly (squared, in integers) among the
//! corners of their hull, and its square root rounded once, as skimage's `sqrt(max(pdist(…, 'sqeuclidean')))`.
//! For a flat 3-D region, whose hull image is empty, skimage's `marching_cubes` raises: it is refused here too.
//!
//! These are exact, sequential geometric steps over a few points per region, on the host inside the measure's
//! queue (`HostCommand`): the labels are mapped once, the values written to a buffer the table reads.

use crate::app::ffi::{self, Region};
use crate::data::{HostCommand, XData};
use crate::element::RealElement;
use crate::error::{Error, Result};
use num_complex::Complex64;
use std::collections::HashSet;

/// A point of the grid: (z, y, x), in pixel units or doubled.
type Point = [i64; 3];

/// A closed half-space `normal · p ≤ offset` (doubled coordinates).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct HalfSpace {
    normal: [i128; 3],
    offset: i128,
}

/// Which table row a label value belongs to, as `kernels/measure.cl`'s `row_of` decides it (the same modes and
/// lookup, compared in the labels' own precision), so that the hull gathers exactly the elements the device
/// passes count.
pub(super) struct RowOf {
    /// 0: the row is the whole label from 1; 1: every label above 0 in row 0; 2: `lookup[label]`.
    pub mode: u32,
    /// The row of each whole label below `lookup.len()` (−1: not measured).
    pub lookup: Vec<i32>,
}

impl RowOf {
    fn row<T: RealElement>(&self, label: T) -> Option<usize> {
        let value = label.to_c64().re;
        if self.mode == 1 {
            return (value > 0.0).then_some(0);
        }
        // The kernel compares with the length converted to the labels' type.
        let length = T::from_c64(Complex64::new(self.lookup.len() as f64, 0.0)).to_c64().re;
        let whole_from_zero = value >= 0.0 && value.fract() == 0.0;
        if !whole_from_zero || value >= length {
            return None;
        }
        let whole = value as usize;
        match self.mode {
            0 => (whole > 0).then_some(whole),
            _ => self.lookup.get(whole).and_then(|&r| usize::try_from(r).ok()),
        }
    }
}

/// What the convex step measures and of which rows.
pub(super) struct ConvexStep {
    /// The label → row rule.
    pub rows: RowOf,
    /// Whether `feret_diameter_max` is asked (the area always is: it is cheap once the hull is known).
    pub feret: bool,
}

/// The values per row the convex step writes: `area_convex`, `feret_diameter_max`.
pub(super) const CONVEX_STRIDE: usize = 2;

/// Writes into `areas` ([`CONVEX_STRIDE`] doubles per table row) each row's `area_convex` and, when asked, its
/// `feret_diameter_max` (else NaN), in a host command that maps the labels (contiguous, of 2 or 3 axes): NaN for a
/// row whose label has no element. A flat 3-D region's Feret diameter is refused, naming its label.
pub(super) fn convex_areas_on_host<T: RealElement>(
    labels: &XData<T>,
    step: &ConvexStep,
    areas: &XData<f64>,
) -> Result<()> {
    let shape = labels.shape().to_vec();
    let read = [Region { buffer: labels.storage().buffer(), lo: labels.offset(), hi: labels.offset() + labels.len() }];
    let write = Region { buffer: areas.storage().buffer(), lo: areas.offset(), hi: areas.offset() + areas.len() };
    let mut outcome = Ok(());
    let bytes = (labels.len() * std::mem::size_of::<T>() + areas.len() * 8) as u64;
    HostCommand::new::<T, f64>("measure", "measure_convex", &[labels], &[areas])?.work(bytes, 0).run(|queue| {
        ffi::with_mapped::<T, f64, ()>(queue, &read, &write, |read, out| {
            outcome = match read.first() {
                Some(values) => fill_areas(values, &shape, step, out),
                None => Err(Error::invalid("measure", "the labels were not mapped")),
            };
        })
        .map(|((), event)| event)
    })?;
    outcome
}

/// Each row's values from the labels' values.
fn fill_areas<T: RealElement>(labels: &[T], shape: &[usize], step: &ConvexStep, out: &mut [f64]) -> Result<()> {
    let planar = shape.len() == 2;
    let candidates = run_ends(labels, shape, &step.rows, out.len() / CONVEX_STRIDE)?;
    for (row, (values, points)) in out.chunks_exact_mut(CONVEX_STRIDE).zip(&candidates).enumerate() {
        let image = ConvexImage::of(points, planar);
        let area = match (&image, points.is_empty()) {
            (_, true) => f64::NAN,
            (Some(image), false) => image.area() as f64,
            (None, false) => 0.0,
        };
        let feret = match (&image, points.is_empty() || !step.feret) {
            (_, true) => f64::NAN,
            (Some(image), false) => image.feret_diameter(),
            (None, false) => return Err(flat_feret(&step.rows, row)),
        };
        values.copy_from_slice(&[area, feret]);
    }
    Ok(())
}

/// The refusal of a flat region's Feret diameter, naming its label.
fn flat_feret(rows: &RowOf, row: usize) -> Error {
    let label = match rows.mode {
        1 => "every label above 0".to_string(),
        0 => format!("label {row}"),
        _ => rows
            .lookup
            .iter()
            .position(|&r| usize::try_from(r).ok() == Some(row))
            .map_or_else(|| format!("row {row}"), |label| format!("label {label}")),
    };
    Error::invalid(
        "measure",
        format!(
            "feret_diameter_max of {label}: its voxel centres are flat (one slice, a line or a plane), so its convex \
             hull image is empty and has no surface (skimage's marching_cubes raises there)"
        ),
    )
}

/// Per row, the first and last element (z, y, x) of each line of the data its label touches: the leftmost run's
/// start and the rightmost run's end, whose hull is the region's.
fn run_ends<T: RealElement>(labels: &[T], shape: &[usize], rows: &RowOf, row_count: usize) -> Result<Vec<Vec<Point>>> {
    let [nz, ny, nx] = padded(shape);
    let mut points: Vec<Vec<Point>> = Vec::new();
    points.try_reserve_exact(row_count).map_err(|_| no_memory(row_count * 24))?;
    points.resize_with(row_count, Vec::new);
    // The line each row last gathered, so that a later run on the same line only moves its last point.
    let mut last_line = vec![usize::MAX; row_count];
    for (line, values) in labels.chunks(nx.max(1)).enumerate().take(nz * ny) {
        let (z, y) = ((line / ny) as i64, (line % ny) as i64);
        let mut x = 0;
        while let Some(&label) = values.get(x) {
            let start = x;
            while values.get(x + 1).is_some_and(|v| v.to_c64().re.to_bits() == label.to_c64().re.to_bits()) {
                x += 1;
            }
            if let Some(row) = rows.row(label)
                && let (Some(list), Some(seen)) = (points.get_mut(row), last_line.get_mut(row))
            {
                let end = [z, y, x as i64];
                if *seen == line {
                    if let Some(last) = list.last_mut() {
                        *last = end;
                    }
                } else {
                    list.try_reserve(2).map_err(|_| no_memory((list.len() + 2) * 24))?;
                    list.extend([[z, y, start as i64], end]);
                    *seen = line;
                }
            }
            x += 1;
        }
    }
    Ok(points)
}

fn no_memory(bytes: usize) -> Error {
    Error::Unsupported { what: format!("measure's convex hulls: {bytes} bytes of candidate points could not be held") }
}

/// `shape` (1 to 3 axes) as [slices, rows, columns].
fn padded(shape: &[usize]) -> [usize; 3] {
    let mut padded = [1; 3];
    for (slot, &extent) in padded.iter_mut().rev().zip(shape.iter().rev()) {
        *slot = extent;
    }
    padded
}

/// skimage's `image_convex` of a region: the grid points of its box inside or on the hull of its elements each
/// widened by the diamond, as the hull's half-spaces (doubled coordinates) and the box.
struct ConvexImage {
    spaces: Vec<HalfSpace>,
    lo: Point,
    hi: Point,
    /// The data's axes among z, y, x: the last two, or all three.
    axes: std::ops::Range<usize>,
}

impl ConvexImage {
    /// The hull image of a region given by `points` (pixel centres, z, y, x; z = 0 throughout when `planar`);
    /// `None` for no point, or a 3-D region whose centres are affinely flat (skimage's empty hull).
    fn of(points: &[Point], planar: bool) -> Option<ConvexImage> {
        let (lo, hi) = bounds(points)?;
        let spaces = if planar { planar_hull(points) } else { solid_hull(points) }?;
        Some(ConvexImage { spaces, lo, hi, axes: if planar { 1..3 } else { 0..3 } })
    }

    /// skimage's `area_convex`: how many grid points it holds.
    fn area(&self) -> u64 {
        self.lines(2).filter_map(|at| self.along(2, at)).map(|(first, last)| (last - first + 1).unsigned_abs()).sum()
    }

    /// skimage's `feret_diameter_max`: the longest distance between the midpoints from its elements to their
    /// neighbours outside, along each axis.
    fn feret_diameter(&self) -> f64 {
        let mut ends: Vec<Point> = Vec::new();
        for axis in self.axes.clone() {
            for at in self.lines(axis) {
                if let Some((first, last)) = self.along(axis, at) {
                    let doubled = at.map(|c| 2 * c);
                    ends.extend([2 * first - 1, 2 * last + 1].map(|c| replaced(doubled, axis, c)));
                }
            }
        }
        let corners = if self.axes.start == 1 {
            polygon(&ends)
        } else {
            let flat = slice_corners(&mut ends);
            Hull::of(&flat).map_or(flat.clone(), |hull| hull.corners())
        };
        let longest = corners
            .iter()
            .enumerate()
            .flat_map(|(k, a)| corners.iter().skip(k + 1).map(move |b| squared_distance(a, b)))
            .max()
            .unwrap_or(0);
        // Doubled coordinates: the squared distance is 4 times the true one, which float64 holds exactly.
        (longest as f64 / 4.0).sqrt()
    }

    /// The grid points (pixel units) that start the box's lines along `axis`: the box's points with the
    /// coordinate along `axis` at its least (only the data's axes vary).
    fn lines(&self, axis: usize) -> impl Iterator<Item = Point> + '_ {
        let range = |k: usize| {
            let (lo, hi) = (self.lo.get(k).copied().unwrap_or(0), self.hi.get(k).copied().unwrap_or(0));
            if k == axis || !self.axes.contains(&k) { lo..=lo } else { lo..=hi }
        };
        let (r0, r1, r2) = (range(0), range(1), range(2));
        r0.flat_map(move |a| {
            let r2 = r2.clone();
            r1.clone().flat_map(move |b| r2.clone().map(move |c| [a, b, c]))
        })
    }

    /// The least and greatest coordinate along `axis` of the grid points inside, on the line through `at`
    /// (pixel units) and within the box; `None` where the line misses the hull.
    fn along(&self, axis: usize, at: Point) -> Option<(i64, i64)> {
        let (lo, hi) = (self.lo.get(axis).copied()?, self.hi.get(axis).copied()?);
        let (mut first, mut last) = (i128::from(lo), i128::from(hi));
        for space in &self.spaces {
            // n_axis · 2c ≤ rest.
            let mut rest = space.offset;
            let mut slope = 0;
            for (k, (&n, &c)) in space.normal.iter().zip(&at).enumerate() {
                if k == axis {
                    slope = n;
                } else {
                    rest -= n * 2 * i128::from(c);
                }
            }
            match slope.signum() {
                1 => last = last.min(rest.div_euclid(2 * slope)),
                -1 => first = first.max(-rest.div_euclid(-2 * slope)),
                _ if rest < 0 => return None,
                _ => {}
            }
            if last < first {
                return None;
            }
        }
        Some((i64::try_from(first).ok()?, i64::try_from(last).ok()?))
    }
}

/// `point` with its coordinate along `axis` replaced by `value`.
fn replaced(point: Point, axis: usize, value: i64) -> Point {
    let mut point = point;
    if let Some(slot) = point.get_mut(axis) {
        *slot = value;
    }
    point
}

fn squared_distance(a: &Point, b: &Point) -> i128 {
    difference(a, b).iter().map(|d| d * d).sum()
}

/// The corners of each z slice's polygon (the only points of a slice that can be corners of the 3-D hull),
/// the points sorted by slice first.
fn slice_corners(points: &mut [Point]) -> Vec<Point> {
    points.sort_unstable();
    let mut corners = Vec::new();
    for slice in points.chunk_by(|a, b| a[0] == b[0]) {
        let z = slice.first().map_or(0, |p| p[0]);
        corners.extend(polygon(slice).into_iter().map(|p| [z, p[1], p[2]]));
    }
    corners
}

/// The least and greatest coordinate along each axis.
fn bounds(points: &[Point]) -> Option<(Point, Point)> {
    let first = *points.first()?;
    Some(points.iter().fold((first, first), |(lo, hi), p| (zip_with(lo, *p, i64::min), zip_with(hi, *p, i64::max))))
}

/// The diamond's offsets in doubled coordinates: ± 1 along each of the last `axes` axes.
fn diamond(axes: usize) -> Vec<Point> {
    (3 - axes..3).flat_map(|k| [-1, 1].map(|s| std::array::from_fn(|j| if j == k { s } else { 0 }))).collect()
}

/// Every point doubled, plus each of the diamond's offsets.
fn widened(points: &[Point], axes: usize) -> Vec<Point> {
    let offsets = diamond(axes);
    points.iter().flat_map(|p| offsets.iter().map(move |o| zip_with(*p, *o, |c, d| 2 * c + d))).collect()
}

/// The half-planes of the 2-D hull (z = 0): the hull of the centres, widened, hulled again.
fn planar_hull(points: &[Point]) -> Option<Vec<HalfSpace>> {
    let corners = polygon(points);
    let outline = polygon(&widened(&corners, 2));
    edges_of(&outline)
}

/// The corners of the convex hull of points (y, x; z ignored) in counter-clockwise order of (y, x), by Andrew's
/// monotone chain with exact turns; collinear points dropped, one or two points when there are no more.
fn polygon(points: &[Point]) -> Vec<Point> {
    let mut sorted: Vec<Point> = points.iter().map(|p| [0, p[1], p[2]]).collect();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() < 3 {
        return sorted;
    }
    let turn = |o: &Point, a: &Point, b: &Point| {
        i128::from(a[1] - o[1]) * i128::from(b[2] - o[2]) - i128::from(a[2] - o[2]) * i128::from(b[1] - o[1])
    };
    let mut chain: Vec<Point> = Vec::with_capacity(2 * sorted.len());
    for pass in [sorted.as_slice(), &sorted.iter().rev().copied().collect::<Vec<_>>()] {
        let floor = chain.len();
        for p in pass {
            while chain.len() >= floor + 2
                && let [.., o, a] = chain.as_slice()
                && turn(o, a, p) <= 0
            {
                chain.pop();
            }
            chain.push(*p);
        }
        // The last point of each half is the first of the other.
        chain.pop();
    }
    chain
}

/// The half-planes of a convex polygon's edges, facing out; `None` for fewer than three corners.
fn edges_of(corners: &[Point]) -> Option<Vec<HalfSpace>> {
    if corners.len() < 3 {
        return None;
    }
    let inside = interior(corners);
    let spaces = corners.iter().zip(corners.iter().cycle().skip(1)).map(|(a, b)| {
        let (dy, dx) = (i128::from(b[1] - a[1]), i128::from(b[2] - a[2]));
        facing_out([0, dx, -dy], a, &inside, corners.len())
    });
    Some(distinct(spaces.collect()))
}

/// The sum of `points` (the interior point `sum / len` scaled by `len`, to stay an integer).
fn interior(points: &[Point]) -> [i128; 3] {
    points.iter().fold([0; 3], |s, p| zip_with(s, *p, |t, c| t + i128::from(c)))
}

/// The half-space through `on` with this normal, turned so that the interior point `sum / count` is inside.
fn facing_out(normal: [i128; 3], on: &Point, sum: &[i128; 3], count: usize) -> HalfSpace {
    let offset = dot(&normal, on);
    let interior = normal.iter().zip(sum).map(|(n, s)| n * s).sum::<i128>();
    if interior > offset * count as i128 {
        HalfSpace { normal: normal.map(|n| -n), offset: -offset }
    } else {
        HalfSpace { normal, offset }
    }
}

fn dot(normal: &[i128; 3], p: &Point) -> i128 {
    normal.iter().zip(p).map(|(n, &c)| n * i128::from(c)).sum()
}

/// Half-spaces reduced to lowest terms, each once (coplanar facets of a triangulated hull share one).
fn distinct(spaces: Vec<HalfSpace>) -> Vec<HalfSpace> {
    let mut reduced: Vec<HalfSpace> = spaces
        .into_iter()
        .map(|h| {
            let g = h.normal.iter().fold(0i128, |g, &n| gcd(g, n.abs()));
            if g > 1 { HalfSpace { normal: h.normal.map(|n| n / g), offset: h.offset / g } } else { h }
        })
        .collect();
    reduced.sort_unstable();
    reduced.dedup();
    reduced
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The half-spaces of the 3-D hull: each slice's polygon corners (the only points that can be the hull's
/// corners), their hull, its corners widened, hulled again; `None` when the centres are affinely flat.
fn solid_hull(points: &[Point]) -> Option<Vec<HalfSpace>> {
    let corners = slice_corners(&mut points.to_vec());
    let hull = Hull::of(&corners)?;
    let widened = widened(&hull.corners(), 3);
    Some(Hull::of(&widened)?.half_spaces())
}

/// A triangulated convex hull in 3-D, built incrementally with exact orientations: a point adds the triangles
/// from it to the horizon of the faces that see it strictly (coplanar faces do not see it, so coplanar points,
/// the rule on a grid, leave coplanar triangles, which are harmless: the hull as a set is what is measured).
struct Hull<'a> {
    points: &'a [Point],
    faces: Vec<Face>,
}

#[derive(Clone, Copy)]
struct Face {
    corners: [usize; 3],
    space: HalfSpace,
}

impl<'a> Hull<'a> {
    /// The hull of `points`; `None` when they are affinely flat (no four span a volume).
    fn of(points: &'a [Point]) -> Option<Hull<'a>> {
        let simplex = first_simplex(points)?;
        let inside = interior(&simplex.map(|k| points.get(k).copied().unwrap_or_default()));
        let mut hull = Hull { points, faces: Vec::new() };
        let [a, b, c, d] = simplex;
        for corners in [[a, b, c], [a, b, d], [a, c, d], [b, c, d]] {
            hull.faces.push(hull.face(corners, &inside, 4));
        }
        for (k, p) in points.iter().enumerate() {
            if simplex.contains(&k) {
                continue;
            }
            let seen: Vec<bool> = hull.faces.iter().map(|f| dot(&f.space.normal, p) > f.space.offset).collect();
            if !seen.contains(&true) {
                continue;
            }
            let seen_edges: HashSet<(usize, usize)> =
                hull.faces.iter().zip(&seen).filter(|(_, s)| **s).flat_map(|(f, _)| edges(f.corners)).collect();
            let horizon: Vec<(usize, usize)> =
                seen_edges.iter().filter(|(u, v)| !seen_edges.contains(&(*v, *u))).copied().collect();
            let mut kept: Vec<Face> = hull.faces.iter().zip(&seen).filter(|(_, s)| !**s).map(|(f, _)| *f).collect();
            kept.extend(horizon.iter().map(|&(u, v)| hull.face([u, v, k], &inside, 4)));
            hull.faces = kept;
        }
        Some(hull)
    }

    /// The face through three points, facing away from the interior point `sum / count`, its corners turning
    /// counter-clockwise seen from outside (so that faces sharing an edge run it in opposite directions, which is
    /// how the horizon is found).
    fn face(&self, corners: [usize; 3], sum: &[i128; 3], count: usize) -> Face {
        let [a, b, c] = corners.map(|k| self.points.get(k).copied().unwrap_or_default());
        let normal = cross(&difference(&b, &a), &difference(&c, &a));
        let space = facing_out(normal, &a, sum, count);
        let [first, second, third] = corners;
        let corners = if space.normal == normal { corners } else { [first, third, second] };
        Face { corners, space }
    }

    /// The points that are corners of a face.
    fn corners(&self) -> Vec<Point> {
        let mut used: Vec<usize> = self.faces.iter().flat_map(|f| f.corners).collect();
        used.sort_unstable();
        used.dedup();
        used.iter().filter_map(|&k| self.points.get(k).copied()).collect()
    }

    fn half_spaces(&self) -> Vec<HalfSpace> {
        distinct(self.faces.iter().map(|f| f.space).collect())
    }
}

/// The three directed edges of a triangle.
fn edges([a, b, c]: [usize; 3]) -> [(usize, usize); 3] {
    [(a, b), (b, c), (c, a)]
}

fn difference(a: &Point, b: &Point) -> [i128; 3] {
    zip_with(*a, *b, |p, q| i128::from(p) - i128::from(q))
}

/// `f` of the two arrays' elements, axis by axis.
fn zip_with<A: Copy, B: Copy, C>(a: [A; 3], b: [B; 3], f: impl Fn(A, B) -> C) -> [C; 3] {
    let ([a0, a1, a2], [b0, b1, b2]) = (a, b);
    [f(a0, b0), f(a1, b1), f(a2, b2)]
}

fn cross(u: &[i128; 3], v: &[i128; 3]) -> [i128; 3] {
    let [a, b, c] = *u;
    let [d, e, f] = *v;
    [b * f - c * e, c * d - a * f, a * e - b * d]
}

/// Four points spanning a volume: the first, one elsewhere, one off their line, one off their plane; `None`
/// when the points are affinely flat.
fn first_simplex(points: &[Point]) -> Option<[usize; 4]> {
    let origin = *points.first()?;
    let (b, pb) = points.iter().enumerate().find(|(_, p)| **p != origin)?;
    let along = difference(pb, &origin);
    let (c, pc) = points.iter().enumerate().find(|(_, p)| cross(&along, &difference(p, &origin)) != [0; 3])?;
    let normal = cross(&along, &difference(pc, &origin));
    let (d, _) = points.iter().enumerate().find(|(_, p)| {
        let off = difference(p, &origin);
        normal.iter().zip(&off).map(|(n, o)| n * o).sum::<i128>() != 0
    })?;
    Some([0, b, c, d])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convex_area(points: &[Point], planar: bool) -> u64 {
        ConvexImage::of(points, planar).map_or(0, |image| image.area())
    }

    fn feret(points: &[Point], planar: bool) -> f64 {
        ConvexImage::of(points, planar).map_or(f64::NAN, |image| image.feret_diameter())
    }

    #[test]
    fn feret_diameters_are_skimages() {
        // skimage 0.26: a pixel 1, a row of five 5, a 3 × 4 block √20; a 3-D block of 2 × 3 × 2 voxels √11.
        assert_eq!(feret(&pixels(&["#"]), true), 1.0);
        assert_eq!(feret(&pixels(&["#####"]), true), 5.0);
        assert_eq!(feret(&pixels(&["####", "####", "####"]), true), 20f64.sqrt());
        let block: Vec<Point> = (2..4).flat_map(|z| (0..3).flat_map(move |y| [[z, y, 0], [z, y, 1]])).collect();
        assert_eq!(feret(&block, false), 11f64.sqrt());
    }

    fn pixels(rows: &[&str]) -> Vec<Point> {
        let mut points = Vec::new();
        for (y, row) in rows.iter().enumerate() {
            for (x, c) in row.chars().enumerate() {
                if c == '#' {
                    points.push([0, y as i64, x as i64]);
                }
            }
        }
        points
    }

    #[test]
    fn a_single_pixel_and_a_line_cover_themselves() {
        assert_eq!(convex_area(&pixels(&["#"]), true), 1);
        assert_eq!(convex_area(&pixels(&["#####"]), true), 5);
        assert_eq!(convex_area(&pixels(&["#", "#", "#"]), true), 3);
    }

    #[test]
    fn diagonal_pixels_take_the_cells_their_diamonds_touch() {
        // The hull of the diamonds around (0,0) and (2,2) holds (1,1) inside and no other centre: skimage gives 3.
        assert_eq!(convex_area(&pixels(&["#..", "...", "..#"]), true), 3);
        // An L's hull cuts the corner: (0,1) and (0,2) lie outside, (1,1) inside; skimage gives 6.
        assert_eq!(convex_area(&pixels(&["#..", "#..", "###"]), true), 6);
    }

    #[test]
    fn a_ring_is_filled() {
        assert_eq!(convex_area(&pixels(&["###", "#.#", "###"]), true), 9);
    }

    #[test]
    fn flat_voxels_have_skimages_empty_hull() {
        let slice = [[1, 0, 0], [1, 0, 3], [1, 2, 1]];
        assert_eq!(convex_area(&slice, false), 0);
        let tilted = [[0, 0, 0], [1, 1, 0], [2, 2, 0], [0, 0, 4], [2, 2, 4]];
        assert_eq!(convex_area(&tilted, false), 0);
        assert_eq!(convex_area(&[[3, 3, 3]], false), 0);
    }

    #[test]
    fn a_tetrahedron_of_voxels_holds_the_voxels_of_its_widened_hull() {
        // skimage 0.26: voxels (0,0,0), (1,1,0), (2,2,1), (0,2,2) give area_convex 8.
        assert_eq!(convex_area(&[[0, 0, 0], [1, 1, 0], [2, 2, 1], [0, 2, 2]], false), 8);
    }

    #[test]
    fn a_full_box_counts_every_voxel() {
        let mut cube = Vec::new();
        for z in 0..3 {
            for y in 0..4 {
                cube.extend([[z, y, 0], [z, y, 4]]);
            }
        }
        assert_eq!(convex_area(&cube, false), 3 * 4 * 5);
    }

    #[test]
    fn labels_map_to_rows_as_the_kernel_maps_them() {
        let rows = RowOf { mode: 2, lookup: vec![-1, 1, -1, 0] };
        assert_eq!(
            [0.0, 1.0, 2.0, 3.0, 3.5, 4.0, -1.0, f64::NAN].map(|l| rows.row(l)),
            [None, Some(1), None, Some(0), None, None, None, None]
        );
        let positive = RowOf { mode: 1, lookup: Vec::new() };
        assert_eq!([0.0f32, 0.5, 7.0].map(|l| positive.row(l)), [None, Some(0), Some(0)]);
    }
}
