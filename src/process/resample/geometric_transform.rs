//! [`Resample`]: scipy.ndimage's zoom, shift, affine_transform and rotate.
//!
//! Zoom, shift and axis-aligned affine maps are separable: one pass per interpolated axis, each output index
//! reading `order + 1` samples through a table the host computes in float64 exactly as scipy's NI_ZoomShift does
//! (so edges, modes and rounding of the coordinates match scipy's). Rotations and general matrices gather: every
//! output element computes its coordinate on the device (in float64 where the device has it) and sums the
//! `(order + 1)^axes` products, as scipy's NI_GeometricTransform.

use super::interp_plan::{AxisPass, Plan, Work, block_rank, build_options, plan_gather};
use super::interpolation::ResampleStrategy;
use super::mode::axis_row;
use super::resample_params::{AxisCoord, Mapping, ResampleParams, resolve};
use super::spline_filter::Prefilter;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::elementwise::{Elementwise, Expr};
use crate::process::planning::{array_view, index_type_for};
use crate::process::{Prepared, Process};
use num_complex::Complex64;

/// Spline interpolation of real or complex data onto a new grid — scipy.ndimage's zoom, shift,
/// affine_transform and rotate ([`Transform`](super::Transform)) with order 0 to 5, scipy's modes, cval and
/// prefiltering ([`Interpolation`](super::Interpolation)). Interpolates at most the last three axes (leading axes
/// that the map leaves alone are a batch). Computed in the element's precision (scipy computes in float64 and rounds to the output type).
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

impl<T: Element> Resample<T> {
    /// The identity map: a copy (after the prefilter plan of no axes, which does nothing).
    fn plan_copy(&self, op: &str) -> Result<Plan<T>> {
        let interp = self.params.interpolation;
        let mut copy = Elementwise::new(&[&self.input], &self.output, Expr::input(0));
        copy.init()?;
        let prefilter = Prefilter::plan(op, &self.input, 0, &[], 0, interp.mode, 0, interp.cval, None)?;
        let cval = T::from_c64(interp.cval);
        Ok(Plan {
            prefilter,
            work: Work::Copy(Box::new(copy)),
            index: IndexType::U32,
            cval,
            strategy: ResampleStrategy::Copy,
        })
    }

    /// One interpolation pass per axis with a coordinate map in `axes`, shrinking axes first, into `out`.
    fn plan_separable(&self, op: &str, out: &[usize], axes: &[Option<AxisCoord>]) -> Result<Plan<T>> {
        let interp = self.params.interpolation;
        let nd = axes.len();
        let app = self.input.app().clone();
        let interpolated: Vec<bool> = axes.iter().map(Option::is_some).collect();
        let rank = block_rank(op, nd, &interpolated)?;
        let slot_of = |axis: usize| 4 + axis - nd;
        let slots: Vec<usize> = (0..nd).filter(|&a| interpolated.get(a) == Some(&true)).map(slot_of).collect();
        let order = if interp.prefilter { interp.order } else { 0 };
        let prefilter =
            Prefilter::plan(op, &self.input, rank, &slots, order, interp.mode, interp.pad(), interp.cval, None)?;
        let coefficients = prefilter.coefficients.clone();
        // Shrinking axes first keep the intermediates small.
        let mut order_of_axes: Vec<usize> = (0..nd).filter(|&a| interpolated.get(a) == Some(&true)).collect();
        let ratio = |a: &usize| {
            out.get(*a).copied().unwrap_or(1) as f64 / coefficients.shape().get(*a).copied().unwrap_or(1) as f64
        };
        order_of_axes.sort_by(|a, b| ratio(a).total_cmp(&ratio(b)));
        let mut passes = Vec::new();
        let mut source = coefficients.clone();
        for (k, &axis) in order_of_axes.iter().enumerate() {
            let n_in = source.shape().get(axis).copied().unwrap_or(1);
            let n_out = out.get(axis).copied().unwrap_or(1);
            let coord = axes.get(axis).copied().flatten().unwrap_or(AxisCoord::Shift(0.0));
            let table = self.axis_table(op, coord, n_in, n_out)?;
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
            let (slot, next) = (slot_of(axis), target.clone());
            passes.push(AxisPass { source, target, slot, n_in, table, source_view, target_view });
            source = next;
        }
        let layouts: Vec<_> = passes.iter().flat_map(|p| [p.source.layout(), p.target.layout()]).collect();
        let index = index_type_for(&layouts, &[]);
        let program = app.build_program(
            "resample.cl",
            &kernels::with_common(kernels::RESAMPLE),
            &build_options::<T>(interp.order, index, ""),
        )?;
        let kernel = program.kernel("resample_axis")?.owned_by(op);
        let strategy = ResampleStrategy::Separable { prefilter: prefilter.method(), passes: order_of_axes };
        let cval = T::from_c64(interp.cval);
        Ok(Plan { prefilter, work: Work::Separable { kernel, passes }, index, cval, strategy })
    }

    /// The table of one separable pass, computed in float64 as scipy's NI_ZoomShift: per output index the first
    /// tap, whether the point lies outside, and the `order + 1` weights.
    fn axis_table(&self, op: &str, coord: AxisCoord, n_in: usize, n_out: usize) -> Result<XData<T::Real>> {
        let interp = self.params.interpolation;
        if std::mem::size_of::<T::Real>() == 4 && n_in + 6 >= 1 << 24 {
            return Err(Error::Unsupported {
                what: format!("{op} of float32 data along an axis of {n_in} samples (at most 2^24 − 6)"),
            });
        }
        let pad = interp.pad() as f64;
        let mut table = Vec::with_capacity(n_out * (interp.order + 3));
        for o in 0..n_out {
            let row = axis_row(coord.at(o) + pad, n_in, interp.mode, interp.order);
            table.push(row.start as f64);
            table.push(if row.outside { 1.0 } else { 0.0 });
            table.extend(row.weights.iter().take(interp.order + 1));
        }
        let table: Vec<T::Real> =
            table.into_iter().map(|v| <T::Real as Element>::from_c64(Complex64::new(v, 0.0))).collect();
        XData::from_slice(self.input.app(), &[table.len()], &table)
    }

    /// One gather over `out` for a general affine map (axes the map leaves alone pass through).
    fn plan_general(&self, op: &str, out: &[usize], matrix: &[Vec<f64>], offset: &[f64]) -> Result<Plan<T>> {
        let interp = self.params.interpolation;
        let shape = self.input.shape();
        let nd = shape.len();
        // An axis passes through when its row and column are the identity's, its offset 0 and its extent
        // unchanged.
        let pure = |i: usize| {
            (0..nd).all(|j| {
                let e = if i == j { 1.0 } else { 0.0 };
                matrix.get(i).and_then(|r| r.get(j)) == Some(&e) && matrix.get(j).and_then(|r| r.get(i)) == Some(&e)
            }) && offset.get(i) == Some(&0.0)
                && shape.get(i) == out.get(i)
        };
        let interpolated: Vec<bool> = (0..nd).map(|i| !pure(i)).collect();
        let rank = block_rank(op, nd, &interpolated)?;
        let (pass, m) = block_matrix(matrix, offset, &interpolated, rank);
        let slots: Vec<usize> = (0..3).filter(|&s| !pass.get(s).copied().unwrap_or(true)).map(|s| s + 1).collect();
        let order = if interp.prefilter { interp.order } else { 0 };
        let prefilter =
            Prefilter::plan(op, &self.input, rank, &slots, order, interp.mode, interp.pad(), interp.cval, None)?;
        let target_view = array_view(op, &self.output, rank)?;
        let gather = plan_gather(op, &prefilter.coefficients, &self.output, target_view, rank, pass, m, None, &interp)?;
        let index = gather.index;
        let strategy = ResampleStrategy::Gather {
            prefilter: prefilter.method(),
            axes: slots.len(),
            double_coordinates: gather.double,
        };
        let cval = T::from_c64(interp.cval);
        Ok(Plan { prefilter, work: Work::Gather(Box::new(gather)), index, cval, strategy })
    }
}

/// The gather's view of an affine map on the last `rank` axes: per block slot (of three, right-aligned) whether
/// it passes through, and the 3×3 matrix (row-major) followed by the three offsets.
fn block_matrix(matrix: &[Vec<f64>], offset: &[f64], interpolated: &[bool], rank: usize) -> ([bool; 3], [f64; 12]) {
    let nd = interpolated.len();
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
    (pass, m)
}

impl<T: Element> Process for Resample<T> {
    fn name(&self) -> &str {
        self.params.transform.name()
    }

    fn init(&mut self) -> Result<()> {
        let op = self.params.transform.name();
        let (out, mapping) = resolve(self.input.shape(), &self.params)?;
        if self.output.shape() != out.as_slice() {
            return Err(Error::shape(op, &out, self.output.shape()));
        }
        let plan = match mapping {
            Mapping::Separable(axes) if axes.iter().all(Option::is_none) => self.plan_copy(op)?,
            Mapping::Separable(axes) => self.plan_separable(op, &out, &axes)?,
            Mapping::General { matrix, offset } => self.plan_general(op, &out, &matrix, &offset)?,
        };
        self.plan.set(plan);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let mode = self.params.interpolation.mode;
        self.plan.get("Resample")?.launch(mode)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
