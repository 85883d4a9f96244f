//! One launch of a GEMM kernel of `kernels/linalg.cl`: [`GemmArgs`], the product a launch computes, and
//! [`enqueue_gemm`], which passes it as the argument list of every kernel but gemm_wgmma's. MatMul (`matmul.rs`)
//! and FilterBank's implicit GEMM (`conv_gemm.rs`) fill it; the wgmma product (`wgmma.rs`) reads it to pack the
//! operands and pass its own list.

use crate::app::Kernel;
use crate::data::XData;
use crate::element::Element;
use crate::error::Result;
use crate::kernel_args::IndexType;
use crate::process::planning::Batch3;

/// The product one launch computes, C = alpha·op(A)·op(B) + beta·C: gemm_tiled, gemm_blocked, gemm_direct and
/// the mma.sync kernels take it as their argument list (through [`enqueue_gemm`]), gemm_wgmma after its packing.
pub(super) struct GemmArgs<'a, T: Element> {
    /// A', B' and C with their (row, column) strides.
    pub a: (&'a XData<T>, [usize; 2]),
    pub b: (&'a XData<T>, [usize; 2]),
    pub c: (&'a XData<T>, [usize; 2]),
    pub mnk: [usize; 3],
    /// Conjugate A', B'.
    pub conj: [bool; 2],
    pub alpha: T,
    /// C's factor; 0 means C is only written (never read).
    pub beta: T,
    pub batch: &'a Batch3,
    pub index: IndexType,
    /// Bytes and FLOPs, for the profile.
    pub work: [u64; 2],
}

/// Enqueues `kernel` with `args` over the global and local sizes `[global, local]`.
pub(super) fn enqueue_gemm<T: Element>(
    kernel: &mut Kernel,
    args: &GemmArgs<T>,
    [global, local]: [[usize; 3]; 2],
) -> Result<()> {
    let (idx, [m, n, k]) = (args.index, args.mnk);
    let ((a, [sam, sak]), (b, [sbk, sbn]), (c, [scm, scn])) = (args.a, args.b, args.c);
    let use_beta = args.beta != T::default();
    let launch = kernel
        .launch()
        .input("a", a)
        .index("a_off", idx, a.offset() as u64)
        .index("sam", idx, sam as u64)
        .index("sak", idx, sak as u64)
        .input("b", b)
        .index("b_off", idx, b.offset() as u64)
        .index("sbk", idx, sbk as u64)
        .index("sbn", idx, sbn as u64);
    // With beta = 0 the old C is not read, so it need not be valid.
    let launch = if use_beta { launch.in_out("c", c) } else { launch.output("c", c) };
    launch
        .index("c_off", idx, c.offset() as u64)
        .index("scm", idx, scm as u64)
        .index("scn", idx, scn as u64)
        .index("M", idx, m as u64)
        .index("N", idx, n as u64)
        .index("K", idx, k as u64)
        .scalar("conj_a", u32::from(args.conj[0]))
        .scalar("conj_b", u32::from(args.conj[1]))
        .scalar("alpha", args.alpha)
        .scalar("beta", args.beta)
        .scalar("use_beta", u32::from(use_beta))
        .scalar("nd", args.batch.axes)
        .scalar("shape", args.batch.shape)
        .scalar("batch_a", args.batch.strides[0])
        .scalar("batch_b", args.batch.strides[1])
        .scalar("batch_c", args.batch.strides[2])
        .global(&global)
        .local(&local)
        .work(args.work[0], args.work[1])
        .enqueue()
}
