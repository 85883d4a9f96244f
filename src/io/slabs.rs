//! Arrays in files taken a slab at a time — a range of indices along one axis — so that an image larger than the
//! memory at hand can be processed piece by piece: RAW and C-order NPY files are read with positioned reads
//! (the process holds one slab, not the file: memory maps would count every page touched as resident), and
//! written the same way into a temporary file that replaces the destination only when complete.

use super::host_array::{Dtype, HostArray, each_variant};
use super::npy;
use super::raw::{Endian, RawFormat};
use super::sample::encode;
use super::save::{PendingSave, commit, prepare_open};
use super::source::data_bytes;
use crate::error::{Error, Result};
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// A RAW or NPY file read a slab at a time.
///
/// ```
/// use cliper::{HostArray, SlabFile, write_npy};
/// let path = std::env::temp_dir().join(format!("cliper-doc-slab-{}.npy", std::process::id()));
/// let a = ndarray::Array::from_shape_fn((5, 3), |(i, j)| (10 * i + j) as f32).into_dyn();
/// write_npy(&path, &HostArray::F32(a.clone()))?;
/// let file = SlabFile::open(&path)?;
/// assert_eq!(file.shape(), &[5, 3]);
/// let rows = file.read(0, 1..3)?; // rows 1 and 2
/// assert_eq!(rows, HostArray::F32(a.slice(ndarray::s![1..3, ..]).to_owned().into_dyn()));
/// assert_eq!(file.read(1, 2..3)?.shape(), &[5, 1]); // one column: five pieces of the file
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Debug)]
pub struct SlabFile {
    path: PathBuf,
    file: File,
    format: RawFormat,
    /// Where the elements start.
    offset: u64,
}

impl SlabFile {
    /// Opens an NPY file (C order; any element type NPY files hold here) to be read in slabs.
    pub fn open(path: impl AsRef<Path>) -> Result<SlabFile> {
        let path = path.as_ref();
        let (dtype, shape, endian, offset, fortran) = npy::layout(path)?;
        if fortran {
            return Err(Error::Format {
                path: path.to_path_buf(),
                reason: "Fortran-order NPY files cannot be read in slabs; save it in C order (numpy's default)".into(),
            });
        }
        SlabFile::open_at(path, RawFormat { shape, dtype, endian }, offset)
    }

    /// Opens a RAW file of `format` (its size must match) to be read in slabs.
    pub fn open_raw(path: impl AsRef<Path>, format: &RawFormat) -> Result<SlabFile> {
        SlabFile::open_at(path.as_ref(), format.clone(), 0)
    }

    fn open_at(path: &Path, format: RawFormat, offset: u64) -> Result<SlabFile> {
        let file = File::open(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        let size = file.metadata().map_err(|source| Error::Io { path: path.to_path_buf(), source })?.len();
        let what = format!("shape {:?} of {}", format.shape, format.dtype.name());
        data_bytes(&format.shape, format.dtype.size(), size.saturating_sub(offset), path, &what)?;
        Ok(SlabFile { path: path.to_path_buf(), file, format, offset })
    }

    /// The whole array's shape.
    pub fn shape(&self) -> &[usize] {
        &self.format.shape
    }

    /// The element type in the file.
    pub fn dtype(&self) -> Dtype {
        self.format.dtype
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The elements with index `rows` along `axis` (all of every other axis), as an array of the file's type.
    pub fn read(&self, axis: usize, rows: Range<usize>) -> Result<HostArray> {
        let shape = &self.format.shape;
        let (outer, inner, slab) = slab_geometry(shape, axis, &rows, &self.path)?;
        let size = self.format.dtype.size();
        let piece = rows.len() * inner * size;
        let mut bytes = vec![0u8; outer * piece];
        let extent = shape.get(axis).copied().unwrap_or(1);
        for (o, chunk) in bytes.chunks_mut(piece.max(1)).enumerate().take(outer) {
            let at = self.offset + ((o * extent + rows.start) * inner * size) as u64;
            self.file.read_exact_at(chunk, at).map_err(|source| Error::Io { path: self.path.clone(), source })?;
        }
        RawFormat { shape: slab, ..self.format.clone() }.decode_named(&bytes, &self.path)
    }
}

/// For a slab `rows` of `axis`: the number of pieces (the product of the axes before), the elements per index of
/// the axis (the product of the axes after), and the slab's shape.
fn slab_geometry(shape: &[usize], axis: usize, rows: &Range<usize>, path: &Path) -> Result<(usize, usize, Vec<usize>)> {
    let extent = shape.get(axis).copied().ok_or_else(|| Error::Format {
        path: path.to_path_buf(),
        reason: format!("has shape {shape:?}, which has no axis {axis}"),
    })?;
    if rows.start > rows.end || rows.end > extent {
        return Err(Error::Format {
            path: path.to_path_buf(),
            reason: format!("slab {rows:?} of axis {axis} is outside the shape {shape:?}"),
        });
    }
    let outer = shape.iter().take(axis).product();
    let inner = shape.iter().skip(axis + 1).product();
    let mut slab = shape.to_vec();
    if let Some(s) = slab.get_mut(axis) {
        *s = rows.len();
    }
    Ok((outer, inner, slab))
}

/// An NPY or RAW file written a slab at a time into a temporary file beside its destination, renamed over it by
/// [`SlabWriter::finish`]; dropped unfinished (an error, an interrupted run) it leaves nothing behind.
///
/// ```
/// use cliper::{Dtype, HostArray, SlabWriter, read_npy};
/// let path = std::env::temp_dir().join(format!("cliper-doc-slabw-{}.npy", std::process::id()));
/// let mut out = SlabWriter::npy(&path, Dtype::U16, &[4, 2])?;
/// out.write(0, 2, &HostArray::U16(ndarray::arr2(&[[5u16, 6], [7, 8]]).into_dyn()))?;
/// out.write(0, 0, &HostArray::U16(ndarray::arr2(&[[1u16, 2], [3, 4]]).into_dyn()))?;
/// assert!(!path.exists()); // not until finished
/// out.finish()?;
/// assert_eq!(read_npy(&path)?, HostArray::U16(ndarray::arr2(&[[1u16, 2], [3, 4], [5, 6], [7, 8]]).into_dyn()));
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct SlabWriter {
    path: PathBuf,
    pending: PendingSave,
    file: File,
    format: RawFormat,
    offset: u64,
}

impl SlabWriter {
    /// A C-order NPY file of `dtype` and `shape` (numpy reads it back exactly).
    pub fn npy(path: impl AsRef<Path>, dtype: Dtype, shape: &[usize]) -> Result<SlabWriter> {
        let header = npy::header(dtype, shape);
        let format = RawFormat { shape: shape.to_vec(), dtype, endian: Endian::Little };
        SlabWriter::create(path.as_ref(), format, &header)
    }

    /// A RAW file of `format`.
    pub fn raw(path: impl AsRef<Path>, format: &RawFormat) -> Result<SlabWriter> {
        SlabWriter::create(path.as_ref(), format.clone(), &[])
    }

    fn create(path: &Path, format: RawFormat, header: &[u8]) -> Result<SlabWriter> {
        let (pending, file) = prepare_open(path)?;
        let io = |source| Error::Io { path: path.to_path_buf(), source };
        file.write_all_at(header, 0).map_err(io)?;
        let bytes = format.shape.iter().product::<usize>() * format.dtype.size();
        // The full size at once: slabs may come in any order, and a disk that is too small says so now.
        file.set_len(header.len() as u64 + bytes as u64).map_err(io)?;
        Ok(SlabWriter { path: path.to_path_buf(), pending, file, format, offset: header.len() as u64 })
    }

    /// Writes `slab` (the file's element type; the whole of every axis but `axis`) at index `start` of `axis`.
    pub fn write(&mut self, axis: usize, start: usize, slab: &HostArray) -> Result<()> {
        let shape = &self.format.shape;
        let rows = start..start + slab.shape().get(axis).copied().unwrap_or(0);
        let (outer, inner, expected) = slab_geometry(shape, axis, &rows, &self.path)?;
        if slab.shape() != expected.as_slice() || slab.dtype() != self.format.dtype {
            return Err(Error::Format {
                path: self.path.clone(),
                reason: format!(
                    "a slab of shape {:?} ({}) does not fit rows {rows:?} of axis {axis} of {shape:?} ({})",
                    slab.shape(),
                    slab.dtype().name(),
                    self.format.dtype.name()
                ),
            });
        }
        let little = self.format.endian == Endian::Little;
        let bytes = each_variant!(slab, a => encode(a.iter(), little));
        let size = self.format.dtype.size();
        let piece = rows.len() * inner * size;
        let extent = shape.get(axis).copied().unwrap_or(1);
        for (o, chunk) in bytes.chunks(piece.max(1)).enumerate().take(outer) {
            let at = self.offset + ((o * extent + rows.start) * inner * size) as u64;
            self.file.write_all_at(chunk, at).map_err(|source| Error::Io { path: self.path.clone(), source })?;
        }
        Ok(())
    }

    /// Flushes the file to disk and renames it over the destination.
    pub fn finish(self) -> Result<()> {
        self.file.sync_all().map_err(|source| Error::Io { path: self.path.clone(), source })?;
        drop(self.file);
        commit(vec![self.pending])
    }
}
