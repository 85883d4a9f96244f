//! Writing a volume as a DICOM series — one file per slice, with the geometry a viewer needs to place it — for
//! derived results and for the sample data. Reading is `mod.rs`.

use crate::error::{Error, Result};
use crate::io::host_array::HostArray;
use crate::io::image::Image;
use crate::io::save::{commit, prepare};
use dicom_core::value::PrimitiveValue;
use dicom_core::{DataElement, Tag, VR};
use dicom_dictionary_std::tags;
use dicom_object::{FileMetaTableBuilder, InMemDicomObject};
use std::path::Path;

/// How [`write_dicom_series`] labels the series. The array holds the *stored* pixel values; `rescale` is the
/// slope and intercept readers apply to them (CT: stored values with intercept −1024 read as Hounsfield units).
///
/// ```
/// let o = cliper::DicomSeriesOptions::default();
/// assert_eq!((o.modality.as_str(), o.rescale), ("OT", (1.0, 0.0)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DicomSeriesOptions {
    /// Modality: `CT` and `MR` write CT / MR Image Storage objects, anything else Secondary Capture.
    pub modality: String,
    /// SeriesDescription.
    pub series_description: String,
    /// PatientName (a DICOM person name, `Family^Given`).
    pub patient_name: String,
    /// PatientID.
    pub patient_id: String,
    /// RescaleSlope and RescaleIntercept.
    pub rescale: (f64, f64),
}

impl Default for DicomSeriesOptions {
    fn default() -> DicomSeriesOptions {
        DicomSeriesOptions {
            modality: "OT".into(),
            series_description: "cliper result".into(),
            patient_name: "Anonymous".into(),
            patient_id: "cliper".into(),
            rescale: (1.0, 0.0),
        }
    }
}

/// Writes a grey `[slices, rows, columns]` (or `[rows, columns]`) array of u8, i8, u16 or i16 stored values
/// as a DICOM series in `dir`: `IM0001.dcm` … one file per slice in explicit VR little endian, with
/// ImagePositionPatient per slice, ImageOrientationPatient, PixelSpacing and SliceThickness from the geometry
/// (RAS → DICOM's LPS), and UIDs derived from the content (`2.25.…`), so the same input writes the same files.
/// All files are written, or none (the save is atomic as every cliper save). Floats, colour and other shapes
/// are refused naming the type or shape: convert first (`HostArray::cast`).
///
/// ```
/// use cliper::{DicomSeriesOptions, Geometry, HostArray, Image, read_dicom, write_dicom_series};
/// let dir = std::env::temp_dir().join(format!("cliper-doc-series-{}", std::process::id()));
/// let stored = HostArray::U16(ndarray::Array3::from_shape_fn((3, 4, 5), |(k, j, i)| (100 * k + 10 * j + i) as u16).into_dyn());
/// let image = Image { array: stored, colour: false, geometry: Some(Geometry::from_spacing([2.5, 0.7, 0.7])), scaling: None };
/// let ct = DicomSeriesOptions { modality: "CT".into(), rescale: (1.0, -1024.0), ..Default::default() };
/// write_dicom_series(&dir, &image, &ct)?;
/// let back = read_dicom(&dir)?;
/// assert_eq!(back.image.array.shape(), &[3, 4, 5]);
/// assert_eq!(back.image.geometry.unwrap().spacing, [2.5, 0.7, 0.7]);
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn write_dicom_series(dir: impl AsRef<Path>, image: &Image, options: &DicomSeriesOptions) -> Result<()> {
    let dir = dir.as_ref();
    let refuse = |reason: String| Error::Format { path: dir.to_path_buf(), reason };
    let shape = image.array.shape().to_vec();
    let (slices, rows, columns) = match shape.as_slice() {
        [r, c] if !image.colour => (1, *r, *c),
        [s, r, c] if !image.colour => (*s, *r, *c),
        _ => {
            return Err(refuse(format!(
                "a DICOM series holds grey [slices, rows, columns] or [rows, columns] images, not {}shape {shape:?}",
                if image.colour { "a colour image of " } else { "" }
            )));
        }
    };
    if rows > usize::from(u16::MAX) || columns > usize::from(u16::MAX) || slices == 0 || rows == 0 || columns == 0 {
        return Err(refuse(format!("shape {shape:?}: DICOM images have 1 to 65535 rows and columns")));
    }
    let (bits, signed, pixels) = pixel_bytes(&image.array).ok_or_else(|| {
        refuse(format!(
            "DICOM stores u8, i8, u16 or i16 pixels, not {}: convert first (HostArray::cast, or --type i16 --scale \
             round on the command line)",
            image.array.dtype().name()
        ))
    })?;
    let geometry = image.geometry.unwrap_or_default();
    let mm = geometry.units.millimetres();
    let lps = |v: [f64; 3]| [-v[0], -v[1], v[2]];
    let [slice_axis, row_axis, column_axis] = geometry.direction.map(lps);
    let spacing = geometry.spacing.map(|s| s * mm);
    let modality = options.modality.trim().to_ascii_uppercase();
    let sop_class = match modality.as_str() {
        "CT" => "1.2.840.10008.5.1.4.1.1.2",
        "MR" => "1.2.840.10008.5.1.4.1.1.4",
        _ => "1.2.840.10008.5.1.4.1.1.7",
    };
    // UIDs from a hash of everything written: the same input gives the same files (and sample data that can
    // be compared byte for byte), a different one different UIDs.
    let mut seed = Fnv::default();
    seed.bytes(&pixels);
    // The geometry as the series holds it, spelled as `Geometry`'s Debug did before it carried NIfTI's transform
    // codes (which a DICOM series does not hold): UIDs stay those of the committed sample series.
    let placed = format!(
        "Geometry {{ spacing: {:?}, origin: {:?}, direction: {:?}, units: {:?}, time_step: {:?} }}",
        geometry.spacing, geometry.origin, geometry.direction, geometry.units, geometry.time_step
    );
    seed.bytes(format!("{shape:?}{placed}{options:?}").as_bytes());
    let uid = |role: &str| seed.clone().then(role.as_bytes()).uid();
    let (study, series, frame) = (uid("study"), uid("series"), uid("frame of reference"));
    let bytes_per_slice = rows * columns * bits / 8;
    std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
    let mut pending = Vec::with_capacity(slices);
    for k in 0..slices {
        let position = lps(geometry.position([k as f64, 0.0, 0.0])).map(|v| v * mm);
        let instance = uid(&format!("instance {k}"));
        let mut object = InMemDicomObject::new_empty();
        let mut put = |tag: Tag, vr: VR, value: PrimitiveValue| {
            object.put(DataElement::new(tag, vr, value));
        };
        let strs = |values: Vec<String>| PrimitiveValue::Strs(values.into_iter().collect());
        put(tags::SOP_CLASS_UID, VR::UI, sop_class.into());
        put(tags::SOP_INSTANCE_UID, VR::UI, instance.as_str().into());
        put(tags::STUDY_INSTANCE_UID, VR::UI, study.as_str().into());
        put(tags::SERIES_INSTANCE_UID, VR::UI, series.as_str().into());
        put(tags::FRAME_OF_REFERENCE_UID, VR::UI, frame.as_str().into());
        put(tags::IMAGE_TYPE, VR::CS, strs(vec!["DERIVED".into(), "SECONDARY".into()]));
        put(tags::MODALITY, VR::CS, modality.as_str().into());
        put(tags::CONVERSION_TYPE, VR::CS, "WSD".into());
        put(tags::PATIENT_NAME, VR::PN, options.patient_name.as_str().into());
        put(tags::PATIENT_ID, VR::LO, options.patient_id.as_str().into());
        for tag in [tags::PATIENT_BIRTH_DATE, tags::STUDY_DATE] {
            put(tag, VR::DA, PrimitiveValue::Empty);
        }
        put(tags::PATIENT_SEX, VR::CS, PrimitiveValue::Empty);
        put(tags::STUDY_TIME, VR::TM, PrimitiveValue::Empty);
        put(tags::REFERRING_PHYSICIAN_NAME, VR::PN, PrimitiveValue::Empty);
        put(tags::STUDY_ID, VR::SH, PrimitiveValue::Empty);
        put(tags::ACCESSION_NUMBER, VR::SH, PrimitiveValue::Empty);
        put(tags::SERIES_DESCRIPTION, VR::LO, options.series_description.as_str().into());
        put(tags::SERIES_NUMBER, VR::IS, "1".into());
        put(tags::INSTANCE_NUMBER, VR::IS, (k + 1).to_string().into());
        put(tags::IMAGE_POSITION_PATIENT, VR::DS, strs(position.iter().map(|&v| ds(v)).collect()));
        let orientation = column_axis.iter().chain(&row_axis).map(|&v| ds(v)).collect();
        put(tags::IMAGE_ORIENTATION_PATIENT, VR::DS, strs(orientation));
        put(tags::PIXEL_SPACING, VR::DS, strs(vec![ds(spacing[1]), ds(spacing[2])]));
        put(tags::SLICE_THICKNESS, VR::DS, ds(spacing[0]).into());
        put(tags::SPACING_BETWEEN_SLICES, VR::DS, ds(spacing[0]).into());
        let normal_position: f64 = position.iter().zip(slice_axis).map(|(p, n)| p * n).sum();
        put(tags::SLICE_LOCATION, VR::DS, ds(normal_position).into());
        put(tags::SAMPLES_PER_PIXEL, VR::US, 1u16.into());
        put(tags::PHOTOMETRIC_INTERPRETATION, VR::CS, "MONOCHROME2".into());
        put(tags::ROWS, VR::US, (rows as u16).into());
        put(tags::COLUMNS, VR::US, (columns as u16).into());
        put(tags::BITS_ALLOCATED, VR::US, (bits as u16).into());
        put(tags::BITS_STORED, VR::US, (bits as u16).into());
        put(tags::HIGH_BIT, VR::US, (bits as u16 - 1).into());
        put(tags::PIXEL_REPRESENTATION, VR::US, u16::from(signed).into());
        put(tags::RESCALE_INTERCEPT, VR::DS, ds(options.rescale.1).into());
        put(tags::RESCALE_SLOPE, VR::DS, ds(options.rescale.0).into());
        put(tags::RESCALE_TYPE, VR::LO, if modality == "CT" { "HU" } else { "US" }.into());
        let slice = pixels.get(k * bytes_per_slice..(k + 1) * bytes_per_slice).unwrap_or_default();
        put(
            tags::PIXEL_DATA,
            if bits == 8 { VR::OB } else { VR::OW },
            PrimitiveValue::U8(slice.iter().copied().collect()),
        );
        let file = object
            .with_meta(FileMetaTableBuilder::new().transfer_syntax("1.2.840.10008.1.2.1"))
            .map_err(|e| refuse(format!("slice {k}: {e}")))?;
        let path = dir.join(format!("IM{:04}.dcm", k + 1));
        pending.push(prepare(&path, |out| file.write_all(out).map_err(|e| e.to_string()))?);
    }
    commit(pending)
}

/// The stored values as little-endian bytes, with bits allocated and signedness; `None` for other types.
fn pixel_bytes(array: &HostArray) -> Option<(usize, bool, Vec<u8>)> {
    Some(match array {
        HostArray::U8(a) => (8, false, a.iter().copied().collect()),
        HostArray::I8(a) => (8, true, a.iter().flat_map(|v| v.to_le_bytes()).collect()),
        HostArray::U16(a) => (16, false, a.iter().flat_map(|v| v.to_le_bytes()).collect()),
        HostArray::I16(a) => (16, true, a.iter().flat_map(|v| v.to_le_bytes()).collect()),
        _ => return None,
    })
}

/// A decimal string (DICOM's DS) of at most 16 characters: as many significant digits as fit.
fn ds(v: f64) -> String {
    let v = if v == 0.0 { 0.0 } else { v }; // no "-0"
    let plain = format!("{v}");
    if plain.len() <= 16 {
        return plain;
    }
    for digits in (0..=15).rev() {
        let fixed = format!("{v:.digits$}");
        let fixed =
            if fixed.contains('.') { fixed.trim_end_matches('0').trim_end_matches('.').to_string() } else { fixed };
        if fixed.len() <= 16 && fixed.parse::<f64>().is_ok_and(|f| f != 0.0 || v.abs() < 1e-15) {
            return fixed;
        }
    }
    format!("{v:.6e}")
}

/// FNV-1a over two 64-bit lanes: a fixed, portable hash for UIDs (std's hasher may change between releases).
#[derive(Clone)]
struct Fnv([u64; 2]);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv([0xcbf2_9ce4_8422_2325, 0x6c62_272e_07bb_0142])
    }
}

impl Fnv {
    fn bytes(&mut self, data: &[u8]) {
        for &b in data {
            for (lane, salt) in self.0.iter_mut().zip([0u8, 0x5a]) {
                *lane = (*lane ^ u64::from(b ^ salt)).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    }

    fn then(mut self, data: &[u8]) -> Fnv {
        self.bytes(data);
        self
    }

    /// A UUID-derived UID (`2.25.` and a 128-bit decimal, PS3.5 B.2), at most 44 characters.
    fn uid(&self) -> String {
        let [a, b] = self.0;
        format!("2.25.{}", u128::from(a) << 64 | u128::from(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_strings_fit_sixteen_characters() {
        for v in [
            0.0,
            -0.0,
            1.0,
            -1024.0,
            std::f64::consts::FRAC_1_SQRT_2,
            -0.123_456_789_012_345_67,
            123456.789012345,
            1e-20,
            3.5e20,
        ] {
            let s = ds(v);
            assert!(s.len() <= 16, "{v}: {s}");
            let back: f64 = s.parse().unwrap();
            assert!((back - v).abs() <= 1e-12 * v.abs().max(1.0), "{v}: {s}");
        }
        assert_eq!(ds(-0.0), "0");
    }
}
