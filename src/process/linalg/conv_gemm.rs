//! [`ConvGemm`]: a filter bank as an implicit GEMM — gemm_tiled with its B loader gathering the input's patches
//! (`-DB_CONV=1`), so that no im2col matrix is written or read. Used by [`crate::FilterBank`].

use super::gemm_choice::wide_tf32_blocks;
use super::gemm_launch::{GemmArgs, enqueue_gemm};
use super::gemm_precision::GemmPrecision;
use super::gemm_strategy::{GemmStrategy, GemmTiles};
use super::matmul::{tensor_core_launch, tiled_options, unit_strides};
use crate::app::{ClApp, Kernel, Program};
use crate::data::XData;
use crate::element::Element;
use crate::error::Result;
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::planning::Batch3;

/// The geometry of `output[n, k, p, q] = Σ filters[k, c, r, s] · input[n, c, p·sh + r'·dh − ph, q·sw + s'·dw − pw]`
/// with a constant outside the image.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ConvGeometry {
    /// Images, channels, height, width of the input.
    pub input: [usize; 4],
    /// Filters, channels, rows, columns.
    pub filters: [usize; 4],
    /// Output rows and columns.
    pub output: [usize; 2],
    pub stride: [usize; 2],
    pub dilation: [usize; 2],
    pub padding: [usize; 2],
    /// A convolution (filters flipped) rather than a correlation.
    pub flip: bool,
    /// The value outside the image.
    pub value: f64,
}

/// The compiled implicit GEMM for one geometry and input layout: per image, C `[K, P·Q]` (the output image) =
/// filters `[K, C·R·S]` · patches `[C·R·S, P·Q]`, the images as a batch.
pub(crate) struct ConvGemm {
    _program: Program,
    kernel: Kernel,
    index: IndexType,
    batch: Batch3,
    mnk: [usize; 3],
    global: [usize; 3],
    local: [usize; 3],
    strategy: GemmStrategy,
}

impl ConvGemm {
    /// Builds the kernel for `geo` reading an input with element strides `x_strides` (`[n, c, h, w]`) into a
    /// contiguous output from contiguous filters; `index` must cover all three arrays. `tiles` replaces the
    /// planner's (and must fit the device). At [`GemmPrecision::Tf32`], `f32` banks of 64 filters or more on a
    /// device with TF32 tensor cores run gemm_tmma's loaders gathering the patches instead (unless `tiles` asks
    /// for gemm_tiled).
    pub(crate) fn new<T: Element>(
        app: &ClApp,
        op: &str,
        geo: &ConvGeometry,
        x_strides: [usize; 4],
        index: IndexType,
        tiles: Option<GemmTiles>,
        precision: GemmPrecision,
    ) -> Result<ConvGemm> {
        let [n, c, h, w] = geo.input;
        let [k, _, r, s] = geo.filters;
        let [p, q] = geo.output;
        let (m, cols, depth) = (k, p * q, c * r * s);
        let info = app.device();
        // Filters are few (M = K, often 64) and patches many: 64-row tiles unless K fills 128. Measured on the
        // H100 (docs/benchmarks/h100-issue27-2026-11-26-filterbank-tiles.txt): 64 × 128 with 4 × 4 runs gave
        // 0.58 / 0.51 ms on seed 004 / 64×64×56² (the scalar 64 × 128 tiles 0.71 / 0.64; the best per case
        // 0.55 / 0.48); 256 filters run the device's 4096³ entry (1.09 ms, as the best tried).
        let wide = GemmTiles::for_device::<T>(info);
        let narrow = GemmTiles { mwg: 64, nwg: 128, kwg: 16, mdimc: 8, ndimc: 16, vwm: 4, vwn: 4 };
        let candidates = [wide, narrow, GemmTiles::scalar(64, 128, 16, 16, 16), GemmTiles::scalar(64, 64, 16, 16, 16)];
        let asked = tiles.is_some();
        let tiles = match tiles {
            Some(t) => {
                t.validate::<T>(info)?;
                t
            }
            None => candidates
                .into_iter()
                .filter(|t| t.mwg <= 64 || m >= t.mwg)
                .find(|t| t.validate::<T>(info).is_ok())
                .unwrap_or_else(|| GemmTiles::fallback::<T>(info).fit::<T>(info)),
        };
        let units = unit_strides([m, cols, depth], [depth, 1], [cols, 1], 1);
        let [_, xc, xh, xw] = x_strides;
        let geometry = format!(
            " -DB_CONV=1 -DCONV_R={r} -DCONV_S={s} -DCONV_Q={q} -DCONV_H={h} -DCONV_W={w} -DCONV_SH={} -DCONV_SW={} \
             -DCONV_DH={} -DCONV_DW={} -DCONV_PH={} -DCONV_PW={} -DCONV_FLIP={} -DCONV_XC=((IDX){xc}) \
             -DCONV_XH=((IDX){xh}) -DCONV_XW=((IDX){xw}) -DCONV_VALUE={:?}",
            geo.stride[0],
            geo.stride[1],
            geo.dilation[0],
            geo.dilation[1],
            geo.padding[0],
            geo.padding[1],
            u8::from(geo.flip),
            geo.value,
        );
        let batch = Batch3::new(op, &[n], [&[0], &[x_strides[0]], &[k * p * q]])?;
        // The tensor-core kernel, in 128-row blocks from 128 filters and 64-row ones (TM_MT 2) below, against the
        // FP32 implicit GEMM on the H100 at Tf32: 256 filters 0.65 ms against 1.09, 96 filters 0.46 against 0.55,
        // 64 filters 0.43 against 0.51 (in 128-row blocks: 0.63); 10 filters in 128-row blocks 0.60 against 0.59,
        // so it starts at the 64 filters measured.
        let tensor = !asked
            && m >= 64
            && precision == GemmPrecision::Tf32
            && !T::IS_DOUBLE
            && GemmStrategy::tensor_cores::<T>(info, precision).is_ok();
        let (options, name, strategy, (global, local)) = if tensor {
            // The filters' rows start 16-byte aligned when C·R·S is a multiple of 4 (the buffer is aligned).
            let vec_a = u8::from(depth.is_multiple_of(4));
            let bn = if wide_tf32_blocks(m, cols, n) { 256 } else { 128 };
            let tiles_m = if m >= 128 { 4 } else { 2 };
            let options = format!(
                "{} -DIDX={} -DTMMA=1 -DTM_SPLIT=0 -DTM_MT={tiles_m} -DTM_BN={bn} -DTM_VEC_A={vec_a} -DTM_VEC_B=0{units}",
                T::build_options(),
                index.cl_type()
            );
            let launch = tensor_core_launch([m, cols], n, [32 * tiles_m, bn]);
            (options, "gemm_tmma", GemmStrategy::TensorCore, launch)
        } else {
            let global = [cols.div_ceil(tiles.nwg) * tiles.ndimc, m.div_ceil(tiles.mwg) * tiles.mdimc, n];
            let options = tiled_options::<T>(index, tiles, &units);
            (options, "gemm_tiled", GemmStrategy::Tiled(tiles), (global, [tiles.ndimc, tiles.mdimc, 1]))
        };
        let options = options + &geometry;
        let source = kernels::only_kernels(&kernels::with_common(kernels::LINALG), &[name]);
        let program = app.build_program("linalg.cl", &source, &options)?;
        let kernel = program.kernel(name)?.owned_by(op);
        Ok(ConvGemm { _program: program, kernel, index, batch, mnk: [m, cols, depth], global, local, strategy })
    }

    /// The GEMM kernel it runs: gemm_tiled with its tiles, or gemm_tmma ([`GemmStrategy::TensorCore`]).
    pub(crate) fn strategy(&self) -> GemmStrategy {
        self.strategy
    }

    /// Enqueues `output = filters ⊛ input` (all images).
    pub(crate) fn launch<T: Element>(&mut self, input: &XData<T>, filters: &XData<T>, output: &XData<T>) -> Result<()> {
        let [m, n, k] = self.mnk;
        let count = self.batch.count();
        let element = std::mem::size_of::<T>() as u64;
        let bytes = (input.len() + filters.len() + output.len()) as u64 * element;
        let flops = if T::IS_COMPLEX { 8 } else { 2 } * (m * n * k) as u64 * count;
        let args = GemmArgs {
            a: (filters, [k, 1]),
            b: (input, [n, 1]),
            c: (output, [n, 1]),
            mnk: self.mnk,
            conj: [false, false],
            alpha: T::from_c64(1.0.into()),
            beta: T::default(),
            batch: &self.batch,
            index: self.index,
            work: [bytes, flops],
        };
        enqueue_gemm(&mut self.kernel, &args, [self.global, self.local])
    }
}
