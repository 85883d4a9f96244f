//! A check of JPEG 2000 codestreams before dicom-pixeldata decodes them: its adapter (dicom-transfer-syntax-registry
//! 0.10.1) writes each decoded component into a buffer sized from the DICOM header and panics (slice index out of
//! range, found by fuzzing) when the codestream's image is larger, or has more components, than Rows × Columns ×
//! SamplesPerPixel say. The image size (SIZ marker segment) must match the header; subsampled components are
//! refused too (they would not fill the frame).

/// Checks every fragment that starts a codestream (raw, or in a JP2 file's `jp2c` box) against the header.
pub(super) fn check(fragments: &[impl AsRef<[u8]>], rows: usize, columns: usize, samples: usize) -> Result<(), String> {
    let mut seen = 0;
    for (i, fragment) in fragments.iter().enumerate() {
        let Some(codestream) = codestream(fragment.as_ref()) else { continue };
        seen += 1;
        let siz =
            Siz::read(codestream).ok_or_else(|| format!("fragment {i}: the JPEG 2000 SIZ marker is cut short"))?;
        let (width, height) = (siz.width.saturating_sub(siz.x0), siz.height.saturating_sub(siz.y0));
        if (width as usize, height as usize) != (columns, rows) {
            return Err(format!(
                "fragment {i}: the JPEG 2000 image is {width} × {height} pixels where the header says {columns} × {rows}"
            ));
        }
        if siz.components.len() != samples {
            return Err(format!(
                "fragment {i}: the JPEG 2000 image has {} component(s) where the header says {samples} sample(s)",
                siz.components.len()
            ));
        }
        if let Some(c) = siz.components.iter().position(|&(dx, dy)| dx != 1 || dy != 1) {
            return Err(format!("fragment {i}: JPEG 2000 component {c} is subsampled, which cliper does not read"));
        }
    }
    if seen == 0 {
        return Err("no fragment holds a JPEG 2000 codestream (SOC and SIZ markers, or a JP2 file)".into());
    }
    Ok(())
}

/// The codestream of `data`: `data` itself when it starts with SOC, SIZ (FF4F FF51), or the contents of the
/// `jp2c` box of a JP2 file.
fn codestream(data: &[u8]) -> Option<&[u8]> {
    if data.starts_with(&[0xFF, 0x4F, 0xFF, 0x51]) {
        return Some(data);
    }
    if !data.starts_with(&[0, 0, 0, 0x0C, b'j', b'P', b' ', b' ']) {
        return None;
    }
    let mut at = 0usize;
    while at + 8 <= data.len() {
        let word = |from: usize| data.get(from..from + 4).and_then(|b| b.try_into().ok()).map(u32::from_be_bytes);
        let (length, kind) = (word(at)? as usize, data.get(at + 4..at + 8)?);
        let (header, length) = match length {
            0 => (8, data.len() - at),
            1 => {
                let long = data.get(at + 8..at + 16).and_then(|b| b.try_into().ok()).map(u64::from_be_bytes)?;
                (16, usize::try_from(long).ok()?)
            }
            n => (8, n),
        };
        if kind == b"jp2c" {
            return data.get(at + header..).filter(|c| c.starts_with(&[0xFF, 0x4F, 0xFF, 0x51]));
        }
        if length < header {
            return None;
        }
        at = at.checked_add(length)?;
    }
    None
}

/// What the SIZ marker segment says: the reference grid's extent and offset, and each component's subsampling.
struct Siz {
    width: u32,
    height: u32,
    x0: u32,
    y0: u32,
    components: Vec<(u8, u8)>,
}

impl Siz {
    /// SIZ follows SOC at byte 2: FF51, Lsiz, Rsiz, Xsiz, Ysiz, XOsiz, YOsiz, XTsiz, YTsiz, XTOsiz, YTOsiz, Csiz,
    /// then Ssiz, XRsiz, YRsiz per component.
    fn read(codestream: &[u8]) -> Option<Siz> {
        let u32_at = |at: usize| codestream.get(at..at + 4).and_then(|b| b.try_into().ok()).map(u32::from_be_bytes);
        let u16_at = |at: usize| codestream.get(at..at + 2).and_then(|b| b.try_into().ok()).map(u16::from_be_bytes);
        let count = u16_at(40)? as usize;
        let components = (0..count)
            .map(|c| Some((*codestream.get(43 + 3 * c)?, *codestream.get(44 + 3 * c)?)))
            .collect::<Option<Vec<_>>>()?;
        Some(Siz { width: u32_at(8)?, height: u32_at(12)?, x0: u32_at(16)?, y0: u32_at(20)?, components })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A codestream header of `width` × `height` with `components` unsubsampled components.
    fn header(width: u32, height: u32, components: u16) -> Vec<u8> {
        let mut c = vec![0xFF, 0x4F, 0xFF, 0x51, 0, 38 + 3 * components as u8, 0, 0];
        for v in [width, height, 0, 0, width, height, 0, 0] {
            c.extend(v.to_be_bytes());
        }
        c.extend(components.to_be_bytes());
        for _ in 0..components {
            c.extend([7, 1, 1]);
        }
        c
    }

    #[test]
    fn codestreams_must_match_the_dicom_header() {
        assert!(check(&[header(9, 11, 1)], 11, 9, 1).is_ok());
        assert!(
            check(&[header(9, 12, 1)], 11, 9, 1).unwrap_err().contains("9 × 12 pixels where the header says 9 × 11")
        );
        assert!(check(&[header(9, 11, 3)], 11, 9, 1).unwrap_err().contains("3 component(s)"));
        assert!(check(&[vec![1u8, 2, 3]], 11, 9, 1).unwrap_err().contains("no fragment"));
        let mut jp2 = vec![0, 0, 0, 0x0C, b'j', b'P', b' ', b' ', 0x0D, 0x0A, 0x87, 0x0A];
        let stream = header(9, 11, 1);
        jp2.extend((8 + stream.len() as u32).to_be_bytes());
        jp2.extend(b"jp2c");
        jp2.extend(&stream);
        assert!(check(&[jp2], 11, 9, 1).is_ok());
    }
}
