//! TIFF images through the `tiff` crate: grey, grey + alpha, RGB and RGBA of any integer or float sample type,
//! uncompressed, LZW or Deflate, single or multi-page.

use super::host_array::HostArray;
use super::save::write_atomically;
use super::source::{MEMORY, open_sized};
use crate::error::{Error, Result};
use ndarray::{ArrayD, IxDyn};
use std::io::{BufReader, Cursor, Read, Seek};
use std::path::Path;
use tiff::decoder::{Decoder, DecodingResult, Limits};
use tiff::encoder::{Compression, DeflateLevel, TiffEncoder, colortype};

/// Reads every page of a TIFF file in its own sample type: shape `[H, W]` (one grey page), `[pages, H, W]`, and
/// a trailing channel axis for grey + alpha (2), RGB (3) or RGBA (4). All pages must share size and type.
///
/// ```
/// use cliper::{HostArray, read_tiff, write_tiff};
/// let path = std::env::temp_dir().join(format!("cliper-doc-{}.tif", std::process::id()));
/// let stack = HostArray::F32(ndarray::Array3::from_shape_fn((3, 2, 4), |(p, r, c)| (p * 100 + r * 10 + c) as f32).into_dyn());
/// write_tiff(&path, &stack)?; // three pages
/// assert_eq!(read_tiff(&path)?, stack);
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn read_tiff(path: impl AsRef<Path>) -> Result<HostArray> {
    let path = path.as_ref();
    let (file, len) = open_sized(path)?;
    decode(BufReader::new(file), len, path)
}

/// [`read_tiff`] on the bytes of a TIFF file in memory; errors name the source as `<memory>`.
///
/// ```
/// let path = std::env::temp_dir().join(format!("cliper-doc-decode-{}.tif", std::process::id()));
/// let a = cliper::HostArray::U8(ndarray::arr2(&[[1u8, 2], [3, 4]]).into_dyn());
/// cliper::write_tiff(&path, &a)?;
/// assert_eq!(cliper::decode_tiff(&std::fs::read(&path).unwrap())?, a);
/// assert!(cliper::decode_tiff(b"II*\0garbage").is_err());
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn decode_tiff(bytes: &[u8]) -> Result<HostArray> {
    decode(Cursor::new(bytes), bytes.len() as u64, Path::new(MEMORY))
}

/// The most sample bytes a TIFF of `len` bytes can decode to: LZW, the most compressing of the codecs the `tiff`
/// crate reads, yields at most 4096 bytes per 12-bit code. Pages claiming more in all are refused before they
/// are allocated (pages may share strips, so the bound is on the total); no valid file reaches it.
fn decoded_limit(len: u64) -> usize {
    usize::try_from(len.saturating_mul(4096).saturating_add(1 << 20)).unwrap_or(usize::MAX)
}

fn decode(input: impl Read + Seek, len: u64, path: &Path) -> Result<HostArray> {
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let tiff = |e: tiff::TiffError| bad(format!("not a readable TIFF: {e}"));
    let budget = decoded_limit(len);
    let mut limits = Limits::default();
    limits.decoding_buffer_size = budget;
    limits.intermediate_buffer_size = budget;
    let mut decoder = Decoder::new(input).map_err(tiff)?.with_limits(limits);
    let mut decoded = 0usize;
    let mut pages: Vec<HostArray> = Vec::new();
    let mut first: Option<(u32, u32, tiff::ColorType)> = None;
    loop {
        let (w, h) = decoder.dimensions().map_err(tiff)?;
        let color = decoder.colortype().map_err(tiff)?;
        let channels = match color {
            tiff::ColorType::Gray(_) => 1,
            tiff::ColorType::GrayA(_) => 2,
            tiff::ColorType::RGB(_) => 3,
            tiff::ColorType::RGBA(_) => 4,
            other => {
                return Err(bad(format!("colour type {other:?} is not supported (grey, grey+alpha, RGB, RGBA are)")));
            }
        };
        match first {
            None => first = Some((w, h, color)),
            Some(f) if f == (w, h, color) => {}
            Some(f) => {
                return Err(bad(format!(
                    "page {} is {w}×{h} {color:?} but page 0 is {}×{} {:?}; a stack needs equal pages",
                    pages.len(),
                    f.0,
                    f.1,
                    f.2
                )));
            }
        }
        let mut shape = vec![h as usize, w as usize];
        if channels > 1 {
            shape.push(channels);
        }
        let sample = match color {
            tiff::ColorType::Gray(b)
            | tiff::ColorType::GrayA(b)
            | tiff::ColorType::RGB(b)
            | tiff::ColorType::RGBA(b) => usize::from(b).div_ceil(8),
            _ => 1,
        };
        let page_bytes = shape.iter().try_fold(sample, |a, &b| a.checked_mul(b)).unwrap_or(usize::MAX);
        decoded = decoded.saturating_add(page_bytes);
        if decoded > budget {
            return Err(bad(format!(
                "page {} ({w}×{h}, {channels} channel(s)) brings the samples to {decoded} bytes, more than a \
                 {len}-byte TIFF can hold (at most {budget})",
                pages.len()
            )));
        }
        let dim = IxDyn(&shape);
        let shaped = |e: ndarray::ShapeError| bad(format!("page {}: {e}", pages.len()));
        let page = match decoder.read_image().map_err(tiff)? {
            DecodingResult::U8(v) => HostArray::U8(ArrayD::from_shape_vec(dim, v).map_err(shaped)?),
            DecodingResult::U16(v) => HostArray::U16(ArrayD::from_shape_vec(dim, v).map_err(shaped)?),
            DecodingResult::U32(v) => HostArray::U32(ArrayD::from_shape_vec(dim, v).map_err(shaped)?),
            DecodingResult::U64(v) => HostArray::U64(ArrayD::from_shape_vec(dim, v).map_err(shaped)?),
            DecodingResult::I8(v) => HostArray::I8(ArrayD::from_shape_vec(dim, v).map_err(shaped)?),
            DecodingResult::I16(v) => HostArray::I16(ArrayD::from_shape_vec(dim, v).map_err(shaped)?),
            DecodingResult::I32(v) => HostArray::I32(ArrayD::from_shape_vec(dim, v).map_err(shaped)?),
            DecodingResult::I64(v) => HostArray::I64(ArrayD::from_shape_vec(dim, v).map_err(shaped)?),
            DecodingResult::F32(v) => HostArray::F32(ArrayD::from_shape_vec(dim, v).map_err(shaped)?),
            DecodingResult::F64(v) => HostArray::F64(ArrayD::from_shape_vec(dim, v).map_err(shaped)?),
            DecodingResult::F16(_) => return Err(bad("16-bit float samples are not supported".into())),
        };
        pages.push(page);
        if !decoder.more_images() {
            break;
        }
        decoder.next_image().map_err(tiff)?;
    }
    if pages.len() == 1
        && let Some(page) = pages.pop()
    {
        return Ok(page);
    }
    stack(pages).ok_or_else(|| bad("pages of different sample types".into()))
}

/// Pages of one type and shape stacked along a new first axis.
fn stack(pages: Vec<HostArray>) -> Option<HostArray> {
    macro_rules! join {
        ($variant:ident) => {{
            let mut views = Vec::with_capacity(pages.len());
            for p in &pages {
                match p {
                    HostArray::$variant(a) => views.push(a.view()),
                    _ => return None,
                }
            }
            ndarray::stack(ndarray::Axis(0), &views).ok().map(HostArray::$variant)
        }};
    }
    match pages.first()? {
        HostArray::U8(_) => join!(U8),
        HostArray::U16(_) => join!(U16),
        HostArray::U32(_) => join!(U32),
        HostArray::U64(_) => join!(U64),
        HostArray::I8(_) => join!(I8),
        HostArray::I16(_) => join!(I16),
        HostArray::I32(_) => join!(I32),
        HostArray::I64(_) => join!(I64),
        HostArray::F32(_) => join!(F32),
        HostArray::F64(_) => join!(F64),
        HostArray::C32(_) | HostArray::C64(_) => None,
    }
}

/// How [`write_tiff_with`] compresses the pages. Every mode is lossless; tifffile, libtiff, ImageJ and
/// [`read_tiff`] read all three.
///
/// ```
/// use cliper::{HostArray, TiffCompression};
/// let a = HostArray::U16(ndarray::ArrayD::from_elem(vec![2, 16, 16], 7u16)); // two pages
/// let path = std::env::temp_dir().join(format!("cliper-doc-{}.tif", std::process::id()));
/// cliper::write_tiff_with(&path, &a, TiffCompression::Deflate)?;
/// assert_eq!(cliper::read_tiff(&path)?, a); // lossless either way
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TiffCompression {
    /// Samples stored as they are: the fastest to write and read.
    #[default]
    None,
    /// LZW.
    Lzw,
    /// Deflate (zlib) at its balanced level: the smallest files, e.g. a piecewise-constant phantom shrinks
    /// 20 to 50 times.
    Deflate,
}

/// Writes a grey image `[H, W]` or a stack `[pages, H, W]` of u8, u16, f32 or f64 samples as an uncompressed
/// TIFF (one page per image), atomically; [`read_tiff`] and tifffile read it back bit-exact.
pub fn write_tiff(path: impl AsRef<Path>, array: &HostArray) -> Result<()> {
    write_tiff_with(path, array, TiffCompression::None)
}

/// [`write_tiff`] with a choice of compression.
///
/// ```
/// use cliper::{HostArray, TiffCompression, read_tiff, write_tiff_with};
/// let path = std::env::temp_dir().join(format!("cliper-doc-deflate-{}.tif", std::process::id()));
/// let flat = HostArray::U16(ndarray::ArrayD::from_elem(ndarray::IxDyn(&[4, 64, 64]), 1000u16));
/// write_tiff_with(&path, &flat, TiffCompression::Deflate)?;
/// assert!(std::fs::metadata(&path).unwrap().len() < 2000); // 32 KiB of samples
/// assert_eq!(read_tiff(&path)?, flat);
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn write_tiff_with(path: impl AsRef<Path>, array: &HostArray, compression: TiffCompression) -> Result<()> {
    let path = path.as_ref();
    let compression = match compression {
        TiffCompression::None => Compression::Uncompressed,
        TiffCompression::Lzw => Compression::Lzw,
        TiffCompression::Deflate => Compression::Deflate(DeflateLevel::Balanced),
    };
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let shape = array.shape().to_vec();
    let (pages, h, w) = match shape[..] {
        [h, w] => (1, h, w),
        [p, h, w] => (p, h, w),
        _ => return Err(bad(format!("a TIFF stack is [H, W] or [pages, H, W] of grey samples, not shape {shape:?}"))),
    };
    let (width, height) = match (u32::try_from(w), u32::try_from(h)) {
        (Ok(width), Ok(height)) if width > 0 && height > 0 && pages > 0 => (width, height),
        _ => return Err(bad(format!("a TIFF page needs 1 to 2³² − 1 rows and columns, not shape {shape:?}"))),
    };
    // One page per image, in the colour type of the sample type.
    macro_rules! pages {
        ($a:expr, $color:ty) => {{
            let data = $a.as_standard_layout();
            let flat = data.as_slice().unwrap_or_default();
            write_atomically(path, |out| {
                let mut encoder = TiffEncoder::new(out).map_err(|e| e.to_string())?.with_compression(compression);
                for page in flat.chunks_exact(h * w) {
                    encoder.write_image::<$color>(width, height, page).map_err(|e| e.to_string())?;
                }
                Ok(())
            })
        }};
    }
    match array {
        HostArray::U8(a) => pages!(a, colortype::Gray8),
        HostArray::U16(a) => pages!(a, colortype::Gray16),
        HostArray::F32(a) => pages!(a, colortype::Gray32Float),
        HostArray::F64(a) => pages!(a, colortype::Gray64Float),
        other => Err(bad(format!("TIFF saving takes u8, u16, f32 or f64 samples, not {}", other.dtype().name()))),
    }
}
