//! What a researcher meets at the edges, run as a user runs it: the binary on files written by numpy, scipy,
//! Pillow and tifffile (tests/fixtures, with the scripts that made them) or generated here. Each test is one
//! reported way the CLI gave a wrong result with exit code 0, or refused what users expect to work.
//!
//! Tolerances: results computed in f64 (`--precision double`) are compared with scipy's float64 at 1e-12
//! relative to the largest magnitude (sums of at most 27 products; scipy and cliper order them differently);
//! results computed in f32 at 1e-5 (a few dozen roundings of 6e-8 in 3×3 to 17×17 sums). Counts, shapes, types
//! and messages are exact.

mod common;
use cliper::{Dtype, HostArray, read_file, read_image, read_npy, write_mat, write_npy};
use common::*;
use ndarray::{ArrayD, Ix2, IxDyn};
use num_complex::Complex64;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures").join(name)
}

fn npy(dir: &Path, name: &str, array: HostArray) -> String {
    let path = dir.join(name);
    write_npy(&path, &array).unwrap();
    path.to_string_lossy().into_owned()
}

fn floats(values: &[f32], shape: &[usize]) -> HostArray {
    HostArray::F32(ArrayD::from_shape_vec(IxDyn(shape), values.to_vec()).unwrap())
}

/// The array in a file as f64 (any real type).
fn real(path: &Path) -> ArrayD<f64> {
    read_file(path).unwrap().to_elements::<f64>(path).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

// Item 1: reductions of empty arrays gave device garbage, and two infinities gave NaN.
#[test]
fn empty_and_infinite_data_reduce_as_numpy_does() {
    let dir = scratch("reduce-edges");
    let empty = npy(&dir, "empty.npy", floats(&[], &[0, 3]));
    let columns = npy(&dir, "columns.npy", floats(&[], &[3, 0]));
    let infinite = npy(&dir, "inf.npy", floats(&[1.0, f32::INFINITY, f32::NEG_INFINITY, 2.0], &[4]));
    for _ in 0..3 {
        for p in ["2", "1", "inf", "3"] {
            assert_eq!(ok(&["norm", &empty, "-p", p]), "norm = 0\n", "norm -p {p} of [0, 3]");
            assert_eq!(ok(&["norm", &columns, "-p", p]), "norm = 0\n", "norm -p {p} of [3, 0]");
            assert_eq!(ok(&["norm", &infinite, "-p", p]), "norm = inf\n", "norm -p {p} of [1, inf, -inf, 2]");
        }
        assert_eq!(ok(&["dot", &empty, &empty]), "dot = 0\n");
        assert_eq!(ok(&["dot", &empty, &empty, "--conj"]), "dot = 0\n");
    }
}

// Item 2: colour images are [C, H, W]; filters act per channel over the two image axes.
#[test]
fn colour_images_are_filtered_per_channel_and_stay_colour() {
    let dir = scratch("colour");
    let rgb = fixture("ndimage/rgb_20x30.png");
    let image = read_image(&rgb).unwrap();
    assert!(image.colour);
    assert_eq!(image.array.shape(), &[3, 20, 30]);
    // scipy.ndimage per channel (sigma 0 along the channels), in f32.
    for (kernel, want) in [("gaussian:2", "rgb_20x30_gaussian2.npy"), ("sobel-y", "rgb_20x30_sobel-y.npy")] {
        let out = dir.join(format!("{kernel}.npy").replace(':', "_"));
        ok(&["convolve", s(&rgb), s(&out), "--kernel", kernel]);
        close(&real(&out), &real(&fixture(&format!("ndimage/{want}"))), 1e-5, kernel);
    }
    // A blurred 8-bit colour PNG goes back as an 8-bit colour PNG (rounded, as scipy keeps the input's dtype).
    let blurred = dir.join("blurred.png");
    let said = ok(&["convolve", s(&rgb), s(&blurred), "--kernel", "gaussian:2"]);
    assert!(said.contains("[3, 20, 30] u8"), "{said}");
    let back = read_image(&blurred).unwrap();
    assert!(back.colour && back.array.dtype() == Dtype::U8);
    let want = real(&fixture("ndimage/rgb_20x30_gaussian2.npy"));
    let got = back.array.to_elements::<f64>(&blurred).unwrap();
    assert!(got.iter().zip(&want).all(|(g, w)| (g - w).abs() <= 0.5 + 1e-3), "rounded to the nearest");
    // Transposes act on the image plane of every channel.
    let t = dir.join("t.png");
    ok(&["transpose", s(&rgb), s(&t)]);
    let HostArray::U8(planes) = &image.array else { panic!("u8") };
    let flipped = read_image(&t).unwrap();
    assert!(flipped.colour);
    assert_eq!(flipped.array, HostArray::U8(planes.view().permuted_axes(IxDyn(&[0, 2, 1])).to_owned()));
    // Pad pads the image axes only; a filter across the channels is refused, with nothing written.
    let padded = dir.join("padded.png");
    assert!(ok(&["pad", s(&rgb), s(&padded), "--width", "3", "--mode", "edge"]).contains("[3, 26, 36] u8"));
    let across = dir.join("across.png");
    let e = fails(&["convolve", s(&rgb), s(&across), "--kernel", "gaussian:1", "--rank", "3"], 1);
    assert!(e.contains("[3, 20, 30]") && e.contains("colour"), "{e}");
    assert!(!across.exists());
    // A grey stack is no colour image: refused for PNG, with its shape.
    let stack = npy(&dir, "stack.npy", HostArray::U8(ArrayD::zeros(IxDyn(&[3, 4, 5]))));
    let e = fails(&["convert", &stack, s(&dir.join("stack.png"))], 1);
    assert!(e.contains("[3, 4, 5]") && e.contains("one image"), "{e}");
}

// Item 3: float results saved to PNG were rounded silently; one rule now for every command.
#[test]
fn float_results_are_never_rounded_silently() {
    let dir = scratch("float-png");
    let fractions = npy(&dir, "s32.npy", floats(&[0.25, 0.5, 0.75, 0.125, 0.0, 0.5], &[2, 3]));
    for args in [
        vec!["convolve", &fractions, "", "--kernel", "gaussian:1"],
        vec!["convert", &fractions, ""],
        vec!["recon", "data/kspace.mat", ""],
    ] {
        let out = dir.join(format!("{}.png", args[0]));
        let mut args = args.clone();
        args[2] = s(&out);
        let e = fails(&args, 1);
        assert!(e.contains(s(&out)) && e.contains("not whole") && e.contains("--scale"), "{args:?}: {e}");
        assert!(!out.exists(), "{args:?} left {}", out.display());
        args.extend(["--scale", "minmax"]);
        ok(&args);
        let HostArray::U16(png) = read_file(&out).unwrap() else { panic!("u16") };
        assert_eq!(png.iter().max(), Some(&65535), "{args:?}");
    }
    // Whole values go as they are; rounding is asked for by name.
    let whole = npy(&dir, "whole.npy", floats(&[0.0, 7.0, 300.0, 65535.0], &[2, 2]));
    ok(&["convert", &whole, s(&dir.join("whole.png"))]);
    assert_eq!(real(&dir.join("whole.png")).iter().copied().collect::<Vec<_>>(), [0.0, 7.0, 300.0, 65535.0]);
    ok(&["convert", &fractions, s(&dir.join("rounded.png")), "--scale", "round", "--type", "u8"]);
    assert_eq!(real(&dir.join("rounded.png")).iter().copied().collect::<Vec<_>>(), [0.0, 1.0, 1.0, 0.0, 0.0, 1.0]);
}

// Item 4: batch outputs whose {stem} collides overwrote each other.
#[test]
fn colliding_batch_outputs_are_refused_before_any_file_runs() {
    let dir = scratch("stems");
    let scans = dir.join("scans");
    std::fs::create_dir_all(&scans).unwrap();
    npy(&scans, "a.npy", floats(&[1.0; 6], &[2, 3]));
    write_npy(scans.join("b.npy"), &floats(&[2.0; 6], &[2, 3])).unwrap();
    cliper::write_png(scans.join("a.png"), &HostArray::U8(ArrayD::from_elem(IxDyn(&[2, 3]), 5))).unwrap();
    let out = dir.join("out");
    let template = format!("{}/{{stem}}_n.npy", out.display());
    let e = fails(&["convolve", s(&scans), &template, "--kernel", "box:1"], 1);
    assert!(e.contains("a.npy") && e.contains("a.png") && e.contains("a_n.npy") && e.contains("collide"), "{e}");
    assert!(!out.exists(), "a file ran before the refusal");
    // Writing into the input folder over the inputs is refused too.
    let e = fails(&["convolve", s(&scans), &format!("{}/", scans.display()), "--kernel", "box:1"], 1);
    assert!(e.contains("overwrite"), "{e}");
}

// Item 5: named filters are scipy.ndimage's functions of that name, in every rank.
#[test]
fn named_filters_equal_scipy_in_every_rank() {
    let dir = scratch("named");
    let volume = fixture("ndimage/volume.npy");
    let cases = ["sobel-x", "sobel-y", "prewitt-x", "prewitt-y", "laplacian", "log:1.3", "gaussian:1.5", "box:3"];
    // One sigma per axis too: scipy's gaussian_filter / gaussian_laplace with a sequence of sigmas.
    let per_axis = [("gaussian:0.7,1.9", 2), ("gaussian:1.2,0.7,1.9", 3), ("log:1,2.2", 2), ("log:0.8,1.3,1.1", 3)];
    let ranks = cases.iter().flat_map(|c| [(*c, 2), (*c, 3)]).chain([("sobel-z", 3), ("prewitt-z", 3)]).chain(per_axis);
    for (kernel, rank) in ranks {
        let file = kernel.replace([':', ','], "_");
        let out = dir.join(format!("{file}_{rank}d.npy"));
        let rank_text = rank.to_string();
        ok(&["convolve", s(&volume), s(&out), "--kernel", kernel, "--rank", &rank_text, "--precision", "double"]);
        let want = real(&fixture(&format!("ndimage/{file}_{rank}d.npy")));
        close(&real(&out), &want, 1e-12, &format!("{kernel} rank {rank}"));
    }
    // A mode belongs to filter files; a derivative along an axis the rank lacks is named.
    let e = fails(&["convolve", s(&volume), s(&dir.join("m.npy")), "--kernel", "sobel-x", "--mode", "corr"], 1);
    assert!(e.contains("takes no mode"), "{e}");
    let e = fails(&["convolve", s(&volume), s(&dir.join("z.npy")), "--kernel", "sobel-z", "--rank", "2"], 1);
    assert!(e.contains("rank 3") && !e.contains("Filter::"), "{e}");
    // Three sigmas for a filter over two axes; millimetres for an array without voxel spacing.
    let e = fails(&["convolve", s(&volume), s(&dir.join("s.npy")), "--kernel", "gaussian:1,2,3", "--rank", "2"], 1);
    assert!(e.contains("3 sigmas") && e.contains("2 axes"), "{e}");
    let e = fails(&["convolve", s(&volume), s(&dir.join("s.npy")), "--kernel", "gaussian:1.5mm"], 1);
    assert!(e.contains("voxel spacing") && e.contains("DICOM and NIfTI"), "{e}");
}

/// A random complex array of `shape` (k-space), deterministic.
fn kspace(shape: &[usize], seed: u64) -> ArrayD<Complex64> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    ArrayD::from_shape_fn(IxDyn(shape), |_| Complex64::new(next(), next()))
}

// Items 6 and 8: MATLAB-ordered k-space, complex128 k-space (scipy's default).
#[test]
fn matlab_ordered_and_double_kspace_reconstruct() {
    let dir = scratch("kspace");
    // cliper's order [coil, y, x] and MATLAB's [x, y, coil] of the same data; complex128 as scipy writes it.
    let k = kspace(&[4, 70, 80], 6);
    let ours = dir.join("ours.mat");
    write_mat(&ours, &[("kspace", &HostArray::C64(k.clone()))], false).unwrap();
    let matlab = dir.join("matlab.mat");
    let reordered = k.view().permuted_axes(IxDyn(&[2, 1, 0])).as_standard_layout().to_owned();
    write_mat(&matlab, &[("kspace", &HostArray::C64(reordered))], false).unwrap();
    let (a, b) = (dir.join("a.npy"), dir.join("b.npy"));
    ok(&["recon", s(&ours), s(&a)]);
    let out = cliper().args(["recon", s(&matlab), s(&b)]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("80 coils") && stderr.contains("--spatial-first"), "no warning: {stderr}");
    ok(&["recon", s(&matlab), s(&b), "--spatial-first"]);
    // auto precision computed in double: the two agree to f64 rounding, and the file holds f64.
    let (ra, rb) = (read_npy(&a).unwrap(), read_npy(&b).unwrap());
    assert_eq!((ra.dtype(), ra.shape(), rb.dtype()), (Dtype::F64, &[70, 80][..], Dtype::F64));
    let b_transposed = real(&b).t().as_standard_layout().to_owned();
    close(&real(&a), &b_transposed, 1e-12, "spatial-first");
    // --precision single rounds the complex128 file instead of refusing it.
    let c = dir.join("c.npy");
    ok(&["recon", s(&ours), s(&c), "--precision", "single"]);
    close(&real(&c), &real(&a), 1e-5, "single");
}

// Item 7: statistics of data with NaN and ±∞.
#[test]
fn info_reports_non_finite_values() {
    let dir = scratch("info");
    let f = npy(&dir, "inf.npy", floats(&[1.0, f32::INFINITY, f32::NEG_INFINITY, 2.0, f32::NAN], &[5]));
    let text = ok(&["info", &f]);
    assert!(text.contains("min 1  max 2  mean 1.5 (of 2 finite)  NaN 1  +inf 1  -inf 1"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&ok(&["--json", "info", &f])).unwrap();
    let v = &json["variables"][0];
    assert_eq!((v["min"].as_f64(), v["mean"].as_f64(), v["pos_inf"].as_u64()), (Some(1.0), Some(1.5), Some(1)));
    let empty = npy(&dir, "empty.npy", floats(&[], &[0]));
    assert!(ok(&["info", &empty]).contains("min –  max –  mean –"));
    let colour = ok(&["info", s(&fixture("ndimage/rgb_20x30.png"))]);
    assert!(colour.contains("[3,20,30] u8 colour (RGB)"), "{colour}");
}

// Item 8: a float64 filter file (numpy's default) filters f32 data; single precision rounds f64 input.
#[test]
fn precision_rounds_parameters_and_single_inputs() {
    let dir = scratch("precision");
    let x = npy(&dir, "x.npy", floats(&[1.0, 2.0, 4.0, 8.0, 16.0, 32.0], &[2, 3]));
    let third = HostArray::F64(ArrayD::from_elem(IxDyn(&[1, 3]), 1.0 / 3.0));
    let k = npy(&dir, "k.npy", third);
    let out = dir.join("y.npy");
    assert!(ok(&["convolve", &x, s(&out), "--kernel", &k, "--border", "constant"]).contains("f32"));
    let want = [1.0, 7.0 / 3.0, 2.0, 8.0, 56.0 / 3.0, 16.0];
    close(&real(&out), &ArrayD::from_shape_vec(IxDyn(&[2, 3]), want.to_vec()).unwrap(), 1e-6, "f64 weights");
    let tenth = npy(&dir, "tenth.npy", HostArray::F64(ArrayD::from_elem(IxDyn(&[3]), 0.1)));
    let said = ok(&["norm", &tenth, "--precision", "single"]);
    let value: f64 = said.trim().trim_start_matches("norm = ").parse().unwrap();
    assert!((value - 0.1 * 3f64.sqrt()).abs() < 1e-7, "single rounds 0.1: {said}");
}

// Item 9: saving double data to CFL named the wrong verb and a circular hint.
#[test]
fn double_results_to_cfl_say_what_to_do() {
    let dir = scratch("cfl");
    let x = npy(&dir, "x.npy", HostArray::F64(ArrayD::from_elem(IxDyn(&[2, 2]), 0.1)));
    let out = dir.join("x.cfl");
    let e = fails(&["transpose", &x, s(&out)], 1);
    assert!(e.contains("CFL holds complex64") && e.contains("--type c32") && !e.contains("loading"), "{e}");
    ok(&["transpose", &x, s(&out), "--type", "c32"]);
    assert_eq!(read_file(&out).unwrap().dtype(), Dtype::C32);
}

// Item 10: negative option values (CT air is −1000 HU).
#[test]
fn negative_option_values_are_values() {
    let dir = scratch("negative");
    let x = npy(&dir, "x.npy", floats(&[1.0; 12], &[3, 4]));
    let padded = dir.join("p.npy");
    ok(&["pad", &x, s(&padded), "--width", "1", "--value", "-1000"]);
    assert_eq!(real(&padded)[[0, 0]], -1000.0);
    let blurred = dir.join("c.npy");
    ok(&["convolve", &x, s(&blurred), "--kernel", "box:3", "--border", "constant", "--value", "-8"]);
    assert!((real(&blurred)[[0, 0]] - (4.0 - 5.0 * 8.0) / 9.0).abs() < 1e-5);
    let (last, two) = (dir.join("last.npy"), dir.join("two.npy"));
    ok(&["norm", &x, "--axis", "-1", "-o", s(&last)]);
    ok(&["norm", &x, "--axis", "1", "-o", s(&two)]);
    assert_eq!(real(&last), real(&two));
}

// Item 12: a batch prints each file's line as it is done, so a piped or interrupted run keeps its log.
#[test]
fn batch_lines_are_printed_as_files_finish() {
    use std::io::{BufRead, BufReader};
    let dir = scratch("streaming");
    let scans = dir.join("scans");
    std::fs::create_dir_all(&scans).unwrap();
    for i in 0..400 {
        write_npy(scans.join(format!("s{i:03}.npy")), &floats(&vec![i as f32; 64 * 64], &[64, 64])).unwrap();
    }
    let out = dir.join("out");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cliper"))
        .args(["convolve", s(&scans), &format!("{}/", out.display()), "--kernel", "gaussian:3"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("s000.npy") && first.contains("wrote"), "{first}");
    let running = child.try_wait().unwrap().is_none();
    // SIGINT, as Ctrl-C: the files written so far and the lines printed so far must agree.
    unsafe_free_interrupt(child.id());
    let rest: Vec<String> = lines.map_while(|l| l.ok()).collect();
    let status = child.wait().unwrap();
    assert!(running, "the first line came only when the batch had finished (400 files)");
    let written = std::fs::read_dir(&out).unwrap().filter(|e| e.as_ref().unwrap().path().extension().is_some()).count();
    let printed = 1 + rest.iter().filter(|l| l.contains("wrote")).count();
    assert!(status.code() == Some(130) || status.success(), "{status:?}");
    assert!(printed == written || printed + 1 == written, "printed {printed} lines for {written} files");
}

/// Sends SIGINT with the `kill` command (no unsafe code in tests).
fn unsafe_free_interrupt(pid: u32) {
    std::process::Command::new("kill").args(["-INT", &pid.to_string()]).status().unwrap();
}

// Item 13: a MAT output names its variable; matmul conjugate-transposes.
#[test]
fn mat_outputs_name_their_variable_and_matmul_conjugates() {
    let dir = scratch("mat-var");
    let a = kspace(&[3, 2], 13);
    let a_path = npy(&dir, "a.npy", HostArray::C64(a.clone()));
    let out = dir.join("r.mat");
    ok(&["matmul", &a_path, &a_path, &format!("{}:G", out.display()), "--ha"]);
    ok(&["norm", &a_path, "--axis", "0", "-o", &format!("{}:N", out.display())]);
    let names: Vec<String> = cliper::read_mat(&out).unwrap().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["G", "N"]);
    let HostArray::C64(g) = cliper::read_mat_variable(&out, "G").unwrap() else { panic!("c64") };
    let a2 = a.clone().into_dimensionality::<Ix2>().unwrap();
    let want = a2.t().mapv(|z| z.conj()).dot(&a2);
    for (got, want) in g.iter().zip(want.iter()) {
        assert!((got - want).norm() < 1e-12, "{got} vs {want}");
    }
    let e = fails(&["matmul", &a_path, &a_path, s(&dir.join("x.npy")), "--ha", "--ta"], 1);
    assert!(e.contains("--ta") || e.contains("cannot be used"), "{e}");
}

// Item 16: relative paths in a pipeline file are relative to the file.
#[test]
fn pipeline_paths_are_relative_to_the_file() {
    let dir = scratch("relative");
    let project = dir.join("project");
    std::fs::create_dir_all(project.join("data")).unwrap();
    npy(&project.join("data"), "x.npy", floats(&[3.0, 4.0], &[2]));
    let pipeline = project.join("p.toml");
    std::fs::write(
        &pipeline,
        "[input]\nx = \"data/x.npy\"\n[[step]]\nop = \"norm\"\nin = \"x\"\nout = \"n\"\naxis = 0\n\
         [output]\nn = \"results/n.npy\"\n",
    )
    .unwrap();
    let out = cliper().current_dir(&dir).args(["run", "project/p.toml"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(real(&project.join("results/n.npy")).iter().copied().collect::<Vec<_>>(), [5.0]);
    // Paths given on the command line stay relative to the current directory.
    let out = cliper().current_dir(&dir).args(["run", "project/p.toml", "--output", "n=here.npy"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.join("here.npy").exists());
}

// Items 2 and 11: colour TIFFs (planar as tifffile writes (3, H, W) arrays, or chunky) stay one colour page;
// CT's i16 and complex results can be written as TIFF.
#[test]
fn tiff_colour_and_types_round_trip_through_the_cli() {
    let dir = scratch("tiff");
    let planar = fixture("rgb16_planar.tif");
    let chunky = fixture("rgb16_chunky.tif");
    let (p, c) = (dir.join("p.npy"), dir.join("c.npy"));
    ok(&["convert", s(&planar), s(&p)]);
    ok(&["convert", s(&chunky), s(&c)]);
    assert_eq!(read_file(&p).unwrap(), read_file(&c).unwrap(), "planar and chunky RGB give one [C, H, W] array");
    let rgb = fixture("ndimage/rgb_20x30.png");
    let tif = dir.join("rgb.tif");
    ok(&["convert", s(&rgb), s(&tif)]);
    let page = read_image(&tif).unwrap();
    assert!(page.colour, "an RGB PNG converts to one RGB TIFF page, not 3 grey pages");
    assert_eq!(page.array, read_image(&rgb).unwrap().array);
    let ct = npy(&dir, "ct.npy", HostArray::I16(ArrayD::from_shape_fn(IxDyn(&[3, 4]), |i| i[0] as i16 * 700 - 1000)));
    let ct_tif = dir.join("ct.tif");
    assert!(ok(&["convert", &ct, s(&ct_tif)]).contains("i16"));
    assert_eq!(read_file(&ct_tif).unwrap(), read_npy(&ct).unwrap());
    let z = npy(
        &dir,
        "z.npy",
        HostArray::C32(kspace(&[2, 3], 11).mapv(|v| num_complex::Complex32::new(v.re as f32, v.im as f32))),
    );
    let z_tif = dir.join("z.tif");
    ok(&["transpose", &z, s(&z_tif)]);
    assert_eq!(read_file(&z_tif).unwrap().shape(), &[3, 2]);
}

// Item 15: messages speak the command line's language and name what was wrong.
#[test]
fn messages_name_what_was_wrong_in_the_users_terms() {
    let dir = scratch("messages");
    let x = npy(&dir, "x.npy", floats(&[1.0; 6], &[2, 3]));
    // No library names; the filter as the user spelled it.
    let e = fails(&["convolve", &x, s(&dir.join("y.npy")), "--kernel", "gaussian:-1"], 1);
    assert!(e.contains("gaussian:-1") && !e.contains("Filter::"), "{e}");
    // --device is not CLIPER_DEVICE; no device matching is the device failing (exit 2, as docs/cli.md says).
    let e = fails(&["--device", "no-such-device-anywhere", "norm", &x], 2);
    assert!(e.contains("no-such-device-anywhere") && !e.contains("CLIPER_DEVICE") && e.lines().count() <= 2, "{e}");
    // A parent that is a file, said so.
    std::fs::write(dir.join("file"), b"").unwrap();
    let e = fails(&["convert", &x, s(&dir.join("file/y.npy"))], 1);
    assert!(e.contains("is a file, not a folder") && !e.contains("os error"), "{e}");
    // TOML mistakes on one line with their place.
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[input]\nx = \"x.npy\n").unwrap();
    let e = fails(&["run", s(&bad)], 1);
    assert!(e.contains("line 2, column") && e.lines().count() == 1, "{e}");
    // Numbers with their type's digits, never hundreds of zeros.
    let tiny = npy(&dir, "tiny.npy", floats(&[-3e-30], &[1]));
    assert_eq!(ok(&["norm", &tiny]), "norm = 3e-30\n");
    assert_eq!(ok(&["norm", &x]), format!("norm = {}\n", 6f32.sqrt()));
    // recon --json has the documented layout.
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["--json", "recon", "data/kspace.mat", s(&dir.join("r.npy"))])).unwrap();
    assert_eq!(json["runs"][0]["written"][0]["path"], s(&dir.join("r.npy")));
    assert!(json["device"].is_string() && json["recon"]["coils"].is_u64(), "{json}");
}

// Item 14: PoCL printed "N warnings generated." for each new kernel program (AVX ABI warnings about ulong8
// arguments of helper functions; `#pragma unroll` on loops of unknown trip count), which also broke the
// progress bar. With an empty program cache every program is compiled afresh: none may warn.
#[test]
fn kernel_programs_compile_without_warnings() {
    let dir = scratch("warnings");
    let cache = dir.join("pocl-cache");
    let x = npy(&dir, "x.npy", floats(&(0..35).map(|v| v as f32).collect::<Vec<_>>(), &[5, 7]));
    let runs: [Vec<String>; 5] = [
        vec!["demo".into(), "--out".into(), dir.join("demo").to_string_lossy().into_owned()],
        vec!["recon".into(), "data/kspace.mat".into(), dir.join("r.npy").to_string_lossy().into_owned()],
        vec!["matmul".into(), x.clone(), x.clone(), dir.join("m.npy").to_string_lossy().into_owned(), "--tb".into()],
        vec!["norm".into(), x.clone(), "-p".into(), "3".into(), "--axis".into(), "0".into()],
        vec!["dot".into(), x.clone(), x.clone()],
    ];
    for args in runs {
        let out = cliper().env("POCL_CACHE_DIR", &cache).env("POCL_KERNEL_CACHE", "0").args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(!stderr.contains("warning"), "{args:?} printed compiler warnings: {stderr}");
    }
}

// Never a panic: `cliper … | head` closes stdout early; the run ends quietly (exit 141, as after SIGPIPE).
#[test]
fn a_closed_stdout_ends_the_run_without_a_panic() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cliper"))
        .current_dir(root())
        .args(["info", "data/kspace.mat"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader is gone before the first line
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(141), "{stderr}");
}
