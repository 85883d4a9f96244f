//! [`Convolution`]: N-d image convolution and correlation with scipy.ndimage's semantics, border rules applied
//! inside the kernels, stride and dilation, and a planner that picks the direct, tiled or separable algorithm.

use super::conv_pass::{ConvPass, Geometry, PassKernel, PassPreference, trailing3};
use super::filter::{Filter, FilterElement};
use super::{Border, Process};
use crate::app::DeviceKind;
use crate::data::{Element, XData};
use crate::error::{Error, Result};
use num_complex::Complex64;

/// Whether the filter is flipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConvMode {
    /// `out[i] = Σⱼ w[j]·in[i − j + c]`: the filter is flipped (scipy.ndimage.convolve, MATLAB `conv2`,
    /// numpy.convolve).
    #[default]
    Convolution,
    /// `out[i] = Σⱼ w[j]·in[i + j − c]`: no flip (scipy.ndimage.correlate, cuDNN and PyTorch `conv2d`).
    Correlation,
}

/// Which outputs are computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConvOutput {
    /// The input's extent (`⌈n / stride⌉`), the filter centred by scipy.ndimage's rule: its element `w//2 +
    /// origin` (for a convolution, `w//2 + origin` of the flipped filter's mirror image, so even filters centre
    /// as scipy.ndimage.convolve does) sits on the output pixel. Borders are read through the [`Border`] rule.
    #[default]
    Same,
    /// Only outputs whose window lies inside the input: `n − w_eff + 1` (none when the filter is larger), where
    /// `w_eff = (w − 1)·dilation + 1`.
    Valid,
    /// Every output the window touches: `n + w_eff − 1` (scipy.signal's / numpy's `full`), borders read through
    /// the [`Border`] rule.
    Full,
}

impl std::str::FromStr for ConvMode {
    type Err = Error;
    /// `conv` / `convolution` or `corr` / `correlation` (the pipeline-file and command-line names).
    ///
    /// ```
    /// assert_eq!("corr".parse::<cliper::ConvMode>()?, cliper::ConvMode::Correlation);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    fn from_str(name: &str) -> Result<ConvMode> {
        match name {
            "conv" | "convolution" => Ok(ConvMode::Convolution),
            "corr" | "correlation" => Ok(ConvMode::Correlation),
            other => Err(Error::invalid("convolution mode", format!("`{other}` is not conv or corr"))),
        }
    }
}

impl std::str::FromStr for ConvOutput {
    type Err = Error;
    /// `same`, `valid` or `full`.
    ///
    /// ```
    /// assert_eq!("valid".parse::<cliper::ConvOutput>()?, cliper::ConvOutput::Valid);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    fn from_str(name: &str) -> Result<ConvOutput> {
        match name {
            "same" => Ok(ConvOutput::Same),
            "valid" => Ok(ConvOutput::Valid),
            "full" => Ok(ConvOutput::Full),
            other => Err(Error::invalid("convolution output", format!("`{other}` is not same, valid or full"))),
        }
    }
}

/// Which algorithm [`Convolution`] runs (the planner's choice, or an override for tests and tuning).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConvAlgorithm {
    /// Let the planner choose from the filter, the sizes and the device.
    #[default]
    Auto,
    /// One output per work-item, input read through the caches (`conv_direct`).
    Direct,
    /// Output tiles per work-group with the input tile and halo staged in local memory (`conv_tiled`); falls
    /// back to `Direct` when the tile does not fit the device's local memory.
    Tiled,
    /// The filter's extents compiled in, several outputs per work-item in registers, input planes staged in
    /// local memory once and rows streamed through registers (`conv_blocked`); stride and dilation 1 and up to
    /// 32 × 32 × 8 taps, otherwise it falls back to `Tiled`.
    Blocked,
    /// One 1-D pass per axis; an error when the filter is not rank-1.
    Separable,
    /// Through the FFT: border extension, forward transforms, product with the filter's transform, inverse
    /// (stride and dilation 1 only).
    Fft,
}

/// What the planner chose, as [`Convolution::strategy`] reports it.
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
    /// One 1-D pass per axis of a rank-1 filter.
    Separable {
        /// Number of passes (the filter's rank).
        passes: usize,
        /// Whether the passes stage tiles in local memory (`conv_tiled` or `conv_blocked`).
        tiled: bool,
    },
    /// Through the FFT, on padded grids of `points` points per image.
    Fft {
        /// Points per transform (the product of the padded lengths).
        points: usize,
    },
}

/// The settings of a convolution: mode, output size, border rule, origin, stride, dilation, normalisation and
/// algorithm. Per-axis settings take one value per filter axis, or one value for all axes.
///
/// ```
/// use cliper::{Border, ConvOutput, ConvParams};
/// let p = ConvParams::new().border(Border::Reflect).stride(&[2]).output(ConvOutput::Same);
/// assert_eq!(p.output_shape(&[4, 101, 80], &[5, 5])?, vec![4, 51, 40]); // axis 0 is a batch axis
/// let full = ConvParams::new().output(ConvOutput::Full).dilation(&[1, 3]);
/// assert_eq!(full.output_shape(&[100, 80], &[5, 5])?, vec![104, 92]);
/// assert!(ConvParams::new().stride(&[0]).output_shape(&[9], &[3]).unwrap_err().to_string().contains("stride"));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConvParams {
    mode: ConvMode,
    output: ConvOutput,
    border: Border,
    origin: Vec<isize>,
    stride: Vec<usize>,
    dilation: Vec<usize>,
    normalize: bool,
    no_separable: bool,
    algorithm: ConvAlgorithm,
}

impl ConvParams {
    /// Defaults: [`ConvMode::Convolution`], [`ConvOutput::Same`], zero border, origin 0, stride 1, dilation 1,
    /// no normalisation, planner's choice of algorithm (separable passes for rank-1 filters where they pay).
    pub fn new() -> ConvParams {
        ConvParams::default()
    }

    /// Convolution (flipped filter) or correlation.
    pub fn mode(mut self, mode: ConvMode) -> ConvParams {
        self.mode = mode;
        self
    }

    /// Same, valid or full output.
    pub fn output(mut self, output: ConvOutput) -> ConvParams {
        self.output = output;
        self
    }

    /// The border rule for outputs whose window leaves the input (`Same` and `Full`).
    pub fn border(mut self, border: Border) -> ConvParams {
        self.border = border;
        self
    }

    /// scipy.ndimage's `origin` per axis (shifts the filter; `Same` only): between `−(w_eff/2)` and
    /// `(w_eff − 1)/2`.
    pub fn origin(mut self, origin: &[isize]) -> ConvParams {
        self.origin = origin.to_vec();
        self
    }

    /// Output stride per axis (≥ 1): output `i` is the stride-1 output `i·stride`.
    pub fn stride(mut self, stride: &[usize]) -> ConvParams {
        self.stride = stride.to_vec();
        self
    }

    /// Filter dilation per axis (≥ 1): taps `dilation` input elements apart.
    pub fn dilation(mut self, dilation: &[usize]) -> ConvParams {
        self.dilation = dilation.to_vec();
        self
    }

    /// Divide the filter by the sum of its weights first (an error for zero-sum filters). Off by default.
    pub fn normalize(mut self, on: bool) -> ConvParams {
        self.normalize = on;
        self
    }

    /// Whether rank-1 filters may run as separable passes (on by default; results agree to rounding).
    pub fn separable(mut self, allowed: bool) -> ConvParams {
        self.no_separable = !allowed;
        self
    }

    /// The kernel the direct passes ask for: the one named by [`ConvParams::algorithm`], `conv_blocked` (which
    /// falls back to `conv_tiled`) otherwise.
    pub(crate) fn pass_preference(&self) -> PassPreference {
        match self.algorithm {
            ConvAlgorithm::Direct => PassPreference::Direct,
            ConvAlgorithm::Tiled => PassPreference::Tiled,
            _ => PassPreference::Blocked,
        }
    }

    /// Overrides the planner's algorithm choice.
    pub fn algorithm(mut self, algorithm: ConvAlgorithm) -> ConvParams {
        self.algorithm = algorithm;
        self
    }

    /// The output shape for an input and a filter shape: the input's leading (batch) axes, then one extent per
    /// filter axis.
    pub fn output_shape(&self, input: &[usize], filter: &[usize]) -> Result<Vec<usize>> {
        let axes = self.axes("Convolution", input, filter)?;
        let lead = input.len() - filter.len();
        Ok(input.iter().take(lead).copied().chain(axes.iter().map(|a| a.out)).collect())
    }

    /// Per-axis plan, validated: output extent and start.
    pub(crate) fn axes(&self, op: &str, input: &[usize], filter: &[usize]) -> Result<Vec<AxisPlan>> {
        let r = filter.len();
        if r == 0 || r > 3 {
            return Err(Error::invalid(op, format!("a filter has 1 to 3 axes, got shape {filter:?}")));
        }
        if r > input.len() {
            return Err(Error::invalid(
                op,
                format!(
                    "the filter of shape {filter:?} has {r} axes but the input of shape {input:?} only {}",
                    input.len()
                ),
            ));
        }
        if let Some(k) = filter.iter().position(|&w| w == 0) {
            return Err(Error::invalid(op, format!("axis {k} of the filter shape {filter:?} is empty")));
        }
        let stride = per_axis(op, "stride", &self.stride, r, 1)?;
        let dilation = per_axis(op, "dilation", &self.dilation, r, 1)?;
        let origin = per_axis(op, "origin", &self.origin, r, 0)?;
        if let Some(k) = stride.iter().position(|&s| s == 0) {
            return Err(Error::invalid(
                op,
                format!("stride {:?}: axis {k} has stride 0; strides are at least 1", stride),
            ));
        }
        if let Some(k) = dilation.iter().position(|&d| d == 0) {
            return Err(Error::invalid(
                op,
                format!("dilation {:?}: axis {k} has dilation 0; dilations are at least 1", dilation),
            ));
        }
        let lead = input.len() - r;
        let per_axis = input.iter().skip(lead).zip(filter).zip(dilation.iter().zip(&stride)).zip(&origin);
        per_axis
            .enumerate()
            .map(|(k, (((&n, &w), (&d, &s)), &o))| {
                let span = (w - 1)
                    .checked_mul(d)
                    .and_then(|v| v.checked_add(1))
                    .ok_or_else(|| Error::invalid(op, format!("filter extent {w} with dilation {d} overflows")))?;
                let (count, start) = match self.output {
                    ConvOutput::Same => {
                        let (lo, hi) = (-((span / 2) as isize), ((span - 1) / 2) as isize);
                        if o < lo || o > hi {
                            return Err(Error::invalid(
                                op,
                                format!(
                                    "origin {o} on axis {k} is outside [{lo}, {hi}] for a filter spanning {span} \
                                     elements"
                                ),
                            ));
                        }
                        let c = (span / 2) as i64 + o as i64;
                        let start = match self.mode {
                            ConvMode::Correlation => c,
                            ConvMode::Convolution => span as i64 - 1 - c,
                        };
                        (n, start)
                    }
                    _ if o != 0 => {
                        return Err(Error::invalid(
                            op,
                            format!("origin {o} on axis {k}: an origin only applies to ConvOutput::Same"),
                        ));
                    }
                    ConvOutput::Valid => ((n + 1).saturating_sub(span), 0),
                    ConvOutput::Full => (n + span - 1, span as i64 - 1),
                };
                Ok(AxisPlan { filter: w, stride: s, dilation: d, start, out: count.div_ceil(s) })
            })
            .collect()
    }
}

/// One spatial axis of a convolution: filter extent, stride, dilation, start (input coordinate of output 0's
/// first tap, negated) and output extent.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AxisPlan {
    pub filter: usize,
    pub stride: usize,
    pub dilation: usize,
    pub start: i64,
    pub out: usize,
}

fn per_axis<V: Copy + std::fmt::Debug>(op: &str, what: &str, values: &[V], r: usize, default: V) -> Result<Vec<V>> {
    match values {
        [] => Ok(vec![default; r]),
        &[v] => Ok(vec![v; r]),
        _ if values.len() == r => Ok(values.to_vec()),
        _ => Err(Error::invalid(
            op,
            format!(
                "{what} {values:?} has {} values for a {r}-axis filter; give one per axis or one for all",
                values.len()
            ),
        )),
    }
}

/// The geometry of a full-rank pass over the last `r` of three axes.
fn geometry(axes: &[AxisPlan]) -> Geometry {
    Geometry {
        filter: trailing3(axes.iter().map(|a| a.filter), 1),
        stride: trailing3(axes.iter().map(|a| a.stride), 1),
        dilation: trailing3(axes.iter().map(|a| a.dilation), 1),
        start: trailing3(axes.iter().map(|a| a.start), 0),
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
        return Err(Error::Shape {
            op: op.into(),
            expected: format!("{expected:?} (input {:?}, filter {filter_shape:?}, {:?})", input.shape(), params.output),
            got: format!("{:?}", output.shape()),
        });
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
}

impl<T: Element, K: Element> ConvPlan<T, K> {
    /// The plan for an empty output.
    fn nothing() -> ConvPlan<T, K> {
        ConvPlan { passes: vec![], fft: None, strategy: ConvStrategy::Nothing }
    }

    /// One pass with the whole (already oriented and normalised) filter.
    pub(crate) fn direct(
        op: &str,
        params: &ConvParams,
        input: &XData<T>,
        output: &XData<T>,
        filter: &Filter<K>,
        axes: &[AxisPlan],
        preference: PassPreference,
    ) -> Result<ConvPlan<T, K>> {
        if output.is_empty() {
            return Ok(ConvPlan::nothing());
        }
        let mut shape3 = vec![1; 3 - filter.ndim()];
        shape3.extend_from_slice(filter.shape());
        let filter3 = Filter::new(&shape3, filter.values().to_vec())?;
        let value = Complex64::new(params.border.value(), 0.0);
        let pass =
            ConvPass::new(op, input, output, axes.len(), &filter3, &geometry(axes), params.border, value, preference)?;
        let strategy = match pass.kernel_kind() {
            PassKernel::Direct => ConvStrategy::Direct,
            PassKernel::Tiled { ry } => ConvStrategy::Tiled { rows: ry },
            PassKernel::Blocked { vx, ry } => ConvStrategy::Blocked { cols: vx, rows: ry },
        };
        Ok(ConvPlan { passes: vec![pass], fft: None, strategy })
    }

    /// One 1-D pass per axis, last axis first, through scratch arrays. `factors[k]` (already oriented and
    /// normalised) is the 1-D filter of spatial axis k. With a constant border each later pass fills with the
    /// constant times the sums of the factors already applied: that is what the earlier passes would have made
    /// of a border made entirely of the constant.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn separable(
        op: &str,
        params: &ConvParams,
        input: &XData<T>,
        output: &XData<T>,
        factors: &[Filter<K>],
        axes: &[AxisPlan],
        preference: PassPreference,
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
            let filter3 = Filter::new(&filter_shape, factor.values().to_vec())?;
            let g = Geometry {
                filter: filter_shape,
                stride: only_axis(r, k, axis.stride, 1),
                dilation: only_axis(r, k, axis.dilation, 1),
                start: only_axis(r, k, axis.start, 0),
            };
            passes.push(ConvPass::new(op, &from, &to, r, &filter3, &g, params.border, value, preference)?);
            value *= factor.sum();
            from = to;
        }
        let tiled = passes.iter().any(|p| p.kernel_kind() != PassKernel::Direct);
        Ok(ConvPlan { passes, fft: None, strategy: ConvStrategy::Separable { passes: r, tiled } })
    }

    /// The FFT path with the whole (already oriented and normalised) filter.
    pub(crate) fn fft(
        op: &str,
        params: &ConvParams,
        input: &XData<T>,
        output: &XData<T>,
        filter: &Filter<K>,
        axes: &[AxisPlan],
    ) -> Result<ConvPlan<T, K>> {
        if output.is_empty() {
            return Ok(ConvPlan::nothing());
        }
        let plan = super::fft_conv::FftConv::new(op, input, output, filter, axes, params.border)?;
        let strategy = ConvStrategy::Fft { points: plan.points };
        Ok(ConvPlan { passes: vec![], fft: Some(plan), strategy })
    }

    pub(crate) fn strategy(&self) -> ConvStrategy {
        self.strategy
    }

    pub(crate) fn launch(&mut self) -> Result<()> {
        self.passes.iter_mut().try_for_each(|p| p.launch())?;
        self.fft.as_mut().map_or(Ok(()), |f| f.launch())
    }
}

/// Whether the FFT path beats the direct kernels (stride and dilation 1 only). Measured crossovers: on the H100
/// at 8192², tiled 31×31 10.40 ms against FFT 10.75, 41×41 18.10 against 10.73 (63×63: 42.5 against 11.1); on
/// PoCL (2 cores) at 1024², 21×21 126 ms against 169, 31×31 319 against 190. So from 1024 taps on GPUs and 600
/// on CPUs.
pub(crate) fn fft_pays(info: &crate::DeviceInfo, filter: &[usize], axes: &[AxisPlan]) -> bool {
    let taps: usize = filter.iter().product();
    let threshold = if info.kind == DeviceKind::Cpu { 600 } else { 1024 };
    taps >= threshold && axes.iter().all(|a| a.stride == 1 && a.dilation == 1)
}

/// Whether separable passes beat one pass of the whole filter: they do `Σ wₖ` multiply-adds per output instead
/// of `Π wₖ`, but each extra pass streams the image once more. GPUs are bandwidth-bound at small filters, so
/// they need the larger saving.
pub(crate) fn separable_pays(info: &crate::DeviceInfo, filter: &[usize]) -> bool {
    let product: usize = filter.iter().product();
    let sum: usize = filter.iter().sum();
    let factor = if info.kind == DeviceKind::Cpu { 1.0 } else { 2.0 };
    product as f64 >= factor * sum as f64
}

/// Convolution or correlation of real or complex data with a [`Filter`] of rank 1 to 3 over the trailing axes
/// of the input; any leading axes form a batch (a stack of slices, frames or coils), each filtered alike.
///
/// Semantics are scipy.ndimage's: [`ConvMode::Convolution`] is `scipy.ndimage.convolve`,
/// [`ConvMode::Correlation`] is `scipy.ndimage.correlate`, with their centring and `origin` rule (even filters
/// included) for [`ConvOutput::Same`]; [`ConvOutput::Valid`] and [`ConvOutput::Full`] are numpy's; the
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
///   CPUs (measured crossovers).
///
/// ```
/// use cliper::{Border, ClApp, ConvMode, ConvParams, ConvStrategy, Convolution, Filter, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[5], &[0.0f32, 1.0, 2.0, 3.0, 4.0])?;
/// let w = Filter::new(&[3], vec![1.0f32, 2.0, 3.0])?;
/// // scipy.ndimage.convolve(x, w, mode='mirror')  →  [4, 4, 10, 16, 20]
/// let y = Convolution::apply(&x, &w, ConvParams::new().border(Border::Reflect))?;
/// assert_eq!(y.to_vec()?, vec![4.0, 4.0, 10.0, 16.0, 20.0]);
/// // scipy.ndimage.correlate(x, w, mode='constant')  →  [3, 8, 14, 20, 11]
/// let y = Convolution::apply(&x, &w, ConvParams::new().mode(ConvMode::Correlation))?;
/// assert_eq!(y.to_vec()?, vec![3.0, 8.0, 14.0, 20.0, 11.0]);
/// // A batch of two 4×4 images, Gaussian-blurred (σ = 1) with edge borders; the planner runs it separably.
/// let imgs = XData::<f32>::zeros(&app, &[2, 4, 4])?;
/// let out = XData::zeros(&app, &[2, 4, 4])?;
/// let sigma1 = Filter::<f32>::gaussian(1.0, 2)?; // 9×9
/// let mut blur = Convolution::new(&imgs, &out, &sigma1, ConvParams::new().border(Border::Edge));
/// cliper::Process::init(&mut blur)?;
/// assert!(matches!(blur.strategy(), Some(ConvStrategy::Separable { passes: 2, .. })));
/// cliper::Process::launch(&mut blur)?;
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Convolution<T: Element, K: FilterElement<T> = T> {
    input: XData<T>,
    output: XData<T>,
    filter: Filter<K>,
    params: ConvParams,
    plan: Option<ConvPlan<T, K>>,
}

impl<T: Element, K: FilterElement<T>> Convolution<T, K> {
    /// A convolution of `input` into `output` (shape: [`ConvParams::output_shape`]).
    pub fn new(input: &XData<T>, output: &XData<T>, filter: &Filter<K>, params: ConvParams) -> Convolution<T, K> {
        Convolution { input: input.clone(), output: output.clone(), filter: filter.clone(), params, plan: None }
    }

    /// Allocates the output, convolves into it once and returns it.
    pub fn apply(input: &XData<T>, filter: &Filter<K>, params: ConvParams) -> Result<XData<T>> {
        let shape = params.output_shape(input.shape(), filter.shape())?;
        let output = XData::uninit(input.app(), "Convolution", &shape)?;
        let mut c = Convolution::new(input, &output, filter, params);
        c.init()?;
        c.launch()?;
        Ok(output)
    }

    /// The planner's choice; `None` before `init`.
    pub fn strategy(&self) -> Option<ConvStrategy> {
        self.plan.as_ref().map(|p| p.strategy())
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
        let factors =
            if !self.params.no_separable && matches!(algorithm, ConvAlgorithm::Auto | ConvAlgorithm::Separable) {
                filter.separate()
            } else {
                None
            };
        let p = &self.params;
        let direct = |preference| ConvPlan::direct(op, p, &self.input, &self.output, &filter, &axes, preference);
        let plan = match (algorithm, factors) {
            (ConvAlgorithm::Separable, None) => {
                return Err(Error::invalid(
                    op,
                    format!(
                        "ConvAlgorithm::Separable needs a rank-1 filter of 2 or 3 axes; the filter of shape {:?} is not \
                         one{}",
                        self.filter.shape(),
                        if !p.no_separable { "" } else { " (or separable passes were turned off)" }
                    ),
                ));
            }
            (ConvAlgorithm::Separable, Some(f)) => {
                ConvPlan::separable(op, p, &self.input, &self.output, &f, &axes, auto)?
            }
            (ConvAlgorithm::Auto, Some(f)) if separable_pays(info, self.filter.shape()) => {
                ConvPlan::separable(op, p, &self.input, &self.output, &f, &axes, auto)?
            }
            (ConvAlgorithm::Fft, _) => ConvPlan::fft(op, p, &self.input, &self.output, &filter, &axes)?,
            (ConvAlgorithm::Auto, _) if fft_pays(info, self.filter.shape(), &axes) => {
                ConvPlan::fft(op, p, &self.input, &self.output, &filter, &axes)?
            }
            (ConvAlgorithm::Direct, _) => direct(PassPreference::Direct)?,
            (ConvAlgorithm::Tiled, _) => direct(PassPreference::Tiled)?,
            (ConvAlgorithm::Blocked, _) => direct(PassPreference::Blocked)?,
            (ConvAlgorithm::Auto, _) => direct(auto)?,
        };
        self.plan = Some(plan);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        self.plan.as_mut().ok_or_else(|| Error::NotInitialized { op: "Convolution".into() })?.launch()
    }
}
