//! NRRD volumes (`.nrrd`, and `.nhdr` headers with their data file), as 3D Slicer, ITK and teem write them:
//! reading, with the geometry of `space directions` / `space origin` (or `spacings`).

use super::host_array::Dtype;
use super::image::Image;
use super::raw::RawFormat;
use super::volume_header::{Encoding, Frame, Volume, decode_volume, endian, extents, numbers, read_volume};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Reads a NRRD file: attached data (`.nrrd`) or a detached header (`.nhdr`, its `data file` beside it);
/// encodings raw and gzip, either byte order, every integer and float type; axes listed fastest first load
/// reversed (`sizes: X Y Z` → `[Z, Y, X]`), an `RGB-color`/`RGBA-color` axis as cliper's colour axis. The
/// geometry comes from `space directions` and `space origin` (LPS, RAS or LAS `space`, converted to RAS; ITK's LPS
/// when no anatomical space is named), else from `spacings`.
///
/// ```
/// let volume = cliper::read_nrrd(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/itk/oblique_i16.nrrd"))?;
/// assert_eq!(volume.array.shape(), &[3, 4, 5]);
/// assert_eq!(volume.geometry.unwrap().spacing, [2.0, 0.75, 0.5]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn read_nrrd(path: impl AsRef<Path>) -> Result<Image> {
    read_volume(path.as_ref(), parse)
}

/// Reads NRRD bytes in memory (attached data only); errors name the source `<memory>`.
pub fn decode_nrrd(bytes: &[u8]) -> Result<Image> {
    decode_volume(bytes, parse)
}

/// NRRD's type names.
fn dtype(name: &str) -> Option<Dtype> {
    Some(match name {
        "signed char" | "int8" | "int8_t" => Dtype::I8,
        "uchar" | "unsigned char" | "uint8" | "uint8_t" => Dtype::U8,
        "short" | "short int" | "signed short" | "signed short int" | "int16" | "int16_t" => Dtype::I16,
        "ushort" | "unsigned short" | "unsigned short int" | "uint16" | "uint16_t" => Dtype::U16,
        "int" | "signed int" | "int32" | "int32_t" => Dtype::I32,
        "uint" | "unsigned int" | "uint32" | "uint32_t" => Dtype::U32,
        "longlong"
        | "long long"
        | "long long int"
        | "signed long long"
        | "signed long long int"
        | "int64"
        | "int64_t" => Dtype::I64,
        "ulonglong" | "unsigned long long" | "unsigned long long int" | "uint64" | "uint64_t" => Dtype::U64,
        "float" => Dtype::F32,
        "double" => Dtype::F64,
        _ => return None,
    })
}

/// The header: the volume it describes and, for a detached header, the data file.
fn parse(bytes: &[u8], path: &Path) -> Result<(Volume, Option<PathBuf>)> {
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    if !bytes.starts_with(b"NRRD000") {
        return Err(bad("not a NRRD file: it does not begin with NRRD000N".into()));
    }
    // The header is text up to the first empty line; the data follows it.
    let mut end = None;
    let mut at = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        at += line.len();
        if line == b"\n" || line == b"\r\n" {
            end = Some(at);
            break;
        }
        if at > 1 << 20 {
            break;
        }
    }
    let header_end = end.unwrap_or(bytes.len());
    let text = String::from_utf8_lossy(bytes.get(..header_end).unwrap_or_default());
    let mut fields = std::collections::HashMap::new();
    for line in text.lines().skip(1) {
        let line = line.trim_end();
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        // `key: value` fields; `key:=value` pairs are free-form metadata.
        if let Some((key, value)) = line.split_once(": ") {
            if !key.contains(":=") {
                fields.insert(key.trim().to_ascii_lowercase(), value.trim().to_string());
            }
        } else if !line.contains(":=") {
            return Err(bad(format!("header line `{line}` is neither a field (`key: value`) nor a comment")));
        }
    }
    let field = |key: &str| fields.get(key).map(String::as_str);
    let required = |key: &str| field(key).ok_or_else(|| bad(format!("the header has no `{key}` field")));
    let type_name = required("type")?;
    let dtype = dtype(&type_name.to_ascii_lowercase())
        .ok_or_else(|| bad(format!("type `{type_name}` is not a number type cliper reads")))?;
    let dimension: usize = required("dimension")?
        .parse()
        .map_err(|_| bad(format!("dimension `{}` is not a number", field("dimension").unwrap_or_default())))?;
    let sizes = extents(required("sizes")?, "sizes", path)?;
    if sizes.len() != dimension {
        return Err(bad(format!("`sizes` lists {} extents for dimension {dimension}", sizes.len())));
    }
    let encoding = match required("encoding")?.to_ascii_lowercase().as_str() {
        "raw" => Encoding::Raw,
        "gzip" | "gz" => Encoding::Deflated,
        other => {
            return Err(bad(format!("encoding `{other}` is not read by cliper (raw and gzip are)")));
        }
    };
    let big = match field("endian").map(str::to_ascii_lowercase).as_deref() {
        Some("big") => true,
        Some("little") | None => false,
        Some(other) => return Err(bad(format!("endian `{other}` is neither little nor big"))),
    };
    if dtype.size() > 1 && field("endian").is_none() {
        return Err(bad(format!("type {} needs an `endian` field", dtype.name())));
    }
    let kinds: Vec<String> =
        field("kinds").map(|k| k.split_whitespace().map(str::to_ascii_lowercase).collect()).unwrap_or_default();
    let colour = matches!(kinds.first().map(String::as_str), Some("rgb-color" | "rgba-color"))
        && matches!(sizes.first(), Some(3 | 4));
    // Without a named anatomical space (no `space`, `scanner-xyz`, `3D-right-handed`) vectors are taken in ITK's
    // LPS frame, as ITK and 3D Slicer read them.
    let frame = match field("space").map(str::to_ascii_lowercase).as_deref() {
        Some("right-anterior-superior" | "ras") => Frame::Ras,
        Some("left-anterior-superior" | "las") => Frame::Las,
        _ => Frame::Lps,
    };
    // `space directions`: one vector per axis, `none` for non-spatial ones (colour, time, lists).
    let mut axes = Vec::new();
    let mut has_geometry = false;
    if let Some(text) = field("space directions") {
        for part in text.split_whitespace() {
            if part.eq_ignore_ascii_case("none") {
                continue;
            }
            let v = numbers(part, "space direction", path)?;
            match v.as_slice() {
                [x, y, z] => axes.push([*x, *y, *z]),
                [x, y] => axes.push([*x, *y, 0.0]),
                _ => return Err(bad(format!("space direction `{part}` is not a vector of 2 or 3 numbers"))),
            }
        }
        has_geometry = true;
    } else if let Some(text) = field("spacings") {
        let spacing = numbers(text, "spacings", path)?;
        let mut axis = 0;
        for s in spacing {
            if s.is_finite() {
                let mut v = [0.0; 3];
                if let Some(slot) = v.get_mut(axis) {
                    *slot = s;
                }
                axes.push(v);
                axis += 1;
            }
        }
        has_geometry = true;
    }
    let origin = match field("space origin") {
        Some(text) => {
            let o = numbers(text, "space origin", path)?;
            [o.first().copied().unwrap_or(0.0), o.get(1).copied().unwrap_or(0.0), o.get(2).copied().unwrap_or(0.0)]
        }
        None => [0.0; 3],
    };
    let detached = field("data file")
        .or_else(|| field("datafile"))
        .map(|name| path.parent().map(|dir| dir.join(name)).unwrap_or_else(|| PathBuf::from(name)));
    let skip = |key: &str| -> Result<i64> {
        field(key).map_or(Ok(0), |t| t.parse().map_err(|_| bad(format!("`{key}: {t}` is not a whole number"))))
    };
    let (byte_skip, line_skip) = (skip("byte skip")?, skip("line skip")?);
    let data_bytes: &[u8] = if detached.is_some() { &[] } else { bytes.get(header_end..).unwrap_or_default() };
    let mut offset = if detached.is_some() { 0 } else { header_end as u64 };
    if line_skip > 0 {
        // Whole lines of the data file (or of what follows the header) are skipped first.
        if detached.is_none() {
            let mut lines = 0;
            for (i, b) in data_bytes.iter().enumerate() {
                if lines == line_skip {
                    break;
                }
                if *b == b'\n' {
                    lines += 1;
                    offset = header_end as u64 + i as u64 + 1;
                }
            }
        } else {
            return Err(bad("`line skip` with a detached data file is not read by cliper".into()));
        }
    }
    let from_end = byte_skip == -1;
    if byte_skip > 0 {
        offset += byte_skip as u64;
    } else if byte_skip < -1 {
        return Err(bad(format!("byte skip {byte_skip} is not −1 or a count of bytes")));
    }
    if from_end && encoding != Encoding::Raw {
        return Err(bad("`byte skip: -1` is for raw data only".into()));
    }
    let data_file = detached.clone().unwrap_or_else(|| path.to_path_buf());
    let volume = Volume {
        sizes,
        format: RawFormat { shape: Vec::new(), dtype, endian: endian(big) },
        encoding,
        data_file,
        offset,
        from_end,
        colour,
        axes,
        origin,
        frame,
        has_geometry,
    };
    Ok((volume, detached))
}
