//! [`SenseOperator`]: the Cartesian SENSE operator `A = M · F_c · S` and its adjoint on the device, the building
//! block of iterative reconstructions ([`super::CgSense`]) and of a researcher's own.

use crate::app::Kernel;
use crate::data::XData;
use crate::element::{ComplexElement, Element};
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::Process;
use crate::process::fft::{Fft, FftNorm, FftParams};
use crate::process::solve::LinearOperator;

/// How the mask step weights k-space, as `kernels/mri.cl` numbers the modes.
#[derive(Clone, Copy)]
enum Weight {
    Forward = 0,
    Adjoint = 1,
    Normal = 2,
}

/// The per-position passes of the operator.
#[derive(Clone, Copy)]
enum Pass {
    /// Maps times the modulated image, per coil.
    Expand,
    /// The sampling pattern's weight (with the modulation, for the forward and adjoint steps).
    Weight(Weight),
    /// The conjugate maps' sum over the coils, demodulated.
    Combine,
}

/// The Cartesian SENSE operator of one frame: `A x = √W · F_c(S · x)` for an image `x` (1 to 3 spatial axes),
/// with sensitivity maps `S` (`[coils, spatial…]`), a real sampling pattern `W` (`[spatial…]`, weights ≥ 0; all
/// ones when none is given) and `F_c` the centred unitary DFT over the spatial axes — numpy's
/// `fftshift(fftn(ifftshift(y), norm="ortho"))`, BART's `fftuc`. [`SenseOperator::adjoint`] is
/// `Aᴴ k = Sᴴ F_cᴴ(√W · k)` (the coil images combined with the conjugate maps), and as a [`LinearOperator`] it
/// applies the normal operator `AᴴA = Sᴴ F_cᴴ W F_c S`, which is what [`crate::ConjugateGradient`] and
/// [`super::CgSense`] solve with. The pattern enters `AᴴA` once, as in BART's `pics`; for a 0/1 mask `√W = W`.
///
/// The centring is two modulations around a plain FFT (no shift passes): `forward` is three passes over the coil
/// images and one batched FFT; `AᴴA` five passes and two FFTs. Arrays must be packed ([`XData::is_packed`]).
///
/// ```
/// use cliper::{SenseOperator, XData};
/// use num_complex::Complex32 as C;
/// let app = cliper::ClApp::new()?;
/// // One coil of sensitivity 1 and no mask: A is the centred unitary DFT; a centred delta has a flat spectrum.
/// let maps = XData::from_slice(&app, &[1, 4, 4], &[C::new(1.0, 0.0); 16])?;
/// let mut a = SenseOperator::new(&maps, None)?;
/// let mut x = vec![C::new(0.0, 0.0); 16];
/// x[2 * 4 + 2] = C::new(4.0, 0.0);
/// let k = XData::zeros(&app, &[1, 4, 4])?;
/// a.forward(&XData::from_slice(&app, &[4, 4], &x)?, &k)?;
/// assert!(k.to_vec()?.iter().all(|v| (v - C::new(1.0, 0.0)).norm() < 1e-6));
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct SenseOperator<T: ComplexElement> {
    maps: XData<T>,
    mask: XData<T::Real>,
    coils: usize,
    spatial: Vec<usize>,
    /// Frames share the maps: images `[frames…, spatial…]`, k-space `[frames…, coils, spatial…]`.
    frames: usize,
    /// 1 when one pattern serves every frame, else `frames`.
    mask_frames: usize,
    image_shape: Vec<usize>,
    kspace_shape: Vec<usize>,
    a: XData<T>,
    b: XData<T>,
    forward_fft: Fft<T>,
    inverse_fft: Fft<T>,
    /// expand, weight, combine, pattern.
    kernels: [Kernel; 4],
    index: IndexType,
    extents: [u32; 3],
}

const GROUP: usize = 256;

impl<T: ComplexElement> SenseOperator<T> {
    /// The operator of maps `[coils, spatial…]` (1 to 3 spatial axes) and a mask `[spatial…]` (or none: every
    /// sample taken). Allocates two coil-image buffers and plans the FFTs.
    pub fn new(maps: &XData<T>, mask: Option<&XData<T::Real>>) -> Result<SenseOperator<T>> {
        Self::with_frames(maps, mask, &[])
    }

    /// The operator of a batch of frames (`frame_shape`, e.g. `[time]`; `[]` is [`SenseOperator::new`]) sharing
    /// the maps: images `[frames…, spatial…]` to k-space `[frames…, coils, spatial…]`, one block per frame — as
    /// BART's `pics` treats the dimensions past the coils. The mask is `[spatial…]` (every frame) or
    /// `[frames…, spatial…]`; without one every sample is taken (and [`SenseOperator::mask_from`] infers one per
    /// frame).
    ///
    /// ```
    /// use cliper::{SenseOperator, XData};
    /// use num_complex::Complex32 as C;
    /// let app = cliper::ClApp::new()?;
    /// let maps = XData::from_slice(&app, &[1, 4, 4], &[C::new(1.0, 0.0); 16])?;
    /// let a = SenseOperator::with_frames(&maps, None, &[3])?;
    /// assert_eq!((a.image_shape(), a.kspace_shape()), (&[3, 4, 4][..], &[3, 1, 4, 4][..]));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn with_frames(
        maps: &XData<T>,
        mask: Option<&XData<T::Real>>,
        frame_shape: &[usize],
    ) -> Result<SenseOperator<T>> {
        let op = "SenseOperator";
        let Some((&coils, spatial)) = maps.shape().split_first().filter(|(_, s)| (1..=3).contains(&s.len())) else {
            return Err(Error::invalid(
                op,
                format!("maps must be [coils, spatial…] with 1 to 3 spatial axes; got shape {:?}", maps.shape()),
            ));
        };
        if !maps.is_packed() {
            return Err(Error::invalid(
                op,
                "the maps must be contiguous from its buffer's start (XData::contiguous makes a copy)",
            ));
        }
        let app = maps.app();
        let frames: usize = frame_shape.iter().product();
        if frames == 0 {
            return Err(Error::invalid(op, format!("frames {frame_shape:?}: a batch needs at least one frame")));
        }
        let per_frame: Vec<usize> = frame_shape.iter().chain(spatial).copied().collect();
        let mask = match mask {
            Some(m) if m.shape() != spatial && m.shape() != per_frame.as_slice() => {
                return Err(Error::shape_because(
                    op,
                    &per_frame,
                    m.shape(),
                    "a mask of the maps' spatial shape, for every frame or one per frame",
                ));
            }
            Some(m) if !m.is_packed() => {
                return Err(Error::invalid(
                    op,
                    "the mask must be contiguous from its buffer's start (XData::contiguous makes a copy)",
                ));
            }
            Some(m) => m.clone(),
            None => {
                let ones = vec![T::Real::from_c64(num_complex::Complex::new(1.0, 0.0)); per_frame.iter().product()];
                XData::from_slice(app, &per_frame, &ones)?
            }
        };
        let mask_frames = if mask.len() == spatial.iter().product::<usize>() { 1 } else { frames };
        let mut extents = [1u32; 3];
        for (slot, &n) in extents.iter_mut().skip(3 - spatial.len()).zip(spatial) {
            *slot = u32::try_from(n).map_err(|_| Error::invalid(op, format!("an axis of {n} is too long")))?;
        }
        let kspace_shape: Vec<usize> = frame_shape.iter().chain(maps.shape()).copied().collect();
        let a = XData::uninit(app, op, &kspace_shape)?;
        let b = XData::uninit(app, op, &kspace_shape)?;
        let first = frame_shape.len() + 1;
        let axes: Vec<usize> = (first..first + spatial.len()).collect();
        let mut forward_fft = Fft::new(&a, &b, FftParams::forward().axes(&axes).norm(FftNorm::Ortho));
        let mut inverse_fft = Fft::new(&a, &b, FftParams::inverse().axes(&axes).norm(FftNorm::Ortho));
        forward_fft.init()?;
        inverse_fft.init()?;
        let index = IndexType::for_extent(a.len() as u64);
        let options = format!("{} -DIDX={}", T::build_options(), index.cl_type());
        let program = app.build_program("mri.cl", &kernels::with_common(kernels::MRI), &options)?;
        let kernel = |name: &str| program.kernel(name).map(|k| k.owned_by(op));
        let kernels =
            [kernel("sense_expand")?, kernel("sense_weight")?, kernel("sense_combine")?, kernel("sense_pattern")?];
        Ok(SenseOperator {
            maps: maps.clone(),
            mask,
            coils,
            spatial: spatial.to_vec(),
            frames,
            mask_frames,
            image_shape: per_frame,
            kspace_shape,
            a,
            b,
            forward_fft,
            inverse_fft,
            kernels,
            index,
            extents,
        })
    }

    /// The image shape `[frames…, spatial…]` (the maps' spatial axes for one frame).
    pub fn image_shape(&self) -> &[usize] {
        &self.image_shape
    }

    /// The k-space shape `[frames…, coils, spatial…]`.
    pub fn kspace_shape(&self) -> &[usize] {
        &self.kspace_shape
    }

    /// The coils.
    pub fn coils(&self) -> usize {
        self.coils
    }

    /// Frames in the batch (1 for [`SenseOperator::new`]).
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// One frame's image shape (the maps' spatial axes).
    pub fn spatial_shape(&self) -> &[usize] {
        &self.spatial
    }

    /// The forward FFT's plan over the coil images.
    pub fn fft_strategy(&self) -> Option<crate::process::fft::FftStrategy> {
        self.forward_fft.strategy()
    }

    /// The sampling pattern in use (`[spatial…]` or `[frames…, spatial…]`, real weights).
    pub fn mask(&self) -> &XData<T::Real> {
        &self.mask
    }

    fn positions(&self) -> usize {
        self.spatial.iter().product()
    }

    fn check(what: &str, x: &XData<T>, shape: &[usize]) -> Result<()> {
        if x.shape() != shape {
            return Err(Error::shape(format!("SenseOperator::{what}"), shape, x.shape()));
        }
        if !x.is_packed() {
            return Err(Error::invalid(
                format!("SenseOperator::{what}"),
                "the array must be contiguous from its buffer's start (XData::contiguous makes a copy)",
            ));
        }
        Ok(())
    }

    /// One of the per-position kernels over `[frames, coils, P]`: `input` and the maps or the mask, then
    /// `output`, then the sizes (and the weight step's mode).
    fn pass(&mut self, which: Pass, input: &XData<T>, output: &XData<T>) -> Result<()> {
        let (idx, coils, positions) = (self.index, self.coils as u64, self.positions() as u64);
        let frames = self.frames as u64;
        let [n0, n1, n2] = self.extents;
        let groups = (positions as usize * self.frames).div_ceil(GROUP).clamp(1, 1 << 16);
        let element = std::mem::size_of::<T>() as u64;
        let [expand, weight, combine, _] = &mut self.kernels;
        let launch = match which {
            Pass::Expand => expand.launch().input("x", input).input("s", &self.maps),
            Pass::Weight(_) => weight.launch().input("in", input).input("mask", &self.mask),
            Pass::Combine => combine.launch().input("in", input).input("s", &self.maps),
        };
        let launch = launch
            .output("out", output)
            .index("coils", idx, coils)
            .index("positions", idx, positions)
            .index("frames", idx, frames);
        let launch = match which {
            Pass::Weight(_) => launch.index("mask_frames", idx, self.mask_frames as u64),
            _ => launch,
        };
        let launch = launch.scalar("n0", n0).scalar("n1", n1).scalar("n2", n2);
        let launch = match which {
            Pass::Weight(mode) => launch.scalar("mode", mode as u32),
            _ => launch,
        };
        launch
            .global(&[groups * GROUP])
            .local(&[GROUP])
            .work(3 * frames * coils * positions * element, 8 * frames * coils * positions)
            .enqueue()
    }

    /// Enqueues `k = A x`: x `[frames…, spatial…]` to k-space `[frames…, coils, spatial…]`.
    pub fn forward(&mut self, x: &XData<T>, k: &XData<T>) -> Result<()> {
        Self::check("forward", x, &self.image_shape)?;
        Self::check("forward", k, &self.kspace_shape)?;
        let (a, b) = (self.a.clone(), self.b.clone());
        self.pass(Pass::Expand, x, &a)?;
        self.forward_fft.launch()?;
        self.pass(Pass::Weight(Weight::Forward), &b, k)
    }

    /// Enqueues `x = Aᴴ k`: k-space `[frames…, coils, spatial…]` to an image `[frames…, spatial…]`.
    pub fn adjoint(&mut self, k: &XData<T>, x: &XData<T>) -> Result<()> {
        Self::check("adjoint", k, &self.kspace_shape)?;
        Self::check("adjoint", x, &self.image_shape)?;
        let (a, b) = (self.a.clone(), self.b.clone());
        self.pass(Pass::Weight(Weight::Adjoint), k, &a)?;
        self.inverse_fft.launch()?;
        self.pass(Pass::Combine, &b, x)
    }

    /// Enqueues `out = AᴴA x`.
    pub fn normal(&mut self, x: &XData<T>, out: &XData<T>) -> Result<()> {
        Self::check("normal", x, &self.image_shape)?;
        Self::check("normal", out, &self.image_shape)?;
        let (a, b) = (self.a.clone(), self.b.clone());
        self.pass(Pass::Expand, x, &a)?;
        self.forward_fft.launch()?;
        self.pass(Pass::Weight(Weight::Normal), &b, &a)?;
        self.inverse_fft.launch()?;
        self.pass(Pass::Combine, &b, out)
    }

    /// Enqueues `mask = 1 where any coil of k (`[frames…, coils, spatial…]`) is not 0, else 0` — the sampling
    /// pattern of zero-filled k-space, as BART's `pics` infers it, per frame — into the operator's own mask (one
    /// per frame: an operator made without a mask has one).
    pub fn mask_from(&mut self, k: &XData<T>) -> Result<()> {
        Self::check("mask_from", k, &self.kspace_shape)?;
        if self.mask_frames != self.frames {
            return Err(Error::invalid(
                "SenseOperator::mask_from",
                "the operator was given one mask for every frame; make it without a mask to infer one per frame",
            ));
        }
        let (idx, coils, positions) = (self.index, self.coils as u64, self.positions() as u64);
        let groups = (positions as usize * self.frames).div_ceil(GROUP).clamp(1, 1 << 16);
        let [_, _, _, pattern] = &mut self.kernels;
        pattern
            .launch()
            .input("k", k)
            .output("mask", &self.mask)
            .index("coils", idx, coils)
            .index("positions", idx, positions)
            .index("frames", idx, self.frames as u64)
            .global(&[groups * GROUP])
            .local(&[GROUP])
            .enqueue()
    }
}

impl<T: ComplexElement> LinearOperator<T> for SenseOperator<T> {
    fn apply(&mut self, x: &XData<T>, out: &XData<T>) -> Result<()> {
        self.normal(x, out)
    }
}
