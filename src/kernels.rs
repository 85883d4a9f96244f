//! The OpenCL C sources of cliper's kernels, embedded in the binary so it runs from any directory.
//!
//! Every program is [`COMMON`] followed by one family's source; processes written outside cliper can build on
//! [`COMMON`] too (see `docs/writing-an-operation.md`).

/// Macros and helpers shared by all kernels: the element-type switches (`T`, `R`, `IS_COMPLEX`, `IS_DOUBLE`,
/// `CONJ`), the index type `IDX`, and `batch_offsets` for batches over up to eight strided axes.
///
/// ```
/// assert!(cliper::kernels::COMMON.contains("batch_offsets"));
/// ```
pub const COMMON: &str = include_str!("../kernels/common.cl");

// One file per operation family (src/process/<family>/), named after it; families with several programs add
// a suffix (`filter_pad.cl`, `fft_lines.cl`).

/// Strided copies: tiled transpose and row copies (the layout family: Transpose, Permute, StridedCopy,
/// `XData::contiguous`).
pub(crate) const LAYOUT: &str = include_str!("../kernels/layout.cl");

/// numpy basic slicing (the layout family: Slice): a gather with signed strides.
pub(crate) const SLICE: &str = include_str!("../kernels/slice.cl");

/// Matrix products (the linalg family: MatMul, MatrixPower): tiled, blocked and direct GEMM kernels, identity
/// matrices.
pub(crate) const LINALG: &str = include_str!("../kernels/linalg.cl");

/// Reductions (the reduce family: NormN, Dot): tree reductions over work-groups, a partials pass, and
/// one-work-item-per-output lanes.
pub(crate) const REDUCE: &str = include_str!("../kernels/reduce.cl");

/// numpy's reductions of real data over any axes (Statistic): chunk states, then their merge.
pub(crate) const REDUCE_STAT: &str = include_str!("../kernels/reduce_stat.cl");

/// Per-label measurements (the measure family: Measure): a scan of the labels, sums and extrema per run of a
/// label, deviations and positions.
pub(crate) const MEASURE: &str = include_str!("../kernels/measure.cl");

/// peak_local_max's candidates (the feature family: PeakLocalMax): the maximum compared, the threshold, the
/// border, the candidates appended by an atomic count.
pub(crate) const FEATURE: &str = include_str!("../kernels/feature.cl");

/// Histograms for threshold searches (the threshold family: ThresholdValue): range and binning passes.
pub(crate) const THRESHOLD: &str = include_str!("../kernels/threshold.cl");

/// Direct convolutions (the filter family: Convolution, SeparableConvolution): `conv_direct`, `conv_tiled` and
/// `conv_blocked`.
pub(crate) const FILTER: &str = include_str!("../kernels/filter.cl");

/// Padding by numpy.pad's rules (Pad).
pub(crate) const FILTER_PAD: &str = include_str!("../kernels/filter_pad.cl");

/// The gradient magnitude of 3-tap derivative stencils in one kernel (GradientMagnitude, fused).
pub(crate) const FILTER_GRADIENT: &str = include_str!("../kernels/filter_gradient.cl");

/// Multi-channel filter banks (FilterBank): the direct kernel and im2col.
pub(crate) const FILTER_BANK: &str = include_str!("../kernels/filter_bank.cl");

/// Fast Fourier transforms (the fft family: Fft): Stockham passes and Bluestein's element-wise steps.
pub(crate) const FFT: &str = include_str!("../kernels/fft.cl");

/// The length-R DFTs both FFT programs share.
pub(crate) const FFT_BUTTERFLIES: &str = include_str!("../kernels/fft_butterflies.cl");

/// The register FFT kernel `fft_lines` (every pass of a line in one launch); the host generates its constants.
pub(crate) const FFT_LINES: &str = include_str!("../kernels/fft_lines.cl");

/// FftShift's roll.
pub(crate) const FFT_SHIFT: &str = include_str!("../kernels/fft_shift.cl");

/// The Fourier filters' element-wise products by a transfer function (the fourier family: FourierFilter).
pub(crate) const FOURIER: &str = include_str!("../kernels/fourier.cl");

/// Coil combination (the mri family: CoilSum, RSoS and the reconstructions).
pub(crate) const MRI: &str = include_str!("../kernels/mri.cl");

/// The non-uniform FFT (the nufft family: Nufft): padding with deconvolution, interpolation, spreading by bins.
pub(crate) const NUFFT: &str = include_str!("../kernels/nufft.cl");

/// Daubechies-2 wavelet analysis and synthesis along one axis, the soft threshold, circular shifts (the wavelet
/// family: Wavelet).
pub(crate) const WAVELET: &str = include_str!("../kernels/wavelet.cl");

/// Iterative solvers' vector steps and device scalars (the solve family: ConjugateGradient).
pub(crate) const SOLVE: &str = include_str!("../kernels/solve.cl");

/// Element-wise operations (the elementwise family: ComplexElementProd, ApplyMask, Complex2Real,
/// ScalarMultiply, Fill).
pub(crate) const ELEMENTWISE: &str = include_str!("../kernels/elementwise.cl");

/// Shepp-Logan phantom generation (the phantom family).
pub(crate) const PHANTOM: &str = include_str!("../kernels/phantom.cl");

/// Rank filters (`RankFilter`): box minimum/maximum passes, bisection for large windows, and what the generated
/// selection-network kernel uses.
pub(crate) const RANK: &str = include_str!("../kernels/rank.cl");

/// Morphology (`DistanceTransform`): the exact Euclidean distance transform, one axis per pass.
pub(crate) const MORPHOLOGY: &str = include_str!("../kernels/morphology.cl");

/// Resampling: the spline prefilter, separable zoom/shift passes and the general gather.
pub(crate) const RESAMPLE: &str = include_str!("../kernels/resample.cl");

/// [`COMMON`] followed by `family`, with a `#line` marker so compiler messages point into the right file.
///
/// ```
/// let src = cliper::kernels::with_common("kernel void k(global T* x) { x[0] = CONJ(x[0]); }");
/// assert!(src.starts_with(cliper::kernels::COMMON));
/// ```
pub fn with_common(family: &str) -> String {
    format!("{COMMON}\n#line 1\n{family}")
}
