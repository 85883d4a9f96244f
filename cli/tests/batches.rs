//! Batches must write, for every file, exactly what a run on that file alone writes (issue 44, item 1): the chain
//! built for one file is reused for the next only when everything that shaped it matches, and what each output
//! inherits from its input (geometry, the file's type, colour) is the file's own. Run as a user runs it, on files
//! generated here, in both orders, on one device and on two (`POCL_DEVICES="pthread pthread"`).
//!
//! Comparisons are byte for byte: the same binary on the same device computes the same values.

mod common;
use cliper::{Geometry, HostArray, Image, write_image};
use common::*;
use ndarray::{ArrayD, IxDyn};
use std::path::{Path, PathBuf};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A smooth test volume whose values depend on `seed`.
fn volume(shape: &[usize], seed: usize) -> ArrayD<f32> {
    let n: usize = shape.iter().product();
    let values = (0..n).map(|k| (((k * 37 + seed * 101) % 211) as f32 / 211.0) * 100.0).collect();
    ArrayD::from_shape_vec(IxDyn(shape), values).unwrap()
}

/// Runs `args` on the batch folder `input` writing into `out`, on one device or on two.
fn batch(args: &[&str], input: &Path, out: &Path, two_devices: bool) {
    let mut command = cliper();
    command.args([args[0], s(input), &format!("{}/", out.display())]).args(&args[1..]);
    if two_devices {
        command.env("POCL_DEVICES", "pthread pthread").env_remove("CLIPER_DEVICE").args(["--devices", "all"]);
    }
    let run = command.output().unwrap();
    assert!(run.status.success(), "batch {args:?}: {}", String::from_utf8_lossy(&run.stderr));
}

/// Every file of `input` run alone, into `out`.
fn singles(args: &[&str], input: &Path, out: &Path) {
    std::fs::create_dir_all(out).unwrap();
    for entry in std::fs::read_dir(input).unwrap() {
        let file = entry.unwrap().path();
        let target = out.join(file.file_name().unwrap());
        let mut all = vec![args[0], s(&file), s(&target)];
        all.extend(&args[1..]);
        ok(&all);
    }
}

/// Each file of `want` equals its namesake in `got`, byte for byte.
fn same_files(got: &Path, want: &Path, what: &str) {
    let mut count = 0;
    for entry in std::fs::read_dir(want).unwrap() {
        let name = entry.unwrap().file_name();
        let (g, w) = (std::fs::read(got.join(&name)).unwrap(), std::fs::read(want.join(&name)).unwrap());
        assert!(g == w, "{what}: {} differs from the file run alone", name.to_string_lossy());
        count += 1;
    }
    assert!(count >= 2, "{what}: {count} files");
}

/// Writes `files` (name, image) into a fresh folder `dir/name`.
fn folder(dir: &Path, name: &str, files: &[(&str, &Image)]) -> PathBuf {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    for (file, image) in files {
        write_image(folder.join(file), image).unwrap();
    }
    folder
}

#[test]
fn a_batch_of_volumes_keeps_each_files_geometry_and_voxel_size() {
    let dir = scratch("batch-geometry");
    let shape = [5, 7, 9];
    // RAS with anisotropic voxels; LPS (x and y flipped) with other voxels and another origin.
    let ras = Geometry { origin: [10.0, -20.0, 30.0], ..Geometry::from_spacing([2.5, 0.7, 0.7]) };
    let lps = Geometry {
        origin: [-5.0, 7.0, 1.0],
        direction: [[0.0, 0.0, 1.0], [0.0, -1.0, 0.0], [-1.0, 0.0, 0.0]],
        ..Geometry::from_spacing([1.0, 1.5, 0.5])
    };
    let image =
        |seed, geometry| Image { array: HostArray::F32(volume(&shape, seed)), colour: false, geometry: Some(geometry) };
    let (first, second) = (image(1, ras), image(2, lps));
    // The same two files in both orders of the listing.
    let ab = folder(&dir, "ab", &[("a.nii", &first), ("b.nii", &second)]);
    let ba = folder(&dir, "ba", &[("a.nii", &second), ("b.nii", &first)]);
    let args = ["gaussian-filter", "--sigma", "1mm", "--rank", "3"];
    for (input, name) in [(&ab, "ab"), (&ba, "ba")] {
        let alone = dir.join(format!("{name}-alone"));
        singles(&args, input, &alone);
        for two in [false, true] {
            let out = dir.join(format!("{name}-batch-{two}"));
            batch(&args, input, &out, two);
            same_files(&out, &alone, &format!("{name}, two devices: {two}"));
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_batch_of_images_keeps_each_files_type() {
    let dir = scratch("batch-types");
    let shape = [20, 30];
    let grey = |array| Image { array, colour: false, geometry: None };
    let u8s = grey(HostArray::U8(volume(&shape, 3).mapv(|v| (v * 2.5) as u8)));
    let u16s = grey(HostArray::U16(volume(&shape, 4).mapv(|v| (v * 600.0) as u16)));
    let ab = folder(&dir, "ab", &[("a.png", &u8s), ("b.png", &u16s)]);
    let ba = folder(&dir, "ba", &[("a.png", &u16s), ("b.png", &u8s)]);
    for args in [&["gaussian-filter", "--sigma", "1.5"][..], &["gaussian-filter", "--sigma", "1.5", "--clip"][..]] {
        for (input, name) in [(&ab, "ab"), (&ba, "ba")] {
            let alone = dir.join(format!("{name}-alone-{}", args.len()));
            singles(args, input, &alone);
            for two in [false, true] {
                let out = dir.join(format!("{name}-batch-{two}-{}", args.len()));
                batch(args, input, &out, two);
                same_files(&out, &alone, &format!("{args:?} {name}, two devices: {two}"));
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
