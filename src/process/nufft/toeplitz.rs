//! [`NufftNormal`]: the normal operator `AᴴWA` of a NUFFT as a convolution on a grid twice the image's size (the
//! Toeplitz embedding), so iterations transform no points.

use super::nufft_params::{NufftKernel, NufftParams};
use super::points::NufftPoints;
use super::transform::{Nufft, grid_pass};
use crate::app::{ClApp, Kernel};
use crate::data::XData;
use crate::element::{ComplexElement, Element};
use crate::error::{Error, Result};
use crate::kernels;
use crate::process::Process;
use crate::process::fft::{Fft, FftNorm, FftParams};
use num_complex::Complex;

const GROUP: usize = 256;

/// `AᴴWA` for the [`Nufft`] `A` of `points` (BART's scaling, 1/√N each way) and real weights `W` per point (all
/// ones when none are given): `(AᴴWA x)[r] = Σ_r' x[r'] · p[r − r']` with the point-spread function
/// `p[q] = (1/N) Σ_m W_m exp(2πi k_m·q/N)` for `q` in `(−N, N)` per axis. `p` is computed once, by a type 1
/// transform onto the doubled grid at points `2k`, and kept as its spectrum there; then each application is a
/// zero-padded FFT of size `2N` per axis, a product and an inverse FFT (BART's `nufft` Toeplitz mode, on by
/// default in `bart nufft -i` and `pics -t`). Batches `[batch, N…]` share the one spectrum.
///
/// Its accuracy is the setup transform's: the spectrum is computed at a tenth of `params`' tolerance (at
/// least 1e-6 in complex64).
///
/// ```
/// use cliper::{ClApp, Nufft, NufftNormal, NufftParams, NufftPoints, XData};
/// use num_complex::Complex64 as C;
/// let app = ClApp::new()?;
/// let points = NufftPoints::new(&[6, 7], vec![0.3, -1.2, 2.5, 2.9, -3.0, 0.0, 1.0, 1.0])?;
/// let params = NufftParams::default().tolerance(1e-9);
/// let x: Vec<C> = (0..42).map(|i| C::new((i % 5) as f64, (i % 3) as f64 - 1.0)).collect();
/// let x = XData::from_slice(&app, &[1, 6, 7], &x)?;
/// // AᴴA x through the points against the Toeplitz product.
/// let mut a = Nufft::<C>::new(&app, &points, 1, params)?;
/// let (y, direct) = (XData::zeros(&app, &[1, 4])?, XData::zeros(&app, &[1, 6, 7])?);
/// a.forward(&x, &y)?;
/// a.adjoint(&y, &direct)?;
/// let mut normal = NufftNormal::<C>::new(&app, &points, 1, None, params)?;
/// let toeplitz = XData::zeros(&app, &[1, 6, 7])?;
/// normal.apply(&x, &toeplitz)?;
/// let (d, t) = (direct.to_vec()?, toeplitz.to_vec()?);
/// assert!(d.iter().zip(&t).all(|(a, b)| (a - b).norm() < 1e-7));
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct NufftNormal<T: ComplexElement> {
    shape: Vec<usize>,
    batch: usize,
    /// The doubled grid seen as 3-D, and the image.
    grid: [usize; 3],
    lens: [usize; 3],
    ones: XData<T::Real>,
    transfer: XData<T>,
    padded: XData<T>,
    spectrum: XData<T>,
    forward_fft: Fft<T>,
    inverse_fft: Fft<T>,
    /// pad, crop, multiply.
    kernels: [Kernel; 3],
}

impl<T: ComplexElement> NufftNormal<T> {
    /// The normal operator of `points` with `weights` (one per point, or all ones), for a batch of `batch` images.
    pub fn new(
        app: &ClApp,
        points: &NufftPoints,
        batch: usize,
        weights: Option<&[f64]>,
        params: NufftParams,
    ) -> Result<NufftNormal<T>> {
        let op = "NufftNormal";
        if batch == 0 {
            return Err(Error::invalid(op, "the batch must hold at least one image"));
        }
        let shape = points.shape().to_vec();
        let dims = shape.len();
        let m = points.len();
        let weights: Vec<f64> = match weights {
            Some(w) if w.len() != m => {
                return Err(Error::invalid(op, format!("{} weights for {m} points", w.len())));
            }
            Some(w) if w.iter().any(|v| !v.is_finite()) => {
                return Err(Error::invalid(op, "the weights must be finite"));
            }
            Some(w) => w.to_vec(),
            None => vec![1.0; m],
        };
        // The point-spread function on the doubled grid: a type 1 transform at 2k, rescaled from the doubled
        // grid's 1/√(2^d N) to 1/N.
        let doubled: Vec<usize> = shape.iter().map(|n| 2 * n).collect();
        let twice = NufftPoints::new(&doubled, points.coords().iter().map(|k| 2.0 * k).collect())?;
        let floor = if T::IS_DOUBLE { 1e-14 } else { 1e-6 };
        let setup = params.tolerance((params.tolerance_value() / 10.0).max(floor));
        // BART grids its point-spread function on a periodic grid (nufft.c's compute_psf2 call), unlike its transforms.
        let setup = match params.kernel_value() {
            NufftKernel::Bart { .. } => setup.kernel(NufftKernel::Bart { periodic: true }),
            NufftKernel::ExpSemicircle => setup,
        };
        let mut psf_plan = Nufft::<T>::new(app, &twice, 1, setup)?;
        let values: Vec<T> = weights.iter().map(|&w| T::from_c64(Complex::new(w, 0.0))).collect();
        let values = XData::from_slice(
            app,
            &[1, m.max(1)],
            &if m == 0 { vec![T::from_c64(Complex::new(0.0, 0.0))] } else { values },
        )?;
        let mut grid_shape = vec![1];
        grid_shape.extend(&doubled);
        let psf = XData::<T>::zeros(app, &grid_shape)?;
        if m > 0 {
            psf_plan.adjoint(&values, &psf)?;
        }
        let total: usize = shape.iter().product();
        let rescale = (((1usize << dims) * total) as f64).sqrt() / total as f64;
        // Centred (index i holds q = i − N) to FFT order (q mod 2N): a roll by N per axis, on the host, once.
        let centred = psf.to_vec()?;
        let rolled = roll_half(&centred, &doubled, rescale);
        let psf = XData::from_slice(app, &grid_shape, &rolled)?;
        let transfer = XData::<T>::uninit(app, op, &grid_shape)?;
        Fft::new(&psf, &transfer, FftParams::forward()).run()?;
        let lead = 3 - dims;
        let mut grid = [1usize; 3];
        let mut lens = [1usize; 3];
        for (d, (&n, &n2)) in shape.iter().zip(&doubled).enumerate() {
            if let (Some(g), Some(l)) = (grid.get_mut(lead + d), lens.get_mut(lead + d)) {
                *g = n2;
                *l = n;
            }
        }
        let ones = XData::from_slice(
            app,
            &[lens.iter().sum()],
            &vec![T::Real::from_c64(Complex::new(1.0, 0.0)); lens.iter().sum()],
        )?;
        let mut batch_shape = vec![batch];
        batch_shape.extend(&doubled);
        let padded = XData::uninit(app, op, &batch_shape)?;
        let spectrum = XData::uninit(app, op, &batch_shape)?;
        let axes: Vec<usize> = (1..=dims).collect();
        let mut forward_fft = Fft::new(&padded, &spectrum, FftParams::forward().axes(&axes));
        let mut inverse_fft = Fft::new(&spectrum, &padded, FftParams::inverse().axes(&axes).norm(FftNorm::Backward));
        forward_fft.init()?;
        inverse_fft.init()?;
        let options =
            format!("{} -DDIM={dims} -DW=2 -DMARGIN=1 -DPOINT_MAJOR=0 -DLOCAL_TILE=0 -DDEGREE=0", T::build_options());
        let program = app.build_program("nufft.cl", &kernels::with_common(kernels::NUFFT), &options)?;
        let k = |name: &str| program.kernel(name).map(|k| k.owned_by(op));
        let kernels = [k("nufft_pad")?, k("nufft_crop")?, k("nufft_multiply")?];
        Ok(NufftNormal {
            shape,
            batch,
            grid,
            lens,
            ones,
            transfer,
            padded,
            spectrum,
            forward_fft,
            inverse_fft,
            kernels,
        })
    }

    /// The image shape `[batch, N…]`.
    pub fn image_shape(&self) -> Vec<usize> {
        let mut s = vec![self.batch];
        s.extend(&self.shape);
        s
    }

    /// Enqueues `out = AᴴWA x` for `x`, `out` of [`NufftNormal::image_shape`] (contiguous).
    pub fn apply(&mut self, x: &XData<T>, out: &XData<T>) -> Result<()> {
        let shape = self.image_shape();
        for a in [x, out] {
            if a.shape() != shape {
                return Err(Error::shape("NufftNormal::apply", &shape, a.shape()));
            }
            if !a.is_packed() {
                return Err(Error::invalid(
                    "NufftNormal::apply",
                    "the arrays must be contiguous from its buffer's start (XData::contiguous makes a copy)",
                ));
            }
        }
        let batch = self.batch as u32;
        let cells: usize = self.grid.iter().product();
        let image_cells = self.batch * self.lens.iter().product::<usize>();
        let [pad, crop, multiply] = &mut self.kernels;
        grid_pass(
            pad,
            ["image", "fine"],
            x,
            &self.ones,
            &self.padded,
            self.batch,
            self.grid,
            self.lens,
            self.batch * cells,
        )?;
        self.forward_fft.launch()?;
        multiply
            .launch()
            .in_out("spectrum", &self.spectrum)
            .input("transfer", &self.transfer)
            .scalar("batch", batch)
            .scalar("cells", cells as u32)
            .global(&[groups(self.batch * cells) * GROUP])
            .local(&[GROUP])
            .enqueue()?;
        self.inverse_fft.launch()?;
        grid_pass(crop, ["fine", "image"], &self.padded, &self.ones, out, self.batch, self.grid, self.lens, image_cells)
    }
}

fn groups(items: usize) -> usize {
    items.div_ceil(GROUP).clamp(1, 1 << 16)
}

/// `values` (row-major over `shape`, index i ↔ q = i − n/2 per axis, n even) rolled so that q sits at q mod n,
/// each multiplied by `scale`.
fn roll_half<T: Element>(values: &[T], shape: &[usize], scale: f64) -> Vec<T> {
    let mut out = values.to_vec();
    let total = values.len();
    for (i, v) in values.iter().enumerate() {
        let (mut rest, mut target, mut stride) = (i, 0usize, 1usize);
        for &n in shape.iter().rev() {
            let c = rest % n;
            rest /= n;
            target += ((c + n / 2) % n) * stride;
            stride *= n;
        }
        if let Some(o) = out.get_mut(target.min(total.saturating_sub(1))) {
            *o = T::from_c64(v.to_c64() * scale);
        }
    }
    out
}
