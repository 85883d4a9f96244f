//! [`Convolution`]: N-d image convolution and correlation with scipy.ndimage's semantics, border rules applied
//! inside the kernels, stride and dilation, and a planner that picks the direct, tiled or separable algorithm.

use super::border::Border;
use super::conv_params::{AxisPlan, ConvAlgorithm, ConvMode, ConvParams};
use super::conv_pass::{ConvPass, Geometry, PassKernel, PassPreference, fused_separable_macs, trailing3};
use super::weights::{Filter, FilterElement};
use crate::app::DeviceKind;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::process::elementwise::{Epilogue, EpilogueStrategy, PlannedEpilogue};
use crate::process::{Prepared, Process};
use num_complex::Complex64;

/// What the planner chose, as [`Convolution::strategy`] reports it.
///
/// ```
/// use cliper::{ConvParams, ConvStrategy, Convolution, Filter, Process, XData};
/// let app = cliper::ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[64, 64])?;
/// let mut blur = Convolution::new(&x, &Filter::<f32>::gaussian(2.0, 2)?, &XData::zeros(&app, &[64, 64])?, ConvParams::default());
/// blur.init()?;
/// assert!(matches!(blur.strategy(), Some(ConvStrategy::Separable { passes: 2, .. })));
/// assert!(blur.strategy().unwrap().to_string().starts_with("separable"));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvStrategy {
    /// Nothing to compute (an empty output).
    Nothing,
    /// `conv_direct`.
    Direct,
    /// `conv_tiled`, each work-item computing `rows` outputs.
    Tiled {
        /// Outputs per work-item.
        rows: usize,
    },
    /// `conv_blocked`, each work-item computing `cols` × `rows` outputs.
    Blocked {
        /// Neighbouring outputs per work-item along x.
        cols: usize,
        /// Rows of outputs per work-item.
        rows: usize,
    },
    /// On the host's threads, in the mapped buffers of a CPU device (no kernel to compile).
    Host,
    /// `conv_blocked` applying a rank-1 filter's factors one after the other in one pass: each staged row is
    /// filtered along x once, and the rows are combined down y (and z). The image is read and written once.
    SeparableFused {
        /// Neighbouring outputs per work-item along x.
        cols: usize,
        /// Rows of outputs per work-item.
        rows: usize,
    },
    /// One 1-D pass per axis of a rank-1 filter.
    Separable {
        /// Number of passes (the filter's rank).
        passes: usize,
        /// Whether the passes stage tiles in local memory (`conv_tiled` or `conv_blocked`).
        tiled: bool,
        /// How many of the passes run on the host's threads (CPU devices).
        host: usize,
    },
    /// Through the FFT, on padded grids of `points` points per image.
    Fft {
        /// Points per transform (the product of the padded lengths).
        points: usize,
    },
}

impl std::fmt::Display for ConvStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConvStrategy::Nothing => write!(f, "none"),
            ConvStrategy::Direct => write!(f, "conv_direct"),
            ConvStrategy::Tiled { rows } => write!(f, "conv_tiled, {rows} outputs per work-item"),
            ConvStrategy::Blocked { cols, rows } => write!(f, "conv_blocked, {cols}×{rows} outputs per work-item"),
            ConvStrategy::Host => write!(f, "on the host's threads"),
            ConvStrategy::SeparableFused { cols, rows } => {
                write!(f, "separable in one pass (conv_blocked, {cols}×{rows} outputs per work-item)")
            }
            ConvStrategy::Separable { passes, tiled, host } => {
                write!(f, "separable, {passes} passes{}", if *tiled { " through local memory" } else { "" })?;
                match host {
                    0 => Ok(()),
                    h if h == passes => write!(f, " on the host's threads"),
                    h => write!(f, " ({h} on the host's threads)"),
                }
            }
            ConvStrategy::Fft { points } => write!(f, "FFT on {points}-point grids"),
        }
    }
}

/// The geometry of a full-rank pass over the last `r` of three axes.
fn geometry(axes: &[AxisPlan]) -> Geometry {
    Geometry {
        filter: trailing3(axes.iter().map(|a| a.filter), 1),
        stride: trailing3(axes.iter().map(|a| a.stride), 1),
        dilation: trailing3(axes.iter().map(|a| a.dilation), 1),
        start: trailing3(axes.iter().map(|a| a.start), 0),
        factored: false,
    }
}

/// Three axes of a rank-`r` problem with `value` on spatial axis `k` and `fill` on the others.
fn only_axis<V: Copy>(r: usize, k: usize, value: V, fill: V) -> [V; 3] {
    trailing3((0..r).map(|j| if j == k { value } else { fill }), fill)
}

/// The checks every convolution's `init` makes on its arrays; returns the per-axis plans.
pub(crate) fn check_arrays<T: Element>(
    op: &str,
    params: &ConvParams,
    input: &XData<T>,
    output: &XData<T>,
    filter_shape: &[usize],
) -> Result<Vec<AxisPlan>> {
    let axes = params.axes(op, input.shape(), filter_shape)?;
    let expected = params.output_shape(input.shape(), filter_shape)?;
    if output.shape() != expected.as_slice() {
        let why = format!("input {:?}, filter {filter_shape:?}, {:?}", input.shape(), params.output);
        return Err(Error::shape_because(op, &expected, output.shape(), why));
    }
    if !input.app().same_as(output.app()) {
        return Err(Error::invalid(op, "the input and the output must belong to the same ClApp (device)"));
    }
    if output.overlaps(input) {
        return Err(Error::invalid(
            op,
            "the output overlaps the input in one buffer (convolutions cannot run in place)",
        ));
    }
    let lead = input.ndim() - filter_shape.len();
    if !output.is_empty()
        && !matches!(params.border, Border::Constant(_))
        && let Some(k) = input.shape().iter().skip(lead).position(|&n| n == 0)
    {
        return Err(Error::invalid(
            op,
            format!(
                "spatial axis {k} of the input {:?} is empty, so {:?} has nothing to extend it with",
                input.shape(),
                params.border
            ),
        ));
    }
    Ok(axes)
}

/// A planned convolution: its passes (one, or one per axis), the scratch between them, and the choice made.
pub(crate) struct ConvPlan<T: Element, K: Element> {
    passes: Vec<ConvPass<T, K>>,
    fft: Option<super::fft_conv::FftConv<T>>,
    strategy: ConvStrategy,
    /// Element-wise stages a Pipeline handed over, as planned.
    epilogue: PlannedEpilogue,
}

impl<T: Element, K: FilterElement<T>> ConvPlan<T, K> {
    /// The plan for an empty output.
    fn nothing() -> ConvPlan<T, K> {
        ConvPlan { passes: vec![], fft: None, strategy: ConvStrategy::Nothing, epilogue: PlannedEpilogue::default() }
    }

    /// One pass with the whole (already oriented and normalised) filter, computing `epilogue`'s stages in its
    /// stores where it can.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn direct(
        op: &str,
        params: &ConvParams,
        input: &XData<T>,
        output: &XData<T>,
        filter: &Filter<K>,
        axes: &[AxisPlan],
        preference: PassPreference,
        epilogue: &Epilogue<T>,
    ) -> Result<ConvPlan<T, K>> {
        if output.is_empty() {
            return Ok(ConvPlan::nothing());
        }
        let mut shape3 = vec![1; 3 - filter.ndim()];
        shape3.extend_from_slice(filter.shape());
        let filter3 = Filter::new(&shape3, filter.values().to_vec())?.skipping_zero_taps(filter.skips_zero_taps());
        let value = Complex64::new(params.border.value(), 0.0);
        let code = epilogue.in_kernel(op)?;
        let g = geometry(axes);
        let pass = ConvPass::new(op, input, output, axes.len(), &filter3, &g, params.border, value, preference, code)?;
        let strategy = match pass.kernel_kind() {
            PassKernel::Direct => ConvStrategy::Direct,
            PassKernel::Tiled { ry } => ConvStrategy::Tiled { rows: ry },
            PassKernel::Blocked { vx, ry } => ConvStrategy::Blocked { cols: vx, rows: ry },
            PassKernel::Host => ConvStrategy::Host,
        };
        ConvPlan { passes: vec![pass], fft: None, strategy, epilogue: PlannedEpilogue::default() }
            .with_epilogue(epilogue)
    }

    /// One 1-D pass per axis, last axis first, through scratch arrays. `factors[k]` (already oriented and
    /// normalised) is the 1-D filter of spatial axis k. With a constant border each later pass fills with the
    /// constant times the sums of the factors already applied: that is what the earlier passes would have made
    /// of a border made entirely of the constant. The last pass computes `epilogue`'s stages in its stores where
    /// it can.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn separable(
        op: &str,
        params: &ConvParams,
        input: &XData<T>,
        output: &XData<T>,
        factors: &[Filter<K>],
        axes: &[AxisPlan],
        preference: PassPreference,
        epilogue: &Epilogue<T>,
    ) -> Result<ConvPlan<T, K>> {
        let r = axes.len();
        if output.is_empty() {
            return Ok(ConvPlan::nothing());
        }
        if factors.len() != r {
            return Err(Error::invalid(op, format!("{} filter factors for {r} spatial axes", factors.len())));
        }
        let lead = input.ndim() - r;
        let mut value = Complex64::new(params.border.value(), 0.0);
        let mut from = input.clone();
        let mut passes = Vec::with_capacity(r);
        for (i, (k, (axis, factor))) in axes.iter().zip(factors).enumerate().rev().enumerate() {
            // After the pass over axis k, axes k.. have their output extents.
            let shape: Vec<usize> =
                input.shape().iter().take(lead + k).copied().chain(axes.iter().skip(k).map(|a| a.out)).collect();
            let to = if i + 1 == r { output.clone() } else { XData::uninit(input.app(), op, &shape)? };
            let &[taps] = factor.shape() else {
                return Err(Error::invalid(
                    op,
                    format!("the factor of axis {k} has shape {:?}; it must be 1-D", factor.shape()),
                ));
            };
            let filter_shape = only_axis(r, k, taps, 1);
            let filter3 =
                Filter::new(&filter_shape, factor.values().to_vec())?.skipping_zero_taps(factor.skips_zero_taps());
            let g = Geometry {
                filter: filter_shape,
                stride: only_axis(r, k, axis.stride, 1),
                dilation: only_axis(r, k, axis.dilation, 1),
                start: only_axis(r, k, axis.start, 0),
                factored: false,
            };
            let code = if i + 1 == r { epilogue.in_kernel(op)? } else { None };
            passes.push(ConvPass::new(op, &from, &to, r, &filter3, &g, params.border, value, preference, code)?);
            value *= factor.sum();
            from = to;
        }
        let kinds: Vec<PassKernel> = passes.iter().map(|p| p.kernel_kind()).collect();
        let tiled = kinds.iter().any(|k| matches!(k, PassKernel::Tiled { .. } | PassKernel::Blocked { .. }));
        let host = kinds.iter().filter(|&&k| k == PassKernel::Host).count();
        let strategy = ConvStrategy::Separable { passes: r, tiled, host };
        ConvPlan { passes, fft: None, strategy, epilogue: PlannedEpilogue::default() }.with_epilogue(epilogue)
    }

    /// One `conv_blocked` pass that applies a rank-1 filter's `factors` (already oriented and normalised, one per
    /// spatial axis) one after the other, computing `epilogue`'s stages in its stores where it can; `None` where
    /// conv_blocked does not take the geometry (strides, dilations, filters too large to compile in), or where
    /// `only_if_it_pays` and it would not ([`fused_separable_pays`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn separable_fused(
        op: &str,
        params: &ConvParams,
        input: &XData<T>,
        output: &XData<T>,
        factors: &[Filter<K>],
        axes: &[AxisPlan],
        only_if_it_pays: bool,
        epilogue: &Epilogue<T>,
    ) -> Result<Option<ConvPlan<T, K>>> {
        let r = axes.len();
        if output.is_empty() || factors.len() != r || !(2..=3).contains(&r) {
            return Ok(None);
        }
        let values = |k: usize| factors.get(k).map(|f| f.values().iter().map(|v| v.to_c64()).collect::<Vec<_>>());
        let (Some(x), Some(y)) = (values(r - 1), values(r - 2)) else { return Ok(None) };
        let z = if r == 3 { values(0).unwrap_or_default() } else { vec![Complex64::new(1.0, 0.0)] };
        let products = z.iter().flat_map(|&a| y.iter().map(move |&b| a * b));
        let weights: Vec<K> = products.chain(x.iter().copied()).map(K::from_c64).collect();
        let skips = factors.iter().any(|f| f.skips_zero_taps());
        let filter = Filter::new(&[weights.len()], weights)?.skipping_zero_taps(skips);
        let g = Geometry { factored: true, ..geometry(axes) };
        let lead = output.ndim() - r;
        let o = trailing3(output.shape().iter().skip(lead).copied(), 1);
        let batch = output.shape().iter().take(lead).product::<usize>() as u64;
        let Some(macs) = fused_separable_macs::<T>(input.app().device(), &g, o, batch) else { return Ok(None) };
        if only_if_it_pays && !fused_separable_pays(macs, g.filter) {
            return Ok(None);
        }
        let value = Complex64::new(params.border.value(), 0.0);
        let code = epilogue.in_kernel(op)?;
        let pass =
            ConvPass::new(op, input, output, r, &filter, &g, params.border, value, PassPreference::Blocked, code)?;
        let PassKernel::Blocked { vx, ry } = pass.kernel_kind() else {
            return Err(Error::Unsupported { what: format!("{op}: the factors' pass did not take conv_blocked") });
        };
        let strategy = ConvStrategy::SeparableFused { cols: vx, rows: ry };
        let plan = ConvPlan { passes: vec![pass], fft: None, strategy, epilogue: PlannedEpilogue::default() };
        plan.with_epilogue(epilogue).map(Some)
    }

    /// [`ConvPlan::separable_fused`] where `params` ask for it ([`ConvAlgorithm::SeparableFused`]), or where the
    /// planner chooses ([`ConvAlgorithm::Auto`]) and the passes would not run on a CPU device's host threads (their
    /// choice there); `None` otherwise, and where it does not apply or pay.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fused_where_chosen(
        op: &str,
        params: &ConvParams,
        input: &XData<T>,
        output: &XData<T>,
        factors: &[Filter<K>],
        axes: &[AxisPlan],
        epilogue: &Epilogue<T>,
    ) -> Result<Option<ConvPlan<T, K>>> {
        let host_passes =
            output.app().device().kind == DeviceKind::Cpu && params.pass_preference() == PassPreference::Host;
        match params.algorithm {
            ConvAlgorithm::SeparableFused => {
                ConvPlan::separable_fused(op, params, input, output, factors, axes, false, epilogue)
            }
            ConvAlgorithm::Auto if !host_passes => {
                ConvPlan::separable_fused(op, params, input, output, factors, axes, true, epilogue)
            }
            _ => Ok(None),
        }
    }

    /// The FFT path with the whole (already oriented and normalised) filter; `epilogue`'s stages run after it.
    pub(crate) fn fft(
        op: &str,
        params: &ConvParams,
        input: &XData<T>,
        output: &XData<T>,
        filter: &Filter<K>,
        axes: &[AxisPlan],
        epilogue: &Epilogue<T>,
    ) -> Result<ConvPlan<T, K>> {
        if output.is_empty() {
            return Ok(ConvPlan::nothing());
        }
        // Real transforms on the host's threads where the device is the host's CPU (unless kernels are asked for).
        let cpu = input.app().device().kind == crate::app::DeviceKind::Cpu;
        let plan =
            super::fft_conv::FftConv::new(op, input, output, filter, axes, params.border, cpu && !params.kernels_only)?;
        let strategy = ConvStrategy::Fft { points: plan.points() };
        ConvPlan { passes: vec![], fft: Some(plan), strategy, epilogue: PlannedEpilogue::default() }
            .with_epilogue(epilogue)
    }

    /// Records how `epilogue`'s stages run: in the last pass's stores when it took them, else as one element-wise
    /// process of their own after the passes (initialised here).
    fn with_epilogue(mut self, epilogue: &Epilogue<T>) -> Result<ConvPlan<T, K>> {
        self.epilogue = epilogue.plan(self.passes.last().is_some_and(|p| p.has_epilogue()))?;
        Ok(self)
    }

    pub(crate) fn epilogue(&self) -> Option<EpilogueStrategy> {
        self.epilogue.strategy()
    }

    pub(crate) fn strategy(&self) -> ConvStrategy {
        self.strategy
    }

    pub(crate) fn launch(&mut self) -> Result<()> {
        self.passes.iter_mut().try_for_each(|p| p.launch())?;
        self.fft.as_mut().map_or(Ok(()), |f| f.launch())?;
        self.epilogue.launch()
    }
}

/// Whether the FFT path beats the direct kernels (stride and dilation 1 only). Measured crossovers: on the H100
/// at 8192², tiled 31×31 10.40 ms against FFT 10.75, 41×41 18.10 against 10.73 (63×63: 42.5 against 11.1); on
/// PoCL (2 cores) at 1024², 21×21 126 ms against 169, 31×31 319 against 190. So from 1024 taps on GPUs and 600
/// on CPUs.
pub(crate) fn fft_pays(info: &crate::app::DeviceInfo, filter: &[usize], axes: &[AxisPlan]) -> bool {
    let taps: usize = filter.iter().product();
    let threshold = if info.kind == DeviceKind::Cpu { 600 } else { 1024 };
    taps >= threshold && axes.iter().all(|a| a.stride == 1 && a.dilation == 1)
}

/// Whether separable passes beat one pass of the whole filter: they do `Σ wₖ` multiply-adds per output instead
/// of `Π wₖ`, but each extra pass streams the image once more. GPUs are bandwidth-bound at small filters, so
/// they need the larger saving.
pub(crate) fn separable_pays(info: &crate::app::DeviceInfo, filter: &[usize]) -> bool {
    let product: usize = filter.iter().product();
    let sum: usize = filter.iter().sum();
    let factor = if info.kind == DeviceKind::Cpu { 1.0 } else { 2.0 };
    product as f64 >= factor * sum as f64
}

/// Multiply-adds per output up to which a rank-1 filter runs as one `conv_blocked` pass of its factors
/// ([`ConvStrategy::SeparableFused`]) rather than one pass per axis. The model, from the H100's conv_blocked on
/// 8192² f32: a pass costs the larger of its memory time (3×3: 0.23 ms) and its multiply-adds at 14 TMAC/s
/// (15×15: 1.07 ms). Two passes of short factors cost 0.46 ms, which one pass matches at 97 multiply-adds per
/// output; 80 leaves a margin for the model. Below it, one pass also saves a launch per axis, which is most of a
/// small image's time. Gaussians up to σ = 2 (17 taps) and boxes up to 15 fall under it.
const FUSED_MAX_MACS: f64 = 80.0;

/// Whether one pass of a rank-1 filter's factors (`macs` multiply-adds per output, [`fused_separable_macs`]) beats
/// both one pass per axis and the whole filter in one pass (`filter` extents: `Π` multiply-adds per output).
pub(crate) fn fused_separable_pays(macs: f64, filter: [usize; 3]) -> bool {
    macs <= FUSED_MAX_MACS && macs < filter.iter().product::<usize>() as f64
}

/// Convolution or correlation of real or complex data with a [`Filter`] of rank 1 to 3 over the trailing axes
/// of the input; any leading axes form a batch (a stack of slices, frames or coils), each filtered alike.
///
/// Semantics are scipy.ndimage's: [`ConvMode::Convolution`] is `scipy.ndimage.convolve`,
/// [`ConvMode::Correlation`] is `scipy.ndimage.correlate`, with their centring and `origin` rule (even filters
/// included) for [`super::ConvOutput::Same`]; [`super::ConvOutput::Valid`] and [`super::ConvOutput::Full`] are numpy's; the
/// [`Border`] rules map to scipy's modes as documented there. Filters may be any size (even, non-square, larger
/// than the image); stride and dilation as in cuDNN. The filter may be `T`'s real type for complex data.
///
/// The planner (in `init`) picks one of:
/// - separable passes, when the filter is rank-1 (a Gaussian, a box; checked to rounding) and the passes cost
///   less ([`ConvStrategy::Separable`]);
/// - `conv_blocked` ([`ConvStrategy::Blocked`]) for stride and dilation 1 and up to 32 × 32 × 8 taps: the
///   filter's extents compiled in, 4 × 8 outputs per work-item (f32 images; one row for volumes), input planes
///   staged once in local memory with the border rule applied while loading, rows streamed through registers
///   (on the H100, 8192² f32: 3×3 in 0.23 ms, 15×15 in 1.07; on PoCL 2.5× faster than `conv_tiled`);
/// - `conv_tiled`: output tiles per work-group with the input tile and halo in local memory, for strides,
///   dilations and larger filters;
/// - `conv_direct` when no tile fits the device's local memory (very large filters or strides);
/// - the FFT ([`ConvStrategy::Fft`]) for large filters with stride and dilation 1: from 1024 taps on GPUs, 600 on
///   CPUs (measured crossovers);
/// - on CPU devices, filters along one axis and separable passes on the host's threads in the mapped buffers
///   ([`ConvStrategy::Host`], `host` passes of [`ConvStrategy::Separable`]; contiguous outputs): nothing to
///   compile, and on PoCL (2 cores) a 2048² Gaussian of σ = 8 in 18.6 ms against 139 through the kernels
///   (scipy 201). [`ConvParams::kernels_only`] keeps the kernels.
///
/// ```
/// use cliper::{Border, ClApp, ConvMode, ConvParams, ConvStrategy, Convolution, Filter, Process, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[5], &[0.0f32, 1.0, 2.0, 3.0, 4.0])?;
/// let w = Filter::new(&[3], vec![1.0f32, 2.0, 3.0])?;
/// // scipy.ndimage.convolve(x, w), whose default mode is 'reflect'  →  [1, 4, 10, 16, 21]
/// assert_eq!(Convolution::apply(&x, &w, ConvParams::default())?.to_vec()?, vec![1.0, 4.0, 10.0, 16.0, 21.0]);
/// // scipy.ndimage.convolve(x, w, mode='mirror')  →  [4, 4, 10, 16, 20]
/// let y = Convolution::apply(&x, &w, ConvParams::default().border(Border::Mirror))?;
/// assert_eq!(y.to_vec()?, vec![4.0, 4.0, 10.0, 16.0, 20.0]);
/// // scipy.ndimage.correlate(x, w, mode='constant')  →  [3, 8, 14, 20, 11]
/// let corr = ConvParams::default().mode(ConvMode::Correlation).border(Border::ZERO);
/// assert_eq!(Convolution::apply(&x, &w, corr)?.to_vec()?, vec![3.0, 8.0, 14.0, 20.0, 11.0]);
/// // A batch of two 4×4 images, Gaussian-blurred (σ = 1) with edge borders; the planner runs it separably.
/// let imgs = XData::<f32>::zeros(&app, &[2, 4, 4])?;
/// let out = XData::zeros(&app, &[2, 4, 4])?;
/// let sigma1 = Filter::<f32>::gaussian(1.0, 2)?; // 9×9
/// let mut blur = Convolution::new(&imgs, &sigma1, &out, ConvParams::default().border(Border::Nearest));
/// blur.init()?;
/// assert!(matches!(blur.strategy(), Some(ConvStrategy::Separable { passes: 2, .. })));
/// blur.launch()?;
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Convolution<T: Element, K: FilterElement<T> = T> {
    input: XData<T>,
    output: XData<T>,
    filter: Filter<K>,
    params: ConvParams,
    /// Element-wise stages a Pipeline handed over ([`Process::fuse_next`]).
    epilogue: Epilogue<T>,
    plan: Prepared<ConvPlan<T, K>>,
}

impl<T: Element, K: FilterElement<T>> Convolution<T, K> {
    /// A convolution of `input` by `filter` into `output` (shape: [`Convolution::output_shape`]).
    pub fn new(input: &XData<T>, filter: &Filter<K>, output: &XData<T>, params: ConvParams) -> Convolution<T, K> {
        Convolution {
            input: input.clone(),
            output: output.clone(),
            filter: filter.clone(),
            params,
            epilogue: Epilogue::new(input, output),
            plan: Prepared::default(),
        }
    }

    /// Allocates the output, convolves into it once and returns it.
    pub fn apply(input: &XData<T>, filter: &Filter<K>, params: ConvParams) -> Result<XData<T>> {
        let shape = Self::output_shape(input.shape(), filter.shape(), &params)?;
        let output = XData::uninit(input.app(), "Convolution", &shape)?;
        Convolution::new(input, filter, &output, params).run()?;
        Ok(output)
    }

    /// The output shape for an input and a filter shape: the input's leading (batch) axes, then one extent per
    /// filter axis ([`super::ConvOutput`], stride and dilation decide it).
    ///
    /// ```
    /// use cliper::{ConvOutput, ConvParams, Convolution};
    /// let valid = ConvParams::default().output(ConvOutput::Valid);
    /// assert_eq!(Convolution::<f32>::output_shape(&[3, 64, 64], &[5, 5], &valid)?, vec![3, 60, 60]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], filter: &[usize], params: &ConvParams) -> Result<Vec<usize>> {
        params.output_shape(input, filter)
    }

    /// The planner's choice; `None` before `init`.
    pub fn strategy(&self) -> Option<ConvStrategy> {
        self.plan.as_ref().map(|p| p.strategy())
    }

    /// How the element-wise stages a [`crate::Pipeline`] fused after this convolution run; `None` before `init`
    /// or when it took none. See [`EpilogueStrategy`].
    pub fn epilogue(&self) -> Option<EpilogueStrategy> {
        self.plan.as_ref().and_then(|p| p.epilogue())
    }
}

/// The filter as the kernels apply it: normalised if asked, flipped for a convolution.
pub(crate) fn oriented<K: Element>(filter: &Filter<K>, params: &ConvParams) -> Result<Filter<K>> {
    let f = if params.normalize { filter.normalized()? } else { filter.clone() };
    Ok(if params.mode == ConvMode::Convolution { f.flipped() } else { f })
}

impl<T: Element, K: FilterElement<T>> Process for Convolution<T, K> {
    fn name(&self) -> &str {
        "Convolution"
    }

    fn init(&mut self) -> Result<()> {
        let op = "Convolution";
        let axes = check_arrays(op, &self.params, &self.input, &self.output, self.filter.shape())?;
        let filter = oriented(&self.filter, &self.params)?;
        let info = self.output.app().device();
        // conv_blocked (falling back to conv_tiled, then conv_direct) wins on both kinds of device: on PoCL (2
        // Xeon cores, 1024², f32) 3.8 ms against 9.4 tiled and 41 direct for 3×3, 30 against 75 for 15×15.
        let auto = self.params.pass_preference();
        let algorithm = self.params.algorithm;
        let factors = if !self.params.no_separable
            && matches!(algorithm, ConvAlgorithm::Auto | ConvAlgorithm::Separable | ConvAlgorithm::SeparableFused)
        {
            filter.separate()
        } else {
            None
        };
        let p = &self.params;
        let e = &self.epilogue;
        let direct = |preference| ConvPlan::direct(op, p, &self.input, &self.output, &filter, &axes, preference, e);
        let fused = match &factors {
            Some(f) => ConvPlan::fused_where_chosen(op, p, &self.input, &self.output, f, &axes, e)?,
            None => None,
        };
        if let Some(plan) = fused {
            self.plan.set(plan);
            return Ok(());
        }
        let plan = match (algorithm, factors) {
            (ConvAlgorithm::Separable | ConvAlgorithm::SeparableFused, None) => {
                return Err(Error::invalid(
                    op,
                    format!(
                        "ConvAlgorithm::{algorithm:?} needs a rank-1 filter of 2 or 3 axes; the filter of shape {:?} \
                         is not one{}",
                        self.filter.shape(),
                        if !p.no_separable { "" } else { " (or separable passes were turned off)" }
                    ),
                ));
            }
            (ConvAlgorithm::Separable | ConvAlgorithm::SeparableFused, Some(f)) => {
                ConvPlan::separable(op, p, &self.input, &self.output, &f, &axes, auto, e)?
            }
            (ConvAlgorithm::Auto, Some(f)) if separable_pays(info, self.filter.shape()) => {
                ConvPlan::separable(op, p, &self.input, &self.output, &f, &axes, auto, e)?
            }
            (ConvAlgorithm::Fft, _) => ConvPlan::fft(op, p, &self.input, &self.output, &filter, &axes, e)?,
            (ConvAlgorithm::Auto, _) if fft_pays(info, self.filter.shape(), &axes) => {
                ConvPlan::fft(op, p, &self.input, &self.output, &filter, &axes, e)?
            }
            (ConvAlgorithm::Direct, _) => direct(PassPreference::Direct)?,
            (ConvAlgorithm::Tiled, _) => direct(PassPreference::Tiled)?,
            (ConvAlgorithm::Blocked, _) => direct(PassPreference::Blocked)?,
            (ConvAlgorithm::Auto, _) => direct(auto)?,
        };
        self.plan.set(plan);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        self.plan.get("Convolution")?.launch()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }

    fn fuse_next(&mut self, next: &mut dyn Process) -> bool {
        !self.plan.is_ready() && self.epilogue.offer(next)
    }
}
