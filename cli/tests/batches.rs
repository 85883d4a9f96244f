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
    let image = |seed, geometry| Image {
        array: HostArray::F32(volume(&shape, seed)),
        colour: false,
        geometry: Some(geometry),
        scaling: None,
    };
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
    let grey = |array| Image { array, colour: false, geometry: None, scaling: None };
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

// Item 8: an output that is an input of the same run — a batch file, the `--kernel` file, a pipeline's fixed
// input, the manifest, the same file under another name (`..`, a symbolic link, a hard link) — or two outputs
// naming one file are refused before anything runs, and every file is left as it was.

/// A 6 × 7 f32 array whose values depend on `seed`, written to `path`.
fn array_file(path: &Path, seed: usize) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    cliper::write_npy(path, &HostArray::F32(volume(&[6, 7], seed))).unwrap();
}

/// Runs and expects a one-line refusal that contains every one of `words`; the files under `dir` are unchanged.
fn refused(args: &[&str], dir: &Path, words: &[&str]) {
    let before = snapshot(dir);
    let said = fails(args, 1);
    assert_eq!(said.trim().lines().count(), 1, "{args:?}: {said}");
    for word in words {
        assert!(said.contains(word), "{args:?} should name {word}: {said}");
    }
    assert_eq!(snapshot(dir), before, "{args:?} changed files");
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                todo.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                files.push((path, bytes));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn an_output_that_is_an_input_is_refused_and_nothing_is_touched() {
    let dir = scratch("overwrite");
    let (input, out) = (dir.join("in"), dir.join("out"));
    array_file(&input.join("a.npy"), 1);
    array_file(&input.join("b.npy"), 2);
    array_file(&out.join("a.npy"), 3); // a filter file that a batch output would replace
    let (a, kernel) = (input.join("a.npy"), out.join("a.npy"));
    // The batch output out/a.npy is the --kernel file.
    refused(
        &["convolve", s(&input), &format!("{}/", out.display()), "--kernel", s(&kernel)],
        &dir,
        &["kernel", "a.npy"],
    );
    // The same file under other names: `..`, a symbolic link, a hard link.
    let dotted = dir.join("in/../in/a.npy");
    refused(&["gaussian-filter", s(&a), s(&dotted), "--sigma", "1"], &dir, &["would overwrite", "a.npy"]);
    std::os::unix::fs::symlink(&a, dir.join("link.npy")).unwrap();
    refused(&["gaussian-filter", s(&a), s(&dir.join("link.npy")), "--sigma", "1"], &dir, &["would overwrite"]);
    std::fs::hard_link(&a, dir.join("hard.npy")).unwrap();
    refused(&["gaussian-filter", s(&dir.join("hard.npy")), s(&a), "--sigma", "1"], &dir, &["would overwrite"]);
    refused(&["convert", s(&a), s(&dir.join("hard.npy"))], &dir, &["would overwrite"]);
    // The manifest is an input image.
    let manifest = ["--manifest", s(&a)];
    refused(&[&["median", s(&input), &format!("{}/", out.display())][..], &manifest].concat(), &dir, &["manifest"]);
    // A pipeline's fixed input is one of the batch's outputs; two outputs of one run name one file.
    let pipeline = dir.join("p.toml");
    let weights = out.join("b.npy");
    array_file(&weights, 4);
    std::fs::write(
        &pipeline,
        format!(
            "[input]\nx = \"{}\"\nw = \"{}\"\n\n[[step]]\nop = \"expression\"\nexpr = \"a * b\"\nin = [\"x\", \"w\"]\nout \
             = \"y\"\n\n[[step]]\nop = \"expression\"\nexpr = \"a + 1\"\nin = \"y\"\nout = \"z\"\n\n[output]\ny = \"{}/\"\n",
            input.display(),
            weights.display(),
            out.display()
        ),
    )
    .unwrap();
    refused(&["run", s(&pipeline)], &dir, &["input w", "b.npy"]);
    let single = ["--input", &format!("x={}", a.display())];
    let twice = ["--output", &format!("y={}", dir.join("same.npy").display()), "--output"];
    let z = format!("z={}", dir.join("./same.npy").display());
    let args = [&["run", s(&pipeline)][..], &single, &twice, &[&z]].concat();
    refused(&args, &dir, &["collide", "same.npy"]);
    assert!(!dir.join("same.npy").exists());
    // The pipeline file itself.
    let onto_pipeline = format!("y={}", dir.join("p.toml").display());
    let args = [&["run", s(&pipeline)][..], &single, &["--output", &onto_pipeline]].concat();
    let said = fails(&args, 1);
    assert!(said.contains("pipeline file") || said.contains("toml"), "{said}");
    std::fs::remove_dir_all(&dir).ok();
}

// Item 9: `cliper run --dry-run` lists every file a run would read and write, and writes nothing.
#[test]
fn a_dry_run_lists_what_a_run_reads_and_writes_and_writes_nothing() {
    let dir = scratch("dry-run");
    let input = dir.join("in");
    array_file(&input.join("a.npy"), 1);
    array_file(&input.join("b.npy"), 2);
    let pipeline = dir.join("p.toml");
    std::fs::write(
        &pipeline,
        format!(
            "[input]\nx = \"{}\"\n\n[[step]]\nop = \"rank-filter\"\nfilter = \"median\"\nin = \"x\"\nout = \"y\"\n\n\
             [output]\ny = \"{}/{{stem}}_median.npy\"\n",
            input.display(),
            dir.join("out").display()
        ),
    )
    .unwrap();
    let manifest = dir.join("log/manifest.jsonl");
    let said = ok(&["run", s(&pipeline), "--dry-run", "--manifest", s(&manifest)]);
    for (verb, file) in [
        ("read", input.join("a.npy")),
        ("read", input.join("b.npy")),
        ("read", pipeline.clone()),
        ("write", dir.join("out/a_median.npy")),
        ("write", dir.join("out/b_median.npy")),
        ("write", manifest.clone()),
    ] {
        assert!(said.lines().any(|l| l.starts_with(verb) && l.contains(s(&file))), "{verb} {}: {said}", file.display());
    }
    assert!(!dir.join("out").exists() && !dir.join("log").exists(), "a dry run wrote: {said}");
    std::fs::remove_dir_all(&dir).ok();
}

// Item 10: a manifest that cannot be written fails the run; shards sharing one manifest write whole lines.
#[test]
fn an_unwritable_manifest_fails_the_run() {
    let dir = scratch("manifest-full");
    let input = dir.join("in");
    array_file(&input.join("a.npy"), 1);
    let said = fails(&["median", s(&input), &format!("{}/", dir.join("out").display()), "--manifest", "/dev/full"], 1);
    assert!(said.contains("/dev/full"), "{said}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn shards_sharing_a_manifest_write_whole_lines() {
    let dir = scratch("manifest-shards");
    let input = dir.join("in");
    let files = 160;
    for i in 0..files {
        array_file(&input.join(format!("scan{i:03}.npy")), i);
    }
    let manifest = dir.join("manifest.jsonl");
    let shards = 4;
    let running: Vec<_> = (0..shards)
        .map(|i| {
            std::process::Command::new(env!("CARGO_BIN_EXE_cliper"))
                .current_dir(root())
                .args(["threshold", s(&input), &format!("{}/", dir.join("out").display()), "--value", "50"])
                .args(["--shard", &format!("{i}/{shards}"), "--manifest", s(&manifest)])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut shard in running {
        assert!(shard.wait().unwrap().success());
    }
    let text = std::fs::read_to_string(&manifest).unwrap();
    let mut inputs: Vec<String> = text
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
            assert_eq!(value["status"], "ok", "{line}");
            value["input"].as_str().unwrap().to_string()
        })
        .collect();
    inputs.sort();
    inputs.dedup();
    assert_eq!(inputs.len(), files, "one whole line per file");
    assert_eq!(text.lines().count(), files);
    std::fs::remove_dir_all(&dir).ok();
}

// Item 12: one stray `.dcm` among other images made the whole folder one DICOM series (0 of 62 processed). A
// folder is one series only when its image files are all DICOM (hidden files, DICOMDIR and notes aside).
#[test]
fn a_folder_is_a_dicom_series_only_when_its_images_are_all_dicom() {
    let dir = scratch("stray-dcm");
    let series = root().join("data/ct_series");
    let mixed = dir.join("mixed");
    std::fs::create_dir_all(&mixed).unwrap();
    for (i, name) in ["a.png", "b.png", "c.png"].iter().enumerate() {
        let image = Image {
            array: HostArray::U8(volume(&[9, 11], i).mapv(|v| v as u8)),
            colour: false,
            geometry: None,
            scaling: None,
        };
        write_image(mixed.join(name), &image).unwrap();
    }
    std::fs::copy(series.join("IM0001.dcm"), mixed.join("stray.dcm")).unwrap();
    let out = dir.join("out");
    let said = ok(&["convert", s(&mixed), &format!("{}/{{stem}}.npy", out.display())]);
    for stem in ["a", "b", "c", "stray"] {
        assert!(out.join(format!("{stem}.npy")).is_file(), "{stem}: {said}");
    }
    // A series folder with notes, a hidden file and a DICOMDIR beside its slices is still one series.
    let slices = dir.join("slices");
    std::fs::create_dir_all(&slices).unwrap();
    for entry in std::fs::read_dir(&series).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, slices.join(path.file_name().unwrap())).unwrap();
    }
    std::fs::write(slices.join("README.txt"), "acquired 2026-11-27").unwrap();
    std::fs::write(slices.join(".DS_Store"), [0u8; 16]).unwrap();
    std::fs::write(slices.join("DICOMDIR"), [0u8; 16]).unwrap();
    let volume_file = dir.join("volume.nii");
    let said = ok(&["convert", s(&slices), s(&volume_file)]);
    let whole = ok(&["convert", s(&series), s(&dir.join("whole.nii"))]);
    assert_eq!(std::fs::read(&volume_file).unwrap(), std::fs::read(dir.join("whole.nii")).unwrap(), "{said} {whole}");
    std::fs::remove_dir_all(&dir).ok();
}
