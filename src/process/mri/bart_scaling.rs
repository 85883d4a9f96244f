//! [`BartScaling`]: the data scaling BART's `pics` applies by default (no `-w`): k-space divided by an intensity
//! estimated from the image of its fully sampled centre, so that λ means the same on every scan.
//!
//! The steps follow BART 0.8.00's `estimate_scaling` (src/sense/optcom.c) with `extract_calib2` and `calib_geom`
//! (src/misc/mri.c), on the k-space as `pics` holds it (after its `fftmod`); docs/bart-semantics.md §4 writes
//! them out. They run on the host: the calibration block is at most 32 × 32 × 32 samples per coil.

use crate::data::{KData, XData};
use crate::element::{ComplexElement, Element};
use crate::error::{Error, Result};
use crate::process::Process;
use crate::process::elementwise::ScalarMultiply;
use num_complex::Complex64;

/// The largest calibration block BART's scaling estimate looks at, per axis.
const CALIBRATION_LIMIT: usize = 32;

/// BART's default data scaling of one k-space: `s` such that `pics` reconstructs from `y / s` (`pics -w s` sets
/// it instead; `-w 1` turns it off). The image is not scaled back unless asked (`pics -S`).
///
/// The estimate, as BART 0.8.00 computes it:
/// 1. the fully sampled centre: the largest block, grown one sample per axis in turn from the middle (at most
///    32 per axis), whose samples are all taken (a sample is taken where some coil is not 0), then moved along the
///    first axis to where its energy is largest;
/// 2. its image: BART's phase modulation (`fftmod`) at the samples' places in the whole k-space, the inverse FFT
///    over the block, unitary, and the root sum of squares over the coils;
/// 3. of those magnitudes, sorted and divided by √(n/c) per axis (n the k-space's size, c the block's): the
///    median, the 90th percentile and the maximum; `s` is the percentile when `max − p90 < 2 (p90 − median)`,
///    else the maximum (BART prints `!` then). An estimate of 0 (no samples) gives 1, as BART's does.
///
/// With an attached sampling mask the samples are `y · mask`, what a scan delivers (BART reads only the
/// delivered samples); with frames, the first frame is measured, as BART's block is taken at index 0 of the
/// other dimensions. Spatial axes are BART's dimensions 0, 1, 2 in that order (as [`KData::load`] reads CFL).
///
/// ```
/// use cliper::{BartScaling, KData, XData};
/// use num_complex::Complex32 as C;
/// let app = cliper::ClApp::new()?;
/// // One coil, 8 × 8, every sample 2: the block is the whole 8 × 8, its image 16 at the centre and 0 elsewhere.
/// let k = KData::new(XData::from_slice(&app, &[1, 8, 8], &[C::new(2.0, 0.0); 64])?, 2)?;
/// let s = BartScaling::estimate(&k)?;
/// assert_eq!(s.calibration_shape, [8, 8]);
/// // 2 · 64 / √64 at the centre, rounding (~1e-15) elsewhere: the maximum stands out, so it is chosen.
/// assert!(s.median < 1e-9 && s.p90 < 1e-9 && (s.max - 16.0).abs() < 1e-9);
/// assert!(s.scale == s.max && s.chose_max());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BartScaling {
    /// `s`: k-space is divided by it.
    pub scale: f64,
    /// The largest magnitude of the calibration image, rescaled.
    pub max: f64,
    /// Its 90th percentile (the value at index ⌊0.9 n⌋ of the sorted magnitudes), rescaled.
    pub p90: f64,
    /// Its median (index ⌊n / 2⌋), rescaled.
    pub median: f64,
    /// The calibration block's size per spatial axis.
    pub calibration_shape: Vec<usize>,
    /// Where the block starts, per spatial axis (BART prints it as `pos:`).
    pub calibration_position: Vec<usize>,
}

impl BartScaling {
    /// Estimates the scaling of `k` (one or more frames, `[frames…, coils, spatial…]`, one to three spatial
    /// axes) as `bart pics` does without `-w`. Reads the k-space back to the host.
    pub fn estimate<T: ComplexElement>(k: &KData<T>) -> Result<BartScaling> {
        let spatial = k.spatial_shape();
        if spatial.is_empty() || spatial.len() > 3 {
            return Err(Error::invalid(
                "BartScaling",
                format!(
                    "k-space of shape {:?} has {} spatial axes; BART's scaling is defined for 1 to 3",
                    k.as_xdata().shape(),
                    spatial.len()
                ),
            ));
        }
        let grid = Grid::new(spatial, k.num_coils());
        let samples = first_frame_samples(k, &grid)?;
        let (size, position) = calibration_block(&samples, &grid);
        let magnitudes = calibration_image(&samples, &grid, size, position);
        let rescale: f64 = grid.n.iter().zip(size).map(|(&n, c)| (n as f64 / c as f64).sqrt()).product();
        let axes = spatial.len();
        Ok(BartScaling {
            calibration_shape: size.iter().take(axes).copied().collect(),
            calibration_position: position.iter().take(axes).copied().collect(),
            ..Self::from_magnitudes(magnitudes, rescale)
        })
    }

    /// The scaling `bart pics -t` estimates for non-Cartesian data: the same rule (median, 90th percentile,
    /// maximum) over the magnitudes of `image`, the adjoint of the whole forward operator applied to the samples
    /// (BART 0.8.00's pics.c: `linop_adjoint`, then `estimate_scaling_norm`; there is no calibration block).
    ///
    /// ```
    /// use cliper::{BartScaling, XData};
    /// use num_complex::Complex32 as C;
    /// let app = cliper::ClApp::new()?;
    /// let image: Vec<C> = (0..10).map(|i| C::new(i as f32, 0.0)).collect();
    /// let s = BartScaling::from_image(&XData::from_slice(&app, &[10], &image)?)?;
    /// assert_eq!((s.median, s.p90, s.max), (5.0, 9.0, 9.0));
    /// assert_eq!(s.scale, 9.0);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn from_image<T: ComplexElement>(image: &XData<T>) -> Result<BartScaling> {
        let magnitudes = image.to_vec()?.iter().map(|v| v.to_c64().norm()).collect();
        Ok(Self::from_magnitudes(magnitudes, 1.0))
    }

    /// BART's choice among the sorted `magnitudes` (each divided by `rescale`): the 90th percentile unless the
    /// maximum stands out; 1 for an estimate of 0.
    fn from_magnitudes(mut magnitudes: Vec<f64>, rescale: f64) -> BartScaling {
        magnitudes.sort_by(f64::total_cmp);
        let at = |i: usize| magnitudes.get(i).copied().unwrap_or(0.0) / rescale;
        let count = magnitudes.len();
        let (median, p90, max) = (at(count / 2), at((count as f64 * 0.9) as usize), at(count.saturating_sub(1)));
        let estimate = if max - p90 < 2.0 * (p90 - median) { p90 } else { max };
        BartScaling {
            scale: if estimate == 0.0 { 1.0 } else { estimate },
            max,
            p90,
            median,
            calibration_shape: Vec::new(),
            calibration_position: Vec::new(),
        }
    }

    /// Whether the maximum was chosen over the 90th percentile (BART's `!`).
    pub fn chose_max(&self) -> bool {
        self.scale == self.max
    }

    /// `k` with its samples divided by `scale` (a new array; the maps and the mask are shared): what BART's
    /// `pics -w scale` reconstructs from.
    pub fn divide<T: ComplexElement>(k: &KData<T>, scale: f64) -> Result<KData<T>> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(Error::invalid("BartScaling", format!("a data scaling of {scale}; it must be positive")));
        }
        let data = k.as_xdata();
        let scaled = XData::uninit(data.app(), "BartScaling", data.shape())?;
        ScalarMultiply::new(data, &scaled, T::from_c64(Complex64::new(1.0 / scale, 0.0))).run()?;
        let mut out = KData::new(scaled, k.spatial_shape().len())?;
        if let Some(maps) = k.sensitivity_maps() {
            out = out.with_sensitivity_maps(maps.clone())?;
        }
        if let Some(mask) = k.sampling_mask() {
            out = out.with_sampling_mask(mask.clone())?;
        }
        Ok(out)
    }
}

/// The k-space's spatial grid padded to BART's three dimensions (missing ones of size 1), and its coils;
/// samples indexed `[coil, i0, i1, i2]` in row-major order, as cliper holds them.
struct Grid {
    n: [usize; 3],
    coils: usize,
}

impl Grid {
    fn new(spatial: &[usize], coils: usize) -> Grid {
        let mut n = [1; 3];
        n.iter_mut().zip(spatial).for_each(|(n, &s)| *n = s);
        Grid { n, coils }
    }

    fn positions(&self) -> usize {
        self.n.iter().product()
    }

    /// The sample of `coil` at `i` (every index the estimate asks for is inside the grid).
    fn sample(&self, samples: &[Complex64], coil: usize, i: [usize; 3]) -> Complex64 {
        let index = i.iter().zip(self.n).fold(coil, |at, (&i, n)| at * n + i);
        samples.get(index).copied().unwrap_or_default()
    }

    /// Whether some coil has a sample that is not 0 at `i` (BART's `estimate_pattern`).
    fn taken(&self, samples: &[Complex64], i: [usize; 3]) -> bool {
        (0..self.coils).any(|c| self.sample(samples, c, i).norm_sqr() != 0.0)
    }

    /// Σ |y|² over the block of `size` at `position`, every coil.
    fn energy(&self, samples: &[Complex64], size: [usize; 3], position: [usize; 3]) -> f64 {
        let block: Vec<[usize; 3]> = block(size, position).collect();
        (0..self.coils).map(|c| block.iter().map(|&i| self.sample(samples, c, i).norm_sqr()).sum::<f64>()).sum()
    }
}

/// Every index of a block of `size` at `position`, the first axis slowest (row-major).
fn block(size: [usize; 3], position: [usize; 3]) -> impl Iterator<Item = [usize; 3]> {
    let ([s0, s1, s2], [p0, p1, p2]) = (size, position);
    (p0..p0 + s0).flat_map(move |a| (p1..p1 + s1).flat_map(move |b| (p2..p2 + s2).map(move |c| [a, b, c])))
}

/// `a + b`, axis by axis.
fn plus([a0, a1, a2]: [usize; 3], [b0, b1, b2]: [usize; 3]) -> [usize; 3] {
    [a0 + b0, a1 + b1, a2 + b2]
}

/// The first frame's samples `[coils, spatial…]` on the host, multiplied by the attached mask (its first frame).
fn first_frame_samples<T: ComplexElement>(k: &KData<T>, grid: &Grid) -> Result<Vec<Complex64>> {
    let frame = grid.coils * grid.positions();
    let mut samples: Vec<Complex64> = k.as_xdata().to_vec()?.into_iter().take(frame).map(T::to_c64).collect();
    if let Some(mask) = k.sampling_mask() {
        let mask = mask.to_vec()?;
        // Every coil has the same mask: the first frame's positions, over again for each coil.
        for (v, m) in samples.iter_mut().zip(mask.iter().take(grid.positions()).cycle()) {
            *v *= m.to_c64().re;
        }
    }
    Ok(samples)
}

/// BART's `extract_calib2` with a 32-sample limit: the size and the position (in the whole grid) of the fully
/// sampled block the scaling is measured on.
fn calibration_block(samples: &[Complex64], grid: &Grid) -> ([usize; 3], [usize; 3]) {
    // First the centre of (all of axis 0) × (at most 32) × (at most 32), where the block is then grown.
    let [n0, n1, n2] = grid.n;
    let window = [n0, n1.min(CALIBRATION_LIMIT), n2.min(CALIBRATION_LIMIT)];
    let [w0, w1, w2] = window;
    let offset = [0, (n1 - w1) / 2, (n2 - w2) / 2];
    let all_taken = |size, position| block(size, position).all(|i| grid.taken(samples, plus(offset, i)));
    let centred = |size: [usize; 3]| {
        let [s0, s1, s2] = size;
        [(w0 - s0) / 2, (w1 - s1) / 2, (w2 - s2) / 2]
    };
    let mut size = [1; 3];
    let mut stopped = [false; 3];
    // calib_geom: each axis in turn grows by one, centred, until it is the whole window, reaches the limit or
    // takes in a sample that is not taken.
    while !stopped.iter().all(|&s| s) {
        for axis in 0..3 {
            let (Some(&now), Some(&whole), Some(stop)) = (size.get(axis), window.get(axis), stopped.get_mut(axis))
            else {
                continue;
            };
            *stop |= now == whole || now >= CALIBRATION_LIMIT;
            if *stop {
                continue;
            }
            let mut grown = size;
            grown.iter_mut().enumerate().filter(|(a, _)| *a == axis).for_each(|(_, s)| *s += 1);
            if all_taken(grown, centred(grown)) {
                size = grown;
            } else {
                *stop = true;
            }
        }
    }
    // calib_readout_pos: along axis 0, the first place of the largest energy (none above 0: the start).
    let ([s0, _, _], [_, p1, p2]) = (size, centred(size));
    let mut best = (0, 0.0);
    for start in 0..=w0 - s0 {
        let energy = grid.energy(samples, size, plus(offset, [start, p1, p2]));
        if energy > best.1 {
            best = (start, energy);
        }
    }
    (size, plus(offset, [best.0, p1, p2]))
}

/// BART's `rss_combine` of the calibration block as `pics` holds it: each sample times BART's `fftmod` phase at
/// its place in the whole grid, the unitary inverse DFT over the block (not centred), and the root sum of squares
/// over the coils. One magnitude per block position.
fn calibration_image(samples: &[Complex64], grid: &Grid, size: [usize; 3], position: [usize; 3]) -> Vec<f64> {
    let positions: usize = size.iter().product();
    let unitary = 1.0 / positions as f64;
    let mut sum_of_squares = vec![0.0; positions];
    for coil in 0..grid.coils {
        let mut values: Vec<Complex64> =
            block(size, position).map(|i| grid.sample(samples, coil, i) * fftmod_phase(grid.n, i)).collect();
        for axis in 0..3 {
            inverse_dft_along(&mut values, size, axis);
        }
        for (s, v) in sum_of_squares.iter_mut().zip(&values) {
            *s += v.norm_sqr() * unitary;
        }
    }
    sum_of_squares.into_iter().map(f64::sqrt).collect()
}

/// The part of BART's `fftmod` phase that varies with the index: `exp(2πi · j · ⌊n/2⌋ / n)` per axis (`(−1)^j`
/// for even `n`); the constant part does not change a magnitude.
fn fftmod_phase(n: [usize; 3], i: [usize; 3]) -> Complex64 {
    n.iter().zip(i).map(|(&n, j)| unit_root((j * (n / 2)) % n, n)).product()
}

/// `exp(2πi · k / m)`.
fn unit_root(k: usize, m: usize) -> Complex64 {
    Complex64::from_polar(1.0, std::f64::consts::TAU * k as f64 / m as f64)
}

/// The unnormalised inverse DFT (`exp(+2πi jk/m)`) of every line of `values` (row-major, of `size`) along `axis`.
fn inverse_dft_along(values: &mut [Complex64], size: [usize; 3], axis: usize) {
    let m = size.get(axis).copied().unwrap_or(1);
    if m == 1 {
        return;
    }
    let stride: usize = size.iter().skip(axis + 1).product();
    for start in (0..values.len()).filter(|&s| (s / stride).is_multiple_of(m)) {
        let line: Vec<Complex64> = values.iter().skip(start).step_by(stride).take(m).copied().collect();
        let transformed = (0..m).map(|j| line.iter().enumerate().map(|(k, v)| v * unit_root((j * k) % m, m)).sum());
        for (v, t) in values.iter_mut().skip(start).step_by(stride).zip(transformed) {
            *v = t;
        }
    }
}
