//! Loading and saving [`KData`] (k-space with optional coil sensitivity maps and sampling mask) as MAT files
//! (named variables) and as BART CFL pairs (`NAME`, `NAME_sens`, `NAME_mask`).

use super::cfl::{pair, with_suffix};
use super::cfl::{read_cfl, write_cfl};
use super::host_array::HostArray;
use super::mat::{read_mat, write_mat};
use super::source::{extension, extension_to_read};
use crate::app::ClApp;
use crate::data::{KData, XData};
use crate::element::{ComplexElement, Element};
use crate::error::{Error, Result};
use ndarray::{ArrayD, Axis, IxDyn};
use num_complex::{Complex32, Complex64};
use std::path::Path;

/// Where k-space lives in a MAT file: variable names and axis order. [`KData::load`] and [`KData::save`] use
/// [`KSpaceMat::default`]:
///
/// | variable | default name | shape (cliper order) | needed |
/// |---|---|---|---|
/// | k-space samples (complex) | `kspace` | `[frames…, coils, spatial…]` | yes |
/// | coil sensitivity maps (complex) | `sensitivity_maps` | `[coils, spatial…]` | no |
/// | sampling mask (real, 1 = acquired) | `mask` | `[spatial…]` or `[frames…, spatial…]` | no |
/// | number of spatial axes (scalar) | `spatial_dims` | `1 × 1` | no |
///
/// With `spatial_first` the file holds MATLAB's (and BART's) habitual order instead — `[spatial…, coils,
/// frames…]`, maps `[spatial…, coils]`, mask `[spatial…, frames…]` — and is reordered on loading; the order
/// within the spatial and within the frame axes is kept. Shapes and indices are MATLAB's, as scipy.io.loadmat
/// gives them.
///
/// The number of spatial axes comes from, in this order: the `spatial_dims` field, the `spatial_dims` variable,
/// the sensitivity maps (their rank − 1), and otherwise 2 (1 for a 2-axis k-space).
///
/// ```
/// use cliper::KSpaceMat;
/// let names = KSpaceMat::default();
/// assert_eq!((names.kspace.as_str(), names.sensitivity_maps.as_str()), ("kspace", "sensitivity_maps"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KSpaceMat {
    /// Name of the k-space variable.
    pub kspace: String,
    /// Name of the sensitivity-map variable (skipped when the file has none).
    pub sensitivity_maps: String,
    /// Name of the mask variable (skipped when the file has none).
    pub mask: String,
    /// The number of spatial axes, when the file does not say.
    pub spatial_dims: Option<usize>,
    /// The file's arrays put the spatial axes first (MATLAB habit) rather than last (cliper order).
    pub spatial_first: bool,
    /// Round the values to the element type's precision (complex128 data into complex64 arrays) instead of
    /// refusing values that would change.
    pub round: bool,
}

impl Default for KSpaceMat {
    fn default() -> KSpaceMat {
        KSpaceMat {
            kspace: "kspace".into(),
            sensitivity_maps: "sensitivity_maps".into(),
            mask: "mask".into(),
            spatial_dims: None,
            spatial_first: false,
            round: false,
        }
    }
}

/// The values of `a` as `E`: exactly (an error naming the first value that would change), or rounded to `E`'s
/// precision with `round`.
fn elements<E: Element>(a: &HostArray, path: &Path, round: bool) -> Result<ArrayD<E>> {
    if round && (E::IS_COMPLEX || !matches!(a, HostArray::C32(_) | HostArray::C64(_))) {
        Ok(a.to_elements::<Complex64>(path)?.mapv(E::from_c64))
    } else {
        a.to_elements::<E>(path)
    }
}

/// The name of the scalar variable that records the number of spatial axes.
const SPATIAL_DIMS_VARIABLE: &str = "spatial_dims";

/// BART's coil dimension and the first of the dimensions that frame axes map to (`TIME_DIM`, then
/// `TIME2_DIM`, `LEVEL_DIM`, … up to the 16 dimensions BART has).
const BART_COIL_DIM: usize = 3;
const BART_FIRST_FRAME_DIM: usize = 10;
const BART_DIMS: usize = 16;

/// `[spatial(d), coils, frames…]` → `[frames…, coils, spatial(d)]`, the order within each group kept.
fn spatial_last<E: Clone>(a: ArrayD<E>, spatial: usize) -> ArrayD<E> {
    let n = a.ndim();
    let order: Vec<usize> = (spatial + 1..n).chain([spatial]).chain(0..spatial).collect();
    a.permuted_axes(IxDyn(&order))
}

/// `[frames(m)…, coils, spatial…]` → `[spatial…, coils, frames(m)…]`, the inverse of [`spatial_last`].
fn spatial_first<E: Clone>(a: ArrayD<E>, frames: usize) -> ArrayD<E> {
    let n = a.ndim();
    let order: Vec<usize> = (frames + 1..n).chain([frames]).chain(0..frames).collect();
    a.permuted_axes(IxDyn(&order))
}

/// Moves the first `k` axes to the end, keeping their order: a mask's `[spatial…, frames…]` → `[frames…,
/// spatial…]` with `k` = spatial axes, and back with `k` = frame axes.
fn rotate_axes<E: Clone>(a: ArrayD<E>, k: usize) -> ArrayD<E> {
    let order: Vec<usize> = (k..a.ndim()).chain(0..k).collect();
    a.permuted_axes(IxDyn(&order))
}

/// `a` reshaped to `want` when the two shapes differ only by axes of extent 1; otherwise `a` back unchanged.
fn fit_shape<E: Clone>(a: ArrayD<E>, want: &[usize]) -> std::result::Result<ArrayD<E>, ArrayD<E>> {
    let squeezed = |s: &[usize]| s.iter().copied().filter(|&n| n != 1).collect::<Vec<_>>();
    if a.shape() == want {
        return Ok(a);
    }
    if squeezed(a.shape()) != squeezed(want) {
        return Err(a);
    }
    // Same elements in the same order: only the axes of 1 change (to_shape copies only when it must).
    let reshaped = a.to_shape(IxDyn(want)).map(|v| v.into_owned()).ok();
    reshaped.ok_or(a)
}

/// Pads a CFL array (trailing extents of 1 dropped) back to BART's 16 dimensions.
fn bart_dims<E: Clone>(a: ArrayD<E>, path: &Path) -> Result<ArrayD<E>> {
    if a.ndim() > BART_DIMS {
        return Err(Error::Format {
            path: path.to_path_buf(),
            reason: format!("BART arrays have at most {BART_DIMS} dimensions, this one {:?}", a.shape()),
        });
    }
    let mut a = a;
    while a.ndim() < BART_DIMS {
        let n = a.ndim();
        a.insert_axis_inplace(Axis(n));
    }
    Ok(a)
}

/// BART's names of its dimensions, for messages.
const BART_DIM_NAMES: [&str; BART_DIMS] = [
    "READ", "PHS1", "PHS2", "COIL", "MAPS", "TE", "COEFF", "COEFF2", "ITER", "CSHIFT", "TIME", "TIME2", "LEVEL",
    "SLICE", "AVG", "BATCH",
];

/// The number of spatial axes of a BART array: `PHS2` counts when it is more than 1, `PHS1` when it or `PHS2`
/// is, `READ` always.
fn bart_spatial_dims(shape: &[usize]) -> usize {
    let more_than_one = |axis: usize| shape.get(axis).is_some_and(|&n| n > 1);
    if more_than_one(2) {
        3
    } else if more_than_one(1) {
        2
    } else {
        1
    }
}

/// Drops the BART dimensions `keep` rejects (given the dimension and its extent); a dropped one must have
/// extent 1, else the error says which dimension of `what` did not fit.
fn squeeze_bart<E: Clone>(
    a: ArrayD<E>,
    path: &Path,
    what: &str,
    keep: impl Fn(usize, usize) -> bool,
) -> Result<ArrayD<E>> {
    let mut a = bart_dims(a, path)?;
    for (axis, name) in BART_DIM_NAMES.iter().enumerate().rev() {
        let Some(&extent) = a.shape().get(axis) else { continue };
        if keep(axis, extent) {
            continue;
        }
        if extent != 1 {
            return Err(Error::Format {
                path: path.to_path_buf(),
                reason: format!(
                    "{what} has extent {extent} in BART dimension {axis} ({name}), which must be 1 here (dimensions {:?})",
                    a.shape()
                ),
            });
        }
        a = a.index_axis_move(Axis(axis), 0);
    }
    Ok(a)
}

/// A BART k-space array `[READ, PHS1, PHS2, COIL, …]` in cliper order `[frames…, coils, spatial…]`: unused
/// spatial dimensions and every other dimension of extent 1 dropped, the rest become frames in BART's order.
/// Sensitivity maps from a BART CFL pair (`[READ, PHS1, PHS2, COIL, MAPS…]`, one set) as `[coils, spatial…]`.
fn bart_maps<T: ComplexElement>(path: &Path, spatial: usize) -> Result<ArrayD<T>> {
    let maps = read_cfl(path)?.to_elements::<T>(path)?;
    let maps = squeeze_bart(maps, path, "the sensitivity maps", |axis, _| axis < spatial || axis == BART_COIL_DIM)?;
    Ok(spatial_last(maps, spatial))
}

fn from_bart<E: Clone>(a: ArrayD<E>, path: &Path) -> Result<(ArrayD<E>, usize)> {
    let a = bart_dims(a, path)?;
    let spatial = bart_spatial_dims(a.shape());
    let a = squeeze_bart(a, path, "k-space", |axis, n| axis < spatial || axis == BART_COIL_DIM || n > 1)?;
    Ok((spatial_last(a, spatial), spatial))
}

/// A cliper-order array `[frames…, coils, spatial…]` in BART's dimensions: spatial axes at `READ…PHS2`, coils at
/// `COIL`, frame axes from `TIME` on.
fn to_bart<E: Clone>(a: ArrayD<E>, spatial: usize, path: &Path) -> Result<ArrayD<E>> {
    let frames = a.ndim() - spatial - 1;
    if frames > BART_DIMS - BART_FIRST_FRAME_DIM {
        return Err(Error::Format {
            path: path.to_path_buf(),
            reason: format!(
                "BART has room for {} frame dimensions (TIME onwards), this k-space has {frames}",
                BART_DIMS - BART_FIRST_FRAME_DIM
            ),
        });
    }
    let mut a = spatial_first(a, frames);
    for axis in spatial..BART_COIL_DIM {
        a.insert_axis_inplace(Axis(axis));
    }
    for axis in BART_COIL_DIM + 1..BART_FIRST_FRAME_DIM {
        if frames > 0 {
            a.insert_axis_inplace(Axis(axis));
        }
    }
    Ok(a)
}

/// Images `[frames…, spatial…]` (the last `spatial` axes, 1 to 3, spatial) in BART's layout, as `bart pics`
/// writes a reconstruction of several frames: the spatial axes at READ…PHS2, the frame axes from BART dimension
/// `first_frame_dim` on (TIME, 10, for k-space read as [`crate::KData`]: its frames' BART dimensions are not
/// kept). One frame is returned as it is.
///
/// ```
/// use cliper::{HostArray, images_to_bart_layout};
/// let frames = HostArray::zeros(cliper::Dtype::C32, &[3, 40, 38]);
/// assert_eq!(images_to_bart_layout(&frames, 2, 10)?.shape(), &[40, 38, 1, 1, 1, 1, 1, 1, 1, 1, 3]);
/// assert_eq!(images_to_bart_layout(&frames, 2, 5)?.shape(), &[40, 38, 1, 1, 1, 3]);
/// assert!(images_to_bart_layout(&frames, 4, 10).is_err());
/// assert!(images_to_bart_layout(&frames, 2, 3).is_err());
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn images_to_bart_layout(images: &HostArray, spatial: usize, first_frame_dim: usize) -> Result<HostArray> {
    let ndim = images.shape().len();
    let frames = ndim.saturating_sub(spatial);
    let room = BART_DIMS.saturating_sub(first_frame_dim);
    if !(1..=3).contains(&spatial) || spatial > ndim || first_frame_dim <= BART_COIL_DIM || frames > room {
        return Err(Error::invalid(
            "images_to_bart_layout",
            format!(
                "images of shape {:?} with {spatial} spatial axes and frames from BART dimension {first_frame_dim}: \
                 BART holds 1 to 3 spatial axes, and frames past the coils (dimension 3), {room} of them from there",
                images.shape(),
            ),
        ));
    }
    if frames == 0 {
        return Ok(images.clone());
    }
    let order: Vec<usize> = (frames..ndim).chain(0..frames).collect();
    let moved = images.permuted(&order);
    let mut shape: Vec<usize> = moved.shape().iter().take(spatial).copied().collect();
    shape.resize(first_frame_dim, 1);
    shape.extend(moved.shape().iter().skip(spatial));
    // Axes of one inserted into a row-major array keep every element's place.
    let reshape_error = |e: ndarray::ShapeError| Error::invalid("images_to_bart_layout", e.to_string());
    macro_rules! each {
        ($($v:ident),*) => {
            match moved {
                $(HostArray::$v(a) => HostArray::$v(a.into_shape_with_order(ndarray::IxDyn(&shape)).map_err(reshape_error)?),)*
            }
        };
    }
    Ok(each!(U8, U16, U32, U64, I8, I16, I32, I64, F32, F64, C32, C64))
}

/// Whether a CFL pair exists for `base`.
fn cfl_exists(base: &Path) -> bool {
    let (hdr, cfl) = pair(base);
    hdr.exists() || cfl.exists()
}

/// A complex CFL mask as real numbers (its imaginary parts must be zero).
fn real_mask(a: ArrayD<Complex32>, path: &Path) -> Result<HostArray> {
    if let Some(z) = a.iter().find(|z| z.im != 0.0) {
        return Err(Error::Format {
            path: path.to_path_buf(),
            reason: format!("a sampling mask is real, but this one holds {z}"),
        });
    }
    Ok(HostArray::F32(a.mapv(|z| z.re)))
}

impl<T: ComplexElement> KData<T> {
    /// Loads k-space by extension: `.mat` with [`KSpaceMat::default`] names (see [`KData::load_mat`]), or a
    /// BART CFL pair `NAME.cfl`/`NAME.hdr` with `NAME_sens` (sensitivity maps) and `NAME_mask` (sampling mask)
    /// beside it when they exist (see [`KData::load_cfl`]). Values convert to `T` without loss.
    ///
    /// ```
    /// use cliper::{ClApp, KData};
    /// use num_complex::Complex32;
    /// let app = ClApp::new()?;
    /// let k = KData::<Complex32>::load(&app, concat!(env!("CARGO_MANIFEST_DIR"), "/data/kspace.mat"))?;
    /// assert_eq!((k.num_coils(), k.spatial_shape()), (8, &[64, 64][..]));
    /// assert!(k.sensitivity_maps().is_some() && k.sampling_mask().is_some());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn load(app: &ClApp, path: impl AsRef<Path>) -> Result<KData<T>> {
        let path = path.as_ref();
        match extension_to_read(path)?.as_str() {
            "mat" => KData::load_mat(app, path, &KSpaceMat::default()),
            "cfl" | "hdr" => KData::load_cfl(app, path),
            other => Err(kspace_extension(path, other)),
        }
    }

    /// Saves by extension: `.mat` with [`KSpaceMat::default`] (compressed, cliper order, `spatial_dims`
    /// recorded), or `.cfl`/`.hdr` as BART pairs (see [`KData::save_cfl`]). Every file is written atomically.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        match extension(path)?.as_str() {
            "mat" => self.save_mat(path, &KSpaceMat::default()),
            "cfl" | "hdr" => self.save_cfl(path),
            other => Err(kspace_extension(path, other)),
        }
    }

    /// Loads k-space, and the sensitivity maps and mask when the file has them, from a MAT file with the
    /// names and axis order of `names`. A missing k-space variable is an error that lists the variables the
    /// file has.
    ///
    /// ```
    /// use cliper::{ClApp, KData, KSpaceMat, XData};
    /// use num_complex::Complex32;
    /// let app = ClApp::new()?;
    /// let path = std::env::temp_dir().join(format!("cliper-doc-kmat-{}.mat", std::process::id()));
    /// // MATLAB habit: [x, y, coils]
    /// let raw: Vec<Complex32> = (0..4 * 6 * 3).map(|i| Complex32::new(i as f32, 1.0)).collect();
    /// let x = XData::from_slice(&app, &[4, 6, 3], &raw)?;
    /// cliper::write_mat(&path, &[("raw", &cliper::HostArray::C32(x.to_ndarray()?))], false)?;
    /// let names = KSpaceMat { kspace: "raw".into(), spatial_first: true, ..KSpaceMat::default() };
    /// let k = KData::<Complex32>::load_mat(&app, &path, &names)?;
    /// assert_eq!((k.num_coils(), k.spatial_shape()), (3, &[4, 6][..]));
    /// assert_eq!(k.as_xdata().to_vec()?[1], raw[3]); // coil 1 of sample (0, 0)
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn load_mat(app: &ClApp, path: impl AsRef<Path>, names: &KSpaceMat) -> Result<KData<T>> {
        let path = path.as_ref();
        KData::from_mat_variables(app, read_mat(path)?, path, names)
    }

    /// [`KData::load_mat`] on the variables of a MAT file already read (`read_mat`), for callers that looked at
    /// them first (their types, say); `path` names the file in errors.
    ///
    /// ```
    /// use cliper::{ClApp, KData, KSpaceMat, read_mat};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/kspace.mat");
    /// let variables = read_mat(path)?;
    /// let k = KData::<num_complex::Complex32>::from_mat_variables(&ClApp::new()?, variables, path.as_ref(), &KSpaceMat::default())?;
    /// assert_eq!(k.num_coils(), 8);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn from_mat_variables(
        app: &ClApp,
        mut variables: Vec<(String, HostArray)>,
        path: &Path,
        names: &KSpaceMat,
    ) -> Result<KData<T>> {
        let listed: Vec<String> = variables.iter().map(|(n, _)| n.clone()).collect();
        let mut take = |name: &str| variables.iter().position(|(n, _)| n == name).map(|i| variables.remove(i).1);
        let Some(kspace) = take(&names.kspace) else {
            return Err(Error::Format {
                path: path.to_path_buf(),
                reason: format!("no k-space variable {:?}; the file holds {listed:?}", names.kspace),
            });
        };
        let maps = take(&names.sensitivity_maps);
        let mask = take(&names.mask);
        let recorded = take(SPATIAL_DIMS_VARIABLE);
        let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
        let spatial = match (names.spatial_dims, recorded, &maps) {
            (Some(d), _, _) => d,
            (None, Some(v), _) => {
                let v = v.to_elements::<f64>(path)?;
                match v.iter().next() {
                    Some(&d) if v.len() == 1 && (1.0..=3.0).contains(&d) && d.fract() == 0.0 => d as usize,
                    _ => return Err(bad(format!("`{SPATIAL_DIMS_VARIABLE}` must be one number 1, 2 or 3, not {v}"))),
                }
            }
            (None, None, Some(m)) => m.shape().len().saturating_sub(1).max(1),
            (None, None, None) => {
                if kspace.shape().len() >= 3 {
                    2
                } else {
                    1
                }
            }
        };
        let mut kspace = elements::<T>(&kspace, path, names.round)?;
        let mut maps = maps.map(|m| elements::<T>(&m, path, names.round)).transpose()?;
        let mask = mask.map(|m| elements::<T::Real>(&m, path, names.round)).transpose()?;
        if names.spatial_first {
            // MATLAB drops trailing extents of 1: a single coil's axis comes back here.
            while kspace.ndim() < spatial + 1 {
                kspace.insert_axis_inplace(Axis(kspace.ndim()));
            }
            kspace = spatial_last(kspace, spatial);
            maps = maps.map(|mut m| {
                while m.ndim() < spatial + 1 {
                    m.insert_axis_inplace(Axis(m.ndim()));
                }
                spatial_last(m, spatial)
            });
        }
        let mut k = KData::new(XData::from_ndarray(app, &kspace)?, spatial)?;
        if let Some(m) = maps {
            k = k.with_sensitivity_maps(XData::from_ndarray(app, &m)?)?;
        }
        if let Some(m) = mask {
            // MAT arrays have at least two axes and MATLAB drops trailing 1s, so a mask may come back with
            // axes of 1 added or missing: fit it to the k-space's spatial (or frame + spatial) shape when only
            // such axes differ, and let with_sampling_mask name any real mismatch.
            let spatial_shape = k.spatial_shape().to_vec();
            let frames = k.frame_shape().to_vec();
            let m = match fit_shape(m, &spatial_shape) {
                Ok(fitted) => fitted,
                Err(m) if names.spatial_first => {
                    let in_file: Vec<usize> = spatial_shape.iter().chain(&frames).copied().collect();
                    fit_shape(m, &in_file).map(|m| rotate_axes(m, spatial)).unwrap_or_else(|m| m)
                }
                Err(m) => {
                    let per_frame: Vec<usize> = frames.iter().chain(&spatial_shape).copied().collect();
                    fit_shape(m, &per_frame).unwrap_or_else(|m| m)
                }
            };
            k = k.with_sampling_mask(XData::from_ndarray(app, &m)?)?;
        }
        Ok(k)
    }

    /// Saves k-space (and the maps and mask when attached) to a compressed MAT file under the names and in the
    /// axis order of `names`, with the number of spatial axes as the scalar `spatial_dims`, atomically.
    /// scipy.io.loadmat and MATLAB read it; [`KData::load_mat`] with the same `names` gives the same `KData`.
    pub fn save_mat(&self, path: impl AsRef<Path>, names: &KSpaceMat) -> Result<()> {
        let spatial = self.spatial_shape().len();
        let frames = self.frame_shape().len();
        let mut kspace = self.as_xdata().to_ndarray()?;
        let mut maps = self.sensitivity_maps().map(XData::to_ndarray).transpose()?;
        let mut mask = self.sampling_mask().map(XData::to_ndarray).transpose()?;
        if names.spatial_first {
            kspace = spatial_first(kspace, frames);
            maps = maps.map(|m| spatial_first(m, 0));
            mask = mask.map(|m| {
                let mask_frames = m.ndim() - spatial;
                rotate_axes(m, mask_frames)
            });
        }
        let kspace = HostArray::from_elements(kspace);
        let maps = maps.map(HostArray::from_elements);
        let mask = mask.map(HostArray::from_elements);
        let spatial_dims = HostArray::F64(ArrayD::from_elem(IxDyn(&[1, 1]), spatial as f64));
        let mut variables: Vec<(&str, &HostArray)> =
            vec![(names.kspace.as_str(), &kspace), (SPATIAL_DIMS_VARIABLE, &spatial_dims)];
        if let Some(m) = &maps {
            variables.push((names.sensitivity_maps.as_str(), m));
        }
        if let Some(m) = &mask {
            variables.push((names.mask.as_str(), m));
        }
        write_mat(path, &variables, true)
    }

    /// Loads a BART CFL pair (`NAME.cfl`, `NAME.hdr` or `NAME`), plus `NAME_sens` (maps, BART
    /// `[READ, PHS1, PHS2, COIL]`, one set of maps) and `NAME_mask` (real values, `[READ, PHS1, PHS2]` and frame
    /// dimensions) when present. BART's `[READ, PHS1, PHS2, COIL, …, TIME, …]` becomes `[frames…, coils,
    /// spatial…]`: `PHS2` is spatial when it is more than 1 (and `PHS1` when it or `PHS2` is), other
    /// dimensions of extent 1 are dropped, and the rest are frame axes in BART's order.
    pub fn load_cfl(app: &ClApp, path: impl AsRef<Path>) -> Result<KData<T>> {
        let path = path.as_ref();
        let data = read_cfl(path)?.to_elements::<T>(path)?;
        let (kspace, spatial) = from_bart(data, path)?;
        let mut k = KData::new(XData::from_ndarray(app, &kspace)?, spatial)?;
        let sens = with_suffix(path, "_sens");
        if cfl_exists(&sens) {
            k = k.with_sensitivity_maps(XData::from_ndarray(app, &bart_maps::<T>(&sens, spatial)?)?)?;
        }
        let mask_base = with_suffix(path, "_mask");
        if cfl_exists(&mask_base) {
            let mask = real_mask(read_cfl(&mask_base)?.to_elements::<Complex32>(&mask_base)?, &mask_base)?;
            let mask = squeeze_bart(mask.to_elements::<T::Real>(&mask_base)?, &mask_base, "the mask", |axis, n| {
                axis < spatial || (axis > BART_COIL_DIM && n > 1)
            })?;
            k = k.with_sampling_mask(XData::from_ndarray(app, &rotate_axes(mask, spatial))?)?;
        }
        Ok(k)
    }

    /// The k-space with sensitivity maps read from their own file: a BART CFL pair (`bart ecalib` writes
    /// `[READ, PHS1, PHS2, COIL, MAPS]`; one set of maps) or any array file holding `[coils, spatial…]`
    /// (NPY, MAT's only variable, …). The maps must have this k-space's coils and spatial shape.
    ///
    /// ```
    /// use cliper::{KData, XData};
    /// use num_complex::Complex32;
    /// let app = cliper::ClApp::new()?;
    /// let dir = std::env::temp_dir().join(format!("cliper-doc-maps-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let maps = ndarray::Array::from_elem((2, 4, 3), Complex32::new(0.5, 0.0)).into_dyn();
    /// cliper::write_npy(dir.join("maps.npy"), &cliper::HostArray::C32(maps))?;
    /// let k = KData::new(XData::<Complex32>::zeros(&app, &[2, 4, 3])?, 2)?.with_maps_file(dir.join("maps.npy"))?;
    /// assert_eq!(k.sensitivity_maps().unwrap().shape(), &[2, 4, 3]);
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_maps_file(self, path: impl AsRef<Path>) -> Result<KData<T>> {
        let path = path.as_ref();
        let app = self.as_xdata().app().clone();
        let spatial = self.spatial_shape().len();
        let is_cfl = matches!(extension(path).unwrap_or_default().as_str(), "cfl" | "hdr") || cfl_exists(path);
        let maps = if is_cfl {
            bart_maps::<T>(path, spatial)?
        } else {
            super::file::read_file(path)?.to_elements::<T>(path)?
        };
        let expected: Vec<usize> = [self.num_coils()].iter().chain(self.spatial_shape()).copied().collect();
        if maps.shape() != expected.as_slice() {
            let op = format!("sensitivity maps {}", path.display());
            return Err(Error::shape_because(op, &expected, maps.shape(), "the k-space's [coils, spatial…]"));
        }
        self.with_sensitivity_maps(XData::from_ndarray(&app, &maps)?)
    }

    /// Saves as BART CFL pairs: `NAME.hdr`/`NAME.cfl` (k-space in BART's dimensions: spatial axes at
    /// `READ…PHS2`, coils at `COIL`, frame axes from `TIME` on), `NAME_sens` for the maps and `NAME_mask` for
    /// the mask when attached; every file atomically. CFL holds complex64: `c64` k-space must be exactly
    /// representable in it.
    pub fn save_cfl(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let spatial = self.spatial_shape().len();
        let kspace = to_bart(self.as_xdata().to_ndarray()?, spatial, path)?;
        write_cfl(path, &HostArray::from_elements(kspace))?;
        if let Some(maps) = self.sensitivity_maps() {
            let sens = with_suffix(path, "_sens");
            write_cfl(&sens, &HostArray::from_elements(to_bart(maps.to_ndarray()?, spatial, &sens)?))?;
        }
        if let Some(mask) = self.sampling_mask() {
            let base = with_suffix(path, "_mask");
            // A mask is [frames…, spatial…]: give it a coil axis of 1 and it is laid out like k-space.
            let mask = mask.to_ndarray()?;
            let frames = mask.ndim() - spatial;
            let with_coil = mask.insert_axis(Axis(frames));
            write_cfl(&base, &HostArray::from_elements(to_bart(with_coil, spatial, &base)?))?;
        }
        Ok(())
    }
}

/// The error for a k-space path whose extension holds no k-space (an image format, or an unknown one).
fn kspace_extension(path: &Path, ext: &str) -> Error {
    Error::Format {
        path: path.to_path_buf(),
        reason: format!(
            "k-space files are .mat (variables kspace, sensitivity_maps, mask) or BART .cfl/.hdr, not .{ext}"
        ),
    }
}
