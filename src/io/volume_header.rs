//! What the two text-header volume formats of ITK and 3D Slicer — NRRD (`nrrd.rs`) and MetaImage
//! (`metaimage.rs`) — share: data that is RAW or gzipped after the header or in a file beside it, axes listed
//! fastest first, and geometry as one direction vector per axis in LPS or RAS world coordinates.

use super::geometry::Geometry;
use super::host_array::HostArray;
use super::image::Image;
use super::inflate::{Wrapper, inflate_checked};
use super::raw::{Endian, RawFormat};
use super::source::MEMORY;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// How the samples are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    Raw,
    /// gzip (NRRD) or zlib (MetaImage, as ITK writes it): told apart by the first two bytes.
    Deflated,
}

/// The world frame a header's vectors are in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// DICOM's and ITK's: x to the patient's left, y posterior, z superior.
    Lps,
    /// NIfTI's and cliper's.
    Ras,
    /// Left, anterior, superior (NRRD's `left-anterior-superior`).
    Las,
}

/// A header's description of a volume, whatever the format.
pub(crate) struct Volume {
    /// Extents, fastest axis first (as both formats list them).
    pub sizes: Vec<usize>,
    pub format: RawFormat,
    pub encoding: Encoding,
    /// The file the data is in (the header's own for attached data), for messages, and where the data starts.
    pub data_file: PathBuf,
    pub offset: u64,
    /// Bytes to skip from the end instead, when the header says the data is the file's last bytes (NRRD `byte
    /// skip: -1`).
    pub from_end: bool,
    /// The fastest axis holds colour channels (RGB/RGBA).
    pub colour: bool,
    /// One direction vector per spatial axis, fastest first, scaled by the spacing, in `frame`.
    pub axes: Vec<[f64; 3]>,
    pub origin: [f64; 3],
    pub frame: Frame,
    /// Whether the header gave any geometry at all.
    pub has_geometry: bool,
}

/// The largest factor gzip's deflate can expand data by (RFC 1951: 258 bytes from a 2-bit symbol, with headers):
/// a header's size claim beyond 1032 × the compressed size cannot be true.
const DEFLATE_RATIO: u64 = 1032;

impl Volume {
    /// Decodes the data from `bytes` (the data file's, or the header file's own for attached data) and builds
    /// the image: the array in cliper's order (the listed axes reversed, a colour axis moved before the two
    /// image axes) with its geometry. Errors name `self.data_file`.
    pub fn decode(&self, bytes: &[u8]) -> Result<(HostArray, bool, Option<Geometry>)> {
        let bad = |reason: String| Error::Format { path: self.data_file.clone(), reason };
        let shape: Vec<usize> = self.sizes.iter().rev().copied().collect();
        let format = RawFormat { shape: shape.clone(), ..self.format.clone() };
        let needed = shape
            .iter()
            .try_fold(format.dtype.size() as u64, |a, &b| a.checked_mul(b as u64))
            .ok_or_else(|| bad(format!("the header's sizes {:?} overflow", self.sizes)))?;
        let size = bytes.len() as u64;
        let start = if self.from_end { size.saturating_sub(needed) } else { self.offset };
        let rest = usize::try_from(start).ok().and_then(|s| bytes.get(s..)).ok_or_else(|| {
            bad(format!("the data should start at byte {start}, past the end of the {size}-byte file"))
        })?;
        let available = rest.len() as u64;
        let claim = |limit: u64, what: String| {
            if needed > limit {
                Err(bad(format!(
                    "the header's sizes {:?} of {} need {needed} bytes of data, {what}",
                    self.sizes,
                    format.dtype.name()
                )))
            } else {
                Ok(())
            }
        };
        let inflated;
        let data = match self.encoding {
            Encoding::Raw => {
                claim(available, format!("the file has {available} after byte {start}"))?;
                rest.get(..needed as usize).unwrap_or_default()
            }
            Encoding::Deflated => {
                claim(
                    available.saturating_mul(DEFLATE_RATIO),
                    format!("more than the {available} compressed bytes after byte {start} can hold"),
                )?;
                crate::io::check_host_memory(
                    &self.data_file,
                    "the inflated data and its array",
                    needed.saturating_mul(2),
                )?;
                // The whole stream is inflated (its trailer's checksum checked), keeping the bytes the header
                // claims; a stream holding more or fewer is refused.
                let (out, total) = inflate_checked(rest, Wrapper::gzip_or_zlib(rest), needed)
                    .map_err(|e| bad(format!("the compressed data from byte {start}: {e}")))?;
                if total != needed {
                    return Err(bad(format!(
                        "the header's sizes {:?} of {} need {needed} bytes of data, the compressed data holds {total}",
                        self.sizes,
                        format.dtype.name(),
                    )));
                }
                inflated = out;
                &inflated
            }
        };
        let mut array = format.decode_named(data, &self.data_file)?;
        let colour = self.colour && shape.len() >= 3;
        if colour {
            // Channels are the fastest axis, now the last: cliper keeps them before the two image axes.
            let n = shape.len();
            let mut order: Vec<usize> = (0..n - 1).collect();
            order.insert(n - 3, n - 1);
            array = array.permuted(&order);
        }
        Ok((array, colour, if self.has_geometry { Some(self.geometry()?) } else { None }))
    }

    /// The geometry of the spatial axes (the first three listed: i, j, k), converted to RAS.
    fn geometry(&self) -> Result<Geometry> {
        let to_ras = |v: [f64; 3]| match self.frame {
            Frame::Ras => v,
            Frame::Lps => [-v[0], -v[1], v[2]],
            Frame::Las => [-v[0], v[1], v[2]],
        };
        // A 2-D image's missing third axis is a unit step along z.
        let unit = |k: usize| [0, 1, 2].map(|c| f64::from(u8::from(c == k)));
        let axis = |k: usize| self.axes.get(k).copied().map(to_ras).unwrap_or(unit(k));
        let (i, j, k) = (axis(0), axis(1), axis(2));
        let o = to_ras(self.origin);
        let affine =
            [[i[0], j[0], k[0], o[0]], [i[1], j[1], k[1], o[1]], [i[2], j[2], k[2], o[2]], [0.0, 0.0, 0.0, 1.0]];
        Geometry::from_affine(&affine).map_err(|e| Error::Format {
            path: self.data_file.clone(),
            reason: format!("the header's axes do not make a geometry: {e}"),
        })
    }
}

/// A header parser: the volume the header in `bytes` describes and, when the data is in a file of its own, that
/// file. `path` names the header in errors.
pub(crate) type Parse = fn(&[u8], &Path) -> Result<(Volume, Option<PathBuf>)>;

/// Whether a header's data file may lie outside the header's folder; off unless [`allow_data_outside`] turns it
/// on for the process.
static DATA_OUTSIDE_ALLOWED: AtomicBool = AtomicBool::new(false);

/// Lets NRRD (`.nhdr`) and MetaImage (`.mhd`) headers name data files outside their own folder — `../x.raw`,
/// an absolute path, a symbolic link leading elsewhere — for the rest of the process (the CLI's
/// `--allow-data-outside`). Off by default: a header is data, and a downloaded one must not make cliper read,
/// say, `/etc/passwd` into an output.
///
/// ```
/// cliper::allow_data_outside(true); // this process trusts its headers
/// # cliper::allow_data_outside(false);
/// ```
pub fn allow_data_outside(allow: bool) {
    DATA_OUTSIDE_ALLOWED.store(allow, Ordering::Relaxed);
}

/// The data file a header at `header` names, checked to lie in the header's own folder once both are canonical
/// (symbolic links and `..` resolved), unless [`allow_data_outside`] said otherwise.
fn confined_data_file(header: &Path, named: &Path) -> Result<PathBuf> {
    if DATA_OUTSIDE_ALLOWED.load(Ordering::Relaxed) {
        return Ok(named.to_path_buf());
    }
    let canonical = |p: &Path| std::fs::canonicalize(p).map_err(|source| Error::Io { path: p.to_path_buf(), source });
    let folder = header.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let (folder, data) = (canonical(folder)?, canonical(named)?);
    if data.parent() != Some(folder.as_path()) {
        return Err(Error::Format {
            path: header.to_path_buf(),
            reason: format!(
                "the header's data file {} is {}, outside the header's folder {}; a data file must lie beside its \
                 header (--allow-data-outside, or cliper::allow_data_outside, reads it anyway)",
                named.display(),
                data.display(),
                folder.display()
            ),
        });
    }
    Ok(data)
}

/// Reads the file at `path` with `parse` and its data, attached or beside it.
pub(crate) fn read_volume(path: &Path, parse: Parse) -> Result<Image> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    let (volume, detached) = parse(&bytes, path)?;
    let (array, colour, geometry) = match detached {
        Some(file) => {
            let file = confined_data_file(path, &file)?;
            let data = std::fs::read(&file).map_err(|source| Error::Io { path: file.clone(), source })?;
            volume.decode(&data)?
        }
        None => volume.decode(&bytes)?,
    };
    Ok(Image { array, colour, geometry, scaling: None })
}

/// Reads a header with attached data from `bytes` in memory; a header naming a data file of its own is an error.
pub(crate) fn decode_volume(bytes: &[u8], parse: Parse) -> Result<Image> {
    let source = Path::new(MEMORY);
    let (volume, detached) = parse(bytes, source)?;
    if let Some(file) = detached {
        return Err(Error::Format {
            path: source.to_path_buf(),
            reason: format!("the header names a data file {}; bytes in memory hold attached data only", file.display()),
        });
    }
    let (array, colour, geometry) = volume.decode(bytes)?;
    Ok(Image { array, colour, geometry, scaling: None })
}

/// `text` as `count` numbers, or an error naming `what`.
pub(crate) fn numbers(text: &str, what: &str, path: &Path) -> Result<Vec<f64>> {
    text.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.parse::<f64>().map_err(|_| Error::Format {
                path: path.to_path_buf(),
                reason: format!("`{t}` in the {what} `{text}` is not a number"),
            })
        })
        .collect()
}

/// Extents: positive whole numbers, 1 to 16 of them.
pub(crate) fn extents(text: &str, what: &str, path: &Path) -> Result<Vec<usize>> {
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let sizes: Vec<usize> = text
        .split_whitespace()
        .map(|t| t.parse::<usize>().map_err(|_| bad(format!("`{t}` in the {what} `{text}` is not a size"))))
        .collect::<Result<_>>()?;
    if sizes.is_empty() || sizes.len() > 16 {
        return Err(bad(format!("the {what} `{text}` should list 1 to 16 sizes")));
    }
    Ok(sizes)
}

/// The byte order given as little/big.
pub(crate) fn endian(big: bool) -> Endian {
    if big { Endian::Big } else { Endian::Little }
}
