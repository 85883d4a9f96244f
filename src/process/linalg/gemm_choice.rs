//! The planner's choice of GEMM kernel and tiles for a device and a problem: the device's [`super::GemmTable`] entry
//! tuned nearest the problem's size, checked against the device, with safe fallbacks and the direct kernel for
//! thin or small products.

use super::gemm_precision::GemmPrecision;
use super::gemm_strategy::{GemmStrategy, GemmTiles};
use super::gemm_table::lookup;
use crate::app::{DeviceInfo, DeviceKind};
use crate::element::Element;

impl GemmTiles {
    /// The tiles for a device and element type: the first matching entry of the user's table
    /// (`CLIPER_GEMM_TABLE`), else of the built-in table, else a safe default; shrunk where the device's local
    /// memory or work-group limit require. See [`super::GemmTable`].
    pub fn for_device<T: Element>(info: &DeviceInfo) -> GemmTiles {
        match GemmStrategy::for_device::<T>(info) {
            GemmStrategy::Tiled(t) | GemmStrategy::Blocked(t) => t,
            GemmStrategy::Direct
            | GemmStrategy::Native
            | GemmStrategy::TensorCore
            | GemmStrategy::Wgmma
            | GemmStrategy::RealEmbedding => Self::fallback::<T>(info).fit::<T>(info),
        }
    }

    /// Tiles that suit most GPUs: 64×64 with 4×4 outputs per work-item (8 K deep for the 16-byte c64); on CPUs
    /// the register blocks of [`GemmStrategy::Blocked`].
    pub(crate) fn fallback<T: Element>(info: &DeviceInfo) -> GemmTiles {
        match info.kind {
            DeviceKind::Cpu => GemmTiles::scalar(32, 64, 16, 8, 4),
            _ => GemmTiles::scalar(64, 64, if std::mem::size_of::<T>() > 8 { 8 } else { 16 }, 16, 16),
        }
    }
}

impl GemmStrategy {
    /// The device's kernel for large (4096³) products: its [`super::GemmTable`] entry, tiles shrunk to fit the
    /// device (or, when no entry applies or its tiles cannot be built, [`GemmStrategy::Blocked`] on CPUs and
    /// [`GemmStrategy::Tiled`] elsewhere with safe tiles).
    pub fn for_device<T: Element>(info: &DeviceInfo) -> GemmStrategy {
        Self::for_size::<T>(info, 4096)
    }

    /// [`GemmStrategy::for_device`] for products of about `size`³ (the table entry tuned nearest that size).
    pub fn for_size<T: Element>(info: &DeviceInfo, size: usize) -> GemmStrategy {
        let fallback = || {
            let tiles = GemmTiles::fallback::<T>(info).fit::<T>(info);
            if info.kind == DeviceKind::Cpu { GemmStrategy::Blocked(tiles) } else { GemmStrategy::Tiled(tiles) }
        };
        match lookup::<T>(info, size).map(|(_, s)| s) {
            Some(GemmStrategy::Tiled(t)) => {
                let t = t.fit::<T>(info);
                if t.validate::<T>(info).is_ok() { GemmStrategy::Tiled(t) } else { fallback() }
            }
            Some(GemmStrategy::Blocked(t)) => {
                let t = t.fit::<T>(info);
                if t.check::<T>(info, false).is_ok() { GemmStrategy::Blocked(t) } else { fallback() }
            }
            _ => fallback(),
        }
    }

    /// What [`super::MatMul`] runs when not told: [`GemmStrategy::Native`] on CPU devices (the host's GEMM in the
    /// buffers' memory, no kernel to compile or launch) for products with `k ≥ 1`, else
    /// [`GemmStrategy::for_problem`], with [`GemmStrategy::TensorCore`] in place of the tiled kernel where the
    /// device has tensor cores for `T` at `precision` ([`GemmStrategy::tensor_cores`]) and they are faster:
    /// `f64` products, and `f32` ones at [`GemmPrecision::Tf32`] — those on [`GemmStrategy::Wgmma`] where it
    /// runs (Hopper) and its 128 × 256 blocks make about a wave ([`super::MatMul`] falls back to
    /// [`GemmStrategy::TensorCore`] when the driver does not build its program).
    ///
    /// ```
    /// use cliper::{DeviceKind, GemmPrecision, GemmStrategy};
    /// let app = cliper::ClApp::new()?;
    /// let planned = GemmStrategy::planned::<f64>(app.device(), 300, 200, 100, 1, GemmPrecision::Full);
    /// assert_eq!(planned == GemmStrategy::Native, app.device().kind == DeviceKind::Cpu);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn planned<T: Element>(
        info: &DeviceInfo,
        m: usize,
        n: usize,
        k: usize,
        batch: usize,
        precision: GemmPrecision,
    ) -> GemmStrategy {
        if info.kind == DeviceKind::Cpu && m > 0 && n > 0 && k > 0 && batch > 0 {
            return GemmStrategy::Native;
        }
        // Not for Fp32Split: gemm_tmma's three TF32 products with rounded sums measured no faster than the FP32
        // kernel on the H100 (4096³ 42.3 TF/s against 41.6), so the FP32 kernel, as accurate, runs (or the wgmma
        // split, below); `strategy(TensorCore)` runs gemm_tmma's split.
        let tensor = T::IS_DOUBLE || precision == GemmPrecision::Tf32;
        match Self::for_problem::<T>(info, m, n, k, batch) {
            GemmStrategy::Tiled(_) if T::IS_COMPLEX && real_embedding_pays::<T>(info, [m, n, k], batch, precision) => {
                GemmStrategy::RealEmbedding
            }
            // Both precisions: at Fp32Split too the wgmma split is faster than the FP32 kernel (H200 1024³ /
            // 4096³ / 8192³: 31.5 / 79.5 / 80.7 TF/s against 27.0 / 41.7 / 42.3), unlike gemm_tmma's.
            GemmStrategy::Tiled(_)
                if !T::IS_COMPLEX && Self::wgmma::<T>(info, precision).is_ok() && wgmma_blocks_fill(m, n, batch) =>
            {
                GemmStrategy::Wgmma
            }
            GemmStrategy::Tiled(_) if tensor && !T::IS_COMPLEX && Self::tensor_cores::<T>(info, precision).is_ok() => {
                GemmStrategy::TensorCore
            }
            other => other,
        }
    }

    /// Whether [`GemmStrategy::TensorCore`] can run `T` at `precision` on the device: `f64` on FP64 tensor
    /// cores, `f32` on TF32 tensor cores when `precision` allows it ([`GemmPrecision::allows_tf32`]), both on
    /// NVIDIA GPUs of compute capability 8.0 or later; complex types where their real type can (they run as
    /// real products, [`GemmStrategy::RealEmbedding`]). The error says what is missing.
    ///
    /// ```
    /// use cliper::{GemmPrecision, GemmStrategy};
    /// let app = cliper::ClApp::new()?;
    /// let why = GemmStrategy::tensor_cores::<f32>(app.device(), GemmPrecision::Full).unwrap_err().to_string();
    /// assert!(why.contains("Fp32Split"), "{why}");
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn tensor_cores<T: Element>(info: &DeviceInfo, precision: GemmPrecision) -> crate::error::Result<()> {
        if T::IS_COMPLEX {
            // Complex products run on them as real ones (GemmStrategy::RealEmbedding).
            return Self::tensor_cores::<T::Real>(info, precision);
        }
        let kind = if T::IS_DOUBLE { "FP64" } else { "TF32" };
        let missing = if !T::IS_DOUBLE && !precision.allows_tf32() {
            Some(format!(
                "f32 products at GemmPrecision::Fp32Split or Tf32 (this one asks for {precision}, which is plain FP32)"
            ))
        } else {
            match info.compute_capability {
                Some((major, _)) if major >= 8 => None,
                Some((major, minor)) => Some(format!("compute capability 8.0 or later, not {major}.{minor}")),
                None => Some("an NVIDIA GPU (it has no compute capability)".to_string()),
            }
        };
        match missing {
            None => Ok(()),
            Some(what) => Err(crate::error::Error::Unsupported {
                what: format!("the {kind} tensor-core GEMM needs {what}; device: {}", info.name),
            }),
        }
    }

    /// The kernel for an `m` × `n` × `k` product repeated `batch` times: [`GemmStrategy::Direct`] when
    /// an operand is thinner than a work-group's side or the product is small (up to 2²⁴ multiply-adds on GPUs,
    /// 2¹⁸ on CPUs); otherwise [`GemmStrategy::for_size`] at the cube root of M·N·K (with 32×32 tiles when M
    /// or N is at most 64 and the device uses local-memory tiles).
    ///
    /// ```
    /// use cliper::{GemmStrategy, Element};
    /// let app = cliper::ClApp::new()?;
    /// assert_eq!(GemmStrategy::for_problem::<f32>(app.device(), 4, 4, 4, 1), GemmStrategy::Direct);
    /// let big = GemmStrategy::for_problem::<f32>(app.device(), 1024, 1024, 1024, 1);
    /// assert_eq!(big, GemmStrategy::for_size::<f32>(app.device(), 1024));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn for_problem<T: Element>(info: &DeviceInfo, m: usize, n: usize, k: usize, batch: usize) -> GemmStrategy {
        let size = ((m as f64) * (n as f64) * (k as f64)).cbrt().round() as usize;
        let main = Self::for_size::<T>(info, size);
        let cpu = info.kind == DeviceKind::Cpu;
        let (mdimc, ndimc) = match main {
            GemmStrategy::Tiled(t) | GemmStrategy::Blocked(t) => (t.mdimc, t.ndimc),
            GemmStrategy::Direct
            | GemmStrategy::Native
            | GemmStrategy::TensorCore
            | GemmStrategy::Wgmma
            | GemmStrategy::RealEmbedding => (1, 1),
        };
        // A thin operand leaves most of a tile idle, and a small product gives too few tiles to fill a GPU: on
        // the H100 the direct kernel beat 64² and 128² tiles up to 256³ (0.019 ms against 0.025 and 0.047).
        let thin = m < mdimc || n < ndimc || k < 4;
        let macs = (m as u64) * (n as u64) * (k as u64) * (batch as u64);
        let small = macs <= if cpu { 1 << 18 } else { 1 << 24 };
        if thin || small {
            GemmStrategy::Direct
        } else if matches!(main, GemmStrategy::Tiled(_)) && (m <= 64 || n <= 64) {
            // Batches of small matrices: big tiles would be mostly padding (4096 × 32³ on the H100: 32×32 tiles
            // 0.034 ms, 64×64 0.060, direct 0.078).
            GemmStrategy::Tiled(GemmTiles::scalar(32, 32, 16, 16, 16).fit::<T>(info))
        } else {
            main
        }
    }
}

/// Whether the TF32 kernel (gemm_tmma at [`GemmPrecision::Tf32`]) takes 128 × 256 blocks of C for `batch`
/// products of `m` × `n`: when they still make about a wave on a large GPU (100 blocks). Wider blocks read less
/// per MMA (H100: 2048³ 87 TF/s against 68 in 128 × 128 blocks) but leave SMs idle when few (1024³: 19 against
/// 30).
pub(super) fn wide_tf32_blocks(m: usize, n: usize, batch: usize) -> bool {
    m.div_ceil(128) * n.div_ceil(256) * batch >= 100
}

/// Whether the wgmma kernel takes `batch` products of `m` × `n`: when its smallest blocks (128 × 128) make at
/// least half a wave on a large GPU (64). H200, 1024³ (64 blocks): TF32 0.045 ms against gemm_tmma's 0.065,
/// the split 0.068 against the FP32 kernel's 0.080 (docs/benchmarks.md, 2026-11-30).
pub(super) fn wgmma_blocks_fill(m: usize, n: usize, batch: usize) -> bool {
    m.div_ceil(128) * n.div_ceil(128) * batch >= 64
}

/// Whether the planner runs a complex `m` × `n` × `k` product (`batch` of them) as one real product
/// ([`GemmStrategy::RealEmbedding`]): where that real product of `m` × `2n` × `2k` would run on tensor cores
/// and its scratch (the expanded B, `4·k·n` reals per product) fits one allocation and a quarter of the
/// device's memory. H200 (docs/benchmarks.md, 2026-11-30): the f64 product of 4096 × 8192 × 8192 takes 12.2 ms
/// on the FP64 tensor cores against 22.8 ms for the c64 4096³ kernel; c32 4096³ at `Fp32Split` 6.9 ms against
/// 11.6 in plain FP32.
fn real_embedding_pays<T: Element>(
    info: &DeviceInfo,
    [m, n, k]: [usize; 3],
    batch: usize,
    precision: GemmPrecision,
) -> bool {
    let real = GemmStrategy::planned::<T::Real>(info, m, 2 * n, 2 * k, batch, precision);
    let scratch = (4 * k as u64) * (n as u64) * (batch as u64) * std::mem::size_of::<T::Real>() as u64;
    matches!(real, GemmStrategy::TensorCore | GemmStrategy::Wgmma)
        && scratch <= info.max_alloc_bytes
        && scratch <= info.global_mem_bytes / 4
}
