//! [`WaveletThreshold`]: the proximal map of `θ·|W x|₁` for the Daubechies-2 transform `W` — analysis, soft
//! threshold of every coefficient, synthesis — with BART's cycle spinning (random circular shifts of the image
//! around the transform, drawn as `pics` draws them), the prox of `pics -l1`.

use super::plan::WaveletPlan;
use super::transform::MIN_SIZE;
use crate::app::{ClApp, Kernel};
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::process::solve::Proximal;
use num_complex::Complex;

/// The shifts BART's wavelet threshold draws: glibc's `rand_r` from state 1, one draw per wavelet axis per call,
/// each uniform in `0..=2^(splits + 1)` by rejection (`pics` without `-n`).
///
/// ```
/// let mut shifts = cliper::BartShifts::new();
/// // A 128 × 128 image splits each axis 4 times: shifts in 0..=32, BART's first pairs.
/// assert_eq!(shifts.draw(&[4, 4]), vec![7, 18]);
/// assert_eq!(shifts.draw(&[4, 4]), vec![7, 32]);
/// ```
#[derive(Clone, Debug)]
pub struct BartShifts {
    state: u32,
}

impl Default for BartShifts {
    fn default() -> BartShifts {
        BartShifts::new()
    }
}

impl BartShifts {
    /// The sequence from its start (state 1).
    pub fn new() -> BartShifts {
        BartShifts { state: 1 }
    }

    /// glibc's `rand_r`: three steps of its linear congruential generator, 11 + 10 + 10 bits.
    fn rand_r(&mut self) -> u32 {
        let mut next = self.state;
        let mut step = || {
            next = next.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            next / 65_536
        };
        let mut result = step() % 2048;
        result = (result << 10) ^ (step() % 1024);
        result = (result << 10) ^ (step() % 1024);
        self.state = next;
        result
    }

    /// Uniform in `0..=limit` by rejection, as BART's `rand_lim`.
    fn below_or_equal(&mut self, limit: u32) -> u32 {
        let divisor = 2_147_483_647 / (limit + 1);
        loop {
            let r = self.rand_r() / divisor;
            if r <= limit {
                return r;
            }
        }
    }

    /// One shift per axis with `splits` > 0 (in axis order), for axes split that many times; 0 for the others.
    pub fn draw(&mut self, splits: &[usize]) -> Vec<usize> {
        splits.iter().map(|&s| if s == 0 { 0 } else { self.below_or_equal(1 << (s + 1).min(30)) as usize }).collect()
    }
}

/// `out = Wᴴ⁺ soft_θ(W x)` — the Daubechies-2 analysis ([`super::Wavelet`], BART's levels), the complex soft
/// threshold `c · max(|c| − θ, 0) / |c|` of every coefficient (the coarsest band too), and the synthesis — with
/// the image rolled by shifts drawn by [`BartShifts`] before and back after, when cycle spinning is on (BART's
/// default; `pics -n` turns it off). As a [`Proximal`], iteration 0 restarts the shift sequence, so that a solve
/// repeats BART's draws from the start.
///
/// ```
/// use cliper::{Proximal, WaveletThreshold, XData};
/// let app = cliper::ClApp::new()?;
/// // A constant image has one non-zero coefficient band (the coarsest); a tiny threshold keeps it nearly intact.
/// let x = XData::from_slice(&app, &[20, 20], &[1.0f64; 400])?;
/// let out = XData::zeros(&app, &[20, 20])?;
/// WaveletThreshold::new(&app, &[20, 20], 1e-9, false)?.apply(&x, &out, 0)?;
/// assert!(out.to_vec()?.iter().all(|v| (v - 1.0).abs() < 1e-8));
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct WaveletThreshold<T: Element> {
    plan: WaveletPlan<T>,
    shape: [usize; 3],
    /// Images stored one after the other, each transformed on its own with the same shifts (BART's frames).
    frames: usize,
    threshold: f64,
    spin: Option<BartShifts>,
    coefficients: XData<T>,
    rolled: XData<T>,
    /// circular_shift, soft_threshold.
    kernels: [Kernel; 2],
    index: IndexType,
}

const GROUP: usize = 256;

impl<T: Element> WaveletThreshold<T> {
    /// The map for images of `shape` (1 to 3 axes) with threshold `threshold` (θ = λτ in FISTA), cycle spinning as
    /// BART when `spin`.
    pub fn new(app: &ClApp, shape: &[usize], threshold: f64, spin: bool) -> Result<WaveletThreshold<T>> {
        Self::with_frames(app, 1, shape, threshold, spin)
    }

    /// The map for `frames` images of `shape` stored one after the other (`[frames, shape…]`): each frame's own
    /// transform, the same shifts for all, as BART's `pics -l1` treats the dimensions past its wavelet's.
    ///
    /// ```
    /// use cliper::{Proximal, WaveletThreshold, XData};
    /// let app = cliper::ClApp::new()?;
    /// // Three frames, the middle one all zero: it stays zero; the others match the one-frame map.
    /// let frame: Vec<f32> = (0..400).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    /// let x = XData::from_slice(&app, &[3, 20, 20], &[frame.clone(), vec![0.0; 400], frame.clone()].concat())?;
    /// let out = XData::zeros(&app, &[3, 20, 20])?;
    /// WaveletThreshold::with_frames(&app, 3, &[20, 20], 2.0, true)?.apply(&x, &out, 0)?;
    /// let one = XData::zeros(&app, &[20, 20])?;
    /// WaveletThreshold::new(&app, &[20, 20], 2.0, true)?.apply(&XData::from_slice(&app, &[20, 20], &frame)?, &one, 0)?;
    /// let (got, want) = (out.to_vec()?, one.to_vec()?);
    /// assert_eq!((&got[..400], &got[800..]), (&want[..], &want[..]));
    /// assert!(got[400..800].iter().all(|&v| v == 0.0));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn with_frames(
        app: &ClApp,
        frames: usize,
        shape: &[usize],
        threshold: f64,
        spin: bool,
    ) -> Result<WaveletThreshold<T>> {
        if frames == 0 {
            return Err(Error::invalid("WaveletThreshold", "a batch needs at least one frame"));
        }
        if !(threshold.is_finite() && threshold >= 0.0) {
            return Err(Error::invalid("WaveletThreshold", format!("threshold {threshold} must be finite and ≥ 0")));
        }
        let plan = WaveletPlan::new(app, shape, None, MIN_SIZE)?;
        let cells: usize = shape.iter().product();
        // The plan's index type covers one frame; later frames are reached through offsets.
        if plan.index == IndexType::U32 && frames.saturating_mul(plan.coefficients.max(cells)) >= u32::MAX as usize {
            return Err(Error::invalid(
                "WaveletThreshold",
                format!("{frames} frames of {shape:?} are past this map's 32-bit indices"),
            ));
        }
        let batch_shape: Vec<usize> = if frames == 1 { shape.to_vec() } else { [&[frames][..], shape].concat() };
        let mut padded = [1usize; 3];
        for (slot, &n) in padded.iter_mut().skip(3 - shape.len()).zip(shape) {
            *slot = n;
        }
        // The plan's program has these kernels too, compiled for an index type that covers the image and the
        // coefficients.
        let kernel = |name: &str| plan.program.kernel(name).map(|k| k.owned_by("WaveletThreshold"));
        let kernels = [kernel("circular_shift")?, kernel("soft_threshold")?];
        let index = plan.index;
        Ok(WaveletThreshold {
            coefficients: XData::uninit(app, "WaveletThreshold", &[frames, plan.coefficients])?,
            rolled: XData::uninit(app, "WaveletThreshold", &batch_shape)?,
            plan,
            shape: padded,
            frames,
            threshold,
            spin: spin.then(BartShifts::new),
            kernels,
            index,
        })
    }

    fn roll(&mut self, from: &XData<T>, to: &XData<T>, shifts: [usize; 3]) -> Result<()> {
        let [n0, n1, n2] = self.shape;
        let count = n0 * n1 * n2 * self.frames;
        let idx = self.index;
        let groups = count.div_ceil(GROUP).clamp(1, 1 << 16);
        let [shift, _] = &mut self.kernels;
        let launch = shift.launch().input("in", from).output("out", to);
        let launch = launch.index("n0", idx, n0 as u64).index("n1", idx, n1 as u64).index("n2", idx, n2 as u64);
        let [s0, s1, s2] = [shifts[0] % n0, shifts[1] % n1, shifts[2] % n2];
        let launch = launch.index("s0", idx, s0 as u64).index("s1", idx, s1 as u64).index("s2", idx, s2 as u64);
        let launch = launch.index("frames", idx, self.frames as u64);
        launch.global(&[groups * GROUP]).local(&[GROUP]).enqueue()
    }
}

impl<T: Element> WaveletThreshold<T> {
    /// Each frame of `x` (`frames` blocks one after the other) as a view; the plan honours their offsets.
    fn frames_of(&self, x: &XData<T>) -> Result<Vec<XData<T>>> {
        let flat = x.reshape(&[self.frames, x.len() / self.frames])?;
        (0..self.frames).map(|f| flat.index_axis(0, f)).collect()
    }
}

impl<T: Element> Proximal<T> for WaveletThreshold<T> {
    fn apply(&mut self, x: &XData<T>, out: &XData<T>, iteration: usize) -> Result<()> {
        let shifts = match &mut self.spin {
            Some(s) => {
                if iteration == 0 {
                    *s = BartShifts::new();
                }
                let mut splits = [0usize; 3];
                let offset = 3 - self.plan.splits_per_axis.len();
                for (slot, &k) in splits.iter_mut().skip(offset).zip(&self.plan.splits_per_axis) {
                    *slot = k;
                }
                let mut drawn = [0usize; 3];
                for (slot, v) in drawn.iter_mut().zip(s.draw(&splits)) {
                    *slot = v;
                }
                drawn
            }
            None => [0; 3],
        };
        let (coefficients, rolled) = (self.coefficients.clone(), self.rolled.clone());
        let spun = shifts.iter().any(|&s| s != 0);
        let source = if spun {
            self.roll(x, &rolled, shifts)?;
            &rolled
        } else {
            x
        };
        let (images, bands) = (self.frames_of(source)?, self.frames_of(&coefficients)?);
        for (image, band) in images.iter().zip(&bands) {
            self.plan.analyse(image, band)?;
        }
        let count = self.plan.coefficients * self.frames;
        let groups = count.div_ceil(GROUP).clamp(1, 1 << 16);
        let idx = self.index;
        let [_, soft] = &mut self.kernels;
        soft.launch()
            .in_out("x", &coefficients)
            .scalar("theta", T::Real::from_c64(Complex::new(self.threshold, 0.0)))
            .index("count", idx, count as u64)
            .global(&[groups * GROUP])
            .local(&[GROUP])
            .enqueue()?;
        let target = if spun { &rolled } else { out };
        for (band, image) in bands.iter().zip(&self.frames_of(target)?) {
            self.plan.synthesise(band, image)?;
        }
        if spun {
            let mut back = [0usize; 3];
            for ((slot, &n), &shift) in back.iter_mut().zip(&self.shape).zip(&shifts) {
                *slot = n - shift % n;
            }
            self.roll(&rolled, out, back)
        } else {
            Ok(())
        }
    }
}
