//! [`Resample`] (scipy.ndimage's zoom, shift, affine_transform and rotate) and [`MapCoordinates`]
//! (map_coordinates): spline interpolation of order 0 to 5 with scipy's modes and prefiltering.
//!
//! Zoom, shift and axis-aligned affine maps are separable: one pass per interpolated axis, each output index
//! reading `order + 1` samples through a table the host computes in float64 exactly as scipy's NI_ZoomShift does
//! (so edges, modes and rounding of the coordinates match scipy's). Rotations, general matrices and coordinate
//! arrays gather: every output element computes its coordinate on the device (in float64 where the device has it)
//! and sums the `(order + 1)^axes` products, as scipy's NI_GeometricTransform.

use super::mode::{InterpMode, axis_row, cos_sin_degrees};
use super::spline_filter::{Prefilter, PrefilterMethod};
use crate::app::Kernel;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::elementwise::{Elementwise, Expr};
use crate::process::planning::{array_view, index_type_for};
use crate::process::{Prepared, Process};
use num_complex::Complex64;

/// Work-items per group of the interpolation kernels (a 1-D range over the output).
const GROUP: usize = 256;

/// The interpolation settings shared by [`Resample`] and [`MapCoordinates`], scipy's defaults: cubic splines
/// (`order` 3), mode `constant`, `cval` 0, prefiltering on (`prefilter = false` takes the input as B-spline
/// coefficients already, e.g. from [`crate::SplineFilter`]).
///
/// ```
/// use cliper::{InterpMode, Interpolation};
/// let i = Interpolation::new(1).mode(InterpMode::Nearest).cval(-1000.0);
/// assert_eq!((i.order, i.mode, i.cval.re, i.prefilter), (1, InterpMode::Nearest, -1000.0, true));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interpolation {
    /// The spline order, 0 (nearest sample) to 5; 1 is linear, 3 cubic.
    pub order: usize,
    /// How the input extends past its edges.
    pub mode: InterpMode,
    /// The value outside for `constant` and `grid-constant` (complex data takes both parts).
    pub cval: Complex64,
    /// Whether to compute the B-spline coefficients first (orders above 1).
    pub prefilter: bool,
}

impl Default for Interpolation {
    fn default() -> Interpolation {
        Interpolation { order: 3, mode: InterpMode::Constant, cval: Complex64::default(), prefilter: true }
    }
}

impl Interpolation {
    /// Order `order`, the other settings scipy's defaults.
    pub fn new(order: usize) -> Interpolation {
        Interpolation { order, ..Interpolation::default() }
    }
    /// Sets the mode.
    pub fn mode(mut self, mode: InterpMode) -> Interpolation {
        self.mode = mode;
        self
    }
    /// Sets a real `cval`.
    pub fn cval(mut self, cval: f64) -> Interpolation {
        self.cval = Complex64::new(cval, 0.0);
        self
    }
    /// Sets a complex `cval`.
    pub fn cval_complex(mut self, cval: Complex64) -> Interpolation {
        self.cval = cval;
        self
    }
    /// Turns prefiltering on or off.
    pub fn prefilter(mut self, on: bool) -> Interpolation {
        self.prefilter = on;
        self
    }

    fn check(&self, op: &str) -> Result<()> {
        if self.order > 5 {
            return Err(Error::invalid(op, format!("spline order {} is not supported: use 0 to 5", self.order)));
        }
        Ok(())
    }

    /// Samples added per side of each interpolated axis before prefiltering.
    fn pad(&self) -> usize {
        if self.prefilter && self.order > 1 { self.mode.prepad() } else { 0 }
    }
}

/// The geometric map of a [`Resample`], with scipy's meaning: each output index `o` reads the input at a
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

/// The settings of a [`Resample`]: the [`Transform`] and the [`Interpolation`] (scipy's defaults: order 3,
/// mode `constant`, cval 0, prefilter).
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
enum AxisCoord {
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
    fn at(self, k: usize) -> f64 {
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
enum Mapping {
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
fn resolve(shape: &[usize], params: &ResampleParams) -> Result<(Vec<usize>, Mapping)> {
    let nd = shape.len();
    let op = params.transform.name();
    params.interpolation.check(op)?;
    if nd == 0 {
        return Err(Error::invalid(op, "needs an input with at least one axis"));
    }
    match &params.transform {
        Transform::Zoom { factors, grid_mode } => {
            let factors = per_axis(op, "zoom factors", factors, nd)?;
            if let Some(bad) = factors.iter().find(|f| !(**f > 0.0 && f.is_finite())) {
                return Err(Error::invalid(op, format!("zoom factors must be positive and finite, got {bad}")));
            }
            let out: Vec<usize> =
                shape.iter().zip(&factors).map(|(&n, f)| (n as f64 * f).round_ties_even() as usize).collect();
            let axes = shape
                .iter()
                .zip(&out)
                .map(|(&n, &m)| {
                    let (num, den) = if *grid_mode { (n, m) } else { (n.saturating_sub(1), m.saturating_sub(1)) };
                    let z = if den == 0 { 1.0 } else { num as f64 / den as f64 };
                    (n != m || z != 1.0).then_some(AxisCoord::Zoom(z, *grid_mode))
                })
                .collect();
            Ok((out, Mapping::Separable(axes)))
        }
        Transform::Shift(shift) => {
            let shift = per_axis(op, "shifts", shift, nd)?;
            if let Some(bad) = shift.iter().find(|s| !s.is_finite()) {
                return Err(Error::invalid(op, format!("shifts must be finite, got {bad}")));
            }
            let axes = shift.iter().map(|&s| (s != 0.0).then_some(AxisCoord::Shift(-s))).collect();
            Ok((shape.to_vec(), Mapping::Separable(axes)))
        }
        Transform::Affine { matrix, offset, output_shape } => {
            let out = output_shape.clone().unwrap_or_else(|| shape.to_vec());
            if out.len() != nd {
                return Err(Error::invalid(
                    op,
                    format!("an output shape {out:?} of {} axes for an input of {nd}", out.len()),
                ));
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
                    .map(|((&m, &b), (&n, &o))| {
                        (m != 1.0 || b != 0.0 || n != o).then_some(AxisCoord::ShiftZoom(b / m, m))
                    })
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
                            format!(
                                "a homogeneous matrix of {rows}×{cols} must end in the row {expected:?}, not {last:?}"
                            ),
                        ));
                    }
                }
                let m: Vec<Vec<f64>> = matrix.iter().take(nd).map(|r| r.iter().take(nd).copied().collect()).collect();
                let b: Vec<f64> = matrix.iter().take(nd).map(|r| r.get(nd).copied().unwrap_or(0.0)).collect();
                (m, b)
            } else if rows == nd && cols == nd {
                (matrix.clone(), per_axis(op, "offsets", offset, nd)?)
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
        Transform::Rotate { angle, axes, reshape } => {
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
            let (c, s) = cos_sin_degrees(*angle);
            let rot = [[c, s], [-s, c]];
            let (iy, ix) = (shape.get(a).copied().unwrap_or(1) as f64, shape.get(b).copied().unwrap_or(1) as f64);
            let plane_out = if *reshape {
                let corners = [(0.0, 0.0), (0.0, ix), (iy, 0.0), (iy, ix)];
                let span = |r: [f64; 2]| {
                    let v: Vec<f64> = corners.iter().map(|(p, q)| r[0] * p + r[1] * q).collect();
                    let (lo, hi) =
                        v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| (l.min(*x), h.max(*x)));
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
            let mut m: Vec<Vec<f64>> =
                (0..nd).map(|i| (0..nd).map(|j| if i == j { 1.0 } else { 0.0 }).collect()).collect();
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
    }
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

/// What a [`Resample`] or [`MapCoordinates`] runs.
///
/// ```
/// use cliper::{ClApp, Process, Resample, ResampleParams, ResampleStrategy, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[6, 7])?;
/// let mut p = Resample::new(&x, &XData::zeros(&app, &[12, 7])?, ResampleParams::zoom(&[2.0, 1.0]));
/// p.init()?;
/// let Some(ResampleStrategy::Separable { prefilter, passes }) = p.strategy() else { unreachable!() };
/// assert_eq!((prefilter.passes(), passes), (1, vec![0]));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResampleStrategy {
    /// Nothing to interpolate (an identity map): a copy.
    Copy,
    /// Prefilter passes, then one interpolation pass per axis in the order listed (shrinking axes first, so the
    /// intermediate arrays stay small).
    Separable {
        /// The prefilter (one pass per interpolated axis with order > 1 and prefilter on).
        prefilter: PrefilterMethod,
        /// The axes interpolated, in order.
        passes: Vec<usize>,
    },
    /// Prefilter passes, then one gather kernel: `(order + 1)^axes` taps per output element.
    Gather {
        /// The prefilter.
        prefilter: PrefilterMethod,
        /// The axes interpolated.
        axes: usize,
        /// Whether coordinates are computed in float64 on the device.
        double_coordinates: bool,
    },
}

impl std::fmt::Display for ResampleStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResampleStrategy::Copy => write!(f, "identity map: copy"),
            ResampleStrategy::Separable { prefilter, passes } => {
                write!(f, "prefilter: {prefilter}; separable interpolation along axes {passes:?}")
            }
            ResampleStrategy::Gather { prefilter, axes, double_coordinates } => write!(
                f,
                "prefilter: {prefilter}; one gather over {axes} axes (coordinates in {})",
                if *double_coordinates { "float64" } else { "float32" }
            ),
        }
    }
}

/// One separable interpolation pass.
struct AxisPass<T: Element> {
    source: XData<T>,
    target: XData<T>,
    slot: usize,
    n_in: usize,
    table: XData<T::Real>,
    source_view: ([usize; 4], [usize; 4]),
    target_view: ([usize; 4], [usize; 4]),
}

/// The gather: one kernel over the output.
struct Gather<T: Element> {
    kernel: Kernel,
    source: XData<T>,
    target: XData<T>,
    source_view: ([usize; 4], [usize; 4]),
    target_view: ([usize; 4], [usize; 4]),
    matrix: [f64; 12],
    pad: f64,
    coordinates: Option<XData<T::Real>>,
    coordinate_stride: usize,
    double: bool,
    index: IndexType,
    mode: InterpMode,
}

enum Work<T: Element> {
    Copy(Box<Elementwise<T, T>>),
    Separable { kernel: Kernel, passes: Vec<AxisPass<T>> },
    Gather(Box<Gather<T>>),
}

struct Plan<T: Element> {
    prefilter: Prefilter<T>,
    work: Work<T>,
    index: IndexType,
    cval: T,
    strategy: ResampleStrategy,
}

/// The build options of the resampling program: type, index type and order (plus `extra`). The mode is a
/// run-time argument, so one program serves every mode, and the prefilter and the separable passes share it.
fn build_options<T: Element>(order: usize, index: IndexType, extra: &str) -> String {
    format!("{} -DIDX={} -DORDER={order}{extra}", T::build_options(), index.cl_type())
}

/// The first block axis (of the last three) from which every axis is interpolated or passed through, given the
/// axes that are interpolated; an error when they span more than three.
fn block_rank(op: &str, ndim: usize, interpolated: &[bool]) -> Result<usize> {
    let first = interpolated.iter().position(|&i| i).unwrap_or(ndim);
    let rank = ndim - first;
    if rank > 3 {
        return Err(Error::Unsupported {
            what: format!(
                "{op} interpolating axes {first} to {} of {ndim}: at most the last three axes can be interpolated",
                ndim - 1
            ),
        });
    }
    Ok(rank)
}

/// Builds the gather over `coefficients` (the whole `rank`-axis block: `pass[k]` true where block axis k is not
/// interpolated) into `target`.
#[allow(clippy::too_many_arguments)]
fn plan_gather<T: Element>(
    op: &str,
    coefficients: &XData<T>,
    target: &XData<T>,
    target_view: ([usize; 4], [usize; 4]),
    rank: usize,
    pass: [bool; 3],
    matrix: [f64; 12],
    coordinates: Option<(&XData<T::Real>, usize)>,
    interp: &Interpolation,
) -> Result<Gather<T>> {
    let app = coefficients.app().clone();
    let source_view = array_view(op, coefficients, rank)?;
    let mut layouts = vec![coefficients.layout(), target.layout()];
    if let Some((c, _)) = coordinates {
        layouts.push(c.layout());
    }
    let index = index_type_for(&layouts, &[]);
    let double = app.device().fp64;
    let extra = format!(
        " -DCOORD={} -DCOORD_DOUBLE={} -DMAP_COORDS={} -DPASS_Z={} -DPASS_Y={} -DPASS_X={}",
        if double { "double" } else { "float" },
        u8::from(double),
        u8::from(coordinates.is_some()),
        u8::from(pass[0]),
        u8::from(pass[1]),
        u8::from(pass[2])
    );
    let options = build_options::<T>(interp.order, index, &extra);
    let program = app.build_program("resample.cl", &kernels::with_common(kernels::RESAMPLE), &options)?;
    let kernel = program.kernel("resample_gather")?.owned_by(op);
    let pad = interp.pad() as f64;
    Ok(Gather {
        kernel,
        source: coefficients.clone(),
        target: target.clone(),
        source_view,
        target_view,
        matrix,
        pad,
        coordinates: coordinates.map(|(c, _)| c.clone()),
        coordinate_stride: coordinates.map_or(0, |(_, s)| s),
        double,
        index,
        mode: interp.mode,
    })
}

fn launch_gather<T: Element>(g: &mut Gather<T>, cval: T) -> Result<()> {
    let ((se, sx), (e, sy)) = (g.source_view, g.target_view);
    let rows = e.iter().take(3).product::<usize>();
    let nx = e.get(3).copied().unwrap_or(1);
    if rows * nx == 0 {
        return Ok(());
    }
    let idx = g.index;
    let mut l = g.kernel.launch().input(&g.source).index(idx, g.source.offset() as u64);
    for s in sx {
        l = l.index(idx, s as u64);
    }
    for n in se.iter().skip(1) {
        l = l.index(idx, *n as u64);
    }
    l = l.output(&g.target).index(idx, g.target.offset() as u64);
    for s in sy {
        l = l.index(idx, s as u64);
    }
    for n in e {
        l = l.index(idx, n as u64);
    }
    l = match &g.coordinates {
        Some(c) => l.input(c).index(idx, g.coordinate_stride as u64),
        // An unused argument still needs a buffer: the source stands in.
        None => l.input(&g.source).index(idx, 0),
    };
    for v in g.matrix {
        l = if g.double { l.scalar(v) } else { l.scalar(v as f32) };
    }
    l = if g.double { l.scalar(g.pad) } else { l.scalar(g.pad as f32) };
    let outputs = (rows * nx) as u64;
    l.scalar(cval)
        .scalar(g.mode.code())
        .scalar(g.mode.tap_mode().code())
        .global(&[(rows * nx).div_ceil(GROUP) * GROUP])
        .local(&[GROUP])
        .work(outputs * 2 * std::mem::size_of::<T>() as u64, 0)
        .enqueue()
}

/// Spline interpolation of real or complex data onto a new grid — scipy.ndimage's zoom, shift,
/// affine_transform and rotate ([`Transform`]) with order 0 to 5, scipy's modes, cval and prefiltering
/// ([`Interpolation`]). Interpolates at most the last three axes (leading axes that the map leaves alone are a
/// batch). Computed in the element's precision (scipy computes in float64 and rounds to the output type).
///
/// ```
/// use cliper::{ClApp, Resample, ResampleParams, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[1, 3], &[0.0f64, 1.0, 4.0])?;
/// // Linear zoom ×5/3 of one row: samples at 0, 0.5, 1, 1.5, 2.
/// let y = Resample::apply(&x, ResampleParams::zoom(&[1.0, 5.0 / 3.0]).order(1))?.to_vec()?;
/// assert_eq!(y, vec![0.0, 0.5, 1.0, 2.5, 4.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Resample<T: Element> {
    input: XData<T>,
    output: XData<T>,
    params: ResampleParams,
    plan: Prepared<Plan<T>>,
}

impl<T: Element> Resample<T> {
    /// `output = transform(input)`.
    pub fn new(input: &XData<T>, output: &XData<T>, params: ResampleParams) -> Resample<T> {
        Resample { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, runs once and returns it.
    pub fn apply(input: &XData<T>, params: ResampleParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), "Resample", &Self::output_shape(input.shape(), &params)?)?;
        Resample::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: scipy's (zoom: `round(n · factor)`; rotate with reshape: the rotated bounding box).
    ///
    /// ```
    /// use cliper::{Resample, ResampleParams};
    /// assert_eq!(Resample::<f32>::output_shape(&[5, 7], &ResampleParams::zoom(&[2.0, 0.5]))?, vec![10, 4]);
    /// assert_eq!(Resample::<f32>::output_shape(&[10, 20], &ResampleParams::rotate(90.0))?, vec![20, 10]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], params: &ResampleParams) -> Result<Vec<usize>> {
        Ok(resolve(input, params)?.0)
    }

    /// What `init` planned; `None` before.
    pub fn strategy(&self) -> Option<ResampleStrategy> {
        self.plan.as_ref().map(|p| p.strategy.clone())
    }
}

impl<T: Element> Process for Resample<T> {
    fn name(&self) -> &str {
        self.params.transform.name()
    }

    fn init(&mut self) -> Result<()> {
        let op = self.params.transform.name();
        let shape = self.input.shape().to_vec();
        let (out, mapping) = resolve(&shape, &self.params)?;
        if self.output.shape() != out.as_slice() {
            return Err(Error::shape(op, &out, self.output.shape()));
        }
        let interp = self.params.interpolation;
        let nd = shape.len();
        let app = self.input.app().clone();
        let cval = T::from_c64(interp.cval);
        let pad = interp.pad();
        match mapping {
            Mapping::Separable(axes) => {
                let interpolated: Vec<bool> = axes.iter().map(Option::is_some).collect();
                if !interpolated.contains(&true) {
                    let mut copy = Elementwise::new(&[&self.input], &self.output, Expr::input(0));
                    copy.init()?;
                    let prefilter = Prefilter::plan(op, &self.input, 0, &[], 0, interp.mode, 0, interp.cval, None)?;
                    self.plan.set(Plan {
                        prefilter,
                        work: Work::Copy(Box::new(copy)),
                        index: IndexType::U32,
                        cval,
                        strategy: ResampleStrategy::Copy,
                    });
                    return Ok(());
                }
                let rank = block_rank(op, nd, &interpolated)?;
                let slot_of = |axis: usize| 4 + axis - nd;
                let slots: Vec<usize> = (0..nd).filter(|&a| interpolated.get(a) == Some(&true)).map(slot_of).collect();
                let order = if interp.prefilter { interp.order } else { 0 };
                let prefilter =
                    Prefilter::plan(op, &self.input, rank, &slots, order, interp.mode, pad, interp.cval, None)?;
                let coefficients = prefilter.coefficients.clone();
                // Shrinking axes first keep the intermediates small.
                let mut order_of_axes: Vec<usize> = (0..nd).filter(|&a| interpolated.get(a) == Some(&true)).collect();
                let ratio = |a: &usize| {
                    out.get(*a).copied().unwrap_or(1) as f64 / coefficients.shape().get(*a).copied().unwrap_or(1) as f64
                };
                order_of_axes.sort_by(|a, b| ratio(a).total_cmp(&ratio(b)));
                let mut passes = Vec::new();
                let mut source = coefficients.clone();
                let real_is_f32 = std::mem::size_of::<T::Real>() == 4;
                for (k, &axis) in order_of_axes.iter().enumerate() {
                    let n_in = source.shape().get(axis).copied().unwrap_or(1);
                    if real_is_f32 && n_in + 6 >= 1 << 24 {
                        return Err(Error::Unsupported {
                            what: format!("{op} of float32 data along an axis of {n_in} samples (at most 2^24 − 6)"),
                        });
                    }
                    let n_out = out.get(axis).copied().unwrap_or(1);
                    let coord = axes.get(axis).copied().flatten().unwrap_or(AxisCoord::Shift(0.0));
                    let mut table = Vec::with_capacity(n_out * (interp.order + 3));
                    for o in 0..n_out {
                        let row = axis_row(coord.at(o) + pad as f64, n_in, interp.mode, interp.order);
                        table.push(row.start as f64);
                        table.push(if row.outside { 1.0 } else { 0.0 });
                        table.extend(row.weights.iter().take(interp.order + 1));
                    }
                    let table: Vec<T::Real> =
                        table.into_iter().map(|v| <T::Real as Element>::from_c64(Complex64::new(v, 0.0))).collect();
                    let table = XData::from_slice(&app, &[table.len()], &table)?;
                    let mut shape_after = source.shape().to_vec();
                    if let Some(n) = shape_after.get_mut(axis) {
                        *n = n_out;
                    }
                    let target = if k + 1 == order_of_axes.len() {
                        self.output.clone()
                    } else {
                        XData::<T>::uninit(&app, op, &shape_after)?
                    };
                    let source_view = array_view(op, &source, rank)?;
                    let target_view = array_view(op, &target, rank)?;
                    passes.push(AxisPass {
                        source: source.clone(),
                        target: target.clone(),
                        slot: slot_of(axis),
                        n_in,
                        table,
                        source_view,
                        target_view,
                    });
                    source = target;
                }
                let layouts: Vec<_> = passes.iter().flat_map(|p| [p.source.layout(), p.target.layout()]).collect();
                let index = index_type_for(&layouts, &[]);
                let program = app.build_program(
                    "resample.cl",
                    &kernels::with_common(kernels::RESAMPLE),
                    &build_options::<T>(interp.order, index, ""),
                )?;
                let kernel = program.kernel("resample_axis")?.owned_by(op);
                let strategy =
                    ResampleStrategy::Separable { prefilter: prefilter.method(), passes: order_of_axes.clone() };
                self.plan.set(Plan { prefilter, work: Work::Separable { kernel, passes }, index, cval, strategy });
            }
            Mapping::General { matrix, offset } => {
                // An axis passes through when its row and column are the identity's, its offset 0 and its extent
                // unchanged.
                let pure = |i: usize| {
                    (0..nd).all(|j| {
                        let e = if i == j { 1.0 } else { 0.0 };
                        matrix.get(i).and_then(|r| r.get(j)) == Some(&e)
                            && matrix.get(j).and_then(|r| r.get(i)) == Some(&e)
                    }) && offset.get(i) == Some(&0.0)
                        && shape.get(i) == out.get(i)
                };
                let interpolated: Vec<bool> = (0..nd).map(|i| !pure(i)).collect();
                let rank = block_rank(op, nd, &interpolated)?;
                let first = nd - rank;
                let mut pass = [true; 3];
                let mut m = [0.0; 12];
                for (k, axis) in (first..nd).enumerate() {
                    let slot = 3 - rank + k;
                    if let Some(p) = pass.get_mut(slot) {
                        *p = !interpolated.get(axis).copied().unwrap_or(false);
                    }
                    for (l, other) in (first..nd).enumerate() {
                        if let Some(v) = m.get_mut(slot * 3 + 3 - rank + l) {
                            *v = matrix.get(axis).and_then(|r| r.get(other)).copied().unwrap_or(0.0);
                        }
                    }
                    if let Some(v) = m.get_mut(9 + slot) {
                        *v = offset.get(axis).copied().unwrap_or(0.0);
                    }
                }
                let slots: Vec<usize> =
                    (0..3).filter(|&s| !pass.get(s).copied().unwrap_or(true)).map(|s| s + 1).collect();
                let order = if interp.prefilter { interp.order } else { 0 };
                let prefilter =
                    Prefilter::plan(op, &self.input, rank, &slots, order, interp.mode, pad, interp.cval, None)?;
                let target_view = array_view(op, &self.output, rank)?;
                let gather =
                    plan_gather(op, &prefilter.coefficients, &self.output, target_view, rank, pass, m, None, &interp)?;
                let index = gather.index;
                let strategy = ResampleStrategy::Gather {
                    prefilter: prefilter.method(),
                    axes: slots.len(),
                    double_coordinates: gather.double,
                };
                self.plan.set(Plan { prefilter, work: Work::Gather(Box::new(gather)), index, cval, strategy });
            }
        }
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("Resample")?;
        plan.prefilter.launch()?;
        let (idx, cval, mode) = (plan.index, plan.cval, self.params.interpolation.mode);
        match &mut plan.work {
            Work::Copy(copy) => copy.launch(),
            Work::Gather(g) => launch_gather(g, cval),
            Work::Separable { kernel, passes } => {
                for pass in passes.iter() {
                    let ((_, sx), (e, sy)) = (pass.source_view, pass.target_view);
                    let rows = e.iter().take(3).product::<usize>();
                    let nx = e.get(3).copied().unwrap_or(1);
                    if rows * nx == 0 {
                        continue;
                    }
                    let mut l = kernel.launch().input(&pass.source).index(idx, pass.source.offset() as u64);
                    for s in sx {
                        l = l.index(idx, s as u64);
                    }
                    l = l.output(&pass.target).index(idx, pass.target.offset() as u64);
                    for s in sy {
                        l = l.index(idx, s as u64);
                    }
                    for n in e {
                        l = l.index(idx, n as u64);
                    }
                    let outputs = (rows * nx) as u64;
                    let reads = pass.source.len() as u64;
                    l.scalar(pass.slot as i32 - 1)
                        .index(idx, pass.n_in as u64)
                        .input(&pass.table)
                        .scalar(cval)
                        .scalar(mode.code())
                        .scalar(mode.tap_mode().code())
                        .global(&[(rows * nx).div_ceil(GROUP) * GROUP])
                        .local(&[GROUP])
                        .work((outputs + reads) * std::mem::size_of::<T>() as u64, 0)
                        .enqueue()?;
                }
                Ok(())
            }
        }
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// scipy.ndimage.map_coordinates: the input (up to three axes) interpolated at the coordinates given per output
/// element — `coordinates` has shape `[ndim, *output_shape]` (row `a` the coordinates along input axis `a`),
/// contiguous, of the input's real type. Order, mode, cval and prefilter as [`Interpolation`].
///
/// ```
/// use cliper::{ClApp, Interpolation, MapCoordinates, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 2], &[0.0f64, 1.0, 2.0, 3.0])?;
/// let c = XData::from_slice(&app, &[2, 2], &[0.5, 1.0, 0.5, 0.0])?; // points (0.5, 0.5) and (1, 0)
/// let y = MapCoordinates::apply(&x, &c, Interpolation::new(1))?.to_vec()?;
/// assert_eq!(y, vec![1.5, 2.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct MapCoordinates<T: Element> {
    input: XData<T>,
    coordinates: XData<T::Real>,
    output: XData<T>,
    params: Interpolation,
    plan: Prepared<Plan<T>>,
}

impl<T: Element> MapCoordinates<T> {
    /// `output = map_coordinates(input, coordinates)`.
    pub fn new(
        input: &XData<T>,
        coordinates: &XData<T::Real>,
        output: &XData<T>,
        params: Interpolation,
    ) -> MapCoordinates<T> {
        MapCoordinates {
            input: input.clone(),
            coordinates: coordinates.clone(),
            output: output.clone(),
            params,
            plan: Prepared::default(),
        }
    }

    /// Allocates the output, runs once and returns it.
    pub fn apply(input: &XData<T>, coordinates: &XData<T::Real>, params: Interpolation) -> Result<XData<T>> {
        let shape = Self::output_shape(input.shape(), coordinates.shape(), &params)?;
        let out = XData::uninit(input.app(), "MapCoordinates", &shape)?;
        MapCoordinates::new(input, coordinates, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the coordinates' without their first axis.
    ///
    /// ```
    /// use cliper::{Interpolation, MapCoordinates};
    /// assert_eq!(MapCoordinates::<f32>::output_shape(&[4, 5], &[2, 3, 7], &Interpolation::default())?, vec![3, 7]);
    /// assert!(MapCoordinates::<f32>::output_shape(&[4, 5], &[3, 7], &Interpolation::default()).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], coordinates: &[usize], params: &Interpolation) -> Result<Vec<usize>> {
        let op = "map_coordinates";
        params.check(op)?;
        if input.is_empty() || input.len() > 3 {
            return Err(Error::Unsupported { what: format!("{op} of an input of {} axes (1 to 3)", input.len()) });
        }
        match coordinates.split_first() {
            Some((&n, rest)) if n == input.len() => Ok(rest.to_vec()),
            _ => Err(Error::invalid(
                op,
                format!(
                    "coordinates of shape {coordinates:?} for an input of shape {input:?}: the first axis must hold one \
                     row per input axis ({})",
                    input.len()
                ),
            )),
        }
    }

    /// What `init` planned; `None` before.
    pub fn strategy(&self) -> Option<ResampleStrategy> {
        self.plan.as_ref().map(|p| p.strategy.clone())
    }
}

impl<T: Element> Process for MapCoordinates<T> {
    fn name(&self) -> &str {
        "map_coordinates"
    }

    fn init(&mut self) -> Result<()> {
        let op = "map_coordinates";
        let out = Self::output_shape(self.input.shape(), self.coordinates.shape(), &self.params)?;
        if self.output.shape() != out.as_slice() {
            return Err(Error::shape(op, &out, self.output.shape()));
        }
        for (what, contiguous, shape) in [
            ("coordinates", self.coordinates.is_contiguous(), self.coordinates.shape()),
            ("output", self.output.is_contiguous(), self.output.shape()),
        ] {
            if !contiguous {
                return Err(Error::Unsupported {
                    what: format!("{op} with a strided {what} view of shape {shape:?}; make it contiguous first"),
                });
            }
        }
        let interp = self.params;
        let rank = self.input.ndim();
        let count: usize = out.iter().product();
        let pass = [rank < 3, rank < 2, false];
        let slots: Vec<usize> = (4 - rank..4).collect();
        let order = if interp.prefilter { interp.order } else { 0 };
        let prefilter =
            Prefilter::plan(op, &self.input, rank, &slots, order, interp.mode, interp.pad(), interp.cval, None)?;
        // The output as one flat row.
        let flat = self.output.reshape(&[count])?;
        let target_view = array_view(op, &flat, 1)?;
        let gather = plan_gather(
            op,
            &prefilter.coefficients,
            &flat,
            target_view,
            rank,
            pass,
            [0.0; 12],
            Some((&self.coordinates, count)),
            &interp,
        )?;
        let index = gather.index;
        let strategy =
            ResampleStrategy::Gather { prefilter: prefilter.method(), axes: rank, double_coordinates: gather.double };
        let cval = T::from_c64(interp.cval);
        self.plan.set(Plan { prefilter, work: Work::Gather(Box::new(gather)), index, cval, strategy });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("MapCoordinates")?;
        plan.prefilter.launch()?;
        let cval = plan.cval;
        match &mut plan.work {
            Work::Gather(g) => launch_gather(g, cval),
            _ => Ok(()),
        }
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::ClApp;

    /// The resampling program builds without compiler warnings in the variants the processes build: float and
    /// double, real and complex, the separable passes, and the gathers (affine and coordinate arrays, axes passed
    /// through, coordinates in float64).
    #[test]
    fn the_program_builds_without_warnings() {
        // Compiled from source every time: a program from the disk cache has no compiler log.
        let app = ClApp::builder().use_env(true).program_cache(None).build().unwrap();
        let source = kernels::with_common(kernels::RESAMPLE);
        let gather = |d: u8, map: u8, pass: u8| {
            let coord = if d == 1 { "double" } else { "float" };
            format!(" -DCOORD={coord} -DCOORD_DOUBLE={d} -DMAP_COORDS={map} -DPASS_Z={pass} -DPASS_Y=0 -DPASS_X=0")
        };
        let double = app.device().fp64;
        for (options, needs_double) in [
            (build_options::<f32>(3, IndexType::U32, ""), false),
            (build_options::<f32>(0, IndexType::U64, &gather(0, 1, 1)), false),
            (build_options::<f32>(5, IndexType::U32, &gather(u8::from(double), 0, 0)), false),
            (build_options::<f64>(4, IndexType::U32, &gather(1, 1, 0)), true),
            (build_options::<Complex64>(2, IndexType::U32, &gather(1, 0, 1)), true),
        ] {
            if needs_double && !double {
                continue;
            }
            let program = app.build_program("resample.cl", &source, &options).unwrap();
            // NVIDIA's compiler (driver 580) notes for every kernel of every program, a one-line empty kernel
            // included, that it "is a kernel, so overriding noinline attribute": not about our source.
            let log = program.build_log().unwrap();
            let ours: Vec<&str> = log
                .lines()
                .filter(|l| l.to_lowercase().contains("warning") && !l.contains("is a kernel, so overriding noinline"))
                .collect();
            assert!(ours.is_empty(), "{options}:\n{log}");
        }
    }
}
