//! MetaImage volumes (`.mha` with the data after the header, `.mhd` with the data in a file beside it), ITK's
//! own format: reading, with the geometry of `Offset`, `TransformMatrix` and `ElementSpacing` (ITK's LPS world,
//! converted to RAS).

use super::host_array::Dtype;
use super::image::Image;
use super::raw::RawFormat;
use super::volume_header::{Encoding, Frame, Volume, decode_volume, endian, extents, numbers, read_volume};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Reads a MetaImage file (`.mha`, or `.mhd` with its `ElementDataFile`): raw or zlib/gzip-compressed data
/// (`CompressedData = True`), either byte order, every integer and float type; `DimSize = X Y Z` loads as
/// `[Z, Y, X]`, `ElementNumberOfChannels = 3` or `4` as cliper's colour axis.
///
/// ```
/// let volume = cliper::read_metaimage(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/itk/oblique_i16.mha"))?;
/// assert_eq!(volume.array.shape(), &[3, 4, 5]);
/// assert_eq!(volume.geometry.unwrap().spacing, [2.0, 0.75, 0.5]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn read_metaimage(path: impl AsRef<Path>) -> Result<Image> {
    read_volume(path.as_ref(), parse)
}

/// Reads MetaImage bytes in memory (`ElementDataFile = LOCAL` only); errors name the source `<memory>`.
pub fn decode_metaimage(bytes: &[u8]) -> Result<Image> {
    decode_volume(bytes, parse)
}

/// MetaImage's element types.
fn dtype(name: &str) -> Option<Dtype> {
    Some(match name {
        "MET_CHAR" => Dtype::I8,
        "MET_UCHAR" => Dtype::U8,
        "MET_SHORT" => Dtype::I16,
        "MET_USHORT" => Dtype::U16,
        "MET_INT" | "MET_LONG" => Dtype::I32,
        "MET_UINT" | "MET_ULONG" => Dtype::U32,
        "MET_LONG_LONG" => Dtype::I64,
        "MET_ULONG_LONG" => Dtype::U64,
        "MET_FLOAT" => Dtype::F32,
        "MET_DOUBLE" => Dtype::F64,
        _ => return None,
    })
}

fn parse(bytes: &[u8], path: &Path) -> Result<(Volume, Option<PathBuf>)> {
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    // `Key = Value` lines; `ElementDataFile` is the last, and the data of LOCAL files starts after its line.
    let mut fields = std::collections::HashMap::new();
    let mut header_end = None;
    let mut at = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        at += line.len();
        let text = String::from_utf8_lossy(line);
        let Some((key, value)) = text.split_once('=') else {
            return Err(bad(format!("header line `{}` is not `Key = Value`", text.trim_end())));
        };
        let key = key.trim().to_string();
        fields.insert(key.to_ascii_lowercase(), value.trim().to_string());
        if key.eq_ignore_ascii_case("ElementDataFile") {
            header_end = Some(at);
            break;
        }
        if at > 1 << 20 {
            break;
        }
    }
    let header_end = header_end.ok_or_else(|| bad("the header has no `ElementDataFile` line".into()))?;
    let field = |key: &str| fields.get(&key.to_ascii_lowercase()).map(String::as_str);
    let required = |key: &str| field(key).ok_or_else(|| bad(format!("the header has no `{key}` field")));
    let yes = |key: &str| field(key).is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if let Some(kind) = field("ObjectType")
        && !kind.eq_ignore_ascii_case("Image")
    {
        return Err(bad(format!("ObjectType {kind} is not an image")));
    }
    let type_name = required("ElementType")?;
    let dtype = dtype(&type_name.to_ascii_uppercase())
        .ok_or_else(|| bad(format!("ElementType {type_name} is not a number type cliper reads")))?;
    let dims: usize = required("NDims")?
        .parse()
        .map_err(|_| bad(format!("NDims `{}` is not a number", field("NDims").unwrap_or_default())))?;
    let mut sizes = extents(required("DimSize")?, "DimSize", path)?;
    if sizes.len() != dims {
        return Err(bad(format!("DimSize lists {} extents for NDims {dims}", sizes.len())));
    }
    let channels: usize = field("ElementNumberOfChannels")
        .map_or(Ok(1), |c| c.parse().map_err(|_| bad(format!("ElementNumberOfChannels `{c}` is not a number"))))?;
    let colour = matches!(channels, 3 | 4);
    if channels != 1 {
        // Channels are interleaved: the fastest axis.
        sizes.insert(0, channels);
    }
    let big = yes("BinaryDataByteOrderMSB") || yes("ElementByteOrderMSB");
    let encoding = if yes("CompressedData") { Encoding::Deflated } else { Encoding::Raw };
    let spatial = dims.min(3);
    let spacing = match field("ElementSpacing").or_else(|| field("ElementSize")) {
        Some(t) => numbers(t, "ElementSpacing", path)?,
        None => vec![1.0; spatial],
    };
    let matrix = match field("TransformMatrix").or_else(|| field("Orientation")).or_else(|| field("Rotation")) {
        Some(t) => numbers(t, "TransformMatrix", path)?,
        None => Vec::new(),
    };
    // Each run of NDims numbers of TransformMatrix is one axis's direction (ITK writes it so).
    let mut axes = Vec::new();
    for a in 0..spatial {
        let mut v = [0.0; 3];
        for (c, slot) in v.iter_mut().enumerate().take(spatial) {
            *slot = match matrix.get(a * dims + c) {
                Some(&m) => m,
                None => f64::from(u8::from(a == c)),
            };
        }
        let s = spacing.get(a).copied().unwrap_or(1.0);
        axes.push(v.map(|x| x * s));
    }
    let origin_values = match field("Offset").or_else(|| field("Origin")).or_else(|| field("Position")) {
        Some(t) => numbers(t, "Offset", path)?,
        None => Vec::new(),
    };
    let origin = [0, 1, 2].map(|k| origin_values.get(k).copied().unwrap_or(0.0));
    let data_name = required("ElementDataFile")?;
    let detached = if data_name.eq_ignore_ascii_case("LOCAL") {
        None
    } else if data_name.eq_ignore_ascii_case("LIST") || data_name.contains('%') {
        return Err(bad(format!("ElementDataFile {data_name} (one file per slice) is not read by cliper")));
    } else {
        Some(path.parent().map(|dir| dir.join(data_name)).unwrap_or_else(|| PathBuf::from(data_name)))
    };
    let volume = Volume {
        sizes,
        format: RawFormat { shape: Vec::new(), dtype, endian: endian(big) },
        encoding,
        data_file: detached.clone().unwrap_or_else(|| path.to_path_buf()),
        offset: if detached.is_some() { 0 } else { header_end as u64 },
        from_end: false,
        colour,
        axes,
        origin,
        frame: Frame::Lps,
        has_geometry: true,
    };
    Ok((volume, detached))
}
