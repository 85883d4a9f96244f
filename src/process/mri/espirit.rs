//! [`EspiritMaps`]: coil sensitivity maps from the k-space's fully sampled centre by ESPIRiT, step for step as
//! BART's `ecalib -m1` computes them (docs/bart-semantics.md §8). The host does what is small and sequential (the
//! calibration block, read back as a band of y; the Casorati Gram's eigenvectors with faer, in the data's
//! precision; the phase reference, in float64); the device computes the Gram on GPUs and does the per-pixel work
//! (the kernels' image-space matrices, their sinc interpolation to the image and 30 power iterations per pixel).

use super::coil_maps::{Calibration, PixelLayout, PixelProgram, at, put};
use crate::app::{DeviceKind, Kernel};
use crate::data::{KData, XData};
use crate::element::{ComplexElement, Element};
use crate::error::{Error, Result};
use crate::process::{Prepared, Process};
use faer::{Mat, Side};
use num_complex::{Complex, Complex64};
use std::f64::consts::PI;

/// The settings of [`EspiritMaps`], BART's defaults: calibration region at most 24 per axis (`-r`), kernel 6
/// (`-k`), kernel threshold 0.001 (`-t`), eigenvalue crop 0.8 (`-c`), 30 power iterations.
///
/// ```
/// let p = cliper::EspiritParams::default().crop(0.9);
/// assert_eq!((p.calibration, p.kernel, p.threshold, p.crop, p.iterations), (24, 6, 0.001, 0.9, 30));
/// assert_eq!(p.maps, 1);
/// assert_eq!(p.sets(2).maps, 2);
/// assert_eq!(p.gram_on_device(true).gram_on_device, Some(true));
/// assert_eq!(p.work_item_per_pixel(true).work_item_per_pixel, Some(true));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EspiritParams {
    /// The calibration region's largest extent per axis.
    pub calibration: usize,
    /// The kernel's extent per axis.
    pub kernel: usize,
    /// Kernels are kept while σᵢ/σ₀ > √threshold.
    pub threshold: f64,
    /// Maps are 0 where the eigenvalue is below this.
    pub crop: f64,
    /// Power iterations per pixel.
    pub iterations: usize,
    /// Sets of maps (`bart ecalib -m`): 1, or up to the coil count — the eigenvectors of the largest eigenvalues,
    /// each cropped by its own eigenvalue, as `[maps, coils, x, y]`.
    pub maps: usize,
    /// Where the Casorati matrix's Gram is computed: on the device (`Some(true)`), on the host (`Some(false)`),
    /// or on the device when it is a GPU (`None`, the default; a CPU device does no better than the host's BLAS).
    pub gram_on_device: Option<bool>,
    /// The per-pixel kernel's layout: one work-item per pixel holding the whole matrix (`Some(true)`, what CPUs
    /// run fastest), or one per pixel and coil holding a row (`Some(false)`, for GPUs); `None` picks by device
    /// kind.
    pub work_item_per_pixel: Option<bool>,
}

impl Default for EspiritParams {
    fn default() -> EspiritParams {
        EspiritParams {
            calibration: 24,
            kernel: 6,
            threshold: 0.001,
            crop: 0.8,
            iterations: 30,
            maps: 1,
            gram_on_device: None,
            work_item_per_pixel: None,
        }
    }
}

impl EspiritParams {
    /// The eigenvalue crop.
    pub fn crop(mut self, crop: f64) -> EspiritParams {
        self.crop = crop;
        self
    }

    /// Sets of maps (`bart ecalib -m`).
    pub fn sets(mut self, maps: usize) -> EspiritParams {
        self.maps = maps;
        self
    }

    /// Where the Casorati Gram is computed (`true`: on the device).
    pub fn gram_on_device(mut self, on_device: bool) -> EspiritParams {
        self.gram_on_device = Some(on_device);
        self
    }

    /// The per-pixel kernel's layout (`true`: a work-item per pixel).
    pub fn work_item_per_pixel(mut self, per_pixel: bool) -> EspiritParams {
        self.work_item_per_pixel = Some(per_pixel);
        self
    }
}

/// How an [`EspiritMaps`] ran, as `strategy()` reports it after a launch: the calibration region found, the
/// kernels kept, the size of the eigenproblem solved on the host and the host's time.
///
/// ```
/// let s = cliper::EspiritStrategy {
///     calibration: vec![24, 24], kernels: 47, candidates: 288, gram: 288, pixels_per_group: 32, host_ms: 9.5,
///     gram_on_device: true, work_item_per_pixel: false,
/// };
/// assert!(s.to_string().contains("47 of 288"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct EspiritStrategy {
    /// The fully sampled calibration region's extent per spatial axis.
    pub calibration: Vec<usize>,
    /// Kernels kept.
    pub kernels: usize,
    /// Kernels considered (kernel^d × coils, d the spatial axes).
    pub candidates: usize,
    /// The order of the Hermitian eigenproblem solved on the host: the smaller of the Casorati matrix's two
    /// Grams (columns: kernel^d × coils; rows: kernel positions in the calibration block).
    pub gram: usize,
    /// Pixels per work-group of the per-pixel kernel.
    pub pixels_per_group: usize,
    /// The per-pixel kernel ran a work-item per pixel (else one per pixel and coil).
    pub work_item_per_pixel: bool,
    /// Milliseconds spent on the host (read-back of the calibration band included).
    pub host_ms: f64,
    /// Whether the Gram was computed on the device.
    pub gram_on_device: bool,
}

impl std::fmt::Display for EspiritStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ESPIRiT: calibration {:?}, {} of {} kernels ({}² Gram on the {}, its eigenproblem on the host; host \
             {:.1} ms); per-pixel power iterations on the device, {} pixels per work-group, a work-item per \
             pixel{}",
            self.calibration,
            self.kernels,
            self.candidates,
            self.gram,
            if self.gram_on_device { "device" } else { "host" },
            self.host_ms,
            self.pixels_per_group,
            if self.work_item_per_pixel { "" } else { " and coil" }
        )
    }
}

/// ESPIRiT coil maps of 2-D k-space `[coils, x, y]` (stored centred, its centre fully sampled) into `maps`
/// (`[coils, x, y]`), as `bart ecalib -m1`:
/// - the largest fully sampled centred block up to 24² (moved along x to the most energy);
/// - its 6 × 6 Casorati matrix, whose right singular vectors above √0.001 of the largest are the kernels;
/// - the kernels' image-space operator on a 12 × 12 grid, sinc-interpolated to the image;
/// - per pixel, 30 power iterations from the first coil; 0 where the eigenvalue is below 0.8;
/// - the phase referenced to the calibration data's principal component.
///
/// Maps match BART's up to one global sign (the principal component's sign is arbitrary, LAPACK's included).
/// The eigenproblem is solved on the host (faer), in the data's precision (float32 like BART's `cheev` for
/// float32 data), with the smaller of the Casorati matrix's Grams (288² for 8 coils, 361² for a 24² block with more
/// coils, where BART solves the 36·C-wide one). The Gram is computed on the device when it is a GPU
/// ([`EspiritParams::gram_on_device`]); everything per pixel runs on the device, compiled for the coil count.
///
/// ```
/// use cliper::{EspiritMaps, KData, Process, XData};
/// use num_complex::Complex32;
/// let app = cliper::ClApp::new()?;
/// let k = KData::<Complex32>::load(&app, "tests/fixtures/bart/phantom8.cfl")?;
/// let maps = EspiritMaps::apply(&k, cliper::EspiritParams::default())?;
/// assert_eq!(maps.shape(), &[8, 96, 96]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct EspiritMaps<T: ComplexElement> {
    k: KData<T>,
    maps: XData<T>,
    params: EspiritParams,
    plan: Prepared<Plan<T>>,
    last: Option<EspiritStrategy>,
}

/// What `init` prepares: the kernels and the tables that depend only on the shapes.
struct Plan<T: ComplexElement> {
    /// espirit_grid_kernels, espirit_grid_matrices, espirit_interpolate, espirit_eigen (or its serial form: a
    /// work-item per pixel), espirit_gram, espirit_eigen_maps (several maps).
    kernels: [Kernel; 6],
    /// The Casorati Gram is computed on the device (GPUs), else on the host.
    device_gram: bool,
    layout: PixelLayout,
    /// The inverse DFT's phases from kernel offsets to the grid: `[grid², kernel²]`.
    phase: XData<T>,
    /// The sinc interpolation maps `[nx, grid]`, `[ny, grid]` and (3-D) `[nz, grid]`.
    rx: XData<T>,
    ry: XData<T>,
    rz: Option<XData<T>>,
    /// The grid's matrices `[grid^d, coils, coils]`, (3-D) their interpolation along z `[grid², coils, coils, nz]`,
    /// and along y `[grid, coils, coils, ny · nz]`: for the per-pixel kernel, a 3-D image is `nx × (ny · nz)`.
    grid: XData<T>,
    wz: Option<XData<T>>,
    wy: XData<T>,
}

/// Work-items per group of the small grid-stride kernels.
const GROUP: usize = 64;

/// The global size of a grid-stride kernel over `count` items: whole groups, at most 2¹⁴ of them.
fn grid_stride(count: usize) -> usize {
    count.div_ceil(GROUP).clamp(1, 1 << 14) * GROUP
}

/// The kernel's extent per axis of x, y, z for `dims` spatial axes (1 along z in 2-D).
fn kernel_extent(kk: usize, dims: usize) -> [usize; 3] {
    [kk, kk, if dims == 3 { kk } else { 1 }]
}

/// The Casorati matrix's rows (kernel positions in the block) and columns (kernel offsets × coils), and whether
/// its Gram is taken as AᴴA (columns ≤ rows) rather than AAᴴ: the smaller eigenproblem.
fn casorati_shape(cal: &Calibration, kernel: [usize; 3]) -> (usize, usize, bool) {
    let rows = cal.extent.iter().zip(&kernel).map(|(&c, &k)| c + 1 - k).product::<usize>();
    let columns = kernel.iter().product::<usize>() * cal.coils;
    (rows, columns, columns <= rows)
}

impl<T: ComplexElement> EspiritMaps<T> {
    /// Maps of `k` into `maps`.
    pub fn new(k: &KData<T>, maps: &XData<T>, params: EspiritParams) -> EspiritMaps<T> {
        EspiritMaps { k: k.clone(), maps: maps.clone(), params, plan: Prepared::default(), last: None }
    }

    /// Allocates the maps, computes them once and returns them.
    pub fn apply(k: &KData<T>, params: EspiritParams) -> Result<XData<T>> {
        let maps = XData::uninit(k.as_xdata().app(), "EspiritMaps", &Self::output_shape_with(k, params)?)?;
        EspiritMaps::new(k, &maps, params).run()?;
        Ok(maps)
    }

    /// The maps' shape: `[coils, x, y]` or `[coils, x, y, z]` (k-space of one frame, 2-D or 3-D).
    pub fn output_shape(k: &KData<T>) -> Result<Vec<usize>> {
        if k.num_frames() != 1 || !(2..=3).contains(&k.spatial_shape().len()) {
            return Err(Error::invalid(
                "EspiritMaps",
                format!(
                    "k-space of shape {:?}: ESPIRiT takes one frame, [coils, x, y] or [coils, x, y, z]",
                    k.as_xdata().shape()
                ),
            ));
        }
        Ok([k.num_coils()].iter().chain(k.spatial_shape()).copied().collect())
    }

    /// The maps' shape for `params`: [`EspiritMaps::output_shape`] for one set, `[maps, coils, x, y]` for several.
    ///
    /// ```
    /// use cliper::{EspiritMaps, EspiritParams, KData, XData};
    /// use num_complex::Complex32;
    /// let app = cliper::ClApp::new()?;
    /// let k = KData::new(XData::<Complex32>::zeros(&app, &[4, 30, 20])?, 2)?;
    /// assert_eq!(EspiritMaps::output_shape_with(&k, EspiritParams::default().sets(2))?, vec![2, 4, 30, 20]);
    /// assert!(EspiritMaps::output_shape_with(&k, EspiritParams::default().sets(5)).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape_with(k: &KData<T>, params: EspiritParams) -> Result<Vec<usize>> {
        let one = Self::output_shape(k)?;
        match params.maps {
            1 => Ok(one),
            m if (2..=k.num_coils()).contains(&m) => Ok(std::iter::once(m).chain(one).collect()),
            m => Err(Error::invalid(
                "EspiritMaps",
                format!("{m} sets of maps: give 1 to the coil count ({})", k.num_coils()),
            )),
        }
    }

    /// The calibration region, kernels and host time of the last launch.
    pub fn strategy(&self) -> Option<EspiritStrategy> {
        self.last.clone()
    }
}

impl<T: ComplexElement> Process for EspiritMaps<T> {
    fn name(&self) -> &str {
        "EspiritMaps"
    }

    fn init(&mut self) -> Result<()> {
        let op = "EspiritMaps";
        let shape = Self::output_shape_with(&self.k, self.params)?;
        if self.maps.shape() != shape.as_slice() {
            return Err(Error::shape(op, &shape, self.maps.shape()));
        }
        if !self.maps.is_packed() {
            return Err(Error::invalid(
                op,
                "the maps must be contiguous from its buffer's start (XData::contiguous makes a copy)",
            ));
        }
        let p = self.params;
        if p.kernel == 0 || p.calibration < p.kernel || p.threshold.is_nan() || p.threshold <= 0.0 || p.iterations == 0
        {
            return Err(Error::invalid(op, format!("settings {p:?}: need calibration ≥ kernel ≥ 1")));
        }
        let spatial = self.k.spatial_shape().to_vec();
        let dims = spatial.len();
        let coils = self.k.num_coils();
        let (nx, ny, nz) = (at(&spatial, 0), at(&spatial, 1), if dims == 3 { at(&spatial, 2) } else { 1 });
        let app = self.maps.app();
        let program = PixelProgram::new::<T>(op, app, coils, p.work_item_per_pixel)?;
        let kernels = [
            program.kernel(op, "espirit_grid_kernels")?,
            program.kernel(op, "espirit_grid_matrices")?,
            program.kernel(op, "espirit_interpolate")?,
            program.eigen_kernel(op, "espirit_eigen")?,
            program.kernel(op, "espirit_gram")?,
            program.kernel(op, "espirit_eigen_maps")?,
        ];
        let g = 2 * p.kernel;
        // The kernels' image-space grid (2 × kernel per axis) is interpolated up to the image; BART's caltwo asserts
        // the image is no smaller (an axis of 10 with kernel 6 aborts bart ecalib).
        if let Some(&n) = spatial.iter().find(|&&n| n < g) {
            return Err(Error::invalid(
                op,
                format!(
                    "k-space {spatial:?}: an axis of {n} is smaller than ESPIRiT's grid of {g} (twice the kernel {}); \
                     give a kernel of at most {} (bart ecalib -k)",
                    p.kernel,
                    n / 2
                ),
            ));
        }
        let kernel = kernel_extent(p.kernel, dims);
        let grid_points: usize = grid_extent(kernel).iter().product();
        let upload = |shape: &[usize], values: Vec<Complex64>| {
            let values: Vec<T> = values.into_iter().map(T::from_c64).collect();
            XData::from_slice(app, shape, &values)
        };
        let three = dims == 3;
        self.plan.set(Plan {
            kernels,
            // The device's Gram kernel reads a 2-D band; 3-D blocks are gathered on the host.
            device_gram: !three && p.gram_on_device.unwrap_or(app.device().kind == DeviceKind::Gpu),
            layout: program.layout,
            phase: upload(&[grid_points, kernel.iter().product()], grid_phases(kernel))?,
            rx: upload(&[nx, g], sinc_map(g, nx))?,
            ry: upload(&[ny, g], sinc_map(g, ny))?,
            rz: if three { Some(upload(&[nz, g], sinc_map(g, nz))?) } else { None },
            grid: XData::uninit(app, op, &[grid_points, coils, coils])?,
            wz: if three { Some(XData::uninit(app, op, &[g * g, coils, coils, nz])?) } else { None },
            wy: XData::uninit(app, op, &[g, coils, coils, ny * nz])?,
        });
        self.last = None;
        Ok(())
    }

    /// Reads the calibration band back (waits for the device), finds the kernels and the phase reference on the
    /// host, then enqueues the per-pixel work.
    fn launch(&mut self) -> Result<()> {
        let op = "EspiritMaps";
        let clock = std::time::Instant::now();
        let p = self.params;
        let spatial = self.k.spatial_shape().to_vec();
        let dims = spatial.len();
        let coils = self.k.num_coils();
        let (nx, ny, nz) = (at(&spatial, 0), at(&spatial, 1), if dims == 3 { at(&spatial, 2) } else { 1 });
        let (calibration, band, [bx, by, _]) = Calibration::find_with_band(op, &self.k, p.calibration)?;
        let kk = p.kernel;
        let kernel = kernel_extent(kk, dims);
        let found: Vec<usize> = calibration.extent.iter().take(dims).copied().collect();
        if found.iter().any(|&c| c < kk) {
            return Err(Error::invalid(
                op,
                format!(
                    "the fully sampled centre is {}, smaller than the {} kernel",
                    found.iter().map(usize::to_string).collect::<Vec<_>>().join(" × "),
                    vec![kk.to_string(); dims].join(" × ")
                ),
            ));
        }
        let gram = match self.plan.get(op)? {
            plan if plan.device_gram => Some(device_gram(plan, &band, [bx, by], &calibration, kk)?),
            _ => None,
        };
        let gram = gram.as_deref();
        let basis = if T::IS_DOUBLE {
            kernel_basis::<Complex64>(&calibration, kernel, p.threshold, gram)?
        } else {
            kernel_basis::<Complex<f32>>(&calibration, kernel, p.threshold, gram)?
        };
        let z = phase_reference(&calibration)?;
        let host_ms = clock.elapsed().as_secs_f64() * 1e3;
        let app = self.maps.app().clone();
        let plan = self.plan.get(op)?;
        self.last = Some(EspiritStrategy {
            calibration: found,
            kernels: basis.kept,
            candidates: kernel.iter().product::<usize>() * coils,
            gram: basis.gram,
            pixels_per_group: plan.layout.pixels_per_group(),
            work_item_per_pixel: plan.layout.serial,
            host_ms,
            gram_on_device: plan.device_gram,
        });
        if basis.kept == 0 {
            // No energy in the calibration block: no kernels, every eigenvalue 0, every map 0 (as BART).
            return self.maps.write(&vec![T::default(); self.maps.len()]);
        }
        let to_t = |v: Vec<Complex64>| v.into_iter().map(T::from_c64).collect::<Vec<T>>();
        let q_count: usize = kernel.iter().product();
        let v = XData::from_slice(&app, &[q_count * coils, basis.kept], &to_t(basis.vectors))?;
        let z = XData::from_slice(&app, &[coils], &to_t(z))?;
        let g = 2 * kk;
        let grid_points: usize = grid_extent(kernel).iter().product();
        let a = XData::<T>::uninit(&app, op, &[grid_points, coils, basis.kept])?;
        let as_u32 = |n: usize| u32::try_from(n).map_err(|_| Error::invalid(op, format!("{n} is too large")));
        let (grid, q, kept) = (as_u32(grid_points)?, as_u32(q_count)?, as_u32(basis.kept)?);
        let stride_launch = |count: usize| (grid_stride(count), GROUP);
        let real = |v: f64| T::Real::from_c64(Complex::new(v, 0.0));
        let [grid_kernels, grid_matrices, ..] = &mut plan.kernels;
        let (global, local) = stride_launch(grid_points * coils * basis.kept);
        grid_kernels
            .launch()
            .input("v", &v)
            .input("phase", &plan.phase)
            .output("a", &a)
            .scalar("grid", grid)
            .scalar("q_count", q)
            .scalar("kernels", kept)
            .global(&[global])
            .local(&[local])
            .enqueue()?;
        let (global, local) = stride_launch(grid_points * coils * coils);
        // BART's normalisation: the kernel's and the grid's sizes over every spatial axis.
        let scale = real(1.0 / (q_count * grid_points) as f64);
        grid_matrices
            .launch()
            .input("a", &a)
            .output("w", &plan.grid)
            .scalar("grid", grid)
            .scalar("kernels", kept)
            .scalar("scale", scale)
            .global(&[global])
            .local(&[local])
            .enqueue()?;
        interpolate_grid(plan, coils, [ny, nz])?;
        // Several maps run a work-item per pixel on every device (the vectors' Gram–Schmidt stays private). A 3-D
        // image is nx × (ny · nz) to the per-pixel kernels: the y and z interpolations are already done.
        let plan = self.plan.get(op)?;
        let [.., one_map, _, several_maps] = &mut plan.kernels;
        let columns = ny * nz;
        let layout = if p.maps > 1 { PixelLayout { serial: true, ..plan.layout } } else { plan.layout };
        let (global, group) = layout.geometry(coils, nx, columns);
        let flops = 8 * (nx * columns * coils * coils * (g + p.iterations * p.maps)) as u64;
        let eigen = if p.maps > 1 { several_maps } else { one_map };
        let launch = eigen
            .launch()
            .input("wy", &plan.wy)
            .input("rx", &plan.rx)
            .input("z", &z)
            .output("maps", &self.maps)
            .scalar("nx", as_u32(nx)?)
            .scalar("ny", as_u32(columns)?)
            .scalar("g", as_u32(g)?)
            .scalar("iterations", as_u32(p.iterations)?)
            .scalar("crop", real(p.crop));
        let launch = if p.maps > 1 { launch.scalar("count", as_u32(p.maps)?) } else { launch };
        launch
            .global(&[global])
            .local(&[group])
            .work(
                (g * coils * coils * columns + 2 * coils * nx * columns * p.maps) as u64
                    * std::mem::size_of::<T>() as u64,
                flops,
            )
            .enqueue()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// The sinc interpolation of the grid's matrices to the image along y (and first along z in 3-D), into `wy`
/// (`[g, coils, coils, ny · nz]`): `espirit_interpolate` over an outer count of grid points, the interpolated axis,
/// and a trailing count that rides along.
fn interpolate_grid<T: ComplexElement>(plan: &mut Plan<T>, coils: usize, [ny, nz]: [usize; 2]) -> Result<()> {
    let op = "EspiritMaps";
    let g = plan.rx.shape().get(1).copied().unwrap_or(1);
    let as_u32 = |n: usize| u32::try_from(n).map_err(|_| Error::invalid(op, format!("{n} is too large")));
    let [_, _, interpolate, ..] = &mut plan.kernels;
    let mut pass = |from: &XData<T>, map: &XData<T>, to: &XData<T>, outer: usize, n: usize, inner: usize| {
        let (global, local) = (grid_stride(outer * coils * coils * n * inner), GROUP);
        interpolate
            .launch()
            .input("w", from)
            .input("ry", map)
            .output("wy", to)
            .scalar("g", as_u32(g)?)
            .scalar("ny", as_u32(n)?)
            .scalar("outer", as_u32(outer)?)
            .scalar("inner", as_u32(inner)?)
            .global(&[global])
            .local(&[local])
            .enqueue()
    };
    match (&plan.wz, &plan.rz) {
        (Some(wz), Some(rz)) => {
            pass(&plan.grid, rz, wz, g * g, nz, 1)?;
            pass(wz, &plan.ry, &plan.wy, g, ny, nz)
        }
        _ => pass(&plan.grid, &plan.ry, &plan.wy, g, ny, 1),
    }
}

/// BART's `fftmod` phase of index `j` on an axis of `n`: exp(2πi (j − c/2) c / n), c = n/2 (conjugate: `ifftmod`).
fn modulation(j: usize, n: usize, inverse: bool) -> Complex64 {
    let c = (n / 2) as f64;
    let turns = (j as f64 - c / 2.0) * c / n as f64;
    Complex64::from_polar(1.0, if inverse { -2.0 } else { 2.0 } * PI * turns)
}

/// exp(2πi k / n), the product reduced modulo n first (exact turns for large indices).
fn turn(k: usize, n: usize) -> Complex64 {
    Complex64::from_polar(1.0, 2.0 * PI * (k % n) as f64 / n as f64)
}

/// BART's grid for the kernels' image-space matrices (`calone_dims`): twice the kernel along each axis it spans, 1
/// along the others.
fn grid_extent(kernel: [usize; 3]) -> [usize; 3] {
    kernel.map(|k| if k == 1 { 1 } else { 2 * k })
}

/// The phases taking a kernel of `kernel` per axis (zero-padded centred on its [`grid_extent`], ifftmod,
/// unnormalised inverse DFT) to the grid: `[grid point (x · g_y + y) · g_z + z, kernel offset kx + k_x · (ky +
/// k_y · kz)]`.
fn grid_phases(kernel: [usize; 3]) -> Vec<Complex64> {
    let grid = grid_extent(kernel);
    let (points, offsets): (usize, usize) = (grid.iter().product(), kernel.iter().product());
    let [g1, g2] = [grid[1], grid[2]];
    let [k0, k1] = [kernel[0], kernel[1]];
    let mut phases = vec![Complex64::default(); points * offsets];
    for point in 0..points {
        let position = [point / (g1 * g2), (point / g2) % g1, point % g2];
        for q in 0..offsets {
            let k = [q % k0, (q / k0) % k1, q / (k0 * k1)];
            let value = (0..3)
                .map(|d| {
                    let (g, u) = (at(&grid, d), at(&k, d) + at(&grid, d) / 2 - at(&kernel, d) / 2);
                    modulation(u, g, true) * turn(u * at(&position, d), g)
                })
                .product::<Complex64>();
            put(&mut phases, point * offsets + q, value);
        }
    }
    phases
}

/// BART's sinc interpolation of a line from `n_in` to `n_out` samples (fftmod, DFT, fftmod, centred zero
/// padding, ifftmod, unnormalised inverse DFT, ifftmod) as one linear map: `[n_out, n_in]`.
fn sinc_map(n_in: usize, n_out: usize) -> Vec<Complex64> {
    let pad = n_out / 2 - n_in / 2;
    let mut map = vec![Complex64::default(); n_out * n_in];
    for i in 0..n_out {
        for j in 0..n_in {
            let sum: Complex64 = (0..n_in)
                .map(|u| {
                    let m = u + pad;
                    modulation(m, n_out, true)
                        * turn(m * i, n_out)
                        * modulation(u, n_in, false)
                        * turn(u * j, n_in).conj()
                })
                .sum();
            put(&mut map, i * n_in + j, modulation(i, n_out, true) * sum * modulation(j, n_in, false));
        }
    }
    map
}

/// Enqueues the Casorati Gram of the block on the device, from the calibration band (the block starts at `start`
/// in it), and reads it back: AᴴA when the kernel offsets × coils are no more than the kernel positions, else AAᴴ
/// (as [`kernel_basis`] chooses). Row-major, in float64.
fn device_gram<T: ComplexElement>(
    plan: &mut Plan<T>,
    band: &XData<T>,
    start: [usize; 2],
    cal: &Calibration,
    kk: usize,
) -> Result<Vec<Complex64>> {
    let op = "EspiritMaps";
    let [cx, cy, _] = cal.extent;
    let (rows, columns, by_columns) = casorati_shape(cal, kernel_extent(kk, 2));
    let n = if by_columns { columns } else { rows };
    let gram = XData::<T>::uninit(band.app(), op, &[n, n])?;
    let [_, nx, width] = band.shape()[..] else { return Err(Error::invalid(op, "the band is not [coils, x, y]")) };
    let as_u32 = |v: usize| u32::try_from(v).map_err(|_| Error::invalid(op, format!("{v} is too large")));
    let [.., kernel, _] = &mut plan.kernels;
    kernel
        .launch()
        .input("band_buffer", band)
        .scalar("base", band.offset() as u64)
        .output("gram", &gram)
        .scalar("nx", as_u32(nx)?)
        .scalar("w", as_u32(width)?)
        .scalar("x0", as_u32(start[0])?)
        .scalar("y0", as_u32(start[1])?)
        .scalar("cx", as_u32(cx)?)
        .scalar("cy", as_u32(cy)?)
        .scalar("kk", as_u32(kk)?)
        .scalar("by_columns", u32::from(by_columns))
        .global(&[grid_stride(n * n)])
        .local(&[GROUP])
        .enqueue()?;
    Ok(gram.to_vec()?.into_iter().map(|v| v.to_c64()).collect())
}

/// The kept kernels: a basis of the Casorati matrix's leading right singular subspace.
struct KernelBasis {
    /// `[kernel² · coils, kept]`, row-major; column k is v_k (the kernel is its conjugate).
    vectors: Vec<Complex64>,
    kept: usize,
    /// The order of the eigenproblem solved.
    gram: usize,
}

/// The scalar of the host's eigenproblems: float32 for float32 data (BART's `cheev` is float32 too, and it
/// halves the host's time: the 288² problem of 8 coils took 8 ms instead of 16 ms on this machine's 2 cores),
/// float64 for float64 data.
trait HostScalar: faer::traits::ComplexField + Copy {
    fn from_c64(v: Complex64) -> Self;
    fn to_c64(self) -> Complex64;
}

impl HostScalar for Complex<f32> {
    fn from_c64(v: Complex64) -> Self {
        Complex::new(v.re as f32, v.im as f32)
    }
    fn to_c64(self) -> Complex64 {
        Complex64::new(self.re.into(), self.im.into())
    }
}

impl HostScalar for Complex64 {
    fn from_c64(v: Complex64) -> Self {
        v
    }
    fn to_c64(self) -> Complex64 {
        self
    }
}

/// Entry (r, c) of a faer matrix in float64, 0 outside.
fn entry<E: HostScalar>(m: faer::MatRef<'_, E>, r: usize, c: usize) -> Complex64 {
    if r < m.nrows() && c < m.ncols() { m.get(r, c).to_c64() } else { Complex64::default() }
}

/// The Casorati matrix A of the block (a row per kernel position, x fastest; a column per (kx, ky, kz, coil), kx
/// fastest) for a kernel of `kernel` per axis (1 along z in 2-D), its singular values from the smaller Gram (AᴴA
/// or AAᴴ), and the right singular vectors v_k with σ_k / σ_0 > √threshold (from AAᴴ: v_k = Aᴴ u_k / σ_k). Only
/// the subspace matters.
fn kernel_basis<E: HostScalar>(
    cal: &Calibration,
    kernel: [usize; 3],
    threshold: f64,
    device_gram: Option<&[Complex64]>,
) -> Result<KernelBasis> {
    let op = "EspiritMaps";
    let (rows, columns, by_columns) = casorati_shape(cal, kernel);
    let [kx_count, ky_count, kz_count] = kernel;
    let [sx_count, sy_count, _] = [0, 1, 2].map(|d| at(&cal.extent, d) + 1 - at(&kernel, d));
    // A itself, where it is needed: for the host's Gram, and for v = Aᴴu/σ from AAᴴ.
    let a = if device_gram.is_none() || !by_columns {
        Mat::<E>::from_fn(rows, columns, |row, column| {
            let (sx, sy, sz) = (row % sx_count, (row / sx_count) % sy_count, row / (sx_count * sy_count));
            let (kx, ky) = (column % kx_count, (column / kx_count) % ky_count);
            let (kz, c) = ((column / (kx_count * ky_count)) % kz_count, column / (kx_count * ky_count * kz_count));
            E::from_c64(cal.at(c, sx + kx, sy + ky, sz + kz))
        })
    } else {
        Mat::<E>::zeros(0, 0)
    };
    let gram = match device_gram {
        Some(g) => {
            let n = if by_columns { columns } else { rows };
            Mat::<E>::from_fn(n, n, |i, j| E::from_c64(at(g, i * n + j)))
        }
        None if by_columns => a.adjoint() * &a,
        None => &a * a.adjoint(),
    };
    let eigen = gram
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| Error::invalid(op, format!("the Casorati Gram's eigendecomposition failed: {e:?}")))?;
    let values = eigen.S().column_vector();
    let order = values.nrows();
    // faer sorts the eigenvalues in ascending order: the largest is last.
    let sigma = |i: usize| if i < order { values.get(i).to_c64().re.max(0.0).sqrt() } else { 0.0 };
    let largest = if order > 0 { sigma(order - 1) } else { 0.0 };
    let kept: Vec<usize> =
        (0..order).rev().take_while(|&i| largest > 0.0 && sigma(i) / largest > threshold.sqrt()).collect();
    let u = eigen.U();
    let mut vectors = vec![Complex64::default(); columns * kept.len()];
    if by_columns {
        for r in 0..columns {
            for (j, &i) in kept.iter().enumerate() {
                put(&mut vectors, r * kept.len() + j, entry(u, r, i));
            }
        }
    } else {
        let scaled = Mat::<E>::from_fn(rows, kept.len(), |r, j| {
            let i = at(&kept, j);
            E::from_c64(entry(u, r, i) / sigma(i))
        });
        let basis = a.adjoint() * &scaled;
        for r in 0..columns {
            for j in 0..kept.len() {
                put(&mut vectors, r * kept.len() + j, entry(basis.as_ref(), r, j));
            }
        }
    }
    Ok(KernelBasis { vectors, kept: kept.len(), gram: order })
}

/// BART's phase reference (`scc` + `fixphase2`): the principal eigenvector z of conj(DᴴD) for the calibration data
/// D (`[positions, coils]`), its last entry made real and positive (LAPACK's cheev makes it real with an arbitrary
/// sign).
fn phase_reference(cal: &Calibration) -> Result<Vec<Complex64>> {
    let [cx, cy, _] = cal.extent;
    let d =
        Mat::<Complex64>::from_fn(cal.positions(), cal.coils, |r, c| cal.at(c, r % cx, (r / cx) % cy, r / (cx * cy)));
    let f = (d.adjoint() * &d).conjugate().to_owned();
    let eigen = f.self_adjoint_eigen(Side::Lower).map_err(|e| {
        Error::invalid("EspiritMaps", format!("the phase reference's eigendecomposition failed: {e:?}"))
    })?;
    let top = cal.coils.saturating_sub(1);
    let mut z: Vec<Complex64> = (0..cal.coils).map(|c| entry(eigen.U(), c, top)).collect();
    if let Some(last) = z.last().copied().filter(|v| v.norm() > 0.0) {
        let unit = last.conj() / last.norm();
        z.iter_mut().for_each(|v| *v *= unit);
    }
    Ok(z)
}

/// BART's ESPIRiT coil compression maps (`bart cc -E`: calib.c's `ecc`): ESPIRiT with kernels 6 long along the
/// readout and 1 across it, threshold 0.001, no crop, every eigenvector (a full eigendecomposition per position,
/// BART's `orthiter` off), on the host in float64. For each readout position `x` of `nx`: the `[map][coil]` matrix
/// (maps by decreasing eigenvalue, each turned so that its product with the calibration data's principal component
/// is real and positive, as `fixphase2` turns it) and the eigenvalues.
pub(super) fn readout_maps(cal: &Calibration, nx: usize) -> Result<Vec<(Vec<Complex64>, Vec<f64>)>> {
    let op = "CoilCompression";
    let kk = 6;
    let g = 2 * kk;
    if cal.extent[0] < kk || nx < g {
        return Err(Error::invalid(
            op,
            format!(
                "ESPIRiT compression needs a calibration block of at least {kk} along the readout (found {}) and a \
                 readout of at least {g} (found {nx})",
                cal.extent[0]
            ),
        ));
    }
    let basis = kernel_basis::<Complex64>(cal, [kk, 1, 1], 0.001, None)?;
    let (coils, kept) = (cal.coils, basis.kept);
    let v = |row: usize, k: usize| at(&basis.vectors, row * kept + k);
    // The kernels' image-space matrices on the grid of g points along the readout (espirit_grid_kernels and
    // espirit_grid_matrices in one dimension).
    let scale = 1.0 / (kk * g) as f64;
    let phases = grid_phases([kk, 1, 1]);
    let grid: Vec<Vec<Complex64>> = (0..g)
        .map(|x| {
            let a: Vec<Complex64> = (0..coils * kept)
                .map(|i| {
                    let (c, k) = (i / kept, i % kept);
                    (0..kk).map(|q| at(&phases, x * kk + q) * v(q + kk * c, k).conj()).sum()
                })
                .collect();
            (0..coils * coils)
                .map(|i| {
                    let (c, d) = (i / coils, i % coils);
                    (0..kept).map(|k| at(&a, c * kept + k) * at(&a, d * kept + k).conj()).sum::<Complex64>() * scale
                })
                .collect()
        })
        .collect();
    let rx = sinc_map(g, nx);
    let z = phase_reference(cal)?;
    (0..nx)
        .map(|x| {
            let m = Mat::<Complex64>::from_fn(coils, coils, |c, d| {
                (0..g)
                    .map(|j| at(&rx, x * g + j) * grid.get(j).map_or(Complex64::default(), |w| at(w, c * coils + d)))
                    .sum()
            });
            let eigen = m.self_adjoint_eigen(Side::Lower).map_err(|e| {
                Error::invalid(op, format!("the eigendecomposition at readout position {x} failed: {e:?}"))
            })?;
            let (u, values) = (eigen.U(), eigen.S().column_vector());
            let mut matrix = Vec::with_capacity(coils * coils);
            let mut eigenvalues = Vec::with_capacity(coils);
            // faer's eigenvalues ascend: map p is the (coils − 1 − p)-th.
            for p in 0..coils {
                let i = coils - 1 - p;
                let column: Vec<Complex64> = (0..coils).map(|c| entry(u, c, i)).collect();
                let dot: Complex64 = column.iter().zip(&z).map(|(s, r)| s * r.conj()).sum();
                let turn = if dot.norm() > 0.0 { dot.conj() / dot.norm() } else { Complex64::new(1.0, 0.0) };
                matrix.extend(column.iter().map(|s| s * turn));
                eigenvalues.push(if i < values.nrows() { values.get(i).re } else { 0.0 });
            }
            Ok((matrix, eigenvalues))
        })
        .collect()
}
