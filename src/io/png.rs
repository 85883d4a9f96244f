//! PNG images through the `png` crate: 8- and 16-bit grey, grey + alpha, RGB and RGBA (palettes and low bit
//! depths expanded to 8 bits), read losslessly as `u8`/`u16` of shape `[H, W]` (grey) or `[H, W, C]`.

use super::host_array::HostArray;
use super::save::write_atomically;
use super::source::{MEMORY, open_sized};
use crate::error::{Error, Result};
use ndarray::{ArrayD, IxDyn};
use std::io::{BufRead, BufReader, Cursor, Seek};
use std::path::Path;

/// Reads a PNG image as `u8` or `u16` (the file's bit depth), shape `[H, W]` for grey and `[H, W, C]` with C = 2
/// (grey + alpha), 3 (RGB) or 4 (RGBA).
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
    let mut decoder = png::Decoder::new_with_limits(input, png::Limits { bytes: limit });
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().map_err(|e| bad(format!("not a readable PNG: {e}")))?;
    let size = reader.output_buffer_size().ok_or_else(|| bad("the image is too large to decode".into()))?;
    // The `png` limit covers what the decoder allocates; the pixel buffer is ours to bound.
    if size > limit {
        return Err(bad(format!(
            "the header claims {size} bytes of pixels, more than a {len}-byte PNG can hold (at most {limit})"
        )));
    }
    let mut buffer = vec![0u8; size];
    let frame = reader.next_frame(&mut buffer).map_err(|e| bad(format!("corrupt PNG data: {e}")))?;
    let channels = frame.color_type.samples();
    let (h, w) = (frame.height as usize, frame.width as usize);
    let shape: Vec<usize> = if channels == 1 { vec![h, w] } else { vec![h, w, channels] };
    let data = buffer.get(..frame.buffer_size()).unwrap_or_default();
    let row_bytes = |sample: usize| w * channels * sample;
    let rows = |sample: usize| data.chunks(frame.line_size).take(h).filter_map(move |r| r.get(..row_bytes(sample)));
    let shape_error = |e: ndarray::ShapeError| bad(format!("{e} (a {w}×{h} frame of {channels} channels)"));
    match frame.bit_depth {
        png::BitDepth::Sixteen => {
            let values: Vec<u16> =
                rows(2).flat_map(|r| r.as_chunks::<2>().0.iter().map(|&b| u16::from_be_bytes(b))).collect();
            Ok(HostArray::U16(ArrayD::from_shape_vec(IxDyn(&shape), values).map_err(shape_error)?))
        }
        png::BitDepth::Eight => {
            let values: Vec<u8> = rows(1).flatten().copied().collect();
            Ok(HostArray::U8(ArrayD::from_shape_vec(IxDyn(&shape), values).map_err(shape_error)?))
        }
        depth => Err(bad(format!("bit depth {depth:?} was not expanded to 8 bits"))),
    }
}

/// Writes a `u8` or `u16` array of shape `[H, W]` or `[H, W, C]` (C = 1 to 4: grey, grey + alpha, RGB, RGBA) as
/// an 8- or 16-bit PNG, atomically.
pub fn write_png(path: impl AsRef<Path>, array: &HostArray) -> Result<()> {
    let path = path.as_ref();
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let shape = array.shape();
    let (h, w, c) = match *shape {
        [h, w] => (h, w, 1),
        [h, w, c] if (1..=4).contains(&c) => (h, w, c),
        _ => return Err(bad(format!("a PNG holds [H, W] or [H, W, C] with C = 1 to 4, not shape {shape:?}"))),
    };
    let (width, height) = match (u32::try_from(w), u32::try_from(h)) {
        (Ok(width), Ok(height)) if width > 0 && height > 0 => (width, height),
        _ => return Err(bad(format!("a PNG needs 1 to 2³² − 1 rows and columns, not shape {shape:?}"))),
    };
    let (depth, bytes): (png::BitDepth, Vec<u8>) = match array {
        HostArray::U8(a) => (png::BitDepth::Eight, a.iter().copied().collect()),
        HostArray::U16(a) => (png::BitDepth::Sixteen, a.iter().flat_map(|v| v.to_be_bytes()).collect()),
        other => {
            return Err(bad(format!(
                "PNG stores u8 or u16, not {} (XData::save_png converts with explicit scaling)",
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
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(&bytes).map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| e.to_string())
    })
}
