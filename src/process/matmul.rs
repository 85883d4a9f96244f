//! [`MatMul`]: `C = alpha·op(A)·op(B) + beta·C` for batches of real or complex matrices.

use super::Process;
use super::batch::{Batch3, broadcast};
use crate::app::{DeviceInfo, DeviceKind, IndexType, Kernel, Program};
use crate::data::{Element, XData};
use crate::error::{Error, Result};
use crate::kernels;

/// What [`MatMul`] does to an operand before multiplying (BLAS's `N`, `T`, `C`).
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

/// Work-group tiling of the GEMM kernels: a work-group computes an `mwg` × `nwg` block of C with
/// `mdimc` × `ndimc` work-items, stepping through K `kwg` at a time; each work-item owns
/// (`mwg`/`mdimc`) × (`nwg`/`ndimc`) outputs in registers, in runs of `vwm` neighbouring rows and `vwn`
/// neighbouring columns that the local-memory kernel reads as one vector (`float4` for `vwm = 4` in `f32`).
///
/// [`GemmTiles::for_device`] picks from the per-device table ([`crate::GemmTable`]); [`MatMul::with_strategy`]
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

    /// The tiles for a device and element type: the first matching entry of the user's table
    /// (`CLIPER_GEMM_TABLE`), else of the built-in table, else a safe default; shrunk where the device's local
    /// memory or work-group limit require. See [`crate::GemmTable`].
    pub fn for_device<T: Element>(info: &DeviceInfo) -> GemmTiles {
        match GemmStrategy::for_device::<T>(info) {
            GemmStrategy::Tiled(t) | GemmStrategy::Blocked(t) => t,
            GemmStrategy::Direct => Self::fallback::<T>(info).fit::<T>(info),
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

    /// Shrinks the K depth until the tiles fit in local memory and the work-group until the device allows it.
    fn fit<T: Element>(mut self, info: &DeviceInfo) -> GemmTiles {
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
    fn check<T: Element>(&self, info: &DeviceInfo, local_tiles: bool) -> Result<()> {
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

/// Which kernel a [`MatMul`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GemmStrategy {
    /// Local-memory tiles with register blocking: the fast path for all but small products.
    Tiled(GemmTiles),
    /// One output per work-item straight from global memory: for products too small to fill a tile.
    Direct,
    /// The same register blocking as [`GemmStrategy::Tiled`] without local memory or barriers (the tiles'
    /// `kwg` is unused): CPUs, where caches stage the operands and barriers would spill the accumulators.
    Blocked(GemmTiles),
}

impl GemmStrategy {
    /// The device's kernel for large (4096³) products: its [`crate::GemmTable`] entry, tiles shrunk to fit the
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
        match super::gemm_table::lookup::<T>(info, size).map(|(_, s)| s) {
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

    /// The planner's choice for an `m` × `n` × `k` product repeated `batch` times: [`GemmStrategy::Direct`] when
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
            GemmStrategy::Direct => (1, 1),
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

impl std::fmt::Display for GemmStrategy {
    /// `direct`, the tiles (`128x128x16/16x16/4x4`) for [`GemmStrategy::Tiled`], `blocked:` and the tiles for
    /// [`GemmStrategy::Blocked`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GemmStrategy::Direct => f.write_str("direct"),
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
    /// let s: GemmStrategy = "blocked:32x64x16/8x4".parse()?;
    /// assert_eq!(s, GemmStrategy::Blocked(GemmTiles::scalar(32, 64, 16, 8, 4)));
    /// assert_eq!(s.to_string().parse::<GemmStrategy>()?, s);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    fn from_str(text: &str) -> Result<GemmStrategy> {
        let text = text.trim();
        if text == "direct" {
            Ok(GemmStrategy::Direct)
        } else if let Some(tiles) = text.strip_prefix("blocked:") {
            Ok(GemmStrategy::Blocked(tiles.parse()?))
        } else {
            Ok(GemmStrategy::Tiled(text.strip_prefix("tiled:").unwrap_or(text).parse()?))
        }
    }
}

/// `C = alpha·op(A)·op(B) + beta·C`, for `f32`, `f64`, `Complex<f32>` and `Complex<f64>`; `op` is a
/// [`MatOp`] per operand.
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
/// use cliper::{ClApp, MatMul, MatOp, Process, XData};
/// let app = ClApp::new()?;
/// let a = XData::from_slice(&app, &[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let b = XData::from_slice(&app, &[2, 2], &[1.0f32, 0.0, 0.0, 2.0])?;
/// let c = XData::from_slice(&app, &[3, 2], &[1.0f32; 6])?;
/// // C = 2·Aᵀ·B + C
/// let mut mm = MatMul::new(&a, &b, &c).op_a(MatOp::Transpose).alpha(2.0).beta(1.0);
/// mm.init()?;
/// mm.launch()?;
/// assert_eq!(c.to_vec()?, vec![3.0, 17.0, 5.0, 21.0, 7.0, 25.0]);
/// // Or allocate the output: a batch of three 2×3 matrices times one 3×2 matrix.
/// let batch = XData::from_slice(&app, &[3, 2, 3], &vec![1.0f32; 18])?;
/// assert_eq!(MatMul::apply(&batch, &a.t())?.shape(), &[3, 2, 2]);
/// # Ok::<(), cliper::Error>(())
/// ```
///
/// Operands of different element types are rejected when the program is compiled:
/// ```compile_fail
/// # let app = cliper::ClApp::new()?;
/// let a = cliper::XData::<f32>::zeros(&app, &[2, 2])?;
/// let b = cliper::XData::<f64>::zeros(&app, &[2, 2])?;
/// let c = cliper::MatMul::apply(&a, &b)?;
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct MatMul<T: Element> {
    a: XData<T>,
    b: XData<T>,
    c: XData<T>,
    op_a: MatOp,
    op_b: MatOp,
    alpha: T,
    beta: T,
    forced: Option<GemmStrategy>,
    plan: Option<Plan<T>>,
}

/// Everything `launch` needs, fixed by `init`.
struct Plan<T: Element> {
    strategy: GemmStrategy,
    program: Program,
    kernel: Kernel,
    index: IndexType,
    /// op(A) and op(B) as views of shapes `[batch…, M, K]` and `[batch…, K, N]` (before broadcasting).
    a: XData<T>,
    b: XData<T>,
    mnk: [usize; 3],
    batch: Batch3,
    global: [usize; 3],
    local: [usize; 3],
    bytes: u64,
    flops: u64,
}

impl<T: Element> MatMul<T> {
    /// `c = a·b` (set the ops, `alpha` and `beta` with the builder methods before `init`).
    pub fn new(a: &XData<T>, b: &XData<T>, c: &XData<T>) -> MatMul<T> {
        MatMul {
            a: a.clone(),
            b: b.clone(),
            c: c.clone(),
            op_a: MatOp::None,
            op_b: MatOp::None,
            alpha: T::from_c64(1.0.into()),
            beta: T::default(),
            forced: None,
            plan: None,
        }
    }

    /// What to do to A before multiplying.
    pub fn op_a(mut self, op: MatOp) -> MatMul<T> {
        self.op_a = op;
        self
    }

    /// What to do to B before multiplying.
    pub fn op_b(mut self, op: MatOp) -> MatMul<T> {
        self.op_b = op;
        self
    }

    /// The factor on the product (default 1).
    pub fn alpha(mut self, alpha: T) -> MatMul<T> {
        self.alpha = alpha;
        self
    }

    /// The factor on the old C (default 0: C is overwritten and never read).
    pub fn beta(mut self, beta: T) -> MatMul<T> {
        self.beta = beta;
        self
    }

    /// Runs this kernel instead of the planner's choice (tiles are checked against the device in `init`).
    pub fn with_strategy(mut self, strategy: GemmStrategy) -> MatMul<T> {
        self.forced = Some(strategy);
        self
    }

    /// The kernel `init` chose; `None` before `init`.
    pub fn strategy(&self) -> Option<GemmStrategy> {
        self.plan.as_ref().map(|p| p.strategy)
    }

    /// The program `init` built and the kernel it runs (for inspection: [`Program::binary`],
    /// [`Kernel::private_mem_bytes`]); `None` before `init`.
    pub fn compiled(&self) -> Option<(&Program, &Kernel)> {
        self.plan.as_ref().map(|p| (&p.program, &p.kernel))
    }

    /// The shape of `op_a(a)·op_b(b)` for operand shapes `a` and `b`, or an error naming both shapes when
    /// they do not fit together.
    ///
    /// ```
    /// use cliper::{MatMul, MatOp};
    /// assert_eq!(MatMul::<f32>::output_shape(&[5, 2, 3], MatOp::None, &[3, 4], MatOp::None)?, vec![5, 2, 4]);
    /// assert_eq!(MatMul::<f32>::output_shape(&[3, 2], MatOp::Transpose, &[3, 4], MatOp::None)?, vec![2, 4]);
    /// let err = MatMul::<f32>::output_shape(&[2, 3], MatOp::None, &[4, 5], MatOp::None).unwrap_err();
    /// assert!(err.to_string().contains("[2, 3]") && err.to_string().contains("[4, 5]"));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(a: &[usize], op_a: MatOp, b: &[usize], op_b: MatOp) -> Result<Vec<usize>> {
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

    /// Allocates C, computes `a·b` into it once and returns it.
    pub fn apply(a: &XData<T>, b: &XData<T>) -> Result<XData<T>> {
        let shape = Self::output_shape(a.shape(), MatOp::None, b.shape(), MatOp::None)?;
        let c = XData::uninit(a.app(), "MatMul", &shape)?;
        let mut mm = MatMul::new(a, b, &c);
        mm.init()?;
        mm.launch()?;
        Ok(c)
    }

    fn plan(&self) -> Result<Plan<T>> {
        let app = self.c.app();
        if !self.a.app().same_as(app) || !self.b.app().same_as(app) {
            return Err(Error::invalid("MatMul", "A, B and C must belong to the same ClApp (device)"));
        }
        let expected = Self::output_shape(self.a.shape(), self.op_a, self.b.shape(), self.op_b)?;
        if self.c.shape() != expected.as_slice() {
            return Err(Error::Shape {
                op: "MatMul".into(),
                expected: format!(
                    "{expected:?} for op(A)·op(B) with A {:?} ({:?}) and B {:?} ({:?})",
                    self.a.shape(),
                    self.op_a,
                    self.b.shape(),
                    self.op_b
                ),
                got: format!("C of shape {:?}", self.c.shape()),
            });
        }
        for (name, x) in [("A", &self.a), ("B", &self.b)] {
            if self.c.overlaps(x) {
                return Err(Error::invalid(
                    "MatMul",
                    format!("C overlaps {name} in one buffer; the product needs a separate output"),
                ));
            }
        }
        let (a, b) = (self.op_a.view(&self.a), self.op_b.view(&self.b));
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
        // A user's table that cannot be read is an error here rather than a silent fall back to the built-in one.
        if let Some(Err(e)) = super::gemm_table::GemmTable::user() {
            return Err(e);
        }
        let strategy = match self.forced {
            Some(s) => s,
            None => GemmStrategy::for_problem::<T>(app.device(), m, n, k, count),
        };
        // An axis of extent 1 only ever has index 0, so its stride may as well be 1: declaring it so keeps the
        // number of distinct programs down (each costs a compile).
        let unit = |stride: usize, extent: usize| stride == 1 || extent <= 1;
        let (a_k, a_m) = (unit(sak, k), unit(sam, m));
        let (b_n, b_k) = (unit(sbn, n), unit(sbk, k));
        let units = format!(
            " -DA_K_UNIT={} -DA_M_UNIT={} -DB_N_UNIT={} -DB_K_UNIT={} -DC_N_UNIT={} -DA_K_FAST={} -DB_N_FAST={}",
            u8::from(a_k),
            u8::from(a_m),
            u8::from(b_n),
            u8::from(b_k),
            u8::from(unit(scn, n)),
            // The tile loaders walk whichever axis is contiguous in memory.
            u8::from(a_k || !a_m),
            u8::from(b_n || !b_k),
        );
        // All three kernels live in one program, built with tiles even for the direct kernel, so that switching
        // between the strategies of one tile choice never costs another compile.
        let t = match strategy {
            GemmStrategy::Tiled(t) => {
                t.validate::<T>(app.device())?;
                t
            }
            GemmStrategy::Blocked(t) => {
                t.check::<T>(app.device(), false)?;
                // gemm_tiled is compiled too: give it a K depth and runs it can build with if these do not fit.
                if t.validate::<T>(app.device()).is_ok() {
                    t
                } else {
                    GemmTiles { kwg: t.mdimc * t.ndimc, vwm: 1, vwn: 1, ..t }
                }
            }
            GemmStrategy::Direct => GemmTiles::for_device::<T>(app.device()),
        };
        let vector = |width: usize| GemmTiles::vector_type::<T>(width).unwrap_or_else(|| T::CL_TYPE.to_string());
        let options = format!(
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
        );
        let program = app.build_program("matmul.cl", &kernels::with_common(kernels::MATMUL), &options)?;
        let (kernel, global, local) = match strategy {
            GemmStrategy::Tiled(t) => {
                let kernel = program.kernel("gemm_tiled")?.owned_by("MatMul");
                let global = [n.div_ceil(t.nwg) * t.ndimc, m.div_ceil(t.mwg) * t.mdimc, count];
                (kernel, global, [t.ndimc, t.mdimc, 1])
            }
            GemmStrategy::Blocked(t) => {
                let kernel = program.kernel("gemm_blocked")?.owned_by("MatMul");
                let global = [n.div_ceil(t.nwg) * t.ndimc, m.div_ceil(t.mwg) * t.mdimc, count];
                (kernel, global, [t.ndimc, t.mdimc, 1])
            }
            GemmStrategy::Direct => {
                let kernel = program.kernel("gemm_direct")?.owned_by("MatMul");
                let limit = kernel.max_work_group_size()?.clamp(1, 256);
                let l0 = n.next_power_of_two().clamp(1, 16).min(limit);
                let l1 = m.next_power_of_two().clamp(1, (limit / l0).max(1));
                (kernel, [n.div_ceil(l0) * l0, m.div_ceil(l1) * l1, count], [l0, l1, 1])
            }
        };
        let use_beta = self.beta != T::default();
        let (mn, e) = ((m * n) as u64, std::mem::size_of::<T>() as u64);
        let per_matrix = ((m * k + k * n) as u64 + mn * (1 + u64::from(use_beta))) * e;
        let flops_per_mac = if T::IS_COMPLEX { 8 } else { 2 };
        Ok(Plan {
            strategy,
            program,
            kernel,
            index,
            a,
            b,
            mnk: [m, n, k],
            batch,
            global,
            local,
            bytes: per_matrix * count as u64,
            flops: flops_per_mac * mn * k as u64 * count as u64,
        })
    }
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
        self.plan = Some(self.plan()?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let p = self.plan.as_mut().ok_or_else(|| Error::NotInitialized { op: "MatMul".into() })?;
        let [m, n, k] = p.mnk;
        let (a, b, c) = (&p.a, &p.b, &self.c);
        let [sam, sak] = matrix_axes(a, "A")?.strides;
        let [sbk, sbn] = matrix_axes(b, "B")?.strides;
        let [scm, scn] = matrix_axes(c, "C")?.strides;
        let idx = p.index;
        let use_beta = self.beta != T::default();
        let launch = p
            .kernel
            .launch()
            .input(a)
            .index(idx, a.offset() as u64)
            .index(idx, sam as u64)
            .index(idx, sak as u64)
            .input(b)
            .index(idx, b.offset() as u64)
            .index(idx, sbk as u64)
            .index(idx, sbn as u64);
        // With beta = 0 the old C is not read, so it need not be valid.
        let launch = if use_beta { launch.in_out(c) } else { launch.output(c) };
        launch
            .index(idx, c.offset() as u64)
            .index(idx, scm as u64)
            .index(idx, scn as u64)
            .index(idx, m as u64)
            .index(idx, n as u64)
            .index(idx, k as u64)
            .scalar(u32::from(self.op_a.conjugates::<T>()))
            .scalar(u32::from(self.op_b.conjugates::<T>()))
            .scalar(self.alpha)
            .scalar(self.beta)
            .scalar(u32::from(use_beta))
            .scalar(p.batch.axes)
            .scalar(p.batch.shape)
            .scalar(p.batch.strides[0])
            .scalar(p.batch.strides[1])
            .scalar(p.batch.strides[2])
            .global(&p.global)
            .local(&p.local)
            .work(p.bytes, p.flops)
            .enqueue()
    }
}
