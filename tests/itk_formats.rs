//! NRRD and MetaImage reading against what SimpleITK reads from the same files (tests/fixtures/make_itk.py):
//! the samples exactly, and the world position of voxels — ITK's LPS points, which cliper gives in RAS — within
//! 1e-9 mm (the files store 17 significant digits; the only error is the last bit of the direction products).

use cliper::{Error, Geometry, read_image, read_npy};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/itk").join(name)
}

#[test]
fn every_fixture_reads_as_simpleitk_reads_it() {
    let positions: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("positions.json")).unwrap()).unwrap();
    let files = positions.as_object().unwrap();
    assert_eq!(files.len(), 8, "{:?}", files.keys());
    for (name, points) in files {
        let image = read_image(fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (stem, ext) = name.rsplit_once('.').unwrap();
        let want = read_npy(fixture(&format!("{stem}_{ext}.npy"))).unwrap();
        assert_eq!(image.array, want, "{name}: samples");
        assert_eq!(image.colour, name.starts_with("rgb"), "{name}: colour");
        let geometry: Geometry = image.geometry.unwrap_or_else(|| panic!("{name}: no geometry"));
        for point in points.as_array().unwrap() {
            let index: Vec<f64> = point[0].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
            let lps: Vec<f64> = point[1].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
            // ITK's index is (i, j[, k]) with i the fastest axis; cliper's is (slice, row, column).
            let ours = geometry.position([index.get(2).copied().unwrap_or(0.0), index[1], index[0]]);
            let ras = [-lps[0], -lps[1], lps.get(2).copied().unwrap_or(0.0)];
            for (a, b) in ours.iter().zip(ras) {
                assert!((a - b).abs() < 1e-9, "{name}: voxel {index:?} at {ours:?}, SimpleITK says (RAS) {ras:?}");
            }
        }
    }
}

#[test]
fn broken_headers_and_data_are_named_errors() {
    let dir = std::env::temp_dir().join(format!("cliper-itk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = std::fs::read(fixture("oblique_i16.nrrd")).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated.nrrd", good[..good.len() - 7].to_vec(), "need 120 bytes of data, the file has 113"),
        ("encoding.nrrd", String::from_utf8_lossy(&good).replace("encoding: raw", "encoding: bzip2").into_bytes(), "bzip2"),
        ("no_sizes.nrrd", String::from_utf8_lossy(&good).replace("sizes: 5 4 3", "").into_bytes(), "`sizes`"),
        (
            "huge.nrrd",
            String::from_utf8_lossy(&good).replace("sizes: 5 4 3", "sizes: 5 4 3000000000000").into_bytes(),
            "need",
        ),
        ("magic.nrrd", b"NRRX0004\n".to_vec(), "NRRD000"),
        ("bomb.mha", b"NDims = 3\nDimSize = 1000 1000 1000\nElementType = MET_FLOAT\nCompressedData = True\nElementDataFile = LOCAL\nxx".to_vec(), "compressed bytes"),
        ("list.mha", b"NDims = 2\nDimSize = 2 2\nElementType = MET_UCHAR\nElementDataFile = LIST\n".to_vec(), "LIST"),
    ];
    for (name, bytes, needle) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        match read_image(&path) {
            Err(e @ Error::Format { .. }) => {
                let text = e.to_string();
                assert!(text.contains(needle) && text.contains(name), "{name}: {text}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// SimpleITK's gzip NRRD and zlib MetaImage with one bit flipped in their deflate data
/// (tests/fixtures/make_integrity.py): the data still inflates to the size the header claims, only the
/// checksum in the stream's trailer tells. The refusal says which check failed, in one line naming the file.
#[test]
fn a_bit_flipped_in_compressed_data_is_refused_by_its_checksum() {
    let integrity = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/integrity");
    for (name, check) in [
        ("oblique_i16_gzip_bitflip.nrrd", "gzip CRC mismatch"),
        ("oblique_i16_zlib_bitflip.mha", "zlib Adler-32 mismatch"),
    ] {
        let message = read_image(integrity.join(name)).expect_err(name).to_string();
        assert!(!message.contains('\n'), "one line: {message}");
        assert!(message.contains(name) && message.contains(check), "{name}: {message}");
    }
    // The files they were made from load.
    assert!(read_image(fixture("oblique_i16_gzip.nrrd")).is_ok());
    assert!(read_image(fixture("oblique_i16_zlib.mha")).is_ok());
}

/// A header is data: a `.nhdr` or `.mhd` naming `../secret.raw`, an absolute path, or a link in its folder that
/// leads outside must not make cliper read that file (issue 44: a downloaded scan copied `/etc/passwd` into an
/// output). Refused in one line naming the header, the data file and the way to allow it; read when allowed.
#[test]
fn a_data_file_outside_the_headers_folder_is_refused_unless_allowed() {
    let dir = std::env::temp_dir().join(format!("cliper-itk-outside-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let scan = dir.join("scan");
    std::fs::create_dir_all(&scan).unwrap();
    let secret = dir.join("secret.raw");
    let values: Vec<u8> = (0u8..12).map(|v| v * 20).collect();
    std::fs::write(&secret, &values).unwrap();
    std::os::unix::fs::symlink(&secret, scan.join("link.raw")).unwrap();
    let nrrd =
        |data: &str| format!("NRRD0004\ntype: uint8\ndimension: 2\nsizes: 4 3\nencoding: raw\ndata file: {data}\n\n");
    let mhd = |data: &str| {
        format!("ObjectType = Image\nNDims = 2\nDimSize = 4 3\nElementType = MET_UCHAR\nElementDataFile = {data}\n")
    };
    let headers = [
        ("up.nhdr", nrrd("../secret.raw")),
        ("absolute.nhdr", nrrd(&secret.display().to_string())),
        ("link.nhdr", nrrd("link.raw")),
        ("up.mhd", mhd("../secret.raw")),
        ("absolute.mhd", mhd(&secret.display().to_string())),
    ];
    for (name, text) in &headers {
        std::fs::write(scan.join(name), text).unwrap();
    }
    for (name, _) in &headers {
        let message = read_image(scan.join(name)).expect_err(name).to_string();
        assert!(!message.contains('\n'), "one line: {message}");
        for words in [*name, "outside the header's folder", "secret.raw", "--allow-data-outside"] {
            assert!(message.contains(words), "{name}: should say {words:?}: {message}");
        }
    }
    // Allowed, every header reads the secret's values ([3, 4]: the listed sizes reversed).
    cliper::allow_data_outside(true);
    let read: Vec<_> = headers.iter().map(|(name, _)| read_image(scan.join(name))).collect();
    cliper::allow_data_outside(false);
    for ((name, _), image) in headers.iter().zip(read) {
        let image = image.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(image.array.shape(), &[3, 4], "{name}");
        assert_eq!(
            image.array,
            cliper::HostArray::U8(ndarray::Array2::from_shape_vec((3, 4), values.clone()).unwrap().into_dyn())
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
