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

/// `source` with the definitions of every kernel not named in `keep` blanked out (each removed line left empty,
/// so compiler messages keep their line numbers); helper functions, macros and preprocessor lines stay. A
/// program then compiles only what its process launches: NVIDIA's compiler spends its time per kernel, and a
/// family's file holds kernels for every path (linalg.cl's GEMMs, reduce.cl's passes, layout.cl's copies). A kernel definition starts on a line beginning with `kernel` or `__kernel` and ends with the brace
/// that closes its body.
///
/// ```
/// let src = "inline int two() { return 2; }\nkernel void a(global int* x) {\n    x[0] = two();\n}\n\
///            __kernel __attribute__((reqd_work_group_size(1, 1, 1)))\nvoid b(global int* x) { x[0] = 3; }\n";
/// let only_b = cliper::kernels::only_kernels(src, &["b"]);
/// assert!(only_b.contains("two()") && only_b.contains("void b(") && !only_b.contains("void a("));
/// assert_eq!(only_b.lines().count(), src.lines().count());
/// ```
pub fn only_kernels(source: &str, keep: &[&str]) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(start) = kernel_start(rest) {
        out.push_str(&rest[..start]);
        let definition = &rest[start..];
        let end = definition_end(definition).unwrap_or(definition.len());
        let (text, after) = definition.split_at(end);
        if kernel_name(text).is_some_and(|name| keep.contains(&name)) {
            out.push_str(text);
        } else {
            out.extend(std::iter::repeat_n('\n', text.matches('\n').count()));
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The byte offset of the first line of `text` that begins a kernel definition.
fn kernel_start(text: &str) -> Option<usize> {
    let begins = |line: &str| line.starts_with("__kernel ") || line.starts_with("kernel ");
    if begins(text) {
        return Some(0);
    }
    text.match_indices('\n').map(|(i, _)| i + 1).find(|&i| text.get(i..).is_some_and(begins))
}

/// The name of the kernel `definition` defines: the identifier after `void`.
fn kernel_name(definition: &str) -> Option<&str> {
    let head = definition.get(..definition.find('{')?)?;
    let after_void = head.split("void").nth(1)?.trim_start();
    let end = after_void.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
    after_void.get(..end).filter(|name| !name.is_empty())
}

/// The length of a kernel definition up to and including the brace that closes its body, skipping comments.
fn definition_end(definition: &str) -> Option<usize> {
    let bytes = definition.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    while let Some(&b) = bytes.get(i) {
        match (b, bytes.get(i + 1)) {
            (b'/', Some(b'/')) => i += definition.get(i..)?.find('\n').unwrap_or(definition.len() - i),
            (b'/', Some(b'*')) => i += definition.get(i..)?.find("*/").map_or(definition.len() - i, |e| e + 1),
            (b'{', _) => depth += 1,
            (b'}', _) => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every family's source, with the names of its kernels.
    fn families() -> Vec<(&'static str, Vec<String>)> {
        [
            LAYOUT,
            SLICE,
            LINALG,
            REDUCE,
            REDUCE_STAT,
            MEASURE,
            FEATURE,
            THRESHOLD,
            FILTER,
            FILTER_PAD,
            FILTER_GRADIENT,
            FILTER_BANK,
            FFT,
            FFT_LINES,
            FFT_SHIFT,
            FOURIER,
            MRI,
            NUFFT,
            WAVELET,
            SOLVE,
            ELEMENTWISE,
            PHANTOM,
            RANK,
            MORPHOLOGY,
            RESAMPLE,
        ]
        .into_iter()
        .map(|source| (source, kernels_in(source)))
        .collect()
    }

    #[test]
    fn keeping_one_kernel_keeps_its_whole_definition_and_no_other() {
        let mut total = 0;
        for (source, names) in families() {
            assert_eq!(only_kernels(source, &names.iter().map(String::as_str).collect::<Vec<_>>()), source);
            for name in &names {
                let only = only_kernels(source, &[name.as_str()]);
                assert_eq!(only.lines().count(), source.lines().count(), "{name}: line numbers move");
                // Whole definitions go: the braces left pair up as in the source (whose comments and macros may
                // hold unpaired ones).
                let surplus = |text: &str| text.matches('{').count() as i64 - text.matches('}').count() as i64;
                assert_eq!(surplus(&only), surplus(source), "{name}: a definition was cut");
                let left = kernels_in(&only);
                assert_eq!(left, vec![name.clone()], "{name}: the kernels left");
                total += 1;
            }
        }
        // The 25 families' 132 kernels (one written so that it is not found would lower the count).
        assert!(total >= 132, "{total} kernels found");
    }

    /// The names of the kernels `source` defines, in order.
    fn kernels_in(source: &str) -> Vec<String> {
        let mut names = Vec::new();
        let mut rest = source;
        while let Some(start) = kernel_start(rest) {
            let definition = &rest[start..];
            let end = definition_end(definition).expect("every kernel's body closes");
            names.push(kernel_name(&definition[..end]).expect("every kernel has a name").to_string());
            rest = &definition[end..];
        }
        names
    }

    #[test]
    fn comments_with_braces_do_not_end_a_kernel() {
        let src = "kernel void a(global int* x) {\n    // } not yet\n    /* { */ x[0] = 1;\n}\nkernel void b() {}\n";
        assert_eq!(
            only_kernels(src, &["a"]),
            "kernel void a(global int* x) {\n    // } not yet\n    /* { */ x[0] = 1;\n}\n\n"
        );
    }
}
