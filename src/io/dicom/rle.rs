//! DICOM RLE Lossless (PS3.5 Annex G), decoded here rather than by dicom-pixeldata: its decoder panics on a
//! segment that decodes to fewer bytes than a frame needs (index out of bounds in dicom-transfer-syntax-registry
//! 0.10.1, found by fuzzing), and a 20-byte edit of a valid file made it do so. This one checks every offset and
//! length and says which frame and segment is short.

/// The frames of `fragments` (one per frame, as the standard requires) decoded to interleaved samples, each of
/// `bytes` little-endian bytes: the layout of uncompressed native pixel data with planar configuration 0.
pub(super) fn decode(
    fragments: &[impl AsRef<[u8]>],
    pixels: usize,
    frames: usize,
    samples: usize,
    bytes: usize,
) -> Result<Vec<u8>, String> {
    if fragments.len() < frames {
        return Err(format!("{frames} frames but {} RLE fragments (one per frame)", fragments.len()));
    }
    let segments = samples * bytes;
    let frame_size = pixels * segments;
    let mut out = vec![0u8; frame_size.checked_mul(frames).ok_or("the frames' size overflows")?];
    for (f, (fragment, frame)) in fragments.iter().zip(out.chunks_exact_mut(frame_size.max(1))).enumerate() {
        let fragment = fragment.as_ref();
        let word = |at: usize| {
            let b: Option<[u8; 4]> = fragment.get(at..at + 4).and_then(|b| b.try_into().ok());
            b.map_or(0, |b| u32::from_le_bytes(b) as usize)
        };
        if fragment.len() < 64 {
            return Err(format!("frame {f}: {} bytes, less than the 64-byte RLE header", fragment.len()));
        }
        let count = word(0);
        if count != segments {
            return Err(format!(
                "frame {f}: {count} RLE segments where {samples} sample(s) of {bytes} byte(s) need {segments}"
            ));
        }
        for s in 0..segments {
            let start = word(4 + 4 * s);
            let end = if s + 1 < segments { word(8 + 4 * s) } else { fragment.len() };
            let segment = fragment.get(start..end).filter(|_| start >= 64).ok_or_else(|| {
                format!("frame {f}: segment {s} spans bytes {start}..{end} of a {}-byte fragment", fragment.len())
            })?;
            let decoded = packbits(segment, pixels);
            if decoded.len() < pixels {
                return Err(format!(
                    "frame {f}: segment {s} decodes to {} bytes where {pixels} are needed",
                    decoded.len()
                ));
            }
            // Segment s holds byte (bytes − 1 − s % bytes) — most significant first — of sample s / bytes.
            let (sample, byte) = (s / bytes, bytes - 1 - s % bytes);
            for (pixel, value) in decoded.iter().enumerate() {
                if let Some(slot) = frame.get_mut((pixel * samples + sample) * bytes + byte) {
                    *slot = *value;
                }
            }
        }
    }
    Ok(out)
}

/// PackBits (the byte-oriented run-length code of TIFF and DICOM RLE): a header byte n then n + 1 literal bytes
/// (n in 0..=127), or one byte repeated 1 − n times (n in −127..=−1); −128 is a no-op. Stops at `limit` bytes.
fn packbits(data: &[u8], limit: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(limit);
    let mut i = 0;
    while out.len() < limit {
        let Some(&header) = data.get(i) else { break };
        let n = header as i8;
        i += 1;
        if n >= 0 {
            let literal = data.get(i..(i + n as usize + 1).min(data.len())).unwrap_or_default();
            out.extend_from_slice(literal);
            i += n as usize + 1;
        } else if n != -128 {
            let Some(&value) = data.get(i) else { break };
            out.extend(std::iter::repeat_n(value, (1 - n as isize) as usize));
            i += 1;
        }
    }
    out.truncate(limit);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packbits_decodes_literals_and_runs() {
        // 2 literals, a run of 4 × 7, a no-op, 1 literal.
        assert_eq!(packbits(&[1, 10, 11, 0xFD, 7, 0x80, 0, 12], 100), vec![10, 11, 7, 7, 7, 7, 12]);
        assert_eq!(packbits(&[0xFD, 7], 2), vec![7, 7]);
    }

    #[test]
    fn short_segments_and_bad_offsets_are_errors() {
        let mut fragment = vec![0u8; 64];
        fragment[0] = 1; // one segment
        fragment[4] = 64; // at byte 64
        fragment.extend([0xFD, 5]); // four 5s
        assert_eq!(decode(&[fragment.clone()], 4, 1, 1, 1).unwrap(), vec![5, 5, 5, 5]);
        let e = decode(&[fragment.clone()], 6, 1, 1, 1).unwrap_err();
        assert!(e.contains("segment 0 decodes to 4 bytes where 6"), "{e}");
        fragment[4] = 200;
        assert!(decode(&[fragment], 4, 1, 1, 1).unwrap_err().contains("spans bytes 200"));
    }
}
