//! [`FilterBank`]: multi-channel, multi-filter 2-D convolution (`[N, C, H, W]` ⊛ `[K, C, R, S]` →
//! `[N, K, P, Q]`), as cuDNN's convolution forward, run directly or as im2col + [`super::MatMul`].

use super::bank_blocked::BlockShape;
use super::bank_winograd::Winograd;
use super::border::Border;
use super::conv_params::ConvMode;
use crate::app::{DeviceKind, Kernel};
use crate::data::{Launch, XData};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::linalg::{ConvGemm, ConvGeometry, GemmPrecision, GemmStrategy, GemmTiles, MatMul, MatMulParams};
use crate::process::planning::index_type_for;
use crate::process::{Prepared, Process};

/// Work-items per group of `bank_direct` (consecutive output columns).
const DIRECT_WG: usize = 64;
/// Filters each `bank_direct` work-item computes (each input element read is used this many times).
const FILTERS_PER_ITEM: usize = 4;

/// Which algorithm [`FilterBank`] runs.
///
/// ```
/// use cliper::{FilterBank, FilterBankAlgorithm, FilterBankParams, FilterBankStrategy, Process, XData};
/// let app = cliper::ClApp::new()?;
/// let (x, f) = (XData::<f32>::zeros(&app, &[1, 2, 8, 8])?, XData::<f32>::zeros(&app, &[4, 2, 3, 3])?);
/// let params = FilterBankParams::default().algorithm(FilterBankAlgorithm::Direct);
/// let mut bank = FilterBank::new(&x, &f, &XData::zeros(&app, &[1, 4, 6, 6])?, params);
/// bank.init()?;
/// assert_eq!(bank.strategy(), Some(FilterBankStrategy::Direct));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FilterBankAlgorithm {
    /// The planner's choice from the sizes and the device.
    #[default]
    Auto,
    /// `bank_direct`: each work-item accumulates several filters' outputs at one pixel.
    Direct,
    /// `bank_blocked`: stride 1 and dilation 1 with filters of at most 32 × 32 taps (any border, any layout). A
    /// work-group stages an input tile and a block of up to 16 filters' weights in local memory, channel by
    /// channel; each work-item keeps a row segment of the input in registers and forms several outputs of every
    /// filter of the block from each weight it reads. Falls back to `Direct` where it does not apply.
    Blocked,
    /// `bank_im2col` unrolls image patches into a `[C·R·S, P·Q]` matrix per image (in chunks of images that fit
    /// the memory budget), then one batched [`MatMul`] multiplies the `[K, C·R·S]` filters by it. Needs
    /// contiguous filters and output; falls back to `Direct` otherwise.
    Im2col,
    /// An implicit GEMM: the tiled GEMM kernel gathers the patches itself (`-DB_CONV`), the images as a batch,
    /// with no unrolled matrix in memory. Needs contiguous filters and output and a constant border (cuDNN's
    /// zero padding); falls back to `Direct` otherwise.
    ImplicitGemm,
    /// Winograd F(2×2, 3×3): 3 × 3 filters at stride 1 and dilation 1 only (any border, any layout). Filters and
    /// 4 × 4 input patches are transformed, 16 batched [`MatMul`]s of `[K, C]` by `[C, tiles]` replace 36 products
    /// per 2 × 2 outputs by 16, and the 2 × 2 outputs are transformed back. The transformed input and products take
    /// 16·(C + K)·⌈P/2⌉·⌈Q/2⌉ elements per image (images in chunks within the memory budget, as im2col). Its error
    /// bound is looser than a direct sum's (see [`FilterBank`]). Falls back to `Direct` for other filters.
    Winograd,
    /// Winograd F(4×4, 3×3): as `Winograd` with 6 × 6 input patches, 36 batched products per 4 × 4 outputs (2.25
    /// per output, against 4 for F(2×2, 3×3) and 9 direct), and transformed arrays of 36·(C + K)·⌈P/4⌉·⌈Q/4⌉
    /// elements per image (2.25 per output against 4). Its error bound is looser still (see [`FilterBank`]).
    Winograd4x4,
}

impl std::fmt::Display for FilterBankStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FilterBankStrategy::Nothing => write!(f, "none"),
            FilterBankStrategy::Direct => write!(f, "bank_direct"),
            FilterBankStrategy::Blocked { filters, cols } => {
                write!(f, "bank_blocked, {filters} filters × {cols} outputs per work-item")
            }
            FilterBankStrategy::Im2col { images } => write!(f, "im2col + MatMul, {images} images per chunk"),
            FilterBankStrategy::ImplicitGemm { gemm } => write!(f, "implicit GEMM ({gemm})"),
            FilterBankStrategy::Winograd { side, images, gemm } => {
                write!(f, "Winograd F({side}×{side}, 3×3) + MatMul ({gemm}), {images} images per chunk")
            }
        }
    }
}

/// What [`FilterBank`]'s planner chose.
///
/// ```
/// use cliper::{FilterBank, FilterBankAlgorithm, FilterBankParams, FilterBankStrategy, Process, XData};
/// let app = cliper::ClApp::new()?;
/// let (x, f) = (XData::<f32>::zeros(&app, &[2, 8, 8, 8])?, XData::<f32>::zeros(&app, &[16, 8, 3, 3])?);
/// let params = FilterBankParams::default().algorithm(FilterBankAlgorithm::Im2col);
/// let mut bank = FilterBank::new(&x, &f, &XData::zeros(&app, &[2, 16, 6, 6])?, params);
/// bank.init()?;
/// assert!(matches!(bank.strategy(), Some(FilterBankStrategy::Im2col { images: 2 })));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterBankStrategy {
    /// Nothing to compute.
    Nothing,
    /// `bank_direct`.
    Direct,
    /// `bank_blocked`: each work-item forms `cols` consecutive outputs of a row for `filters` filters.
    Blocked {
        /// Filters per work-group (a block of the bank).
        filters: usize,
        /// Consecutive outputs of a row per work-item and filter.
        cols: usize,
    },
    /// im2col + MatMul, `images` images per chunk.
    Im2col {
        /// Images unrolled per chunk.
        images: usize,
    },
    /// A GEMM kernel gathering the patches: gemm_tiled with its tiles (M along the filters, N along the output
    /// pixels), or, at [`GemmPrecision::Tf32`] with 64 filters or more on TF32 tensor cores, gemm_tmma
    /// ([`GemmStrategy::TensorCore`]).
    ImplicitGemm {
        /// The kernel.
        gemm: GemmStrategy,
    },
    /// Winograd F(m×m, 3×3): transforms and (m + 2)² batched products, `images` images per chunk.
    Winograd {
        /// Outputs per tile side, m: 2 (F(2×2, 3×3)) or 4 (F(4×4, 3×3)).
        side: usize,
        /// Images transformed per chunk.
        images: usize,
        /// The batched product's kernel.
        gemm: GemmStrategy,
    },
}

/// The settings of a [`FilterBank`], cuDNN style: per-axis (height, width) padding, stride and dilation.
///
/// The defaults are cuDNN's and PyTorch `conv2d`'s, the libraries this operation follows (not scipy.ndimage
/// like [`super::Convolution`]): no padding, stride 1, dilation 1, a correlation ([`ConvMode::Correlation`]:
/// filters not flipped), padding filled with zeros, and the planner's algorithm.
///
/// ```
/// use cliper::{ConvMode, FilterBank, FilterBankParams};
/// let p = FilterBankParams::default().padding([1, 1]).stride([2, 2]);
/// // P = ⌊(H + 2·pad − dil·(R − 1) − 1) / stride⌋ + 1
/// assert_eq!(FilterBank::<f32>::output_shape(&[8, 3, 64, 48], &[16, 3, 3, 3], &p)?, vec![8, 16, 32, 24]);
/// assert_eq!(FilterBankParams::default(), FilterBankParams::default().mode(ConvMode::Correlation));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct FilterBankParams {
    padding: [usize; 2],
    stride: [usize; 2],
    dilation: [usize; 2],
    mode: ConvMode,
    border: Border,
    algorithm: FilterBankAlgorithm,
    memory_budget: Option<usize>,
    precision: GemmPrecision,
    gemm_tiles: Option<GemmTiles>,
}

impl Default for FilterBankParams {
    fn default() -> FilterBankParams {
        FilterBankParams {
            padding: [0, 0],
            stride: [1, 1],
            dilation: [1, 1],
            mode: ConvMode::Correlation,
            border: Border::ZERO,
            algorithm: FilterBankAlgorithm::Auto,
            memory_budget: None,
            precision: GemmPrecision::Full,
            gemm_tiles: None,
        }
    }
}

impl FilterBankParams {
    /// Rows and columns added on each side (read through the border rule).
    pub fn padding(mut self, padding: [usize; 2]) -> FilterBankParams {
        self.padding = padding;
        self
    }

    /// Output stride (≥ 1) along height and width.
    pub fn stride(mut self, stride: [usize; 2]) -> FilterBankParams {
        self.stride = stride;
        self
    }

    /// Filter dilation (≥ 1) along height and width.
    pub fn dilation(mut self, dilation: [usize; 2]) -> FilterBankParams {
        self.dilation = dilation;
        self
    }

    /// Correlation (default) or convolution (filters flipped).
    pub fn mode(mut self, mode: ConvMode) -> FilterBankParams {
        self.mode = mode;
        self
    }

    /// How the padding is filled (zeros by default; any [`Border`] rule).
    pub fn border(mut self, border: Border) -> FilterBankParams {
        self.border = border;
        self
    }

    /// Overrides the planner's algorithm.
    pub fn algorithm(mut self, algorithm: FilterBankAlgorithm) -> FilterBankParams {
        self.algorithm = algorithm;
        self
    }

    /// Most bytes the im2col matrix may take (default: a quarter of the device's largest allocation, at most
    /// 1 GiB); images are unrolled in chunks that fit.
    pub fn memory_budget(mut self, bytes: usize) -> FilterBankParams {
        self.memory_budget = Some(bytes);
        self
    }

    /// How exactly the products of `f32` banks must be formed when they run as a GEMM (im2col + [`MatMul`], whose
    /// [`MatMulParams::precision`] it sets, or the implicit GEMM; default [`GemmPrecision::Full`]):
    /// [`GemmPrecision::Tf32`] lets them run on TF32 tensor cores where the device has them. Winograd's products
    /// take them only with 256 channels and filters or more, where they are faster than FP32; the direct kernel
    /// always computes in FP32.
    ///
    /// ```
    /// use cliper::{FilterBank, FilterBankParams, GemmPrecision, XData};
    /// let app = cliper::ClApp::new()?;
    /// let x = XData::from_slice(&app, &[1, 1, 2, 2], &[1.0f32, 2.0, 3.0, 4.0])?;
    /// let f = XData::from_slice(&app, &[1, 1, 1, 1], &[0.5f32])?;
    /// let params = FilterBankParams::default().precision(GemmPrecision::Tf32);
    /// assert_eq!(FilterBank::apply(&x, &f, params)?.to_vec()?, vec![0.5, 1.0, 1.5, 2.0]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn precision(mut self, precision: GemmPrecision) -> FilterBankParams {
        self.precision = precision;
        self
    }

    /// The tiles of the implicit GEMM and of Winograd's products instead of the planner's (for tuning; checked
    /// against the device in `init`, an error naming what does not fit). M runs along the filters, N along the
    /// output pixels (Winograd's tiles of 2 × 2 or 4 × 4 outputs).
    ///
    /// ```
    /// use cliper::{FilterBank, FilterBankAlgorithm, FilterBankParams, FilterBankStrategy, GemmStrategy, GemmTiles};
    /// use cliper::{Process, XData};
    /// let app = cliper::ClApp::new()?;
    /// let (x, f) = (XData::<f32>::zeros(&app, &[2, 8, 9, 9])?, XData::<f32>::zeros(&app, &[16, 8, 3, 3])?);
    /// let tiles = GemmTiles::scalar(32, 32, 16, 16, 16);
    /// let params = FilterBankParams::default().algorithm(FilterBankAlgorithm::ImplicitGemm).gemm_tiles(tiles);
    /// let mut bank = FilterBank::new(&x, &f, &XData::zeros(&app, &[2, 16, 7, 7])?, params);
    /// bank.init()?;
    /// assert_eq!(bank.strategy(), Some(FilterBankStrategy::ImplicitGemm { gemm: GemmStrategy::Tiled(tiles) }));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn gemm_tiles(mut self, tiles: GemmTiles) -> FilterBankParams {
        self.gemm_tiles = Some(tiles);
        self
    }

    /// `[N, K, P, Q]` for an input `[N, C, H, W]` and filters `[K, C, R, S]`.
    fn output_shape(&self, input: &[usize], filters: &[usize]) -> Result<Vec<usize>> {
        let op = "FilterBank";
        let (&[n, c, h, w], &[k, fc, r, s]) = (input, filters) else {
            return Err(Error::invalid(
                op,
                format!("needs an input [N, C, H, W] and filters [K, C, R, S]; got {input:?} and {filters:?}"),
            ));
        };
        if c != fc {
            return Err(Error::invalid(
                op,
                format!("the input {input:?} has {c} channels but the filters {filters:?} have {fc}"),
            ));
        }
        if r == 0 || s == 0 {
            return Err(Error::invalid(op, format!("the filters {filters:?} are empty")));
        }
        if self.stride.contains(&0) || self.dilation.contains(&0) {
            return Err(Error::invalid(
                op,
                format!("stride {:?} and dilation {:?} must be at least 1", self.stride, self.dilation),
            ));
        }
        let extent = |size: usize, f: usize, dilation: usize, padding: usize, stride: usize| -> usize {
            let span = (f - 1) * dilation + 1;
            let padded = size + 2 * padding;
            if padded < span { 0 } else { (padded - span) / stride + 1 }
        };
        let ([dh, dw], [ph, pw], [sh, sw]) = (self.dilation, self.padding, self.stride);
        Ok(vec![n, k, extent(h, r, dh, ph, sh), extent(w, s, dw, pw, sw)])
    }
}

/// A bank of `K` filters over `C` channels applied to a batch of `N` images: `y[n, k] = Σ_c x[n, c] ⋆ f[k, c]`
/// with padding, stride and dilation — cuDNN's convolution forward, and seed 004's workload. Real or complex.
///
/// The planner picks `bank_blocked` for up to 16 filters at unit stride and dilation (32 filters of 5 × 5 taps or
/// more; seed 004's bank is 3.4× cuDNN on an H200), `bank_direct` where nothing else applies, a GEMM — im2col +
/// [`MatMul`] on CPUs, an implicit GEMM on GPUs — for many filters and channels, or
/// Winograd for 3 × 3 filters at stride 1 — F(4×4, 3×3) on GPUs where the batch has enough tiles, F(2×2, 3×3)
/// otherwise ([`FilterBankAlgorithm`] forces either) — and reports its choice in [`FilterBank::strategy`].
///
/// Accuracy: the direct, blocked and GEMM paths sum C·R·S products, within `(C·R·S + 4)·ε·Σ|f[k]|·max|x|` of the exact
/// result (ε the unit roundoff). Winograd sums C products of transformed values, whose magnitudes reach 16 times
/// the direct ones': per axis, Σ_a |Aᵀ[i, a]|·|G[a, r]|·Σ_u |Bᵀ[a, u]| ≤ 2·(1 + 1/2 + 1/2) = 4 for every output
/// i and tap r. With C + 12 roundings (the product's C, the transforms' 12) its bound is
/// `16·(C + 12)·ε·Σ|f[k]|·max|x|` — for 64 channels about twice the direct bound. F(4×4, 3×3)'s transforms reach
/// (29⅓)² ≈ 860 times the direct magnitudes (per axis, max over i, r of Σ_a |Aᵀ[i, a]|·|G[a, r]|·Σ_u |Bᵀ[a, u]|),
/// with C + 30 roundings: `860·(C + 30)·ε·Σ|f[k]|·max|x|`, a loose bound (float32 emulation on random data erred
/// by 5.9·10⁻⁷ of `Σ|f[k]|·max|x|` at 64 channels, 16 times F(2×2, 3×3)'s). `tests/filter_bank.rs` checks all three
/// against float64.
///
/// ```
/// use cliper::{FilterBank, FilterBankAlgorithm, FilterBankParams, FilterBankStrategy, Process, XData};
/// let app = cliper::ClApp::new()?;
/// let x = XData::from_slice(&app, &[1, 1, 4, 4], &(0..16).map(|v| v as f32).collect::<Vec<_>>())?;
/// let f = XData::from_slice(&app, &[1, 1, 3, 3], &[1.0f32; 9])?; // a 3 × 3 box sum
/// let params = FilterBankParams::default().algorithm(FilterBankAlgorithm::Winograd);
/// let y = XData::zeros(&app, &[1, 1, 2, 2])?;
/// let mut bank = FilterBank::new(&x, &f, &y, params);
/// bank.run()?;
/// assert!(matches!(bank.strategy(), Some(FilterBankStrategy::Winograd { images: 1, .. })));
/// assert_eq!(y.to_vec()?, vec![45.0, 54.0, 81.0, 90.0]);
/// // F(4×4, 3×3): one 4 × 4 tile, 12 of its outputs past the 2 × 2 output; its transforms round (2/3 is inexact).
/// let mut bank4 = FilterBank::new(&x, &f, &y, FilterBankParams::default().algorithm(FilterBankAlgorithm::Winograd4x4));
/// bank4.run()?;
/// assert!(matches!(bank4.strategy(), Some(FilterBankStrategy::Winograd { side: 4, .. })));
/// let want = [45.0, 54.0, 81.0, 90.0];
/// assert!(y.to_vec()?.iter().zip(want).all(|(got, want)| (got - want).abs() < 1e-4));
/// # Ok::<(), cliper::Error>(())
/// ```
///
/// ```
/// use cliper::{ClApp, FilterBank, FilterBankParams, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[1, 1, 3, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])?;
/// // Two 2×2 filters: a sum and a difference.
/// let f = XData::from_slice(&app, &[2, 1, 2, 2], &[1.0f32, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, -1.0])?;
/// let y = FilterBank::apply(&x, &f, FilterBankParams::default())?;
/// assert_eq!(y.shape(), &[1, 2, 2, 2]);
/// assert_eq!(y.to_vec()?, vec![12.0, 16.0, 24.0, 28.0, -4.0, -4.0, -4.0, -4.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct FilterBank<T: Element> {
    input: XData<T>,
    filters: XData<T>,
    output: XData<T>,
    params: FilterBankParams,
    plan: Prepared<Plan<T>>,
}

struct Plan<T: Element> {
    strategy: FilterBankStrategy,
    geo: [i32; 16],
    index: IndexType,
    value: T,
    /// Multiply-adds of one launch: C·R·S per output.
    macs: u64,
    step: Step<T>,
}

enum Step<T: Element> {
    Nothing,
    Direct {
        kernel: Kernel,
        q_blocks: u64,
        k_blocks: u64,
        groups: u64,
        launch_groups: usize,
    },
    Blocked {
        kernel: Kernel,
        col_tiles: i32,
        row_tiles: i32,
        k_blocks: i32,
        groups: usize,
        group: usize,
    },
    /// The tiled GEMM gathering the patches (boxed: its launch state is large beside the other steps).
    Implicit(Box<ConvGemm>),
    /// `col` holds `[images, C·R·S, P·Q]`: `per_image` = C·R·S·P·Q elements per image.
    Im2col {
        kernel: Kernel,
        col: XData<T>,
        per_image: usize,
        chunks: Vec<(usize, usize, MatMul<T>)>,
    },
    Winograd(Box<Winograd<T>>),
}

impl<T: Element> FilterBank<T> {
    /// A filter bank from `input` `[N, C, H, W]` and `filters` `[K, C, R, S]` into `output` `[N, K, P, Q]`.
    pub fn new(input: &XData<T>, filters: &XData<T>, output: &XData<T>, params: FilterBankParams) -> FilterBank<T> {
        FilterBank {
            input: input.clone(),
            filters: filters.clone(),
            output: output.clone(),
            params,
            plan: Prepared::default(),
        }
    }

    /// Allocates the output, runs the bank once and returns the output.
    pub fn apply(input: &XData<T>, filters: &XData<T>, params: FilterBankParams) -> Result<XData<T>> {
        let shape = Self::output_shape(input.shape(), filters.shape(), &params)?;
        let output = XData::uninit(input.app(), "FilterBank", &shape)?;
        FilterBank::new(input, filters, &output, params).run()?;
        Ok(output)
    }

    /// `[N, K, P, Q]` for an input `[N, C, H, W]` and filters `[K, C, R, S]`, with
    /// `P = ⌊(H + 2·pad − dil·(R − 1) − 1) / stride⌋ + 1` (and Q likewise).
    ///
    /// ```
    /// use cliper::{FilterBank, FilterBankParams};
    /// let shape = FilterBank::<f32>::output_shape(&[2, 4, 32, 32], &[8, 4, 5, 5], &FilterBankParams::default())?;
    /// assert_eq!(shape, vec![2, 8, 28, 28]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], filters: &[usize], params: &FilterBankParams) -> Result<Vec<usize>> {
        params.output_shape(input, filters)
    }

    /// The planner's choice; `None` before `init`.
    pub fn strategy(&self) -> Option<FilterBankStrategy> {
        self.plan.as_ref().map(|p| p.strategy)
    }

    /// The checks on the arrays once the output shape `expected` is known; returns the geometry the kernels
    /// take (N, C, H, W, K, R, S, P, Q, padding, stride, dilation, flip), each within 32 bits.
    fn check(&self, expected: &[usize]) -> Result<[i32; 16]> {
        let (op, p) = ("FilterBank", &self.params);
        if self.output.shape() != expected {
            let why = format!("input {:?}, filters {:?}", self.input.shape(), self.filters.shape());
            return Err(Error::shape_because(op, expected, self.output.shape(), why));
        }
        let app = self.output.app();
        if !self.input.app().same_as(app) || !self.filters.app().same_as(app) {
            return Err(Error::invalid(op, "the input, the filters and the output must belong to the same ClApp"));
        }
        if self.output.overlaps(&self.input) || self.output.overlaps(&self.filters) {
            return Err(Error::invalid(op, "the output overlaps the input or the filters in one buffer"));
        }
        let (x, f) = (self.input.shape(), self.filters.shape());
        let (&[n, c, h, w], &[k, _, r, s], &[_, _, out_p, out_q]) = (x, f, expected) else {
            return Err(Error::invalid(
                op,
                format!("needs an input [N, C, H, W] and filters [K, C, R, S]; got {x:?} and {f:?}"),
            ));
        };
        if !self.output.is_empty() && !matches!(p.border, Border::Constant(_)) && (h == 0 || w == 0) {
            return Err(Error::invalid(op, format!("the images of {x:?} are empty; {:?} cannot pad them", p.border)));
        }
        let geo = [
            n,
            c,
            h,
            w,
            k,
            r,
            s,
            out_p,
            out_q,
            p.padding[0],
            p.padding[1],
            p.stride[0],
            p.stride[1],
            p.dilation[0],
            p.dilation[1],
            usize::from(p.mode == ConvMode::Convolution),
        ];
        let reach = (out_p.max(1) - 1) * p.stride[0] + (r - 1) * p.dilation[0] + h + 2 * p.padding[0];
        let reach_w = (out_q.max(1) - 1) * p.stride[1] + (s - 1) * p.dilation[1] + w + 2 * p.padding[1];
        if geo.iter().chain([&reach, &reach_w]).any(|&v| v >= i32::MAX as usize) {
            return Err(Error::Unsupported {
                what: format!("{op}: an extent of input {x:?} / filters {f:?} exceeds the kernels' 32-bit range"),
            });
        }
        Ok(geo.map(|v| v as i32))
    }

    fn strides(&self) -> ([u64; 8], [u64; 8]) {
        let mut xs = [0u64; 8];
        for (slot, &v) in xs.iter_mut().zip(self.input.strides().iter().chain(self.filters.strides())) {
            *slot = v as u64;
        }
        let mut ys = [0u64; 8];
        for (slot, &v) in ys.iter_mut().zip(self.output.strides()) {
            *slot = v as u64;
        }
        (xs, ys)
    }
}

/// What the layout and the device allow: contiguous filters and output (im2col and the implicit GEMM write C
/// whole), a constant border (the implicit GEMM's only rule), 3 × 3 filters at stride 1 and dilation 1
/// (Winograd's only case), and a CPU device.
#[derive(Clone, Copy, Debug)]
struct Fit {
    contiguous: bool,
    constant_border: bool,
    winograd: bool,
    blocked: bool,
    cpu: bool,
}

/// Bytes one image takes in the unrolled (im2col) and the Winograd-transformed forms (F(2×2, 3×3), F(4×4, 3×3)),
/// and the 4 × 4 output tiles it has.
#[derive(Clone, Copy, Debug)]
struct PerImage {
    im2col: usize,
    winograd: [usize; 2],
    tiles4: usize,
}

/// The planner's algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Choice {
    Direct,
    Blocked,
    Im2col { images: usize },
    Implicit,
    Winograd { side: usize, images: usize },
}

/// The algorithm for `n` images of `c` channels, `k` filters and patches of `crs` values taking `per_image` bytes
/// unrolled or transformed, within `budget` bytes. A GEMM pays when the product is big enough in both filters and
/// patch length to run near its speed; below that the direct kernel reads less memory. The blocked kernel for
/// up to 16 filters (32 of 5 × 5 taps or more) at unit stride and dilation, ahead of Winograd except on CPUs from 16
/// channels; Winograd where it applies and both channels and filters are enough (F(4×4, 3×3) on GPUs with 256
/// tiles or more per chunk); otherwise on GPUs the implicit GEMM (no unrolled
/// matrix), on CPUs im2col, whose product is the host's GEMM. Pure, so it is unit-tested.
fn choose(
    algorithm: FilterBankAlgorithm,
    [n, c, k, crs]: [usize; 4],
    per_image: PerImage,
    budget: usize,
    fit: Fit,
) -> Choice {
    let images_within = |bytes: usize| (budget / bytes.max(1)).clamp(1, n.max(1));
    let images = images_within(per_image.im2col);
    let im2col = fit.contiguous && per_image.im2col <= budget;
    let implicit = fit.contiguous && fit.constant_border;
    let [winograd2, winograd4] = per_image.winograd.map(|bytes| fit.winograd && bytes <= budget);
    let big = k >= if fit.cpu { 8 } else { 16 } && crs >= 16;
    // The implicit GEMM reads no more than the direct kernel: it already wins at 10 filters (H200, seed 004's
    // 10×4×128² ⊛ 10×4×16²: 0.72 ms against 0.93).
    let gemm_worth_it = k >= 8 && crs >= 16;
    // Winograd's transforms cost memory traffic that its fewer products must pay for. PoCL: ahead of the direct
    // kernel from 4 channels and 4 filters (8×8×64² ⊛ 8×8×3²: 1.9 ms against 4.8; 16 filters over 3 channels:
    // 12.1 against 9.7). H200 (2026-11-29, F(4×4, 3×3) with FP32 products, device ms): ahead of the implicit
    // GEMM from 8 channels and 8 filters (8×8×128² ⊛ 8×8×3²: 0.050 against 0.061; 8×16×128² ⊛ 16×16×3²: 0.064
    // against 0.103), behind it with 3 or 4 channels (8×4×128² ⊛ 16×4×3²: 0.056 against 0.038; 4×3×224² ⊛
    // 64×3×3²: 0.22 against 0.062). With TF32 allowed as well: the implicit GEMM on the tensor cores took 0.32,
    // 0.64 and 0.43 ms on the 16×128×56², 32×256×28² and 64×64×56² cases, Winograd 0.20, 0.28 and 0.29.
    let winograd_worth_it = if fit.cpu { c >= 4 && k >= 4 } else { c >= 8 && k >= 8 };
    let [f2, f4] = per_image.winograd.map(images_within);
    let (winograd_2, winograd_4) = (Choice::Winograd { side: 2, images: f2 }, Choice::Winograd { side: 4, images: f4 });
    // F(4×4, 3×3) does 0.56× the products of F(2×2, 3×3) and moves 0.56× the transformed data. On the H200 it
    // took 0.71–0.73× F(2×2)'s time on the four ResNet-like cases (16×128×56² ⊛ 128×128×3²: 0.197 ms against
    // 0.275), but with few tiles its products fill the GPU less (1×256×14² ⊛ 256×256×3², 16 tiles: 0.051
    // against 0.036; 1×64×56², 196 tiles: level). On PoCL its input transform costs more than it saves (2
    // cores, 8×64×56² ⊛ 64×64×3²: F(2×2) 12.6–13.1 ms, F(4×4) 16.5–17.4; its input transform 11.5 against
    // 6.3, its products 2.8–3.5 against 4.6–5.2).
    let four_pays = !fit.cpu && winograd4 && f4 * per_image.tiles4 >= 256;
    let winograd_auto = if four_pays { winograd_4 } else { winograd_2 };
    let winograd_pays = winograd_worth_it && (winograd2 || four_pays);
    // bank_blocked forms 4 outputs per weight it reads and restages the input for every block of 16 filters. H200,
    // device ms against the best other algorithm and cuDNN FP32: seed 004's 10×4×128² ⊛ 10×4×16² 0.127 (implicit
    // GEMM 0.584, cuDNN 0.395); 8×16×128² ⊛ 16×16×3² 0.047 (F(4×4) 0.064, cuDNN 0.053); 4×1×512² ⊛ 8×1×11² 0.070
    // (direct 0.54, cuDNN 0.40); with 32 filters of 5 × 5 still ahead of the implicit GEMM (8×32×64²: 0.115
    // against 0.151), with 64 of 3 × 3 behind it (4×3×224²: 0.078 against 0.062; 2×64×64²: 0.120 against
    // 0.050). PoCL (2 cores): seed 004 24 ms against im2col's 500; 3 × 3 filters with 8 channels 1.1–1.6 against
    // Winograd F(2×2)'s 2.0, but with 64 channels 4.1–4.8 against 2.0–2.4.
    // Against Winograd for 3 × 3 filters, it keeps the lead only with few channels: on the H200 (2026-11-30)
    // 8×16×128² ⊛ 16×16×3² 0.047 against F(4×4)'s 0.064, but from 32 channels F(4×4) wins (8×32×56² ⊛ 16×32×3²:
    // 0.028 against 0.055; 8×64×56² ⊛ 16×64×3²: 0.039 against 0.103, cuDNN 0.041; 8×128×28²: 0.029 against
    // 0.200).
    // Up to 32 filters of 3 × 3 over at most 16 channels it leads F(4×4) too (H200, 2026-11-30, device ms against
    // F(4×4) and cuDNN FP32: 8×16×128² ⊛ 24×16×3² 0.052 against 0.071, cuDNN 0.059; 32×16×3² 0.062 against 0.077;
    // 8×8×128² ⊛ 32×8×3² 0.040 against 0.071; 4×16×256² ⊛ 32×16×3² 0.123 against 0.139), but not always over 24
    // channels (8×24×128² ⊛ 32×24×3² 0.082 against 0.100; 8×24×64² ⊛ 24×24×3² 0.046 against 0.040).
    let taps = crs / c.max(1);
    let few_channels = !fit.cpu && taps >= 9 && c <= 16;
    let blocked_pays = fit.blocked && (k <= 16 || (k <= 32 && (taps >= 25 || few_channels)));
    let blocked_over_winograd = !winograd_pays || c < if fit.cpu { 16 } else { 32 };
    match algorithm {
        FilterBankAlgorithm::Direct => Choice::Direct,
        FilterBankAlgorithm::Blocked if fit.blocked => Choice::Blocked,
        FilterBankAlgorithm::Im2col if im2col => Choice::Im2col { images },
        FilterBankAlgorithm::ImplicitGemm if implicit => Choice::Implicit,
        FilterBankAlgorithm::Winograd if winograd2 => winograd_2,
        FilterBankAlgorithm::Winograd4x4 if winograd4 => winograd_4,
        FilterBankAlgorithm::Auto if blocked_pays && blocked_over_winograd => Choice::Blocked,
        FilterBankAlgorithm::Auto if winograd_pays => winograd_auto,
        FilterBankAlgorithm::Auto if gemm_worth_it && implicit && !fit.cpu => Choice::Implicit,
        FilterBankAlgorithm::Auto if big && im2col => Choice::Im2col { images },
        FilterBankAlgorithm::Auto if big && implicit => Choice::Implicit,
        _ => Choice::Direct,
    }
}

impl<T: Element> Process for FilterBank<T> {
    fn name(&self) -> &str {
        "FilterBank"
    }

    fn init(&mut self) -> Result<()> {
        let op = "FilterBank";
        let p = &self.params;
        let expected = p.output_shape(self.input.shape(), self.filters.shape())?;
        let geo = self.check(&expected)?;
        let [n, c, _, _, k, r, s, out_p, out_q, ..] = geo.map(|v| v as usize);
        let pq = out_p * out_q;
        let app = self.output.app();
        let info = app.device();
        let crs = c * r * s;
        let per_image = crs * pq * std::mem::size_of::<T>();
        let tiles = |side: usize| [out_p.div_ceil(side), out_q.div_ceil(side)];
        let transformed = |side: usize| {
            let [tp, tq] = tiles(side);
            (side + 2) * (side + 2) * (c + k) * tp * tq * std::mem::size_of::<T>()
        };
        let budget = p.memory_budget.unwrap_or((info.max_alloc_bytes as usize / 4).min(1 << 30)).max(1);
        let unit_steps = p.stride == [1, 1] && p.dilation == [1, 1];
        let blocked =
            BlockShape::new(k, c, [r, s], std::mem::size_of::<T>(), info.local_mem_bytes, info.kind == DeviceKind::Cpu)
                .and_then(|shape| Some((shape, shape.grid(n, k, [out_p, out_q])?)))
                .filter(|_| unit_steps);
        let fit = Fit {
            contiguous: self.filters.is_contiguous() && self.output.is_contiguous(),
            constant_border: matches!(p.border, Border::Constant(v) if v.is_finite()),
            winograd: [r, s] == [3, 3] && p.stride == [1, 1] && p.dilation == [1, 1],
            blocked: blocked.is_some(),
            cpu: info.kind == DeviceKind::Cpu,
        };
        let cpu = fit.cpu;
        let [tp4, tq4] = tiles(4);
        let sizes = PerImage { im2col: per_image, winograd: [transformed(2), transformed(4)], tiles4: tp4 * tq4 };
        let choice = choose(p.algorithm, [n, c, k, crs], sizes, budget, fit);
        // Elements of the largest scratch array the kernels index.
        let scratch = match choice {
            Choice::Im2col { images } => images * crs * pq,
            Choice::Winograd { side, images } => {
                let [tp, tq] = tiles(side);
                (side + 2) * (side + 2) * (c.max(k) * images * tp * tq).max(k * c)
            }
            _ => 0,
        };
        let layouts = [self.input.layout(), self.filters.layout(), self.output.layout()];
        let index = index_type_for(&layouts, &[scratch as u64 + 1, (n * k * pq) as u64]);
        let mut options = format!(
            "{} -DIDX={} {} -DWG={DIRECT_WG} -DKB={FILTERS_PER_ITEM}",
            T::build_options(),
            index.cl_type(),
            p.border.build_option()
        );
        if let Choice::Winograd { side: 4, .. } = choice {
            options += " -DWINO_M=4";
        }
        if let (Choice::Blocked, Some((shape, _))) = (choice, blocked) {
            options += &shape.build_options();
        }
        let value = T::from_c64(p.border.value().into());
        // filter_bank.cl's kernels only for the direct and im2col paths: the implicit GEMM builds linalg.cl alone.
        let bank_kernel = |name: &str| -> Result<Kernel> {
            let program = app.build_program("filter_bank.cl", &kernels::with_common(kernels::FILTER_BANK), &options)?;
            Ok(program.kernel(name)?.owned_by(op))
        };
        let (strategy, step) = if self.output.is_empty() {
            (FilterBankStrategy::Nothing, Step::Nothing)
        } else if choice == Choice::Implicit {
            let geometry = ConvGeometry {
                input: [n, c, geo[2] as usize, geo[3] as usize],
                filters: [k, c, r, s],
                output: [out_p, out_q],
                stride: p.stride,
                dilation: p.dilation,
                padding: p.padding,
                flip: p.mode == ConvMode::Convolution,
                value: p.border.value(),
            };
            let [xn, xc, xh, xw] = self.input.strides() else {
                return Err(Error::invalid(op, format!("input strides {:?} are not 4-D", self.input.strides())));
            };
            let strides = [*xn, *xc, *xh, *xw];
            let gemm = ConvGemm::new::<T>(app, op, &geometry, strides, index, p.gemm_tiles, p.precision)?;
            (FilterBankStrategy::ImplicitGemm { gemm: gemm.strategy() }, Step::Implicit(Box::new(gemm)))
        } else if let Choice::Winograd { side, images } = choice {
            // The products' M is the filters, often 64 to 256, and N the tiles, many: on GPUs the implicit GEMM's
            // narrow tiles beat the planner's square-size pick (H100, 64×64×56² ⊛ 64×64×3²: 0.50 ms against 0.73
            // with 32 × 32 tiles; 32×256×28² ⊛ 256×256×3²: 0.46 against 0.51). With TF32 allowed, the tensor
            // cores pay only for long products: H200, F(4×4, 3×3), device ms, FP32 against TF32 products:
            // 64×64×56² 0.29 against 0.40, 16×128×56² 0.20 against 0.22, 32×256×28² 0.31 against 0.28. Full FP32
            // is always within what TF32 allows.
            let tensor_cores = c >= 256
                && k >= 256
                && !T::IS_COMPLEX
                && !T::IS_DOUBLE
                && GemmStrategy::tensor_cores::<f32>(info, p.precision).is_ok();
            let narrow = GemmTiles { mwg: 64, nwg: 128, kwg: 16, mdimc: 8, ndimc: 16, vwm: 4, vwn: 4 };
            let gemm_tiles = p
                .gemm_tiles
                .or_else(|| (!cpu && !tensor_cores && k >= 64 && narrow.validate::<T>(info).is_ok()).then_some(narrow));
            let product = match gemm_tiles {
                Some(t) => MatMulParams::default().strategy(GemmStrategy::Tiled(t)),
                None if tensor_cores => MatMulParams::default().precision(p.precision),
                None => MatMulParams::default(),
            };
            let winograd = Winograd::new(app, op, [n, c, k], side, tiles(side), images, product, bank_kernel)?;
            let gemm = winograd.gemm();
            (FilterBankStrategy::Winograd { side, images, gemm }, Step::Winograd(Box::new(winograd)))
        } else if let (Choice::Blocked, Some((shape, ([col_tiles, row_tiles, k_blocks], groups)))) = (choice, blocked) {
            let (filters, cols) = shape.filters_and_cols();
            let kernel = bank_kernel("bank_blocked")?;
            let group = shape.group_size();
            let step = Step::Blocked { kernel, col_tiles, row_tiles, k_blocks, groups, group };
            (FilterBankStrategy::Blocked { filters, cols }, step)
        } else if let Choice::Im2col { images } = choice {
            let col = XData::uninit(app, op, &[images, crs, pq])?;
            let weights = self.filters.reshape(&[k, crs])?;
            let out = self.output.reshape(&[n, k, pq])?;
            let mut chunks = Vec::new();
            for n0 in (0..n).step_by(images) {
                let count = images.min(n - n0);
                let b = col.slice_axis(0, 0..count)?;
                let params = MatMulParams::default().precision(p.precision);
                let mut product = MatMul::new(&weights, &b, &out.slice_axis(0, n0..n0 + count)?, params);
                product.init()?;
                chunks.push((n0, count, product));
            }
            let kernel = bank_kernel("bank_im2col")?;
            (FilterBankStrategy::Im2col { images }, Step::Im2col { kernel, col, per_image: crs * pq, chunks })
        } else {
            let q_blocks = out_q.div_ceil(DIRECT_WG) as u64;
            let k_blocks = k.div_ceil(FILTERS_PER_ITEM) as u64;
            let groups = q_blocks * out_p as u64 * k_blocks * n as u64;
            let cap = if cpu { info.compute_units as u64 * 16 } else { 1 << 22 };
            let kernel = bank_kernel("bank_direct")?;
            let launch_groups = groups.min(cap) as usize;
            (FilterBankStrategy::Direct, Step::Direct { kernel, q_blocks, k_blocks, groups, launch_groups })
        };
        let macs = self.output.len() as u64 * crs as u64;
        self.plan.set(Plan { strategy, geo, index, value, macs, step });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let (xs, ys) = self.strides();
        let plan = self.plan.get("FilterBank")?;
        let (idx, geo, value) = (plan.index, plan.geo, plan.value);
        let element = std::mem::size_of::<T>() as u64;
        let flops = plan.macs * if T::IS_COMPLEX { 8 } else { 2 };
        let bytes = (self.input.len() + self.filters.len() + self.output.len()) as u64 * element;
        match &mut plan.step {
            Step::Nothing => Ok(()),
            Step::Direct { kernel, q_blocks, k_blocks, groups, launch_groups } => {
                operands(kernel, [&self.input, &self.filters, &self.output], idx, [xs, ys], geo, value)
                    .index("q_blocks", idx, *q_blocks)
                    .index("k_blocks", idx, *k_blocks)
                    .index("groups", idx, *groups)
                    .global(&[*launch_groups * DIRECT_WG])
                    .local(&[DIRECT_WG])
                    .work(bytes, flops)
                    .enqueue()
            }
            Step::Blocked { kernel, col_tiles, row_tiles, k_blocks, groups, group } => {
                operands(kernel, [&self.input, &self.filters, &self.output], idx, [xs, ys], geo, value)
                    .scalar("col_tiles", *col_tiles)
                    .scalar("row_tiles", *row_tiles)
                    .scalar("k_blocks", *k_blocks)
                    .global(&[*groups * *group])
                    .local(&[*group])
                    .work(bytes, flops)
                    .enqueue()
            }
            Step::Implicit(gemm) => gemm.launch(&self.input, &self.filters, &self.output),
            Step::Winograd(winograd) => {
                winograd.launch(&self.input, idx, xs, &self.filters, &self.output, ys, geo, value)
            }
            Step::Im2col { kernel, col, per_image, chunks } => {
                for (n0, count, product) in chunks {
                    let total = (*count * *per_image) as u64;
                    let groups = total.div_ceil(256).min(1 << 20) as usize;
                    kernel
                        .launch()
                        .input("x", &self.input)
                        .index("x_off", idx, self.input.offset() as u64)
                        .scalar("xs", xs)
                        .output("col", col)
                        .scalar("geo", geo)
                        .scalar("value", value)
                        .index("n0", idx, *n0 as u64)
                        .index("total", idx, total)
                        .global(&[groups * 256])
                        .local(&[256])
                        .work(total * element * 2, 0)
                        .enqueue()?;
                    product.launch()?;
                }
                Ok(())
            }
        }
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// The leading arguments of `bank_direct` and `bank_blocked`: input, filters and output with their offsets, the
/// strides (`xs` of the input and the filters, `ys` of the output), the geometry and the border's value.
fn operands<'k, T: Element>(
    kernel: &'k mut Kernel,
    [x, f, y]: [&XData<T>; 3],
    idx: IndexType,
    [xs, ys]: [[u64; 8]; 2],
    geo: [i32; 16],
    value: T,
) -> Launch<'k> {
    kernel
        .launch()
        .input("x", x)
        .index("x_off", idx, x.offset() as u64)
        .scalar("xs", xs)
        .input("f", f)
        .index("f_off", idx, f.offset() as u64)
        .output("y", y)
        .index("y_off", idx, y.offset() as u64)
        .scalar("ys", ys)
        .scalar("geo", geo)
        .scalar("value", value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_algorithms_for_many_filters_and_long_patches() {
        let auto = FilterBankAlgorithm::Auto;
        let gpu = Fit { contiguous: true, constant_border: true, winograd: false, blocked: false, cpu: false };
        let cpu = Fit { cpu: true, ..gpu };
        let bytes = |im2col: usize| PerImage { im2col, winograd: [1 << 40; 2], tiles4: 64 };
        // 64 filters over 64 × 3 × 3 patches: the implicit GEMM on GPUs; im2col on CPUs, as many images per
        // chunk as the budget holds.
        assert_eq!(choose(auto, [10, 64, 64, 576], bytes(1000), 4500, gpu), Choice::Implicit);
        assert_eq!(choose(auto, [10, 64, 64, 576], bytes(1000), 4500, cpu), Choice::Im2col { images: 4 });
        // A border the implicit GEMM cannot read (reflect, …): im2col.
        let reflect = Fit { constant_border: false, ..gpu };
        assert_eq!(choose(auto, [10, 64, 64, 576], bytes(1000), 4500, reflect), Choice::Im2col { images: 4 });
        // Seed 004's 10 filters of 4 × 16 × 16: the implicit GEMM on GPUs, the direct kernel on CPUs.
        assert_eq!(choose(auto, [10, 4, 10, 1024], bytes(1000), 1 << 30, gpu), Choice::Implicit);
        assert_eq!(choose(auto, [10, 4, 7, 1024], bytes(1000), 1 << 30, cpu), Choice::Direct);
        // Few filters, or short patches: the direct kernel.
        assert_eq!(choose(auto, [10, 64, 4, 576], bytes(1000), 1 << 30, gpu), Choice::Direct);
        assert_eq!(choose(auto, [10, 1, 64, 9], bytes(1000), 1 << 30, gpu), Choice::Direct);
        // CPUs switch from 8 filters on.
        assert_eq!(choose(auto, [10, 64, 8, 576], bytes(1000), 1 << 30, cpu), Choice::Im2col { images: 10 });
        // A strided output rules the GEMMs out even when asked for; one image larger than the budget im2col.
        let strided = Fit { contiguous: false, ..gpu };
        let im2col = FilterBankAlgorithm::Im2col;
        let implicit = FilterBankAlgorithm::ImplicitGemm;
        assert_eq!(choose(im2col, [10, 64, 64, 576], bytes(1000), 1 << 30, strided), Choice::Direct);
        assert_eq!(choose(implicit, [10, 64, 64, 576], bytes(1000), 1 << 30, strided), Choice::Direct);
        assert_eq!(choose(im2col, [10, 64, 64, 576], bytes(1000), 999, gpu), Choice::Direct);
        assert_eq!(choose(implicit, [10, 64, 64, 576], bytes(1000), 999, gpu), Choice::Implicit);
    }

    #[test]
    fn winograd_for_three_by_three_with_enough_channels_and_filters() {
        let auto = FilterBankAlgorithm::Auto;
        let gpu = Fit { contiguous: true, constant_border: true, winograd: true, blocked: false, cpu: false };
        let cpu = Fit { cpu: true, ..gpu };
        let bytes = PerImage { im2col: 1000, winograd: [2000, 1125], tiles4: 64 };
        let winograd = |images| Choice::Winograd { side: 2, images };
        let winograd4 = |images| Choice::Winograd { side: 4, images };
        // GPUs from 8 channels and 8 filters, F(4×4, 3×3) with 256 tiles or more per chunk; CPUs from 4, F(2×2).
        assert_eq!(choose(auto, [8, 8, 8, 72], bytes, 1 << 30, gpu), winograd4(8));
        assert_eq!(choose(auto, [8, 32, 32, 288], bytes, 1 << 30, gpu), winograd4(8));
        assert_eq!(choose(auto, [8, 4, 16, 36], bytes, 1 << 30, gpu), Choice::Implicit);
        assert_eq!(choose(auto, [8, 4, 4, 36], bytes, 1 << 30, cpu), winograd(8));
        // Few tiles: F(2×2, 3×3) (one image of 16 tiles; a budget of two images of 64 tiles).
        let small = PerImage { tiles4: 16, ..bytes };
        assert_eq!(choose(auto, [1, 256, 256, 2304], small, 1 << 30, gpu), winograd(1));
        assert_eq!(choose(auto, [8, 64, 64, 576], bytes, 3000, gpu), winograd(1));
        assert_eq!(choose(auto, [8, 64, 64, 576], bytes, 4500, gpu), winograd4(4));
        // 4 × 4 tiles on CPUs only when asked for, within the budget (1125 bytes per image).
        assert_eq!(choose(FilterBankAlgorithm::Winograd4x4, [8, 64, 64, 576], bytes, 1 << 30, cpu), winograd4(8));
        assert_eq!(choose(FilterBankAlgorithm::Winograd4x4, [8, 64, 64, 576], bytes, 3000, gpu), winograd4(2));
        assert_eq!(choose(auto, [8, 3, 16, 27], bytes, 1 << 30, cpu), Choice::Im2col { images: 8 });
        // Any border and layout; in chunks within the budget; not when one image's transforms exceed it.
        let any = Fit { contiguous: false, constant_border: false, ..gpu };
        assert_eq!(choose(auto, [8, 64, 64, 576], bytes, 5000, any), winograd4(4));
        assert_eq!(choose(auto, [8, 64, 64, 576], bytes, 1999, any), Choice::Direct);
        assert_eq!(choose(FilterBankAlgorithm::Winograd, [8, 1, 1, 9], bytes, 1 << 30, any), winograd(8));
        // Filters other than 3 × 3 at stride 1: never.
        let other = Fit { winograd: false, ..gpu };
        assert_eq!(choose(FilterBankAlgorithm::Winograd, [8, 64, 64, 576], bytes, 1 << 30, other), Choice::Direct);
    }

    #[test]
    fn blocked_for_few_filters() {
        let auto = FilterBankAlgorithm::Auto;
        let gpu = Fit { contiguous: true, constant_border: true, winograd: false, blocked: true, cpu: false };
        let cpu = Fit { cpu: true, ..gpu };
        let (gpu3, cpu3) = (Fit { winograd: true, ..gpu }, Fit { winograd: true, ..cpu });
        let bytes = PerImage { im2col: 1000, winograd: [2000, 1125], tiles4: 64 };
        // Seed 004 (10 filters of 4 × 16 × 16) everywhere; up to 32 filters from 5 × 5 taps, 16 below.
        assert_eq!(choose(auto, [10, 4, 10, 1024], bytes, 1 << 30, gpu), Choice::Blocked);
        assert_eq!(choose(auto, [10, 4, 10, 1024], bytes, 1 << 30, cpu), Choice::Blocked);
        assert_eq!(choose(auto, [8, 32, 32, 800], bytes, 1 << 30, gpu), Choice::Blocked);
        assert_eq!(choose(auto, [8, 32, 33, 800], bytes, 1 << 30, gpu), Choice::Implicit);
        assert_eq!(choose(auto, [4, 3, 64, 27], bytes, 1 << 30, gpu3), Choice::Implicit);
        // 3 × 3 with few filters: ahead of Winograd below 32 channels on GPUs, below 16 on CPUs.
        assert_eq!(choose(auto, [8, 16, 16, 144], bytes, 1 << 30, gpu3), Choice::Blocked);
        assert_eq!(choose(auto, [8, 32, 16, 288], bytes, 1 << 30, gpu3), Choice::Winograd { side: 4, images: 8 });
        assert_eq!(choose(auto, [8, 8, 8, 72], bytes, 1 << 30, cpu3), Choice::Blocked);
        assert_eq!(choose(auto, [4, 64, 16, 576], bytes, 1 << 30, cpu3), Choice::Winograd { side: 2, images: 4 });
        assert_eq!(choose(auto, [4, 64, 32, 576], bytes, 1 << 30, gpu3), Choice::Winograd { side: 4, images: 4 });
        // Up to 32 filters of 3 × 3 over at most 16 channels on GPUs; over 24 channels, or on CPUs, Winograd.
        assert_eq!(choose(auto, [8, 16, 24, 144], bytes, 1 << 30, gpu3), Choice::Blocked);
        assert_eq!(choose(auto, [8, 8, 32, 72], bytes, 1 << 30, gpu3), Choice::Blocked);
        assert_eq!(choose(auto, [8, 16, 33, 144], bytes, 1 << 30, gpu3), Choice::Winograd { side: 4, images: 8 });
        assert_eq!(choose(auto, [8, 24, 24, 216], bytes, 1 << 30, gpu3), Choice::Winograd { side: 4, images: 8 });
        assert_eq!(choose(auto, [8, 16, 24, 144], bytes, 1 << 30, cpu3), Choice::Winograd { side: 2, images: 8 });
        // Where it does not apply (a stride, a dilation, more than 32 taps): never, even when asked for.
        let other = Fit { blocked: false, ..gpu };
        assert_eq!(choose(FilterBankAlgorithm::Blocked, [10, 4, 10, 1024], bytes, 1 << 30, other), Choice::Direct);
        assert_eq!(choose(auto, [10, 4, 10, 1024], bytes, 1 << 30, other), Choice::Implicit);
    }
}
