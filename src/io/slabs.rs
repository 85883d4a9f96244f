//! Arrays in files taken a slab at a time — a range of indices along one axis — so that an image larger than the
//! memory at hand can be processed piece by piece: RAW and C-order NPY files are read with positioned reads
//! (the process holds one slab, not the file: a map of the whole file would count every page touched as
//! resident), and written into a temporary file that replaces the destination only when complete — by copies
//! through maps of the part being written, from many threads, for files in memory (tmpfs), or by positioned
//! writes (disks, machines of few cores, a file system without room for the whole file; positioned::mapped_writes).

use super::geometry::Geometry;
use super::host_array::{Dtype, HostArray, each_variant};
use super::host_budget::check_host_memory;
use super::npy;
use super::raw::{Endian, RawFormat};
use super::rescale::rescale;
use super::sample::encode;
use super::save::{PendingSave, commit, prepare_open};
use super::source::data_bytes;
use super::tiff::TiffSlabs;
use crate::app::ffi::MappedFile;
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
    /// A NIfTI's `scl_slope` and `scl_inter`, applied to each slab as the whole-file reader applies them.
    scale: Option<(f64, f64)>,
    geometry: Option<Geometry>,
    /// A TIFF's pages or strips, decoded per slab (its samples may be compressed).
    tiff: Option<TiffSlabs>,
    /// The array's shape; for a Fortran-order NPY, `format.shape` is the file's own (row-major) layout, this
    /// shape reversed.
    shape: Vec<usize>,
    /// Whether the elements are in Fortran (column-major) order: axis `k` of the array is axis `n − 1 − k` of
    /// the file's layout.
    fortran: bool,
}

impl SlabFile {
    /// Opens an NPY file (C or Fortran order; any element type NPY files hold here) to be read in slabs. A
    /// Fortran-order file is the row-major file of the reversed shape: a slab of axis `k` is read as a slab of
    /// that file's axis `n − 1 − k` and its axes reversed (slabs of the first axis are then many short pieces
    /// of the file: fine for tiles, slower than the same slab of a C-order file).
    ///
    /// ```
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fortran_i16_5x7.npy");
    /// let file = cliper::SlabFile::open(path)?;
    /// let whole = cliper::read_npy(path)?;
    /// assert_eq!(file.shape(), &[5, 7]);
    /// assert_eq!(file.read(0, 1..3)?, whole.slab(0, 1..3).unwrap());
    /// assert_eq!(file.read(1, 2..7)?, whole.slab(1, 2..7).unwrap());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<SlabFile> {
        let path = path.as_ref();
        let (dtype, shape, endian, offset, fortran) = npy::layout(path)?;
        let stored: Vec<usize> = if fortran { shape.iter().rev().copied().collect() } else { shape.clone() };
        let mut file = SlabFile::open_at(path, RawFormat { shape: stored, dtype, endian }, offset)?;
        file.shape = shape;
        file.fortran = fortran;
        Ok(file)
    }

    /// Opens a RAW file of `format` (its size must match) to be read in slabs.
    pub fn open_raw(path: impl AsRef<Path>, format: &RawFormat) -> Result<SlabFile> {
        SlabFile::open_at(path.as_ref(), format.clone(), 0)
    }

    /// Opens an uncompressed NIfTI (`.nii`, grey values) to be read in slabs, with its geometry and scaling;
    /// `None` for a gzipped or colour NIfTI, which is read whole ([`crate::read_nifti`]).
    ///
    /// ```
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/nifti/nifti2_f32.nii");
    /// let file = cliper::SlabFile::open_nifti(path)?.expect("plain NIfTI");
    /// let whole = cliper::read_nifti(path)?;
    /// assert_eq!(file.shape(), whole.array.shape());
    /// assert_eq!(file.read(0, 1..3)?, whole.array.slab(0, 1..3).unwrap());
    /// assert_eq!(file.geometry(), whole.geometry.as_ref());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn open_nifti(path: impl AsRef<Path>) -> Result<Option<SlabFile>> {
        let path = path.as_ref();
        let Some(super::nifti::SlabLayout { format, offset, scale, geometry }) = super::nifti::slab_layout(path)?
        else {
            return Ok(None);
        };
        let mut file = SlabFile::open_at(path, format, offset)?;
        file.scale = scale;
        file.geometry = geometry;
        Ok(Some(file))
    }

    /// Opens a grey TIFF to be read in slabs along its first axis: the rows of a single page stored in strips
    /// (compressed or not), or the pages of a multi-page stack (BigTIFF too); `None` for what is read whole
    /// ([`crate::read_tiff`]: colour, complex, tiled pages, fewer than 8 bits per sample).
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("cliper-doc-tiff-slab-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let path = dir.join("stack.tif");
    /// let a = ndarray::Array::from_shape_fn((4, 6, 5), |(k, i, j)| (k * 100 + i * 10 + j) as u16).into_dyn();
    /// cliper::write_tiff(&path, &cliper::HostArray::U16(a.clone()))?; // four pages
    /// let file = cliper::SlabFile::open_tiff(&path)?.expect("a grey stack");
    /// assert_eq!(file.read(0, 1..3)?, cliper::HostArray::U16(a.slice(ndarray::s![1..3, .., ..]).to_owned().into_dyn()));
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_tiff(path: impl AsRef<Path>) -> Result<Option<SlabFile>> {
        let path = path.as_ref();
        let Some(tiff) = TiffSlabs::open(path)? else { return Ok(None) };
        let file = File::open(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        let format = RawFormat { shape: tiff.shape.clone(), dtype: tiff.dtype, endian: Endian::Little };
        Ok(Some(SlabFile {
            path: path.to_path_buf(),
            file,
            shape: format.shape.clone(),
            format,
            offset: 0,
            scale: None,
            geometry: None,
            tiff: Some(tiff),
            fortran: false,
        }))
    }

    /// Where the voxels lie (NIfTI files); `None` for NPY and RAW.
    pub fn geometry(&self) -> Option<&Geometry> {
        self.geometry.as_ref()
    }

    fn open_at(path: &Path, format: RawFormat, offset: u64) -> Result<SlabFile> {
        let file = File::open(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        let size = file.metadata().map_err(|source| Error::Io { path: path.to_path_buf(), source })?.len();
        let what = format!("shape {:?} of {}", format.shape, format.dtype.name());
        data_bytes(&format.shape, format.dtype.size(), size.saturating_sub(offset), path, &what)?;
        Ok(SlabFile {
            path: path.to_path_buf(),
            file,
            shape: format.shape.clone(),
            format,
            offset,
            scale: None,
            geometry: None,
            tiff: None,
            fortran: false,
        })
    }

    /// The whole array's shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
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
    ///
    /// Elements in this machine's byte order are read straight into the array (no decoding pass), in pieces of
    /// up to 64 MiB on several threads: a slab of a file in the page cache comes at memory speed.
    pub fn read(&self, axis: usize, rows: Range<usize>) -> Result<HostArray> {
        if let Some(tiff) = &self.tiff {
            return match axis {
                0 => tiff.read(rows),
                _ => Err(Error::Format {
                    path: self.path.clone(),
                    reason: format!("a TIFF is read in slabs of its first axis, not axis {axis}"),
                }),
            };
        }
        // The slab, and a second copy where it is decoded, reordered or rescaled.
        let slab_bytes = slab_geometry(&self.shape, axis, &rows, &self.path)
            .map(|(outer, inner, _)| (outer * rows.len() * inner * self.format.dtype.size()) as u64)?;
        let native = (self.format.endian == Endian::Little) == cfg!(target_endian = "little");
        let copies = if self.fortran || self.scale.is_some() || !native { 2 } else { 1 };
        let what = format!(
            "a slab of {} indices of axis {axis} of {:?} ({})",
            rows.len(),
            self.shape,
            self.format.dtype.name()
        );
        check_host_memory(&self.path, &what, slab_bytes.saturating_mul(copies))?;
        let array = if self.fortran {
            // The array's axis is the stored layout's axis counted from the end; the slab comes back with its axes
            // reversed, row-major again.
            let stored_axis = self.shape.len().checked_sub(axis + 1).ok_or_else(|| Error::Format {
                path: self.path.clone(),
                reason: format!("has shape {:?}, which has no axis {axis}", self.shape),
            })?;
            let reversed: Vec<usize> = (0..self.shape.len()).rev().collect();
            self.read_stored(stored_axis, rows)?.permuted(&reversed)
        } else {
            self.read_stored(axis, rows)?
        };
        Ok(match self.scale {
            Some((slope, inter)) => rescale(array, slope, inter),
            None => array,
        })
    }

    /// The slab as the file stores it (before a NIfTI's scaling).
    fn read_stored(&self, axis: usize, rows: Range<usize>) -> Result<HostArray> {
        let shape = &self.format.shape;
        let (outer, inner, slab) = slab_geometry(shape, axis, &rows, &self.path)?;
        let size = self.format.dtype.size();
        let piece = rows.len() * inner * size;
        let extent = shape.get(axis).copied().unwrap_or(1);
        let native = (self.format.endian == Endian::Little) == cfg!(target_endian = "little");
        // Where the bytes of output byte `b` lie in the file.
        let at = |b: usize| {
            self.offset + (((b / piece.max(1)) * extent + rows.start) * inner * size + b % piece.max(1)) as u64
        };
        let fill = |bytes: &mut [u8]| -> Result<()> {
            // Parts of up to `PIECE` bytes: whole pieces of the file where they are smaller (a part's pieces are
            // read one after another), else a piece's share.
            let most = super::positioned::PIECE;
            let chunk = most / piece.max(1) * piece.max(1);
            let chunk = if chunk == 0 { piece.clamp(1, most) } else { chunk };
            super::positioned::read_in_pieces(bytes, chunk, |k, part| {
                let mut done = 0;
                while done < part.len() {
                    let b = k * chunk + done;
                    let run = (piece - b % piece).min(part.len() - done);
                    let target = part.get_mut(done..done + run).unwrap_or_default();
                    self.file.read_exact_at(target, at(b))?;
                    done += run;
                }
                Ok(())
            })
            .map_err(|source| Error::Io { path: self.path.clone(), source })
        };
        if !native {
            let mut bytes = vec![0u8; outer * piece];
            fill(&mut bytes)?;
            return RawFormat { shape: slab, ..self.format.clone() }.decode_named(&bytes, &self.path);
        }
        let count = outer * rows.len() * inner;
        macro_rules! typed {
            ($variant:ident, $t:ty) => {{
                let mut values = vec![<$t>::default(); count];
                fill(bytemuck::cast_slice_mut(&mut values))?;
                HostArray::$variant(
                    ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&slab), values)
                        .map_err(|e| Error::Format { path: self.path.clone(), reason: e.to_string() })?,
                )
            }};
        }
        Ok(match self.format.dtype {
            Dtype::U8 => typed!(U8, u8),
            Dtype::U16 => typed!(U16, u16),
            Dtype::U32 => typed!(U32, u32),
            Dtype::U64 => typed!(U64, u64),
            Dtype::I8 => typed!(I8, i8),
            Dtype::I16 => typed!(I16, i16),
            Dtype::I32 => typed!(I32, i32),
            Dtype::I64 => typed!(I64, i64),
            Dtype::F32 => typed!(F32, f32),
            Dtype::F64 => typed!(F64, f64),
            Dtype::C32 => typed!(C32, num_complex::Complex32),
            Dtype::C64 => typed!(C64, num_complex::Complex64),
        })
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
/// [`SlabWriter::finish`]; dropped unfinished (an error, an interrupted run) it leaves nothing behind. Slabs are
/// written at their positions in any order, from several threads at once if need be (`write` takes `&self`).
///
/// ```
/// use cliper::{Dtype, HostArray, SlabWriter, read_npy};
/// let path = std::env::temp_dir().join(format!("cliper-doc-slabw-{}.npy", std::process::id()));
/// let out = SlabWriter::npy(&path, Dtype::U16, &[4, 2])?;
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
    /// The file mapped for copies from many threads, where that pays ([`super::positioned::mapped_writes`]) and
    /// the file system has room for all of it ([`MappedFile::new`]); positioned writes otherwise.
    mapped: Option<MappedFile>,
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

    /// The file, made at its full length; written through maps where [`super::positioned::mapped_writes`] says so.
    fn create(path: &Path, format: RawFormat, header: &[u8]) -> Result<SlabWriter> {
        SlabWriter::create_with(path, format, header, super::positioned::mapped_writes)
    }

    /// The file, made at its full length; written through maps where `maps(file)` says so and its file system has
    /// room for all of it.
    fn create_with(
        path: &Path,
        format: RawFormat,
        header: &[u8],
        maps: impl Fn(&File) -> Result<bool>,
    ) -> Result<SlabWriter> {
        let (pending, file) = prepare_open(path)?;
        let io = |source| Error::Io { path: path.to_path_buf(), source };
        file.write_all_at(header, 0).map_err(io)?;
        let bytes = format.shape.iter().product::<usize>() * format.dtype.size();
        // The full size at once: slabs may come in any order. (The file is sparse until written: a disk too small
        // for it is found by MappedFile::new's check, or by the positioned write that does not fit.)
        file.set_len(header.len() as u64 + bytes as u64).map_err(io)?;
        let mapped = if maps(&file)? { MappedFile::new(&file) } else { None };
        Ok(SlabWriter { path: path.to_path_buf(), pending, file, mapped, format, offset: header.len() as u64 })
    }

    /// Writes `slab` (the file's element type; the whole of every axis but `axis`) at index `start` of `axis`.
    pub fn write(&self, axis: usize, start: usize, slab: &HostArray) -> Result<()> {
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
        let encoded;
        let bytes = match self.native_bytes(slab) {
            Some(b) => b,
            None => {
                encoded = each_variant!(slab, a => encode(a.iter(), self.format.endian == Endian::Little));
                encoded.as_slice()
            }
        };
        let size = self.format.dtype.size();
        let piece = rows.len() * inner * size;
        let extent = shape.get(axis).copied().unwrap_or(1);
        // One piece per index of the axes before: their order does not matter (the inode lock serialises them).
        bytes.chunks(piece.max(1)).enumerate().take(outer).try_for_each(|(o, chunk)| {
            self.write_at(self.offset + ((o * extent + rows.start) * inner * size) as u64, chunk)
        })
    }

    /// The array's memory as the file's bytes: a contiguous array when the file is in this machine's byte order.
    fn native_bytes<'a>(&self, array: &'a HostArray) -> Option<&'a [u8]> {
        let native = (self.format.endian == Endian::Little) == cfg!(target_endian = "little");
        if native { each_variant!(array, a => a.as_slice().map(bytemuck::cast_slice::<_, u8>)) } else { None }
    }

    /// Writes `bytes` at byte `at`, in pieces on threads of their own ([`super::positioned`]): copies into the
    /// file's memory map where it has one, positioned writes otherwise.
    fn write_at(&self, at: u64, bytes: &[u8]) -> Result<()> {
        use super::positioned::{MAPPED_WRITES, POSITIONED_WRITES, write_pieces};
        match &self.mapped {
            Some(map) => write_pieces(bytes, at, MAPPED_WRITES, |o, piece| map.write(o, piece)),
            None => write_pieces(bytes, at, POSITIONED_WRITES, |o, piece| self.file.write_all_at(piece, o)),
        }
        .map_err(|source| Error::Io { path: self.path.clone(), source })
    }

    /// Writes indices `local` along the first axis of `tile` (the file's type; the file's shape but along that
    /// axis) at index `start`: without a copy when the tile is contiguous and in this machine's byte order.
    ///
    /// ```
    /// use cliper::{Dtype, HostArray, SlabWriter, read_npy};
    /// let path = std::env::temp_dir().join(format!("cliper-doc-rows-{}.npy", std::process::id()));
    /// let tile = HostArray::U8(ndarray::arr2(&[[9u8, 9], [1, 2], [3, 4], [9, 9]]).into_dyn());
    /// let out = SlabWriter::npy(&path, Dtype::U8, &[2, 2])?;
    /// out.write_rows(0, &tile, 1..3)?; // the tile's rows 1 and 2 become the file's rows 0 and 1
    /// out.finish()?;
    /// assert_eq!(read_npy(&path)?, HostArray::U8(ndarray::arr2(&[[1u8, 2], [3, 4]]).into_dyn()));
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn write_rows(&self, start: usize, tile: &HostArray, local: Range<usize>) -> Result<()> {
        let inner: usize = tile.shape().iter().skip(1).product();
        let fits = tile.dtype() == self.format.dtype
            && tile.shape().get(1..) == self.format.shape.get(1..)
            && local.end <= tile.shape().first().copied().unwrap_or(0)
            && start + local.len() <= self.format.shape.first().copied().unwrap_or(0);
        let whole = if fits { self.native_bytes(tile) } else { None };
        let size = self.format.dtype.size();
        match whole.and_then(|b| b.get(local.start * inner * size..local.end * inner * size)) {
            Some(bytes) => self.write_at(self.offset + (start * inner * size) as u64, bytes),
            None => {
                let rows = tile.slab(0, local.clone()).ok_or_else(|| Error::Format {
                    path: self.path.clone(),
                    reason: format!("rows {local:?} are outside a tile of shape {:?}", tile.shape()),
                })?;
                self.write(0, start, &rows)
            }
        }
    }

    /// Flushes the file to disk and renames it over the destination.
    pub fn finish(self) -> Result<()> {
        let io = |source| Error::Io { path: self.path.clone(), source };
        drop(self.mapped);
        self.file.sync_all().map_err(io)?;
        drop(self.file);
        commit(vec![self.pending])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file larger than its file system's free space is written by positioned writes (which report a full disk
    /// as an error) rather than through maps (whose page faults could not be served); both ways land the same
    /// bytes.
    #[test]
    fn a_file_without_room_is_written_without_maps() {
        let dir = std::env::temp_dir();
        let tile = HostArray::U8(ndarray::Array::from_shape_fn((3, 5), |(i, j)| (i * 5 + j + 1) as u8).into_dyn());
        for (name, rows) in [("fits", 7usize), ("no-room", 1 << 41)] {
            let path = dir.join(format!("cliper-slab-writer-{name}-{}.npy", std::process::id()));
            let format = RawFormat { shape: vec![rows, 5], dtype: Dtype::U8, endian: Endian::Little };
            let out =
                SlabWriter::create_with(&path, format, &npy::header(Dtype::U8, &[rows, 5]), |_| Ok(true)).unwrap();
            assert_eq!(out.mapped.is_some(), rows == 7, "{name}: 2^41 × 5 bytes is more than any test disk holds");
            out.write_rows(rows - 3, &tile, 0..3).unwrap();
            out.write_rows(0, &tile, 1..2).unwrap();
            let mut back = vec![0u8; 15];
            out.file.read_exact_at(&mut back, out.offset + (rows as u64 - 3) * 5).unwrap();
            assert_eq!(back, (1..=15).collect::<Vec<u8>>(), "{name}");
            out.file.read_exact_at(&mut back[..5], out.offset).unwrap();
            assert_eq!(&back[..5], &[6, 7, 8, 9, 10], "{name}");
            drop(out); // not finished: the temporary file is removed, and no destination is written
            assert!(!path.exists());
        }
    }
}
