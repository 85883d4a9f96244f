//! What the coil-map estimators ([`super::EspiritMaps`], [`super::WalshMaps`]) share: finding the fully sampled
//! calibration block of centred k-space as BART does (only a band of y around the centre is read back), and the
//! per-pixel eigenvector program of `kernels/mri.cl` (one work-item per pixel and coil, a row of the pixel's
//! matrix in registers; compiled for the coil count).

use crate::app::{ClApp, DeviceKind, Kernel, Program};
use crate::data::{KData, XData};
use crate::element::ComplexElement;
use crate::error::{Error, Result};
use crate::kernels;
use num_complex::Complex64;

/// `v[i]`, or the default past the end (every index here is within the loops' own extents).
pub(super) fn at<E: Copy + Default>(v: &[E], i: usize) -> E {
    v.get(i).copied().unwrap_or_default()
}

/// `v[i] = value` (ignored past the end).
pub(super) fn put<E>(v: &mut [E], i: usize, value: E) {
    if let Some(slot) = v.get_mut(i) {
        *slot = value;
    }
}

/// BART's `calib_geom`: the fully sampled block around the centre of an array of `dims`, grown one axis at a time
/// (axis by axis in turn, one sample each) from a single sample at `(n − 1) / 2` while every sample in it is
/// `sampled`, up to `limit` per axis; its extent and first sample per axis.
pub(super) fn calibration_block<const D: usize>(
    dims: [usize; D],
    limit: [usize; D],
    sampled: impl Fn(&[usize; D]) -> bool,
) -> ([usize; D], [usize; D]) {
    let mut cal = [1usize; D];
    let mut pos = dims.map(|n| n.saturating_sub(1) / 2);
    let mut stop = [false; D];
    let full = |cal: &[usize; D], pos: &[usize; D]| {
        let count: usize = cal.iter().product();
        (0..count).all(|mut i| {
            let mut index = [0usize; D];
            for ((slot, &c), &p) in index.iter_mut().zip(cal).zip(pos).rev() {
                *slot = p + i % c;
                i /= c;
            }
            sampled(&index)
        })
    };
    while !stop.iter().all(|&s| s) {
        for i in 0..D {
            let (ci, di, li) = (at(&cal, i), at(&dims, i), at(&limit, i));
            if ci == di || ci >= li {
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
    (cal, pos)
}

/// BART's `calib_readout_pos`: the first readout index of a block `extent` long within `n` where `energy` (of the
/// block starting there) is largest; the first such index on ties, 0 when every energy is 0.
pub(super) fn most_energy(n: usize, extent: usize, energy: impl Fn(usize) -> f64) -> usize {
    let (mut best, mut most) = (0usize, 0.0f64);
    for start in 0..=n.saturating_sub(extent) {
        let e = energy(start);
        if e > most {
            (best, most) = (start, e);
        }
    }
    best
}

/// The fully sampled calibration block of one frame of centred k-space (2-D or 3-D), found as BART's
/// `ecalib`/`caldir` find it (docs/bart-semantics.md §4 and §8): within the centre band of y and z (each at most
/// `limit` wide, all of x), a centred block grown one axis at a time while every sample in it is non-zero in some
/// coil, up to `limit` per axis, then slid along x to where it holds the most energy.
pub(super) struct Calibration {
    /// Coils.
    pub coils: usize,
    /// The block's extent along x, y and z (1 along z for 2-D k-space).
    pub extent: [usize; 3],
    /// Its first sample along x, y and z in the k-space.
    pub start: [usize; 3],
    /// Its samples `[coil, x, y, z]` (z fastest), in float64.
    pub data: Vec<Complex64>,
}

impl Calibration {
    /// Finds the block of `k` (`[coils, x, y]` or `[coils, x, y, z]`), reading back only the centre band.
    pub fn find<T: ComplexElement>(op: &str, k: &KData<T>, limit: usize) -> Result<Calibration> {
        Ok(Calibration::find_with_band(op, k, limit)?.0)
    }

    /// [`Calibration::find`], with the band on the device (`[coils, x, width_y(, width_z)]`, contiguous) and the
    /// block's first sample in it (x, y, z).
    pub fn find_with_band<T: ComplexElement>(
        op: &str,
        k: &KData<T>,
        limit: usize,
    ) -> Result<(Calibration, XData<T>, [usize; 3])> {
        let x = k.as_xdata();
        let shape = x.shape().to_vec();
        let (coils, nx, ny, nz) = match shape[..] {
            [coils, nx, ny] => (coils, nx, ny, 1),
            [coils, nx, ny, nz] => (coils, nx, ny, nz),
            _ => {
                return Err(Error::invalid(
                    op,
                    format!("k-space of shape {shape:?}: need one frame [coils, x, y] or [coils, x, y, z]"),
                ));
            }
        };
        let (wy, wz) = (ny.min(limit), nz.min(limit));
        let (band_y, band_z) = ((ny - wy) / 2, (nz - wz) / 2);
        let mut on_device = x.slice_axis(2, band_y..band_y + wy)?;
        if shape.len() == 4 {
            on_device = on_device.slice_axis(3, band_z..band_z + wz)?;
        }
        let on_device = on_device.contiguous()?;
        let values = on_device.to_vec()?;
        let sample = |c: usize, x: usize, y: usize, z: usize| at(&values, ((c * nx + x) * wy + y) * wz + z).to_c64();
        let sampled = |&[x, y, z]: &[usize; 3]| (0..coils).any(|c| sample(c, x, y, z) != Complex64::default());
        let ([cx, cy, cz], [_, py, pz]) = calibration_block([nx, wy, wz], [limit, limit, limit], sampled);
        let energy = |x0: usize| -> f64 {
            let mut sum = 0.0;
            for c in 0..coils {
                for x in x0..x0 + cx {
                    for y in 0..cy {
                        for z in 0..cz {
                            sum += sample(c, x, py + y, pz + z).norm_sqr();
                        }
                    }
                }
            }
            sum
        };
        let best = most_energy(nx, cx, energy);
        let mut data = vec![Complex64::default(); coils * cx * cy * cz];
        for c in 0..coils {
            for xx in 0..cx {
                for y in 0..cy {
                    for z in 0..cz {
                        put(&mut data, ((c * cx + xx) * cy + y) * cz + z, sample(c, best + xx, py + y, pz + z));
                    }
                }
            }
        }
        let calibration = Calibration { coils, extent: [cx, cy, cz], start: [best, band_y + py, band_z + pz], data };
        Ok((calibration, on_device, [best, py, pz]))
    }

    /// Sample (coil, x, y, z) of the block.
    pub fn at(&self, c: usize, x: usize, y: usize, z: usize) -> Complex64 {
        let [cx, cy, cz] = self.extent;
        at(&self.data, ((c * cx + x) * cy + y) * cz + z)
    }

    /// Positions in the block.
    pub fn positions(&self) -> usize {
        self.extent.iter().product()
    }
}

/// How a per-pixel eigenvector kernel of `kernels/mri.cl` covers the image: a work-item per pixel holding the
/// pixel's whole matrix (`serial`, what CPUs run fastest: no barriers), or P pixels × C coils per work-group with a
/// row per work-item (GPUs), P = 256 / C (at least 1).
#[derive(Clone, Copy, Debug)]
pub(super) struct PixelLayout {
    pub serial: bool,
    /// P, the row layout's pixels per group.
    pub pixels: usize,
}

/// Work-items (pixels) per group of the serial layout.
const SERIAL_GROUP: usize = 64;

impl PixelLayout {
    /// Pixels per work-group.
    pub fn pixels_per_group(&self) -> usize {
        if self.serial { SERIAL_GROUP } else { self.pixels }
    }

    /// The launch geometry over an `nx × ny` image with `coils` coils: (global, local).
    pub fn geometry(&self, coils: usize, nx: usize, ny: usize) -> (usize, usize) {
        if self.serial {
            ((nx * ny).div_ceil(SERIAL_GROUP).clamp(1, 1 << 16) * SERIAL_GROUP, SERIAL_GROUP)
        } else {
            let group = coils * self.pixels;
            (nx * ny.div_ceil(self.pixels) * group, group)
        }
    }
}

/// The per-pixel eigenvector kernels of `kernels/mri.cl` for `coils` coils, and their layout.
pub(super) struct PixelProgram {
    pub program: Program,
    pub layout: PixelLayout,
}

impl PixelProgram {
    /// Builds (or finds in the cache) the program for `coils` coils of element type `T`; the layout is
    /// `work_item_per_pixel`'s, or by device kind (serial on CPUs).
    pub fn new<T: ComplexElement>(
        op: &str,
        app: &ClApp,
        coils: usize,
        work_item_per_pixel: Option<bool>,
    ) -> Result<PixelProgram> {
        let serial = work_item_per_pixel.unwrap_or(app.device().kind == DeviceKind::Cpu);
        let pixels = (256 / coils.max(1)).max(1);
        let limit = app.device().max_work_group_size;
        if !serial && coils * pixels > limit {
            return Err(Error::invalid(
                op,
                format!("{coils} coils need work-groups of {coils} work-items; {} allows {limit}", app.device().name),
            ));
        }
        let options = format!(
            "{} -DIDX=uint -DEIGEN_COILS={coils} -DEIGEN_PIXELS={pixels} -DBORDER=BORDER_SYMMETRIC",
            T::build_options()
        );
        let program = app.build_program("mri.cl", &kernels::with_common(kernels::MRI), &options)?;
        Ok(PixelProgram { program, layout: PixelLayout { serial, pixels } })
    }

    /// One of its kernels, owned by `op`.
    pub fn kernel(&self, op: &str, name: &str) -> Result<Kernel> {
        self.program.kernel(name).map(|k| k.owned_by(op))
    }

    /// The per-pixel kernel `name` in this layout (`name_serial` when serial), owned by `op`.
    pub fn eigen_kernel(&self, op: &str, name: &str) -> Result<Kernel> {
        if self.layout.serial { self.kernel(op, &format!("{name}_serial")) } else { self.kernel(op, name) }
    }
}
