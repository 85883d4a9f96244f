//! [`Fista`]: the fast iterative shrinkage-thresholding algorithm for `min ½|A x − y|² + g(x)`, given the normal
//! operator `AᴴA` ([`LinearOperator`]), `b = Aᴴ y` and the proximal map of `g` ([`Proximal`]), in BART's order of
//! steps so that `pics`'s results can be reproduced.

use super::cg::LinearOperator;
use crate::app::{ClApp, Kernel};
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use num_complex::Complex;

/// A proximal map on device arrays: `apply(x, out, iteration)` enqueues `out = prox_{τg}(x)` (iteration counts
/// from 0, for maps that change from one iteration to the next, as cycle-spinning wavelets do).
///
/// ```
/// use cliper::{Proximal, XData};
/// /// The prox of the indicator of x ≥ 0: clamp below at 0.
/// struct NonNegative;
/// impl Proximal<f32> for NonNegative {
///     fn apply(&mut self, x: &XData<f32>, out: &XData<f32>, _: usize) -> cliper::Result<()> {
///         out.write(&x.to_vec()?.iter().map(|v| v.max(0.0)).collect::<Vec<_>>())
///     }
/// }
/// let app = cliper::ClApp::new()?;
/// let (x, out) = (XData::from_slice(&app, &[2], &[-1.0f32, 2.0])?, XData::zeros(&app, &[2])?);
/// NonNegative.apply(&x, &out, 0)?;
/// assert_eq!(out.to_vec()?, vec![0.0, 2.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub trait Proximal<T: Element> {
    /// Enqueues `out = prox(x)` (`out` is never `x`).
    fn apply(&mut self, x: &XData<T>, out: &XData<T>, iteration: usize) -> Result<()>;
}

/// The settings of a [`Fista`]: iterations (exactly that many) and the step τ (BART's default 0.95, for a
/// normal operator of norm ≤ 1 as SENSE with normalised maps has).
///
/// ```
/// let p = cliper::FistaParams::new(30);
/// assert_eq!((p.iterations, p.step), (30, 0.95));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FistaParams {
    /// Iterations.
    pub iterations: usize,
    /// The gradient step τ.
    pub step: f64,
}

impl FistaParams {
    /// `iterations` iterations, τ = 0.95.
    pub fn new(iterations: usize) -> FistaParams {
        FistaParams { iterations, step: 0.95 }
    }

    /// The step τ.
    pub fn step(mut self, step: f64) -> FistaParams {
        self.step = step;
        self
    }
}

const GROUP: usize = 256;

/// FISTA from `x = 0` in the order BART's `pics` runs it: each iteration `z = prox(x)`, then the momentum
/// `t' = (1 + √(1 + 4t²)) / 2`, `x = z + ((t − 1)/t')(z − z_prev)`, then the gradient step `x += τ(b − AᴴA x)`;
/// the result is the last gradient step (not thresholded). The momentum weights depend only on the iteration, so
/// they are computed on the host and nothing waits for the device.
///
/// ```
/// use cliper::{Fista, FistaParams, LinearOperator, Proximal, ScalarMultiply, Process, XData};
/// // min ½|x − y|² + 0 (prox = identity, AᴴA = I): one gradient step of τ = 1 gives y.
/// struct Identity;
/// impl LinearOperator<f32> for Identity {
///     fn apply(&mut self, x: &XData<f32>, out: &XData<f32>) -> cliper::Result<()> { out.copy_from(x) }
/// }
/// impl Proximal<f32> for Identity {
///     fn apply(&mut self, x: &XData<f32>, out: &XData<f32>, _: usize) -> cliper::Result<()> { out.copy_from(x) }
/// }
/// let app = cliper::ClApp::new()?;
/// let b = XData::from_slice(&app, &[3], &[1.0f32, -2.0, 3.0])?;
/// let x = XData::zeros(&app, &[3])?;
/// Fista::new(&app, &[3], FistaParams::new(1).step(1.0))?.solve(&mut Identity, &mut Identity, &b, &x)?;
/// assert_eq!(x.to_vec()?, vec![1.0, -2.0, 3.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Fista<T: Element> {
    n: usize,
    params: FistaParams,
    z: XData<T>,
    z_prev: XData<T>,
    nx: XData<T>,
    /// fista_start, fista_momentum, fista_gradient.
    kernels: [Kernel; 3],
    index: IndexType,
}

impl<T: Element> Fista<T> {
    /// A solver for arrays of `shape` on `app`.
    pub fn new(app: &ClApp, shape: &[usize], params: FistaParams) -> Result<Fista<T>> {
        let n: usize = shape.iter().product();
        if n == 0 || !(params.step.is_finite() && params.step > 0.0) {
            return Err(Error::invalid("Fista", format!("shape {shape:?} and step {} (must be > 0)", params.step)));
        }
        let index = IndexType::for_extent(n as u64);
        let options = format!("{} -DIDX={} -DGROUP={GROUP}", T::build_options(), index.cl_type());
        let program = app.build_program("solve.cl", &kernels::with_common(kernels::SOLVE), &options)?;
        let kernel = |name: &str| program.kernel(name).map(|k| k.owned_by("Fista"));
        Ok(Fista {
            n,
            params,
            z: XData::zeros(app, shape)?,
            z_prev: XData::zeros(app, shape)?,
            nx: XData::zeros(app, shape)?,
            kernels: [kernel("fista_start")?, kernel("fista_momentum")?, kernel("fista_gradient")?],
            index,
        })
    }

    /// Enqueues the iterations for `b = Aᴴ y` into `x` (overwritten; contiguous, the solver's size).
    pub fn solve(
        &mut self,
        normal: &mut dyn LinearOperator<T>,
        prox: &mut dyn Proximal<T>,
        b: &XData<T>,
        x: &XData<T>,
    ) -> Result<()> {
        for (name, a) in [("b", b), ("x", x)] {
            if a.len() != self.n {
                let rule = format!("{name} of {} elements (like {:?})", self.n, self.z.shape());
                return Err(Error::shape_rule("Fista", rule, a.shape()));
            }
            if !a.is_packed() {
                return Err(Error::invalid(
                    "Fista",
                    format!("{name} must be contiguous from its buffer's start (XData::contiguous makes a copy)"),
                ));
            }
        }
        let real = |v: f64| T::Real::from_c64(Complex::new(v, 0.0));
        let (idx, n) = (self.index, self.n as u64);
        let groups = self.n.div_ceil(GROUP).clamp(1, 1024);
        let element = std::mem::size_of::<T>() as u64;
        let [start, ..] = &mut self.kernels;
        start
            .launch()
            .output("x", x)
            .output("z_prev", &self.z_prev)
            .index("n", idx, n)
            .global(&[groups * GROUP])
            .local(&[GROUP])
            .enqueue()?;
        let mut t = 1.0f64;
        for iteration in 0..self.params.iterations {
            prox.apply(x, &self.z, iteration)?;
            let t_next = (1.0 + (1.0 + 4.0 * t * t).sqrt()) / 2.0;
            let [_, momentum, _] = &mut self.kernels;
            momentum
                .launch()
                .input("z", &self.z)
                .in_out("z_prev", &self.z_prev)
                .output("x", x)
                .scalar("c", real((t - 1.0) / t_next))
                .index("n", idx, n)
                .global(&[groups * GROUP])
                .local(&[GROUP])
                .work(4 * n * element, 3 * n)
                .enqueue()?;
            t = t_next;
            normal.apply(x, &self.nx)?;
            let [_, _, gradient] = &mut self.kernels;
            gradient
                .launch()
                .in_out("x", x)
                .input("b", b)
                .input("nx", &self.nx)
                .scalar("tau", real(self.params.step))
                .index("n", idx, n)
                .global(&[groups * GROUP])
                .local(&[GROUP])
                .work(4 * n * element, 3 * n)
                .enqueue()?;
        }
        Ok(())
    }
}
