//! TIFF images through the `tiff` crate: grey, grey + alpha, RGB and RGBA pages of every element type cliper has
//! (u8–u64, i8–i64, f32, f64, complex64, complex128), single or multi-page, uncompressed, LZW or Deflate.
//!
//! Colour is a channel axis before the image plane — `[C, H, W]`, `[pages, C, H, W]` — so that operations on
//! the trailing axes act per channel. Files may store a pixel's samples together (chunky) or each channel as a
//! plane of its own (planar, tifffile's default for a `(3, H, W)` array); both read to the same array.
//!
//! Where the crate (0.11) stops, and what is done instead:
//! - it encodes no RGB of signed integers and no complex samples: `colour_type!` defines those colour types;
//! - it counts a row as width × samples values of one Rust type, and a complex sample is two floats: complex
//!   pages are begun twice as wide and their true width written over the tag (`Pages::page`);
//! - it decodes no complex samples (SampleFormat 6; 128-bit samples it refuses outright): `read_complex`
//!   hands the page's strips back to it described as a grey float page twice as wide;
//! - `read_image` reads only the first plane of a planar page: pages are read with `read_image_to_buffer`.

use super::host_array::{Dtype, HostArray};
use super::inflate::{Wrapper, inflate_checked};
use super::save::write_atomically;
use super::source::{MEMORY, open_sized};
use crate::error::{Error, Result};
use ndarray::{ArrayD, ArrayViewD, IxDyn, ShapeError};
use num_complex::{Complex32, Complex64};
use std::borrow::Cow;
use std::fs::File;
use std::io::{BufReader, BufWriter, Cursor, Read, Seek, SeekFrom};
use std::path::Path;
use tiff::decoder::{ChunkType, Decoder, DecodingResult, Limits};
use tiff::encoder::colortype::{
    ColorType, Gray8, Gray16, Gray32, Gray32Float, Gray64, Gray64Float, GrayI8, GrayI16, GrayI32, GrayI64, RGB8, RGB16,
    RGB32, RGB32Float, RGB64, RGB64Float,
};
use tiff::encoder::{Compression, DeflateLevel, TiffEncoder, TiffKind, TiffKindBig, TiffKindStandard, TiffValue};
use tiff::tags::{ByteOrder, ExtraSamples, PhotometricInterpretation, SampleFormat, Tag};

/// TIFF's SampleFormat for complex floats (COMPLEXIEEEFP), which the `tiff` crate does not name.
const COMPLEX: u16 = 6;

/// Reads every page of a TIFF file in its own sample type: one grey page as `[H, W]`, grey pages as
/// `[pages, H, W]`; colour as `[C, H, W]` / `[pages, C, H, W]` with C = 2 (grey + alpha), 3 (RGB) or 4 (RGBA),
/// from chunky or planar files alike. Complex samples (tifffile's complex64 and complex128) read as c32 / c64.
/// All pages must share size, channels and type.
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

fn unreadable(e: tiff::TiffError) -> String {
    format!("not a readable TIFF: {e}")
}

/// TIFF's two codes for zlib-wrapped deflate (8, and 32946 of older writers).
const DEFLATE_CODES: [u16; 2] = [8, 32946];

/// Checks the zlib streams of the decoder's page — every chunk (strip or tile) in `chunks`, or all of them —
/// inflated to their ends: the crate stops reading a chunk at its last needed byte, and only the Adler-32 after it
/// tells a flipped bit from the data. Pages that are not deflated have no checksum and pass.
fn check_deflate_chunks<R: Read + Seek>(
    decoder: &mut Decoder<R>,
    chunks: Option<std::ops::Range<usize>>,
) -> std::result::Result<(), String> {
    let compression = decoder.find_tag_unsigned::<u16>(Tag::Compression).map_err(unreadable)?.unwrap_or(1);
    if !DEFLATE_CODES.contains(&compression) {
        return Ok(());
    }
    let (kind, offsets, counts) = match decoder.get_chunk_type() {
        ChunkType::Strip => ("strip", Tag::StripOffsets, Tag::StripByteCounts),
        ChunkType::Tile => ("tile", Tag::TileOffsets, Tag::TileByteCounts),
    };
    let offsets = decoder.get_tag_u64_vec(offsets).map_err(unreadable)?;
    let counts = decoder.get_tag_u64_vec(counts).map_err(unreadable)?;
    let chunks = chunks.unwrap_or(0..offsets.len());
    let reader = decoder.inner();
    let file_len = reader.seek(SeekFrom::End(0)).map_err(|e| e.to_string())?;
    let mut stream = Vec::new();
    for (index, (&at, &count)) in offsets.iter().zip(&counts).enumerate().skip(chunks.start).take(chunks.len()) {
        if at.saturating_add(count) > file_len {
            return Err(format!("{kind} {index} claims bytes {at}..{} of a {file_len}-byte file", at + count));
        }
        stream.resize(count as usize, 0);
        let read = reader.seek(SeekFrom::Start(at)).and_then(|_| reader.read_exact(&mut stream));
        read.map_err(|e| format!("{kind} {index} of {count} bytes at {at}: {e}"))?;
        inflate_checked(&stream, Wrapper::Zlib, 0).map_err(|e| format!("{kind} {index}: {e}"))?;
    }
    Ok(())
}

/// What a page holds, as its tags say: size, channels and sample type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Page {
    width: u32,
    height: u32,
    channels: usize,
    bits: u8,
    /// The SampleFormat tag: 1 unsigned, 2 signed, 3 float, 6 complex float.
    format: u16,
}

impl Page {
    fn of<R: Read + Seek>(decoder: &mut Decoder<R>) -> std::result::Result<Page, String> {
        let (width, height) = decoder.dimensions().map_err(unreadable)?;
        let color = decoder.colortype().map_err(unreadable)?;
        let channels = match color {
            tiff::ColorType::Gray(_) => 1,
            // Grey with one extra sample (alpha, as TIFF writers mark it) is what the crate calls multiband.
            tiff::ColorType::GrayA(_) | tiff::ColorType::Multiband { num_samples: 2, .. } => 2,
            tiff::ColorType::RGB(_) => 3,
            tiff::ColorType::RGBA(_) => 4,
            other => {
                return Err(format!(
                    "[{height}, {width}] pixels of colour type {other:?}, which is not supported (grey, grey + alpha, \
                     RGB, RGBA are)"
                ));
            }
        };
        let format = decoder.find_tag_unsigned_vec::<u16>(Tag::SampleFormat).map_err(unreadable)?;
        let format = format.and_then(|f| f.first().copied()).unwrap_or(1);
        Ok(Page { width, height, channels, bits: color.bit_depth(), format })
    }

    /// The bytes its samples take decoded.
    fn bytes(&self) -> usize {
        [self.width as usize, self.height as usize, self.channels]
            .iter()
            .try_fold(usize::from(self.bits).div_ceil(8), |a, &b| a.checked_mul(b))
            .unwrap_or(usize::MAX)
    }
}

impl std::fmt::Display for Page {
    /// `[4, 5] grey u8`, `[3, 64, 64] RGB c64`, `[8, 8] grey 16-bit float`: the page's shape as it reads (`[H, W]`,
    /// `[C, H, W]`), its channels and its sample type.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (h, w) = (self.height as usize, self.width as usize);
        let shape = if self.channels == 1 { vec![h, w] } else { vec![self.channels, h, w] };
        let channels = match self.channels {
            1 => "grey",
            2 => "grey + alpha",
            3 => "RGB",
            _ => "RGBA",
        };
        let sample = match (self.format, self.bits) {
            (1, 1..=8) => "u8".into(),
            (1, 16 | 32 | 64) => format!("u{}", self.bits),
            (2, 8 | 16 | 32 | 64) => format!("i{}", self.bits),
            (3, 32 | 64) => format!("f{}", self.bits),
            (COMPLEX, 64) => "c32".into(),
            (COMPLEX, 128) => "c64".into(),
            (3, bits) => format!("{bits}-bit float"),
            (COMPLEX, bits) => format!("{bits}-bit complex"),
            (format, bits) => format!("{bits}-bit samples of SampleFormat {format}"),
        };
        write!(f, "{shape:?} {channels} {sample}")
    }
}

fn decode(input: impl Read + Seek, len: u64, path: &Path) -> Result<HostArray> {
    pages(input, len).map(|(array, _)| array).map_err(|reason| Error::Format { path: path.to_path_buf(), reason })
}

/// [`read_tiff`], and whether the pages are colour (more than one channel): [`crate::read_image`].
pub(super) fn read_tiff_image(path: &Path) -> Result<(HostArray, bool)> {
    let (file, len) = open_sized(path)?;
    pages(BufReader::new(file), len).map_err(|reason| Error::Format { path: path.to_path_buf(), reason })
}

/// Every page, stacked, and whether they are colour.
fn pages(input: impl Read + Seek, len: u64) -> std::result::Result<(HostArray, bool), String> {
    let budget = decoded_limit(len);
    let mut limits = Limits::default();
    limits.decoding_buffer_size = budget;
    limits.intermediate_buffer_size = budget;
    let mut decoder = Decoder::new(input).map_err(unreadable)?.with_limits(limits.clone());
    let mut decoded = 0usize;
    let mut pages: Vec<HostArray> = Vec::new();
    let mut first: Option<Page> = None;
    loop {
        let index = pages.len();
        let page = Page::of(&mut decoder).map_err(|e| format!("page {index}: {e}"))?;
        match first {
            None => first = Some(page),
            Some(f) if f == page => {}
            Some(f) => return Err(format!("page {index} is {page} but page 0 is {f}; a stack needs equal pages")),
        }
        decoded = decoded.saturating_add(page.bytes());
        if decoded > budget {
            return Err(format!(
                "page {index} ({page}) brings the samples to {decoded} bytes, more than a {len}-byte TIFF can \
                 hold (at most {budget})"
            ));
        }
        check_deflate_chunks(&mut decoder, None).map_err(|e| format!("page {index} ({page}): {e}"))?;
        crate::io::check_host_memory_text("the TIFF's samples", decoded as u64)?;
        let array = match page.format {
            COMPLEX => read_complex(&mut decoder, &page, len, &limits),
            _ => read_real(&mut decoder, &page),
        };
        pages.push(array.map_err(|e| format!("page {index} ({page}): {e}"))?);
        if !decoder.more_images() {
            break;
        }
        decoder.next_image().map_err(unreadable)?;
    }
    let colour = first.is_some_and(|f| f.channels > 1);
    if pages.len() == 1
        && let Some(page) = pages.pop()
    {
        return Ok((page, colour));
    }
    stack(pages).map(|a| (a, colour)).ok_or_else(|| "pages of different sample types".into())
}

/// A page of integer or float samples, in every plane.
fn read_real<R: Read + Seek>(decoder: &mut Decoder<R>, page: &Page) -> std::result::Result<HostArray, String> {
    let mut result = DecodingResult::U8(Vec::new());
    let layout = decoder.read_image_to_buffer(&mut result).map_err(unreadable)?;
    // The crate falls back to the first plane when all of them exceed its buffer limit; the budget keeps pages
    // within it, so a short read is a file misunderstood, not one to return a part of.
    if result.as_buffer(0).byte_len() < layout.complete_len {
        return Err(format!("only the first of {} planes could be decoded", layout.planes));
    }
    samples(result, page, layout.planes > 1)
}

/// Decoded integer or float samples of `page` (a whole page, or a strip of it: `page.height` its rows) as an array
/// in cliper's order.
fn samples(result: DecodingResult, page: &Page, planar: bool) -> std::result::Result<HostArray, String> {
    let shaped = |e: ShapeError| e.to_string();
    Ok(match result {
        DecodingResult::U8(v) => HostArray::U8(arrange(v, page, planar).map_err(shaped)?),
        DecodingResult::U16(v) => HostArray::U16(arrange(v, page, planar).map_err(shaped)?),
        DecodingResult::U32(v) => HostArray::U32(arrange(v, page, planar).map_err(shaped)?),
        DecodingResult::U64(v) => HostArray::U64(arrange(v, page, planar).map_err(shaped)?),
        DecodingResult::I8(v) => HostArray::I8(arrange(v, page, planar).map_err(shaped)?),
        DecodingResult::I16(v) => HostArray::I16(arrange(v, page, planar).map_err(shaped)?),
        DecodingResult::I32(v) => HostArray::I32(arrange(v, page, planar).map_err(shaped)?),
        DecodingResult::I64(v) => HostArray::I64(arrange(v, page, planar).map_err(shaped)?),
        DecodingResult::F32(v) => HostArray::F32(arrange(v, page, planar).map_err(shaped)?),
        DecodingResult::F64(v) => HostArray::F64(arrange(v, page, planar).map_err(shaped)?),
        DecodingResult::F16(_) => return Err("16-bit float samples are not supported".into()),
    })
}

/// A page's samples in cliper's order: `[H, W]` grey, `[C, H, W]` colour. Planar samples are in that order
/// already; chunky ones are `[H, W, C]` and are moved.
fn arrange<T: Clone>(samples: Vec<T>, page: &Page, planar: bool) -> std::result::Result<ArrayD<T>, ShapeError> {
    let (h, w, c) = (page.height as usize, page.width as usize, page.channels);
    if c == 1 {
        return ArrayD::from_shape_vec(IxDyn(&[h, w]), samples);
    }
    if planar {
        return ArrayD::from_shape_vec(IxDyn(&[c, h, w]), samples);
    }
    let chunky = ArrayD::from_shape_vec(IxDyn(&[h, w, c]), samples)?;
    Ok(chunky.permuted_axes(IxDyn(&[2, 0, 1])).as_standard_layout().into_owned())
}

/// A page of complex samples (SampleFormat 6), which the `tiff` crate does not decode. Its strips hold each
/// sample as two floats (real, imaginary), so they are copied unchanged under a directory, written by the crate,
/// that calls them a grey page of floats twice as wide; the crate then decompresses them as it would any page.
fn read_complex<R: Read + Seek>(
    decoder: &mut Decoder<R>,
    page: &Page,
    len: u64,
    limits: &Limits,
) -> std::result::Result<HostArray, String> {
    if page.channels != 1 || !matches!(page.bits, 64 | 128) {
        return Err("complex samples are read as one 64- or 128-bit sample per pixel".into());
    }
    let strips = Strips::of(decoder, page, len)?;
    let mut floats =
        Decoder::new(Cursor::new(strips.as_floats(page)?)).map_err(unreadable)?.with_limits(limits.clone());
    // The copy is in this machine's byte order but its strips are still in the file's: floats are swapped here.
    let swap = decoder.byte_order() != ByteOrder::native();
    let dim = IxDyn(&[page.height as usize, page.width as usize]);
    let shaped = |e: ShapeError| e.to_string();
    match floats.read_image().map_err(unreadable)? {
        DecodingResult::F32(v) => {
            let f = |x: f32| if swap { f32::from_bits(x.to_bits().swap_bytes()) } else { x };
            let z = v.as_chunks::<2>().0.iter().map(|&[re, im]| Complex32::new(f(re), f(im))).collect();
            Ok(HostArray::C32(ArrayD::from_shape_vec(dim, z).map_err(shaped)?))
        }
        DecodingResult::F64(v) => {
            let f = |x: f64| if swap { f64::from_bits(x.to_bits().swap_bytes()) } else { x };
            let z = v.as_chunks::<2>().0.iter().map(|&[re, im]| Complex64::new(f(re), f(im))).collect();
            Ok(HostArray::C64(ArrayD::from_shape_vec(dim, z).map_err(shaped)?))
        }
        _ => Err("complex samples that did not decode as floats".into()),
    }
}

/// A page's strips as stored (compressed or not), with what it takes to decode them.
struct Strips {
    data: Vec<Vec<u8>>,
    compression: u16,
    rows_per_strip: u32,
}

impl Strips {
    /// The strips of the decoder's page, their total size checked against the file's `len` before they are read.
    fn of<R: Read + Seek>(decoder: &mut Decoder<R>, page: &Page, len: u64) -> std::result::Result<Strips, String> {
        if decoder.get_chunk_type() == ChunkType::Tile {
            return Err("tiled complex pages are not supported (strips are)".into());
        }
        let mut tag = |t: Tag, default: u32| -> std::result::Result<u32, String> {
            Ok(decoder.find_tag_unsigned::<u32>(t).map_err(unreadable)?.unwrap_or(default))
        };
        if tag(Tag::Predictor, 1)? != 1 {
            return Err("complex samples with a predictor are not supported".into());
        }
        let compression = u16::try_from(tag(Tag::Compression, 1)?).map_err(|e| e.to_string())?;
        let rows_per_strip = tag(Tag::RowsPerStrip, page.height)?;
        // The crate checked that offsets and counts pair up and cover the page.
        let offsets = decoder.get_tag_u64_vec(Tag::StripOffsets).map_err(unreadable)?;
        let counts = decoder.get_tag_u64_vec(Tag::StripByteCounts).map_err(unreadable)?;
        let claimed = counts.iter().fold(0u64, |a, &b| a.saturating_add(b));
        if claimed > len {
            return Err(format!("the strips claim {claimed} bytes of a {len}-byte file"));
        }
        let mut data = Vec::with_capacity(offsets.len());
        for (&at, &count) in offsets.iter().zip(&counts) {
            let mut strip = vec![0u8; count as usize];
            let reader = decoder.inner();
            let read = reader.seek(SeekFrom::Start(at)).and_then(|_| reader.read_exact(&mut strip));
            read.map_err(|e| format!("a strip of {count} bytes at {at}: {e}"))?;
            data.push(strip);
        }
        Ok(Strips { data, compression, rows_per_strip })
    }

    /// A TIFF in memory, written by the crate, whose one page holds these strips as grey floats of half the
    /// complex sample's bits, twice as many across.
    fn as_floats(&self, page: &Page) -> std::result::Result<Vec<u8>, String> {
        let failed = |e: tiff::TiffError| format!("re-reading the complex strips as floats: {e}");
        let floats_across = page.width.checked_mul(2).ok_or("the page is too wide to read as complex")?;
        let mut out = Cursor::new(Vec::new());
        let mut encoder = TiffEncoder::new_big(&mut out).map_err(failed)?;
        let mut dir = encoder.image_directory().map_err(failed)?;
        let offsets: Vec<u64> =
            self.data.iter().map(|s| dir.write_data(&s[..])).collect::<tiff::TiffResult<_>>().map_err(failed)?;
        let counts: Vec<u64> = self.data.iter().map(|s| s.len() as u64).collect();
        let shorts = [
            (Tag::BitsPerSample, u16::from(page.bits / 2)),
            (Tag::SampleFormat, SampleFormat::IEEEFP.to_u16()),
            (Tag::SamplesPerPixel, 1),
            (Tag::PhotometricInterpretation, PhotometricInterpretation::BlackIsZero.to_u16()),
            (Tag::Compression, self.compression),
        ];
        for (tag, value) in shorts {
            dir.write_tag(tag, value).map_err(failed)?;
        }
        let longs = [
            (Tag::ImageWidth, floats_across),
            (Tag::ImageLength, page.height),
            (Tag::RowsPerStrip, self.rows_per_strip),
        ];
        for (tag, value) in longs {
            dir.write_tag(tag, value).map_err(failed)?;
        }
        dir.write_tag(Tag::StripOffsets, &offsets[..]).map_err(failed)?;
        dir.write_tag(Tag::StripByteCounts, &counts[..]).map_err(failed)?;
        dir.finish().map_err(failed)?;
        Ok(out.into_inner())
    }
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
        HostArray::C32(_) => join!(C32),
        HostArray::C64(_) => join!(C64),
    }
}

/// How [`write_tiff_with`] compresses the pages. Every mode is lossless; tifffile, libtiff, ImageJ and
/// [`read_tiff`] read all three.
///
/// ```
/// use cliper::{HostArray, TiffCompression, TiffOptions};
/// let a = HostArray::U16(ndarray::ArrayD::from_elem(vec![2, 16, 16], 7u16)); // two pages
/// let path = std::env::temp_dir().join(format!("cliper-doc-{}.tif", std::process::id()));
/// cliper::write_tiff_with(&path, &a, TiffOptions { compression: TiffCompression::Deflate, ..TiffOptions::default() })?;
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

/// How [`write_tiff_with`] and [`crate::data::XData::save_tiff`] write an array: the compression, and whether
/// the array is grey pages or colour. The default is uncompressed grey pages, as [`write_tiff`] writes.
///
/// Colour is explicit because a `[3, H, W]` array is as likely three grey pages as one RGB image: with
/// `colour: true` the array is `[C, H, W]` or `[pages, C, H, W]`, C = 2 (grey + alpha), 3 (RGB) or 4 (RGBA), of
/// a real type; [`read_tiff`] gives colour back in that shape.
///
/// ```
/// use cliper::{HostArray, TiffCompression, TiffOptions, read_tiff, write_tiff_with};
/// let path = std::env::temp_dir().join(format!("cliper-doc-options-{}.tif", std::process::id()));
/// let rgb = HostArray::I16(ndarray::Array3::from_shape_fn((3, 4, 5), |(k, r, c)| (k * 100 + r * 10 + c) as i16 - 200).into_dyn());
/// let colour = TiffOptions { compression: TiffCompression::Lzw, colour: true };
/// write_tiff_with(&path, &rgb, colour)?; // one RGB page of i16 samples
/// assert_eq!(read_tiff(&path)?, rgb);
/// let cube = HostArray::U8(ndarray::ArrayD::zeros(vec![5, 4, 3]));
/// assert!(write_tiff_with(&path, &cube, colour).unwrap_err().to_string().contains("[5, 4, 3]"));
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TiffOptions {
    /// None (default), LZW or Deflate.
    pub compression: TiffCompression,
    /// The array is colour, `[C, H, W]` or `[pages, C, H, W]`, rather than grey `[H, W]` or `[pages, H, W]`.
    pub colour: bool,
}

/// Writes a grey image `[H, W]` or grey pages `[pages, H, W]` of any element type (u8–u64, i8–i64, f32, f64,
/// c32 and c64 as tifffile's complex64 and complex128) as an uncompressed TIFF, atomically; [`read_tiff`] and
/// tifffile read it back bit-exact. [`write_tiff_with`] writes colour and compresses.
pub fn write_tiff(path: impl AsRef<Path>, array: &HostArray) -> Result<()> {
    write_tiff_with(path, array, TiffOptions::default())
}

/// [`write_tiff`] with a choice of compression, and colour pages (see [`TiffOptions`]). Signed integers are
/// written with SampleFormat 2, floats 3 and complex 6, as tifffile writes them; colour with an alpha channel
/// marks it as unassociated alpha.
///
/// ```
/// use cliper::{HostArray, TiffCompression, TiffOptions, read_tiff, write_tiff_with};
/// let path = std::env::temp_dir().join(format!("cliper-doc-deflate-{}.tif", std::process::id()));
/// let flat = HostArray::U16(ndarray::ArrayD::from_elem(ndarray::IxDyn(&[4, 64, 64]), 1000u16));
/// write_tiff_with(&path, &flat, TiffOptions { compression: TiffCompression::Deflate, colour: false })?;
/// assert!(std::fs::metadata(&path).unwrap().len() < 2000); // 32 KiB of samples
/// assert_eq!(read_tiff(&path)?, flat);
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn write_tiff_with(path: impl AsRef<Path>, array: &HostArray, options: TiffOptions) -> Result<()> {
    // Classic TIFF offsets are 32-bit: a file that may pass 4 GiB (16 MiB spare for tags) is a BigTIFF.
    write_tiff_from(path.as_ref(), array, options, (1u64 << 32) - (16 << 20))
}

/// [`write_tiff_with`], as a BigTIFF when the samples take more than `big_from` bytes.
fn write_tiff_from(path: &Path, array: &HostArray, options: TiffOptions, big_from: u64) -> Result<()> {
    let what = format!("shape {:?} of {}", array.shape(), array.dtype().name());
    let layout = Layout::of(array.shape(), &what, array.dtype(), options.colour)
        .map_err(|reason| Error::Format { path: path.to_path_buf(), reason })?;
    let compression = match options.compression {
        TiffCompression::None => Compression::Uncompressed,
        TiffCompression::Lzw => Compression::Lzw,
        TiffCompression::Deflate => Compression::Deflate(DeflateLevel::Balanced),
    };
    let colour = options.colour;
    let bytes = array.shape().iter().product::<usize>() as u64 * array.dtype().size() as u64;
    let big = bytes > big_from;
    let write = |samples: &dyn Fn(&mut Pages<'_>) -> tiff::TiffResult<()>| {
        write_atomically(path, |file| {
            let failed = |e: tiff::TiffError| format!("writing {what} as TIFF: {e}");
            let encoder = if big {
                Encoder::Big(TiffEncoder::new_big(file).map_err(failed)?.with_compression(compression))
            } else {
                Encoder::Classic(TiffEncoder::new(file).map_err(failed)?.with_compression(compression))
            };
            samples(&mut Pages { encoder, layout: &layout }).map_err(failed)
        })
    };
    match array {
        HostArray::U8(a) => write(&|p| p.write::<Gray8, RGB8>(&interleaved(a, colour))),
        HostArray::U16(a) => write(&|p| p.write::<Gray16, RGB16>(&interleaved(a, colour))),
        HostArray::U32(a) => write(&|p| p.write::<Gray32, RGB32>(&interleaved(a, colour))),
        HostArray::U64(a) => write(&|p| p.write::<Gray64, RGB64>(&interleaved(a, colour))),
        HostArray::I8(a) => write(&|p| p.write::<GrayI8, RgbI8>(&interleaved(a, colour))),
        HostArray::I16(a) => write(&|p| p.write::<GrayI16, RgbI16>(&interleaved(a, colour))),
        HostArray::I32(a) => write(&|p| p.write::<GrayI32, RgbI32>(&interleaved(a, colour))),
        HostArray::I64(a) => write(&|p| p.write::<GrayI64, RgbI64>(&interleaved(a, colour))),
        HostArray::F32(a) => write(&|p| p.write::<Gray32Float, RGB32Float>(&interleaved(a, colour))),
        HostArray::F64(a) => write(&|p| p.write::<Gray64Float, RGB64Float>(&interleaved(a, colour))),
        // Complex is grey only (`Layout::of` refuses colour): each sample as its two floats.
        HostArray::C32(a) => {
            let floats: Vec<f32> = interleaved(a, false).iter().flat_map(|z| [z.re, z.im]).collect();
            write(&|p| p.write::<GreyComplex64, GreyComplex64>(&floats))
        }
        HostArray::C64(a) => {
            let floats: Vec<f64> = interleaved(a, false).iter().flat_map(|z| [z.re, z.im]).collect();
            write(&|p| p.write::<GreyComplex128, GreyComplex128>(&floats))
        }
    }
}

/// The pages an array is written as.
struct Layout {
    pages: usize,
    channels: usize,
    width: u32,
    height: u32,
}

impl Layout {
    /// The pages of an array of `shape` and `dtype` (`what` names both), grey or colour, or why it cannot be
    /// written so.
    fn of(shape: &[usize], what: &str, dtype: Dtype, colour: bool) -> std::result::Result<Layout, String> {
        let complex = matches!(dtype, Dtype::C32 | Dtype::C64);
        let (pages, channels, h, w) = match (colour, shape) {
            (false, &[h, w]) => (1, 1, h, w),
            (false, &[p, h, w]) => (p, 1, h, w),
            (true, &[c, h, w]) => (1, c, h, w),
            (true, &[p, c, h, w]) => (p, c, h, w),
            (false, _) => {
                return Err(format!(
                    "grey TIFF pages are [H, W] or [pages, H, W] (colour, [C, H, W] or [pages, C, H, W], needs \
                     TiffOptions {{ colour: true, .. }}), not {what}"
                ));
            }
            (true, _) => return Err(format!("colour TIFF pages are [C, H, W] or [pages, C, H, W], not {what}")),
        };
        if colour && !(2..=4).contains(&channels) {
            return Err(format!(
                "colour TIFF pages have C = 2 (grey + alpha), 3 (RGB) or 4 (RGBA) channels, not {channels}: {what}"
            ));
        }
        if colour && complex {
            return Err(format!("colour TIFF pages hold real samples; {what} is complex"));
        }
        // A complex sample is stored as two floats, and the crate counts those against the page width.
        let most = if complex { u32::MAX / 2 } else { u32::MAX };
        match (u32::try_from(w), u32::try_from(h)) {
            (Ok(width), Ok(height)) if (1..=most).contains(&width) && height > 0 && pages > 0 => {
                Ok(Layout { pages, channels, width, height })
            }
            _ => Err(format!("a TIFF needs at least one page of 1 to {most} rows and columns, not {what}")),
        }
    }
}

/// The samples of `a` in file order: grey as they are, colour `[…, C, H, W]` interleaved as `[…, H, W, C]`
/// (chunky, one pixel's samples together, which every TIFF reader reads). Borrowed when nothing moves.
fn interleaved<T: Clone>(a: &ArrayD<T>, colour: bool) -> Cow<'_, [T]> {
    let mut view: ArrayViewD<'_, T> = a.view();
    if colour {
        let n = a.ndim();
        let mut axes: Vec<usize> = (0..n).collect();
        // [.., C, H, W] → [.., H, W, C]; `Layout::of` made sure there are those three axes.
        if let Some(last) = axes.get_mut(n.saturating_sub(3)..) {
            last.rotate_left(1);
        }
        view = view.permuted_axes(axes);
    }
    match view.to_slice() {
        Some(samples) => Cow::Borrowed(samples),
        None => Cow::Owned(view.iter().cloned().collect()),
    }
}

/// A TIFF being written, page by page, in the layout of the array.
struct Pages<'a> {
    encoder: Encoder<'a>,
    layout: &'a Layout,
}

/// Classic TIFF (32-bit offsets), or BigTIFF for files that may pass 4 GiB.
enum Encoder<'a> {
    Classic(TiffEncoder<&'a mut BufWriter<File>, TiffKindStandard>),
    Big(TiffEncoder<&'a mut BufWriter<File>, TiffKindBig>),
}

impl Pages<'_> {
    /// Every page of `samples` as grey (`G`; an alpha sample for 2 channels) or RGB (`C`; alpha for 4).
    fn write<G, C>(&mut self, samples: &[G::Inner]) -> tiff::TiffResult<()>
    where
        G: ColorType,
        C: ColorType<Inner = G::Inner>,
        [G::Inner]: TiffValue,
    {
        for page in samples.chunks_exact(samples.len() / self.layout.pages) {
            if self.layout.channels >= 3 { self.page::<C>(page)? } else { self.page::<G>(page)? }
        }
        Ok(())
    }

    /// One page. The crate counts a row as width × samples values of `C::Inner`; a complex sample is two such
    /// floats, so a complex page is begun twice as wide (rows, strips and compression then come out right) and
    /// its true width written over the tag.
    fn page<C: ColorType>(&mut self, samples: &[C::Inner]) -> tiff::TiffResult<()>
    where
        [C::Inner]: TiffValue,
    {
        match &mut self.encoder {
            Encoder::Classic(encoder) => page_into::<C, _, _>(encoder, self.layout, samples),
            Encoder::Big(encoder) => page_into::<C, _, _>(encoder, self.layout, samples),
        }
    }
}

/// [`Pages::page`] with either kind of encoder.
fn page_into<C: ColorType, W: std::io::Write + Seek, K: TiffKind>(
    encoder: &mut TiffEncoder<W, K>,
    layout: &Layout,
    samples: &[C::Inner],
) -> tiff::TiffResult<()>
where
    [C::Inner]: TiffValue,
{
    let bits = C::BITS_PER_SAMPLE.first().map_or(0, |&b| u32::from(b));
    let values_per_sample = (bits / (8 * size_of::<C::Inner>() as u32)).max(1);
    let mut image = encoder.new_image::<C>(layout.width * values_per_sample, layout.height)?;
    if values_per_sample != 1 {
        image.encoder().write_tag(Tag::ImageWidth, layout.width)?;
    }
    if matches!(layout.channels, 2 | 4) {
        image.extra_samples(&[ExtraSamples::UnassociatedAlpha])?;
    }
    image.write_data(samples)
}

/// Defines a colour type the `tiff` crate (0.11) does not have.
macro_rules! colour_type {
    ($(#[$doc:meta])* $name:ident: $inner:ty, $photometric:ident, $bits:expr, $format:expr) => {
        $(#[$doc])*
        struct $name;
        impl ColorType for $name {
            type Inner = $inner;
            const TIFF_VALUE: PhotometricInterpretation = PhotometricInterpretation::$photometric;
            const BITS_PER_SAMPLE: &'static [u16] = $bits;
            const SAMPLE_FORMAT: &'static [SampleFormat] = $format;
            /// Never called: cliper writes no predictor.
            fn horizontal_predict(row: &[$inner], result: &mut Vec<$inner>) {
                result.extend_from_slice(row);
            }
        }
    };
}
// RGB of signed integers.
colour_type!(RgbI8: i8, RGB, &[8; 3], &[SampleFormat::Int; 3]);
colour_type!(RgbI16: i16, RGB, &[16; 3], &[SampleFormat::Int; 3]);
colour_type!(RgbI32: i32, RGB, &[32; 3], &[SampleFormat::Int; 3]);
colour_type!(RgbI64: i64, RGB, &[64; 3], &[SampleFormat::Int; 3]);
colour_type!(
    /// Grey complex64: one 64-bit sample per pixel, SampleFormat 6, held as two f32 (real, imaginary).
    GreyComplex64: f32, BlackIsZero, &[64], &[SampleFormat::Unknown(COMPLEX)]
);
colour_type!(
    /// Grey complex128: one 128-bit sample per pixel, SampleFormat 6, held as two f64 (real, imaginary).
    GreyComplex128: f64, BlackIsZero, &[128], &[SampleFormat::Unknown(COMPLEX)]
);

/// A grey TIFF read a slab of rows (one page) or a slab of pages (a multi-page volume) at a time: pages with
/// one real sample per pixel, a single page in strips or a stack of equal pages. `None` from [`TiffSlabs::open`]
/// for what must be read whole (colour, complex, tiled pages, fewer than 8 bits).
#[derive(Clone, Debug)]
pub(crate) struct TiffSlabs {
    path: std::path::PathBuf,
    page: Page,
    pages: usize,
    /// Rows per strip of a single page.
    rows_per_strip: usize,
    pub(crate) shape: Vec<usize>,
    pub(crate) dtype: Dtype,
}

impl TiffSlabs {
    fn decoder(path: &Path) -> Result<Decoder<BufReader<File>>> {
        let (file, len) = open_sized(path)?;
        let budget = decoded_limit(len);
        let mut limits = Limits::default();
        limits.decoding_buffer_size = budget;
        limits.intermediate_buffer_size = budget;
        Decoder::new(BufReader::new(file))
            .map(|d| d.with_limits(limits))
            .map_err(|e| Error::Format { path: path.to_path_buf(), reason: unreadable(e) })
    }

    pub(crate) fn open(path: &Path) -> Result<Option<TiffSlabs>> {
        let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
        let mut decoder = TiffSlabs::decoder(path)?;
        let page = Page::of(&mut decoder).map_err(bad)?;
        let dtype = match (page.format, page.bits) {
            (1, 8) => Dtype::U8,
            (1, 16) => Dtype::U16,
            (1, 32) => Dtype::U32,
            (1, 64) => Dtype::U64,
            (2, 8) => Dtype::I8,
            (2, 16) => Dtype::I16,
            (2, 32) => Dtype::I32,
            (2, 64) => Dtype::I64,
            (3, 32) => Dtype::F32,
            (3, 64) => Dtype::F64,
            _ => return Ok(None),
        };
        // Empty pages are the whole reader's to refuse (and the crate divides by the strip count).
        if page.channels != 1 || page.width == 0 || page.height == 0 {
            return Ok(None);
        }
        let strips = decoder.get_chunk_type() == ChunkType::Strip;
        let rows_per_strip = decoder
            .find_tag_unsigned::<u32>(Tag::RowsPerStrip)
            .map_err(|e| bad(unreadable(e)))?
            .map_or(page.height as usize, |r| r as usize);
        let mut pages = 1;
        while decoder.more_images() {
            decoder.next_image().map_err(|e| bad(unreadable(e)))?;
            let next = Page::of(&mut decoder).map_err(|e| bad(format!("page {pages}: {e}")))?;
            if next != page {
                return Err(bad(format!("page {pages} is {next} but page 0 is {page}; a stack needs equal pages")));
            }
            pages += 1;
        }
        if pages == 1 && (!strips || rows_per_strip == 0) {
            return Ok(None);
        }
        // What the headers claim must fit what the file can hold decoded, as for the whole reader.
        let len = std::fs::metadata(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?.len();
        let budget = decoded_limit(len);
        let claimed = page.bytes().saturating_mul(pages);
        if claimed > budget {
            return Err(bad(format!(
                "{pages} page(s) of {page} claim {claimed} bytes of samples, more than a {len}-byte TIFF can hold \
                 (at most {budget})"
            )));
        }
        let (h, w) = (page.height as usize, page.width as usize);
        let shape = if pages > 1 { vec![pages, h, w] } else { vec![h, w] };
        Ok(Some(TiffSlabs { path: path.to_path_buf(), page, pages, rows_per_strip, shape, dtype }))
    }

    /// Indices `rows` of the first axis: pages of a stack, rows of a single page.
    pub(crate) fn read(&self, rows: std::ops::Range<usize>) -> Result<HostArray> {
        let bad = |reason: String| Error::Format { path: self.path.clone(), reason };
        let first = self.shape.first().copied().unwrap_or(0);
        if rows.start > rows.end || rows.end > first {
            return Err(bad(format!("slab {rows:?} is outside the shape {:?}", self.shape)));
        }
        let mut decoder = TiffSlabs::decoder(&self.path)?;
        if self.pages > 1 {
            let mut pages = Vec::with_capacity(rows.len());
            for index in rows.clone() {
                decoder.seek_to_image(index).map_err(|e| bad(unreadable(e)))?;
                check_deflate_chunks(&mut decoder, None).map_err(|e| bad(format!("page {index}: {e}")))?;
                pages.push(read_real(&mut decoder, &self.page).map_err(|e| bad(format!("page {index}: {e}")))?);
            }
            return stack(pages).ok_or_else(|| bad(format!("pages {rows:?} do not stack")));
        }
        let mut slab_shape = self.shape.clone();
        if let Some(n) = slab_shape.first_mut() {
            *n = rows.len();
        }
        let mut out = HostArray::zeros(self.dtype, &slab_shape);
        let h = self.page.height as usize;
        let rps = self.rows_per_strip;
        let strips = rows.start / rps..rows.end.div_ceil(rps);
        check_deflate_chunks(&mut decoder, Some(strips.clone())).map_err(bad)?;
        for strip in strips {
            let top = strip * rps;
            let height = rps.min(h - top);
            let decoded =
                decoder.read_chunk(strip as u32).map_err(|e| bad(format!("strip {strip}: {}", unreadable(e))))?;
            let part = Page { height: height as u32, ..self.page };
            let array = samples(decoded, &part, false).map_err(|e| bad(format!("strip {strip}: {e}")))?;
            // The strip's rows that fall in the slab.
            let (from, to) = (rows.start.max(top), rows.end.min(top + height));
            let piece = array.slab(0, from - top..to - top).ok_or_else(|| bad(format!("strip {strip} is short")))?;
            if !out.set_slab(0, from - rows.start, &piece) {
                return Err(bad(format!("strip {strip} does not fit rows {rows:?}")));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The BigTIFF path (taken past 4 GiB) on a small stack: the file says BigTIFF (version 43), and both readers
    /// give the samples back.
    #[test]
    fn big_tiffs_are_written_past_the_classic_limit() -> Result<()> {
        let dir = std::env::temp_dir().join(format!("cliper-bigtiff-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|source| Error::Io { path: dir.clone(), source })?;
        let path = dir.join("big.tif");
        let a = HostArray::U16(ArrayD::from_shape_fn(IxDyn(&[3, 7, 5]), |i| (i[0] * 100 + i[1] * 10 + i[2]) as u16));
        let options = TiffOptions { compression: TiffCompression::Deflate, colour: false };
        write_tiff_from(&path, &a, options, 0)?;
        let head = std::fs::read(&path).map_err(|source| Error::Io { path: path.clone(), source })?;
        assert_eq!(head.get(..4), Some(&[b'I', b'I', 43, 0][..]));
        assert_eq!(read_tiff(&path)?, a);
        let slabs = TiffSlabs::open(&path)?.map(|t| t.read(1..3));
        assert_eq!(slabs.transpose()?, a.slab(0, 1..3));
        std::fs::remove_dir_all(&dir).ok();
        Ok(())
    }
}
