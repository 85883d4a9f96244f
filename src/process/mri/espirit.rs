//! [`EspiritMaps`]: coil sensitivity maps from the k-space's fully sampled centre by ESPIRiT, step for step as
//! BART's `ecalib -m1` computes them (docs/bart-semantics.md §8). For now the computation runs on the host in
//! float64 (the k-space is read back once) and the maps are written to the device.

use crate::data::{KData, XData};
use crate::element::ComplexElement;
use crate::error::{Error, Result};
use crate::process::{Prepared, Process};
use nalgebra::{DMatrix, SymmetricEigen};
use num_complex::Complex64;
use std::f64::consts::PI;

/// The settings of [`EspiritMaps`], BART's defaults: calibration region at most 24 per axis (`-r`), kernel 6
/// (`-k`), kernel threshold 0.001 (`-t`), eigenvalue crop 0.8 (`-c`), 30 power iterations.
///
/// ```
/// let p = cliper::EspiritParams::default().crop(0.9);
/// assert_eq!((p.calibration, p.kernel, p.threshold, p.crop, p.iterations), (24, 6, 0.001, 0.9, 30));
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
}

impl Default for EspiritParams {
    fn default() -> EspiritParams {
        EspiritParams { calibration: 24, kernel: 6, threshold: 0.001, crop: 0.8, iterations: 30 }
    }
}

impl EspiritParams {
    /// The eigenvalue crop.
    pub fn crop(mut self, crop: f64) -> EspiritParams {
        self.crop = crop;
        self
    }
}

/// How an [`EspiritMaps`] ran, as `strategy()` reports it after a launch: the calibration region found and the
/// kernels kept.
///
/// ```
/// let s = cliper::EspiritStrategy { calibration: [24, 24], kernels: 47, candidates: 288 };
/// assert!(s.to_string().contains("47 of 288"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EspiritStrategy {
    /// The fully sampled calibration region's extent.
    pub calibration: [usize; 2],
    /// Kernels kept.
    pub kernels: usize,
    /// Kernels considered (kernel² × coils).
    pub candidates: usize,
}

impl std::fmt::Display for EspiritStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ESPIRiT (on the host): calibration {:?}, {} of {} kernels",
            self.calibration, self.kernels, self.candidates
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
    plan: Prepared<Option<EspiritStrategy>>,
}

impl<T: ComplexElement> EspiritMaps<T> {
    /// Maps of `k` into `maps`.
    pub fn new(k: &KData<T>, maps: &XData<T>, params: EspiritParams) -> EspiritMaps<T> {
        EspiritMaps { k: k.clone(), maps: maps.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the maps, computes them once and returns them.
    pub fn apply(k: &KData<T>, params: EspiritParams) -> Result<XData<T>> {
        let maps = XData::uninit(k.as_xdata().app(), "EspiritMaps", &Self::output_shape(k)?)?;
        EspiritMaps::new(k, &maps, params).run()?;
        Ok(maps)
    }

    /// The maps' shape: `[coils, x, y]` (2-D k-space of one frame).
    pub fn output_shape(k: &KData<T>) -> Result<Vec<usize>> {
        if k.num_frames() != 1 || k.spatial_shape().len() != 2 {
            return Err(Error::invalid(
                "EspiritMaps",
                format!(
                    "k-space of shape {:?}: ESPIRiT takes one 2-D frame [coils, x, y] (3-D is not built yet)",
                    k.as_xdata().shape()
                ),
            ));
        }
        Ok([k.num_coils()].iter().chain(k.spatial_shape()).copied().collect())
    }

    /// The calibration region and kernels of the last launch.
    pub fn strategy(&self) -> Option<EspiritStrategy> {
        self.plan.as_ref().cloned().flatten()
    }
}

impl<T: ComplexElement> Process for EspiritMaps<T> {
    fn name(&self) -> &str {
        "EspiritMaps"
    }

    fn init(&mut self) -> Result<()> {
        let shape = Self::output_shape(&self.k)?;
        if self.maps.shape() != shape.as_slice() {
            return Err(Error::Shape {
                op: "EspiritMaps".into(),
                expected: format!("maps of shape {shape:?}"),
                got: format!("{:?}", self.maps.shape()),
            });
        }
        let p = self.params;
        if p.kernel == 0 || p.calibration < p.kernel || p.threshold.is_nan() || p.threshold <= 0.0 || p.iterations == 0
        {
            return Err(Error::invalid("EspiritMaps", format!("settings {p:?}: need calibration ≥ kernel ≥ 1")));
        }
        self.plan.set(None);
        Ok(())
    }

    /// Reads the k-space back (waits for the device), computes the maps on the host, writes them.
    fn launch(&mut self) -> Result<()> {
        let shape = self.maps.shape().to_vec();
        let [coils, nx, ny] = shape[..] else { return Err(Error::invalid("EspiritMaps", "not 2-D")) };
        let k: Vec<Complex64> = self.k.as_xdata().to_vec()?.into_iter().map(|v| v.to_c64()).collect();
        let (maps, strategy) = espirit(&k, coils, nx, ny, &self.params)?;
        let values: Vec<T> = maps.into_iter().map(T::from_c64).collect();
        self.maps.write(&values)?;
        self.plan.set(Some(strategy));
        Ok(())
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// `v[i]`, or the default past the end (every index here is within the loops' own extents).
fn at<E: Copy + Default>(v: &[E], i: usize) -> E {
    v.get(i).copied().unwrap_or_default()
}

/// `v[i] = value` (ignored past the end).
fn put<E>(v: &mut [E], i: usize, value: E) {
    if let Some(slot) = v.get_mut(i) {
        *slot = value;
    }
}

/// Entry (r, c) of a matrix, 0 outside.
fn entry(m: &DMatrix<Complex64>, r: usize, c: usize) -> Complex64 {
    m.get((r, c)).copied().unwrap_or_default()
}

/// BART's `fftmod` phase of index `j` on an axis of `n`: exp(2πi (j − c/2) c / n), c = n/2 (conjugate: `ifftmod`).
fn modulation(j: usize, n: usize, inverse: bool) -> Complex64 {
    let c = (n / 2) as f64;
    let turns = (j as f64 - c / 2.0) * c / n as f64;
    Complex64::from_polar(1.0, if inverse { -2.0 } else { 2.0 } * PI * turns)
}

/// The maps `[coils, nx, ny]` of k-space `k` (the same layout) and what was found.
fn espirit(
    k: &[Complex64],
    coils: usize,
    nx: usize,
    ny: usize,
    p: &EspiritParams,
) -> Result<(Vec<Complex64>, EspiritStrategy)> {
    let sample = |c: usize, x: usize, y: usize| at(k, (c * nx + x) * ny + y);
    let sampled = |x: usize, y: usize| (0..coils).any(|c| sample(c, x, y) != Complex64::default());
    // 1. The calibration block: within the centre band of y (at most `calibration` wide, all of x), grow a
    // centred block one axis at a time while it stays fully sampled, then slide it along x to the most energy.
    let band = (ny - ny.min(p.calibration)) / 2;
    let dims = [nx, ny.min(p.calibration)];
    let (mut cal, mut pos, mut stop) = ([1usize, 1], [(nx - 1) / 2, (ny.min(p.calibration) - 1) / 2], [false, false]);
    let full = |cal: &[usize; 2], pos: &[usize; 2]| {
        let ([c0, c1], [p0, p1]) = (*cal, *pos);
        (p0..p0 + c0).all(|x| (p1..p1 + c1).all(|y| sampled(x, band + y)))
    };
    while !stop.iter().all(|&s| s) {
        for i in 0..2 {
            let (ci, di) = (at(&cal, i), at(&dims, i));
            if ci == di || ci >= p.calibration {
                put(&mut stop, i, true);
            }
            if at(&stop, i) {
                continue;
            }
            put(&mut cal, i, ci + 1);
            put(&mut pos, i, (di - ci - 1) / 2);
            if !full(&cal, &pos) {
                put(&mut cal, i, ci);
                put(&mut pos, i, (di - ci) / 2);
                put(&mut stop, i, true);
            }
        }
    }
    let [cx, cy] = cal;
    let py = at(&pos, 1);
    let energy = |x0: usize| -> f64 {
        (0..coils)
            .map(|c| {
                (x0..x0 + cx).map(|x| (0..cy).map(|y| sample(c, x, band + py + y).norm_sqr()).sum::<f64>()).sum::<f64>()
            })
            .sum()
    };
    let (mut best, mut most) = (0usize, 0.0f64);
    for x0 in 0..=nx - cx {
        let e = energy(x0);
        if e > most {
            (best, most) = (x0, e);
        }
    }
    let calib = |c: usize, x: usize, y: usize| sample(c, best + x, band + py + y);
    let kk = p.kernel;
    if cx < kk || cy < kk {
        return Err(Error::invalid(
            "EspiritMaps",
            format!("the fully sampled centre is {cx} × {cy}, smaller than the {kk} × {kk} kernel"),
        ));
    }
    // 2. The Casorati matrix: a row per kernel position (x fastest), a column per (kx, ky, coil) (kx fastest).
    let columns = kk * kk * coils;
    let rows = (cx - kk + 1) * (cy - kk + 1);
    let mut a = DMatrix::<Complex64>::zeros(rows, columns);
    for sy in 0..=cy - kk {
        for sx in 0..=cx - kk {
            let row = sx + (cx - kk + 1) * sy;
            for c in 0..coils {
                for ky in 0..kk {
                    for kx in 0..kk {
                        if let Some(slot) = a.get_mut((row, kx + kk * ky + kk * kk * c)) {
                            *slot = calib(c, sx + kx, sy + ky);
                        }
                    }
                }
            }
        }
    }
    let gram = a.adjoint() * &a;
    let eigen = SymmetricEigen::new(gram);
    let mut order: Vec<usize> = (0..columns).collect();
    let value = |i: usize| eigen.eigenvalues.get(i).copied().unwrap_or(0.0);
    order.sort_by(|&i, &j| value(j).total_cmp(&value(i)));
    let sigma = |i: usize| value(i).max(0.0).sqrt();
    let largest = order.first().map_or(0.0, |&i| sigma(i));
    let kept: Vec<usize> = order.iter().copied().take_while(|&i| sigma(i) / largest > p.threshold.sqrt()).collect();
    // 3. Each kernel (the conjugate of a right singular vector) zero-padded centred on a grid of twice the
    // kernel, ifftmod, unnormalised inverse DFT: a_k(r) per coil; W(r) = Σ_k a_k a_kᴴ / (kernel² · grid²).
    let g = 2 * kk;
    let offset = g / 2 - kk / 2;
    let mut w = vec![Complex64::default(); g * g * coils * coils];
    let mut image = vec![Complex64::default(); g * g * coils];
    for &e in &kept {
        image.iter_mut().for_each(|v| *v = Complex64::default());
        for c in 0..coils {
            for x in 0..g {
                for y in 0..g {
                    let mut sum = Complex64::default();
                    for ky in 0..kk {
                        for kx in 0..kk {
                            let (u, v) = (kx + offset, ky + offset);
                            let value = entry(&eigen.eigenvectors, kx + kk * ky + kk * kk * c, e).conj()
                                * modulation(u, g, true)
                                * modulation(v, g, true);
                            sum +=
                                value * Complex64::from_polar(1.0, 2.0 * PI * ((u * x + v * y) % g) as f64 / g as f64);
                        }
                    }
                    put(&mut image, (x * g + y) * coils + c, sum);
                }
            }
        }
        for r in 0..g * g {
            for c in 0..coils {
                for d in 0..coils {
                    let add = at(&image, r * coils + c) * at(&image, r * coils + d).conj();
                    if let Some(slot) = w.get_mut((r * coils + c) * coils + d) {
                        *slot += add;
                    }
                }
            }
        }
    }
    let scale = (kk * kk * g * g) as f64;
    w.iter_mut().for_each(|v| *v /= scale);
    // 4. Sinc interpolation of every entry to the image, y first, then x: fftmod, DFT, fftmod, centred zero
    // padding, ifftmod, unnormalised inverse DFT, ifftmod.
    let w = resize(&w, [g, g], coils * coils, 1, ny);
    let w = resize(&w, [g, ny], coils * coils, 0, nx);
    // 5. Per pixel: 30 power iterations from the first coil, crop by the eigenvalue (pixels in parallel).
    use rayon::prelude::*;
    let per_pixel: Vec<Vec<Complex64>> = (0..nx * ny)
        .into_par_iter()
        .map(|r| {
            let block = w.get(r * coils * coils..(r + 1) * coils * coils).unwrap_or_default();
            let mut x = vec![Complex64::default(); coils];
            put(&mut x, 0, Complex64::new(1.0, 0.0));
            let mut next = vec![Complex64::default(); coils];
            let mut value = 0.0;
            for _ in 0..p.iterations {
                for (row, slot) in block.chunks(coils).zip(next.iter_mut()) {
                    *slot = row.iter().zip(&x).map(|(a, b)| a * b).sum();
                }
                value = next.iter().map(|v| v.norm_sqr()).sum::<f64>().sqrt();
                for (slot, n) in x.iter_mut().zip(&next) {
                    *slot = if value > 0.0 { n / value } else { Complex64::default() };
                }
            }
            if value >= p.crop { x } else { vec![Complex64::default(); coils] }
        })
        .collect();
    let mut maps = vec![Complex64::default(); coils * nx * ny];
    for (r, x) in per_pixel.iter().enumerate() {
        for (c, &v) in x.iter().enumerate() {
            put(&mut maps, c * nx * ny + r, v);
        }
    }
    // 6. The phase reference: the principal eigenvector z of conj(DᴴD) for the calibration data D, its last
    // entry real and positive (LAPACK's cheev makes it real with an arbitrary sign); each pixel's maps rotated so
    // that zᴴ s is real and positive.
    let mut d = DMatrix::<Complex64>::zeros(cx * cy, coils);
    for c in 0..coils {
        for y in 0..cy {
            for xx in 0..cx {
                if let Some(slot) = d.get_mut((xx + cx * y, c)) {
                    *slot = calib(c, xx, y);
                }
            }
        }
    }
    let f = (d.adjoint() * &d).map(|v| v.conj());
    let fe = SymmetricEigen::new(f);
    let fvalue = |i: usize| fe.eigenvalues.get(i).copied().unwrap_or(f64::NEG_INFINITY);
    let top = (0..coils).max_by(|&i, &j| fvalue(i).total_cmp(&fvalue(j))).unwrap_or(0);
    let mut z: Vec<Complex64> = (0..coils).map(|c| entry(&fe.eigenvectors, c, top)).collect();
    if let Some(last) = z.last().copied().filter(|v| v.norm() > 0.0) {
        let unit = last.conj() / last.norm();
        z.iter_mut().for_each(|v| *v *= unit);
    }
    for r in 0..nx * ny {
        let t: Complex64 = z.iter().enumerate().map(|(c, zc)| zc.conj() * at(&maps, c * nx * ny + r)).sum();
        if t.norm() > 0.0 {
            let rotate = (t / t.norm()).conj();
            for c in 0..coils {
                let v = at(&maps, c * nx * ny + r);
                put(&mut maps, c * nx * ny + r, v * rotate);
            }
        }
    }
    Ok((maps, EspiritStrategy { calibration: [cx, cy], kernels: kept.len(), candidates: columns }))
}

/// Sinc interpolation of `count` matrices' entries laid out `[position (row-major over shape), entry]` from
/// `shape[axis]` to `n_out` samples along `axis` (0 or 1 of a 2-D shape): BART's fftmod, DFT, fftmod, centred zero
/// padding, ifftmod, unnormalised inverse DFT, ifftmod — one linear map of each line, computed once as an
/// `n_out × n_in` matrix.
fn resize(data: &[Complex64], shape: [usize; 2], count: usize, axis: usize, n_out: usize) -> Vec<Complex64> {
    let [s0, s1] = shape;
    let (n_in, other, out_shape) = if axis == 0 { (s0, s1, [n_out, s1]) } else { (s1, s0, [s0, n_out]) };
    let pad = n_out / 2 - n_in / 2;
    let turn = |k: usize, n: usize| Complex64::from_polar(1.0, 2.0 * PI * (k % n) as f64 / n as f64);
    // map[i · n_in + j]: input sample j's weight in output sample i.
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
    let mut out = vec![Complex64::default(); out_shape[0] * out_shape[1] * count];
    let index = |[_, width]: [usize; 2], along: usize, across: usize| {
        if axis == 0 { along * width + across } else { across * width + along }
    };
    let mut line = vec![Complex64::default(); n_in];
    for across in 0..other {
        for e in 0..count {
            for (j, slot) in line.iter_mut().enumerate() {
                *slot = at(data, index(shape, j, across) * count + e);
            }
            for i in 0..n_out {
                let row = map.get(i * n_in..(i + 1) * n_in).unwrap_or_default();
                let value: Complex64 = row.iter().zip(&line).map(|(m, v)| m * v).sum();
                put(&mut out, index(out_shape, i, across) * count + e, value);
            }
        }
    }
    out
}
