//! NIfTI-1 and NIfTI-2 volumes (`.nii`, `.nii.gz`) with their geometry: our own header parser for both versions
//! (the `nifti` crate reads NIfTI-1 only; docs/formats.md says what it failed on), the data decoded by the RAW
//! decoder, scl_slope/scl_inter applied by the rescale rule DICOM shares, nibabel's choice of affine.
//!
//! Array order: a NIfTI of nibabel shape `(X, Y, Z, T, …)` is Fortran-ordered (`i` fastest), so its bytes as they
//! lie are the row-major array `[…, T, Z, Y, X]` — cliper's array is nibabel's transposed, and the geometry's
//! slice, row and column axes are NIfTI's k, j and i.

use super::geometry::{Geometry, SpaceUnit, V3, difference, dot, unit};
use super::gzip::write_gzip;
use super::host_array::{Dtype, HostArray, each_variant};
use super::image::Image;
use super::inflate::{Inflater, Wrapper};
use super::raw::{Endian, RawFormat, decode_raw};
use super::rescale::{Scaling, rescale};
use super::sample::{append_encoded, encode};
use super::save::write_atomically;
use super::source::MEMORY;
use crate::error::{Error, Result};
use ndarray::{ArrayD, IxDyn};
use std::io::Write;
use std::path::Path;

/// Sizes of the two headers (sizeof_hdr), and where their data may start at the earliest: after the header and
/// the 4 bytes that flag extensions.
const NIFTI1_HEADER: usize = 348;
const NIFTI2_HEADER: usize = 540;

/// Deflate inflates at most 1032-fold: a gzipped file of `n` bytes cannot hold more than `1032 n`.
const DEFLATE_RATIO: u64 = 1032;

/// Reads a NIfTI-1 or NIfTI-2 file (`.nii` or `.nii.gz`, either byte order): the array `[…, T, Z, Y, X]`
/// (nibabel's `(X, Y, Z, T, …)` reversed, the bytes as they lie; RGB24/RGBA32 as colour u8 `[…, Z, C, Y, X]`),
/// scaled by scl_slope/scl_inter, with its geometry: nibabel's `img.affine` (the sform when sform_code ≠ 0, else
/// the qform when qform_code ≠ 0, else nibabel's centred base affine), the space unit of xyzt_units and, for
/// 4-D files, the time step pixdim\[4\] in seconds. docs/formats.md ("NIfTI") says more.
///
/// ```
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/nifti/4d_sec.nii.gz");
/// let image = cliper::read_nifti(path)?;
/// assert_eq!(image.array.shape(), &[4, 3, 5, 7]); // nibabel's shape (7, 5, 3, 4) reversed
/// let geometry = image.geometry.unwrap();
/// assert_eq!(geometry.time_step, Some(2.5));
/// assert_eq!(geometry.spacing[0], 3.0); // pixdim[3]: the slice axis
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn read_nifti(path: impl AsRef<Path>) -> Result<Image> {
    let path = path.as_ref();
    crate::io::check_host_memory(
        path,
        "the NIfTI file and its array",
        std::fs::metadata(path).map_or(0, |m| m.len()).saturating_mul(2),
    )?;
    let bytes = std::fs::read(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    decode(&bytes, path)
}

/// [`read_nifti`] on the bytes of a NIfTI file in memory (gzipped or not); errors name the source `<memory>`.
///
/// ```
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/nifti/nifti2_f32.nii");
/// let bytes = std::fs::read(path).unwrap();
/// assert_eq!(cliper::decode_nifti(&bytes)?.array.shape(), &[3, 5, 7]);
/// let err = cliper::decode_nifti(&bytes[..600]).unwrap_err().to_string();
/// assert!(err.contains("<memory>") && err.contains("need 420 bytes of data"), "{err}");
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn decode_nifti(bytes: &[u8]) -> Result<Image> {
    decode(bytes, Path::new(MEMORY))
}

/// Writes `array` as NIfTI-1 (`n+1`, little-endian, data at byte 352; gzipped when the name ends in `.nii.gz`,
/// on every core, as one gzip member any reader takes), atomically. The array `[…, Z, Y, X]` becomes nibabel's `(X, Y, Z, …)`; every [`Dtype`] keeps its type; a
/// `colour` u8 array `[…, C, Y, X]` with C = 3 or 4 is written as RGB24 or RGBA32. `geometry` becomes both the
/// sform and the qform (with its `nifti_codes`, else codes 1, scanner, as dcm2niix writes them), pixdim from its
/// spacing and time step and
/// xyzt_units from its unit (seconds for time); without one, both codes are 0 and pixdim 1 — nibabel then reads
/// its centred base affine, as for `Nifti1Image(data, None)`. More than 7 axes, or an extent past 32767, is
/// refused.
///
/// ```
/// use cliper::{Geometry, HostArray, read_nifti, write_nifti};
/// let path = std::env::temp_dir().join(format!("cliper-doc-{}.nii.gz", std::process::id()));
/// let volume = HostArray::I16(ndarray::Array3::from_shape_fn((3, 4, 5), |(z, y, x)| (100 * z + 10 * y + x) as i16).into_dyn());
/// let geometry = Geometry { origin: [-10.0, 20.0, 5.0], ..Geometry::from_spacing([3.0, 0.5, 0.5]) };
/// write_nifti(&path, &volume, false, Some(&geometry))?;
/// let back = read_nifti(&path)?;
/// assert_eq!(back.array, volume);
/// assert_eq!(back.geometry.unwrap().affine(), geometry.affine());
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn write_nifti(path: impl AsRef<Path>, array: &HostArray, colour: bool, geometry: Option<&Geometry>) -> Result<()> {
    write_encoded(path.as_ref(), array, colour, geometry, None)
}

/// [`write_nifti`] of an image, storing the integers behind its values with its scaling when they are still
/// its stored integers ([`Scaling::unscale`]) and NIfTI's float32 scl_slope/scl_inter hold that scaling exactly;
/// otherwise the values as they are. Gives the element type written.
pub(crate) fn write_nifti_image(path: &Path, image: &Image) -> Result<Dtype> {
    let exact_in_f32 = |v: f64| f64::from(v as f32) == v;
    let stored = image
        .scaling
        .filter(|s| !image.colour && exact_in_f32(s.slope) && exact_in_f32(s.intercept))
        .and_then(|s| Some((s.unscale(&image.array)?, s)));
    match stored {
        Some((integers, scaling)) => {
            write_encoded(path, &integers, false, image.geometry.as_ref(), Some(&scaling))?;
            Ok(scaling.stored)
        }
        None => {
            write_encoded(path, &image.array, image.colour, image.geometry.as_ref(), None)?;
            Ok(image.array.dtype())
        }
    }
}

/// Writes the NIfTI file of `array` (stored samples when `scaling` is given: its slope and intercept go into
/// scl_slope/scl_inter).
fn write_encoded(
    path: &Path,
    array: &HostArray,
    colour: bool,
    geometry: Option<&Geometry>,
    scaling: Option<&Scaling>,
) -> Result<()> {
    let bytes = encode_nifti(array, colour, geometry, scaling)
        .map_err(|reason| Error::Format { path: path.to_path_buf(), reason })?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_ascii_lowercase();
    write_atomically(path, |out| {
        if name.ends_with(".gz") { write_gzip(&bytes, out) } else { out.write_all(&bytes).map_err(|e| e.to_string()) }
    })
}

/// What a datatype code holds: plain samples, or interleaved u8 colour channels.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Plain(Dtype),
    Colour(usize),
}

impl Kind {
    fn size(self) -> usize {
        match self {
            Kind::Plain(d) => d.size(),
            Kind::Colour(c) => c,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Plain(d) => d.name(),
            Kind::Colour(3) => "RGB24",
            Kind::Colour(_) => "RGBA32",
        }
    }

    /// The datatype code and bitpix.
    fn code(self) -> (i16, i16) {
        let code = match self {
            Kind::Plain(Dtype::U8) => 2,
            Kind::Plain(Dtype::I16) => 4,
            Kind::Plain(Dtype::I32) => 8,
            Kind::Plain(Dtype::F32) => 16,
            Kind::Plain(Dtype::C32) => 32,
            Kind::Plain(Dtype::F64) => 64,
            Kind::Colour(3) => 128,
            Kind::Plain(Dtype::I8) => 256,
            Kind::Plain(Dtype::U16) => 512,
            Kind::Plain(Dtype::U32) => 768,
            Kind::Plain(Dtype::I64) => 1024,
            Kind::Plain(Dtype::U64) => 1280,
            Kind::Plain(Dtype::C64) => 1792,
            Kind::Colour(_) => 2304,
        };
        (code, 8 * self.size() as i16)
    }

    /// The kind of a datatype code, or why it is refused.
    fn of(code: i32) -> std::result::Result<Kind, String> {
        Ok(match code {
            2 => Kind::Plain(Dtype::U8),
            4 => Kind::Plain(Dtype::I16),
            8 => Kind::Plain(Dtype::I32),
            16 => Kind::Plain(Dtype::F32),
            32 => Kind::Plain(Dtype::C32),
            64 => Kind::Plain(Dtype::F64),
            128 => Kind::Colour(3),
            256 => Kind::Plain(Dtype::I8),
            512 => Kind::Plain(Dtype::U16),
            768 => Kind::Plain(Dtype::U32),
            1024 => Kind::Plain(Dtype::I64),
            1280 => Kind::Plain(Dtype::U64),
            1792 => Kind::Plain(Dtype::C64),
            2304 => Kind::Colour(4),
            _ => {
                let name = match code {
                    0 => "unknown",
                    1 => "binary, 1 bit",
                    255 => "all",
                    1536 => "float128",
                    2048 => "complex256",
                    _ => return Err(format!("datatype {code} is not a NIfTI datatype code")),
                };
                return Err(format!(
                    "datatype {code} ({name}) is not supported; cliper reads the integer types, float32/64, \
                     complex64/128, RGB24 and RGBA32"
                ));
            }
        })
    }
}

/// The header fields cliper uses, widened to one form for both versions.
#[derive(Clone, Debug)]
struct Header {
    little: bool,
    /// dim\[1..=dim\[0\]\]: nibabel's shape.
    dims: Vec<usize>,
    kind: Kind,
    pixdim: [f64; 8],
    vox_offset: u64,
    slope: f64,
    inter: f64,
    qform_code: i32,
    sform_code: i32,
    quatern: [f64; 3],
    qoffset: [f64; 3],
    srow: [[f64; 4]; 3],
    xyzt_units: i32,
}

/// Fixed-width fields of a header in its byte order; bytes past the end read as 0 (callers check the length).
struct Fields<'a> {
    bytes: &'a [u8],
    little: bool,
}

impl Fields<'_> {
    fn array<const N: usize>(&self, at: usize) -> [u8; N] {
        let mut b = [0u8; N];
        if let Some(src) = self.bytes.get(at..at + N) {
            b.copy_from_slice(src);
        }
        if !self.little {
            b.reverse();
        }
        b
    }
    fn i16(&self, at: usize) -> i64 {
        i64::from(i16::from_le_bytes(self.array(at)))
    }
    fn i32(&self, at: usize) -> i64 {
        i64::from(i32::from_le_bytes(self.array(at)))
    }
    fn i64(&self, at: usize) -> i64 {
        i64::from_le_bytes(self.array(at))
    }
    fn f32(&self, at: usize) -> f64 {
        f64::from(f32::from_le_bytes(self.array(at)))
    }
    fn f64(&self, at: usize) -> f64 {
        f64::from_le_bytes(self.array(at))
    }
    fn bytes<const N: usize>(&self, at: usize) -> [u8; N] {
        let mut b = [0u8; N];
        if let Some(src) = self.bytes.get(at..at + N) {
            b.copy_from_slice(src);
        }
        b
    }
}

/// The header at the start of `bytes`, checked: version and byte order from sizeof_hdr, the magic, dims,
/// datatype and vox_offset. Errors are the reason only; the caller names the source.
fn parse_header(bytes: &[u8]) -> std::result::Result<Header, String> {
    if bytes.len() < 4 {
        return Err(format!("{} bytes are too short for a NIfTI header (348 bytes, NIfTI-2 540)", bytes.len()));
    }
    let sizeof = |little| Fields { bytes, little }.i32(0);
    let (version, little, size) = match (sizeof(true), sizeof(false)) {
        (348, _) => (1, true, NIFTI1_HEADER),
        (540, _) => (2, true, NIFTI2_HEADER),
        (_, 348) => (1, false, NIFTI1_HEADER),
        (_, 540) => (2, false, NIFTI2_HEADER),
        (n, _) => {
            return Err(format!(
                "not a NIfTI file: sizeof_hdr is {n}, not 348 (NIfTI-1) or 540 (NIfTI-2) in either byte order"
            ));
        }
    };
    if bytes.len() < size {
        return Err(format!("truncated: the NIfTI-{version} header needs {size} bytes, the input has {}", bytes.len()));
    }
    let f = Fields { bytes, little };
    let magic: [u8; 4] = f.bytes(if version == 1 { 344 } else { 4 });
    let single = if version == 1 { *b"n+1\0" } else { *b"n+2\0" };
    let pair = if version == 1 { *b"ni1\0" } else { *b"ni2\0" };
    if magic == pair {
        return Err(format!(
            "the magic {:?} marks the header of a .hdr/.img pair; cliper reads single-file .nii",
            String::from_utf8_lossy(magic.get(..3).unwrap_or_default())
        ));
    }
    if magic != single {
        return Err(format!(
            "the magic is {magic:?}, not {:?} (a single-file NIfTI-{version})",
            String::from_utf8_lossy(single.get(..3).unwrap_or_default())
        ));
    }
    // Offsets of the fields in each version (NIfTI-1: nifti1.h; NIfTI-2: nifti2.h).
    let v1 = version == 1;
    let int = |at1: usize, at2: usize, wide: bool| {
        if v1 {
            f.i16(at1)
        } else if wide {
            f.i64(at2)
        } else {
            f.i32(at2)
        }
    };
    let float = |at1: usize, at2: usize| if v1 { f.f32(at1) } else { f.f64(at2) };
    let step = if v1 { 2 } else { 8 };
    let rank = int(40, 16, true);
    if !(1..=7).contains(&rank) {
        return Err(format!("dim[0] is {rank}: a NIfTI has 1 to 7 dimensions"));
    }
    let mut dims = Vec::new();
    for k in 1..=rank as usize {
        let d = int(40 + k * step, 16 + k * step, true);
        dims.push(usize::try_from(d).map_err(|_| format!("dim[{k}] is {d}: extents cannot be negative"))?);
    }
    let datatype = if v1 { f.i16(70) } else { f.i16(12) };
    let kind = Kind::of(datatype as i32)?;
    let mut pixdim = [0.0; 8];
    for (k, p) in pixdim.iter_mut().enumerate() {
        *p = float(76 + 4 * k, 104 + 8 * k);
    }
    let vox_offset = if v1 {
        let v = f.f32(108);
        if !(v.is_finite() && v >= 0.0 && v.fract() == 0.0) {
            return Err(format!("vox_offset {v} is not a whole number of bytes"));
        }
        v as u64
    } else {
        let v = f.i64(168);
        u64::try_from(v).map_err(|_| format!("vox_offset {v} is negative"))?
    };
    let first = size as u64 + 4;
    if vox_offset < first {
        return Err(format!(
            "vox_offset {vox_offset} lies inside the {first}-byte header (the {size}-byte NIfTI-{version} header and \
             its 4-byte extension flag)"
        ));
    }
    let mut srow = [[0.0; 4]; 3];
    for (r, row) in srow.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = float(280 + 16 * r + 4 * c, 400 + 32 * r + 8 * c);
        }
    }
    Ok(Header {
        little,
        dims,
        kind,
        pixdim,
        vox_offset,
        slope: float(112, 176),
        inter: float(116, 184),
        qform_code: int(252, 344, false) as i32,
        sform_code: int(254, 348, false) as i32,
        quatern: [float(256, 352), float(260, 360), float(264, 368)],
        qoffset: [float(268, 376), float(272, 384), float(276, 392)],
        srow,
        xyzt_units: if v1 { i32::from(bytes.get(123).copied().unwrap_or(0)) } else { f.i32(500) as i32 },
    })
}

impl Header {
    /// scl_slope and scl_inter when they apply — a slope non-zero and finite, as nibabel reads them — and a
    /// refusal of a non-finite intercept beside one.
    fn scale(&self) -> std::result::Result<Option<(f64, f64)>, String> {
        if self.slope == 0.0 || !self.slope.is_finite() {
            return Ok(None);
        }
        if !self.inter.is_finite() {
            return Err(format!("scl_slope is {} but scl_inter is {}", self.slope, self.inter));
        }
        Ok(Some((self.slope, self.inter)))
    }

    /// The bytes of data the dims need, or why they cannot be held.
    fn data_bytes(&self) -> std::result::Result<u64, String> {
        self.dims
            .iter()
            .try_fold(self.kind.size() as u64, |a, &d| a.checked_mul(d as u64))
            .filter(|&n| usize::try_from(n).is_ok())
            .ok_or_else(|| {
                format!("the header's dims {:?} of {} overflow the address space", self.dims, self.kind.name())
            })
    }

    /// nibabel's `img.affine` (`Nifti1Header.get_best_affine`), as nibabel gives it after `load` (which makes
    /// pixdim positive and a qfac other than −1 into 1).
    fn affine(&self) -> [[f64; 4]; 4] {
        let mut a = [[0.0, 0.0, 0.0, 0.0], [0.0; 4], [0.0; 4], [0.0, 0.0, 0.0, 1.0]];
        if self.sform_code != 0 {
            for (row, s) in a.iter_mut().zip(self.srow) {
                *row = s;
            }
        } else if self.qform_code != 0 {
            let [b, c, d] = self.quatern;
            let w2 = 1.0 - (b * b + c * c + d * d);
            // nibabel's fillpositive: a w² within 3 float32 epsilons of 0 is 0 (and one below that is an error
            // there; here it is 0 as well, the NIfTI reference library's choice).
            let w = if w2.abs() < 3.0 * f64::from(f32::EPSILON) || w2 < 0.0 { 0.0 } else { w2.sqrt() };
            let rotation = quaternion_matrix([w, b, c, d]);
            let qfac = if self.pixdim[0] == -1.0 { -1.0 } else { 1.0 };
            let zooms = [self.pixdim[1].abs(), self.pixdim[2].abs(), self.pixdim[3].abs() * qfac];
            for ((row, rotated), offset) in a.iter_mut().zip(rotation).zip(self.qoffset) {
                for ((out, r), z) in row.iter_mut().zip(rotated).zip(zooms) {
                    *out = r * z;
                }
                row[3] = offset;
            }
        } else {
            // nibabel's get_base_affine: shape_zoom_affine(dims, pixdims, x_flip=True), centred on the image.
            let mut shape = [1.0; 3];
            let mut zooms = [1.0; 3];
            let pixdims = [self.pixdim[1], self.pixdim[2], self.pixdim[3]];
            for ((s, z), (&d, p)) in shape.iter_mut().zip(zooms.iter_mut()).zip(self.dims.iter().zip(pixdims)) {
                *s = d as f64;
                *z = p.abs();
            }
            zooms[0] = -zooms[0];
            for (k, ((row, s), z)) in a.iter_mut().zip(shape).zip(zooms).enumerate() {
                if let Some(diagonal) = row.get_mut(k) {
                    *diagonal = z;
                }
                row[3] = -(s - 1.0) / 2.0 * z;
            }
        }
        a[3] = [0.0, 0.0, 0.0, 1.0];
        a
    }

    /// The geometry: the affine's, the space unit, and for 4-D and more the time step in seconds. `None` when
    /// the affine is degenerate (a zero or non-finite column, e.g. pixdim 0 without an sform or qform).
    fn geometry(&self) -> Option<Geometry> {
        let mut g = Geometry::from_affine(&self.affine()).ok()?;
        g.units = match self.xyzt_units & 0x07 {
            1 => SpaceUnit::Metre,
            2 => SpaceUnit::Millimetre,
            3 => SpaceUnit::Micrometre,
            _ => SpaceUnit::Unknown,
        };
        let seconds = match self.xyzt_units & 0x38 {
            0 | 8 => Some(1.0),
            16 => Some(1e-3),
            24 => Some(1e-6),
            _ => None, // Hz, ppm, rad/s: not a time step
        };
        let step = self.pixdim[4];
        g.time_step = match seconds {
            Some(s) if self.dims.len() >= 4 && step.is_finite() && step > 0.0 => Some(step * s),
            _ => None,
        };
        // Codes 1/1 are what a geometry without codes writes; 0/0 (nibabel's base affine, centred on this
        // file's grid) would not follow the voxels through a pad or a crop, so such a geometry writes 1/1 too.
        let codes = [self.qform_code, self.sform_code].map(|c| i16::try_from(c).unwrap_or(0));
        g.nifti_codes = (codes != [1, 1] && codes != [0, 0]).then_some(codes);
        Some(g)
    }
}

/// The rotation closest to a geometry's directions (i, j, k: columns, rows, slices), by Gram–Schmidt from the
/// columns, and the distance between neighbouring voxel planes along each of its axes: the directions and spacings
/// themselves when they are orthogonal (within 1e-6), as every scanner but a tilted CT gives them.
fn rigid_part(g: &Geometry) -> ([V3; 3], V3) {
    let [k, j, i] = g.direction;
    let [s_k, s_j, s_i] = g.spacing;
    if dot(i, j).abs() < 1e-6 && dot(i, k).abs() < 1e-6 && dot(j, k).abs() < 1e-6 {
        return ([i, j, k], [s_i, s_j, s_k]);
    }
    // `a` without its part along the unit vector `b`, normalised (left as it is if nothing is left).
    let orthogonal = |a: V3, b: V3| {
        let rest = difference(a, b.map(|x| x * dot(a, b)));
        unit(rest).unwrap_or(rest)
    };
    let j_rigid = orthogonal(j, i);
    let k_rigid = orthogonal(difference(k, i.map(|x| x * dot(k, i))), j_rigid);
    ([i, j_rigid, k_rigid], [s_i, s_j * dot(j, j_rigid), s_k * dot(k, k_rigid)])
}

/// nibabel's `quat2mat` of (w, x, y, z).
fn quaternion_matrix([w, x, y, z]: [f64; 4]) -> [[f64; 3]; 3] {
    let n = w * w + x * x + y * y + z * z;
    if n < f64::EPSILON {
        return [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    }
    let s = 2.0 / n;
    let (xs, ys, zs) = (x * s, y * s, z * s);
    let (wx, wy, wz) = (w * xs, w * ys, w * zs);
    let (xx, xy, xz) = (x * xs, x * ys, x * zs);
    let (yy, yz, zz) = (y * ys, y * zs, z * zs);
    [[1.0 - (yy + zz), xy - wz, xz + wy], [xy + wz, 1.0 - (xx + zz), yz - wx], [xz - wy, yz + wx, 1.0 - (xx + yy)]]
}

/// The quaternion (b, c, d) and qfac of the direction columns `r` (i, j, k) — nifti1_io's
/// `nifti_mat44_to_quatern` for an orthonormal matrix; a left-handed one gets qfac −1 and its k column negated.
fn matrix_quaternion(mut r: [[f64; 3]; 3]) -> ([f64; 3], f64) {
    let det = r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0])
        + r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
    let qfac = if det < 0.0 { -1.0 } else { 1.0 };
    for row in r.iter_mut() {
        row[2] *= qfac;
    }
    let [[r11, r12, r13], [r21, r22, r23], [r31, r32, r33]] = r;
    let trace = r11 + r22 + r33 + 1.0;
    let (a, mut b, mut c, mut d);
    if trace > 0.5 {
        a = 0.5 * trace.sqrt();
        b = 0.25 * (r32 - r23) / a;
        c = 0.25 * (r13 - r31) / a;
        d = 0.25 * (r21 - r12) / a;
    } else {
        let xd = 1.0 + r11 - (r22 + r33);
        let yd = 1.0 + r22 - (r11 + r33);
        let zd = 1.0 + r33 - (r11 + r22);
        if xd > 1.0 {
            b = 0.5 * xd.sqrt();
            c = 0.25 * (r12 + r21) / b;
            d = 0.25 * (r13 + r31) / b;
            a = 0.25 * (r32 - r23) / b;
        } else if yd > 1.0 {
            c = 0.5 * yd.sqrt();
            b = 0.25 * (r12 + r21) / c;
            d = 0.25 * (r23 + r32) / c;
            a = 0.25 * (r13 - r31) / c;
        } else {
            d = 0.5 * zd.sqrt();
            b = 0.25 * (r13 + r31) / d;
            c = 0.25 * (r23 + r32) / d;
            a = 0.25 * (r21 - r12) / d;
        }
        if a < 0.0 {
            (b, c, d) = (-b, -c, -d);
        }
    }
    ([b, c, d], qfac)
}

/// The file's bytes, inflated when gzipped — at most what the header claims (vox_offset and data), and only
/// when that claim fits what a deflate stream of this size can hold. The stream is read to its end all the same,
/// so that its CRC is checked: a corrupt `.nii.gz` is refused, not loaded with wrong voxels.
fn inflate(bytes: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let mut gz = Inflater::new(bytes, Wrapper::Gzip)?;
    let mut data = Vec::new();
    gz.read_up_to(NIFTI2_HEADER as u64, &mut data)?;
    let header = parse_header(&data)?;
    let needed = header.data_bytes()?.saturating_add(header.vox_offset);
    let limit = (bytes.len() as u64).saturating_mul(DEFLATE_RATIO);
    if needed > limit {
        return Err(format!(
            "the header claims {needed} bytes (vox_offset {} and the data of dims {:?} of {}), more than a {}-byte \
             gzip stream can hold (at most {limit})",
            header.vox_offset,
            header.dims,
            header.kind.name(),
            bytes.len()
        ));
    }
    let rest = needed.saturating_sub(data.len() as u64);
    crate::io::check_host_memory_text("the inflated NIfTI and its array", needed.saturating_mul(2))?;
    data.reserve(usize::try_from(rest).unwrap_or(0));
    gz.read_up_to(rest, &mut data)?;
    gz.finish()?;
    Ok(data)
}

fn decode(bytes: &[u8], path: &Path) -> Result<Image> {
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let inflated = inflate(bytes).map_err(bad)?;
        return decode_plain(&inflated, path);
    }
    decode_plain(bytes, path)
}

fn decode_plain(bytes: &[u8], path: &Path) -> Result<Image> {
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let h = parse_header(bytes).map_err(bad)?;
    let needed = h.data_bytes().map_err(bad)?;
    let available = (bytes.len() as u64).checked_sub(h.vox_offset).ok_or_else(|| {
        bad(format!("vox_offset {} lies past the end of the {}-byte file", h.vox_offset, bytes.len()))
    })?;
    if needed > available {
        return Err(bad(format!(
            "the header's dims {:?} of {} need {needed} bytes of data, the file has {available} after vox_offset {}",
            h.dims,
            h.kind.name(),
            h.vox_offset
        )));
    }
    // Both fit in usize: `needed` was checked to, and it is at most the input's length past vox_offset.
    let start = h.vox_offset as usize;
    let data = bytes.get(start..start + needed as usize).unwrap_or_default();
    let mut shape: Vec<usize> = h.dims.iter().rev().copied().collect();
    let endian = if h.little { Endian::Little } else { Endian::Big };
    let rewrap = |e: Error| match e {
        Error::Format { reason, .. } => bad(reason),
        other => other,
    };
    let mut scaling = None;
    let (array, colour) = match h.kind {
        Kind::Plain(dtype) => {
            let array = decode_raw(data, &RawFormat { shape, dtype, endian }).map_err(rewrap)?;
            let array = match h.scale().map_err(bad)? {
                Some((slope, inter)) => {
                    scaling = Scaling::applied(dtype, &[(slope, inter)]);
                    rescale(array, slope, inter)
                }
                None => array,
            };
            (array, false)
        }
        Kind::Colour(channels) => {
            // The file interleaves channels, fastest: [… Y, X, C]; cliper's colour axis is −3: [… C, Y, X].
            if shape.len() == 1 {
                shape.insert(0, 1);
            }
            let rank = shape.len() + 1;
            shape.push(channels);
            let interleaved = ArrayD::from_shape_vec(IxDyn(&shape), data.to_vec()).map_err(|e| bad(e.to_string()))?;
            let mut order: Vec<usize> = (0..rank - 3).collect();
            order.extend([rank - 1, rank - 3, rank - 2]);
            (HostArray::U8(interleaved.permuted_axes(order).as_standard_layout().into_owned()), true)
        }
    };
    Ok(Image { array, colour, geometry: h.geometry(), scaling })
}

/// The scl_slope and scl_inter [`read_nifti`] applies to a file's values — `None` when its slope is 0 or not
/// finite, as nibabel reads it — from the header alone (the first bytes, inflated when the file is gzipped). For
/// callers that must know of a rescale [`Image::scaling`] does not record: of 64-bit integers or of floating-point
/// samples, whose stored values it cannot give back exactly.
///
/// ```
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/nifti/");
/// assert_eq!(cliper::nifti_scale(format!("{dir}i16_scaled.nii.gz"))?, Some((0.5, -3.0)));
/// assert_eq!(cliper::nifti_scale(format!("{dir}f32.nii"))?, Some((1.0, 0.0))); // applied, and changes nothing
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn nifti_scale(path: impl AsRef<Path>) -> Result<Option<(f64, f64)>> {
    let path = path.as_ref();
    let mut head = first_bytes(path, open(path)?)?;
    if head.starts_with(&[0x1f, 0x8b]) {
        head = first_bytes(path, flate2::read::MultiGzDecoder::new(open(path)?))?;
    }
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    parse_header(&head).map_err(bad)?.scale().map_err(bad)
}

fn open(path: &Path) -> Result<std::fs::File> {
    std::fs::File::open(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })
}

/// The first bytes of `reader` (of the file at `path`), as many as the larger header and its extension flag take.
fn first_bytes(path: &Path, reader: impl std::io::Read) -> Result<Vec<u8>> {
    let mut head = Vec::with_capacity(NIFTI2_HEADER + 4);
    std::io::Read::read_to_end(&mut std::io::Read::take(reader, (NIFTI2_HEADER + 4) as u64), &mut head)
        .map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    Ok(head)
}

/// Where an uncompressed, single-file, non-colour NIfTI's voxels lie, for reading it a slab at a time: the raw
/// layout (cliper's axis order, nibabel's reversed), the byte they start at, the scaling (`scl_slope`,
/// `scl_inter`; `None` when there is none) and the geometry. `None` for files that must be read whole (gzipped,
/// colour).
pub(crate) fn slab_layout(path: &Path) -> Result<Option<SlabLayout>> {
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let head = first_bytes(path, open(path)?)?;
    if head.starts_with(&[0x1f, 0x8b]) {
        return Ok(None);
    }
    let h = parse_header(&head).map_err(bad)?;
    let Kind::Plain(dtype) = h.kind else { return Ok(None) };
    let shape: Vec<usize> = h.dims.iter().rev().copied().collect();
    let endian = if h.little { Endian::Little } else { Endian::Big };
    let scale = h.scale().map_err(bad)?;
    Ok(Some(SlabLayout {
        format: RawFormat { shape, dtype, endian },
        offset: h.vox_offset,
        scale,
        geometry: h.geometry(),
    }))
}

/// What [`slab_layout`] finds: the voxels' raw layout, where they start, the scaling and the geometry.
pub(crate) struct SlabLayout {
    pub(crate) format: RawFormat,
    pub(crate) offset: u64,
    pub(crate) scale: Option<(f64, f64)>,
    pub(crate) geometry: Option<Geometry>,
}

/// The bytes of a NIfTI-1 file holding `array` (see [`write_nifti`]) with `scaling`'s slope and intercept (else
/// 1 and 0), or why it cannot be written.
fn encode_nifti(
    array: &HostArray,
    colour: bool,
    geometry: Option<&Geometry>,
    scaling: Option<&Scaling>,
) -> std::result::Result<Vec<u8>, String> {
    let shape = array.shape().to_vec();
    let rank = shape.len();
    let (kind, spatial) = if colour {
        let channels = if rank >= 3 { shape.get(rank - 3).copied().unwrap_or(0) } else { 0 };
        if array.dtype() != Dtype::U8 || !(channels == 3 || channels == 4) {
            return Err(format!(
                "a colour NIfTI is RGB24 or RGBA32: u8 […, C, Y, X] with C = 3 or 4, not {} {shape:?}",
                array.dtype().name()
            ));
        }
        let spatial: Vec<usize> = shape.iter().enumerate().filter(|&(a, _)| a != rank - 3).map(|(_, &n)| n).collect();
        (Kind::Colour(channels), spatial)
    } else {
        (Kind::Plain(array.dtype()), shape.clone())
    };
    let dims: Vec<usize> = spatial.iter().rev().copied().collect();
    if dims.is_empty() || dims.len() > 7 {
        return Err(format!("shape {shape:?} has {} axes; a NIfTI holds 1 to 7", dims.len()));
    }
    if let Some(&big) = dims.iter().find(|&&n| n > i16::MAX as usize) {
        return Err(format!("shape {shape:?}: the extent {big} is more than NIfTI-1's 32767"));
    }
    let mut h = [0u8; NIFTI1_HEADER + 4];
    let mut put = |at: usize, value: &[u8]| {
        if let Some(dst) = h.get_mut(at..at + value.len()) {
            dst.copy_from_slice(value);
        }
    };
    put(0, &(NIFTI1_HEADER as i32).to_le_bytes());
    put(40, &(dims.len() as i16).to_le_bytes());
    for k in 0..7 {
        let n = dims.get(k).copied().unwrap_or(1) as i16;
        put(42 + 2 * k, &n.to_le_bytes());
    }
    let (code, bitpix) = kind.code();
    put(70, &code.to_le_bytes());
    put(72, &bitpix.to_le_bytes());
    // pixdim[4] stays 0 without a time step, so that reading back gives none.
    let mut pixdim = [1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0];
    let mut units = 0u8;
    if let Some(g) = geometry {
        // Columns i, j, k: the directions of the column, row and slice axes. The qform holds a rotation only: a
        // sheared geometry (a gantry-tilted CT) gets the rotation of its planes and the distance between them
        // there, and keeps its exact affine in the sform, which nibabel and cliper read first (dcm2niix's choice).
        let ([i, j, k], [between_columns, between_rows, between_slices]) = rigid_part(g);
        let (quatern, qfac) = matrix_quaternion([[i[0], j[0], k[0]], [i[1], j[1], k[1]], [i[2], j[2], k[2]]]);
        pixdim[0] = qfac;
        pixdim[1] = between_columns;
        pixdim[2] = between_rows;
        pixdim[3] = between_slices;
        units = match g.units {
            SpaceUnit::Unknown => 0,
            SpaceUnit::Metre => 1,
            SpaceUnit::Millimetre => 2,
            SpaceUnit::Micrometre => 3,
        };
        if let Some(step) = g.time_step {
            pixdim[4] = step;
            units |= 8;
        }
        let [qform_code, sform_code] = g.nifti_codes.unwrap_or([1, 1]);
        put(252, &qform_code.to_le_bytes());
        put(254, &sform_code.to_le_bytes());
        for (k, q) in quatern.iter().enumerate() {
            put(256 + 4 * k, &(*q as f32).to_le_bytes());
        }
        for (k, o) in g.origin.iter().enumerate() {
            put(268 + 4 * k, &(*o as f32).to_le_bytes());
        }
        for (r, row) in g.affine().iter().take(3).enumerate() {
            for (c, v) in row.iter().enumerate() {
                put(280 + 16 * r + 4 * c, &(*v as f32).to_le_bytes());
            }
        }
    }
    for (k, p) in pixdim.iter().enumerate() {
        put(76 + 4 * k, &(*p as f32).to_le_bytes());
    }
    put(108, &((NIFTI1_HEADER + 4) as f32).to_le_bytes());
    let (slope, intercept) = scaling.map_or((1.0, 0.0), |s| (s.slope, s.intercept));
    put(112, &(slope as f32).to_le_bytes());
    put(116, &(intercept as f32).to_le_bytes());
    put(123, &[units]);
    put(148, b"cliper");
    put(344, b"n+1\0");
    let mut bytes = Vec::with_capacity(h.len() + array.bytes() as usize);
    bytes.extend_from_slice(&h);
    match array {
        HostArray::U8(a) if colour => {
            // [… C, Y, X] → the file's interleaved [… Y, X, C].
            let mut order: Vec<usize> = (0..rank).filter(|&a| a != rank - 3).collect();
            order.push(rank - 3);
            bytes.extend(encode(a.view().permuted_axes(order).iter(), true))
        }
        _ => each_variant!(array, a => match a.as_slice() {
            Some(values) => append_encoded(&mut bytes, values, true),
            None => bytes.extend(encode(a.iter(), true)),
        }),
    };
    Ok(bytes)
}
