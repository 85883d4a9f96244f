//! Which GEMM kernel a [`super::MatMul`] runs and with which tiles: [`GemmStrategy`] and [`GemmTiles`], their
//! text forms and their checks against a device. The choice per device and problem is `gemm_choice.rs`.

use crate::app::DeviceInfo;
use crate::element::Element;
use crate::error::{Error, Result};

/// Work-group tiling of the GEMM kernels: a work-group computes an `mwg` × `nwg` block of C with
/// `mdimc` × `ndimc` work-items, stepping through K `kwg` at a time; each work-item owns
/// (`mwg`/`mdimc`) × (`nwg`/`ndimc`) outputs in registers, in runs of `vwm` neighbouring rows and `vwn`
/// neighbouring columns that the local-memory kernel reads as one vector (`float4` for `vwm = 4` in `f32`).
///
/// [`GemmTiles::for_device`] picks from the per-device table ([`super::GemmTable`]); [`super::MatMulParams::strategy`]
/// takes any other choice the device can run (for tuning). The text form `MWGxNWGxKWG/MDIMCxNDIMC/VWMxVWN`
/// (the last part optional, default `1x1`) is what tables, the tuner and `cliper-bench` use.
///
/// ```
/// use cliper::GemmTiles;
/// let app = cliper::ClApp::new()?;
/// let t = GemmTiles::for_device::<f32>(app.device());
/// assert!(t.validate::<f32>(app.device()).is_ok());
/// let tiles: GemmTiles = "128x128x16/16x16/4x4".parse()?;
/// assert_eq!(tiles, GemmTiles { mwg: 128, nwg: 128, kwg: 16, mdimc: 16, ndimc: 16, vwm: 4, vwn: 4 });
/// assert_eq!(tiles.to_string(), "128x128x16/16x16/4x4");
/// let uneven: GemmTiles = "128x128x16/48x16".parse()?;
/// assert!(uneven.validate::<f32>(app.device()).unwrap_err().to_string().contains("must divide"));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GemmTiles {
    /// Rows of C per work-group.
    pub mwg: usize,
    /// Columns of C per work-group.
    pub nwg: usize,
    /// Depth of the K slice staged in local memory per step.
    pub kwg: usize,
    /// Work-items along M.
    pub mdimc: usize,
    /// Work-items along N.
    pub ndimc: usize,
    /// Neighbouring rows per run (the vector width of the local reads of A: 1, 2, 4, … as long as the run of
    /// elements is an OpenCL vector type).
    pub vwm: usize,
    /// Neighbouring columns per run (the vector width of the local reads of B).
    pub vwn: usize,
}

impl GemmTiles {
    /// Tiles with runs of one row and one column (no vector reads).
    pub const fn scalar(mwg: usize, nwg: usize, kwg: usize, mdimc: usize, ndimc: usize) -> GemmTiles {
        GemmTiles { mwg, nwg, kwg, mdimc, ndimc, vwm: 1, vwn: 1 }
    }

    /// Shrinks the K depth until the tiles fit in local memory and the work-group until the device allows it.
    pub(super) fn fit<T: Element>(mut self, info: &DeviceInfo) -> GemmTiles {
        while self.local_bytes(std::mem::size_of::<T>()) > info.local_mem_bytes as usize && self.kwg > 1 {
            self.kwg /= 2;
        }
        while self.mdimc * self.ndimc > info.max_work_group_size && self.mdimc > 1 {
            self.mdimc /= 2;
            self.ndimc = (self.ndimc / 2).max(1);
        }
        self
    }

    /// Local memory of the tiled kernel: two K slices of A and B, each row padded by a vector.
    fn local_bytes(&self, element_bytes: usize) -> usize {
        2 * self.kwg * (self.mwg + self.vwm + self.nwg + self.vwn) * element_bytes
    }

    /// The OpenCL vector type holding `width` elements of T (`float4` for four `f32` or two `Complex<f32>`).
    pub(crate) fn vector_type<T: Element>(width: usize) -> Option<String> {
        let lanes = width * if T::IS_COMPLEX { 2 } else { 1 };
        let real = <T::Real as Element>::CL_TYPE;
        match lanes {
            1 => Some(real.to_string()),
            2 | 4 | 8 | 16 => Some(format!("{real}{lanes}")),
            _ => None,
        }
    }

    /// `Ok` when the kernel can be built with these tiles for `T` on this device; otherwise an error naming the
    /// violated rule.
    pub fn validate<T: Element>(&self, info: &DeviceInfo) -> Result<()> {
        self.check::<T>(info, true)
    }

    /// The checks of `validate`; without local memory (`GemmStrategy::Blocked`) `kwg` and the runs do not
    /// matter.
    pub(super) fn check<T: Element>(&self, info: &DeviceInfo, local_tiles: bool) -> Result<()> {
        let threads = self.mdimc * self.ndimc;
        let problem = if [self.mwg, self.nwg, self.kwg, self.mdimc, self.ndimc, self.vwm, self.vwn].contains(&0) {
            Some("every size must be at least 1".to_string())
        } else if !self.mwg.is_multiple_of(self.mdimc) || !self.nwg.is_multiple_of(self.ndimc) {
            Some("mdimc must divide mwg and ndimc must divide nwg".to_string())
        } else if local_tiles
            && (!self.mwg.is_multiple_of(self.mdimc * self.vwm) || !self.nwg.is_multiple_of(self.ndimc * self.vwn))
        {
            Some("mdimc·vwm must divide mwg and ndimc·vwn must divide nwg".to_string())
        } else if local_tiles
            && (Self::vector_type::<T>(self.vwm).is_none() || Self::vector_type::<T>(self.vwn).is_none())
        {
            Some(format!("runs of {}×{} {} are not an OpenCL vector type", self.vwm, self.vwn, T::NAME))
        } else if local_tiles
            && (!(self.mwg * self.kwg).is_multiple_of(threads) || !(self.nwg * self.kwg).is_multiple_of(threads))
        {
            Some(format!("the {threads} work-items must divide the mwg·kwg and nwg·kwg tile loads"))
        } else if threads > info.max_work_group_size {
            Some(format!("{threads} work-items exceed the device's work-group limit of {}", info.max_work_group_size))
        } else if local_tiles && self.local_bytes(std::mem::size_of::<T>()) > info.local_mem_bytes as usize {
            Some(format!(
                "the tiles need {} bytes of local memory for {}; the device has {}",
                self.local_bytes(std::mem::size_of::<T>()),
                T::NAME,
                info.local_mem_bytes
            ))
        } else {
            None
        };
        match problem {
            Some(reason) => Err(Error::invalid("GemmTiles", format!("{self}: {reason}"))),
            None => Ok(()),
        }
    }
}

impl std::fmt::Display for GemmTiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}x{}/{}x{}", self.mwg, self.nwg, self.kwg, self.mdimc, self.ndimc)?;
        if (self.vwm, self.vwn) != (1, 1) {
            write!(f, "/{}x{}", self.vwm, self.vwn)?;
        }
        Ok(())
    }
}

impl std::str::FromStr for GemmTiles {
    type Err = Error;

    fn from_str(text: &str) -> Result<GemmTiles> {
        let bad = || {
            Error::invalid(
                "GemmTiles",
                format!("`{text}` is not MWGxNWGxKWG/MDIMCxNDIMC[/VWMxVWN] (like 128x128x16/16x16/4x4)"),
            )
        };
        let numbers =
            |s: &str| s.split('x').map(|v| v.trim().parse::<usize>().map_err(|_| bad())).collect::<Result<Vec<_>>>();
        let parts: Vec<&str> = text.trim().split('/').collect();
        let runs = match parts.get(2) {
            Some(runs) => numbers(runs)?,
            None => vec![1, 1],
        };
        match (
            parts.len(),
            numbers(parts.first().ok_or_else(bad)?)?.as_slice(),
            numbers(parts.get(1).ok_or_else(bad)?)?.as_slice(),
            runs.as_slice(),
        ) {
            (2 | 3, &[mwg, nwg, kwg], &[mdimc, ndimc], &[vwm, vwn]) => {
                Ok(GemmTiles { mwg, nwg, kwg, mdimc, ndimc, vwm, vwn })
            }
            _ => Err(bad()),
        }
    }
}

/// Which kernel a [`super::MatMul`] runs, or [`GemmStrategy::Native`]: the host's own GEMM on a CPU device.
///
/// ```
/// use cliper::{DeviceKind, GemmStrategy, MatMul, MatMulParams, Process, XData};
/// let app = cliper::ClApp::new()?;
/// let (a, b) = (XData::<f32>::zeros(&app, &[8, 8])?, XData::<f32>::zeros(&app, &[8, 8])?);
/// let mut mm = MatMul::new(&a, &b, &XData::zeros(&app, &[8, 8])?, MatMulParams::default());
/// mm.init()?;
/// // A CPU device multiplies natively; a GPU runs the direct kernel (too small for tiles).
/// let expected = if app.device().kind == DeviceKind::Cpu { GemmStrategy::Native } else { GemmStrategy::Direct };
/// assert_eq!(mm.strategy(), Some(expected));
/// assert_eq!("direct".parse::<GemmStrategy>()?, GemmStrategy::Direct);
/// assert_eq!("native".parse::<GemmStrategy>()?, GemmStrategy::Native);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GemmStrategy {
    /// Local-memory tiles with register blocking: the fast path for all but small products.
    Tiled(GemmTiles),
    /// One output per work-item straight from global memory: for products too small to fill a tile.
    Direct,
    /// The same register blocking as [`GemmStrategy::Tiled`] without local memory or barriers (the tiles'
    /// `kwg` is unused): CPUs, where caches stage the operands and barriers would spill the accumulators.
    Blocked(GemmTiles),
    /// No kernel: the `gemm` crate on the host, in the mapped memory of the device's buffers. On a CPU device
    /// (PoCL) buffers are host memory, so mapping copies nothing, and the crate's packed AVX kernels run at
    /// OpenBLAS's speed where PoCL's code generation reaches a tenth of it. Any device can run it (mapping
    /// then copies); the planner chooses it on CPU devices only.
    Native,
    /// `f64` products on the FP64 tensor cores of NVIDIA GPUs of compute capability 8.0 or later (A100, H100,
    /// H200), through inline PTX (`mma.sync.m16n8k4.f64`): the same IEEE FP64 fused multiply-adds as the other
    /// kernels; `f32` ones on their TF32 tensor cores where [`super::GemmPrecision`] allows. The planner takes it
    /// for `f64` products that would otherwise run tiled on such a device. Complex products asked to run on it
    /// run as [`GemmStrategy::RealEmbedding`] with this kernel for the real product. Asking for it elsewhere is
    /// an error that says why.
    TensorCore,
    /// `f32` products at [`super::GemmPrecision::Tf32`] or [`super::GemmPrecision::Fp32Split`] on Hopper's
    /// warpgroup tensor-core instructions (`wgmma`, NVIDIA GPUs of compute capability 9.x): the operands are
    /// packed K-fastest and rounded to TF32 (or split into heads and rests) first, then multiplied from local
    /// memory ([`GemmStrategy::wgmma`] says where it runs). The planner takes it where its 128 × 128 blocks make half
    /// a wave (64), where it runs. Complex products asked to run on it run as [`GemmStrategy::RealEmbedding`]
    /// with this kernel for the real product.
    Wgmma,
    /// Complex products as one real product of twice the depth and width: A' read as real `M × 2K` (real and
    /// imaginary parts in turn), C written as real `M × 2N`, and B' expanded into a real `2K × 2N` scratch
    /// matrix of 2 × 2 blocks `[[re b, im b], [−im b, re b]]` (alpha and the conjugations folded in). The real
    /// product then runs the kernel its own planner picks at the product's [`super::GemmPrecision`], so complex
    /// products reach the tensor cores: the planner takes it where that real product would run on them (`c64`
    /// on FP64 tensor cores; `c32` at `Tf32` or `Fp32Split`) and the scratch (twice B's bytes) fits the device.
    /// C must be contiguous along its rows or its columns (then it computes Cᵀ = B'ᵀA'ᵀ); the left operand of
    /// the real product is copied contiguous along K when it is not, and a complex `beta` scales C first. The
    /// planner keeps the complex kernels for other C, and an explicit request is an error that names C's
    /// strides.
    RealEmbedding,
}

impl std::fmt::Display for GemmStrategy {
    /// `direct`, `native`, `tensor-core`, `wgmma`, `real-embedding`, the tiles (`128x128x16/16x16/4x4`) for [`GemmStrategy::Tiled`], `blocked:` and the tiles for
    /// [`GemmStrategy::Blocked`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GemmStrategy::Direct => f.write_str("direct"),
            GemmStrategy::Native => f.write_str("native"),
            GemmStrategy::TensorCore => f.write_str("tensor-core"),
            GemmStrategy::Wgmma => f.write_str("wgmma"),
            GemmStrategy::RealEmbedding => f.write_str("real-embedding"),
            GemmStrategy::Tiled(t) => write!(f, "{t}"),
            GemmStrategy::Blocked(t) => write!(f, "blocked:{t}"),
        }
    }
}

impl std::str::FromStr for GemmStrategy {
    type Err = Error;

    /// The [`std::fmt::Display`] form back (`tiled:` before the tiles is accepted too).
    ///
    /// ```
    /// use cliper::{GemmStrategy, GemmTiles};
    /// assert_eq!("direct".parse::<GemmStrategy>()?, GemmStrategy::Direct);
    /// assert_eq!("tensor-core".parse::<GemmStrategy>()?, GemmStrategy::TensorCore);
    /// assert_eq!("wgmma".parse::<GemmStrategy>()?, GemmStrategy::Wgmma);
    /// assert_eq!("real-embedding".parse::<GemmStrategy>()?, GemmStrategy::RealEmbedding);
    /// let s: GemmStrategy = "blocked:32x64x16/8x4".parse()?;
    /// assert_eq!(s, GemmStrategy::Blocked(GemmTiles::scalar(32, 64, 16, 8, 4)));
    /// assert_eq!(s.to_string().parse::<GemmStrategy>()?, s);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    fn from_str(text: &str) -> Result<GemmStrategy> {
        let text = text.trim();
        if text == "direct" {
            Ok(GemmStrategy::Direct)
        } else if text == "native" {
            Ok(GemmStrategy::Native)
        } else if text == "tensor-core" {
            Ok(GemmStrategy::TensorCore)
        } else if text == "wgmma" {
            Ok(GemmStrategy::Wgmma)
        } else if text == "real-embedding" {
            Ok(GemmStrategy::RealEmbedding)
        } else if let Some(tiles) = text.strip_prefix("blocked:") {
            Ok(GemmStrategy::Blocked(tiles.parse()?))
        } else {
            Ok(GemmStrategy::Tiled(text.strip_prefix("tiled:").unwrap_or(text).parse()?))
        }
    }
}
