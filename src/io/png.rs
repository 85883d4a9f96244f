//! PNG images through the `png` crate: 8- and 16-bit grey, grey + alpha, RGB and RGBA (palettes and low bit
//! depths expanded to 8 bits), read losslessly as `u8`/`u16` of shape `[H, W]` (grey) or `[C, H, W]` (colour).
//!
//! Colour is a channel axis before the spatial axes (cliper's convention, docs/formats.md): every operation on
//! the trailing axes — filters over the last two, transposes — then works per channel on the image plane.

use super::host_array::HostArray;
use super::save::write_atomically;
use super::source::{MEMORY, open_sized};
use crate::error::{Error, Result};
use ndarray::{ArrayD, IxDyn};
use std::io::{BufRead, BufReader, Cursor, Seek};
use std::path::Path;

/// Reads a PNG image as `u8` or `u16` (the file's bit depth), shape `[H, W]` for grey and `[C, H, W]` with C = 2
/// (grey + alpha), 3 (RGB) or 4 (RGBA): channel first, so `x[0]` is the red plane of an RGB image.
///
/// ```
/// use cliper::{HostArray, read_png, write_png};
/// let path = std::env::temp_dir().join(format!("cliper-doc-{}.png", std::process::id()));
/// let grey = HostArray::U16(ndarray::arr2(&[[0u16, 1000], [40000, 65535]]).into_dyn());
/// write_png(&path, &grey)?;
/// assert_eq!(read_png(&path)?, grey);
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn read_png(path: impl AsRef<Path>) -> Result<HostArray> {
    let path = path.as_ref();
    let (file, len) = open_sized(path)?;
    decode(BufReader::new(file), len, path)
}

/// [`read_png`] on the bytes of a PNG file in memory; errors name the source as `<memory>`.
///
/// ```
/// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/data/phantom_256.png")).unwrap();
/// assert_eq!(cliper::decode_png(&bytes)?.shape(), &[256, 256]);
/// assert!(cliper::decode_png(&bytes[..100]).unwrap_err().to_string().contains("<memory>"));
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn decode_png(bytes: &[u8]) -> Result<HostArray> {
    decode(Cursor::new(bytes), bytes.len() as u64, Path::new(MEMORY))
}

/// The most bytes a PNG of `len` bytes can decode to, with `EXPAND`: deflate inflates at most 1032-fold, and
/// expanding 1-bit palette samples to RGBA multiplies by 32. A header claiming more is refused before anything
/// is allocated; no valid file reaches the bound.
fn decoded_limit(len: u64) -> usize {
    usize::try_from(len.saturating_mul(1032 * 32).saturating_add(1 << 20)).unwrap_or(usize::MAX)
}

fn decode(input: impl BufRead + Seek, len: u64, path: &Path) -> Result<HostArray> {
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let limit = decoded_limit(len);
    // Every checksum is verified, as Pillow does: the zlib stream's Adler-32 (the crate skips it by default) and
    // every chunk's CRC, ancillary ones included (a corrupt tRNS would change the decoded alpha).
    let mut options = png::DecodeOptions::default();
    options.set_ignore_adler32(false);
    options.set_ignore_crc(false);
    options.set_skip_ancillary_crc_failures(false);
    let mut decoder = png::Decoder::new_with_options(input, options);
    decoder.set_limits(png::Limits { bytes: limit });
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().map_err(|e| bad(format!("not a readable PNG: {e}")))?;
    let size = reader.output_buffer_size().ok_or_else(|| bad("the image is too large to decode".into()))?;
    // The `png` limit covers what the decoder allocates; the pixel buffer is ours to bound.
    if size > limit {
        return Err(bad(format!(
            "the header claims {size} bytes of pixels, more than a {len}-byte PNG can hold (at most {limit})"
        )));
    }
    crate::io::check_host_memory(path, "the PNG's pixels and their array", (size as u64).saturating_mul(2))?;
    let mut buffer = vec![0u8; size];
    let frame = reader.next_frame(&mut buffer).map_err(|e| bad(corrupt(&e)))?;
    // The rest of the file up to IEND: the image data's last checksums may lie past its last pixel.
    reader.finish().map_err(|e| bad(corrupt(&e)))?;
    let channels = frame.color_type.samples();
    let (h, w) = (frame.height as usize, frame.width as usize);
    // The file interleaves channels ([H, W, C]); the array holds them as planes ([C, H, W]).
    let interleaved: Vec<usize> = if channels == 1 { vec![h, w] } else { vec![h, w, channels] };
    let data = buffer.get(..frame.buffer_size()).unwrap_or_default();
    let row_bytes = |sample: usize| w * channels * sample;
    let rows = |sample: usize| data.chunks(frame.line_size).take(h).filter_map(move |r| r.get(..row_bytes(sample)));
    let shape_error = |e: ndarray::ShapeError| bad(format!("{e} (a {w}×{h} frame of {channels} channels)"));
    match frame.bit_depth {
        png::BitDepth::Sixteen => {
            let values: Vec<u16> =
                rows(2).flat_map(|r| r.as_chunks::<2>().0.iter().map(|&b| u16::from_be_bytes(b))).collect();
            let pixels = ArrayD::from_shape_vec(IxDyn(&interleaved), values).map_err(shape_error)?;
            Ok(HostArray::U16(channels_first(pixels)))
        }
        png::BitDepth::Eight => {
            let values: Vec<u8> = rows(1).flatten().copied().collect();
            let pixels = ArrayD::from_shape_vec(IxDyn(&interleaved), values).map_err(shape_error)?;
            Ok(HostArray::U8(channels_first(pixels)))
        }
        depth => Err(bad(format!("bit depth {depth:?} was not expanded to 8 bits"))),
    }
}

/// A decoding error in words: the crate reports a failed Adler-32 as `WrongChecksum` of the deflate stream.
fn corrupt(e: &png::DecodingError) -> String {
    let text = e.to_string();
    if text.contains("WrongChecksum") {
        format!("zlib Adler-32 mismatch in the image data (IDAT): the pixels do not match their checksum ({text})")
    } else {
        format!("corrupt PNG data: {text}")
    }
}

/// `[C, H, W]` planes as interleaved pixels (`[H, W, C]` in row-major order); grey `[H, W]` as it is.
fn interleaved<A: Copy>(a: &ArrayD<A>) -> Vec<A> {
    if a.ndim() == 3 {
        a.view().permuted_axes(IxDyn(&[1, 2, 0])).iter().copied().collect()
    } else {
        a.iter().copied().collect()
    }
}

/// `[H, W, C]` pixels as `[C, H, W]` planes (grey `[H, W]` as it is).
fn channels_first<A: Clone>(pixels: ArrayD<A>) -> ArrayD<A> {
    if pixels.ndim() == 3 { pixels.permuted_axes(IxDyn(&[2, 0, 1])).as_standard_layout().into_owned() } else { pixels }
}

/// zlib's level for the image data. On flate2's zlib-rs engine level 3 writes files the size the crate's default
/// (level 6 on miniz_oxide) wrote, 10× faster; level 6 would be 9 % smaller but half as fast, and the crate's
/// fdeflate mode 4× faster again but 19 % larger (a 1024² 16-bit CT PNG: docs/formats.md, "gzip, zlib and deflate").
const DEFLATE_LEVEL: u8 = 3;

/// Writes a `u8` or `u16` array of shape `[H, W]` (grey) or `[C, H, W]` (C = 1 to 4: grey, grey + alpha, RGB,
/// RGBA; channel first, as [`read_png`] gives them) as an 8- or 16-bit PNG, atomically. A PNG holds one image,
/// so a leading axis of 1 to 4 is its channels; anything else is refused with the shape.
///
/// ```
/// use cliper::{HostArray, read_png, write_png};
/// let path = std::env::temp_dir().join(format!("cliper-doc-rgb-{}.png", std::process::id()));
/// // Red, green and blue planes of a 2×3 image.
/// let rgb = HostArray::U8(ndarray::Array3::from_shape_fn((3, 2, 3), |(c, r, x)| (c * 100 + r * 10 + x) as u8).into_dyn());
/// write_png(&path, &rgb)?;
/// assert_eq!(read_png(&path)?, rgb);
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn write_png(path: impl AsRef<Path>, array: &HostArray) -> Result<()> {
    let path = path.as_ref();
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let shape = array.shape();
    let (c, h, w) = match *shape {
        [h, w] => (1, h, w),
        [c, h, w] if (1..=4).contains(&c) => (c, h, w),
        _ => {
            return Err(bad(format!(
                "a PNG holds one image, grey [H, W] or colour [C, H, W] with C = 1 to 4 channels, not shape {shape:?}"
            )));
        }
    };
    let (width, height) = match (u32::try_from(w), u32::try_from(h)) {
        (Ok(width), Ok(height)) if width > 0 && height > 0 => (width, height),
        _ => return Err(bad(format!("a PNG needs 1 to 2³² − 1 rows and columns, not shape {shape:?}"))),
    };
    let (depth, bytes): (png::BitDepth, Vec<u8>) = match array {
        HostArray::U8(a) => (png::BitDepth::Eight, interleaved(a)),
        HostArray::U16(a) => (png::BitDepth::Sixteen, interleaved(a).iter().flat_map(|v| v.to_be_bytes()).collect()),
        other => {
            return Err(bad(format!(
                "PNG stores u8 or u16 samples, not {} (convert them first, with an explicit scale)",
                other.dtype().name()
            )));
        }
    };
    let color = match c {
        1 => png::ColorType::Grayscale,
        2 => png::ColorType::GrayscaleAlpha,
        3 => png::ColorType::Rgb,
        _ => png::ColorType::Rgba,
    };
    write_atomically(path, |out| {
        let mut encoder = png::Encoder::new(out, width, height);
        encoder.set_color(color);
        encoder.set_depth(depth);
        encoder.set_filter(png::Filter::Adaptive);
        encoder.set_deflate_compression(png::DeflateCompression::Level(DEFLATE_LEVEL));
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(&bytes).map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| e.to_string())
    })
}
