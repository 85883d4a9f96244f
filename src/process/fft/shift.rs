//! [`FftShift`]: numpy's `fftshift` / `ifftshift`, moving the zero frequency to the centre and back.

use crate::app::Kernel;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::planning::MAX_AXES;
use crate::process::planning::index_type_for;
use crate::process::{Prepared, Process};

/// `numpy.fft.fftshift(x, axes)` (each axis rolled by ⌊n/2⌋) or, built with [`FftShift::inverse`], `ifftshift`
/// (rolled back by ⌊n/2⌋) — the two differ for odd lengths. Any real or complex element type, strided views,
/// up to eight axes longer than 1. The output must not overlap the input.
///
/// ```
/// use cliper::{ClApp, FftShift, Process, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[5], &[0.0f32, 1.0, 2.0, -2.0, -1.0])?; // numpy.fft.fftfreq(5) · 5
/// let y = XData::zeros(&app, &[5])?;
/// let mut s = FftShift::new(&x, &y);
/// s.init()?;
/// s.launch()?;
/// assert_eq!(y.to_vec()?, vec![-2.0, -1.0, 0.0, 1.0, 2.0]);
/// let mut back = FftShift::inverse(&y, &x);
/// back.init()?;
/// back.launch()?;
/// assert_eq!(x.to_vec()?, vec![0.0, 1.0, 2.0, -2.0, -1.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct FftShift<T: Element> {
    x: XData<T>,
    out: XData<T>,
    axes: Option<Vec<usize>>,
    inverse: bool,
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
}

const GROUP: usize = 256;

impl<T: Element> FftShift<T> {
    /// `fftshift` over every axis.
    pub fn new(x: &XData<T>, out: &XData<T>) -> FftShift<T> {
        FftShift { x: x.clone(), out: out.clone(), axes: None, inverse: false, plan: Prepared::default() }
    }

    /// `ifftshift` over every axis.
    pub fn inverse(x: &XData<T>, out: &XData<T>) -> FftShift<T> {
        FftShift { inverse: true, ..FftShift::new(x, out) }
    }

    /// Shift only these axes (the others are copied as they are).
    pub fn axes(mut self, axes: &[usize]) -> FftShift<T> {
        self.axes = Some(axes.to_vec());
        self
    }
}

impl<T: Element> Process for FftShift<T> {
    fn name(&self) -> &str {
        if self.inverse { "IFftShift" } else { "FftShift" }
    }

    fn init(&mut self) -> Result<()> {
        let op = self.name().to_string();
        let (x, out) = (&self.x, &self.out);
        let shape = x.shape();
        if out.shape() != shape {
            return Err(Error::Shape {
                op,
                expected: format!("an output of the input's shape {shape:?}"),
                got: format!("{:?}", out.shape()),
            });
        }
        let axes = self.axes.clone().unwrap_or_else(|| (0..shape.len()).collect());
        if let Some(&bad) = axes.iter().find(|&&a| a >= shape.len()) {
            return Err(Error::invalid(&op, format!("axis {bad} is out of range for shape {shape:?}")));
        }
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
                } else if self.inverse {
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
        };
        plan.index = index_type_for(&[x.layout(), out.layout()], &[plan.count]);
        if plan.count > 0 {
            let options = format!("{} -DIDX={} -DROLL=1", T::build_options(), plan.index.cl_type());
            let program = x.app().build_program("fft_shift.cl", &kernels::with_common(kernels::FFT_SHIFT), &options)?;
            plan.kernel = Some(program.kernel("roll")?.owned_by(&op));
        }
        self.plan.set(plan);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let name = if self.inverse { "IFftShift" } else { "FftShift" };
        let plan = self.plan.get(name)?;
        let Some(kernel) = plan.kernel.as_mut() else { return Ok(()) };
        let idx = plan.index;
        let groups = (plan.count as usize).div_ceil(GROUP).clamp(1, 1 << 16);
        kernel
            .launch()
            .input(&self.x)
            .index(idx, self.x.offset() as u64)
            .output(&self.out)
            .index(idx, self.out.offset() as u64)
            .scalar(plan.nd)
            .scalar(plan.shape)
            .scalar(plan.shift)
            .scalar(plan.sx)
            .scalar(plan.so)
            .index(idx, plan.count)
            .global(&[groups * GROUP])
            .local(&[GROUP])
            .work(plan.count * 2 * std::mem::size_of::<T>() as u64, 0)
            .enqueue()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
