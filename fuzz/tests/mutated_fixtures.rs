//! The committed TIFF and NIfTI fixtures with a few bytes changed or the tail cut, through the same calls as the
//! fuzz targets — the whole-file decoders and the slab readers tiled chains use (`SlabFile::open_tiff`,
//! `SlabFile::open_nifti`). Deterministic (xorshift from a fixed seed); any result is fine but a panic or an
//! abort (a header claiming more than the file holds once made the slab reader allocate for it).

use std::path::{Path, PathBuf};

fn fixtures(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == extension))
        .collect();
    files.sort();
    files
}

#[test]
fn mutated_tiff_and_nifti_fixtures_return_without_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut seeds: Vec<(PathBuf, cliper_fuzz::Target)> = Vec::new();
    seeds.extend(fixtures(&root, "tif").into_iter().map(|p| (p, cliper_fuzz::tiff as cliper_fuzz::Target)));
    seeds.extend(
        fixtures(&root.join("nifti"), "nii").into_iter().map(|p| (p, cliper_fuzz::nifti as cliper_fuzz::Target)),
    );
    assert!(seeds.len() > 30, "{} fixtures", seeds.len());
    let mut state = 12345u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for (path, run) in &seeds {
        let data = std::fs::read(path).unwrap();
        for _ in 0..60 {
            let mut d = data.clone();
            for _ in 0..1 + next() % 4 {
                let at = next() as usize % d.len().max(1);
                if let Some(b) = d.get_mut(at) {
                    *b = next() as u8;
                }
            }
            if next() % 5 == 0 {
                d.truncate(next() as usize % d.len().max(1));
            }
            run(&d);
        }
    }
}
