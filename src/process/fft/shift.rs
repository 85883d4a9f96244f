//! [`FftShift`]: numpy's `fftshift` / `ifftshift`, moving the zero frequency to the centre and back.

use crate::app::Kernel;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::elementwise::ElementwiseStrategy;
use crate::process::planning::MAX_AXES;
use crate::process::planning::index_type_for;
use crate::process::{Prepared, Process};

/// The parameters of an [`FftShift`]: which way and over which axes. Default: `fftshift` over every axis.
///
/// ```
/// use cliper::FftShiftParams;
/// let p = FftShiftParams::inverse().axes(&[1, 2]);
/// assert!(p.is_inverse() && p != FftShiftParams::default());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FftShiftParams {
    axes: Option<Vec<usize>>,
    inverse: bool,
}

impl FftShiftParams {
    /// `ifftshift` (each axis rolled back by ⌊n/2⌋) over every axis.
    pub fn inverse() -> FftShiftParams {
        FftShiftParams { axes: None, inverse: true }
    }

    /// Shift only these axes (the others are copied as they are).
    pub fn axes(mut self, axes: &[usize]) -> FftShiftParams {
        self.axes = Some(axes.to_vec());
        self
    }

    /// Whether this is `ifftshift`.
    pub fn is_inverse(&self) -> bool {
        self.inverse
    }
}

/// `numpy.fft.fftshift(x, axes)` (each axis rolled by ⌊n/2⌋) or, with [`FftShiftParams::inverse`],
/// `ifftshift` (rolled back by ⌊n/2⌋) — the two differ for odd lengths. Any real or complex element type,
/// strided views, up to eight axes longer than 1. The output must not overlap the input.
///
/// ```
/// use cliper::{ClApp, FftShift, FftShiftParams, Process, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[5], &[0.0f32, 1.0, 2.0, -2.0, -1.0])?; // numpy.fft.fftfreq(5) · 5
/// let y = FftShift::apply(&x, FftShiftParams::default())?;
/// assert_eq!(y.to_vec()?, vec![-2.0, -1.0, 0.0, 1.0, 2.0]);
/// FftShift::new(&y, &x, FftShiftParams::inverse()).run()?;
/// assert_eq!(x.to_vec()?, vec![0.0, 1.0, 2.0, -2.0, -1.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct FftShift<T: Element> {
    x: XData<T>,
    out: XData<T>,
    params: FftShiftParams,
    plan: Prepared<Plan>,
}

struct Plan {
    kernel: Option<Kernel>,
    index: IndexType,
    nd: u32,
    shape: [u64; MAX_AXES],
    shift: [u64; MAX_AXES],
    sx: [u64; MAX_AXES],
    so: [u64; MAX_AXES],
    count: u64,
    groups: usize,
}

const GROUP: usize = 256;

impl<T: Element> FftShift<T> {
    /// The shift `params` describe of `x` into `out` (same shape, not overlapping).
    pub fn new(x: &XData<T>, out: &XData<T>, params: FftShiftParams) -> FftShift<T> {
        FftShift { x: x.clone(), out: out.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, shifts `x` into it once and returns it.
    pub fn apply(x: &XData<T>, params: FftShiftParams) -> Result<XData<T>> {
        let op = if params.inverse { "IFftShift" } else { "FftShift" };
        let out = XData::uninit(x.app(), op, &Self::output_shape(x.shape(), &params)?)?;
        FftShift::new(x, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the input's (an error when an axis is out of range).
    ///
    /// ```
    /// use cliper::{FftShift, FftShiftParams};
    /// assert_eq!(FftShift::<f32>::output_shape(&[4, 6], &FftShiftParams::default().axes(&[1]))?, vec![4, 6]);
    /// assert!(FftShift::<f32>::output_shape(&[4, 6], &FftShiftParams::default().axes(&[2])).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize], params: &FftShiftParams) -> Result<Vec<usize>> {
        shifted_axes(if params.inverse { "IFftShift" } else { "FftShift" }, shape, params)?;
        Ok(shape.to_vec())
    }

    /// The roll `init` planned; `None` before `init`.
    pub fn strategy(&self) -> Option<ElementwiseStrategy> {
        self.plan
            .as_ref()
            .map(|p| ElementwiseStrategy::one_kernel(p.kernel.is_some(), p.nd as usize, p.groups, GROUP, p.index))
    }
}

/// The axes `params` shift, checked against `shape`.
fn shifted_axes(op: &str, shape: &[usize], params: &FftShiftParams) -> Result<Vec<usize>> {
    let axes = params.axes.clone().unwrap_or_else(|| (0..shape.len()).collect());
    if let Some(&bad) = axes.iter().find(|&&a| a >= shape.len()) {
        return Err(Error::axis(op, bad as isize, shape));
    }
    Ok(axes)
}

impl<T: Element> Process for FftShift<T> {
    fn name(&self) -> &str {
        if self.params.inverse { "IFftShift" } else { "FftShift" }
    }

    fn init(&mut self) -> Result<()> {
        let op = self.name().to_string();
        let (x, out) = (&self.x, &self.out);
        let shape = x.shape();
        if out.shape() != shape {
            return Err(Error::shape_because(op, shape, out.shape(), "the input's shape"));
        }
        let axes = shifted_axes(&op, shape, &self.params)?;
        if out.overlaps(x) && !out.is_empty() {
            return Err(Error::Unsupported {
                what: format!("{op} in place: give an output that does not overlap the input"),
            });
        }
        // (extent, shift, input stride, output stride) of each axis longer than 1.
        let kept: Vec<(usize, usize, usize, usize)> = shape
            .iter()
            .zip(x.strides())
            .zip(out.strides())
            .enumerate()
            .filter(|&(_, ((&n, _), _))| n > 1)
            .map(|(k, ((&n, &sx), &so))| {
                let half = n / 2;
                let shift = if !axes.contains(&k) {
                    0
                } else if self.params.inverse {
                    n - half
                } else {
                    half
                };
                (n, shift, sx, so)
            })
            .collect();
        if kept.len() > MAX_AXES {
            return Err(Error::Unsupported {
                what: format!("{op}: shape {shape:?} has {} axes longer than 1; at most {MAX_AXES}", kept.len()),
            });
        }
        // One value per kept axis; the slots past `nd` hold extent 1, shift 0 and strides 0.
        let column = |pick: fn(&(usize, usize, usize, usize)) -> usize, fill: u64| -> [u64; MAX_AXES] {
            std::array::from_fn(|slot| kept.get(slot).map_or(fill, |a| pick(a) as u64))
        };
        let mut plan = Plan {
            kernel: None,
            index: IndexType::U32,
            nd: kept.len() as u32,
            shape: column(|a| a.0, 1),
            shift: column(|a| a.1, 0),
            sx: column(|a| a.2, 0),
            so: column(|a| a.3, 0),
            count: out.len() as u64,
            groups: out.len().div_ceil(GROUP).clamp(1, 1 << 16),
        };
        plan.index = index_type_for(&[x.layout(), out.layout()], &[plan.count]);
        if plan.count > 0 {
            let options = format!("{} -DIDX={}", T::build_options(), plan.index.cl_type());
            let program = x.app().build_program("fft_shift.cl", &kernels::with_common(kernels::FFT_SHIFT), &options)?;
            plan.kernel = Some(program.kernel("roll")?.owned_by(&op));
        }
        self.plan.set(plan);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let name = if self.params.inverse { "IFftShift" } else { "FftShift" };
        let plan = self.plan.get(name)?;
        let Some(kernel) = plan.kernel.as_mut() else { return Ok(()) };
        let (idx, groups) = (plan.index, plan.groups);
        kernel
            .launch()
            .input("x", &self.x)
            .index("x0", idx, self.x.offset() as u64)
            .output("out", &self.out)
            .index("o0", idx, self.out.offset() as u64)
            .scalar("nd", plan.nd)
            .scalar("shape", plan.shape)
            .scalar("shift", plan.shift)
            .scalar("sx", plan.sx)
            .scalar("so", plan.so)
            .index("count", idx, plan.count)
            .global(&[groups * GROUP])
            .local(&[GROUP])
            .work(plan.count * 2 * std::mem::size_of::<T>() as u64, 0)
            .enqueue()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
