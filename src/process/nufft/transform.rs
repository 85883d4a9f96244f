//! [`Nufft`]: the type 1 and type 2 non-uniform FFTs of one set of points, planned once.

use super::bart_kernel;
use super::nufft_params::{NufftKernel, NufftParams, Spreading};
use super::points::NufftPoints;
use super::spreading_kernel::SpreadingKernel;
use crate::app::{ClApp, DeviceKind, Kernel};
use crate::data::XData;
use crate::element::{ComplexElement, Element};
use crate::error::{Error, Result};
use crate::kernels;
use crate::process::Process;
use crate::process::fft::{Fft, FftNorm, FftParams};
use num_complex::Complex;

/// Cells a tile reaches past the kernel's half width on each side, so that a tap whose cell rounding moved by one
/// stays inside its bin's tile.
const MARGIN: usize = 1;

/// Work-items per group of the passes over cells and points.
const GROUP: usize = 256;

/// The non-uniform FFT of one set of points, in BART's convention (`bart nufft`): for an image `x` of shape `N`
/// (1 to 3 axes, centred: index `i` holds position `r = i − ⌊N/2⌋`) and points `k_m` in cycles per field of
/// view,
///
/// - [`Nufft::forward`] (type 2, image → points): `y_m = (1/√ΠN) Σ_r x_r · exp(−2πi Σ_d k_{m,d} r_d / N_d)`,
/// - [`Nufft::adjoint`] (type 1, points → image): `x_r = (1/√ΠN) Σ_m y_m · exp(+2πi Σ_d k_{m,d} r_d / N_d)`,
///
/// each to the relative tolerance of [`NufftParams`], over a batch of images `[batch, N…]` and point values
/// `[batch, points]` (coils, frames) at once. The two are adjoint to rounding: they share every table.
///
/// The method is FINUFFT's (Barnett et al. 2019): the "exponential of semicircle" kernel ([`SpreadingKernel`]) on a
/// fine grid upsampled 2× or 1.25×, an FFT there, and a division by the kernel's transform. The points are sorted
/// by bin once, on the host, when the plan is made. Type 1 spreads without atomics: one work-group per bin writes
/// the bin's own tile (its work-items own whole lines of it), and a second pass adds the tiles into the fine grid,
/// so a transform gives the same bits every run, on every device.
///
/// ```
/// use cliper::{ClApp, Nufft, NufftParams, NufftPoints, XData};
/// use num_complex::Complex64 as C;
/// let app = ClApp::new()?;
/// // A 1-D image with a delta at position r = 2 (index 2 + 8/2): its transform at k is exp(−2πi·2k/8)/√8.
/// let mut image = vec![C::new(0.0, 0.0); 8];
/// image[6] = C::new(1.0, 0.0);
/// let points = NufftPoints::new(&[8], vec![0.0, 1.0, -2.5])?;
/// let mut nufft = Nufft::<C>::new(&app, &points, 1, NufftParams::default().tolerance(1e-9))?;
/// let y = XData::zeros(&app, &[1, 3])?;
/// nufft.forward(&XData::from_slice(&app, &[1, 8], &image)?, &y)?;
/// for (got, k) in y.to_vec()?.iter().zip([0.0f64, 1.0, -2.5]) {
///     let want = C::from_polar(1.0 / 8f64.sqrt(), -2.0 * std::f64::consts::PI * 2.0 * k / 8.0);
///     assert!((got - want).norm() < 1e-8);
/// }
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Nufft<T: ComplexElement> {
    shape: Vec<usize>,
    batch: usize,
    points: usize,
    kernel: SpreadingKernel,
    /// Image and fine-grid lengths, bins per axis, bin and tile lengths, each seen as 3-D (leading axes of 1).
    lens: [usize; 3],
    fine: [usize; 3],
    bins: [usize; 3],
    bin: [usize; 3],
    tile: [usize; 3],
    coords: XData<T::Real>,
    /// A sorted point's index in the caller's order, and each bin's first sorted point (u32 bits).
    order: XData<f32>,
    bin_start: XData<f32>,
    /// 1/φ̂ per axis, one axis after the other (the 1/√N scale in axis 0's).
    deconv: XData<T::Real>,
    grid: XData<T>,
    spectrum: XData<T>,
    tiles: XData<T>,
    forward_fft: Fft<T>,
    inverse_fft: Fft<T>,
    /// pad, crop, interp, spread, assemble.
    kernels: [Kernel; 5],
    spread_group: usize,
    /// Bytes of local memory a spreading group keeps its tile in (one element when it keeps it in global memory).
    shared_bytes: usize,
    strategy: NufftStrategy,
}

/// What a [`Nufft`] plan chose.
///
/// ```
/// use cliper::{ClApp, Nufft, NufftParams, NufftPoints};
/// let app = ClApp::new()?;
/// let plan = Nufft::<num_complex::Complex32>::new(&app, &NufftPoints::new(&[64], vec![1.5])?, 1, NufftParams::default())?;
/// let s = plan.strategy();
/// assert!(s.width >= 2 && s.fine[0] >= 64);
/// println!("{s}");
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct NufftStrategy {
    /// Taps per axis.
    pub width: usize,
    /// The kernel's shape β.
    pub beta: f64,
    /// The fine grid's upsampling.
    pub upsampling: f64,
    /// The fine grid's shape.
    pub fine: Vec<usize>,
    /// Bins per axis (type 1's work-groups).
    pub bins: Vec<usize>,
    /// Type 1's spreading: one work-item per bin (CPUs), else work-items owning tile lines.
    pub point_major: bool,
    /// Lines spreading keeps the tile in local memory.
    pub local_tile: bool,
    /// The degree of the taps' Chebyshev series (0: φ evaluated directly).
    pub series_degree: usize,
    /// The kernel: FINUFFT's, or BART's table (then `width`, `beta` and `upsampling` are BART's).
    pub kernel: NufftKernel,
}

impl std::fmt::Display for NufftStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let spreading = match (self.point_major, self.local_tile) {
            (true, _) => "a work-item per bin",
            (false, true) => "tile lines, tile in local memory",
            (false, false) => "tile lines",
        };
        write!(
            f,
            "kernel width {}, β {:.2}, upsampling {}, fine grid {:?}, bins {:?}, spreading by {spreading}, taps by {}",
            self.width,
            self.beta,
            self.upsampling,
            self.fine,
            self.bins,
            if let NufftKernel::Bart { periodic } = self.kernel {
                format!("BART's Kaiser–Bessel table ({})", if periodic { "periodic" } else { "edges dropped" })
            } else if self.series_degree > 0 {
                format!("Chebyshev series of degree {}", self.series_degree)
            } else {
                "exp".into()
            }
        )
    }
}

impl<T: ComplexElement> Nufft<T> {
    /// The plan for `points` and a batch of `batch` images: chooses the kernel and fine grid, sorts the points,
    /// computes the deconvolution tables and plans the FFTs.
    pub fn new(app: &ClApp, points: &NufftPoints, batch: usize, params: NufftParams) -> Result<Nufft<T>> {
        let op = "Nufft";
        if batch == 0 {
            return Err(Error::invalid(op, "the batch must hold at least one image"));
        }
        if T::IS_DOUBLE && !app.device().fp64 {
            return Err(Error::Unsupported {
                what: format!("Nufft: complex128 on {}, which has no float64", app.device().name),
            });
        }
        let shape = points.shape().to_vec();
        let dims = shape.len();
        let (kernel, fine_shape) = params.choose(&shape, points.len(), T::IS_DOUBLE)?;
        let lead = 3 - dims;
        let mut lens = [1usize; 3];
        let mut fine = [1usize; 3];
        for d in 0..dims {
            if let (Some(l), Some(f), Some(&n), Some(&nf)) =
                (lens.get_mut(lead + d), fine.get_mut(lead + d), shape.get(d), fine_shape.get(d))
            {
                *l = n;
                *f = nf;
            }
        }
        let cpu = app.device().kind == DeviceKind::Cpu;
        let wanted = bin_target(dims, cpu);
        let mut bin = [1usize; 3];
        let mut bins = [1usize; 3];
        let mut tile = [1usize; 3];
        for a in lead..3 {
            if let (Some(b), Some(nb), Some(t), Some(&n)) =
                (bin.get_mut(a), bins.get_mut(a), tile.get_mut(a), fine.get(a))
            {
                *b = bin_length(n, wanted.max(kernel.width + 2 * MARGIN));
                *nb = n / *b;
                *t = *b + kernel.width + 2 * MARGIN;
            }
        }
        let fine_cells: usize = fine.iter().product();
        let tile_cells: usize = tile.iter().product::<usize>() * bins.iter().product::<usize>();
        let limit = u32::MAX as usize;
        if points.len() >= limit || batch.saturating_mul(fine_cells.max(tile_cells)) >= limit.saturating_mul(4) {
            return Err(Error::invalid(
                op,
                format!("{} points on a fine grid {fine:?} are past this plan's 32-bit indices", points.len()),
            ));
        }
        let method = params.kernel_value();
        let sorted = sort_points(points, kernel.width, &fine, &bin, &bins, method)?;
        let deconv = deconvolution(&kernel, method, &lens, &fine, dims);
        let coords = XData::from_slice(
            app,
            &[sorted.coords.len().max(1)],
            &pad_one(sorted.coords.iter().map(|&c| T::Real::from_c64(Complex::new(c, 0.0))).collect()),
        )?;
        let order = XData::from_slice(
            app,
            &[sorted.order.len().max(1)],
            &pad_one(sorted.order.iter().map(|&i| f32::from_bits(i)).collect()),
        )?;
        let bin_start = XData::from_slice(
            app,
            &[sorted.bin_start.len()],
            &sorted.bin_start.iter().map(|&i| f32::from_bits(i)).collect::<Vec<_>>(),
        )?;
        let deconv = XData::from_slice(
            app,
            &[deconv.len()],
            &deconv.iter().map(|&c| T::Real::from_c64(Complex::new(c, 0.0))).collect::<Vec<_>>(),
        )?;
        let mut grid_shape = vec![batch];
        grid_shape.extend(fine.iter().skip(lead));
        let grid = XData::uninit(app, op, &grid_shape)?;
        let spectrum = XData::uninit(app, op, &grid_shape)?;
        let tiles = XData::uninit(app, op, &[batch * tile_cells])?;
        let axes: Vec<usize> = (1..=dims).collect();
        let mut forward_fft = Fft::new(&grid, &spectrum, FftParams::forward().axes(&axes).norm(FftNorm::Backward));
        let mut inverse_fft = Fft::new(&grid, &spectrum, FftParams::inverse().axes(&axes).norm(FftNorm::Forward));
        forward_fft.init()?;
        inverse_fft.init()?;
        // A GPU group keeps its tile in local memory when it fits in a third of it (room for the taps and for
        // more than one group per compute unit).
        let tile_bytes = tile.iter().product::<usize>() * std::mem::size_of::<T>();
        let fits = (tile_bytes as u64) * 3 <= app.device().local_mem_bytes;
        let (point_major, local_tile) = match params.spreading_value() {
            Spreading::Auto => (cpu, !cpu && fits),
            Spreading::PointMajor => (true, false),
            Spreading::Lines { local_tile } => (false, local_tile && fits),
        };
        let options = format!(
            "{} -DDIM={dims} -DW={} -DMARGIN={MARGIN} -DPOINT_MAJOR={} -DLOCAL_TILE={} -DCOORD_STRIDE={}",
            T::build_options(),
            kernel.width,
            u8::from(point_major),
            u8::from(local_tile),
            coord_stride(method)
        );
        let (series, series_degree) = match method {
            NufftKernel::Bart { .. } => (format!("#define DEGREE 0\n{}", bart_kernel::table_source(T::IS_DOUBLE)), 0),
            NufftKernel::ExpSemicircle => series_source(&kernel, params.tolerance_value(), dims, T::IS_DOUBLE),
        };
        let source = format!("{series}\n#line 1\n{}", kernels::NUFFT);
        let program = app.build_program("nufft.cl", &kernels::with_common(&source), &options)?;
        let k = |name: &str| program.kernel(name).map(|k| k.owned_by(op));
        let kernels = [k("nufft_pad")?, k("nufft_crop")?, k("nufft_interp")?, k("nufft_spread")?, k("nufft_assemble")?];
        let lines = tile[0] * tile[1];
        let spread_group = if point_major {
            1
        } else if cpu {
            4
        } else {
            lines.next_power_of_two().clamp(32, 256)
        };
        Ok(Nufft {
            shape,
            batch,
            points: points.len(),
            kernel,
            lens,
            fine,
            bins,
            bin,
            tile,
            coords,
            order,
            bin_start,
            deconv,
            grid,
            spectrum,
            tiles,
            forward_fft,
            inverse_fft,
            kernels,
            spread_group,
            shared_bytes: if local_tile { tile_bytes } else { std::mem::size_of::<T>() },
            strategy: NufftStrategy {
                width: kernel.width,
                beta: kernel.beta,
                upsampling: kernel.upsampling,
                fine: fine.iter().skip(lead).copied().collect(),
                bins: bins.iter().skip(lead).copied().collect(),
                point_major,
                local_tile,
                series_degree,
                kernel: method,
            },
        })
    }

    /// The image shape `[batch, N…]` the transforms take and give.
    pub fn image_shape(&self) -> Vec<usize> {
        let mut s = vec![self.batch];
        s.extend(&self.shape);
        s
    }

    /// The point values' shape `[batch, points]`.
    pub fn points_shape(&self) -> [usize; 2] {
        [self.batch, self.points]
    }

    /// What the plan chose.
    pub fn strategy(&self) -> NufftStrategy {
        self.strategy.clone()
    }

    /// The kernel in use.
    pub fn kernel(&self) -> SpreadingKernel {
        self.kernel
    }

    /// The fine grid's shape.
    pub fn fine_shape(&self) -> Vec<usize> {
        self.fine.iter().skip(3 - self.shape.len()).copied().collect()
    }

    fn check(what: &str, x: &XData<T>, shape: &[usize]) -> Result<()> {
        if x.shape() != shape {
            return Err(Error::shape(format!("Nufft::{what}"), shape, x.shape()));
        }
        if !x.is_packed() {
            return Err(Error::invalid(
                format!("Nufft::{what}"),
                "the array must be contiguous from its buffer's start (XData::contiguous makes a copy)",
            ));
        }
        Ok(())
    }

    fn u32s(values: [usize; 3]) -> [u32; 3] {
        values.map(|v| v as u32)
    }

    /// Enqueues the type 2 transform (image → points): `image` `[batch, N…]` to `values` `[batch, points]`.
    pub fn forward(&mut self, image: &XData<T>, values: &XData<T>) -> Result<()> {
        Self::check("forward", image, &self.image_shape())?;
        Self::check("forward", values, &self.points_shape())?;
        let [n0, n1, n2] = Self::u32s(self.fine);
        let batch = self.batch as u32;
        let cells = self.batch * self.fine.iter().product::<usize>();
        let [pad, _, interp, _, _] = &mut self.kernels;
        grid_pass(pad, ["image", "fine"], image, &self.deconv, &self.grid, self.batch, self.fine, self.lens, cells)?;
        self.forward_fft.launch()?;
        let beta = T::Real::from_c64(Complex::new(self.kernel.beta, 0.0));
        interp
            .launch()
            .input("fine", &self.spectrum)
            .input("coords", &self.coords)
            .input("order", &self.order)
            .output("out", values)
            .scalar("points", self.points as u32)
            .scalar("batch", batch)
            .scalar("n0", n0)
            .scalar("n1", n1)
            .scalar("n2", n2)
            .scalar("beta", beta)
            .global(&[groups(self.points) * GROUP])
            .local(&[GROUP])
            .enqueue()
    }

    /// Enqueues the type 1 transform (points → image), the adjoint of [`Nufft::forward`]: `values`
    /// `[batch, points]` to `image` `[batch, N…]`.
    pub fn adjoint(&mut self, values: &XData<T>, image: &XData<T>) -> Result<()> {
        Self::check("adjoint", values, &self.points_shape())?;
        Self::check("adjoint", image, &self.image_shape())?;
        let [n0, n1, n2] = Self::u32s(self.fine);
        let [nb0, nb1, nb2] = Self::u32s(self.bins);
        let [b0, b1, b2] = Self::u32s(self.bin);
        let [t0, t1, t2] = Self::u32s(self.tile);
        let batch = self.batch as u32;
        let bins: usize = self.bins.iter().product();
        let beta = T::Real::from_c64(Complex::new(self.kernel.beta, 0.0));
        let taps = 3 * self.kernel.width;
        let real = std::mem::size_of::<T::Real>();
        let (group, shared_bytes) = (self.spread_group, self.shared_bytes);
        let [_, crop, _, spread, assemble] = &mut self.kernels;
        spread
            .launch()
            .input("in", values)
            .input("coords", &self.coords)
            .input("order", &self.order)
            .input("bin_start", &self.bin_start)
            .output("tiles", &self.tiles)
            .scalar("points", self.points as u32)
            .scalar("bins0", nb0)
            .scalar("bins1", nb1)
            .scalar("bins2", nb2)
            .scalar("bin0", b0)
            .scalar("bin1", b1)
            .scalar("bin2", b2)
            .scalar("tile0", t0)
            .scalar("tile1", t1)
            .scalar("tile2", t2)
            .scalar("beta", beta)
            .local_memory("taps", CHUNK * taps * real)
            .local_memory("offsets", CHUNK * 3 * 4)
            .local_memory("values", CHUNK * std::mem::size_of::<T>())
            .local_memory("shared", shared_bytes)
            .global(&[bins * group, self.batch])
            .local(&[group, 1])
            .enqueue()?;
        let cells = self.batch * self.fine.iter().product::<usize>();
        assemble
            .launch()
            .input("tiles", &self.tiles)
            .output("fine", &self.grid)
            .scalar("batch", batch)
            .scalar("n0", n0)
            .scalar("n1", n1)
            .scalar("n2", n2)
            .scalar("bins0", nb0)
            .scalar("bins1", nb1)
            .scalar("bins2", nb2)
            .scalar("bin0", b0)
            .scalar("bin1", b1)
            .scalar("bin2", b2)
            .scalar("tile0", t0)
            .scalar("tile1", t1)
            .scalar("tile2", t2)
            .global(&[groups(cells) * GROUP])
            .local(&[GROUP])
            .enqueue()?;
        self.inverse_fft.launch()?;
        let image_cells = self.batch * self.lens.iter().product::<usize>();
        grid_pass(
            crop,
            ["fine", "image"],
            &self.spectrum,
            &self.deconv,
            image,
            self.batch,
            self.fine,
            self.lens,
            image_cells,
        )
    }
}

/// The taps' Chebyshev series as OpenCL source (`DEGREE` and `nufft_series`); `DEGREE 0` (direct evaluation)
/// when no degree up to 28 reaches the accuracy: a tenth of the kernel's per-axis error budget (the tolerance
/// over 4 per axis, nufft_params.rs), or `e^−β` where that is larger — φ's value at its edge, where its square
/// root makes the series converge slowly, and the order of the kernel's own truncation error.
fn series_source(kernel: &SpreadingKernel, tolerance: f64, dims: usize, double: bool) -> (String, usize) {
    let accuracy = (tolerance / (4.0 * dims as f64) / 10.0).max((-kernel.beta).exp());
    let Some(series) = kernel.chebyshev(accuracy) else {
        return ("#define DEGREE 0\n".into(), 0);
    };
    // float literals in a float program: a double literal would need cl_khr_fp64.
    let suffix = if double { "" } else { "f" };
    let rows: Vec<String> = series
        .iter()
        .map(|row| format!("{{{}}}", row.iter().map(|c| format!("{c:e}{suffix}")).collect::<Vec<_>>().join(", ")))
        .collect();
    let degree = series.len() - 1;
    (format!("#define DEGREE {degree}\nconstant R nufft_series[DEGREE + 1][W] = {{{}}};\n", rows.join(",\n")), degree)
}

/// Points a spread work-group takes at a time (`CHUNK` in kernels/nufft.cl).
const CHUNK: usize = 32;

/// One of the passes between images and the fine grid with the same arguments, `nufft_pad` (image → fine grid,
/// `names` `["image", "fine"]`) or `nufft_crop` (fine grid → image, `["fine", "image"]`), over `items` work-items.
#[allow(clippy::too_many_arguments)]
pub(super) fn grid_pass<T: ComplexElement>(
    kernel: &mut Kernel,
    names: [&str; 2],
    from: &XData<T>,
    factors: &XData<T::Real>,
    to: &XData<T>,
    batch: usize,
    fine: [usize; 3],
    lens: [usize; 3],
    items: usize,
) -> Result<()> {
    let [n0, n1, n2] = fine.map(|v| v as u32);
    let [l0, l1, l2] = lens.map(|v| v as u32);
    kernel
        .launch()
        .input(names[0], from)
        .input("deconv", factors)
        .output(names[1], to)
        .scalar("batch", batch as u32)
        .scalar("n0", n0)
        .scalar("n1", n1)
        .scalar("n2", n2)
        .scalar("len0", l0)
        .scalar("len1", l1)
        .scalar("len2", l2)
        .global(&[groups(items) * GROUP])
        .local(&[GROUP])
        .enqueue()
}

fn groups(items: usize) -> usize {
    items.div_ceil(GROUP).clamp(1, 1 << 16)
}

/// A bin length near which spreading work-groups balance their tile's overhead (the kernel's reach around the
/// bin) against parallelism: CPUs run a group per core and like large bins, GPUs want many groups.
fn bin_target(dims: usize, cpu: bool) -> usize {
    match (dims, cpu) {
        (1, true) => 256,
        (1, false) => 64,
        (2, true) => 32,
        (2, false) => 16,
        _ => 16,
    }
}

/// The smallest divisor of `n` that is at least `at_least` (`n` itself when none is).
fn bin_length(n: usize, at_least: usize) -> usize {
    (at_least.max(1)..n).find(|&b| n.is_multiple_of(b)).unwrap_or(n)
}

fn pad_one<V: Copy + Default>(mut v: Vec<V>) -> Vec<V> {
    if v.is_empty() {
        v.push(V::default());
    }
    v
}

/// Values per point and axis in `coords` (kernels/nufft.cl's `COORD_STRIDE`): the first tap's cell and its offset
/// from the point, and with BART's kernel the first and last tap its grid keeps.
fn coord_stride(method: NufftKernel) -> usize {
    match method {
        NufftKernel::ExpSemicircle => 2,
        NufftKernel::Bart { .. } => 4,
    }
}

/// Points sorted by bin: per axis their first tap's cell and its offset from the point (and BART's kept taps:
/// [`coord_stride`]), their original indices, and each bin's first sorted point (one past the end last).
struct SortedPoints {
    coords: Vec<f64>,
    order: Vec<u32>,
    bin_start: Vec<u32>,
}

/// Counting sort of the points by bin (stable: a bin's points keep the caller's order), so the transform's sums
/// run in one fixed order.
fn sort_points(
    points: &NufftPoints,
    width: usize,
    fine: &[usize; 3],
    bin: &[usize; 3],
    bins: &[usize; 3],
    method: NufftKernel,
) -> Result<SortedPoints> {
    let dims = points.shape().len();
    let stride = coord_stride(method);
    let lead = 3 - dims;
    let total_bins: usize = bins.iter().product();
    let mut fine_coords = Vec::with_capacity(stride * points.coords().len());
    let mut bin_of = Vec::with_capacity(points.len());
    for point in points.coords().chunks_exact(dims) {
        let mut flat = 0usize;
        for a in 0..3 {
            let (n_fine, b_len, nb) = (
                fine.get(a).copied().unwrap_or(1),
                bin.get(a).copied().unwrap_or(1),
                bins.get(a).copied().unwrap_or(1),
            );
            let c = if a < lead {
                0
            } else {
                let d = a - lead;
                let (k, len) = (point.get(d).copied().unwrap_or(0.0), points.shape().get(d).copied().unwrap_or(1));
                let x = (k * n_fine as f64 / len as f64).rem_euclid(n_fine as f64);
                // rem_euclid may round up to n itself.
                let x = if x >= n_fine as f64 { 0.0 } else { x };
                let first = (x - width as f64 / 2.0).ceil();
                fine_coords.push(first);
                fine_coords.push(first - x);
                if let NufftKernel::Bart { periodic } = method {
                    let (lo, hi) = bart_kernel::kept_taps(k, x, first, len, periodic);
                    fine_coords.push(lo);
                    fine_coords.push(hi);
                }
                ((x / b_len as f64).floor() as usize).min(nb - 1)
            };
            flat = flat * nb + c;
        }
        bin_of.push(flat);
    }
    let mut bin_start = vec![0u32; total_bins + 1];
    for &b in &bin_of {
        if let Some(c) = bin_start.get_mut(b + 1) {
            *c += 1;
        }
    }
    for i in 1..bin_start.len() {
        let previous = bin_start.get(i - 1).copied().unwrap_or(0);
        if let Some(c) = bin_start.get_mut(i) {
            *c += previous;
        }
    }
    let mut next = bin_start.clone();
    let mut order = vec![0u32; bin_of.len()];
    let mut coords = vec![0.0; fine_coords.len()];
    for (i, &b) in bin_of.iter().enumerate() {
        let slot = next.get_mut(b).ok_or_else(|| Error::invalid("Nufft", "a point's bin is out of range"))?;
        let at = *slot as usize;
        *slot += 1;
        if let Some(o) = order.get_mut(at) {
            *o = i as u32;
        }
        let pair = stride * dims;
        if let (Some(to), Some(from)) =
            (coords.get_mut(at * pair..(at + 1) * pair), fine_coords.get(i * pair..(i + 1) * pair))
        {
            to.copy_from_slice(from);
        }
    }
    Ok(SortedPoints { coords, order, bin_start })
}

/// The per-axis factors `1/φ̂(r)` for each image index (`r = i − ⌊N/2⌋`), the three axes one after the other,
/// with `1/√ΠN` folded into the first. BART's kernel: its roll-off correction over 2 per axis (BART's grid is the
/// unitary DFT of size 2N times √½ per axis, nufft.c's `scx`).
fn deconvolution(
    kernel: &SpreadingKernel,
    method: NufftKernel,
    lens: &[usize; 3],
    fine: &[usize; 3],
    dims: usize,
) -> Vec<f64> {
    let rule = kernel.quadrature();
    let scale = 1.0 / (lens.iter().product::<usize>() as f64).sqrt();
    let mut out = Vec::with_capacity(lens.iter().sum());
    for (a, (&len, &n)) in lens.iter().zip(fine).enumerate() {
        let active = a >= 3 - dims;
        for i in 0..len {
            let r = i as f64 - (len / 2) as f64;
            let f = match (active, method) {
                (false, _) => 1.0,
                (true, NufftKernel::ExpSemicircle) => 1.0 / kernel.fourier(r, n, &rule),
                (true, NufftKernel::Bart { .. }) => bart_kernel::rolloff(i, len) / 2.0,
            };
            out.push(if a == 0 { f * scale } else { f });
        }
    }
    out
}
