//! A header's data file stays in the header's folder (issue 44, item 9): `cliper info` and `convert` of a
//! `.nhdr`/`.mhd` naming `../secret.raw` refuse in one line and write nothing; `--allow-data-outside` reads it.

mod common;
use common::*;

#[test]
fn a_header_naming_data_outside_its_folder_is_refused_unless_allowed() {
    let dir = scratch("data-outside");
    let scan = dir.join("scan");
    std::fs::create_dir_all(&scan).unwrap();
    // Twelve bytes that are not an image anyone meant to share, beside the downloaded folder.
    std::fs::write(dir.join("secret.raw"), b"root:x:0:0:r").unwrap();
    let nhdr = scan.join("scan.nhdr");
    std::fs::write(
        &nhdr,
        "NRRD0004\ntype: uint8\ndimension: 2\nsizes: 4 3\nencoding: raw\ndata file: ../secret.raw\n\n",
    )
    .unwrap();
    let mhd = scan.join("scan.mhd");
    std::fs::write(
        &mhd,
        "ObjectType = Image\nNDims = 2\nDimSize = 4 3\nElementType = MET_UCHAR\nElementDataFile = ../secret.raw\n",
    )
    .unwrap();
    for header in [&nhdr, &mhd] {
        let header = header.to_str().unwrap();
        let out = dir.join("out.npy");
        let out = out.to_str().unwrap();
        for args in [vec!["info", header], vec!["convert", header, out]] {
            let stderr = fails(&args, 1);
            assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
            for words in [header, "outside the header's folder", "secret.raw", "--allow-data-outside"] {
                assert!(stderr.contains(words), "{args:?} should say {words:?}: {stderr}");
            }
            assert!(!std::path::Path::new(out).exists(), "{args:?} wrote {out}");
        }
        ok(&["--allow-data-outside", "info", header]);
        ok(&["convert", header, out, "--allow-data-outside"]);
        let bytes: Vec<u8> = b"root:x:0:0:r".to_vec();
        assert_eq!(
            cliper::read_npy(out).unwrap(),
            cliper::HostArray::U8(ndarray::Array2::from_shape_vec((3, 4), bytes).unwrap().into_dyn())
        );
        std::fs::remove_file(out).unwrap();
    }
}
