//! What a [`Resample`](super::Resample) computes: the map ([`Transform`]: zoom, shift, affine, rotate) and the
//! interpolation ([`ResampleParams`]), and the map resolved against an input shape ([`Mapping`]), with every
//! coordinate as scipy computes it.

use super::interpolation::Interpolation;
use super::mode::{InterpMode, cos_sin_degrees};
use crate::error::{Error, Result};
use num_complex::Complex64;

/// The geometric map of a [`Resample`](super::Resample), with scipy's meaning: each output index `o` reads the input at a
/// coordinate computed from it.
///
/// ```
/// use cliper::Transform;
/// let t = Transform::Zoom { factors: vec![2.0], grid_mode: false };
/// assert_eq!(t.name(), "zoom");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Transform {
    /// scipy's zoom: the output has `round(n · factor)` samples per axis (one factor, or one per axis); with
    /// `grid_mode` false the first and last samples of input and output coincide, with it true their outer edges.
    Zoom {
        /// One factor, or one per axis.
        factors: Vec<f64>,
        /// scipy's `grid_mode`.
        grid_mode: bool,
    },
    /// scipy's shift: output `o` reads input `o − shift` (one shift, or one per axis).
    Shift(Vec<f64>),
    /// scipy's affine_transform: input coordinate `matrix · o + offset`. `matrix` is `ndim × ndim`,
    /// `ndim × (ndim + 1)` (the last column the offset) or `(ndim + 1) × (ndim + 1)` homogeneous; a single row of
    /// `ndim` values is the diagonal (scipy's 1-D matrix).
    Affine {
        /// The rows of the matrix.
        matrix: Vec<Vec<f64>>,
        /// One offset, or one per axis.
        offset: Vec<f64>,
        /// The output shape (default: the input's).
        output_shape: Option<Vec<usize>>,
    },
    /// scipy's rotate: by `angle` degrees in the plane of `axes`, about the centre; `reshape` enlarges the output
    /// to hold the whole rotated input.
    Rotate {
        /// Degrees, counter-clockwise as scipy's.
        angle: f64,
        /// The plane's axes.
        axes: (usize, usize),
        /// Whether the output grows to hold the whole input.
        reshape: bool,
    },
}

impl Transform {
    /// scipy's function name.
    pub fn name(&self) -> &'static str {
        match self {
            Transform::Zoom { .. } => "zoom",
            Transform::Shift(_) => "shift",
            Transform::Affine { .. } => "affine_transform",
            Transform::Rotate { .. } => "rotate",
        }
    }
}

/// The settings of a [`Resample`](super::Resample): the [`Transform`] and the [`Interpolation`] (scipy's defaults:
/// order 3, mode `constant`, cval 0, prefilter).
///
/// ```
/// use cliper::{InterpMode, ResampleParams};
/// let p = ResampleParams::zoom(&[2.0, 2.0, 1.0]).order(1).mode(InterpMode::Nearest);
/// assert_eq!(p.interpolation.order, 1);
/// let r = ResampleParams::rotate(30.0).axes(0, 2).reshape(false);
/// assert_eq!(r.transform, cliper::Transform::Rotate { angle: 30.0, axes: (0, 2), reshape: false });
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ResampleParams {
    /// The geometric map.
    pub transform: Transform,
    /// Order, mode, cval, prefilter.
    pub interpolation: Interpolation,
}

impl ResampleParams {
    fn with(transform: Transform) -> ResampleParams {
        ResampleParams { transform, interpolation: Interpolation::default() }
    }
    /// scipy's zoom by `factors` (one, or one per axis).
    pub fn zoom(factors: &[f64]) -> ResampleParams {
        ResampleParams::with(Transform::Zoom { factors: factors.to_vec(), grid_mode: false })
    }
    /// scipy's shift by `shift` samples (one, or one per axis).
    pub fn shift(shift: &[f64]) -> ResampleParams {
        ResampleParams::with(Transform::Shift(shift.to_vec()))
    }
    /// scipy's affine_transform with `matrix` (rows; see [`Transform::Affine`]) and `offset`.
    pub fn affine(matrix: &[Vec<f64>], offset: &[f64]) -> ResampleParams {
        ResampleParams::with(Transform::Affine { matrix: matrix.to_vec(), offset: offset.to_vec(), output_shape: None })
    }
    /// scipy's rotate by `angle` degrees in the plane of the first two axes, reshaping.
    pub fn rotate(angle: f64) -> ResampleParams {
        ResampleParams::with(Transform::Rotate { angle, axes: (1, 0), reshape: true })
    }
    /// The rotation plane.
    pub fn axes(mut self, a: usize, b: usize) -> ResampleParams {
        if let Transform::Rotate { axes, .. } = &mut self.transform {
            *axes = (a, b);
        }
        self
    }
    /// Whether a rotation enlarges the output.
    pub fn reshape(mut self, on: bool) -> ResampleParams {
        if let Transform::Rotate { reshape, .. } = &mut self.transform {
            *reshape = on;
        }
        self
    }
    /// A zoom's grid mode.
    pub fn grid_mode(mut self, on: bool) -> ResampleParams {
        if let Transform::Zoom { grid_mode, .. } = &mut self.transform {
            *grid_mode = on;
        }
        self
    }
    /// An affine transform's output shape.
    pub fn output_shape(mut self, shape: &[usize]) -> ResampleParams {
        if let Transform::Affine { output_shape, .. } = &mut self.transform {
            *output_shape = Some(shape.to_vec());
        }
        self
    }
    /// Sets the spline order.
    pub fn order(mut self, order: usize) -> ResampleParams {
        self.interpolation.order = order;
        self
    }
    /// Sets the mode.
    pub fn mode(mut self, mode: InterpMode) -> ResampleParams {
        self.interpolation.mode = mode;
        self
    }
    /// Sets a real cval.
    pub fn cval(mut self, cval: f64) -> ResampleParams {
        self.interpolation.cval = Complex64::new(cval, 0.0);
        self
    }
    /// Turns prefiltering on or off.
    pub fn prefilter(mut self, on: bool) -> ResampleParams {
        self.interpolation.prefilter = on;
        self
    }
}

/// How one axis of a separable map computes its input coordinate from output index k (each as scipy does, to
/// the rounding).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum AxisCoord {
    /// zoom_shift with a zoom: k·z, or (k + ½)·z − ½ in grid mode.
    Zoom(f64, bool),
    /// zoom_shift with a shift: k + s.
    Shift(f64),
    /// zoom_shift with zoom and shift (scipy's 1-D affine matrix): (k + s)·z.
    ShiftZoom(f64, f64),
    /// An affine row with one non-zero entry: m·k + b.
    Linear(f64, f64),
}

impl AxisCoord {
    /// The input coordinate of output index `k`.
    pub(super) fn at(self, k: usize) -> f64 {
        let k = k as f64;
        match self {
            AxisCoord::Zoom(z, false) => k * z,
            AxisCoord::Zoom(z, true) => (k + 0.5) * z - 0.5,
            AxisCoord::Shift(s) => k + s,
            AxisCoord::ShiftZoom(s, z) => (k + s) * z,
            AxisCoord::Linear(m, b) => b + k * m,
        }
    }
}

/// A transform resolved against an input shape.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Mapping {
    /// Per axis, the coordinate map (`None`: the output index is the input index).
    Separable(Vec<Option<AxisCoord>>),
    /// Input coordinate = matrix · o + offset, over all axes.
    General { matrix: Vec<Vec<f64>>, offset: Vec<f64> },
}

/// One value per axis from one or `ndim` values.
fn per_axis(op: &str, what: &str, values: &[f64], ndim: usize) -> Result<Vec<f64>> {
    match values {
        [one] => Ok(vec![*one; ndim]),
        many if many.len() == ndim => Ok(many.to_vec()),
        many => {
            Err(Error::invalid(op, format!("gives {} {what} for {ndim} axes: give one, or one per axis", many.len())))
        }
    }
}

/// The output shape and the mapping of `params` on an input of `shape`.
pub(super) fn resolve(shape: &[usize], params: &ResampleParams) -> Result<(Vec<usize>, Mapping)> {
    let op = params.transform.name();
    params.interpolation.check(op)?;
    if shape.is_empty() {
        return Err(Error::invalid(op, "needs an input with at least one axis"));
    }
    match &params.transform {
        Transform::Zoom { factors, grid_mode } => resolve_zoom(op, shape, factors, *grid_mode),
        Transform::Shift(shift) => resolve_shift(op, shape, shift),
        Transform::Affine { matrix, offset, output_shape } => {
            resolve_affine(op, shape, matrix, offset, output_shape.as_deref())
        }
        Transform::Rotate { angle, axes, reshape } => resolve_rotate(op, shape, *angle, *axes, *reshape),
    }
}

/// scipy's zoom on `shape`: the output shape and one zoom_shift coordinate per axis that changes.
fn resolve_zoom(op: &str, shape: &[usize], factors: &[f64], grid_mode: bool) -> Result<(Vec<usize>, Mapping)> {
    let nd = shape.len();
    let factors = per_axis(op, "zoom factors", factors, nd)?;
    if let Some(bad) = factors.iter().find(|f| !(**f > 0.0 && f.is_finite())) {
        return Err(Error::invalid(op, format!("zoom factors must be positive and finite, got {bad}")));
    }
    let out: Vec<usize> = shape.iter().zip(&factors).map(|(&n, f)| (n as f64 * f).round_ties_even() as usize).collect();
    let axes = shape
        .iter()
        .zip(&out)
        .map(|(&n, &m)| {
            let (num, den) = if grid_mode { (n, m) } else { (n.saturating_sub(1), m.saturating_sub(1)) };
            let z = if den == 0 { 1.0 } else { num as f64 / den as f64 };
            (n != m || z != 1.0).then_some(AxisCoord::Zoom(z, grid_mode))
        })
        .collect();
    Ok((out, Mapping::Separable(axes)))
}

/// scipy's shift on `shape`: the shape kept, one zoom_shift coordinate per shifted axis.
fn resolve_shift(op: &str, shape: &[usize], shift: &[f64]) -> Result<(Vec<usize>, Mapping)> {
    let nd = shape.len();
    let shift = per_axis(op, "shifts", shift, nd)?;
    if let Some(bad) = shift.iter().find(|s| !s.is_finite()) {
        return Err(Error::invalid(op, format!("shifts must be finite, got {bad}")));
    }
    let axes = shift.iter().map(|&s| (s != 0.0).then_some(AxisCoord::Shift(-s))).collect();
    Ok((shape.to_vec(), Mapping::Separable(axes)))
}

/// scipy's affine_transform on `shape`: a 1-D matrix (the diagonal) through zoom_shift, else an n×n matrix with
/// offsets or an (n+1)-column homogeneous one, separable when it is diagonal.
fn resolve_affine(
    op: &str,
    shape: &[usize],
    matrix: &[Vec<f64>],
    offset: &[f64],
    output_shape: Option<&[usize]>,
) -> Result<(Vec<usize>, Mapping)> {
    let nd = shape.len();
    let out = output_shape.unwrap_or(shape).to_vec();
    if out.len() != nd {
        return Err(Error::invalid(op, format!("an output shape {out:?} of {} axes for an input of {nd}", out.len())));
    }
    if matrix.iter().flatten().any(|v| !v.is_finite()) {
        return Err(Error::invalid(op, "the matrix has a value that is not finite"));
    }
    // scipy's 1-D matrix: the diagonal, through zoom_shift with shift = offset / matrix.
    if matrix.len() == 1 && nd > 1 {
        let diag = matrix.first().cloned().unwrap_or_default();
        if diag.len() != nd {
            return Err(Error::invalid(op, format!("a diagonal of {} values for {nd} axes", diag.len())));
        }
        let offset = per_axis(op, "offsets", offset, nd)?;
        let axes = diag
            .iter()
            .zip(&offset)
            .zip(shape.iter().zip(&out))
            .map(|((&m, &b), (&n, &o))| (m != 1.0 || b != 0.0 || n != o).then_some(AxisCoord::ShiftZoom(b / m, m)))
            .collect();
        return Ok((out, Mapping::Separable(axes)));
    }
    let rows = matrix.len();
    let cols = matrix.first().map_or(0, Vec::len);
    if matrix.iter().any(|r| r.len() != cols) {
        return Err(Error::invalid(op, "the matrix rows differ in length"));
    }
    let (m, b) = if (rows == nd || rows == nd + 1) && cols == nd + 1 {
        if rows == nd + 1 {
            let last = matrix.get(nd).cloned().unwrap_or_default();
            let expected: Vec<f64> = (0..=nd).map(|i| if i == nd { 1.0 } else { 0.0 }).collect();
            if last != expected {
                return Err(Error::invalid(
                    op,
                    format!("a homogeneous matrix of {rows}×{cols} must end in the row {expected:?}, not {last:?}"),
                ));
            }
        }
        let m: Vec<Vec<f64>> = matrix.iter().take(nd).map(|r| r.iter().take(nd).copied().collect()).collect();
        let b: Vec<f64> = matrix.iter().take(nd).map(|r| r.get(nd).copied().unwrap_or(0.0)).collect();
        (m, b)
    } else if rows == nd && cols == nd {
        (matrix.to_vec(), per_axis(op, "offsets", offset, nd)?)
    } else {
        return Err(Error::invalid(
            op,
            format!(
                "a matrix of {rows}×{cols} for an input of {nd} axes: give {nd}×{nd}, {nd}×{}, {}×{} or one \
                 row of {nd} (the diagonal)",
                nd + 1,
                nd + 1,
                nd + 1
            ),
        ));
    };
    Ok((out.clone(), general_or_separable(m, b, shape, &out)))
}

/// scipy's rotate on `shape` by `angle` degrees in the plane of `axes` about the centre (the output enlarged to
/// the rotated box with `reshape`): an affine map, separable for multiples of 90°.
fn resolve_rotate(
    op: &str,
    shape: &[usize],
    angle: f64,
    axes: (usize, usize),
    reshape: bool,
) -> Result<(Vec<usize>, Mapping)> {
    let nd = shape.len();
    if nd < 2 {
        return Err(Error::invalid(op, format!("rotates arrays of at least two axes, not {nd}")));
    }
    let (a, b) = (axes.0.min(axes.1), axes.0.max(axes.1));
    if a == b || b >= nd {
        return Err(Error::invalid(op, format!("the plane axes {axes:?} for an input of {nd} axes")));
    }
    if !angle.is_finite() {
        return Err(Error::invalid(op, format!("the angle must be finite, got {angle}")));
    }
    let (c, s) = cos_sin_degrees(angle);
    let rot = [[c, s], [-s, c]];
    let (iy, ix) = (shape.get(a).copied().unwrap_or(1) as f64, shape.get(b).copied().unwrap_or(1) as f64);
    let plane_out = if reshape {
        let corners = [(0.0, 0.0), (0.0, ix), (iy, 0.0), (iy, ix)];
        let span = |r: [f64; 2]| {
            let v: Vec<f64> = corners.iter().map(|(p, q)| r[0] * p + r[1] * q).collect();
            let (lo, hi) = v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| (l.min(*x), h.max(*x)));
            ((hi - lo) + 0.5) as usize
        };
        [span(rot[0]), span(rot[1])]
    } else {
        [iy as usize, ix as usize]
    };
    let oc = [(plane_out[0] as f64 - 1.0) / 2.0, (plane_out[1] as f64 - 1.0) / 2.0];
    let out_center = [rot[0][0] * oc[0] + rot[0][1] * oc[1], rot[1][0] * oc[0] + rot[1][1] * oc[1]];
    let in_center = [(iy - 1.0) / 2.0, (ix - 1.0) / 2.0];
    let mut out = shape.to_vec();
    let mut m: Vec<Vec<f64>> = (0..nd).map(|i| (0..nd).map(|j| if i == j { 1.0 } else { 0.0 }).collect()).collect();
    let mut off = vec![0.0; nd];
    for (p, axis) in [a, b].into_iter().enumerate() {
        if let Some(o) = out.get_mut(axis) {
            *o = plane_out.get(p).copied().unwrap_or(1);
        }
        if let Some(row) = m.get_mut(axis) {
            for (q, other) in [a, b].into_iter().enumerate() {
                if let Some(v) = row.get_mut(other) {
                    *v = rot.get(p).and_then(|r| r.get(q)).copied().unwrap_or(0.0);
                }
            }
        }
        if let Some(o) = off.get_mut(axis) {
            *o = in_center.get(p).copied().unwrap_or(0.0) - out_center.get(p).copied().unwrap_or(0.0);
        }
    }
    Ok((out.clone(), general_or_separable(m, off, shape, &out)))
}

/// A general affine map, or the separable one when every row has at most its diagonal entry.
fn general_or_separable(matrix: Vec<Vec<f64>>, offset: Vec<f64>, shape: &[usize], out: &[usize]) -> Mapping {
    let diagonal = matrix.iter().enumerate().all(|(i, r)| r.iter().enumerate().all(|(j, v)| i == j || *v == 0.0));
    if !diagonal {
        return Mapping::General { matrix, offset };
    }
    let axes = (0..shape.len())
        .map(|i| {
            let m = matrix.get(i).and_then(|r| r.get(i)).copied().unwrap_or(1.0);
            let b = offset.get(i).copied().unwrap_or(0.0);
            (m != 1.0 || b != 0.0 || shape.get(i) != out.get(i)).then_some(AxisCoord::Linear(m, b))
        })
        .collect();
    Mapping::Separable(axes)
}
