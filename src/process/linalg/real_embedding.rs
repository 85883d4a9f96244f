//! [`GemmStrategy::RealEmbedding`]: a complex product of [`super::MatMul`] as one real product of twice the depth
//! and width, so that complex products run on the real kernels (the tensor cores among them).
//!
//! With A' read as a real `M × 2K` matrix (real and imaginary parts in turn along K) and C as a real `M × 2N`
//! one, `C = A'·B'` is the real product of A' and the `2K × 2N` matrix holding, for each `b = alpha·op(B'[k][n])`,
//! the block `[[re b, im b], [−s·im b, s·re b]]` at rows `2k, 2k + 1` and columns `2n, 2n + 1` (`s = −1` when A'
//! is conjugated): row `2k` of a product term gives `re a·b`, row `2k + 1` gives `im a·(s·i·b)`. The expanded B
//! (`complex_embed` of linalg.cl) costs one pass and twice B's bytes; A and C are read and written in place.

use super::gemm_strategy::GemmStrategy;
use crate::app::{ClApp, Kernel};
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::Process;
use crate::process::layout::CopyPlan;
use crate::process::planning::{Batch3, index_type_for};

/// The real product's strategy for a complex product planned as `strategy`: `Some(None)` (its own planner's
/// choice) for [`GemmStrategy::RealEmbedding`], `Some(Some(strategy))` for a complex product asked to run on
/// tensor cores, `None` when the product is not embedded.
pub(super) fn embedded_strategy<T: Element>(strategy: GemmStrategy) -> Option<Option<GemmStrategy>> {
    match strategy {
        GemmStrategy::RealEmbedding => Some(None),
        GemmStrategy::TensorCore | GemmStrategy::Wgmma if T::IS_COMPLEX => Some(Some(strategy)),
        _ => None,
    }
}

/// What an embedded product keeps between launches: the expansion kernel and its operand, the scratch it fills
/// and the real product `P` (MatMul's, over `T::Real`).
pub(super) struct Embedding<T: Element, P> {
    expand: Kernel,
    /// The operand expanded (B', or A'ᵀ when the product runs transposed), `[batch…, K, N]`.
    source: XData<T>,
    /// The expanded operand as complex values, `[batch…, 2K, N]` (the real product reads it as `2K × 2N`).
    scratch: XData<T>,
    /// `source`'s matrices and the expansion's launch over them.
    matrices: Matrices,
    /// Conjugation of the real product's left operand and of `source`.
    conj: [bool; 2],
    index: IndexType,
    /// C ← beta·C before the real product, for a complex beta.
    scale: Option<CScale<T>>,
    /// The left operand copied contiguous along K, when it is not.
    left_copy: Option<LeftCopy<T>>,
    pub(super) product: P,
}

/// The copy of the real product's left operand (A', or B'ᵀ) into an array contiguous along K.
struct LeftCopy<T: Element> {
    plan: CopyPlan,
    from: XData<T>,
    to: XData<T>,
}

/// The scaling of C by a complex beta (`scale_matrices` of linalg.cl).
struct CScale<T: Element> {
    kernel: Kernel,
    c: XData<T>,
    beta: T,
    matrices: Matrices,
}

/// The matrices of an array `[batch…, rows, cols]`, planned once: its batch axes, extents and strides, and a
/// launch of one work-item per element (groups of up to 64 columns × 4 rows, a batch entry per layer).
struct Matrices {
    batch: Batch3,
    dims: [usize; 2],
    strides: [usize; 2],
    sizes: [[usize; 3]; 2],
}

impl Matrices {
    fn of<T: Element>(x: &XData<T>) -> Result<Matrices> {
        let (&[ref batch_shape @ .., rows, cols], &[ref batch_strides @ .., sr, sc]) = (x.shape(), x.strides()) else {
            return Err(Error::invalid("MatMul", format!("an array of shape {:?} has no matrix axes", x.shape())));
        };
        let batch = Batch3::new("MatMul", batch_shape, [batch_strides, batch_strides, batch_strides])?;
        let (local_c, local_r) = (cols.next_power_of_two().clamp(1, 64), rows.next_power_of_two().clamp(1, 4));
        let global = [cols.div_ceil(local_c) * local_c, rows.div_ceil(local_r) * local_r, batch.count() as usize];
        Ok(Matrices { batch, dims: [rows, cols], strides: [sr, sc], sizes: [global, [local_c, local_r, 1]] })
    }

    /// Elements in all the matrices.
    fn elements(&self) -> usize {
        self.dims[0] * self.dims[1] * self.batch.count() as usize
    }
}

impl<T: Element, P: Process> Embedding<T, P> {
    /// The embedding of `C = alpha·A'·B' + beta·C` for the views `[a, b, c]` (A' and B' as op(A) and op(B), of
    /// shapes `[batch…, M, K]`, `[batch…, K, N]`), with `conj` on A' and B', its real product run by
    /// `real_product` making the initialised real product `C' = left·right + beta·C'` of three real views and a
    /// real beta; the expanded operand goes into `shared_scratch` where that has its shape (the products using it
    /// run one after another on the in-order queue). [`Error::Unsupported`] when C is contiguous neither along
    /// its rows nor its columns.
    pub(super) fn new(
        app: &ClApp,
        [a, b, c]: [&XData<T>; 3],
        conj: [bool; 2],
        beta: T,
        shared_scratch: Option<&XData<T>>,
        real_product: impl FnOnce([&XData<T::Real>; 3], T::Real) -> Result<P>,
    ) -> Result<Embedding<T, P>> {
        let unsupported = |what: String| Error::Unsupported { what: format!("MatMul's real embedding {what}") };
        if !T::IS_COMPLEX {
            return Err(unsupported(format!("is for complex products, not {}", T::NAME)));
        }
        // C = A'·B' reads C as a real matrix along N; Cᵀ = B'ᵀ·A'ᵀ along M. The left operand must be contiguous
        // along K too, or is copied so (a pass over M·K, against the product's M·N·K).
        let (left, source, out, conj) = match (c.reals_along_last(), c.t().reals_along_last()) {
            (Some(out), _) => (a.clone(), b.clone(), out, conj),
            (None, Some(out)) => (b.t(), a.t(), out, [conj[1], conj[0]]),
            (None, None) => {
                return Err(unsupported(format!(
                    "needs C contiguous along its rows or its columns; C has shape {:?} and strides {:?}",
                    c.shape(),
                    c.strides()
                )));
            }
        };
        let left_copy = match left.reals_along_last() {
            Some(_) => None,
            None => {
                let copy = XData::<T>::uninit(app, "MatMul", left.shape())?;
                let plan = CopyPlan::new("MatMul", &left, &copy, false, None)?;
                Some(LeftCopy { plan, from: left.clone(), to: copy })
            }
        };
        let left_reals = left_copy
            .as_ref()
            .map_or(&left, |copy| &copy.to)
            .reals_along_last()
            .ok_or_else(|| Error::invalid("MatMul", "a new array is contiguous"))?;
        let matrices = Matrices::of(&source)?;
        let [k, n] = matrices.dims;
        // source's batch axes, then 2K × N (Matrices::of found the two matrix axes).
        let scratch_shape: Vec<usize> =
            source.shape().iter().take(source.ndim() - 2).copied().chain([2 * k, n]).collect();
        let scratch = match shared_scratch {
            Some(shared) if shared.shape() == scratch_shape.as_slice() && shared.is_packed() => shared.clone(),
            _ => XData::<T>::uninit(app, "MatMul", &scratch_shape)?,
        };
        let real_scratch =
            scratch.reals_along_last().ok_or_else(|| Error::invalid("MatMul", "a new array is contiguous"))?;
        let index = index_type_for(&[source.layout(), scratch.layout(), c.layout()], &[]);
        // The program of gemm_direct and set_identity (MatrixPower's identity builds the same one).
        let options = format!("{} -DIDX={}", T::build_options(), index.cl_type());
        let program = app.build_program("linalg.cl", &kernels::with_common(kernels::LINALG), &options)?;
        let expand = program.kernel("complex_embed")?.owned_by("MatMul");
        // A real beta goes to the real product; a complex one scales C first, and the real product adds to it.
        let (scale, real_beta) = if beta.to_c64().im == 0.0 {
            (None, T::Real::from_c64(beta.to_c64()))
        } else {
            let kernel = program.kernel("scale_matrices")?.owned_by("MatMul");
            let matrices = Matrices::of(c)?;
            (Some(CScale { kernel, c: c.clone(), beta, matrices }), T::Real::from_c64(1.0.into()))
        };
        let product = real_product([&left_reals, &real_scratch, &out], real_beta)?;
        Ok(Embedding { expand, source, scratch, matrices, conj, index, scale, left_copy, product })
    }

    /// The expanded operand's array (products run one after another may share it).
    pub(super) fn scratch(&self) -> &XData<T> {
        &self.scratch
    }

    /// Scales C by a complex beta, expands the operand (alpha folded in) and runs the real product.
    pub(super) fn enqueue(&mut self, alpha: T) -> Result<()> {
        if let Some(scale) = &mut self.scale {
            scale.enqueue(self.index)?;
        }
        if let Some(copy) = &mut self.left_copy {
            copy.plan.launch("MatMul", &copy.from, &copy.to)?;
        }
        let (source, idx, m) = (&self.source, self.index, &self.matrices);
        if m.elements() > 0 {
            let ([k, n], [sk, sn]) = (m.dims, m.strides);
            self.expand
                .launch()
                .input("b", source)
                .index("b_off", idx, source.offset() as u64)
                .index("sbk", idx, sk as u64)
                .index("sbn", idx, sn as u64)
                .output("out", &self.scratch)
                .index("K", idx, k as u64)
                .index("N", idx, n as u64)
                .scalar("alpha", alpha)
                .scalar("conj_a", u32::from(self.conj[0]))
                .scalar("conj_b", u32::from(self.conj[1]))
                .scalar("nd", m.batch.axes)
                .scalar("shape", m.batch.shape)
                .scalar("batch_b", m.batch.strides[0])
                .global(&m.sizes[0])
                .local(&m.sizes[1])
                .work(3 * (m.elements() * std::mem::size_of::<T>()) as u64, 0)
                .enqueue()?;
        }
        self.product.launch()
    }
}

impl<T: Element> CScale<T> {
    fn enqueue(&mut self, idx: IndexType) -> Result<()> {
        let (c, m) = (&self.c, &self.matrices);
        if m.elements() == 0 {
            return Ok(());
        }
        let ([rows, cols], [sr, sc]) = (m.dims, m.strides);
        self.kernel
            .launch()
            .in_out("c", c)
            .index("off", idx, c.offset() as u64)
            .index("rows", idx, rows as u64)
            .index("cols", idx, cols as u64)
            .index("sr", idx, sr as u64)
            .index("sc", idx, sc as u64)
            .scalar("beta", self.beta)
            .scalar("nd", m.batch.axes)
            .scalar("shape", m.batch.shape)
            .scalar("batch_c", m.batch.strides[0])
            .global(&m.sizes[0])
            .local(&m.sizes[1])
            .work(2 * (m.elements() * std::mem::size_of::<T>()) as u64, 0)
            .enqueue()
    }
}
