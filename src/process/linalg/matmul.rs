//! [`MatMul`]: `C = alpha·op(A)·op(B) + beta·C` for batches of real or complex matrices.

use super::gemm_launch::{GemmArgs, enqueue_gemm};
use super::gemm_precision::GemmPrecision;
use super::gemm_strategy::{GemmStrategy, GemmTiles};
use super::real_embedding::{Embedding, embedded_strategy};
use super::wgmma::WgmmaPlan;
use crate::app::ffi::{self, HostGemm, HostOperand};
use crate::app::{DeviceInfo, Kernel, Program};
use crate::data::HostCommand;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::planning::{Batch3, broadcast};
use crate::process::{Prepared, Process};

/// What [`MatMul`] does to an operand before multiplying (BLAS's `N`, `T`, `C`).
///
/// ```
/// use cliper::{MatMul, MatMulParams, MatOp, XData};
/// let app = cliper::ClApp::new()?;
/// let a = XData::from_slice(&app, &[2, 1], &[1.0f32, 2.0])?; // a column
/// let gram = MatMul::apply(&a, &a, MatMulParams::default().op_a(MatOp::Transpose))?; // aᵀ·a
/// assert_eq!(gram.to_vec()?, vec![5.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MatOp {
    /// The matrix as it is.
    #[default]
    None,
    /// Its transpose (the last two axes swapped).
    Transpose,
    /// Its conjugate transpose (`Aᴴ`); the same as [`MatOp::Transpose`] for real types.
    ConjTranspose,
}

impl MatOp {
    fn view<T: Element>(self, x: &XData<T>) -> XData<T> {
        match self {
            MatOp::None => x.clone(),
            MatOp::Transpose | MatOp::ConjTranspose => x.t(),
        }
    }

    fn conjugates<T: Element>(self) -> bool {
        self == MatOp::ConjTranspose && T::IS_COMPLEX
    }
}

/// The parameters of a [`MatMul`]: what to do to each operand, the factors, and (for tuning) the kernel.
/// Default: `op(A) = A`, `op(B) = B`, `alpha = 1`, `beta = 0` (C is only written), the planner's kernel.
///
/// ```
/// use cliper::{MatMulParams, MatOp};
/// let p = MatMulParams::<f32>::default().op_a(MatOp::Transpose).alpha(2.0).beta(1.0);
/// assert_eq!(p.ops(), (MatOp::Transpose, MatOp::None));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatMulParams<T: Element> {
    op_a: MatOp,
    op_b: MatOp,
    alpha: T,
    beta: T,
    strategy: Option<GemmStrategy>,
    precision: GemmPrecision,
}

impl<T: Element> Default for MatMulParams<T> {
    fn default() -> Self {
        MatMulParams {
            op_a: MatOp::None,
            op_b: MatOp::None,
            alpha: T::from_c64(1.0.into()),
            beta: T::default(),
            strategy: None,
            precision: GemmPrecision::Full,
        }
    }
}

impl<T: Element> MatMulParams<T> {
    /// What to do to A before multiplying.
    pub fn op_a(mut self, op: MatOp) -> Self {
        self.op_a = op;
        self
    }

    /// What to do to B before multiplying.
    pub fn op_b(mut self, op: MatOp) -> Self {
        self.op_b = op;
        self
    }

    /// The factor on the product (default 1).
    pub fn alpha(mut self, alpha: T) -> Self {
        self.alpha = alpha;
        self
    }

    /// The factor on the old C (default 0: C is overwritten and never read).
    pub fn beta(mut self, beta: T) -> Self {
        self.beta = beta;
        self
    }

    /// Runs this kernel instead of the planner's choice (tiles are checked against the device in `init`).
    pub fn strategy(mut self, strategy: GemmStrategy) -> Self {
        self.strategy = Some(strategy);
        self
    }

    /// How exactly an `f32` product must be formed ([`GemmPrecision`]; default [`GemmPrecision::Full`]):
    /// [`GemmPrecision::Tf32`] lets the planner use TF32 tensor cores where the device has them;
    /// [`GemmPrecision::Fp32Split`] lets it use them on Hopper ([`GemmStrategy::Wgmma`], faster than FP32 there)
    /// and runs on the other tensor-core GPUs when [`MatMulParams::strategy`] asks for
    /// [`GemmStrategy::TensorCore`]. `c32` products follow it as real ones ([`GemmStrategy::RealEmbedding`]); `f64`
    /// and `c64` ignore it.
    ///
    /// ```
    /// use cliper::{GemmPrecision, GemmStrategy, MatMul, MatMulParams, Process, XData};
    /// let app = cliper::ClApp::new()?;
    /// let a = XData::<f32>::zeros(&app, &[300, 300])?;
    /// let c = XData::<f32>::zeros(&app, &[300, 300])?;
    /// let params = MatMulParams::default().precision(GemmPrecision::Tf32);
    /// assert_eq!(params.precision_of(), GemmPrecision::Tf32);
    /// let mut product = MatMul::new(&a, &a, &c, params);
    /// product.init()?;
    /// // Tensor cores only where the device has them (NVIDIA, compute capability ≥ 8.0).
    /// let tensor = GemmStrategy::tensor_cores::<f32>(app.device(), GemmPrecision::Tf32).is_ok();
    /// assert_eq!(product.strategy() == Some(GemmStrategy::TensorCore), tensor);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn precision(mut self, precision: GemmPrecision) -> Self {
        self.precision = precision;
        self
    }

    /// The precision set by [`MatMulParams::precision`].
    pub fn precision_of(&self) -> GemmPrecision {
        self.precision
    }

    /// The operations on A and B.
    pub fn ops(&self) -> (MatOp, MatOp) {
        (self.op_a, self.op_b)
    }
}

/// `C = alpha·op(A)·op(B) + beta·C`, for `f32`, `f64`, `Complex<f32>` and `Complex<f64>`; `op` is a
/// [`MatOp`] per operand ([`MatMulParams`]).
///
/// - Any M, N, K (K = 0 gives `beta·C`). Operands of shape `[batch…, rows, cols]` multiply matrix by matrix;
///   batch axes broadcast as in numpy (a 2-D operand is used for every matrix of the other).
/// - Operands are read through their strides: a transposed or sliced view (`a.t()`, `slice_axis`) costs no
///   copy. C may be a strided view too but must not overlap A or B.
/// - With `beta = 0` (the default) C is only written, so its old contents (even NaN) do not matter.
///
/// `init` picks the kernel ([`GemmStrategy::for_problem`]: local-memory tiles on GPUs, register blocks on
/// CPUs, both with per-device tile sizes, or the direct kernel for small products) and builds it; `launch` only
/// enqueues.
///
/// ```
/// use cliper::{ClApp, MatMul, MatMulParams, MatOp, Process, XData};
/// let app = ClApp::new()?;
/// let a = XData::from_slice(&app, &[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let b = XData::from_slice(&app, &[2, 2], &[1.0f32, 0.0, 0.0, 2.0])?;
/// let c = XData::from_slice(&app, &[3, 2], &[1.0f32; 6])?;
/// // C = 2·Aᵀ·B + C
/// let params = MatMulParams::default().op_a(MatOp::Transpose).alpha(2.0).beta(1.0);
/// MatMul::new(&a, &b, &c, params).run()?;
/// assert_eq!(c.to_vec()?, vec![3.0, 17.0, 5.0, 21.0, 7.0, 25.0]);
/// // Or allocate the output: a batch of three 2×3 matrices times one 3×2 matrix.
/// let batch = XData::from_slice(&app, &[3, 2, 3], &vec![1.0f32; 18])?;
/// assert_eq!(MatMul::apply(&batch, &a.t(), MatMulParams::default())?.shape(), &[3, 2, 2]);
/// # Ok::<(), cliper::Error>(())
/// ```
///
/// Operands of different element types are rejected when the program is compiled:
/// ```compile_fail
/// # let app = cliper::ClApp::new()?;
/// let a = cliper::XData::<f32>::zeros(&app, &[2, 2])?;
/// let b = cliper::XData::<f64>::zeros(&app, &[2, 2])?;
/// let c = cliper::MatMul::apply(&a, &b, cliper::MatMulParams::default())?;
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct MatMul<T: Element> {
    a: XData<T>,
    b: XData<T>,
    c: XData<T>,
    params: MatMulParams<T>,
    plan: Prepared<Plan<T>>,
    /// A real embedding's expanded operand to reuse (one per MatrixPower, not one per product).
    shared_scratch: Option<XData<T>>,
}

/// Everything `launch` needs, fixed by `init`.
struct Plan<T: Element> {
    strategy: GemmStrategy,
    run: Run<T>,
    index: IndexType,
    /// op(A) and op(B) as views of shapes `[batch…, M, K]` and `[batch…, K, N]` (before broadcasting).
    a: XData<T>,
    b: XData<T>,
    mnk: [usize; 3],
    batch: Batch3,
    bytes: u64,
    flops: u64,
}

/// How a plan runs: the host's GEMM, one kernel of linalg.cl, or the wgmma packing and product.
enum Run<T: Element> {
    /// [`GemmStrategy::Native`]: per product of the batch, the element offsets of its A, B and C.
    Host { offsets: Vec<[usize; 3]> },
    /// A GEMM kernel with its global and local sizes.
    Kernel { program: Program, kernel: Kernel, sizes: [[usize; 3]; 2] },
    /// [`GemmStrategy::Wgmma`]: the product's program and kernel, and the packing of its operands.
    Wgmma { program: Program, kernel: Kernel, packing: Box<WgmmaPlan<T>> },
    /// A complex product run as a real one ([`GemmStrategy::RealEmbedding`]).
    Embedded(Box<Embedding<T, MatMul<T::Real>>>),
}

impl<T: Element> MatMul<T> {
    /// `c = alpha·op(a)·op(b) + beta·c` as `params` say.
    pub fn new(a: &XData<T>, b: &XData<T>, c: &XData<T>, params: MatMulParams<T>) -> MatMul<T> {
        MatMul { a: a.clone(), b: b.clone(), c: c.clone(), params, plan: Prepared::default(), shared_scratch: None }
    }

    /// Allocates C, computes `alpha·op(a)·op(b)` into it once and returns it (`beta` multiplies a C that starts
    /// as zeros).
    pub fn apply(a: &XData<T>, b: &XData<T>, params: MatMulParams<T>) -> Result<XData<T>> {
        let shape = Self::output_shape(a.shape(), b.shape(), &params)?;
        let c = if params.beta == T::default() {
            XData::uninit(a.app(), "MatMul", &shape)?
        } else {
            XData::zeros(a.app(), &shape)?
        };
        MatMul::new(a, b, &c, params).run()?;
        Ok(c)
    }

    /// The shape of `op_a(a)·op_b(b)` for operand shapes `a` and `b`, or an error naming both shapes when
    /// they do not fit together.
    ///
    /// ```
    /// use cliper::{MatMul, MatMulParams, MatOp};
    /// let plain = MatMulParams::<f32>::default();
    /// assert_eq!(MatMul::output_shape(&[5, 2, 3], &[3, 4], &plain)?, vec![5, 2, 4]);
    /// assert_eq!(MatMul::output_shape(&[3, 2], &[3, 4], &plain.op_a(MatOp::Transpose))?, vec![2, 4]);
    /// let err = MatMul::output_shape(&[2, 3], &[4, 5], &plain).unwrap_err();
    /// assert!(err.to_string().contains("[2, 3]") && err.to_string().contains("[4, 5]"));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(a: &[usize], b: &[usize], params: &MatMulParams<T>) -> Result<Vec<usize>> {
        let (op_a, op_b) = params.ops();
        let matrix = |shape: &[usize], op: MatOp, which: &str| -> Result<(Vec<usize>, usize, usize)> {
            let [batch @ .., r, c] = shape else {
                return Err(Error::invalid(
                    "MatMul",
                    format!("operand {which} must have at least 2 axes (rows, columns), got shape {shape:?}"),
                ));
            };
            let (r, c) = if op == MatOp::None { (*r, *c) } else { (*c, *r) };
            Ok((batch.to_vec(), r, c))
        };
        let (batch_a, m, k) = matrix(a, op_a, "A")?;
        let (batch_b, k2, n) = matrix(b, op_b, "B")?;
        if k != k2 {
            return Err(Error::invalid(
                "MatMul",
                format!(
                    "inner dimensions differ: op(A) is {m}×{k} (A has shape {a:?}, op {op_a:?}) but op(B) is {k2}×{n} \
                     (B has shape {b:?}, op {op_b:?})"
                ),
            ));
        }
        let zeros = |len: usize| vec![0; len];
        let (mut shape, _, _) = broadcast((&batch_a, &zeros(batch_a.len())), (&batch_b, &zeros(batch_b.len())))
            .ok_or_else(|| {
                Error::invalid(
                    "MatMul",
                    format!("batch shapes {batch_a:?} (A has shape {a:?}) and {batch_b:?} (B has shape {b:?}) do not broadcast"),
                )
            })?;
        shape.extend([m, n]);
        Ok(shape)
    }

    /// Products run one after another on the queue may share the scratch of a real embedding: `init` then
    /// uses `scratch` (another product's [`MatMul::embedding_scratch`]) where it has the shape it needs.
    pub(crate) fn sharing_scratch(mut self, scratch: Option<XData<T>>) -> Self {
        self.shared_scratch = scratch;
        self
    }

    /// The expanded operand of a real embedding, after `init`.
    pub(crate) fn embedding_scratch(&self) -> Option<XData<T>> {
        self.plan.as_ref().and_then(|p| match &p.run {
            Run::Embedded(embedding) => Some(embedding.scratch().clone()),
            _ => None,
        })
    }

    /// The kernel `init` chose; `None` before `init`.
    pub fn strategy(&self) -> Option<GemmStrategy> {
        self.plan.as_ref().map(|p| p.strategy)
    }

    /// The program `init` built and the kernel it runs (for inspection: [`Program::binary`],
    /// [`Kernel::private_mem_bytes`]); `None` before `init` and for [`GemmStrategy::Native`].
    pub fn compiled(&self) -> Option<(&Program, &Kernel)> {
        self.plan.as_ref().and_then(|p| match &p.run {
            Run::Host { .. } => None,
            Run::Kernel { program, kernel, .. } | Run::Wgmma { program, kernel, .. } => Some((program, kernel)),
            Run::Embedded(embedding) => embedding.product.compiled(),
        })
    }

    /// For a complex product run as a real one ([`GemmStrategy::RealEmbedding`]), the real product's kernel;
    /// `None` before `init` and for every other product.
    ///
    /// ```
    /// use cliper::{GemmStrategy, MatMul, MatMulParams, Process, XData};
    /// use num_complex::Complex64;
    /// let app = cliper::ClApp::new()?;
    /// let a = XData::from_slice(&app, &[1, 2], &[Complex64::new(1.0, 2.0), Complex64::new(0.0, 1.0)])?;
    /// let b = XData::from_slice(&app, &[2, 1], &[Complex64::new(3.0, 0.0), Complex64::new(1.0, 1.0)])?;
    /// let c = XData::zeros(&app, &[1, 1])?;
    /// let mut product = MatMul::new(&a, &b, &c, MatMulParams::default().strategy(GemmStrategy::RealEmbedding));
    /// product.run()?;
    /// assert!(product.embedded_strategy().is_some());
    /// assert_eq!(c.to_vec()?, vec![Complex64::new(2.0, 7.0)]); // (1+2i)·3 + i·(1+i)
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn embedded_strategy(&self) -> Option<GemmStrategy> {
        self.plan.as_ref().and_then(|p| match &p.run {
            Run::Embedded(embedding) => embedding.product.strategy(),
            _ => None,
        })
    }

    /// The checks on the three arrays: one device, C of the product's shape, not overlapping A or B.
    fn check(&self) -> Result<()> {
        let app = self.c.app();
        if !self.a.app().same_as(app) || !self.b.app().same_as(app) {
            return Err(Error::invalid("MatMul", "A, B and C must belong to the same ClApp (device)"));
        }
        let (op_a, op_b) = self.params.ops();
        let expected = Self::output_shape(self.a.shape(), self.b.shape(), &self.params)?;
        if self.c.shape() != expected.as_slice() {
            let why =
                format!("C = op(A)·op(B) with A {:?} ({op_a:?}) and B {:?} ({op_b:?})", self.a.shape(), self.b.shape());
            return Err(Error::shape_because("MatMul", &expected, self.c.shape(), why));
        }
        for (name, x) in [("A", &self.a), ("B", &self.b)] {
            if self.c.overlaps(x) {
                return Err(Error::invalid(
                    "MatMul",
                    format!("C overlaps {name} in one buffer; the product needs a separate output"),
                ));
            }
        }
        Ok(())
    }

    fn plan(&self) -> Result<Plan<T>> {
        self.check()?;
        self.plan_with(self.params.strategy)
    }

    /// The plan for running `strategy`, or the planner's choice for `None` (the arrays checked).
    fn plan_with(&self, strategy: Option<GemmStrategy>) -> Result<Plan<T>> {
        let app = self.c.app();
        let (op_a, op_b) = self.params.ops();
        let (a, b) = (op_a.view(&self.a), op_b.view(&self.b));
        let MatrixAxes { batch: a_batch, dims: [m, k], strides: [sam, sak] } = matrix_axes(&a, "A")?;
        let MatrixAxes { batch: b_batch, dims: [_, n], strides: [sbk, sbn] } = matrix_axes(&b, "B")?;
        let MatrixAxes { batch: (_, c_batch_strides), strides: [_, scn], .. } = matrix_axes(&self.c, "C")?;
        let (batch_shape, stride_a, stride_b) =
            broadcast(a_batch, b_batch).ok_or_else(|| Error::invalid("MatMul", "batch shapes do not broadcast"))?;
        let batch = Batch3::new("MatMul", &batch_shape, [&stride_a, &stride_b, c_batch_strides])?;
        let extent = [a.layout(), b.layout(), self.c.layout()]
            .iter()
            .filter_map(|l| l.span())
            .map(|(_, hi)| hi as u64 + 1)
            .max()
            .unwrap_or(0);
        let index = IndexType::for_extent(extent);
        let count = batch.count() as usize;
        let strategy =
            strategy.unwrap_or_else(|| GemmStrategy::planned::<T>(app.device(), m, n, k, count, self.params.precision));
        // A user's table that cannot be read is an error here rather than a silent fall back to the built-in one.
        if let Some(Err(e)) = super::gemm_table::GemmTable::user() {
            return Err(e);
        }
        let use_beta = self.params.beta != T::default();
        let (mn, e) = ((m * n) as u64, std::mem::size_of::<T>() as u64);
        let per_matrix = ((m * k + k * n) as u64 + mn * (1 + u64::from(use_beta))) * e;
        let flops_per_mac = if T::IS_COMPLEX { 8 } else { 2 };
        let (bytes, flops) = (per_matrix * count as u64, flops_per_mac * mn * k as u64 * count as u64);
        let run = if strategy == GemmStrategy::Native {
            if m == 0 || n == 0 || k == 0 || count == 0 {
                return Err(Error::invalid(
                    "MatMul",
                    format!("the host's GEMM needs non-empty products; op(A)·op(B) is {m}×{k} · {k}×{n} ×{count}"),
                ));
            }
            Run::Host { offsets: batch.offsets([a.offset(), b.offset(), self.c.offset()]) }
        } else if let Some(real_strategy) = embedded_strategy::<T>(strategy) {
            let conj = [self.params.op_a.conjugates::<T>(), self.params.op_b.conjugates::<T>()];
            let precision = self.params.precision;
            let real_product = |[left, right, out]: [&XData<T::Real>; 3], beta: T::Real| {
                let params = MatMulParams::<T::Real>::default().beta(beta).precision(precision);
                let params = real_strategy.map_or(params, |s| params.strategy(s));
                let mut product = MatMul::new(left, right, out, params);
                product.init()?;
                Ok(product)
            };
            let shared = self.shared_scratch.as_ref();
            match Embedding::new(app, [&a, &b, &self.c], conj, self.params.beta, shared, real_product) {
                Ok(embedding) => Run::Embedded(Box::new(embedding)),
                // The planner's choice on operands the embedding cannot read as real matrices (or a complex
                // beta): the complex kernels run instead.
                Err(Error::Unsupported { .. }) if self.params.strategy.is_none() => {
                    return self.plan_with(Some(GemmStrategy::for_problem::<T>(app.device(), m, n, k, count)));
                }
                Err(e) => return Err(e),
            }
        } else if strategy == GemmStrategy::Wgmma {
            match WgmmaPlan::new(app, [m, n, k], count, self.params.precision, extent, scn) {
                Ok((packing, program, kernel)) => Run::Wgmma { program, kernel, packing: Box::new(packing) },
                // The planner's choice on a driver that does not build the retargeted program: the mma.sync
                // kernel runs instead (a user's explicit choice gets the error).
                Err(Error::Unsupported { .. }) if self.params.strategy.is_none() => {
                    return self.plan_with(Some(GemmStrategy::TensorCore));
                }
                Err(e) => return Err(e),
            }
        } else {
            let units = unit_strides([m, n, k], [sam, sak], [sbk, sbn], scn);
            let (program, kernel, global, local) = if strategy == GemmStrategy::TensorCore {
                GemmStrategy::tensor_cores::<T>(app.device(), self.params.precision)?;
                // 16-byte loads of neighbours along an operand's contiguous axis need every group to start on a
                // multiple of `group` elements: row strides, offsets and batch strides.
                let aligned = |v: usize, group: usize| v.is_multiple_of(group);
                let batch_aligned = |which: usize, group: usize| {
                    batch
                        .strides
                        .get(which)
                        .is_some_and(|s| s.iter().take(batch.axes as usize).all(|&v| aligned(v as usize, group)))
                };
                let vectors = |group: usize| {
                    let vec_a =
                        sak == 1 && aligned(sam, group) && aligned(a.offset(), group) && batch_aligned(0, group);
                    let vec_b =
                        sbn == 1 && aligned(sbk, group) && aligned(b.offset(), group) && batch_aligned(1, group);
                    (u8::from(vec_a), u8::from(vec_b))
                };
                let (options, name) = if T::IS_DOUBLE {
                    let (vec_a, vec_b) = vectors(2);
                    let vec = format!(" -DDM_VEC_A={vec_a} -DDM_VEC_B={vec_b}");
                    (format!("{} -DIDX={} -DDMMA=1{vec}{units}", T::build_options(), index.cl_type()), "gemm_dmma")
                } else {
                    let (vec_a, vec_b) = vectors(4);
                    let split = u8::from(self.params.precision == GemmPrecision::Fp32Split);
                    let [_, cols] = tensor_core_block::<T>(self.params.precision, [m, n], count);
                    let vec = format!(" -DTM_SPLIT={split} -DTM_BN={cols} -DTM_VEC_A={vec_a} -DTM_VEC_B={vec_b}");
                    (format!("{} -DIDX={} -DTMMA=1{vec}{units}", T::build_options(), index.cl_type()), "gemm_tmma")
                };
                let source = kernels::only_kernels(&kernels::with_common(kernels::LINALG), &[name]);
                let program = app.build_program("linalg.cl", &source, &options)?;
                let kernel = program.kernel(name)?.owned_by("MatMul");
                let block = tensor_core_block::<T>(self.params.precision, [m, n], count);
                let (global, local) = tensor_core_launch([m, n], count, block);
                (program, kernel, global, local)
            } else {
                let t = program_tiles::<T>(strategy, app.device())?;
                let options = tiled_options::<T>(index, t, &units);
                let name = match strategy {
                    GemmStrategy::Tiled(_) => "gemm_tiled",
                    GemmStrategy::Blocked(_) => "gemm_blocked",
                    GemmStrategy::Direct
                    | GemmStrategy::Native
                    | GemmStrategy::TensorCore
                    | GemmStrategy::Wgmma
                    | GemmStrategy::RealEmbedding => "gemm_direct",
                };
                let source = kernels::only_kernels(&kernels::with_common(kernels::LINALG), &[name]);
                let program = app.build_program("linalg.cl", &source, &options)?;
                let kernel = program.kernel(name)?.owned_by("MatMul");
                // Only the direct kernel's groups depend on what the compiled kernel allows.
                let limit = if strategy == GemmStrategy::Direct { kernel.max_work_group_size()? } else { usize::MAX };
                let (global, local) = launch_sizes(strategy, [m, n], count, limit);
                (program, kernel, global, local)
            };
            Run::Kernel { program, kernel, sizes: [global, local] }
        };
        Ok(Plan { strategy, run, index, a, b, mnk: [m, n, k], batch, bytes, flops })
    }
}

/// The build options of the program holding gemm_tiled, gemm_blocked and gemm_direct for tiles `t`, index type
/// `index` and the unit-stride options `units` ([`unit_strides`]).
pub(super) fn tiled_options<T: Element>(index: IndexType, t: GemmTiles, units: &str) -> String {
    let vector = |width: usize| GemmTiles::vector_type::<T>(width).unwrap_or_else(|| T::CL_TYPE.to_string());
    format!(
        "{} -DIDX={} -DMWG={} -DNWG={} -DKWG={} -DMDIMC={} -DNDIMC={} -DVWM={} -DVWN={} -DVTM={} -DVTN={}{units}",
        T::build_options(),
        index.cl_type(),
        t.mwg,
        t.nwg,
        t.kwg,
        t.mdimc,
        t.ndimc,
        t.vwm,
        t.vwn,
        vector(t.vwm),
        vector(t.vwn),
    )
}

/// The tiles the program is built with for `strategy` (even for the direct kernel, whose program then shares
/// its options with the tiled one's; each program holds only the kernel it runs).
fn program_tiles<T: Element>(strategy: GemmStrategy, info: &DeviceInfo) -> Result<GemmTiles> {
    Ok(match strategy {
        GemmStrategy::Tiled(t) => {
            t.validate::<T>(info)?;
            t
        }
        GemmStrategy::Blocked(t) => {
            t.check::<T>(info, false)?;
            // gemm_tiled is compiled too: give it a K depth and runs it can build with if these do not fit.
            if t.validate::<T>(info).is_ok() { t } else { GemmTiles { kwg: t.mdimc * t.ndimc, vwm: 1, vwn: 1, ..t } }
        }
        GemmStrategy::Direct
        | GemmStrategy::Native
        | GemmStrategy::TensorCore
        | GemmStrategy::Wgmma
        | GemmStrategy::RealEmbedding => GemmTiles::for_device::<T>(info),
    })
}

/// The build options that declare unit strides (`-DA_K_UNIT=…`) for A' `[M, K]` with strides `(sam, sak)`, B'
/// `[K, N]` with `(sbk, sbn)` and C's column stride `scn`. An axis of extent 1 only ever has index 0, so its
/// stride may as well be 1: declaring it so keeps the number of distinct programs down (each costs a compile).
pub(super) fn unit_strides(
    [m, n, k]: [usize; 3],
    [sam, sak]: [usize; 2],
    [sbk, sbn]: [usize; 2],
    scn: usize,
) -> String {
    let unit = |stride: usize, extent: usize| stride == 1 || extent <= 1;
    let (a_k, a_m) = (unit(sak, k), unit(sam, m));
    let (b_n, b_k) = (unit(sbn, n), unit(sbk, k));
    format!(
        " -DA_K_UNIT={} -DA_M_UNIT={} -DB_N_UNIT={} -DB_K_UNIT={} -DC_N_UNIT={} -DA_K_FAST={} -DB_N_FAST={}",
        u8::from(a_k),
        u8::from(a_m),
        u8::from(b_n),
        u8::from(b_k),
        u8::from(unit(scn, n)),
        // The tile loaders walk whichever axis is contiguous in memory.
        u8::from(a_k || !a_m),
        u8::from(b_n || !b_k),
    )
}

/// Global and local sizes for `count` products of `[m, n]` outputs: one work-group per tile for the tiled and
/// blocked kernels; for the direct kernel, groups of up to 16 columns and 256 work-items (at most `limit`, the
/// kernel's own limit).
fn launch_sizes(strategy: GemmStrategy, [m, n]: [usize; 2], count: usize, limit: usize) -> ([usize; 3], [usize; 3]) {
    match strategy {
        GemmStrategy::Tiled(t) | GemmStrategy::Blocked(t) => {
            ([n.div_ceil(t.nwg) * t.ndimc, m.div_ceil(t.mwg) * t.mdimc, count], [t.ndimc, t.mdimc, 1])
        }
        GemmStrategy::TensorCore | GemmStrategy::Wgmma => tensor_core_launch([m, n], count, [128, 128]),
        GemmStrategy::Direct | GemmStrategy::Native | GemmStrategy::RealEmbedding => {
            let limit = limit.clamp(1, 256);
            let l0 = n.next_power_of_two().clamp(1, 16).min(limit);
            let l1 = m.next_power_of_two().clamp(1, (limit / l0).max(1));
            ([n.div_ceil(l0) * l0, m.div_ceil(l1) * l1, count], [l0, l1, 1])
        }
    }
}

/// The block of C `[rows, columns]` a tensor-core work-group computes: 128 × 128 for gemm_dmma (f64); for
/// gemm_tmma (f32) 128 × 256 at [`GemmPrecision::Tf32`] when such blocks fill the device, else 128 × 128
/// (always for the split, whose second set of accumulators leaves no registers for wider blocks).
fn tensor_core_block<T: Element>(precision: GemmPrecision, [m, n]: [usize; 2], count: usize) -> [usize; 2] {
    if !T::IS_DOUBLE && precision == GemmPrecision::Tf32 && super::gemm_choice::wide_tf32_blocks(m, n, count) {
        [128, 256]
    } else {
        [128, 128]
    }
}

/// The launch of the tensor-core kernels: 256 work-items per `block` of C.
pub(super) fn tensor_core_launch(
    [m, n]: [usize; 2],
    count: usize,
    [rows, cols]: [usize; 2],
) -> ([usize; 3], [usize; 3]) {
    ([n.div_ceil(cols) * 256, m.div_ceil(rows), count], [256, 1, 1])
}

/// A matrix operand's axes: the batch axes, then rows and columns.
struct MatrixAxes<'a> {
    /// Extents and strides of the batch axes.
    batch: (&'a [usize], &'a [usize]),
    /// Rows and columns.
    dims: [usize; 2],
    /// The strides of rows and columns.
    strides: [usize; 2],
}

/// The axes of matrix operand `x`; an error naming `which` operand when it has fewer than 2 axes.
fn matrix_axes<'a, T: Element>(x: &'a XData<T>, which: &str) -> Result<MatrixAxes<'a>> {
    match (x.shape(), x.strides()) {
        ([batch @ .., r, c], [batch_strides @ .., sr, sc]) => {
            Ok(MatrixAxes { batch: (batch, batch_strides), dims: [*r, *c], strides: [*sr, *sc] })
        }
        (shape, _) => Err(Error::invalid(
            "MatMul",
            format!("operand {which} must have at least 2 axes (rows, columns), got shape {shape:?}"),
        )),
    }
}

impl<T: Element> Process for MatMul<T> {
    fn name(&self) -> &str {
        "MatMul"
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(self.plan()?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let p = self.plan.get("MatMul")?;
        let (a, b, c) = (&p.a, &p.b, &self.c);
        let [sam, sak] = matrix_axes(a, "A")?.strides;
        let [sbk, sbn] = matrix_axes(b, "B")?.strides;
        let [scm, scn] = matrix_axes(c, "C")?.strides;
        let use_beta = self.params.beta != T::default();
        let args = GemmArgs {
            a: (a, [sam, sak]),
            b: (b, [sbk, sbn]),
            c: (c, [scm, scn]),
            mnk: p.mnk,
            conj: [self.params.op_a.conjugates::<T>(), self.params.op_b.conjugates::<T>()],
            alpha: self.params.alpha,
            beta: self.params.beta,
            batch: &p.batch,
            index: p.index,
            work: [p.bytes, p.flops],
        };
        match &mut p.run {
            Run::Kernel { kernel, sizes, .. } => enqueue_gemm(kernel, &args, *sizes),
            Run::Wgmma { kernel, packing, .. } => packing.enqueue(kernel, &args),
            Run::Embedded(embedding) => embedding.enqueue(self.params.alpha),
            Run::Host { offsets } => {
                let job = HostGemm {
                    dims: p.mnk,
                    a: HostOperand { buffer: a.storage().buffer(), row_stride: sam, col_stride: sak },
                    b: HostOperand { buffer: b.storage().buffer(), row_stride: sbk, col_stride: sbn },
                    c: HostOperand { buffer: c.storage().buffer(), row_stride: scm, col_stride: scn },
                    offsets,
                    alpha: self.params.alpha,
                    beta: self.params.beta,
                    read_c: use_beta,
                    conj_a: self.params.op_a.conjugates::<T>(),
                    conj_b: self.params.op_b.conjugates::<T>(),
                };
                let reads = if use_beta { vec![a, b, c] } else { vec![a, b] };
                HostCommand::new("MatMul", "host_gemm", &reads, &[c])?
                    .work(p.bytes, p.flops)
                    .run(|queue| ffi::host_gemm(queue, &job))
            }
        }
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_strides_treat_axes_of_one_as_contiguous() {
        // Row-major A [M, K] and B [K, N]: K and N fast.
        let plain = unit_strides([64, 32, 16], [16, 1], [32, 1], 1);
        assert!(plain.contains("-DA_K_UNIT=1 -DA_M_UNIT=0 -DB_N_UNIT=1 -DB_K_UNIT=0 -DC_N_UNIT=1"));
        assert!(plain.ends_with("-DA_K_FAST=1 -DB_N_FAST=1"));
        // Aᵀ as a view: M is the contiguous axis, and the loaders walk it.
        let transposed = unit_strides([64, 32, 16], [1, 64], [32, 1], 1);
        assert!(transposed.contains("-DA_K_UNIT=0 -DA_M_UNIT=1") && transposed.contains("-DA_K_FAST=0"));
        // A single row: its row stride is never used, so it counts as 1 (one program less to compile).
        assert!(unit_strides([1, 32, 16], [999, 1], [32, 1], 1).contains("-DA_M_UNIT=1"));
    }

    #[test]
    fn launches_cover_every_output() {
        let tiles = GemmTiles { mwg: 64, nwg: 128, kwg: 16, mdimc: 8, ndimc: 16, vwm: 1, vwn: 1 };
        let (global, local) = launch_sizes(GemmStrategy::Tiled(tiles), [100, 300], 3, 1024);
        assert_eq!((global, local), ([3 * 16, 2 * 8, 3], [16, 8, 1])); // ⌈300/128⌉ × ⌈100/64⌉ tiles, 3 products
        let (global, local) = launch_sizes(GemmStrategy::Direct, [5, 40], 2, 1024);
        assert_eq!(local, [16, 8, 1]);
        assert!(global[0] >= 40 && global[1] >= 5 && global[2] == 2);
        // A kernel that allows fewer work-items gets smaller groups.
        let (_, local) = launch_sizes(GemmStrategy::Direct, [300, 300], 1, 64);
        assert_eq!(local[0] * local[1], 64);
    }

    /// Two products sharing one expanded operand, run one after the other: each gets its own B (the second
    /// expansion waits for the first product's reads on the in-order queue).
    #[test]
    fn products_sharing_a_scratch_each_read_their_own_operand() -> crate::Result<()> {
        use crate::ClApp;
        use num_complex::Complex64;
        let app = ClApp::new()?;
        let z = |re: f64, im: f64| Complex64::new(re, im);
        let a = XData::from_slice(
            &app,
            &[2, 3],
            &[z(1.0, 1.0), z(2.0, 0.0), z(0.0, -1.0), z(3.0, 2.0), z(1.0, 0.0), z(0.5, 0.5)],
        )?;
        let b1 = XData::from_slice(&app, &[3, 1], &[z(1.0, 0.0), z(0.0, 1.0), z(2.0, -1.0)])?;
        let b2 = XData::from_slice(&app, &[3, 1], &[z(-1.0, 2.0), z(4.0, 0.0), z(0.0, 0.0)])?;
        let (c1, c2) = (XData::zeros(&app, &[2, 1])?, XData::zeros(&app, &[2, 1])?);
        let params = MatMulParams::default().strategy(GemmStrategy::RealEmbedding);
        let mut first = MatMul::new(&a, &b1, &c1, params);
        first.init()?;
        let shared = first.embedding_scratch();
        assert!(shared.is_some());
        let mut second = MatMul::new(&a, &b2, &c2, params).sharing_scratch(shared.clone());
        second.init()?;
        assert!(std::sync::Arc::ptr_eq(
            second.embedding_scratch().expect("embedded").storage(),
            shared.expect("embedded").storage()
        ));
        first.launch()?;
        second.launch()?;
        let product = |b: [Complex64; 3]| -> Vec<Complex64> {
            let rows = [[z(1.0, 1.0), z(2.0, 0.0), z(0.0, -1.0)], [z(3.0, 2.0), z(1.0, 0.0), z(0.5, 0.5)]];
            rows.iter().map(|r| r.iter().zip(&b).map(|(x, y)| x * y).sum()).collect()
        };
        assert_eq!(c1.to_vec()?, product([z(1.0, 0.0), z(0.0, 1.0), z(2.0, -1.0)]));
        assert_eq!(c2.to_vec()?, product([z(-1.0, 2.0), z(4.0, 0.0), z(0.0, 0.0)]));
        Ok(())
    }
}
