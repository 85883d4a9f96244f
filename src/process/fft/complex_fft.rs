//! [`Fft`]: complex fast Fourier transforms over any set of axes, any lengths, with numpy's normalisations.
//!
//! Planning (in `init`), per transformed axis of length n: lengths whose prime factors are all 2, 3, 5 or 7
//! run as Stockham autosort passes (`fft_passR` in `kernels/fft.cl`: radix 4 while 4 divides, one radix 2, then
//! 3, 5 and 7), each pass reading the whole array and writing it to a scratch copy; other lengths use
//! Bluestein's algorithm: a chirp product into a zero-padded length m ≥ 2n − 1 with only small factors, a
//! length-m transform, a product with the transformed chirp (computed on the host in float64 in `init`), the
//! inverse length-m transform and a last chirp product. Every table (roots of unity, chirps) is computed in
//! float64 on the host and uploaded once; `launch` only enqueues.
//!
//! The axes are transformed one after another on a contiguous `[outer, n, inner]` view, so every pass reads and
//! writes along `inner`-contiguous rows; strided inputs and outputs go through a strided copy first or last.
//!
//! On GPUs ([`FftAlgorithm::LocalMemory`]) an axis runs instead as one launch of `fft_lines`, a kernel generated
//! per length (`lines.rs`): every pass of a line with the data in registers, radix 16 first. Axes too long
//! for one work-group split n = n1·n2 into two such launches (columns: the second writes the transposed positions
//! itself; rows: a transpose follows), and Bluestein runs whole in one launch (chirps, both length-m transforms
//! and the product between them), on columns through a transpose to rows and back when a column does not fit.

use super::lines::{LinesShape, LinesVariant};
use super::radix;
use super::schedule::{AxisShape, LocalPart, ScheduledAxis, Slot, Step, schedule};
use crate::app::{ClApp, Kernel};
use crate::data::XData;
use crate::element::{ComplexElement, Element};
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::layout::CopyPlan;
use crate::process::{Prepared, Process};
use num_complex::Complex64;
use std::f64::consts::PI;

/// The sign of the exponent: forward `exp(−2πi·jk/n)` (numpy `fft`), inverse `exp(+2πi·jk/n)` (`ifft`).
///
/// ```
/// use cliper::{FftDirection, FftParams};
/// assert_eq!(FftParams::inverse().direction(), FftDirection::Inverse);
/// assert_eq!(FftDirection::default(), FftDirection::Forward);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FftDirection {
    /// `X_k = Σ x_j · exp(−2πi·jk/n)`.
    #[default]
    Forward,
    /// `x_j = Σ X_k · exp(+2πi·jk/n)`, scaled by the normalisation.
    Inverse,
}

/// numpy's `norm` argument: which direction carries the 1/n.
///
/// ```
/// use cliper::{Fft, FftNorm, FftParams, XData};
/// use num_complex::Complex32 as C;
/// let app = cliper::ClApp::new()?;
/// let x = XData::from_slice(&app, &[4], &[C::new(1.0, 0.0); 4])?;
/// let y = Fft::apply(&x, FftParams::forward().norm(FftNorm::Ortho))?; // × 1/√4
/// assert!((y.to_vec()?[0] - C::new(2.0, 0.0)).norm() < 1e-6);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FftNorm {
    /// Forward unscaled, inverse × 1/n (numpy's default `"backward"`).
    #[default]
    Backward,
    /// Both × 1/√n (`"ortho"`: the transform is unitary).
    Ortho,
    /// Forward × 1/n, inverse unscaled (`"forward"`).
    Forward,
}

impl FftNorm {
    /// The factor for one axis of length `n` in `direction`.
    fn scale(self, n: usize, direction: FftDirection) -> f64 {
        let n = n as f64;
        match (self, direction) {
            (FftNorm::Ortho, _) => 1.0 / n.sqrt(),
            (FftNorm::Backward, FftDirection::Inverse) | (FftNorm::Forward, FftDirection::Forward) => 1.0 / n,
            _ => 1.0,
        }
    }

    /// `"backward"`, `"ortho"` or `"forward"`, as numpy spells them.
    ///
    /// ```
    /// assert_eq!(cliper::FftNorm::numpy("ortho")?, cliper::FftNorm::Ortho);
    /// assert!(cliper::FftNorm::numpy("unitary").is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn numpy(name: &str) -> Result<FftNorm> {
        match name {
            "backward" => Ok(FftNorm::Backward),
            "ortho" => Ok(FftNorm::Ortho),
            "forward" => Ok(FftNorm::Forward),
            other => Err(Error::invalid("Fft", format!("norm `{other}`: expected backward, ortho or forward"))),
        }
    }
}

/// The radices the pass kernels implement, in the order the planner tries them.
const RADICES: [usize; 5] = [4, 2, 3, 5, 7];

/// The Stockham radices for `n` (empty for n = 1), or `None` when n has a prime factor above 7.
fn factorize(mut n: usize) -> Option<Vec<usize>> {
    let mut radices = Vec::new();
    // Radix 4 where possible (the cheapest butterfly per element), one 8 or 2 for the rest of a power of two.
    while n.is_multiple_of(4) {
        radices.push(4);
        n /= 4;
    }
    if n.is_multiple_of(2) {
        radices.push(2);
        n /= 2;
    }
    for p in [3, 5, 7] {
        while n.is_multiple_of(p) {
            radices.push(p);
            n /= p;
        }
    }
    (n == 1).then_some(radices)
}

/// The array in `slot` viewed with `dims` (for the transposes; the planner only routes them through a plain
/// input or output).
fn slot_view<T: Element>(
    input: &XData<T>,
    output: &XData<T>,
    scratch: &[XData<T>],
    slot: Slot,
    dims: &[usize],
) -> Result<XData<T>> {
    match slot {
        Slot::Input => input.reshape(dims),
        Slot::Output => output.reshape(dims),
        Slot::Scratch(k) => scratch_at(scratch, k)?.reshape(dims),
    }
}

/// Scratch array `k` of a plan.
fn scratch_at<T: Element>(scratch: &[XData<T>], k: usize) -> Result<&XData<T>> {
    scratch
        .get(k)
        .ok_or_else(|| Error::invalid("Fft", format!("the plan names scratch array {k} of {}", scratch.len())))
}

/// The plan of transformed axis `axis` (as the steps number them).
fn axis_at<T: Element>(axes: &[AxisPlan<T>], axis: usize) -> Result<&AxisPlan<T>> {
    axes.get(axis).ok_or_else(|| Error::invalid("Fft", format!("a step names axis {axis} of {} planned", axes.len())))
}

/// `shape` around axis `a`: (product of the extents before it, its extent, product of those after it);
/// `None` when the axis does not exist.
fn around(shape: &[usize], a: usize) -> Option<(usize, usize, usize)> {
    let (before, rest) = shape.split_at_checked(a)?;
    let (&n, after) = rest.split_first()?;
    Some((before.iter().product(), n, after.iter().product()))
}

/// The split n = n1·n2 (n1 ≈ √n) whose two `fft_lines` transforms both fit: the first over the columns of
/// [n1, n2] blocks (lines n2·inner apart), the second along the rows (columns too when inner > 1).
fn four_step_split(
    n: usize,
    inner: usize,
    outer: usize,
    fit: &LinesFit,
) -> Option<(usize, usize, LinesShape, LinesShape)> {
    let mut best: Option<(usize, usize, LinesShape, LinesShape)> = None;
    for n1 in 2..n {
        if !n.is_multiple_of(n1) {
            continue;
        }
        let n2 = n / n1;
        let first = fit.shape(n1, true, outer * n2 * inner);
        let second = fit.shape(n2, inner > 1, outer * n1 * inner);
        if let (Some(l1), Some(l2)) = (first, second) {
            let balance = |a: usize, b: usize| (a as f64 / b as f64).ln().abs();
            if best.as_ref().is_none_or(|b| balance(n1, n2) < balance(b.0, b.1)) {
                best = Some((n1, n2, l1, l2));
            }
        }
    }
    best
}

/// What `fft_lines` may use on this device: local memory, work-items per group, the element size; `None`
/// budget when the plan takes global passes only.
struct LinesFit {
    budget: Option<usize>,
    max_group: usize,
    element: usize,
}

impl LinesFit {
    fn shape(&self, n: usize, columns: bool, lines: usize) -> Option<LinesShape> {
        LinesShape::plan(n, columns, false, lines, self.element, self.budget?, self.max_group)
    }

    /// The shape of Bluestein's fused launch over padded lines of length m.
    fn bluestein(&self, m: usize, columns: bool, lines: usize) -> Option<LinesShape> {
        LinesShape::plan(m, columns, true, lines, self.element, self.budget?, self.max_group)
    }
}

/// The smallest length ≥ `n` with no prime factor above 7.
pub(crate) fn smooth_length(n: usize) -> usize {
    (n..).find(|&m| factorize(m).is_some()).unwrap_or(n)
}

/// A float64 DFT on the host for Bluestein's tables: recursive mixed radix over `factorize`'s radices.
fn host_fft(x: &[Complex64], sign: f64) -> Vec<Complex64> {
    let n = x.len();
    if n <= 1 {
        return x.to_vec();
    }
    let p = factorize(n).and_then(|f| f.into_iter().min()).unwrap_or(n);
    // p interleaved sub-sequences (x[j·p + r] for j < m = n/p), transformed, then combined with twiddles:
    // X[k] = Σ_r sub_r[k mod m] · exp(sign·2πi·rk/n), summed in order of r.
    let subs = (0..p).map(|r| host_fft(&x.iter().skip(r).step_by(p).copied().collect::<Vec<_>>(), sign));
    let mut out = vec![Complex64::new(0.0, 0.0); n];
    for (r, sub) in subs.enumerate() {
        for (k, (o, &s)) in out.iter_mut().zip(sub.iter().cycle()).enumerate() {
            *o += s * Complex64::from_polar(1.0, sign * 2.0 * PI * (r * k) as f64 / n as f64);
        }
    }
    out
}

/// The FFT kernels for element type `T` and index type `index` (one program: the radix tables, the butterflies,
/// the global passes, Bluestein's steps and `hermitian_extend`).
pub(super) fn fft_program<T: Element>(app: &ClApp, index: IndexType) -> Result<crate::app::Program> {
    let options = format!("{} -DIDX={}", T::build_options(), index.cl_type());
    let source = format!("{}\n{}\n{}", radix::tables(), kernels::FFT_BUTTERFLIES, kernels::FFT);
    app.build_program("fft.cl", &kernels::with_common(&source), &options)
}

/// Uploads float64 complex values as `T`.
fn upload<T: Element>(app: &ClApp, values: &[Complex64]) -> Result<XData<T>> {
    let host: Vec<T> = values.iter().map(|&v| T::from_c64(v)).collect();
    XData::from_slice(app, &[host.len()], &host)
}

/// Root tables at least this long are computed on the device (where it has doubles): the host's 2^24 took
/// 0.57 s of `init` on one core, 0.17 s on sixteen.
const DEVICE_ROOTS_FROM: usize = 1 << 20;

/// The forward roots `exp(−2πi·k/n)`, k < n, computed on the device in double precision by `fft_roots` and
/// rounded once to `T` (the device must have `cl_khr_fp64`).
fn device_roots<T: Element>(app: &ClApp, n: usize) -> Result<XData<T>> {
    let out = XData::<T>::uninit(app, "Fft", &[n])?;
    let index = IndexType::for_extent(n as u64);
    let mut kernel = fft_program::<T>(app, index)?.kernel("fft_roots")?.owned_by("Fft");
    kernel.launch().output(&out).index(index, n as u64).global(&[n.div_ceil(256) * 256]).local(&[256]).enqueue()?;
    Ok(out)
}

/// `exp(sign·2πi·k/n)` for k < n, from an exact k/n; over the host's threads (2^24 roots took 0.57 s of a
/// 1-D FFT's `init` on one core: the only part of a second process's `init` the program cache does not remove).
fn roots(n: usize, sign: f64) -> Vec<Complex64> {
    use rayon::prelude::*;
    (0..n).into_par_iter().map(|k| Complex64::from_polar(1.0, sign * 2.0 * PI * k as f64 / n as f64)).collect()
}

/// Stockham passes for one length: (radix, ns) per global pass, the roots table, and the `fft_lines` shape when
/// all passes run in one launch instead.
struct Passes<T: Element> {
    n: usize,
    steps: Vec<(usize, usize)>,
    roots: XData<T>,
    local: Option<LinesShape>,
}

/// Local memory one work-group may use for `fft_lines`: what the device offers, at most 47 KiB (under NVIDIA's
/// 48 KiB limit; CPUs report megabytes of "local" memory that is only cache).
fn local_budget(info: &crate::app::DeviceInfo) -> usize {
    // Less 1 KiB: NVIDIA's driver refused a group asking for exactly 48 KiB (CL_OUT_OF_RESOURCES at enqueue).
    (info.local_mem_bytes as usize).min(48 * 1024).saturating_sub(1024)
}

impl<T: Element> Passes<T> {
    fn new(app: &ClApp, n: usize, radices: &[usize]) -> Result<Passes<T>> {
        let mut ns = 1;
        let steps = radices
            .iter()
            .map(|&r| {
                let step = (r, ns);
                ns *= r;
                step
            })
            .collect();
        // The forward roots; the kernels conjugate them for inverse passes.
        let roots = if n >= DEVICE_ROOTS_FROM && app.supports::<f64>() {
            device_roots(app, n)?
        } else {
            upload(app, &roots(n, -1.0))?
        };
        Ok(Passes { n, steps, roots, local: None })
    }
}

/// How one axis is transformed.
enum AxisKind<T: Element> {
    /// Every prime factor is at most 7.
    Stockham(Passes<T>),
    /// Bluestein: chirp for this direction, the transformed conjugate chirp (already × 1/m), passes of length m
    /// (all of it in one `fft_lines` launch when `passes.local` is set; on rows transposed from columns when
    /// `transposed`).
    Bluestein { chirp: XData<T>, kernel_hat: XData<T>, passes: Passes<T>, transposed: bool },
    /// n = n1·n2 too long for local memory: length-n1 transforms down the columns of [n1, n2] blocks (with the
    /// twiddles ω_n^{j2·k1} on the way out), then length-n2 transforms along the rows, which write the
    /// [n2, n1] order themselves on columns and leave it to a transpose on rows.
    FourStep { first: Passes<T>, second: Passes<T>, roots: XData<T>, n1: usize, n2: usize },
}

struct AxisPlan<T: Element> {
    outer: usize,
    inner: usize,
    scale: f64,
    kind: AxisKind<T>,
}

impl<T: Element> AxisPlan<T> {
    /// What the schedule needs to know of this axis.
    fn scheduled(&self) -> ScheduledAxis {
        let shape = match &self.kind {
            AxisKind::Stockham(p) if p.local.is_some() => AxisShape::Local,
            AxisKind::Stockham(p) => AxisShape::Passes { n: p.n, steps: p.steps.clone() },
            &AxisKind::FourStep { n1, n2, .. } => AxisShape::FourStep { n1, n2 },
            AxisKind::Bluestein { passes, chirp, transposed, .. } if passes.local.is_some() => {
                AxisShape::BluesteinLocal { n: chirp.len(), transposed: *transposed }
            }
            AxisKind::Bluestein { passes, .. } => {
                AxisShape::BluesteinPasses { m: passes.n, steps: passes.steps.clone() }
            }
        };
        ScheduledAxis { outer: self.outer, inner: self.inner, scale: self.scale, shape }
    }
}

struct Plan<T: Element> {
    axes: Vec<AxisPlan<T>>,
    steps: Vec<Step>,
    /// Contiguous work arrays: two of the array's size, and two of the largest Bluestein size.
    scratch: Vec<XData<T>>,
    /// A strided input copied into scratch 0 first; the result copied from `result` into a strided output.
    copy_in: Option<ViewCopy<T>>,
    copy_out: Option<ViewCopy<T>>,
    /// Four-step transposes, [outer, n1, n2, inner] → [outer, n2, n1, inner].
    transposes: Vec<ViewCopy<T>>,
    kernels: Kernels,
    index: IndexType,
    group: usize,
    /// The `fft_lines` kernels the `Step::Local`s name.
    lines: Vec<Kernel>,
}

/// A strided copy between two views fixed in `init`.
struct ViewCopy<T: Element> {
    plan: CopyPlan,
    from: XData<T>,
    to: XData<T>,
}

impl<T: Element> ViewCopy<T> {
    fn new(from: XData<T>, to: XData<T>) -> Result<ViewCopy<T>> {
        Ok(ViewCopy { plan: CopyPlan::new("Fft", &from, &to, false, None)?, from, to })
    }

    fn launch(&mut self) -> Result<()> {
        self.plan.launch("Fft", &self.from, &self.to)
    }
}

struct Kernels {
    passes: Vec<(usize, Kernel)>,
    pre: Kernel,
    mul: Kernel,
    post: Kernel,
}

/// The parameters of an [`Fft`]: direction, axes (default all), normalisation (default numpy's
/// `"backward"`) and, for tuning, the algorithm. Default: forward over every axis.
///
/// ```
/// use cliper::{FftAlgorithm, FftDirection, FftNorm, FftParams};
/// let p = FftParams::inverse().axes(&[1, 2]).norm(FftNorm::Ortho);
/// assert_eq!(p.direction(), FftDirection::Inverse);
/// assert_eq!(FftParams::default(), FftParams::forward());
/// let tuned = FftParams::forward().algorithm(FftAlgorithm::GlobalPasses);
/// # let _ = tuned;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FftParams {
    direction: FftDirection,
    axes: Option<Vec<usize>>,
    norm: FftNorm,
    algorithm: FftAlgorithm,
}

impl FftParams {
    /// A transform in `direction` over every axis.
    pub fn new(direction: FftDirection) -> FftParams {
        FftParams { direction, ..FftParams::default() }
    }

    /// The forward transform (numpy `fftn`).
    pub fn forward() -> FftParams {
        FftParams::new(FftDirection::Forward)
    }

    /// The inverse transform (numpy `ifftn`).
    pub fn inverse() -> FftParams {
        FftParams::new(FftDirection::Inverse)
    }

    /// Transform only these axes (numpy's `axes`; each once, in any order). The others are a batch.
    pub fn axes(mut self, axes: &[usize]) -> FftParams {
        self.axes = Some(axes.to_vec());
        self
    }

    /// The normalisation (default [`FftNorm::Backward`]).
    pub fn norm(mut self, norm: FftNorm) -> FftParams {
        self.norm = norm;
        self
    }

    /// Override the planner (default [`FftAlgorithm::Auto`]).
    pub fn algorithm(mut self, algorithm: FftAlgorithm) -> FftParams {
        self.algorithm = algorithm;
        self
    }

    /// The direction.
    pub fn direction(&self) -> FftDirection {
        self.direction
    }
}

/// How an [`Fft`] computes each transformed axis, as its `strategy()` reports it; `Display` gives one entry
/// per axis, `"; "`-separated (`n=1024: radix 16×8×8 in registers, …`).
///
/// ```
/// use cliper::{Fft, FftParams, Process, XData};
/// let app = cliper::ClApp::new()?;
/// let x = XData::<num_complex::Complex32>::zeros(&app, &[64, 48])?;
/// let mut fft = Fft::new(&x, &XData::zeros(&app, &[64, 48])?, FftParams::forward());
/// fft.init()?;
/// let s = fft.strategy().unwrap();
/// assert_eq!(s.axes.len(), 2);
/// assert!(s.to_string().starts_with("n=64: radix")); // one entry per axis, "; "-separated
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FftStrategy {
    /// One entry per transformed axis, in the order they run.
    pub axes: Vec<FftAxisStrategy>,
}

/// How one axis of an [`FftStrategy`] is transformed.
///
/// ```
/// use cliper::{Fft, FftAxisStrategy, FftParams, Process, XData};
/// use num_complex::Complex64 as C;
/// let app = cliper::ClApp::new()?;
/// let x = XData::<C>::zeros(&app, &[97])?; // a prime length
/// let mut fft = Fft::new(&x, &XData::zeros(&app, &[97])?, FftParams::forward());
/// fft.init()?;
/// assert!(matches!(fft.strategy().unwrap().axes[0], FftAxisStrategy::Bluestein { n: 97, .. }));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FftAxisStrategy {
    /// Stockham passes over the axis's length `n`.
    Stockham {
        /// The length.
        n: usize,
        /// The passes.
        passes: FftPasses,
    },
    /// Bluestein's algorithm: the length-`n` transform as a convolution of length `m` (a smooth length).
    Bluestein {
        /// The length.
        n: usize,
        /// The convolution length.
        m: usize,
        /// The passes of each length-`m` transform.
        passes: FftPasses,
        /// Whether columns go through a transpose to rows and back.
        transposed: bool,
    },
    /// A long axis split `n = n1·n2`: columns of `[n1, n2]`, twiddles, then rows.
    FourStep {
        /// The first factor.
        n1: usize,
        /// The second factor.
        n2: usize,
        /// The passes of the first launch.
        first: FftPasses,
        /// The passes of the second launch.
        second: FftPasses,
        /// Whether a transpose follows (rows; columns write their result in place).
        transpose: bool,
    },
}

/// The passes of one transform length.
///
/// ```
/// use cliper::{FftAxisStrategy, FftPasses, Process};
/// let app = cliper::ClApp::new()?;
/// let x = cliper::XData::<num_complex::Complex32>::zeros(&app, &[3, 60])?;
/// let mut fft = cliper::Fft::new(&x, &cliper::XData::zeros(&app, &[3, 60])?, cliper::FftParams::forward().axes(&[1]));
/// fft.init()?;
/// let FftAxisStrategy::Stockham { passes, .. } = &fft.strategy().unwrap().axes[0] else { unreachable!() };
/// let radices = match passes { FftPasses::Global { radices } | FftPasses::Registers { radices, .. } => radices };
/// assert_eq!(radices.iter().product::<usize>(), 60);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FftPasses {
    /// One global `fft_passR` launch per radix.
    Global {
        /// The radices, in order.
        radices: Vec<usize>,
    },
    /// Every pass in one `fft_lines` launch, the data in registers.
    Registers {
        /// The radices, in order.
        radices: Vec<usize>,
        /// Lines per work-group.
        lines_per_group: usize,
        /// Work-items per line.
        items_per_line: usize,
        /// Whether real and imaginary parts are exchanged through local memory in turn.
        split: bool,
    },
}

fn radix_list(radices: &[usize]) -> String {
    radices.iter().map(usize::to_string).collect::<Vec<_>>().join("×")
}

impl std::fmt::Display for FftPasses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FftPasses::Global { radices } => write!(f, "{}", radix_list(radices)),
            FftPasses::Registers { radices, lines_per_group, items_per_line, split } => write!(
                f,
                "{} in registers, {lines_per_group} lines of {items_per_line} work-items per group{}",
                radix_list(radices),
                if *split { ", real and imaginary parts exchanged in turn" } else { "" }
            ),
        }
    }
}

impl std::fmt::Display for FftAxisStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FftAxisStrategy::Stockham { n, passes } => write!(f, "n={n}: radix {passes}"),
            FftAxisStrategy::Bluestein { n, m, passes, transposed } => write!(
                f,
                "n={n}: Bluestein m={m} (radix {passes}{})",
                if *transposed { "; columns transposed to rows and back" } else { "" }
            ),
            FftAxisStrategy::FourStep { n1, n2, first, second, transpose } => write!(
                f,
                "n={}: four-step {n1}×{n2} ({first}; {second}){}",
                n1 * n2,
                if *transpose { " + transpose" } else { "" }
            ),
        }
    }
}

impl std::fmt::Display for FftStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let axes: Vec<String> = self.axes.iter().map(ToString::to_string).collect();
        write!(f, "{}", axes.join("; "))
    }
}

/// A complex FFT of `input` into `output` (same shape) over the chosen axes (default: all), forward or
/// inverse, with numpy's normalisations ([`FftParams`]). Any lengths: Stockham mixed-radix passes for lengths
/// with prime factors up to 7, Bluestein's algorithm for the rest; f32 (c32) and f64 (c64).
///
/// ```
/// use cliper::{ClApp, Fft, FftParams, Process, XData};
/// use num_complex::Complex32 as C;
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[4], &[C::new(1.0, 0.0), C::new(2.0, 0.0), C::new(0.0, 0.0), C::new(0.0, 0.0)])?;
/// let y = XData::zeros(&app, &[4])?;
/// Fft::new(&x, &y, FftParams::forward()).run()?;
/// // numpy.fft.fft([1, 2, 0, 0]) = [3, 1-2j, -1, 1+2j]
/// let want = [C::new(3.0, 0.0), C::new(1.0, -2.0), C::new(-1.0, 0.0), C::new(1.0, 2.0)];
/// assert!(y.to_vec()?.iter().zip(want).all(|(a, b)| (a - b).norm() < 1e-6));
/// let back = Fft::apply(&y, FftParams::inverse())?; // numpy.fft.ifft: × 1/n
/// assert!((back.to_vec()?[1] - C::new(2.0, 0.0)).norm() < 1e-6);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Fft<T: ComplexElement> {
    input: XData<T>,
    output: XData<T>,
    params: FftParams,
    plan: Prepared<Plan<T>>,
}

/// How [`Fft`] runs the Stockham passes of each axis.
///
/// ```
/// use cliper::{Fft, FftAlgorithm, FftParams, XData};
/// use num_complex::Complex32 as C;
/// let app = cliper::ClApp::new()?;
/// let x = XData::from_slice(&app, &[8], &[C::new(1.0, 0.0); 8])?;
/// let global = Fft::apply(&x, FftParams::forward().algorithm(FftAlgorithm::GlobalPasses))?.to_vec()?;
/// let local = Fft::apply(&x, FftParams::forward().algorithm(FftAlgorithm::LocalMemory))?.to_vec()?;
/// assert!(global.iter().zip(&local).all(|(a, b)| (a - b).norm() < 1e-6)); // the same transform either way
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FftAlgorithm {
    /// [`FftAlgorithm::LocalMemory`] on GPUs, [`FftAlgorithm::GlobalPasses`] on CPUs (PoCL's barriers made the
    /// local-memory kernel slower there: 1024² took 47 ms against 36 ms with global passes on 2 cores).
    #[default]
    Auto,
    /// All passes of an axis in one `fft_lines` launch when a line fits a work-group (rows up to 8192 points in
    /// c32 and 4096 in c64; columns while 32 bytes of adjacent columns fit), a four-step split into two such
    /// launches for longer smooth lengths, Bluestein whole in one launch, else one global pass per radix.
    LocalMemory,
    /// One `fft_passR` launch per radix, each reading and writing the whole array (any length).
    GlobalPasses,
}

impl<T: ComplexElement> Fft<T> {
    /// The transform `params` describe of `input` into `output` (same shape).
    pub fn new(input: &XData<T>, output: &XData<T>, params: FftParams) -> Fft<T> {
        Fft { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates an output, transforms `input` into it once and returns it.
    ///
    /// ```
    /// use cliper::{ClApp, Fft, FftParams, XData};
    /// use num_complex::Complex64 as C;
    /// let app = ClApp::new()?;
    /// let x = XData::from_slice(&app, &[3], &[C::new(1.0, 0.0), C::new(1.0, 0.0), C::new(1.0, 0.0)])?;
    /// let y = Fft::apply(&x, FftParams::forward())?.to_vec()?;
    /// assert!((y[0] - C::new(3.0, 0.0)).norm() < 1e-12 && y[1].norm() < 1e-12 && y[2].norm() < 1e-12);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn apply(input: &XData<T>, params: FftParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), "Fft", &Self::output_shape(input.shape(), &params)?)?;
        Fft::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the input's (an error when an axis is out of range or given twice).
    ///
    /// ```
    /// use cliper::{Fft, FftParams};
    /// use num_complex::Complex32;
    /// assert_eq!(Fft::<Complex32>::output_shape(&[8, 16], &FftParams::forward().axes(&[1]))?, vec![8, 16]);
    /// assert!(Fft::<Complex32>::output_shape(&[8, 16], &FftParams::forward().axes(&[1, 1])).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize], params: &FftParams) -> Result<Vec<usize>> {
        transformed_axes(shape, params)?;
        Ok(shape.to_vec())
    }

    /// How each transformed axis is computed; `None` before `init`.
    pub fn strategy(&self) -> Option<FftStrategy> {
        let plan = self.plan.as_ref()?;
        let passes = |p: &Passes<T>| match &p.local {
            Some(l) => FftPasses::Registers {
                radices: l.radices.clone(),
                lines_per_group: l.cols,
                items_per_line: l.tpl,
                split: l.split,
            },
            None => FftPasses::Global { radices: p.steps.iter().map(|s| s.0).collect() },
        };
        let axes = plan
            .axes
            .iter()
            .map(|a| match &a.kind {
                AxisKind::Stockham(p) => FftAxisStrategy::Stockham { n: p.n, passes: passes(p) },
                AxisKind::Bluestein { chirp, passes: p, transposed, .. } => {
                    FftAxisStrategy::Bluestein { n: chirp.len(), m: p.n, passes: passes(p), transposed: *transposed }
                }
                AxisKind::FourStep { first, second, n1, n2, .. } => FftAxisStrategy::FourStep {
                    n1: *n1,
                    n2: *n2,
                    first: passes(first),
                    second: passes(second),
                    transpose: a.inner <= 1,
                },
            })
            .collect();
        Some(FftStrategy { axes })
    }

    fn plan(&self) -> Result<Plan<T>> {
        // fft_lines groups of at most `group_cap()` work-items; a device that allows fewer to some kernel gets a
        // plan within that.
        let mut max_group = super::lines::group_cap();
        loop {
            match self.plan_within(max_group)? {
                Ok(plan) => return Ok(plan),
                Err(limit) if limit >= 1 && limit < max_group => max_group = 1 << limit.ilog2(),
                Err(limit) => {
                    return Err(Error::Unsupported {
                        what: format!("Fft: an fft_lines kernel allows only {limit} work-items per group here"),
                    });
                }
            }
        }
    }

    /// The plan with `fft_lines` groups of at most `max_group` work-items, or the lower limit a kernel reported.
    fn plan_within(&self, max_group: usize) -> Result<std::result::Result<Plan<T>, usize>> {
        let op = "Fft";
        let (input, output) = (&self.input, &self.output);
        let app = input.app();
        if !app.same_as(output.app()) {
            return Err(Error::invalid(op, "the input and the output belong to different ClApps"));
        }
        let shape = input.shape().to_vec();
        if output.shape() != shape.as_slice() {
            return Err(Error::shape_because(op, &shape, output.shape(), "the input's shape"));
        }
        // (outer, n, inner) of each axis: the array as [outer, n, inner].
        let transformed = transformed_axes(&shape, &self.params)?;
        let total: usize = shape.iter().product();
        // Axes of length 1 change nothing (their scale is 1 in every normalisation).
        let transformed: Vec<(usize, usize, usize)> =
            if total == 0 { Vec::new() } else { transformed.into_iter().filter(|&(_, n, _)| n > 1).collect() };
        let inverse = self.params.direction == FftDirection::Inverse;
        let mut axis_plans = Vec::new();
        let mut largest = 0usize;
        for &(outer, n, inner) in &transformed {
            let (axis, scratch) = self.plan_axis(app, [outer, n, inner], max_group)?;
            largest = largest.max(scratch);
            axis_plans.push(axis);
        }

        // Buffers: start from the input when it is a plain contiguous array the passes can read, else from a
        // copy in scratch 0; end in the output when it is contiguous and separate from the input, else in a
        // scratch array copied out.
        let plain = |x: &XData<T>| x.is_contiguous() && x.offset() == 0;
        let first = XData::uninit(app, op, &[total.max(1)])?;
        let mut scratch = vec![first.clone(), XData::uninit(app, op, &[total.max(1)])?];
        if largest > 0 {
            scratch.push(XData::uninit(app, op, &[largest])?);
            scratch.push(XData::uninit(app, op, &[largest])?);
        }
        let copy_in = if plain(input) || axis_plans.is_empty() {
            None
        } else {
            Some(ViewCopy::new(input.clone(), first.reshape(&shape)?)?)
        };
        let direct_out = plain(output) && !output.overlaps(input);
        let start = if copy_in.is_some() { Slot::Scratch(0) } else { Slot::Input };
        let scheduled: Vec<ScheduledAxis> = axis_plans.iter().map(AxisPlan::scheduled).collect();
        let (mut steps, specs, end) = schedule(&scheduled, start, direct_out, inverse);
        let view = |slot: Slot, dims: &[usize]| slot_view(input, output, &scratch, slot, dims);
        let transposes = specs
            .iter()
            .map(|t| ViewCopy::new(view(t.from, &t.from_dims)?.permuted_axes(&t.perm)?, view(t.to, &t.to_dims)?))
            .collect::<Result<Vec<_>>>()?;
        // No axis to transform: the result is the input.
        let copy_out = if end == Slot::Output {
            None
        } else {
            let from = match end {
                Slot::Scratch(k) => scratch_at(&scratch, k)?.reshape(&shape)?,
                _ => input.clone(),
            };
            Some(ViewCopy::new(from, output.clone())?)
        };

        let element_count = total.max(largest) as u64;
        let index = IndexType::for_extent(element_count);
        let program = fft_program::<T>(app, index)?;
        let kernel = |name: &str| -> Result<Kernel> { Ok(program.kernel(name)?.owned_by(op)) };
        let mut pass_kernels = Vec::new();
        for r in RADICES {
            if steps.iter().any(|s| matches!(s, Step::Pass { radix, .. } if *radix == r)) {
                pass_kernels.push((r, kernel(&format!("fft_pass{r}"))?));
            }
        }
        let kernels = Kernels {
            passes: pass_kernels,
            pre: kernel("bluestein_pre")?,
            mul: kernel("bluestein_mul")?,
            post: kernel("bluestein_post")?,
        };
        let group = 256.min(app.device().max_work_group_size.max(1));
        let lines = match build_lines::<T>(app, &axis_plans, &mut steps, index)? {
            Ok(lines) => lines,
            Err(limit) => return Ok(Err(limit)),
        };
        Ok(Ok(Plan { axes: axis_plans, steps, scratch, copy_in, copy_out, transposes, kernels, lines, index, group }))
    }

    /// The plan of one axis, `[outer, n, inner]`, and the size of the Bluestein work arrays it needs (0 when
    /// it runs in one `fft_lines` launch or is not Bluestein).
    fn plan_axis(&self, app: &ClApp, [outer, n, inner]: [usize; 3], max_group: usize) -> Result<(AxisPlan<T>, usize)> {
        let scale = self.params.norm.scale(n, self.params.direction);
        let local = match self.params.algorithm {
            FftAlgorithm::Auto => app.device().kind != crate::app::DeviceKind::Cpu,
            FftAlgorithm::LocalMemory => true,
            FftAlgorithm::GlobalPasses => false,
        };
        let fit = LinesFit {
            budget: local.then(|| local_budget(app.device())),
            max_group: app.device().max_work_group_size.clamp(1, max_group),
            element: std::mem::size_of::<T>(),
        };
        let mut largest = 0;
        let kind = match factorize(n) {
            Some(radices) => {
                let mut whole = Passes::new(app, n, &radices)?;
                whole.local = fit.shape(whole.n, inner > 1, outer * inner);
                let split = if whole.local.is_none() { four_step_split(n, inner, outer, &fit) } else { None };
                match split {
                    Some((n1, n2, l1, l2)) => {
                        let mut first = Passes::new(app, n1, &factorize(n1).unwrap_or_default())?;
                        let mut second = Passes::new(app, n2, &factorize(n2).unwrap_or_default())?;
                        (first.local, second.local) = (Some(l1), Some(l2));
                        AxisKind::FourStep { first, second, roots: whole.roots, n1, n2 }
                    }
                    _ => AxisKind::Stockham(whole),
                }
            }
            None => {
                let inverse = self.params.direction == FftDirection::Inverse;
                let (chirp, hat, m) = bluestein_tables(n, if inverse { 1.0 } else { -1.0 });
                let radices = factorize(m).unwrap_or_default();
                let mut passes = Passes::new(app, m, &radices)?;
                // The whole algorithm in one fft_lines launch where a line of m fits; columns that do not fit go
                // through a transpose to rows and back.
                let mut transposed = false;
                passes.local = fit.bluestein(m, inner > 1, outer * inner);
                if passes.local.is_none() && inner > 1 {
                    passes.local = fit.bluestein(m, false, outer * inner);
                    transposed = passes.local.is_some();
                }
                if passes.local.is_none() {
                    largest = outer * m * inner;
                }
                AxisKind::Bluestein { chirp: upload(app, &chirp)?, kernel_hat: upload(app, &hat)?, passes, transposed }
            }
        };
        Ok((AxisPlan { outer, inner, scale, kind }, largest))
    }
}

/// Bluestein's tables for length `n` in the direction of `sign`: the chirp `w_k = exp(sign·πi·k²/n)` (k² mod
/// 2n taken exactly), the transform of the conjugate chirp zero-padded to `m` (already × 1/m), and `m`, the
/// smooth length ≥ 2n − 1.
fn bluestein_tables(n: usize, sign: f64) -> (Vec<Complex64>, Vec<Complex64>, usize) {
    use rayon::prelude::*;
    let m = smooth_length(2 * n - 1);
    let chirp: Vec<Complex64> = (0..n)
        .into_par_iter()
        .map(|k| {
            let k2 = ((k as u128 * k as u128) % (2 * n as u128)) as f64;
            Complex64::from_polar(1.0, sign * PI * k2 / n as f64)
        })
        .collect();
    // b[k] = b[m − k] = conj(w_k) for k < n (m ≥ 2n − 1 keeps the two ends apart), zeros between.
    let mut b = vec![Complex64::new(0.0, 0.0); m];
    for (slot, w) in b.iter_mut().zip(&chirp) {
        *slot = w.conj();
    }
    for (slot, w) in b.iter_mut().rev().zip(chirp.iter().skip(1)) {
        *slot = w.conj();
    }
    let hat: Vec<Complex64> = host_fft(&b, -1.0).into_iter().map(|v| v / m as f64).collect();
    (chirp, hat, m)
}

/// The `fft_lines` kernels the `Step::Local`s need, one per distinct (shape, direction, four-step twiddles) —
/// the program cache shares the builds between plans — with each step's `kernel` set to its index; or the
/// smaller work-group limit a built kernel reports (the registers of one work-item limit the group size; the
/// planner stays well inside it, so a smaller limit means a device this planner does not know).
fn build_lines<T: ComplexElement>(
    app: &ClApp,
    axis_plans: &[AxisPlan<T>],
    steps: &mut [Step],
    index: IndexType,
) -> Result<std::result::Result<Vec<Kernel>, usize>> {
    let mut lines: Vec<(LinesShape, LinesVariant, Kernel)> = Vec::new();
    for step in steps.iter_mut() {
        let Step::Local { axis, part, inverse, kernel: slot, .. } = step else { continue };
        let axis_plan = axis_at(axis_plans, *axis)?;
        let (passes, _, _, _) = local_geometry(axis_plan, *part)?;
        let Some(shape) = passes.local.clone() else { continue };
        let bluestein = match &axis_plan.kind {
            AxisKind::Bluestein { chirp, .. } => Some(chirp.len()),
            _ => None,
        };
        let variant = LinesVariant { inverse: *inverse, twiddle_out: *part == LocalPart::First, bluestein };
        if let Some(k) = lines.iter().position(|(s, v, _)| *s == shape && *v == variant) {
            *slot = k;
            continue;
        }
        let built = shape.program::<T>(app, index, variant)?.kernel("fft_lines")?.owned_by("Fft");
        let limit = built.max_work_group_size()?;
        if limit < shape.group_size() {
            return Ok(Err(limit));
        }
        *slot = lines.len();
        lines.push((shape, variant, built));
    }
    Ok(Ok(lines.into_iter().map(|(_, _, k)| k).collect()))
}

/// The transformed axes of `shape` as (outer, n, inner) lines, in `params`' order (default every axis), or an
/// error naming an axis out of range or given twice.
fn transformed_axes(shape: &[usize], params: &FftParams) -> Result<Vec<(usize, usize, usize)>> {
    let axes = match &params.axes {
        Some(a) => a.clone(),
        None => (0..shape.len()).collect(),
    };
    let mut transformed = Vec::with_capacity(axes.len());
    for (i, &a) in axes.iter().enumerate() {
        let Some(line) = around(shape, a) else {
            return Err(Error::axis("Fft", a as isize, shape));
        };
        if axes.iter().take(i).any(|&b| b == a) {
            return Err(Error::invalid("Fft", format!("axis {a} is given twice in {axes:?}")));
        }
        transformed.push(line);
    }
    Ok(transformed)
}

impl<T: ComplexElement> Process for Fft<T> {
    fn name(&self) -> &str {
        "Fft"
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(self.plan()?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let Plan { axes, steps, scratch, copy_in, copy_out, transposes, kernels, lines, index, group } =
            self.plan.get("Fft")?;
        let buffers = Buffers { input: &self.input, output: &self.output, scratch };
        let sizes = Sizes { index: *index, group: *group };
        if let Some(copy) = copy_in.as_mut() {
            copy.launch()?;
        }
        for step in steps.iter() {
            match *step {
                Step::Pass { radix, ns, n, axis, inverse, scale, src, dst } => {
                    let a = axis_at(axes, axis)?;
                    let Some((_, kernel)) = kernels.passes.iter_mut().find(|(r, _)| *r == radix) else {
                        return Err(Error::invalid("Fft", format!("no kernel for radix {radix}")));
                    };
                    let launch = kernel.launch().input(buffers.at(src)?).output(buffers.at(dst)?);
                    enqueue_pass(launch, a, [radix, ns, n], inverse, scale, sizes)?;
                }
                Step::Local { axis, part, scale, src, dst, kernel, .. } => {
                    let count = lines.len();
                    let Some(lines_kernel) = lines.get_mut(kernel) else {
                        return Err(Error::invalid(
                            "Fft",
                            format!("a step names fft_lines kernel {kernel} of {count}"),
                        ));
                    };
                    let launch = lines_kernel.launch().input(buffers.at(src)?).output(buffers.at(dst)?);
                    enqueue_local(launch, axis_at(axes, axis)?, part, scale, sizes)?;
                }
                Step::Transpose { copy } => {
                    let n = transposes.len();
                    let transpose = transposes
                        .get_mut(copy)
                        .ok_or_else(|| Error::invalid("Fft", format!("a step names transpose {copy} of {n}")))?;
                    transpose.launch()?;
                }
                Step::Pre { axis, src, dst } => {
                    let a = axis_at(axes, axis)?;
                    let AxisKind::Bluestein { chirp, passes, .. } = &a.kind else { continue };
                    let count = a.outer * passes.n * a.inner;
                    let launch = kernels.pre.launch().input(buffers.at(src)?).output(buffers.at(dst)?);
                    chirp_product(launch, chirp, passes.n, a.inner, count, sizes).enqueue()?;
                }
                Step::Mul { axis, dst } => {
                    let a = axis_at(axes, axis)?;
                    let AxisKind::Bluestein { kernel_hat, passes, .. } = &a.kind else { continue };
                    let count = a.outer * passes.n * a.inner;
                    let element = std::mem::size_of::<T>() as u64;
                    kernels
                        .mul
                        .launch()
                        .in_out(buffers.at(dst)?)
                        .input(kernel_hat)
                        .index(sizes.index, passes.n as u64)
                        .index(sizes.index, a.inner as u64)
                        .index(sizes.index, count as u64)
                        .global(&[sizes.global(count)])
                        .local(&[sizes.group])
                        .work(2 * count as u64 * element, 6 * count as u64)
                        .enqueue()?;
                }
                Step::Post { axis, src, dst, scale } => {
                    let a = axis_at(axes, axis)?;
                    let AxisKind::Bluestein { chirp, passes, .. } = &a.kind else { continue };
                    let count = a.outer * chirp.len() * a.inner;
                    let launch = kernels.post.launch().input(buffers.at(src)?).output(buffers.at(dst)?);
                    chirp_product(launch, chirp, passes.n, a.inner, count, sizes)
                        .scalar(<T::Real as Element>::from_c64(Complex64::new(scale, 0.0)))
                        .enqueue()?;
                }
            }
        }
        if let Some(copy) = copy_out.as_mut() {
            copy.launch()?;
        }
        Ok(())
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// Where a `Step::Local` of `part` reads and writes: the transforms, the line count, and (q, p, s) for the input
/// and the output (line l's element e at (l / q)·p + l mod q + e·s).
#[allow(clippy::type_complexity)]
fn local_geometry<T: Element>(a: &AxisPlan<T>, part: LocalPart) -> Result<(&Passes<T>, usize, [usize; 3], [usize; 3])> {
    let (outer, inner) = (a.outer, a.inner);
    let plain = |n: usize| [inner, n * inner, inner];
    Ok(match (&a.kind, part) {
        (AxisKind::Stockham(p), LocalPart::Main) => (p, outer * inner, plain(p.n), plain(p.n)),
        (AxisKind::Bluestein { passes, chirp, transposed, .. }, LocalPart::Bluestein) => {
            let n = chirp.len();
            let lines = if *transposed { [1, n, 1] } else { plain(n) };
            (passes, outer * inner, lines, lines)
        }
        (AxisKind::FourStep { first, n1, n2, .. }, LocalPart::First) => {
            let columns = [n2 * inner, n1 * n2 * inner, n2 * inner];
            (first, outer * n2 * inner, columns, columns)
        }
        (AxisKind::FourStep { second, n1, n2, .. }, LocalPart::Second) => {
            // Columns (inner > 1) write X[k1 + n1·k2] in place of a transpose; rows leave it to the transpose.
            let out = if inner > 1 { [n1 * inner, n1 * n2 * inner, n1 * inner] } else { plain(*n2) };
            (second, outer * n1 * inner, plain(*n2), out)
        }
        _ => return Err(Error::invalid("Fft", format!("no {part:?} transforms on this axis"))),
    })
}

/// The arguments Bluestein's two chirp products share after their input and output: the chirp (length n), the
/// padded length m, the inner extent and the element count. `bluestein_post` takes the scale after these.
fn chirp_product<'k, T: Element>(
    launch: crate::data::Launch<'k>,
    chirp: &XData<T>,
    m: usize,
    inner: usize,
    count: usize,
    sizes: Sizes,
) -> crate::data::Launch<'k> {
    let element = std::mem::size_of::<T>() as u64;
    launch
        .input(chirp)
        .index(sizes.index, chirp.len() as u64)
        .index(sizes.index, m as u64)
        .index(sizes.index, inner as u64)
        .index(sizes.index, count as u64)
        .global(&[sizes.global(count)])
        .local(&[sizes.group])
        .work(2 * count as u64 * element, 8 * count as u64)
}

/// The index type and the work-group size of the global-pass and Bluestein kernels.
#[derive(Clone, Copy)]
struct Sizes {
    index: IndexType,
    group: usize,
}

impl Sizes {
    /// `count` work-items rounded up to whole groups.
    fn global(&self, count: usize) -> usize {
        count.div_ceil(self.group) * self.group
    }
}

/// The arrays a step's [`Slot`]s name.
struct Buffers<'a, T: Element> {
    input: &'a XData<T>,
    output: &'a XData<T>,
    scratch: &'a [XData<T>],
}

impl<T: Element> Buffers<'_, T> {
    fn at(&self, slot: Slot) -> Result<&XData<T>> {
        match slot {
            Slot::Input => Ok(self.input),
            Slot::Output => Ok(self.output),
            Slot::Scratch(k) => scratch_at(self.scratch, k),
        }
    }
}

/// Enqueues one global Stockham pass (`[radix, ns, n]`) of axis `a`, its input and output already set.
fn enqueue_pass<T: Element>(
    launch: crate::data::Launch<'_>,
    a: &AxisPlan<T>,
    [radix, ns, n]: [usize; 3],
    inverse: bool,
    scale: f64,
    sizes: Sizes,
) -> Result<()> {
    let roots = match &a.kind {
        AxisKind::Stockham(p) => &p.roots,
        // Four-step axes never take global passes; the whole length's roots stand in.
        AxisKind::Bluestein { passes, .. } => &passes.roots,
        AxisKind::FourStep { roots, .. } => roots,
    };
    let count = a.outer * (n / radix) * a.inner;
    let element = std::mem::size_of::<T>() as u64;
    let bytes = 2 * (a.outer * n * a.inner) as u64 * element;
    let flops = (a.outer * n * a.inner) as u64 * 5 * (radix.ilog2().max(1) as u64);
    launch
        .input(roots)
        .index(sizes.index, n as u64)
        .index(sizes.index, a.inner as u64)
        .index(sizes.index, ns as u64)
        .index(sizes.index, count as u64)
        .scalar(<T::Real as Element>::from_c64(Complex64::new(scale, 0.0)))
        .scalar(i32::from(inverse))
        .global(&[sizes.global(count)])
        .local(&[sizes.group])
        .work(bytes, flops)
        .enqueue()
}

/// Enqueues one `fft_lines` launch of `part` of axis `a`, its input and output already set.
fn enqueue_local<T: Element>(
    launch: crate::data::Launch<'_>,
    a: &AxisPlan<T>,
    part: LocalPart,
    scale: f64,
    sizes: Sizes,
) -> Result<()> {
    let (passes, lines, input_lines, output_lines) = local_geometry(a, part)?;
    let Some(shape) = passes.local.as_ref() else { return Ok(()) };
    // The four-step twiddles of a first part: ω_n^{j2·k1}, j2 = (l / inner) mod n2.
    let (tw_roots, tw_n, tw_n2) = match (&a.kind, part) {
        (AxisKind::FourStep { roots, n1, n2, .. }, LocalPart::First) => (roots, n1 * n2, *n2),
        _ => (&passes.roots, 0, 1),
    };
    let (chirp, hat) = match &a.kind {
        AxisKind::Bluestein { chirp, kernel_hat, .. } => (chirp, kernel_hat),
        _ => (&passes.roots, &passes.roots),
    };
    let elements = (lines * passes.n) as u64;
    let flops = 5 * elements * (passes.n as f64).log2().ceil() as u64;
    let element = std::mem::size_of::<T>() as u64;
    let mut launch = launch.input(&passes.roots).index(sizes.index, lines as u64);
    for value in input_lines.into_iter().chain(output_lines) {
        launch = launch.index(sizes.index, value as u64);
    }
    launch
        .scalar(<T::Real as Element>::from_c64(Complex64::new(scale, 0.0)))
        .input(tw_roots)
        .index(sizes.index, tw_n as u64)
        .index(sizes.index, tw_n2 as u64)
        .index(sizes.index, a.inner as u64)
        .input(chirp)
        .input(hat)
        .global(&[shape.groups(lines) * shape.group_size()])
        .local(&[shape.group_size()])
        .work(2 * elements * element, flops)
        .enqueue()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_roots_round_the_host_table() {
        let app = ClApp::new().unwrap();
        if !app.supports::<f64>() {
            return;
        }
        for n in [1usize, 7, 1000, 4096] {
            let host = roots(n, -1.0);
            let single = device_roots::<num_complex::Complex32>(&app, n).unwrap().to_vec().unwrap();
            let double = device_roots::<Complex64>(&app, n).unwrap().to_vec().unwrap();
            for ((h, s), d) in host.iter().zip(&single).zip(&double) {
                // float32: the same value, or a neighbour where the two float64 values round apart.
                assert!((h - Complex64::new(f64::from(s.re), f64::from(s.im))).norm() <= 6e-8, "n={n}: {h} vs {s}");
                // float64: the host's angle 2πk/n is itself rounded (up to 2π·2⁻⁵³ ≈ 7e-16 of error per
                // component), cospi/sinpi's argument k/n far less: the two differ by a few ulps.
                assert!((h - d).norm() <= 2e-15, "n={n}: {h} vs {d}");
            }
        }
    }

    #[test]
    fn factorizations_cover_smooth_lengths_only() {
        assert_eq!(factorize(1), Some(vec![]));
        assert_eq!(factorize(1024), Some(vec![4, 4, 4, 4, 4]));
        assert_eq!(factorize(2048), Some(vec![4, 4, 4, 4, 4, 2]));
        assert_eq!(factorize(1000), Some(vec![4, 2, 5, 5, 5]));
        assert_eq!(factorize(243), Some(vec![3, 3, 3, 3, 3]));
        assert_eq!(factorize(97), None);
        assert_eq!(smooth_length(2 * 97 - 1), 196);
    }

    #[test]
    fn the_host_fft_matches_the_definition() {
        for n in [1usize, 2, 3, 6, 12, 35, 64] {
            let x: Vec<Complex64> = (0..n).map(|k| Complex64::new((k * k % 7) as f64, k as f64 * 0.5 - 1.0)).collect();
            let got = host_fft(&x, -1.0);
            for (k, g) in got.iter().enumerate() {
                let want: Complex64 = (0..n)
                    .map(|j| x[j] * Complex64::from_polar(1.0, -2.0 * PI * ((j * k) % n) as f64 / n as f64))
                    .sum();
                assert!((g - want).norm() < 1e-9 * n as f64, "n={n} k={k}: {g} vs {want}");
            }
        }
    }
}
