//! [`ConjugateGradient`]: `(M + λI) x = b` for a Hermitian positive semi-definite operator `M` on the device, every
//! iteration enqueued without waiting for the host: the step sizes are computed by one-work-group kernels into
//! device scalars that the next kernels read.

use crate::app::{ClApp, Kernel};
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use num_complex::Complex;

/// A linear map on device arrays, as the solvers use it: `apply(x, out)` enqueues `out = M x` (it must not wait
/// for the device, and `out` is never `x`). For [`ConjugateGradient`], `M` must be Hermitian positive
/// semi-definite, as a normal operator `AᴴA` is.
///
/// ```
/// use cliper::{ConjugateGradient, CgParams, LinearOperator, ScalarMultiply, Process, XData};
/// /// M = 2·I.
/// struct Twice;
/// impl LinearOperator<f32> for Twice {
///     fn apply(&mut self, x: &XData<f32>, out: &XData<f32>) -> cliper::Result<()> {
///         ScalarMultiply::new(x, out, 2.0).run()
///     }
/// }
/// let app = cliper::ClApp::new()?;
/// let b = XData::from_slice(&app, &[3], &[2.0f32, 4.0, 6.0])?;
/// let x = XData::zeros(&app, &[3])?;
/// let mut cg = ConjugateGradient::<f32>::new(&app, &[3], CgParams::new(5))?;
/// cg.solve(&mut Twice, &b, &x)?;
/// assert_eq!(x.to_vec()?, vec![1.0, 2.0, 3.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub trait LinearOperator<T: Element> {
    /// Enqueues `out = M x`.
    fn apply(&mut self, x: &XData<T>, out: &XData<T>) -> Result<()>;
}

/// The settings of a [`ConjugateGradient`]: the iterations (at most that many are enqueued), the Tikhonov weight
/// λ added to the operator (`(M + λI) x = b`, default 0) and a relative tolerance: the iterations stop changing
/// anything once `|r| ≤ tol·|b|` (default 0: every iteration runs, as BART's `pics -l2`).
///
/// ```
/// let p = cliper::CgParams::new(30).lambda(0.01).tolerance(1e-3);
/// assert_eq!((p.iterations, p.lambda, p.tolerance), (30, 0.01, 1e-3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CgParams {
    /// Iterations to run (at most).
    pub iterations: usize,
    /// λ in `(M + λI) x = b`.
    pub lambda: f64,
    /// Stop once `|r| ≤ tolerance · |b|`, tested after each step as BART's `conjgrad` does (a start already within it still
    /// takes one step).
    pub tolerance: f64,
}

impl CgParams {
    /// `iterations` iterations, λ = 0, no tolerance.
    pub fn new(iterations: usize) -> CgParams {
        CgParams { iterations, lambda: 0.0, tolerance: 0.0 }
    }

    /// The Tikhonov weight λ.
    pub fn lambda(mut self, lambda: f64) -> CgParams {
        self.lambda = lambda;
        self
    }

    /// The relative tolerance.
    pub fn tolerance(mut self, tolerance: f64) -> CgParams {
        self.tolerance = tolerance;
        self
    }
}

/// Work-group size of the vector kernels and of the one-group scalar kernels.
const GROUP: usize = 256;

/// Conjugate gradients on `(M + λI) x = b` from `x₀ = 0`, the textbook iteration (Hestenes–Stiefel):
/// `q = (M + λI) p`, `α = |r|² / Re⟨p, q⟩`, `x += α p`, `r −= α q`, `β = |r_new|² / |r|²`, `p = r + β p`. Its
/// vectors (`r`, `p`, `q`) are allocated once, for one shape; `solve` can run again on new right-hand sides.
/// `residuals` reads the relative residual norms `|r_k| / |r₀|` after a solve (one host read for all of them).
///
/// The exact arithmetic of an iteration is fixed (partial sums per work-group added in a fixed order), so a
/// solve gives the same bits on every run on a device.
///
/// ```
/// use cliper::{CgParams, ConjugateGradient, Elementwise, Expr, LinearOperator, Process, XData};
/// /// M = diag(1, 2, 4): CG needs as many iterations as M has distinct eigenvalues.
/// struct Diagonal(XData<f64>);
/// impl LinearOperator<f64> for Diagonal {
///     fn apply(&mut self, x: &XData<f64>, out: &XData<f64>) -> cliper::Result<()> {
///         Elementwise::new(&[x, &self.0], out, Expr::parse("a * b", &["a", "b"])?).run()
///     }
/// }
/// let app = cliper::ClApp::new()?;
/// let mut m = Diagonal(XData::from_slice(&app, &[3], &[1.0, 2.0, 4.0])?);
/// let mut cg = ConjugateGradient::new(&app, &[3], CgParams::new(3).lambda(1.0))?; // (M + I) x = b
/// let x = XData::zeros(&app, &[3])?;
/// cg.solve(&mut m, &XData::from_slice(&app, &[3], &[2.0, 3.0, 5.0])?, &x)?;
/// let got = x.to_vec()?;
/// assert!(got.iter().all(|v| (v - 1.0).abs() < 1e-12), "{got:?}");
/// assert!(cg.residuals()?[3] < 1e-12);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct ConjugateGradient<T: Element> {
    app: ClApp,
    n: usize,
    params: CgParams,
    r: XData<T>,
    p: XData<T>,
    q: XData<T>,
    partials: XData<T::Real>,
    scalars: XData<T::Real>,
    history: XData<T::Real>,
    kernels: [Kernel; 8],
    index: IndexType,
    groups: usize,
}

impl<T: Element> ConjugateGradient<T> {
    /// A solver for arrays of `shape` on `app`: allocates its vectors and builds its kernels.
    pub fn new(app: &ClApp, shape: &[usize], params: CgParams) -> Result<ConjugateGradient<T>> {
        let n: usize = shape.iter().product();
        if n == 0 {
            return Err(Error::invalid("ConjugateGradient", format!("shape {shape:?} has no elements")));
        }
        if !(params.lambda.is_finite() && params.lambda >= 0.0) {
            return Err(Error::invalid("ConjugateGradient", format!("λ = {} must be finite and ≥ 0", params.lambda)));
        }
        if !(params.tolerance.is_finite() && params.tolerance >= 0.0) {
            return Err(Error::invalid("ConjugateGradient", format!("tolerance {} must be ≥ 0", params.tolerance)));
        }
        let index = IndexType::for_extent(n as u64);
        let options = format!("{} -DIDX={} -DGROUP={GROUP}", T::build_options(), index.cl_type());
        let program = app.build_program("solve.cl", &kernels::with_common(kernels::SOLVE), &options)?;
        let kernel = |name: &str| program.kernel(name).map(|k| k.owned_by("ConjugateGradient"));
        let kernels = [
            kernel("cg_start")?,
            kernel("cg_start_scalars")?,
            kernel("cg_regularise")?,
            kernel("cg_alpha")?,
            kernel("cg_step")?,
            kernel("cg_beta")?,
            kernel("cg_direction")?,
            kernel("cg_start_warm")?,
        ];
        let groups = n.div_ceil(GROUP).clamp(1, 1024);
        Ok(ConjugateGradient {
            app: app.clone(),
            n,
            params,
            r: XData::uninit(app, "ConjugateGradient", shape)?,
            p: XData::uninit(app, "ConjugateGradient", shape)?,
            q: XData::uninit(app, "ConjugateGradient", shape)?,
            partials: XData::zeros(app, &[2 * groups])?,
            scalars: XData::zeros(app, &[8])?,
            history: XData::zeros(app, &[params.iterations + 1])?,
            kernels,
            index,
            groups,
        })
    }

    /// The settings.
    pub fn params(&self) -> CgParams {
        self.params
    }

    /// Enqueues the solve of `(M + λI) x = b` with `M = op`: `x` is overwritten (started at 0). `b` and `x` must
    /// be contiguous arrays of the solver's size on its `ClApp`.
    pub fn solve(&mut self, op: &mut dyn LinearOperator<T>, b: &XData<T>, x: &XData<T>) -> Result<()> {
        self.run(op, b, x, false)
    }

    /// [`ConjugateGradient::solve`] from the `x` given (a warm start: `r₀ = b − (M + λI) x`), as ADMM's inner
    /// solves run.
    pub fn solve_from(&mut self, op: &mut dyn LinearOperator<T>, b: &XData<T>, x: &XData<T>) -> Result<()> {
        self.run(op, b, x, true)
    }

    fn run(&mut self, op: &mut dyn LinearOperator<T>, b: &XData<T>, x: &XData<T>, warm: bool) -> Result<()> {
        for (name, a) in [("b", b), ("x", x)] {
            if a.len() != self.n {
                let rule = format!("{name} of {} elements (like {:?})", self.n, self.r.shape());
                return Err(Error::shape_rule("ConjugateGradient", rule, a.shape()));
            }
            if !a.is_packed() {
                return Err(Error::invalid(
                    "ConjugateGradient",
                    format!("{name} must be contiguous from its buffer's start (XData::contiguous makes a copy)"),
                ));
            }
        }
        let (idx, n, groups) = (self.index, self.n as u64, self.groups);
        let element = std::mem::size_of::<T>() as u64;
        let tol2 = T::Real::from_c64(Complex::new(self.params.tolerance * self.params.tolerance, 0.0));
        let vector = [groups * GROUP];
        let one = [GROUP];
        if warm {
            // q = (M + λI) x, then r = p = b − q.
            self.apply_regularised(op, x)?;
            let [.., warm_start] = &mut self.kernels;
            warm_start
                .launch()
                .input("b", b)
                .input("q", &self.q)
                .output("r", &self.r)
                .output("p", &self.p)
                .output("partials", &self.partials)
                .index("n", idx, n)
                .global(&vector)
                .local(&one)
                .work(4 * n * element, 4 * n)
                .enqueue()?;
        } else {
            let [start, ..] = &mut self.kernels;
            start
                .launch()
                .input("b", b)
                .output("x", x)
                .output("r", &self.r)
                .output("p", &self.p)
                .output("partials", &self.partials)
                .index("n", idx, n)
                .global(&vector)
                .local(&one)
                .work(4 * n * element, 2 * n)
                .enqueue()?;
        }
        // The partials of |b|²: after those of |r₀|² for a warm start; the same ones for a cold start (r₀ = b).
        let b_at = if warm { groups as u32 } else { 0 };
        let [_, start_scalars, ..] = &mut self.kernels;
        start_scalars
            .launch()
            .input("partials", &self.partials)
            .scalar("count", groups as u32)
            .scalar("b_at", b_at)
            .in_out("scal", &self.scalars)
            .output("history", &self.history)
            .global(&one)
            .local(&one)
            .enqueue()?;
        for iteration in 1..=self.params.iterations {
            let p = self.p.clone();
            self.apply_regularised(op, &p)?;
            let [_, _, _, alpha, step, beta, direction, _] = &mut self.kernels;
            alpha
                .launch()
                .input("partials", &self.partials)
                .scalar("count", groups as u32)
                .in_out("scal", &self.scalars)
                .global(&one)
                .local(&one)
                .enqueue()?;
            step.launch()
                .in_out("x", x)
                .in_out("r", &self.r)
                .input("p", &self.p)
                .input("q", &self.q)
                .input("scal", &self.scalars)
                .output("partials", &self.partials)
                .index("n", idx, n)
                .global(&vector)
                .local(&one)
                .work(6 * n * element, 6 * n)
                .enqueue()?;
            beta.launch()
                .input("partials", &self.partials)
                .scalar("count", groups as u32)
                .in_out("scal", &self.scalars)
                .in_out("history", &self.history)
                .scalar("iteration", iteration as u32)
                .scalar("tol2", tol2)
                .global(&one)
                .local(&one)
                .enqueue()?;
            direction
                .launch()
                .input("r", &self.r)
                .in_out("p", &self.p)
                .input("scal", &self.scalars)
                .index("n", idx, n)
                .global(&vector)
                .local(&one)
                .work(3 * n * element, 2 * n)
                .enqueue()?;
        }
        Ok(())
    }

    /// After a solve: `|r_k| / |r₀|` for k = 0 … iterations (1 first; 0 throughout if b was 0). Waits for it.
    pub fn residuals(&self) -> Result<Vec<f64>> {
        let history: Vec<f64> = self.history.to_vec()?.into_iter().map(|v| v.to_c64().re).collect();
        let first = history.first().copied().unwrap_or(0.0);
        Ok(history.iter().map(|&rr| if first > 0.0 { (rr / first).max(0.0).sqrt() } else { 0.0 }).collect())
    }

    /// Enqueues `q = (M + λI) v` and the partials of Re⟨v, q⟩.
    fn apply_regularised(&mut self, op: &mut dyn LinearOperator<T>, v: &XData<T>) -> Result<()> {
        op.apply(v, &self.q)?;
        let (idx, n) = (self.index, self.n as u64);
        let lambda = T::Real::from_c64(Complex::new(self.params.lambda, 0.0));
        let element = std::mem::size_of::<T>() as u64;
        let [_, _, regularise, ..] = &mut self.kernels;
        regularise
            .launch()
            .input("p", v)
            .in_out("q", &self.q)
            .scalar("lambda", lambda)
            .output("partials", &self.partials)
            .index("n", idx, n)
            .global(&[self.groups * GROUP])
            .local(&[GROUP])
            .work(3 * n * element, 4 * n)
            .enqueue()
    }

    /// After a solve: the iterations that ran (all of them, or up to the one that met the tolerance). Waits.
    pub fn iterations_run(&self) -> Result<usize> {
        let scalars = self.scalars.to_vec()?;
        Ok(scalars.get(6).map_or(0, |v| v.to_c64().re.round() as usize))
    }

    /// The `ClApp` it runs on.
    pub fn app(&self) -> &ClApp {
        &self.app
    }
}
