//! DICOM files, multi-frame objects and series (a folder, or a list of files) with their geometry.
//!
//! Parsing and the compressed transfer syntaxes are dicom-rs's (`dicom-object`, `dicom-pixeldata`); the stored
//! values, their byte order and bit depth, the colour layout, the rescale and the geometry are read here, so that
//! the arrays equal pydicom's `apply_modality_lut(ds.pixel_array, ds)` and the positions dcm2niix's.
//! docs/formats.md ("DICOM") states the rules.

use crate::io::geometry::{Geometry, V3, cross, difference, dot, unit};
use crate::io::host_array::{HostArray, Widen, each_variant};
use crate::io::image::Image;
use crate::io::inflate::{Wrapper, inflate_checked};
use crate::io::rescale::{Scaling, rescale};
use crate::io::source::matching_files;

mod j2k;
mod jpeg;
mod rle;
mod write;

use crate::error::{Error, Result};
use dicom_core::Tag;
use dicom_core::value::{PrimitiveValue, Value};
use dicom_dictionary_std::tags;
use dicom_object::mem::InMemElement;
use dicom_object::{DefaultDicomObject, InMemDicomObject, OpenFileOptions};
use dicom_pixeldata::PixelDecoder;
use dicom_transfer_syntax_registry::{TransferSyntaxIndex, TransferSyntaxRegistry};
use ndarray::ArrayD;
use std::path::{Path, PathBuf};
pub use write::{DicomSeriesOptions, write_dicom_series};

/// What `cliper info` shows of a DICOM input beside its array and geometry: what a researcher needs to know
/// which data this is and how it was read — no patient fields.
///
/// ```
/// let ct = cliper::read_dicom(concat!(env!("CARGO_MANIFEST_DIR"), "/data/ct_series"))?;
/// assert_eq!((ct.info.modality.as_str(), ct.info.files.len()), ("CT", 24));
/// assert_eq!(ct.info.transfer_syntax, "Explicit VR Little Endian");
/// assert_eq!(ct.info.rescale, vec![(1.0, -1024.0)]); // stored values + 1024 → Hounsfield units
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DicomInfo {
    /// Modality (CT, MR, …).
    pub modality: String,
    /// SeriesInstanceUID.
    pub series_uid: String,
    /// SeriesDescription, when present.
    pub series_description: String,
    /// SeriesNumber, when present.
    pub series_number: String,
    /// ImageType (`ORIGINAL\PRIMARY\AXIAL`, …), when present.
    pub image_type: String,
    /// SOP Class UID (CT Image Storage, Enhanced MR Image Storage, …).
    pub sop_class_uid: String,
    /// The transfer syntax's name (of the first file).
    pub transfer_syntax: String,
    /// The transfer syntax's UID.
    pub transfer_syntax_uid: String,
    /// PhotometricInterpretation as stored (`MONOCHROME2`, `RGB`, `YBR_FULL_422`, …; colour is given as RGB).
    pub photometric: String,
    /// BitsStored of the samples.
    pub bits_stored: u16,
    /// The rescale (slope, intercept) applied: one pair when every frame and file shares it, else one per frame
    /// (multi-frame) or per slice (series, in slice order). `(1, 0)` when the files have none.
    pub rescale: Vec<(f64, f64)>,
    /// The files read, in slice order (empty for bytes in memory).
    pub files: Vec<PathBuf>,
}

/// A DICOM image or series: the array (rescaled), its geometry, and what the files said about it.
///
/// ```
/// let mr = cliper::read_dicom(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/dicom/MR_small.dcm"))?;
/// assert_eq!(mr.image.array.shape(), &[64, 64]);
/// assert_eq!(mr.image.geometry.unwrap().axis_codes(), "LPS");
/// assert_eq!(mr.info.modality, "MR");
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Dicom {
    /// The pixels as an image, with geometry.
    pub image: Image,
    /// The series' tags.
    pub info: DicomInfo,
}

/// Reads a DICOM file, a folder holding one series, or the files a pattern names (`scan/IM*`, `scan/*.dcm`: `*`
/// and `?` in the file name) as one series (every regular file that is DICOM — `DICM` at byte 128 —
/// other than DICOMDIR; other files are ignored, as are DICOM objects without pixel data).
///
/// A single-frame file gives `[rows, columns]`, a multi-frame one `[frames, rows, columns]`, a series
/// `[slices, rows, columns]` sorted along the slice normal; colour files have a channel axis before the rows
/// (`[3, rows, columns]`). Values are the stored ones after RescaleSlope/RescaleIntercept
/// (docs/formats.md, "DICOM").
///
/// ```
/// let ct = cliper::read_dicom(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/dicom/CT_small.dcm"))?;
/// assert_eq!(ct.image.array.shape(), &[128, 128]);
/// assert_eq!(ct.image.array.dtype(), cliper::Dtype::I16); // Hounsfield units: intercept −1024
/// assert_eq!(ct.info.modality, "CT");
/// let series = cliper::read_dicom(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/dicom/series"))?;
/// assert_eq!(series.image.array.shape(), &[6, 11, 9]); // slices, rows, columns
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn read_dicom(path: impl AsRef<Path>) -> Result<Dicom> {
    let path = path.as_ref();
    // `scan/IM*` or `scan/*.dcm`: the series is the files the pattern names.
    if let Some(files) = matching_files(path)? {
        if files.is_empty() {
            return Err(Error::Format { path: path.to_path_buf(), reason: "the pattern names no file".into() });
        }
        return read_dicom_series(&files);
    }
    if path.is_dir() {
        let files = series_files(path)?;
        if files.is_empty() {
            return Err(Error::Format {
                path: path.to_path_buf(),
                reason: "the folder holds no DICOM file with pixel data".into(),
            });
        }
        return series(files, path);
    }
    let bytes = std::fs::read(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    let file = parse(&bytes, path)?;
    let mut dicom = single(file)?;
    dicom.info.files = vec![path.to_path_buf()];
    Ok(dicom)
}

/// Reads the files of one series, in any order: they are sorted by their position along the slice normal.
/// Files of several series, of different orientations, sizes or pixel types, two at one position, or a gap
/// (a missing slice) are errors naming the files.
///
/// ```
/// let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/dicom/series"));
/// let mut files: Vec<_> = std::fs::read_dir(dir)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>()?;
/// files.retain(|f| cliper::is_dicom_file(f)); // the folder also holds a notes.txt
/// files.sort();
/// let series = cliper::read_dicom_series(&files)?;
/// assert_eq!(series.image.array.shape(), &[6, 11, 9]);
/// assert_eq!(series.info.files.len(), 6); // in slice order
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_dicom_series(files: &[PathBuf]) -> Result<Dicom> {
    let Some(first) = files.first() else {
        return Err(Error::invalid("read_dicom_series", "no files given"));
    };
    // The slices are read and parsed on every core (a series is hundreds of small files), in their order.
    use rayon::prelude::*;
    let parsed = files
        .par_iter()
        .map(|path| {
            let bytes = std::fs::read(path).map_err(|source| Error::Io { path: path.clone(), source })?;
            parse(&bytes, path)
        })
        .collect::<Result<Vec<_>>>()?;
    let origin = first.parent().unwrap_or(first).to_path_buf();
    series(parsed, &origin)
}

/// Reads one DICOM part 10 file's bytes in memory (with or without the 128-byte preamble); errors name the
/// source `<memory>`.
///
/// ```
/// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/dicom/MR_small.dcm"))?;
/// let mr = cliper::decode_dicom(&bytes)?;
/// assert_eq!(mr.image.array.shape(), &[64, 64]);
/// assert!(cliper::decode_dicom(b"not DICOM").is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn decode_dicom(bytes: &[u8]) -> Result<Dicom> {
    single(parse(bytes, Path::new(super::source::MEMORY))?)
}

/// One file's content: its stored values and what the geometry and the info need.
struct File {
    path: PathBuf,
    object: DefaultDicomObject,
}

/// One file's decoded pixels and tags.
struct Decoded {
    /// Stored values, `[frames, rows, columns]` or `[frames, 3, rows, columns]`.
    values: HostArray,
    frames: usize,
    rows: usize,
    columns: usize,
    colour: bool,
    /// (slope, intercept) per frame.
    rescale: Vec<(f64, f64)>,
    info: DicomInfo,
}

fn format_error(path: &Path, reason: impl Into<String>) -> Error {
    Error::Format { path: path.to_path_buf(), reason: reason.into() }
}

/// Parses a part 10 file: the 128-byte preamble and `DICM` (or `DICM` at the start), the meta group, the data set.
fn parse(bytes: &[u8], path: &Path) -> Result<File> {
    let body = if bytes.get(128..132) == Some(b"DICM".as_slice()) {
        bytes.get(128..).unwrap_or_default()
    } else if bytes.get(..4) == Some(b"DICM".as_slice()) {
        bytes
    } else {
        return Err(format_error(path, "not a DICOM part 10 file: no `DICM` at byte 128 (nor at byte 0)"));
    };
    check_lengths(body.get(4..).unwrap_or_default(), true).map_err(|reason| format_error(path, reason))?;
    let object =
        OpenFileOptions::new().read_preamble(dicom_object::file::ReadPreamble::Never).from_reader(body).map_err(
            |e| format_error(path, format!("cannot parse the DICOM file (truncated or malformed?): {}", chain(&e))),
        )?;
    Ok(File { path: path.to_path_buf(), object })
}

/// Walks the element headers of the meta group and the data set (into sequences, over encapsulated fragments)
/// and refuses a defined length longer than the bytes left: dicom-parser allocates an element's claimed length
/// before reading it, so a 100-byte file claiming a 4 GB element would take 4 GB (found by fuzzing). A deflated
/// data set is inflated (at most deflate's 1032-fold) and walked the same way; an explicit-VR UN of undefined
/// length (implicit VR inside) ends the walk. `meta`: `bytes` start with the meta group (else with the data set,
/// explicit VR little endian).
fn check_lengths(bytes: &[u8], meta: bool) -> std::result::Result<(), String> {
    const UNDEFINED: u32 = 0xFFFF_FFFF;
    let (mut pos, mut explicit, mut little, mut meta, mut fragments) = (0usize, true, true, meta, false);
    let mut deflated = false;
    // The data set's encoding, from the meta group's transfer syntax (the meta group is explicit VR LE).
    let (mut set_explicit, mut set_little) = (true, true);
    let u16_at = |at: usize, little: bool| -> Option<u16> {
        let b: [u8; 2] = bytes.get(at..at + 2)?.try_into().ok()?;
        Some(if little { u16::from_le_bytes(b) } else { u16::from_be_bytes(b) })
    };
    let u32_at = |at: usize, little: bool| -> Option<u32> {
        let b: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
        Some(if little { u32::from_le_bytes(b) } else { u32::from_be_bytes(b) })
    };
    while pos + 8 <= bytes.len() {
        let Some(group) = u16_at(pos, little) else { break };
        if meta && group != 0x0002 {
            if deflated {
                // The rest is a raw deflate stream of an explicit VR little endian data set. It has no checksum;
                // inflating it to its end at least refuses a stream cut before its final block.
                let rest = bytes.get(pos..).unwrap_or_default();
                let limit = (rest.len() as u64).saturating_mul(1032).saturating_add(1 << 16);
                let (inflated, _) = inflate_checked(rest, Wrapper::Deflate, limit)
                    .map_err(|e| format!("the deflated data set at byte {} does not inflate: {e}", pos + 132))?;
                return check_lengths(&inflated, false);
            }
            // The data set begins: its transfer syntax was read from (0002,0010).
            (meta, explicit, little) = (false, set_explicit, set_little);
            continue;
        }
        let (Some(element), Some(group)) = (u16_at(pos + 2, little), Some(group)) else { break };
        // The VRs with a 2-byte length; every other VR — the long ones, and bytes that are no VR at all, which
        // dicom-parser reads as UN — has 2 reserved bytes and a 4-byte length (found by fuzzing: an element with VR
        // bytes BC BC was walked as short here and read as a 3.5 GB UN by the parser).
        let long_vr = |vr: &[u8]| {
            !matches!(
                vr,
                b"AE"
                    | b"AS"
                    | b"AT"
                    | b"CS"
                    | b"DA"
                    | b"DS"
                    | b"DT"
                    | b"FL"
                    | b"FD"
                    | b"IS"
                    | b"LO"
                    | b"LT"
                    | b"PN"
                    | b"SH"
                    | b"SL"
                    | b"SS"
                    | b"ST"
                    | b"TM"
                    | b"UI"
                    | b"UL"
                    | b"US"
            )
        };
        let (header, length, sequence, unknown) = if group == 0xFFFE {
            (8, u32_at(pos + 4, little), false, false)
        } else if explicit {
            let vr = bytes.get(pos + 4..pos + 6).unwrap_or_default();
            let known_long = matches!(
                vr,
                b"OB" | b"OD" | b"OF" | b"OL" | b"OV" | b"OW" | b"SQ" | b"SV" | b"UC" | b"UN" | b"UR" | b"UT" | b"UV"
            );
            if long_vr(vr) && !known_long {
                // Bytes that are no VR: dicom-parser reads on (as UN, and past an undefined length), where lengths
                // could no longer be checked — found by fuzzing (3.9 GB claimed after FF FF "VRs"). Explicit VR
                // files name a VR for every element, so this is a corrupt file.
                return Err(format!(
                    "element ({group:04X},{element:04X}) at byte {} has VR bytes {:02X?}, which name no DICOM VR: the \
                     file is corrupt",
                    pos + 132,
                    vr
                ));
            }
            if long_vr(vr) {
                // An undefined length on UN holds implicit VR: the walk ends there.
                (12, u32_at(pos + 8, little), vr == b"SQ", vr == b"UN")
            } else {
                (8, u16_at(pos + 6, little).map(u32::from), false, false)
            }
        } else {
            use dicom_core::dictionary::{DataDictionary, DataDictionaryEntry};
            let vr = dicom_dictionary_std::StandardDataDictionary.by_tag(Tag(group, element)).map(|e| e.vr());
            let sq = matches!(vr, Some(dicom_core::dictionary::VirtualVr::Exact(dicom_core::VR::SQ)));
            (8, u32_at(pos + 4, little), sq, false)
        };
        let Some(length) = length else { break };
        // Binary VRs hold whole values: dicom-parser reads a length that is not a multiple of the value size
        // differently from this walk (an SL of length 2 was read as empty, and the next bytes as a 4 GB element —
        // found by fuzzing), so such a file is refused as corrupt.
        let value_size = match bytes.get(pos + 4..pos + 6).filter(|_| explicit && group != 0xFFFE) {
            Some(b"SS" | b"US") => 2,
            Some(b"SL" | b"UL" | b"FL" | b"AT") => 4,
            Some(b"FD" | b"SV" | b"UV") => 8,
            _ => 1,
        };
        if length != UNDEFINED && length % value_size != 0 {
            return Err(format!(
                "element ({group:04X},{element:04X}) at byte {} has length {length}, not a multiple of its values' {} \
                 bytes: the file is corrupt",
                pos + 132,
                value_size
            ));
        }
        let remaining = bytes.len().saturating_sub(pos + header);
        let too_long = length != UNDEFINED && length as usize > remaining;
        if too_long {
            return Err(format!(
                "element ({group:04X},{element:04X}) at byte {} claims {length} bytes where {remaining} remain: the \
                 file is truncated or corrupt",
                pos + 132
            ));
        }
        if meta && (group, element) == (0x0002, 0x0010) {
            let uid = bytes.get(pos + header..pos + header + length as usize).unwrap_or_default();
            let uid = String::from_utf8_lossy(uid);
            match uid.trim_end_matches(['\0', ' ']) {
                "1.2.840.10008.1.2" => set_explicit = false,
                "1.2.840.10008.1.2.2" => set_little = false,
                // Deflated: the data set is compressed; walked once inflated.
                "1.2.840.10008.1.2.1.99" | "1.2.840.10008.1.2.4.95" => deflated = true,
                _ => {}
            }
        }
        pos += header;
        if group == 0xFFFE {
            match element {
                0xE000 if fragments && length != UNDEFINED => pos += length as usize,
                0xE0DD => fragments = false,
                _ => {} // an item of a sequence: its elements follow
            }
        } else if length == UNDEFINED {
            if (group, element) == (0x7FE0, 0x0010) {
                fragments = true;
            } else if unknown {
                return Ok(());
            }
        } else if !sequence {
            pos += length as usize;
        }
    }
    Ok(())
}

/// An error and its sources, in one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// A string attribute, trimmed (empty when absent).
fn text(object: &InMemDicomObject, tag: Tag) -> String {
    object
        .get(tag)
        .and_then(|e| e.to_str().ok())
        .map(|s| s.trim_matches(|c: char| c == '\0' || c.is_whitespace()).to_string())
        .unwrap_or_default()
}

/// The values of a numeric attribute (DS, IS, US, FD…), when present and readable.
fn numbers(object: &InMemDicomObject, tag: Tag) -> Option<Vec<f64>> {
    let values = object.get(tag)?.to_multi_float64().ok()?;
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) { None } else { Some(values) }
}

fn number(object: &InMemDicomObject, tag: Tag) -> Option<f64> {
    numbers(object, tag).and_then(|v| v.first().copied())
}

fn integer(object: &InMemDicomObject, tag: Tag, path: &Path, name: &str) -> Result<Option<u64>> {
    match number(object, tag) {
        None => Ok(None),
        Some(v) if v >= 0.0 && v.fract() == 0.0 && v < 4.0e9 => Ok(Some(v as u64)),
        Some(v) => Err(format_error(path, format!("{name} is {v}, not a count"))),
    }
}

/// The first item of the sequence `tag` in `object`.
fn item(object: &InMemDicomObject, tag: Tag) -> Option<&InMemDicomObject> {
    object.get(tag)?.items()?.first()
}

/// An attribute of a functional group (`group`, then `tag` in its first item) of frame `frame` of an enhanced
/// multi-frame object: the per-frame groups first, then the shared ones.
fn functional(object: &InMemDicomObject, frame: usize, group: Tag, tag: Tag) -> Option<&InMemElement> {
    let per_frame = object.get(tags::PER_FRAME_FUNCTIONAL_GROUPS_SEQUENCE).and_then(|e| e.items()?.get(frame));
    let shared = item(object, tags::SHARED_FUNCTIONAL_GROUPS_SEQUENCE);
    [per_frame, shared].into_iter().flatten().find_map(|groups| item(groups, group)?.get(tag))
}

fn functional_numbers(object: &InMemDicomObject, frame: usize, group: Tag, tag: Tag) -> Option<Vec<f64>> {
    let values = functional(object, frame, group, tag)?.to_multi_float64().ok()?;
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) { None } else { Some(values) }
}

/// The element type the stored samples have.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stored {
    Int { bytes: usize, signed: bool, bits: u32 },
    F32,
    F64,
}

/// Which of the pixel data elements holds the samples, and in what type.
fn pixel_element(object: &InMemDicomObject) -> Option<(&InMemElement, Option<Stored>)> {
    if let Some(e) = object.get(tags::PIXEL_DATA) {
        return Some((e, None));
    }
    if let Some(e) = object.get(tags::FLOAT_PIXEL_DATA) {
        return Some((e, Some(Stored::F32)));
    }
    object.get(tags::DOUBLE_FLOAT_PIXEL_DATA).map(|e| (e, Some(Stored::F64)))
}

/// Decodes one file's pixels into stored values and reads its per-frame rescale.
fn decode(file: &File) -> Result<Decoded> {
    let (path, object) = (&file.path, &file.object);
    let uid = file.object.meta().transfer_syntax().trim_end_matches(['\0', ' ']).to_string();
    let ts = TransferSyntaxRegistry.get(&uid);
    let ts_name = ts.map(|t| t.name().to_string()).unwrap_or_else(|| "unknown".into());
    let Some((element, float)) = pixel_element(object) else {
        return Err(format_error(path, "the file holds no pixel data (no Pixel Data element)"));
    };

    let rows = integer(object, tags::ROWS, path, "Rows")?.unwrap_or(0) as usize;
    let columns = integer(object, tags::COLUMNS, path, "Columns")?.unwrap_or(0) as usize;
    let samples = integer(object, tags::SAMPLES_PER_PIXEL, path, "SamplesPerPixel")?.unwrap_or(1) as usize;
    let frames = integer(object, tags::NUMBER_OF_FRAMES, path, "NumberOfFrames")?.unwrap_or(1) as usize;
    let allocated = integer(object, tags::BITS_ALLOCATED, path, "BitsAllocated")?.unwrap_or(0);
    let stored_bits = integer(object, tags::BITS_STORED, path, "BitsStored")?.unwrap_or(allocated);
    let signed = integer(object, tags::PIXEL_REPRESENTATION, path, "PixelRepresentation")?.unwrap_or(0) == 1;
    let planar = integer(object, tags::PLANAR_CONFIGURATION, path, "PlanarConfiguration")?.unwrap_or(0) == 1;
    let photometric = text(object, tags::PHOTOMETRIC_INTERPRETATION);
    if rows == 0 || columns == 0 || frames == 0 {
        return Err(format_error(path, format!("{rows} rows × {columns} columns × {frames} frames holds no pixels")));
    }
    check_pixel_description(object, float.is_some(), allocated, &photometric).map_err(|r| format_error(path, r))?;
    if samples != 1 && samples != 3 {
        return Err(format_error(
            path,
            format!("(0028,0002) SamplesPerPixel {samples}: cliper reads 1 (grey) or 3 (colour)"),
        ));
    }
    let stored = match float {
        Some(f) => f,
        None => match allocated {
            1 => {
                return Err(format_error(
                    path,
                    "1-bit pixel data (BitsAllocated 1: a segmentation or overlay bitmap) is not read",
                ));
            }
            8 | 16 | 32 => {
                Stored::Int { bytes: allocated as usize / 8, signed, bits: stored_bits.clamp(1, allocated) as u32 }
            }
            other => {
                return Err(format_error(path, format!("(0028,0100) BitsAllocated {other}: cliper reads 8, 16 or 32")));
            }
        },
    };
    let size = match stored {
        Stored::Int { bytes, .. } => bytes,
        Stored::F32 => 4,
        Stored::F64 => 8,
    };
    let needed = [rows, columns, frames, samples]
        .iter()
        .try_fold(size, |a, &b| a.checked_mul(b))
        .ok_or_else(|| format_error(path, "the header's rows × columns × frames × samples overflows"))?;
    // Explicit VR Big Endian (retired) is the only big-endian transfer syntax.
    let little = uid != "1.2.840.10008.1.2.2";

    let mut ybr = photometric.starts_with("YBR_FULL");
    let bytes: Vec<u8> = match element.value() {
        Value::Primitive(value) => {
            if photometric == "YBR_FULL_422" {
                return Err(format_error(
                    path,
                    "uncompressed YBR_FULL_422 (chroma subsampled) pixel data is not read; convert it to RGB first",
                ));
            }
            // 8-bit samples in OW words lie in the words' little-endian bytes in either byte order (PS3.5 8.1.1).
            let bytes = file_order_bytes(value, little || size == 1);
            if bytes.len() < needed {
                return Err(format_error(
                    path,
                    format!(
                        "the pixel data holds {} bytes but {rows} rows × {columns} columns × {frames} frames × \
                         {samples} samples of {size} bytes need {needed}: the file is truncated",
                        bytes.len()
                    ),
                ));
            }
            if little { bytes } else { swap_to_little(bytes, size) }
        }
        Value::PixelSequence(sequence) => {
            let Some(ts) = ts.filter(|t| t.can_decode_all()) else {
                return Err(format_error(
                    path,
                    format!("transfer syntax {ts_name} ({uid}) is not decoded by this build"),
                ));
            };
            let encoded: usize = sequence.fragments().iter().map(|f| f.len()).sum();
            // Compressed pixel data decodes to at most ~1000× its size in practice; a header claiming more than
            // that (and more than 64 MiB) is refused before the decoder allocates it.
            if needed > encoded.saturating_mul(1024).max(64 << 20) {
                return Err(format_error(
                    path,
                    format!("the header claims {needed} bytes of pixels from {encoded} bytes of {} data", ts.name()),
                ));
            }
            let untransformed_rgb = JPEG_SYNTAXES.contains(&uid.as_str())
                && photometric == "RGB"
                && (samples, size) == (3, 1)
                && sequence.fragments().first().is_some_and(|f| !jpeg::says_colour_space(f));
            let decoded = if uid == "1.2.840.10008.1.2.5" {
                rle::decode(sequence.fragments(), rows * columns, frames, samples, size)
                    .map_err(|reason| format_error(path, format!("RLE Lossless pixel data: {reason}")))?
            } else if untransformed_rgb {
                jpeg::decode_untransformed(sequence.fragments(), frames, rows, columns)
                    .map_err(|reason| format_error(path, format!("{ts_name} pixel data: {reason}")))?
            } else {
                // JPEG 2000 (lossless only, lossy, and their multi-component forms).
                if matches!(
                    uid.as_str(),
                    "1.2.840.10008.1.2.4.90"
                        | "1.2.840.10008.1.2.4.91"
                        | "1.2.840.10008.1.2.4.92"
                        | "1.2.840.10008.1.2.4.93"
                ) {
                    j2k::check(sequence.fragments(), rows, columns, samples)
                        .map_err(|reason| format_error(path, format!("{ts_name} pixel data: {reason}")))?;
                }
                // JPEG-LS lossless and near-lossless.
                if matches!(uid.as_str(), "1.2.840.10008.1.2.4.80" | "1.2.840.10008.1.2.4.81") {
                    jpeg::check_jpeg_ls(sequence.fragments(), rows, columns, samples, allocated)
                        .map_err(|reason| format_error(path, format!("{ts_name} pixel data: {reason}")))?;
                }
                object_decode(file, &ts_name)?
            };
            // The decoders give RGB (JPEG's and JPEG 2000's colour transforms) except RLE, which keeps YBR.
            ybr = ybr && uid == "1.2.840.10008.1.2.5";
            if decoded.len() < needed {
                return Err(format_error(
                    path,
                    format!("the {ts_name} data decoded to {} bytes where the header needs {needed}", decoded.len()),
                ));
            }
            // Decoded samples are interleaved (planar configuration 0) whatever the file said.
            return finish(
                file,
                decoded,
                stored,
                Layout { rows, columns, frames, samples, planar: false, ybr },
                ts_name,
                uid,
                photometric,
                stored_bits,
            );
        }
        Value::Sequence(_) => return Err(format_error(path, "the Pixel Data element is a sequence")),
    };
    finish(
        file,
        bytes,
        stored,
        Layout { rows, columns, frames, samples, planar, ybr },
        ts_name,
        uid,
        photometric,
        stored_bits,
    )
}

/// JPEG baseline and extended: the lossy syntaxes whose RGB data may come without a colour transform
/// (`jpeg.rs`). The lossless ones are decoded without a transform already.
const JPEG_SYNTAXES: [&str; 2] = ["1.2.840.10008.1.2.4.50", "1.2.840.10008.1.2.4.51"];

/// PS3.3 C.7.6.3.1.2's photometric interpretations (retired ones included, as pydicom knows them).
const PHOTOMETRIC_INTERPRETATIONS: [&str; 14] = [
    "MONOCHROME1",
    "MONOCHROME2",
    "PALETTE COLOR",
    "RGB",
    "YBR_FULL",
    "YBR_FULL_422",
    "YBR_PARTIAL_422",
    "YBR_PARTIAL_420",
    "YBR_ICT",
    "YBR_RCT",
    "HSV",
    "ARGB",
    "CMYK",
    "XYB",
];

/// Refuses the Image Pixel module values that pydicom refuses and that would otherwise be read some way or other
/// (a BitsStored of 20 in 16-bit samples was clamped, PixelRepresentation 5 read as unsigned, "BOGUS" as grey),
/// naming the tag. `float`: the samples are Float/Double Float Pixel Data, which have no BitsStored or sign.
fn check_pixel_description(
    object: &InMemDicomObject,
    float: bool,
    allocated: u64,
    photometric: &str,
) -> std::result::Result<(), String> {
    if !photometric.is_empty() && !PHOTOMETRIC_INTERPRETATIONS.contains(&photometric) {
        return Err(format!(
            "(0028,0004) PhotometricInterpretation {photometric:?} is not one DICOM defines ({})",
            PHOTOMETRIC_INTERPRETATIONS.join(", ")
        ));
    }
    if float {
        return Ok(());
    }
    if let Some(sign) = number(object, tags::PIXEL_REPRESENTATION)
        && sign != 0.0
        && sign != 1.0
    {
        return Err(format!("(0028,0103) PixelRepresentation {sign} is neither 0 (unsigned) nor 1 (signed)"));
    }
    match number(object, tags::BITS_STORED) {
        Some(bits) if bits > allocated as f64 => {
            Err(format!("(0028,0101) BitsStored {bits} exceeds (0028,0100) BitsAllocated {allocated}"))
        }
        Some(bits) if bits < 1.0 => Err(format!("(0028,0101) BitsStored {bits} is not a positive number of bits")),
        _ => Ok(()),
    }
}

/// Calls dicom-pixeldata's decoder for an encapsulated transfer syntax, and gives its native bytes.
fn object_decode(file: &File, ts_name: &str) -> Result<Vec<u8>> {
    let decoded = file
        .object
        .decode_pixel_data()
        .map_err(|e| format_error(&file.path, format!("cannot decode the {ts_name} pixel data: {}", chain(&e))))?;
    Ok(decoded.into_data())
}

#[derive(Clone, Copy)]
struct Layout {
    rows: usize,
    columns: usize,
    frames: usize,
    samples: usize,
    planar: bool,
    ybr: bool,
}

/// The bytes of a parsed pixel data value as the file held them: dicom-object has already turned OW/OF/OD words
/// into native numbers, which are written back in the transfer syntax's byte order (so that 8- or 32-bit
/// samples in big-endian OW words come out right).
fn file_order_bytes(value: &PrimitiveValue, little: bool) -> Vec<u8> {
    macro_rules! words {
        ($v:expr) => {
            if little {
                $v.iter().flat_map(|w| w.to_le_bytes()).collect()
            } else {
                $v.iter().flat_map(|w| w.to_be_bytes()).collect()
            }
        };
    }
    match value {
        PrimitiveValue::U8(v) => v.to_vec(),
        PrimitiveValue::U16(v) => words!(v),
        PrimitiveValue::I16(v) => words!(v),
        PrimitiveValue::U32(v) => words!(v),
        PrimitiveValue::I32(v) => words!(v),
        PrimitiveValue::U64(v) => words!(v),
        PrimitiveValue::I64(v) => words!(v),
        PrimitiveValue::F32(v) => words!(v),
        PrimitiveValue::F64(v) => words!(v),
        other => other.to_bytes().to_vec(),
    }
}

/// Big-endian samples of `size` bytes as little-endian ones.
fn swap_to_little(mut bytes: Vec<u8>, size: usize) -> Vec<u8> {
    if size > 1 {
        bytes.chunks_exact_mut(size).for_each(|c| c.reverse());
    }
    bytes
}

/// Little-endian sample bytes → typed values with BitsStored applied, colour reordered to channels before rows,
/// YBR converted to RGB; then the info.
#[allow(clippy::too_many_arguments)]
fn finish(
    file: &File,
    bytes: Vec<u8>,
    stored: Stored,
    layout: Layout,
    ts_name: String,
    uid: String,
    photometric: String,
    bits_stored: u64,
) -> Result<Decoded> {
    let Layout { rows, columns, frames, samples, planar, ybr } = layout;
    let count = rows * columns * frames * samples;
    let mut shape = vec![frames, rows, columns];
    if samples == 3 {
        shape.insert(1, 3);
    }
    let ybr = ybr && samples == 3 && matches!(stored, Stored::Int { bytes: 1, signed: false, .. });
    macro_rules! arrange {
        ($values:expr) => {
            arrange($values, layout, &shape, &file.path)
        };
    }
    let values = match stored {
        Stored::F32 => HostArray::F32(arrange!(read_le(&bytes, count, f32::from_le_bytes))?),
        Stored::F64 => HostArray::F64(arrange!(read_le(&bytes, count, f64::from_le_bytes))?),
        Stored::Int { bytes: 1, signed: false, bits } => {
            let mut v: Vec<u8> = bytes.iter().take(count).map(|&b| b & mask(bits) as u8).collect();
            if ybr {
                ybr_to_rgb(&mut v, samples, planar);
            }
            HostArray::U8(arrange!(v)?)
        }
        Stored::Int { bytes: 1, signed: true, bits } => {
            HostArray::I8(arrange!(bytes.iter().take(count).map(|&b| extend(b as i8 as i64, bits) as i8).collect())?)
        }
        Stored::Int { bytes: 2, signed: false, bits } => {
            HostArray::U16(arrange!(read_le(&bytes, count, |b| u16::from_le_bytes(b) & mask(bits) as u16))?)
        }
        Stored::Int { bytes: 2, signed: true, bits } => {
            HostArray::I16(arrange!(read_le(&bytes, count, |b| extend(i16::from_le_bytes(b) as i64, bits) as i16))?)
        }
        Stored::Int { bytes: 4, signed: false, bits } => {
            HostArray::U32(arrange!(read_le(&bytes, count, |b| u32::from_le_bytes(b) & mask(bits) as u32))?)
        }
        Stored::Int { signed: true, bits, .. } => {
            HostArray::I32(arrange!(read_le(&bytes, count, |b| extend(i32::from_le_bytes(b) as i64, bits) as i32))?)
        }
        Stored::Int { signed: false, bits, .. } => {
            HostArray::U32(arrange!(read_le(&bytes, count, |b| u32::from_le_bytes(b) & mask(bits) as u32))?)
        }
    };
    let object = &file.object;
    let rescale = frame_rescale(object, frames);
    let info = DicomInfo {
        modality: text(object, tags::MODALITY),
        series_uid: text(object, tags::SERIES_INSTANCE_UID),
        series_description: text(object, tags::SERIES_DESCRIPTION),
        series_number: text(object, tags::SERIES_NUMBER),
        image_type: text(object, tags::IMAGE_TYPE),
        sop_class_uid: text(object, tags::SOP_CLASS_UID),
        transfer_syntax: ts_name,
        transfer_syntax_uid: uid,
        photometric,
        bits_stored: bits_stored.min(64) as u16,
        rescale: Vec::new(),
        files: Vec::new(),
    };
    Ok(Decoded { values, frames, rows, columns, colour: samples == 3, rescale, info })
}

/// The low `bits` bits set.
fn mask(bits: u32) -> u64 {
    if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }
}

/// The signed value of the low `bits` bits of `v` (two's complement), as pydicom reads BitsStored < BitsAllocated.
fn extend(v: i64, bits: u32) -> i64 {
    let shift = 64 - bits.clamp(1, 64);
    (v << shift) >> shift
}

/// `count` little-endian values of `N` bytes (the caller checked that `bytes` holds them).
fn read_le<T, const N: usize>(bytes: &[u8], count: usize, f: impl Fn([u8; N]) -> T) -> Vec<T> {
    bytes
        .chunks_exact(N)
        .take(count)
        .map(|c| {
            let mut word = [0u8; N];
            word.copy_from_slice(c);
            f(word)
        })
        .collect()
}

/// Samples in file order → the array `shape`: grey frames as they are; colour pixels interleaved (planar 0) or
/// plane after plane (planar 1) per frame → `[frames, 3, rows, columns]`.
fn arrange<T: Clone>(values: Vec<T>, layout: Layout, shape: &[usize], path: &Path) -> Result<ArrayD<T>> {
    let bad = |e: ndarray::ShapeError| format_error(path, format!("pixel data does not fill {shape:?}: {e}"));
    if layout.samples == 1 || layout.planar {
        return ArrayD::from_shape_vec(shape.to_vec(), values).map_err(bad);
    }
    let (f, r, c) = (layout.frames, layout.rows, layout.columns);
    let interleaved = ndarray::Array4::from_shape_vec((f, r, c, 3), values).map_err(bad)?;
    Ok(interleaved.permuted_axes([0, 3, 1, 2]).as_standard_layout().into_owned().into_dyn())
}

/// pydicom's `convert_color_space(…, "YBR_FULL", "RGB")`, in float32 as it computes: 8-bit samples.
fn ybr_to_rgb(values: &mut [u8], samples: usize, planar: bool) {
    let convert = |y: f32, cb: f32, cr: f32| {
        let (cb, cr) = (cb - 128.0, cr - 128.0);
        let r = y + 1.402 * cr;
        let g = y + (-0.114 * 1.772 / 0.587) * cb + (-0.299 * 1.402 / 0.587) * cr;
        let b = y + 1.772 * cb;
        [r, g, b].map(|v| (v + 0.5).floor().clamp(0.0, 255.0) as u8)
    };
    if samples != 3 {
        return;
    }
    if !planar {
        for p in values.chunks_exact_mut(3) {
            if let [y, cb, cr] = p {
                let [r, g, b] = convert(f32::from(*y), f32::from(*cb), f32::from(*cr));
                (*y, *cb, *cr) = (r, g, b);
            }
        }
    }
    // Planar YBR (PlanarConfiguration 1 with YBR_FULL) is left as stored: no decoder writes it and pydicom's own
    // tests hold none; it is rare enough to leave.
}

/// RescaleSlope/RescaleIntercept of each frame: an enhanced object's Pixel Value Transformation functional group,
/// else the top-level attributes, else (1, 0).
fn frame_rescale(object: &InMemDicomObject, frames: usize) -> Vec<(f64, f64)> {
    let top =
        (number(object, tags::RESCALE_SLOPE).unwrap_or(1.0), number(object, tags::RESCALE_INTERCEPT).unwrap_or(0.0));
    (0..frames)
        .map(|frame| {
            let group = tags::PIXEL_VALUE_TRANSFORMATION_SEQUENCE;
            let slope = functional_numbers(object, frame, group, tags::RESCALE_SLOPE).and_then(|v| v.first().copied());
            let intercept =
                functional_numbers(object, frame, group, tags::RESCALE_INTERCEPT).and_then(|v| v.first().copied());
            (slope.unwrap_or(top.0), intercept.unwrap_or(top.1))
        })
        .collect()
}

/// Applies one (slope, intercept) per frame — axis 0 of `values` — by the shared rule when they agree, else in
/// f64 for all.
fn apply_rescale(values: HostArray, per_frame: &[(f64, f64)]) -> (HostArray, Vec<(f64, f64)>) {
    let first = per_frame.first().copied().unwrap_or((1.0, 0.0));
    if per_frame.iter().all(|&r| r == first) {
        return (rescale(values, first.0, first.1), vec![first]);
    }
    let mut f: ArrayD<f64> = each_variant!(&values, a => a.mapv(|v| Widen::as_complex64(v).0.re));
    for (mut frame, &(slope, intercept)) in f.outer_iter_mut().zip(per_frame) {
        frame.mapv_inplace(|v| v * slope + intercept);
    }
    (HostArray::F64(f), per_frame.to_vec())
}

// ---- geometry -------------------------------------------------------------------------------------------------

/// LPS+ (DICOM) → RAS+ (cliper, NIfTI): x and y negated.
fn ras(a: V3) -> V3 {
    [-a[0], -a[1], a[2]]
}

fn three(v: &[f64]) -> Option<V3> {
    match v {
        [a, b, c, ..] => Some([*a, *b, *c]),
        _ => None,
    }
}

/// A plane's orientation: the direction of increasing column index (IOP's first three), of increasing row index
/// (its last three), and their normal — LPS, unit.
#[derive(Clone, Copy, Debug)]
struct Orientation {
    along_row: V3,
    along_column: V3,
    normal: V3,
}

fn orientation(values: &[f64]) -> Option<Orientation> {
    let (a, b) = match values {
        [a, b, c, d, e, f, ..] => ([*a, *b, *c], [*d, *e, *f]),
        _ => return None,
    };
    let (along_row, along_column) = (unit(a)?, unit(b)?);
    Some(Orientation { along_row, along_column, normal: unit(cross(along_row, along_column))? })
}

/// Orientation, position (LPS) and pixel spacing of frame `frame` of a file: the enhanced functional groups first,
/// then the top-level attributes.
struct Plane {
    orientation: Option<Orientation>,
    iop: Option<Vec<f64>>,
    position: Option<V3>,
    pixel_spacing: Option<[f64; 2]>,
    slice_spacing: Option<f64>,
}

fn plane(object: &InMemDicomObject, frame: usize) -> Plane {
    let iop = functional_numbers(object, frame, tags::PLANE_ORIENTATION_SEQUENCE, tags::IMAGE_ORIENTATION_PATIENT)
        .or_else(|| numbers(object, tags::IMAGE_ORIENTATION_PATIENT));
    let position = functional_numbers(object, frame, tags::PLANE_POSITION_SEQUENCE, tags::IMAGE_POSITION_PATIENT)
        .or_else(|| numbers(object, tags::IMAGE_POSITION_PATIENT))
        .and_then(|v| three(&v));
    let measures = |tag| functional_numbers(object, frame, tags::PIXEL_MEASURES_SEQUENCE, tag);
    let pixel_spacing =
        measures(tags::PIXEL_SPACING).or_else(|| numbers(object, tags::PIXEL_SPACING)).and_then(|v| match v[..] {
            [r, c, ..] if r > 0.0 && c > 0.0 => Some([r, c]),
            _ => None,
        });
    let positive = |v: Option<Vec<f64>>| v.and_then(|v| v.first().copied()).filter(|&s| s > 0.0);
    let slice_spacing = positive(measures(tags::SPACING_BETWEEN_SLICES))
        .or_else(|| positive(numbers(object, tags::SPACING_BETWEEN_SLICES)))
        .or_else(|| positive(measures(tags::SLICE_THICKNESS)))
        .or_else(|| positive(numbers(object, tags::SLICE_THICKNESS)));
    Plane { orientation: iop.as_deref().and_then(orientation), iop, position, pixel_spacing, slice_spacing }
}

/// The geometry of slices at `positions` (LPS, in array order) of one orientation: the slice axis runs from the
/// first position to the last, its spacing the length of one step, or along the normal with `fallback` spacing for
/// one slice. The step is not along the normal when the gantry was tilted (CT): the slice axis is then oblique to
/// the planes (a sheared affine, as dcm2niix's sform holds it), so that every slice keeps its own position.
fn geometry(o: Orientation, positions: &[V3], pixel: [f64; 2], fallback: f64) -> Geometry {
    let origin = positions.first().copied().unwrap_or([0.0; 3]);
    let (mut spacing, mut slice_axis) = (fallback, o.normal);
    if let (Some(first), Some(last), n) = (positions.first(), positions.last(), positions.len()) {
        let span = difference(*last, *first);
        if let (true, Some(direction)) = (n > 1, unit(span)) {
            spacing = dot(span, direction) / (n - 1) as f64;
            slice_axis = direction;
        }
    }
    Geometry {
        spacing: [spacing, pixel[0], pixel[1]],
        origin: ras(origin),
        direction: [ras(slice_axis), ras(o.along_column), ras(o.along_row)],
        ..Geometry::default()
    }
}

/// The first slice whose position is off the line from the first position to the last, evenly stepped, by more
/// than 1% of a step (what the gaps along the normal allow): such a stack has no one affine. Its index and how far
/// off it is, in mm.
fn off_the_line(positions: &[V3]) -> Option<(usize, f64)> {
    let (first, last, n) = (positions.first()?, positions.last()?, positions.len());
    if n < 3 {
        return None;
    }
    let intervals = (n - 1) as f64;
    let step = difference(*last, *first).map(|x| x / intervals);
    let length = dot(step, step).sqrt();
    positions.iter().enumerate().find_map(|(k, p)| {
        let miss = difference(difference(*p, *first), step.map(|x| x * k as f64));
        let off = dot(miss, miss).sqrt();
        (off > 0.01 * length).then_some((k, off))
    })
}

/// One file as an image: its frames in file order.
fn single(file: File) -> Result<Dicom> {
    let decoded = decode(&file)?;
    let object = &file.object;
    let frames = decoded.frames;
    // Frame positions: the per-frame functional groups, else an RT dose's GridFrameOffsetVector along the normal.
    let planes: Vec<Plane> = (0..frames).map(|f| plane(object, f)).collect();
    let first = planes.first().map(|p| (p.orientation, p.position, p.pixel_spacing, p.slice_spacing));
    let geometry = match first {
        Some((Some(o), Some(origin), pixel, slice)) => {
            let mut positions: Vec<V3> = planes.iter().filter_map(|p| p.position).collect();
            let offsets = numbers(object, tags::GRID_FRAME_OFFSET_VECTOR).filter(|v| v.len() == frames);
            if let (Some(offsets), true) = (offsets, frames > 1) {
                positions = offsets
                    .iter()
                    .map(|&d| {
                        let mut p = origin;
                        p.iter_mut().zip(o.normal).for_each(|(x, n)| *x += d * n);
                        p
                    })
                    .collect();
            }
            // Frames a volume only when evenly spaced along the normal; else (repeated positions: a time
            // series) the slice axis is the normal with the stated spacing.
            let even = positions.len() == frames && evenly_spaced(&positions, o.normal);
            let used: Vec<V3> = if even { positions } else { vec![origin] };
            Some(geometry(o, &used, pixel.unwrap_or([1.0, 1.0]), slice.unwrap_or(1.0)))
        }
        _ => None,
    };
    let stored = decoded.values.dtype();
    let (values, rescale) = apply_rescale(decoded.values, &decoded.rescale);
    let array = if frames == 1 { drop_frame_axis(values) } else { values };
    let scaling = Scaling::applied(stored, &rescale);
    let mut info = decoded.info;
    info.rescale = rescale;
    Ok(Dicom { image: Image { array, colour: decoded.colour, geometry, scaling }, info })
}

fn evenly_spaced(positions: &[V3], normal: V3) -> bool {
    let along: Vec<f64> = positions.iter().map(|p| dot(*p, normal)).collect();
    let steps: Vec<f64> =
        along.windows(2).map(|w| w.get(1).copied().unwrap_or(0.0) - w.first().copied().unwrap_or(0.0)).collect();
    let Some(&first) = steps.first() else { return true };
    first.abs() > 1e-6 && steps.iter().all(|s| (s - first).abs() <= 0.01 * first.abs())
}

/// `[1, …]` → `[…]`.
fn drop_frame_axis(values: HostArray) -> HostArray {
    macro_rules! drop {
        ($($variant:ident),*) => {
            match values {
                $(HostArray::$variant(a) if !a.shape().is_empty() => {
                    HostArray::$variant(a.index_axis_move(ndarray::Axis(0), 0))
                })*
                other => other,
            }
        };
    }
    drop!(U8, U16, U32, U64, I8, I16, I32, I64, F32, F64, C32, C64)
}

// ---- series ---------------------------------------------------------------------------------------------------

/// The DICOM files of a folder that hold pixel data, parsed; other files (not DICOM, DICOMDIR, objects without
/// pixels such as structured reports) are skipped. A file that is DICOM but does not parse is an error.
fn series_files(dir: &Path) -> Result<Vec<File>> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_ascii_uppercase();
        if name != "DICOMDIR" && path.is_file() && super::source::has_dicom_preamble(&path) {
            paths.push(path);
        }
    }
    paths.sort();
    let mut files = Vec::new();
    for path in paths {
        let bytes = std::fs::read(&path).map_err(|source| Error::Io { path: path.clone(), source })?;
        let file = parse(&bytes, &path)?;
        if pixel_element(&file.object).is_some() {
            files.push(file);
        }
    }
    Ok(files)
}

fn name(path: &Path) -> String {
    path.display().to_string()
}

/// Files of one series → `[slices, rows, columns]` sorted along the normal; `origin` (the folder) names errors
/// about the whole.
fn series(files: Vec<File>, origin: &Path) -> Result<Dicom> {
    let err = |reason: String| Error::Format { path: origin.to_path_buf(), reason };
    // One series only.
    let mut groups: Vec<(String, Vec<&File>)> = Vec::new();
    for f in &files {
        let uid = text(&f.object, tags::SERIES_INSTANCE_UID);
        match groups.iter_mut().find(|(u, _)| *u == uid) {
            Some((_, g)) => g.push(f),
            None => groups.push((uid, vec![f])),
        }
    }
    if groups.len() > 1 {
        let list: Vec<String> = groups
            .iter()
            .map(|(uid, g)| {
                let first = g.first().map(|f| name(&f.path)).unwrap_or_default();
                let description = g.first().map(|f| text(&f.object, tags::SERIES_DESCRIPTION)).unwrap_or_default();
                format!("{uid} \"{description}\" ({} files, e.g. {first})", g.len())
            })
            .collect();
        // One line, as every cliper error: the series and a file of each, so the user can sort them.
        return Err(err(format!(
            "{} series are mixed here: {}; pass one series' folder (or its files)",
            groups.len(),
            list.join("; ")
        )));
    }
    if files.len() == 1 {
        let mut files = files;
        let path = files.first().map(|f| f.path.clone()).unwrap_or_default();
        let mut dicom = single(files.remove(0))?;
        dicom.info.files = vec![path];
        return Ok(dicom);
    }
    // Every slice: its plane, then sorted by position along the first one's normal.
    let mut slices = Vec::with_capacity(files.len());
    for f in &files {
        let p = plane(&f.object, 0);
        let (Some(o), Some(position)) = (p.orientation, p.position) else {
            return Err(format_error(
                &f.path,
                "a slice of a series needs ImagePositionPatient and ImageOrientationPatient to be sorted",
            ));
        };
        slices.push((f, p, o, position));
    }
    let normal = slices.first().map(|s| s.2.normal).unwrap_or([0.0, 0.0, 1.0]);
    slices.sort_by(|a, b| dot(a.3, normal).total_cmp(&dot(b.3, normal)));
    let Some((first, first_plane, o, _)) = slices.first() else { return Err(err("no slices".into())) };
    let first_iop = first_plane.iop.clone().unwrap_or_default();
    for (f, p, _, _) in &slices {
        let iop = p.iop.clone().unwrap_or_default();
        if iop.len() != first_iop.len() || iop.iter().zip(&first_iop).any(|(a, b)| (a - b).abs() > 1e-4) {
            return Err(err(format!(
                "{} and {} have different orientations ({first_iop:?} and {iop:?}): not one stack",
                name(&first.path),
                name(&f.path)
            )));
        }
    }
    for pair in slices.windows(2) {
        if let [(a, _, _, pa), (b, _, _, pb)] = pair {
            let gap = dot(*pb, normal) - dot(*pa, normal);
            if gap.abs() < 1e-4 {
                return Err(err(format!(
                    "{} and {} are at the same position {pa:?}: duplicated slices",
                    name(&a.path),
                    name(&b.path)
                )));
            }
        }
    }
    let along: Vec<f64> = slices.iter().map(|s| dot(s.3, normal)).collect();
    let gaps: Vec<f64> =
        along.windows(2).map(|w| w.get(1).copied().unwrap_or(0.0) - w.first().copied().unwrap_or(0.0)).collect();
    let smallest = gaps.iter().copied().fold(f64::INFINITY, f64::min);
    for (i, &gap) in gaps.iter().enumerate() {
        if gap > smallest * 1.01 {
            let (a, b) = (slices.get(i).map(|s| name(&s.0.path)), slices.get(i + 1).map(|s| name(&s.0.path)));
            return Err(err(format!(
                "{} and {} are {} mm apart along the slice normal where the other slices are {} mm apart: a slice \
                 is missing (slice spacing must be even within 1%)",
                a.unwrap_or_default(),
                b.unwrap_or_default(),
                micrometres(gap),
                micrometres(smallest)
            )));
        }
    }
    // Decode on every core, kept in slice order; sizes and types must agree.
    use rayon::prelude::*;
    let decoded = slices
        .par_iter()
        .map(|(f, _, _, _)| {
            let d = decode(f)?;
            if d.frames != 1 {
                return Err(format_error(
                    &f.path,
                    format!("a multi-frame file ({} frames) in a series: read it on its own", d.frames),
                ));
            }
            Ok(d)
        })
        .collect::<Result<Vec<_>>>()?;
    let Some(d0) = decoded.first() else { return Err(err("no slices".into())) };
    for (d, (f, _, _, _)) in decoded.iter().zip(&slices) {
        let same =
            (d.rows, d.columns, d.colour, d.values.dtype()) == (d0.rows, d0.columns, d0.colour, d0.values.dtype());
        if !same {
            return Err(err(format!(
                "{} holds {}×{} {} samples{} but {} holds {}×{} {}{}: not one stack",
                name(&first.path),
                d0.rows,
                d0.columns,
                d0.values.dtype().name(),
                if d0.colour { " (colour)" } else { "" },
                name(&f.path),
                d.rows,
                d.columns,
                d.values.dtype().name(),
                if d.colour { " (colour)" } else { "" },
            )));
        }
    }
    let positions: Vec<V3> = slices.iter().map(|s| s.3).collect();
    if let Some((k, off)) = off_the_line(&positions) {
        let slice = slices.get(k).map(|s| name(&s.0.path)).unwrap_or_default();
        return Err(err(format!(
            "{slice} lies {} mm off the line through the first and last slices' positions (ImagePositionPatient): \
             the slices do not form one evenly stepped stack",
            micrometres(off)
        )));
    }
    let pixel = first_plane.pixel_spacing.unwrap_or([1.0, 1.0]);
    let geometry = geometry(*o, &positions, pixel, first_plane.slice_spacing.unwrap_or(1.0));
    let per_slice: Vec<(f64, f64)> = decoded.iter().filter_map(|d| d.rescale.first().copied()).collect();
    let colour = d0.colour;
    let mut info = d0.info.clone();
    info.files = slices.iter().map(|s| s.0.path.clone()).collect();
    let views: Vec<HostArray> = decoded.into_iter().map(|d| d.values).collect();
    let stacked = stack(views, origin)?;
    let stored = stacked.dtype();
    let (array, rescale) = apply_rescale(stacked, &per_slice);
    let scaling = Scaling::applied(stored, &rescale);
    info.rescale = rescale;
    Ok(Dicom { image: Image { array, colour, geometry: Some(geometry), scaling }, info })
}

/// A length in mm, rounded to the micrometre for messages.
fn micrometres(mm: f64) -> f64 {
    (mm * 1000.0).round() / 1000.0
}

/// Arrays `[1, …]` of one type concatenated along axis 0.
fn stack(arrays: Vec<HostArray>, origin: &Path) -> Result<HostArray> {
    let bad = |e: ndarray::ShapeError| format_error(origin, format!("cannot stack the slices: {e}"));
    let Some(first) = arrays.first() else { return Err(format_error(origin, "no slices")) };
    macro_rules! concat {
        ($variant:ident) => {{
            let views: Vec<_> = arrays
                .iter()
                .filter_map(|a| if let HostArray::$variant(a) = a { Some(a.view()) } else { None })
                .collect();
            HostArray::$variant(ndarray::concatenate(ndarray::Axis(0), &views).map_err(bad)?)
        }};
    }
    Ok(match first {
        HostArray::U8(_) => concat!(U8),
        HostArray::I8(_) => concat!(I8),
        HostArray::U16(_) => concat!(U16),
        HostArray::I16(_) => concat!(I16),
        HostArray::U32(_) => concat!(U32),
        HostArray::I32(_) => concat!(I32),
        HostArray::U64(_) => concat!(U64),
        HostArray::I64(_) => concat!(I64),
        HostArray::F32(_) => concat!(F32),
        HostArray::F64(_) => concat!(F64),
        HostArray::C32(_) => concat!(C32),
        HostArray::C64(_) => concat!(C64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_stored_sign_extends_and_masks() {
        assert_eq!(extend(0x0fff, 12), -1);
        assert_eq!(extend(0x07ff, 12), 2047);
        assert_eq!(mask(12) & 0xf123, 0x123);
    }

    #[test]
    fn ybr_full_becomes_rgb_as_pydicom_converts() {
        // Grey stays grey; pure red's YBR (76, 85, 255) comes back as (254, 0, 0) in pydicom.
        let mut v = vec![128u8, 128, 128, 76, 85, 255];
        ybr_to_rgb(&mut v, 3, false);
        assert_eq!(&v[..3], &[128, 128, 128]);
        assert_eq!(v[3], 254);
    }

    #[test]
    fn lps_becomes_ras() {
        assert_eq!(ras([1.0, 2.0, 3.0]), [-1.0, -2.0, 3.0]);
        let o = orientation(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0]).unwrap();
        let g = geometry(o, &[[10.0, 20.0, 30.0], [10.0, 20.0, 32.5]], [0.5, 0.7], 1.0);
        assert_eq!(g.spacing, [2.5, 0.5, 0.7]);
        assert_eq!(g.origin, [-10.0, -20.0, 30.0]);
        assert_eq!(g.direction, [[-0.0, -0.0, 1.0], [-0.0, -1.0, 0.0], [-1.0, -0.0, 0.0]]);
    }
}
