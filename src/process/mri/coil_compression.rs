//! [`CoilCompression`]: virtual coils by principal components of the calibration data, as BART's `cc`: one
//! compression for the whole k-space (SVD, `-S`; Buehrer et al. 2007, Huang et al. 2008) or one per readout
//! position, aligned along the readout (geometric, `-G`; Zhang et al. 2013). On the host in float64: the coil
//! covariances are small (coils × coils) and the transforms along the readout are one pass over the data.

use super::coil_maps::{Calibration, at, calibration_block, most_energy};
use super::espirit::readout_maps;
use crate::error::{Error, Result};
use faer::{Mat, Side};
use num_complex::Complex64;
use rayon::prelude::*;
use rustfft::FftPlanner;

/// How a [`CoilCompression`] is estimated: BART's `cc -S` or `-G` (`-E`, ESPIRiT-based, is not built).
///
/// ```
/// use cliper::{CompressionMethod, CompressionParams};
/// assert_eq!(CompressionParams::new(CompressionMethod::Svd).method, CompressionMethod::Svd);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompressionMethod {
    /// One matrix for all of k-space: the eigenvectors of the calibration data's coil covariance (`cc -S`).
    Svd,
    /// One matrix per readout position, from the calibration data transformed along the readout, each aligned to
    /// its neighbour so that the virtual coils vary smoothly (`cc -G`).
    Geometric,
    /// One matrix per readout position from ESPIRiT along the readout (kernels 6 × 1 × 1, every eigenvector, no
    /// crop), aligned as the geometric ones (`cc -E`).
    Espirit,
}

/// The settings of [`CoilCompression::estimate`]: BART's defaults are SVD, a calibration block of at most 24 per
/// axis (`-r`), taken from the fully sampled centre (`-A`: all the data instead).
///
/// ```
/// use cliper::{CompressionMethod, CompressionParams};
/// let p = CompressionParams::new(CompressionMethod::Geometric).calibration([12, 12, 12]);
/// assert_eq!((p.method, p.calibration, p.all_data), (CompressionMethod::Geometric, [12, 12, 12], false));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompressionParams {
    /// SVD or geometric.
    pub method: CompressionMethod,
    /// The calibration block's largest extent along each of the three k-space axes (`cc -r`).
    pub calibration: [usize; 3],
    /// Use all the data, not the calibration block (`cc -A`).
    pub all_data: bool,
}

impl CompressionParams {
    /// `method` with BART's defaults.
    pub fn new(method: CompressionMethod) -> CompressionParams {
        CompressionParams { method, calibration: [24, 24, 24], all_data: false }
    }

    /// The calibration block's largest extent per axis.
    pub fn calibration(mut self, extent: [usize; 3]) -> CompressionParams {
        self.calibration = extent;
        self
    }

    /// All the data or the calibration block.
    pub fn all_data(mut self, on: bool) -> CompressionParams {
        self.all_data = on;
        self
    }
}

/// A coil compression estimated from Cartesian k-space `[coils, x, y, z]` (x the readout, centred), as BART's `bart
/// cc`. Virtual coil `p` is `w_pᴴ k` with `w_p` the covariance's eigenvector of the `p`-th largest eigenvalue
/// (geometric: per readout position in the image domain along x, then aligned along the readout by the unitary
/// that brings each position's matrix nearest its neighbour's, starting from x's first position).
///
/// Eigenvectors have no set phase, so each virtual coil matches BART's up to one unit factor (its LAPACK's choice
/// against faer's); the k-space of the virtual coils, their energies and any reconstruction with maps estimated
/// from them do not depend on it.
///
/// ```
/// use cliper::{CoilCompression, CompressionMethod, CompressionParams};
/// use num_complex::Complex64 as C;
/// // Three coils that see one signal with gains 1, 2, 0 (plus a little of a second one in coil 3): one virtual
/// // coil holds almost all of the energy.
/// let (x, y) = (6, 5);
/// let k: Vec<C> = (0..3 * x * y)
///     .map(|i| {
///         let (c, s) = (i / (x * y), (i % (x * y)) as f64);
///         let signal = C::new((s * 0.7).sin() + 1.5, (s * 0.3).cos());
///         [signal, signal * 2.0, C::new(0.01 * (s * 1.3).cos(), 0.0)][c]
///     })
///     .collect();
/// let cc = CoilCompression::estimate(&k, [3, x, y, 1], CompressionParams::new(CompressionMethod::Svd))?;
/// assert!(cc.energy()[0] > 0.999);
/// let one = cc.compress(&k, [3, x, y, 1], 1)?;
/// assert_eq!(one.len(), x * y);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CoilCompression {
    method: CompressionMethod,
    coils: usize,
    /// Per readout position (one for SVD): `[p][c]` = `w_p[c]`, the eigenvectors by decreasing eigenvalue.
    matrices: Vec<Vec<Complex64>>,
    /// The eigenvalues' share of their sum, decreasing (SVD: of the one covariance; geometric: summed over the
    /// readout positions).
    energy: Vec<f64>,
}

const OP: &str = "CoilCompression";

impl CoilCompression {
    /// Estimates the compression of `k` (`[coils, x, y, z]` row-major, `shape` its extents).
    pub fn estimate(k: &[Complex64], shape: [usize; 4], params: CompressionParams) -> Result<CoilCompression> {
        check(k, shape)?;
        let [coils, nx, _, _] = shape;
        let (calibration, extent) = if params.all_data {
            (k.to_vec(), [shape[1], shape[2], shape[3]])
        } else {
            calibration_region(k, shape, params.calibration)
        };
        if calibration.iter().all(|v| *v == Complex64::default()) {
            return Err(Error::invalid(OP, format!("the calibration block {extent:?} of k-space {shape:?} is empty")));
        }
        let (matrices, energy) = match params.method {
            CompressionMethod::Svd => {
                let (m, e) = principal_components(coils, &calibration)?;
                (vec![m], e)
            }
            CompressionMethod::Espirit => {
                let block = Calibration { coils, extent, start: [0; 3], data: calibration };
                let per_position = readout_maps(&block, nx)?;
                let mut energy = vec![0.0; coils];
                for (_, values) in &per_position {
                    let total: f64 = values.iter().map(|v| v.max(0.0)).sum();
                    if total > 0.0 {
                        energy.iter_mut().zip(values).for_each(|(t, v)| *t += v.max(0.0) / total / nx as f64);
                    }
                }
                (per_position.into_iter().map(|(m, _)| m).collect(), energy)
            }
            CompressionMethod::Geometric => {
                let hybrid = readout_image(&calibration, [coils, extent[0], extent[1], extent[2]], nx);
                let per_position: Vec<(Vec<Complex64>, Vec<f64>)> = (0..nx)
                    .into_par_iter()
                    .map(|x| principal_components(coils, &column(&hybrid, [coils, nx, extent[1] * extent[2]], x)))
                    .collect::<Result<_>>()?;
                let mut energy = vec![0.0; coils];
                for (_, e) in &per_position {
                    energy.iter_mut().zip(e).for_each(|(t, v)| *t += v / nx as f64);
                }
                (per_position.into_iter().map(|(m, _)| m).collect(), energy)
            }
        };
        Ok(CoilCompression { method: params.method, coils, matrices, energy })
    }

    /// The method it was estimated with.
    pub fn method(&self) -> CompressionMethod {
        self.method
    }

    /// The eigenvalues' share of their sum, by decreasing eigenvalue: how much of the calibration data's energy
    /// the first virtual coils hold (what `bart cc -d1` prints as "Energy").
    pub fn energy(&self) -> &[f64] {
        &self.energy
    }

    /// The matrices, one per readout position (one for SVD), each `[virtual coil][coil]` row-major: `w_p[c]`. For
    /// the geometric method these are before the alignment, as `bart cc -M -G` writes them.
    pub fn matrices(&self) -> &[Vec<Complex64>] {
        &self.matrices
    }

    /// `k` (`[coils, x, y, z]`) compressed to `virtual_coils` (`[virtual_coils, x, y, z]`). The geometric method
    /// transforms along the readout, applies each position's aligned matrix and transforms back (BART's unitary
    /// centred FFT).
    pub fn compress(&self, k: &[Complex64], shape: [usize; 4], virtual_coils: usize) -> Result<Vec<Complex64>> {
        check(k, shape)?;
        let [coils, nx, ny, nz] = shape;
        if coils != self.coils {
            return Err(Error::invalid(OP, format!("k-space of {coils} coils for a compression of {}", self.coils)));
        }
        if !(1..=coils).contains(&virtual_coils) {
            return Err(Error::invalid(OP, format!("{virtual_coils} virtual coils: give 1 to {coils}")));
        }
        let lines = ny * nz;
        match self.method {
            CompressionMethod::Svd => {
                let m = at_matrix(&self.matrices, 0);
                Ok(apply(&m, coils, virtual_coils, k, nx * lines, |_| 0))
            }
            CompressionMethod::Geometric | CompressionMethod::Espirit => {
                if self.matrices.len() != nx {
                    return Err(Error::invalid(
                        OP,
                        format!("a readout of {nx} for a geometric compression estimated on {}", self.matrices.len()),
                    ));
                }
                let aligned = align_along_readout(&self.matrices, coils, virtual_coils)?;
                let hybrid = readout_image(k, shape, nx);
                // One matrix per readout position x: sample i of a coil sits at x = i / lines.
                let flat: Vec<Complex64> = aligned.concat();
                let compressed = apply(&flat, coils, virtual_coils, &hybrid, nx * lines, |i| i / lines);
                Ok(readout_kspace(&compressed, [virtual_coils, nx, ny, nz]))
            }
        }
    }
}

fn check(k: &[Complex64], shape: [usize; 4]) -> Result<()> {
    let count: usize = shape.iter().product();
    if count == 0 || k.len() != count {
        return Err(Error::invalid(
            OP,
            format!("k-space of {} values for the shape {shape:?} [coils, x, y, z]", k.len()),
        ));
    }
    if !k.iter().all(|v| v.re.is_finite() && v.im.is_finite()) {
        return Err(Error::invalid(OP, "the k-space holds a value that is not finite"));
    }
    Ok(())
}

/// Matrix `i` of `matrices` (empty past the end).
fn at_matrix(matrices: &[Vec<Complex64>], i: usize) -> Vec<Complex64> {
    matrices.get(i).cloned().unwrap_or_default()
}

/// BART's `extract_calib` (not fixed): the centre of y and z cut to the limit (all of x), the fully sampled block
/// grown in it, then slid along x to where it holds the most energy. Its samples `[coils, cx, cy, cz]` and extent.
fn calibration_region(k: &[Complex64], shape: [usize; 4], limit: [usize; 3]) -> (Vec<Complex64>, [usize; 3]) {
    let [coils, nx, ny, nz] = shape;
    let dims = [nx, ny.min(at(&limit, 1)), nz.min(at(&limit, 2))];
    let offset = [0, (ny - dims[1]) / 2, (nz - dims[2]) / 2];
    let sample = |c: usize, [x, y, z]: [usize; 3]| at(k, ((c * nx + x) * ny + y + offset[1]) * nz + z + offset[2]);
    let sampled = |p: &[usize; 3]| (0..coils).any(|c| sample(c, *p) != Complex64::default());
    let (extent, pos) = calibration_block(dims, limit, sampled);
    let [cx, cy, cz] = extent;
    let block = |x0: usize| {
        (0..coils).flat_map(move |c| {
            (0..cx * cy * cz).map(move |i| sample(c, [x0 + i / (cy * cz), pos[1] + (i / cz) % cy, pos[2] + i % cz]))
        })
    };
    let x0 = most_energy(nx, cx, |x0| block(x0).map(|v| v.norm_sqr()).sum());
    (block(x0).collect(), extent)
}

/// The principal components of `data` (`[coils, samples]`): the coil covariance `C = Σ x xᴴ`'s eigenvectors by
/// decreasing eigenvalue as `[p][c]`, and the eigenvalues' shares of their sum.
fn principal_components(coils: usize, data: &[Complex64]) -> Result<(Vec<Complex64>, Vec<f64>)> {
    let samples = data.len() / coils.max(1);
    let row = |c: usize| data.get(c * samples..(c + 1) * samples).unwrap_or_default();
    let covariance = Mat::<Complex64>::from_fn(coils, coils, |i, j| {
        row(i).iter().zip(row(j)).map(|(a, b)| a * b.conj()).sum::<Complex64>()
    });
    let eigen = covariance
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| Error::invalid(OP, format!("the coil covariance's eigendecomposition failed: {e:?}")))?;
    let (values, vectors) = (eigen.S().column_vector(), eigen.U());
    // faer sorts the eigenvalues in ascending order: the largest is last.
    let order: Vec<usize> = (0..coils).rev().collect();
    let matrix = order.iter().flat_map(|&p| (0..coils).map(move |c| *vectors.get(c, p))).collect();
    let total: f64 = (0..coils).map(|p| values.get(p).re.max(0.0)).sum();
    let energy = order.iter().map(|&p| if total > 0.0 { values.get(p).re.max(0.0) / total } else { 0.0 }).collect();
    Ok((matrix, energy))
}

/// Position `x` of `[coils, nx, lines]`: `[coils, lines]`.
fn column(data: &[Complex64], [coils, nx, lines]: [usize; 3], x: usize) -> Vec<Complex64> {
    (0..coils).flat_map(|c| (0..lines).map(move |l| at(data, (c * nx + x) * lines + l))).collect()
}

/// `out[p, i] = Σ_c conj(m_{x(i)}[p][c]) · k[c, i]` for `i` over `count` samples per coil, `m` the matrices
/// (`[position][p][c]` flattened, `coils` × `coils` each) and `x(i)` the matrix of sample `i`.
fn apply(
    m: &[Complex64],
    coils: usize,
    virtual_coils: usize,
    k: &[Complex64],
    count: usize,
    position: impl Fn(usize) -> usize + Sync,
) -> Vec<Complex64> {
    let mut out = vec![Complex64::default(); virtual_coils * count];
    out.par_chunks_mut(count).enumerate().for_each(|(p, row)| {
        for (i, o) in row.iter_mut().enumerate() {
            let base = position(i) * coils * coils + p * coils;
            *o = (0..coils).map(|c| at(m, base + c).conj() * at(k, c * count + i)).sum();
        }
    });
    out
}

/// BART's `align_ro`: the first `virtual_coils` rows of each position's matrix, each position (from the second)
/// multiplied by the unitary `P_x` that brings it nearest the previous aligned one: `P_x = W Zᴴ` for the SVD `W Σ
/// Zᴴ` of `A_{x−1} A_xᴴ` (orthogonal Procrustes).
fn align_along_readout(matrices: &[Vec<Complex64>], coils: usize, virtual_coils: usize) -> Result<Vec<Vec<Complex64>>> {
    let rows = |m: &[Complex64]| Mat::<Complex64>::from_fn(virtual_coils, coils, |p, c| at(m, p * coils + c));
    let mut aligned: Vec<Vec<Complex64>> = Vec::with_capacity(matrices.len());
    let mut previous: Option<Mat<Complex64>> = None;
    for m in matrices {
        let a = rows(m);
        let a = match &previous {
            None => a,
            Some(prev) => {
                let svd = (prev * a.adjoint())
                    .svd()
                    .map_err(|e| Error::invalid(OP, format!("the alignment's SVD failed: {e:?}")))?;
                svd.U() * svd.V().adjoint() * &a
            }
        };
        // Back to [p][c] with `coils` columns per row and the full square layout `apply` reads.
        let mut square = vec![Complex64::default(); coils * coils];
        for p in 0..virtual_coils {
            for c in 0..coils {
                if let Some(slot) = square.get_mut(p * coils + c) {
                    *slot = *a.get(p, c);
                }
            }
        }
        aligned.push(square);
        previous = Some(a);
    }
    Ok(aligned)
}

/// `data` (`[coils, cx, rest…]`) zero-padded along x to `nx` around the centre (BART's `md_resize_center`) and
/// transformed to the image domain along x by the unitary centred inverse FFT (`ifftuc`): `[coils, nx, rest]`.
fn readout_image(data: &[Complex64], [coils, cx, ny, nz]: [usize; 4], nx: usize) -> Vec<Complex64> {
    let lines = ny * nz;
    let start = nx / 2 - cx / 2;
    let mut out = vec![Complex64::default(); coils * nx * lines];
    for c in 0..coils {
        for x in 0..cx {
            for l in 0..lines {
                if let Some(slot) = out.get_mut((c * nx + start + x) * lines + l) {
                    *slot = at(data, (c * cx + x) * lines + l);
                }
            }
        }
    }
    centred_unitary_fft(&mut out, [coils, nx, lines], true);
    out
}

/// The unitary centred FFT along x back to k-space (`fftuc`).
fn readout_kspace(data: &[Complex64], [coils, nx, ny, nz]: [usize; 4]) -> Vec<Complex64> {
    let mut out = data.to_vec();
    centred_unitary_fft(&mut out, [coils, nx, ny * nz], false);
    out
}

/// BART's `fftuc` (or `ifftuc`) along the middle axis of `[outer, n, lines]` in place: `fftshift(fft(ifftshift(v)))
/// / √n` (docs/bart-semantics.md §2: equal to BART's for even and odd n).
fn centred_unitary_fft(data: &mut [Complex64], [outer, n, lines]: [usize; 3], inverse: bool) {
    let mut planner = FftPlanner::<f64>::new();
    let fft = if inverse { planner.plan_fft_inverse(n) } else { planner.plan_fft_forward(n) };
    let scale = 1.0 / (n as f64).sqrt();
    data.par_chunks_mut(n * lines).take(outer).for_each(|block| {
        let mut line = vec![Complex64::default(); n];
        for l in 0..lines {
            // ifftshift: element j of the shifted line is element (j + ⌊n/2⌋) mod n.
            for (j, slot) in line.iter_mut().enumerate() {
                *slot = at(block, ((j + n / 2) % n) * lines + l);
            }
            fft.process(&mut line);
            // fftshift: element m of the transform lands at (m + ⌊n/2⌋) mod n.
            for (m, v) in line.iter().enumerate() {
                if let Some(slot) = block.get_mut(((m + n / 2) % n) * lines + l) {
                    *slot = v * scale;
                }
            }
        }
    });
}
