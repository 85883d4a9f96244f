//! `cliper recon FILE.h5 OUT`: MRI raw data in HDF5 (ISMRMRD or fastMRI) reconstructed as the other k-space files
//! are, then cut to the header's reconstruction matrix (readout oversampling removed; fastMRI's centre crop).

use cliper::chain::AnyData;
use cliper::prelude::*;
use cliper::{MriRaw, Result, read_mri_h5};
use num_complex::Complex64;
use std::ops::Range;
use std::path::Path;

/// Whether `path` names an HDF5 file by its extension (.h5, .hdf5).
pub fn is_h5(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("h5") || e.eq_ignore_ascii_case("hdf5"))
}

/// What an HDF5 raw-data file adds to its k-space: the ranges of the image's spatial axes that the header's
/// reconstruction matrix keeps, and the file as read (its header, its own reconstruction).
pub struct H5Extras {
    pub keep: Vec<Range<usize>>,
    pub raw: MriRaw,
}

/// Reads `path` into k-space of `T` (`[frames, coils, spatial…]` on the device), multiplied by √N (N the spatial size): `recon`'s inverse FFT scales by 1/N as
/// numpy's `ifftn` does, so the images come out on the unitary transform's scale (fastMRI's `ifft2c`, `norm="ortho"`),
/// the scale of the file's own `reconstruction_rss`.
pub fn load<T: ComplexElement>(app: &ClApp, path: &Path) -> Result<(KData<T>, H5Extras)> {
    let raw = read_mri_h5(path)?;
    let spatial = raw.shape.len() - 2;
    let unitary = (raw.shape.get(2..).unwrap_or_default().iter().product::<usize>() as f64).sqrt();
    let values: Vec<T> =
        raw.kspace.iter().map(|v| T::from_c64(Complex64::new(v.re.into(), v.im.into()) * unitary)).collect();
    let k = KData::new(XData::from_slice(app, &raw.shape, &values)?, spatial)?;
    let full = raw.shape.get(2..).unwrap_or_default();
    let keep = full.iter().zip(raw.recon_shape()).map(|(&n, m)| (n - m) / 2..(n - m) / 2 + m).collect();
    Ok((k, H5Extras { keep, raw }))
}

/// `image` (`[frames…, spatial…]`) cut to `keep` along its last axes.
pub fn crop(image: AnyData, keep: &[Range<usize>]) -> Result<AnyData> {
    fn cut<E: Element>(x: XData<E>, keep: &[Range<usize>]) -> Result<XData<E>> {
        let first = x.ndim() - keep.len();
        let cut = keep.iter().enumerate().try_fold(x, |x, (i, r)| x.slice_axis(first + i, r.clone()))?;
        cut.contiguous()
    }
    Ok(match image {
        AnyData::F32(x) => AnyData::F32(cut(x, keep)?),
        AnyData::F64(x) => AnyData::F64(cut(x, keep)?),
        AnyData::C32(x) => AnyData::C32(cut(x, keep)?),
        AnyData::C64(x) => AnyData::C64(cut(x, keep)?),
    })
}

/// `|image − reference| / |reference|` against the file's own reconstruction (fastMRI's `reconstruction_rss`), when
/// it holds one of the image's shape.
pub fn against_reference(image: &AnyData, raw: &MriRaw) -> Result<Option<f64>> {
    let Some((shape, reference)) = &raw.reference else { return Ok(None) };
    let values: Vec<f64> = match image {
        AnyData::F32(x) if x.shape() == shape.as_slice() => x.to_vec()?.iter().map(|&v| f64::from(v)).collect(),
        AnyData::F64(x) if x.shape() == shape.as_slice() => x.to_vec()?,
        _ => return Ok(None),
    };
    let (mut diff, mut norm) = (0.0f64, 0.0f64);
    for (a, &b) in values.iter().zip(reference) {
        diff += (a - f64::from(b)).powi(2);
        norm += f64::from(b).powi(2);
    }
    Ok((norm > 0.0).then(|| (diff / norm).sqrt()))
}
