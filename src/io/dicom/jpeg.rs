//! JPEG streams in DICOM pixel data: RGB data JPEG-compressed without a colour transform, and JPEG-LS frame
//! headers checked before CharLS decodes them.
//!
//! RGB pixel data JPEG-compressed without a colour transform. A JPEG of three components says how they relate
//! to RGB with an Adobe APP14 marker, a JFIF APP0 one or component ids `R`, `G`, `B`; without any, decoders
//! guess YCbCr (jpeg-decoder does, through dicom-pixeldata) and a DICOM file whose PhotometricInterpretation is
//! RGB — its components are R, G and B — decodes in false colours (pydicom's `SC_jpeg_no_color_transform.dcm`:
//! magenta, off by up to 137). pydicom then takes the components as they are; so does this decoder.
//!
//! zune-jpeg (already built for the `tiff` crate) decodes them, asked for its YCbCr output, which is the
//! components unconverted: it matches libjpeg (pydicom's reference) within 1, where jpeg-decoder with its colour
//! transform turned off differs by up to 110 at some edges of that file.

use zune_core::colorspace::ColorSpace;
use zune_core::options::DecoderOptions;
use zune_jpeg::JpegDecoder;

/// JPEG markers: start of frame (baseline, extended, JPEG-LS), APP0 (JFIF), APP14 (Adobe), start of scan.
const SOF0: u8 = 0xC0;
const SOF55: u8 = 0xF7;
const SOF1: u8 = 0xC1;
const APP0: u8 = 0xE0;
const APP14: u8 = 0xEE;
const SOS: u8 = 0xDA;

/// The marker segments of the JPEG stream `data` before its first scan: (marker, the bytes after the length).
/// A stream cut short ends them.
fn segments(data: &[u8]) -> impl Iterator<Item = (u8, &[u8])> {
    let mut pos = 2; // after SOI
    std::iter::from_fn(move || {
        loop {
            let (Some(&0xFF), Some(&marker)) = (data.get(pos), data.get(pos + 1)) else { return None };
            if marker == 0xFF {
                pos += 1; // a fill byte
                continue;
            }
            if marker == SOS {
                return None;
            }
            let &[hi, lo] = data.get(pos + 2..)?.first_chunk::<2>()?;
            let body = data.get(pos + 4..).unwrap_or_default();
            pos += 2 + usize::from(u16::from_be_bytes([hi, lo]));
            return Some((marker, body));
        }
    })
}

/// Whether the JPEG stream `data` says what its three components are, before its first scan: a JFIF APP0 or an
/// Adobe APP14 segment, or a frame header whose component ids are `R`, `G`, `B`. Streams that say so decode
/// right in dicom-pixeldata's decoder.
pub(super) fn says_colour_space(data: &[u8]) -> bool {
    segments(data).any(|(marker, body)| {
        let rgb_ids = || (0..3).map(|c| body.get(6 + 3 * c).copied()).eq([b'R', b'G', b'B'].map(Some));
        match marker {
            APP0 => body.starts_with(b"JFIF\0"),
            APP14 => body.starts_with(b"Adobe"),
            SOF0 | SOF1 => body.get(5) == Some(&3) && rgb_ids(),
            _ => false,
        }
    })
}

/// Checks the frame header (SOF55) of every JPEG-LS codestream among `fragments` against the DICOM header
/// before CharLS decodes it: dicom-pixeldata's adapter lets CharLS allocate what the codestream claims and keeps
/// every byte it decodes, so a codestream larger than Rows × Columns × SamplesPerPixel would be a bomb or, cut to
/// the header's size, a wrong image.
pub(super) fn check_jpeg_ls(
    fragments: &[impl AsRef<[u8]>],
    rows: usize,
    columns: usize,
    samples: usize,
    bits_allocated: u64,
) -> Result<(), String> {
    let mut seen = 0;
    for (i, fragment) in fragments.iter().enumerate() {
        let data = fragment.as_ref();
        if !data.starts_with(&[0xFF, 0xD8]) {
            continue; // the rest of a frame that began in an earlier fragment
        }
        seen += 1;
        let (_, sof) = segments(data)
            .find(|&(marker, _)| marker == SOF55)
            .ok_or_else(|| format!("fragment {i}: no JPEG-LS frame header (SOF55) before the scan"))?;
        let (Some(&precision), Some(&[h0, h1, w0, w1]), Some(&components)) =
            (sof.first(), sof.get(1..).and_then(|b| b.first_chunk::<4>()), sof.get(5))
        else {
            return Err(format!("fragment {i}: the JPEG-LS frame header is cut short"));
        };
        let (height, width) = (usize::from(u16::from_be_bytes([h0, h1])), usize::from(u16::from_be_bytes([w0, w1])));
        if (height, width, usize::from(components)) != (rows, columns, samples) {
            return Err(format!(
                "fragment {i}: the JPEG-LS image is {width} × {height} pixels of {components} component(s) where \
                 the header says {columns} × {rows} of {samples}"
            ));
        }
        if u64::from(precision) > bits_allocated {
            return Err(format!(
                "fragment {i}: the JPEG-LS samples have {precision} bits, more than (0028,0100) BitsAllocated \
                 {bits_allocated}"
            ));
        }
    }
    if seen == 0 {
        return Err("no fragment holds a JPEG-LS codestream (SOI marker)".into());
    }
    Ok(())
}

/// Decodes `frames` JPEG frames — one fragment each, or one frame in all the fragments — with their components
/// taken as they are, each checked to be `rows` × `columns` of 3 components.
pub(super) fn decode_untransformed(
    fragments: &[impl AsRef<[u8]>],
    frames: usize,
    rows: usize,
    columns: usize,
) -> Result<Vec<u8>, String> {
    let streams: Vec<Vec<u8>> = if frames == 1 {
        vec![fragments.iter().flat_map(|f| f.as_ref().iter().copied()).collect()]
    } else if fragments.len() == frames {
        fragments.iter().map(|f| f.as_ref().to_vec()).collect()
    } else {
        return Err(format!(
            "{frames} frames in {} fragments: RGB JPEG frames without a colour transform are read one fragment each",
            fragments.len()
        ));
    };
    let mut out = Vec::with_capacity(rows.saturating_mul(columns).saturating_mul(3).saturating_mul(frames));
    for (frame, stream) in streams.iter().enumerate() {
        let options = DecoderOptions::default()
            .jpeg_set_out_colorspace(ColorSpace::YCbCr)
            .set_max_width(columns)
            .set_max_height(rows);
        let mut decoder = JpegDecoder::new_with_options(std::io::Cursor::new(stream.as_slice()), options);
        let pixels = decoder.decode().map_err(|e| format!("frame {frame}: {e:?}"))?;
        let info = decoder.info().ok_or_else(|| format!("frame {frame}: the JPEG stream has no frame header"))?;
        let shape = (usize::from(info.height), usize::from(info.width), usize::from(info.components));
        if shape != (rows, columns, 3) || pixels.len() != rows * columns * 3 {
            return Err(format!(
                "frame {frame}: the JPEG image is {} × {} pixels of {} components where the header says {columns} × \
                 {rows} of 3",
                shape.1, shape.0, shape.2
            ));
        }
        out.extend_from_slice(&pixels);
    }
    Ok(out)
}
