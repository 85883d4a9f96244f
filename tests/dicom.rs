//! DICOM reading (issue 24): pixels equal pydicom's `apply_modality_lut(ds.pixel_array, ds)` for every transfer
//! syntax this build decodes, geometry equals the nibabel-convention affine computed in Python and the voxel
//! positions of dcm2niix's NIfTI, series sort by position, and bad inputs give errors naming the file.
//! Fixtures and references: tests/fixtures/make_dicom.py.

use cliper::{Dicom, Dtype, HostArray, Scale, decode_dicom, read_dicom, read_dicom_series, read_image, read_npy};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dicom").join(name)
}

fn references() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture("references.json")).unwrap()).unwrap()
}

fn values(a: &HostArray) -> ndarray::ArrayD<f64> {
    match a.cast(Dtype::F64, Scale::Raw, false).unwrap() {
        HostArray::F64(x) => x,
        other => panic!("cast gave {:?}", other.dtype()),
    }
}

/// The array against NAME.npy (every 4th row and column, plus the exact sum and sum of squares, for big ones);
/// `tolerance` 0 but for lossy files decoded by another decoder than pydicom's.
fn check_pixels(stem: &str, dicom: &Dicom, reference: &Value, tolerance: f64) {
    let ours = values(&dicom.image.array);
    let shape: Vec<usize> =
        reference["shape"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
    assert_eq!(ours.shape(), &shape[..], "{stem}: shape");
    let expected = values(&read_npy(fixture(&format!("{stem}.npy"))).unwrap());
    let ours_sampled = if let Some(stride) = reference.get("stride").and_then(Value::as_u64) {
        let s = stride as isize;
        let rank = ours.ndim();
        let sampled = ours.slice_each_axis(|ax| {
            if ax.axis.index() + 2 >= rank { ndarray::Slice::new(0, None, s) } else { ndarray::Slice::from(..) }
        });
        let sum: f64 = ours.sum();
        let squares: f64 = ours.iter().map(|v| v * v).sum();
        let (rs, rq) = (reference["sum"].as_f64().unwrap(), reference["sum_squares"].as_f64().unwrap());
        let n = ours.len() as f64;
        assert!((sum - rs).abs() <= tolerance * n, "{stem}: sum {sum} vs {rs}");
        assert!(
            (squares - rq).abs() <= tolerance * n * 2.0 * 65536.0 || squares == rq,
            "{stem}: Σx² {squares} vs {rq}"
        );
        sampled.to_owned()
    } else {
        ours
    };
    assert_eq!(ours_sampled.shape(), expected.shape(), "{stem}: reference shape");
    let worst = ours_sampled.iter().zip(expected.iter()).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(worst <= tolerance, "{stem}: largest difference {worst} (allowed {tolerance})");
}

fn affine_close(dicom: &Dicom, reference: &Value, tolerance: f64, what: &str) {
    let ours = dicom.image.geometry.expect("geometry").affine();
    let expected = &reference["affine"];
    for r in 0..4 {
        for c in 0..4 {
            let e = expected[r][c].as_f64().unwrap();
            assert!((ours[r][c] - e).abs() <= tolerance, "{what}: affine[{r}][{c}] {} vs {e}\n{ours:?}", ours[r][c]);
        }
    }
}

#[test]
fn every_decoded_transfer_syntax_matches_pydicom() {
    let refs = references();
    let cases = [
        ("CT_small", "Explicit VR Little Endian"),
        ("MR_small", "Explicit VR Little Endian"),
        ("MR_small_implicit", "Implicit VR Little Endian"),
        ("MR_small_bigendian", "Explicit VR Big Endian"),
        ("MR_small_RLE", "RLE Lossless"),
        ("MR_small_jp2klossless", "JPEG 2000 Image Compression (Lossless Only)"),
        ("JPEG2000", "JPEG 2000 Image Compression"),
        ("CT_small_jpeg_lossless", "JPEG Lossless, Non-Hierarchical, First-Order Prediction"),
        ("MR_small_jpeg_lossless", "JPEG Lossless, Non-Hierarchical, First-Order Prediction"),
        ("SC_rgb_jpeg_dcmtk", "JPEG Baseline (Process 1)"),
        ("SC_rgb_rle", "RLE Lossless"),
        ("SC_rgb_rle_16bit", "RLE Lossless"),
        ("SC_rgb_small_odd", "Explicit VR Little Endian"),
        ("SC_rgb_small_odd_big_endian", "Explicit VR Big Endian"),
        ("image_dfl", "Deflated Explicit VR Little Endian"),
        ("rtdose", "Implicit VR Little Endian"),
        ("ybr_full", "Explicit VR Little Endian"),
        ("enhanced_mf", "Explicit VR Little Endian"),
    ];
    for (stem, syntax) in cases {
        let name = format!("{stem}.dcm");
        let reference = &refs[&name];
        let dicom = read_dicom(fixture(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(dicom.info.transfer_syntax, syntax, "{name}");
        let tolerance = if stem == "SC_rgb_jpeg_dcmtk" { LOSSY_JPEG_TOLERANCE } else { 0.0 };
        check_pixels(stem, &dicom, reference, tolerance);
        let colour = stem.starts_with("SC_rgb") || stem == "ybr_full";
        assert_eq!(dicom.image.colour, colour, "{name}");
        if reference.get("affine").is_some() {
            affine_close(&dicom, reference, 1e-9, &name);
        }
        assert_eq!(dicom.info.files, vec![fixture(&name)]);
    }
}

/// Lossy (baseline) JPEG: jpeg-decoder's IDCT and YCbCr → RGB conversion round differently from libjpeg's
/// (pylibjpeg-libjpeg, pydicom's reference): samples differ by at most 1. Lossy JPEG 2000 (openjp2 against
/// OpenJPEG) and every lossless syntax match exactly.
const LOSSY_JPEG_TOLERANCE: f64 = 1.0;

#[test]
fn ct_is_hounsfield_units_in_i16() {
    let ct = read_dicom(fixture("CT_small.dcm")).unwrap();
    assert_eq!(ct.image.array.dtype(), Dtype::I16);
    assert_eq!(ct.info.rescale, vec![(1.0, -1024.0)]);
    assert_eq!(ct.info.modality, "CT");
    // In memory, with and without the preamble.
    let bytes = std::fs::read(fixture("CT_small.dcm")).unwrap();
    assert_eq!(decode_dicom(&bytes).unwrap().image, ct.image);
    assert_eq!(decode_dicom(&bytes[128..]).unwrap().image, ct.image);
    // Through the general readers.
    assert_eq!(read_image(fixture("CT_small.dcm")).unwrap(), ct.image);
}

#[test]
fn enhanced_multi_frame_has_per_frame_rescale_and_positions() {
    let mf = read_dicom(fixture("enhanced_mf.dcm")).unwrap();
    assert_eq!(mf.image.array.dtype(), Dtype::F64); // the frames' rescales differ
    assert_eq!(mf.info.rescale.len(), 4);
    assert_eq!(mf.info.rescale[1], (2.0, -10.0));
    let g = mf.image.geometry.unwrap();
    assert_eq!(g.spacing, [3.0, 0.5, 0.25]);
}

#[test]
fn series_is_sorted_by_position_with_dcm2niix_geometry() {
    let refs = references();
    let reference = &refs["series"];
    let series = read_dicom(fixture("series")).unwrap();
    check_pixels("series", &series, reference, 0.0);
    assert_eq!(series.image.array.dtype(), Dtype::I16);
    // Slice order is position order: not the file names' order, nor InstanceNumber's.
    let order: Vec<String> =
        reference["files"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().into()).collect();
    let files: Vec<String> =
        series.info.files.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(files, order);
    affine_close(&series, reference, 1e-9, "series");
    // Every slice's first voxel is its file's ImagePositionPatient (LPS → RAS).
    let g = series.image.geometry.unwrap();
    for (k, p) in reference["positions_lps"].as_array().unwrap().iter().enumerate() {
        let lps: Vec<f64> = p.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let ours = g.position([k as f64, 0.0, 0.0]);
        let ras = [-lps[0], -lps[1], lps[2]];
        for a in 0..3 {
            assert!((ours[a] - ras[a]).abs() < 1e-6, "slice {k}: {ours:?} vs {ras:?}");
        }
    }
    // dcm2niix's NIfTI of the same files: its corner voxels are ours (it orders rows and slices its own way, so
    // the corners are compared as sets). Its sform is float32: 1e-5 mm.
    let corners = &reference["dcm2niix_corners"]["corners_ras"];
    if let Some(corners) = corners.as_array() {
        let shape = series.image.array.shape().to_vec();
        let ours: Vec<[f64; 3]> = [0.0, (shape[0] - 1) as f64]
            .iter()
            .flat_map(|&k| [0.0, (shape[1] - 1) as f64].map(move |j| (k, j)))
            .flat_map(|(k, j)| [0.0, (shape[2] - 1) as f64].map(move |i| [k, j, i]))
            .map(|index| g.position(index))
            .collect();
        for c in corners {
            let c: Vec<f64> = c.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
            let nearest = ours
                .iter()
                .map(|o| (0..3).map(|a| (o[a] - c[a]).abs()).fold(0.0, f64::max))
                .fold(f64::INFINITY, f64::min);
            assert!(nearest < 1e-5, "dcm2niix corner {c:?} is {nearest} mm from ours {ours:?}");
        }
    }
    // The same files listed in any order.
    let mut listed: Vec<PathBuf> = series.info.files.clone();
    listed.reverse();
    assert_eq!(read_dicom_series(&listed).unwrap(), series);
}

fn error_of(result: cliper::Result<Dicom>) -> String {
    match result {
        Ok(d) => panic!("read {:?} where an error was expected", d.image.array.shape()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_missing_slice_names_the_two_files_and_the_gap() {
    let err = error_of(read_dicom(fixture("missing_slice")));
    assert!(err.contains("a.dcm") && err.contains("b.dcm"), "{err}");
    assert!(err.contains("5 mm apart") && err.contains("2.5 mm apart") && err.contains("missing"), "{err}");
}

#[test]
fn two_series_in_one_folder_are_listed() {
    let err = error_of(read_dicom(fixture("mixed")));
    assert!(
        err.contains("1.2.826.0.1.3680043.8.498.24.1.3") && err.contains("1.2.826.0.1.3680043.8.498.24.1.4"),
        "{err}"
    );
    assert!(err.contains("\"first\"") && err.contains("\"second\"") && err.contains("3 files"), "{err}");
    assert!(err.contains("pass one series"), "{err}");
}

#[test]
fn duplicated_positions_name_both_files() {
    let err = error_of(read_dicom(fixture("duplicate")));
    assert!(err.contains("c.dcm") && err.contains("copy_of_c.dcm") && err.contains("same position"), "{err}");
}

#[test]
fn truncated_and_unsupported_files_are_errors_naming_them() {
    let err = error_of(read_dicom(fixture("truncated.dcm")));
    assert!(err.contains("truncated.dcm"), "{err}");
    let err = error_of(read_dicom(fixture("jpegxl.dcm")));
    assert!(err.contains("jpegxl.dcm") && err.contains("JPEG XL") && err.contains("1.2.840.10008.1.2.4.110"), "{err}");
    assert!(err.contains("is not decoded by this build"), "{err}");
    // A build without the `jpeg-ls` feature (CharLS) refuses JPEG-LS by name.
    if cfg!(not(feature = "jpeg-ls")) {
        let err = error_of(read_dicom(fixture("MR_small_jpeg_ls_lossless.dcm")));
        assert!(err.contains("JPEG-LS") && err.contains("1.2.840.10008.1.2.4.80"), "{err}");
    }
    // jpeg-decoder reads 8-bit lossy JPEG only: 12-bit JPEG Extended is an error saying so.
    let err = error_of(read_dicom(fixture("JPGExtended.dcm")));
    assert!(err.contains("JPGExtended.dcm") && err.contains("JPEG Extended") && err.contains("12"), "{err}");
    let err = error_of(decode_dicom(b"plainly not DICOM"));
    assert!(err.contains("<memory>"), "{err}");
}

/// Image Pixel module values pydicom refuses (tests/fixtures/make_dicom_checks.py: MR_small.dcm with one value
/// made invalid) used to load anyway — BitsStored clamped, PixelRepresentation 5 read as unsigned, "BOGUS" as
/// grey. Each is refused in one line naming the file, the tag and the value.
#[test]
fn image_pixel_values_pydicom_refuses_are_refused_naming_the_tag() {
    let cases = [
        ("bits_stored_20.dcm", "(0028,0101) BitsStored 20 exceeds (0028,0100) BitsAllocated 16"),
        ("bits_stored_0.dcm", "(0028,0101) BitsStored 0 is not a positive number of bits"),
        ("pixel_representation_5.dcm", "(0028,0103) PixelRepresentation 5 is neither 0 (unsigned) nor 1 (signed)"),
        ("photometric_bogus.dcm", "(0028,0004) PhotometricInterpretation \"BOGUS\" is not one DICOM defines"),
    ];
    for (name, words) in cases {
        let path = fixture("refused").join(name);
        let err = error_of(read_dicom(&path));
        assert!(!err.contains('\n'), "one line: {err}");
        assert!(err.contains(&path.display().to_string()) && err.contains(words), "{name}: {err}");
    }
}

/// RGB JPEG baseline without a colour transform (pydicom's test files; tests/fixtures/make_dicom_checks.py): the
/// first says nothing about its components (no APP14, no JFIF, ids 0 1 2) and used to decode magenta (YCbCr
/// assumed: off by up to 137); the second says "no transform" in an Adobe APP14 marker. Both equal pydicom's
/// pixels (libjpeg, saved whole as NAME.png) within LOSSY_JPEG_TOLERANCE: another decoder's IDCT rounding.
#[test]
fn rgb_jpeg_without_colour_transform_decodes_as_pydicom() {
    for stem in ["SC_jpeg_no_color_transform", "SC_jpeg_no_color_transform_2"] {
        let dicom = read_dicom(fixture(&format!("{stem}.dcm"))).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert!(dicom.image.colour, "{stem}");
        let reference = values(&cliper::read_png(fixture(&format!("{stem}.png"))).unwrap());
        let ours = values(&dicom.image.array);
        assert_eq!(ours.shape(), reference.shape(), "{stem}");
        let worst = ours.iter().zip(reference.iter()).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(worst <= LOSSY_JPEG_TOLERANCE, "{stem}: largest difference {worst}");
    }
}

/// JPEG-LS lossless and near-lossless (pydicom's bundled files; tests/fixtures/make_dicom_checks.py) decode
/// through CharLS to exactly pydicom's values (libjpeg): JPEG-LS decoding is integer arithmetic that every
/// conforming decoder does alike, near-lossless included, so the tolerance is 0. The lossless MR equals the
/// uncompressed MR_small.dcm.
#[cfg(feature = "jpeg-ls")]
#[test]
fn jpeg_ls_lossless_and_near_lossless_match_pydicom() {
    let cases = [
        ("MR_small_jpeg_ls_lossless", "JPEG-LS Lossless Image Compression", false),
        ("JPEGLSNearLossless_08", "JPEG-LS Lossy (Near-Lossless) Image Compression", false),
        ("JPEGLSNearLossless_16", "JPEG-LS Lossy (Near-Lossless) Image Compression", false),
        ("SC_rgb_jls_lossy_line", "JPEG-LS Lossy (Near-Lossless) Image Compression", true),
        ("SC_rgb_jls_lossy_sample", "JPEG-LS Lossy (Near-Lossless) Image Compression", true),
    ];
    let dir = fixture("jpeg_ls");
    for (stem, syntax, colour) in cases {
        let dicom = read_dicom(dir.join(format!("{stem}.dcm"))).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert_eq!(dicom.info.transfer_syntax, syntax, "{stem}");
        assert_eq!(dicom.image.colour, colour, "{stem}");
        let reference = read_npy(dir.join(format!("{stem}.npy"))).unwrap();
        assert_eq!(dicom.image.array.dtype(), reference.dtype(), "{stem}");
        assert_eq!(dicom.image.array, reference, "{stem}");
    }
    let lossless = read_dicom(dir.join("MR_small_jpeg_ls_lossless.dcm")).unwrap();
    assert_eq!(lossless.image.array, read_dicom(fixture("MR_small.dcm")).unwrap().image.array);
}

/// A JPEG-LS codestream claiming 65535 × 65535 pixels in a 64 × 64 file is refused before CharLS reserves
/// what it claims (8 GiB), naming both sizes.
#[cfg(feature = "jpeg-ls")]
#[test]
fn a_jpeg_ls_frame_larger_than_the_header_is_refused() {
    let path = fixture("jpeg_ls").join("refused").join("claims_65535.dcm");
    let err = error_of(read_dicom(&path));
    assert!(!err.contains('\n'), "one line: {err}");
    assert!(err.contains("claims_65535.dcm") && err.contains("65535 × 65535") && err.contains("64 × 64"), "{err}");
}

/// A gantry-tilted CT (15°, make_dicom_tilt.py): the slice step is not along the planes' normal. Every slice k must
/// lie where its ImagePositionPatient says — the geometry's slice axis is the step itself (a sheared affine) — where
/// projecting the step on the normal put slice k about k·0.67 mm off.
#[test]
fn gantry_tilted_series_places_every_slice_at_its_position() {
    let folder = fixture("tilted");
    let reference: Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("positions.json")).unwrap()).unwrap();
    let series = read_dicom(&folder).unwrap();
    assert_eq!(series.image.array.shape(), &[6, 5, 4]);
    let g = series.image.geometry.expect("geometry");
    for (k, position) in reference["positions"].as_array().unwrap().iter().enumerate() {
        let lps: Vec<f64> = position.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let ras = [-lps[0], -lps[1], lps[2]];
        let ours = g.position([k as f64, 0.0, 0.0]);
        for a in 0..3 {
            // Positions are written with 10 decimals: 1e-9 mm is their rounding.
            assert!((ours[a] - ras[a]).abs() < 1e-9, "slice {k}: at {ours:?}, its ImagePositionPatient says {ras:?}");
        }
    }
    let affine = g.affine();
    let expected = &reference["affine_lps"];
    for r in 0..3 {
        let flip = if r < 2 { -1.0 } else { 1.0 }; // LPS → RAS
        for c in 0..4 {
            // The affine's columns are (column, row, slice) steps; the fixture's are (slice, row, column).
            let e = flip * expected[r][[2, 1, 0, 3][c]].as_f64().unwrap();
            assert!((affine[r][c] - e).abs() < 1e-9, "affine[{r}][{c}] {} vs {e}", affine[r][c]);
        }
    }
}

/// A NIfTI written from a tilted series keeps the sheared affine in its sform (read first by nibabel and cliper)
/// and a rotation in its qform: the planes' own, with pixdim[3] the distance between planes (2.5 mm), as dcm2niix
/// writes one — not a quaternion of a sheared matrix, which is no rotation.
#[test]
fn a_tilted_series_written_as_nifti_keeps_its_shear_in_the_sform() {
    let series = read_dicom(fixture("tilted")).unwrap();
    let dir = std::env::temp_dir().join(format!("cliper-dicom-tilt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tilted.nii");
    cliper::write_image(&path, &series.image).unwrap();
    let back = read_image(&path).unwrap().geometry.expect("geometry");
    let (ours, written) = (series.image.geometry.unwrap().affine(), back.affine());
    for r in 0..3 {
        for c in 0..4 {
            // The sform is float32: 1e-5 mm relative to coordinates of tens of mm.
            assert!((ours[r][c] - written[r][c]).abs() < 1e-4, "sform[{r}][{c}] {} vs {}", written[r][c], ours[r][c]);
        }
    }
    let bytes = std::fs::read(&path).unwrap();
    let f32_at = |offset: usize| f32::from_le_bytes(bytes[offset..offset + 4].try_into().unwrap());
    let pixdim: Vec<f32> = (0..4).map(|k| f32_at(76 + 4 * k)).collect();
    assert_eq!(pixdim, [1.0, 0.6, 0.6, 2.5], "qfac and the distances between planes");
    let quatern: Vec<f32> = (0..3).map(|k| f32_at(256 + 4 * k)).collect();
    // LPS axial planes in RAS: x and y flipped, a half turn about z, (b, c, d) = (0, 0, 1).
    assert!(quatern.iter().zip([0.0, 0.0, 1.0]).all(|(q, e)| (q - e).abs() < 1e-6), "quatern {quatern:?}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A slice off the line through the first and last positions (make_dicom_tilt.py's tilted_bent: 1 mm to the
/// left) fits no affine: refused naming the slice, not placed wrongly.
#[test]
fn a_series_whose_positions_bend_is_refused_naming_the_slice() {
    let err = read_dicom(fixture("tilted_bent")).unwrap_err().to_string();
    assert!(err.contains("c.dcm") && err.contains("off the line"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
