//! The medical formats as a user meets them on the command line: NIfTI, NRRD and MetaImage (and DICOM series,
//! in `dicom_series_…`) read by every command, filtered in millimetres, and written with the geometry that
//! makes the result overlay the scan — checked against nibabel, SimpleITK and scipy fixtures
//! (tests/fixtures/make_medical.py, make_itk.py, make_dicom.py).

mod common;
use cliper::{Geometry, HostArray, read_image, read_npy};
use common::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures").join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn geometry_of(path: &Path) -> Geometry {
    read_image(path).unwrap().geometry.unwrap_or_else(|| panic!("{} has no geometry", path.display()))
}

/// `a` and `b` put voxel `index_a` of one and `index_b` of the other at the same place, within `tol` mm.
fn same_place(a: &Geometry, index_a: [f64; 3], b: &Geometry, index_b: [f64; 3], tol: f64, what: &str) {
    let (p, q) = (a.position(index_a), b.position(index_b));
    assert!(p.iter().zip(q).all(|(x, y)| (x - y).abs() <= tol), "{what}: {p:?} vs {q:?}");
}

const CORNERS: [[f64; 3]; 3] = [[0.0, 0.0, 0.0], [4.0, 6.0, 8.0], [2.0, 3.0, 1.0]];

#[test]
fn a_nifti_volume_is_smoothed_in_millimetres_and_keeps_its_affine() {
    let dir = scratch("mm");
    let input = fixture("medical/aniso.nii.gz");
    let out = dir.join("smooth.nii.gz");
    ok(&["convolve", s(&input), s(&out), "--kernel", "gaussian:1.5mm", "--rank", "3", "--precision", "double"]);
    // scipy's gaussian_filter with sigma = 1.5 mm / (0.7, 1.1, 2.5) mm: the same float64 sums.
    close(&f32s(&out), &f32s(&fixture("medical/aniso_gaussian_1.5mm.npy")), 1e-12, "gaussian:1.5mm");
    // The file says where its voxels are: the input's affine (nibabel's, through float32 header fields).
    let affine: Vec<Vec<f64>> =
        serde_json::from_str(&std::fs::read_to_string(fixture("medical/aniso_affine.json")).unwrap()).unwrap();
    let written = geometry_of(&out).affine();
    for (r, row) in affine.iter().take(3).enumerate() {
        for (c, &want) in row.iter().enumerate() {
            assert!((written[r][c] - want).abs() < 1e-5, "affine[{r}][{c}] {} vs nibabel {want}", written[r][c]);
        }
    }
    // `info` shows it, in words and in JSON.
    let text = ok(&["info", s(&out)]);
    assert!(text.contains("spacing 2.5 × 1.1 × 0.7 mm (slice × row × column)"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&ok(&["--json", "info", s(&out)])).unwrap();
    assert!((json["geometry"]["affine"][0][3].as_f64().unwrap() - affine[0][3]).abs() < 1e-5, "{json}");
    // Sigmas in voxels per axis are the same filter (up to the file's float32 voxel sizes: 0.7 is stored as
    // 0.69999999, which moves the sums by 1e-8).
    let voxels = dir.join("voxels.nii.gz");
    let sigmas = format!("gaussian:{},{},{}", 1.5 / 2.5, 1.5 / 1.1, 1.5 / 0.7);
    ok(&["convolve", s(&input), s(&voxels), "--kernel", &sigmas, "--rank", "3", "--precision", "double"]);
    close(&f32s(&voxels), &f32s(&out), 1e-6, "per-axis sigmas");
}

#[test]
fn pad_transpose_and_valid_outputs_move_the_geometry_with_the_voxels() {
    let dir = scratch("moves");
    let input = fixture("medical/aniso.nii.gz");
    let g = geometry_of(&input);
    // Float32 header fields: positions come back within a few µm of tens of mm.
    let tol = 1e-4;
    let padded = dir.join("padded.nii.gz");
    ok(&["pad", s(&input), s(&padded), "--width", "1:0,2:3,0:4", "--mode", "edge"]);
    let p = geometry_of(&padded);
    for [k, j, i] in CORNERS {
        same_place(&p, [k + 1.0, j + 2.0, i], &g, [k, j, i], tol, "pad");
    }
    let transposed = dir.join("transposed.nii.gz");
    ok(&["transpose", s(&input), s(&transposed)]);
    let t = geometry_of(&transposed);
    for [k, j, i] in CORNERS {
        same_place(&t, [k, i, j], &g, [k, j, i], tol, "transpose");
    }
    let valid = dir.join("valid.nii.gz");
    ok(&["convolve", s(&input), s(&valid), "--kernel", "box:3", "--rank", "3", "--output", "valid"]);
    let v = geometry_of(&valid);
    same_place(&v, [0.0; 3], &g, [1.0; 3], tol, "valid");
    // The values moved with the geometry: padded voxel (k + 1, j + 2, i) is input voxel (k, j, i).
    let (pv, gv) = (f32s(&padded), f32s(&input));
    assert_eq!(pv[[1, 2, 0]], gv[[0, 0, 0]]);
    assert_eq!(pv[[5, 8, 8]], gv[[4, 6, 8]]);
}

#[test]
fn nrrd_and_metaimage_files_convert_to_nifti_with_their_geometry() {
    let dir = scratch("itk");
    for name in ["oblique_i16.nrrd", "oblique_i16_zlib.mha", "skewed_f64_big.nhdr"] {
        let input = fixture(&format!("itk/{name}"));
        let out = dir.join(format!("{name}.nii.gz"));
        ok(&["convert", s(&input), s(&out)]);
        let (a, b) = (read_image(&input).unwrap(), read_image(&out).unwrap());
        assert_eq!(a.array, b.array, "{name}: values and type");
        let (ga, gb) = (a.geometry.unwrap(), b.geometry.unwrap());
        for index in CORNERS {
            same_place(&gb, index, &ga, index, 1e-4, name);
        }
        let (stem, ext) = name.rsplit_once('.').unwrap();
        assert_eq!(b.array, read_npy(fixture(&format!("itk/{stem}_{ext}.npy"))).unwrap(), "{name}: SimpleITK's values");
    }
}

#[test]
fn batches_and_pipelines_take_medical_files() {
    let dir = scratch("batch");
    let inputs = dir.join("in");
    std::fs::create_dir_all(&inputs).unwrap();
    std::fs::copy(fixture("medical/aniso.nii.gz"), inputs.join("aniso.nii.gz")).unwrap();
    std::fs::copy(fixture("itk/oblique_i16.mha"), inputs.join("oblique.mha")).unwrap();
    let template = dir.join("out/{stem}_smooth.nii.gz");
    ok(&["convolve", s(&inputs), s(&template), "--kernel", "gaussian:1mm", "--rank", "3"]);
    for (stem, source) in [("aniso", "aniso.nii.gz"), ("oblique", "oblique.mha")] {
        let out = dir.join(format!("out/{stem}_smooth.nii.gz"));
        let (g, want) = (geometry_of(&out), geometry_of(&inputs.join(source)));
        same_place(&g, [1.0, 2.0, 3.0], &want, [1.0, 2.0, 3.0], 1e-4, stem);
    }
    // A pipeline file: a NIfTI input, a Gaussian in millimetres, a NIfTI output — as the subcommand.
    let pipeline = dir.join("smooth.toml");
    std::fs::write(
        &pipeline,
        format!(
            "precision = \"double\"\n[input]\nscan = \"{}\"\n[[step]]\nop = \"convolve\"\nin = \"scan\"\nout = \"smooth\"\n\
             kernel = \"gaussian:1.5mm\"\nrank = 3\n[output]\nsmooth = \"smooth.nii.gz\"\n",
            s(&fixture("medical/aniso.nii.gz"))
        ),
    )
    .unwrap();
    ok(&["run", s(&pipeline)]);
    close(&f32s(&dir.join("smooth.nii.gz")), &f32s(&fixture("medical/aniso_gaussian_1.5mm.npy")), 1e-12, "pipeline");
}

#[test]
fn broken_medical_files_are_refused_naming_them_and_leave_no_output() {
    let dir = scratch("broken");
    let bytes = std::fs::read(fixture("medical/aniso.nii.gz")).unwrap();
    let truncated = dir.join("truncated.nii.gz");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let out = dir.join("out.nii.gz");
    let e = fails(&["convolve", s(&truncated), s(&out), "--kernel", "gaussian:1mm", "--rank", "3"], 1);
    assert!(e.contains("truncated.nii.gz") && e.lines().count() <= 2, "{e}");
    assert!(!out.exists());
    // Millimetres on a filter spanning a non-spatial axis, and a mm sigma list of the wrong length.
    let input = fixture("medical/aniso.nii.gz");
    let e = fails(&["convolve", s(&input), s(&out), "--kernel", "gaussian:1mm,2mm", "--rank", "3"], 1);
    assert!(e.contains("2 sigmas") && e.contains("3 axes"), "{e}");
    // Formats cliper reads but the command line does not write say so, and what to write instead.
    for ext in ["dcm", "nrrd", "mha"] {
        let out = dir.join(format!("out.{ext}"));
        let e = fails(&["convert", s(&input), s(&out)], 1);
        assert!(e.contains(".nii.gz") && e.contains(&format!("out.{ext}")) && e.lines().count() == 1, "{e}");
        assert!(!out.exists());
    }
    // Geometry needs a file that holds it: NPY output keeps the values only, and says nothing false.
    let npy = dir.join("values.npy");
    ok(&["convert", s(&input), s(&npy)]);
    assert!(read_image(&npy).unwrap().geometry.is_none());
    assert!(matches!(read_image(&npy).unwrap().array, HostArray::F32(_)));
    assert!(!out.exists());
}

#[test]
fn dicom_series_folders_are_inputs_with_their_tags_and_geometry() {
    let dir = scratch("series");
    let series = fixture("dicom/series");
    // `info` on a series: the tags a researcher checks, and the geometry.
    let text = ok(&["info", s(&series)]);
    assert!(text.contains("shape [6,11,9] i16") && text.contains("6 file(s)"), "{text}");
    assert!(text.contains("DICOM: CT series") && text.contains("Explicit VR Little Endian"), "{text}");
    assert!(text.contains("geometry: spacing 2.5 × "), "{text}");
    let json: serde_json::Value = serde_json::from_str(&ok(&["--json", "info", s(&series)])).unwrap();
    assert_eq!(json["dicom"]["modality"], "CT");
    assert_eq!(json["dicom"]["files"], 6);
    // Series → NIfTI, as dcm2niix: the values pydicom gives and every slice where its ImagePositionPatient says.
    let nifti = dir.join("series.nii.gz");
    ok(&["convert", s(&series), s(&nifti)]);
    let image = read_image(&nifti).unwrap();
    let hu = f32s(&fixture("medical/series_hu.npy"));
    assert_eq!(image.array.to_elements::<f64>(&nifti).unwrap(), hu, "HU after rescale, slices in position order");
    let references: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("dicom/references.json")).unwrap()).unwrap();
    let g = image.geometry.unwrap();
    for (k, lps) in references["series"]["positions_lps"].as_array().unwrap().iter().enumerate() {
        let lps: Vec<f64> = lps.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let ras = [-lps[0], -lps[1], lps[2]];
        let p = g.position([k as f64, 0.0, 0.0]);
        assert!(p.iter().zip(ras).all(|(a, b)| (a - b).abs() < 1e-5), "slice {k}: {p:?} vs pydicom {ras:?}");
    }
    // A pattern naming the slices' files is the same series (the shell leaves a quoted pattern to cliper).
    let from_glob = dir.join("glob.nii.gz");
    let pattern = fixture("dicom/series").join("*.dcm");
    ok(&["convert", s(&pattern), s(&from_glob)]);
    assert_eq!(read_image(&from_glob).unwrap(), read_image(&nifti).unwrap());
    assert!(ok(&["info", s(&pattern)]).contains("6 file(s)"));
    // Smoothing in millimetres straight from the series equals scipy on pydicom's array.
    let smooth = dir.join("smooth.nii.gz");
    ok(&["convolve", s(&series), s(&smooth), "--kernel", "gaussian:1.5mm", "--rank", "3", "--precision", "double"]);
    close(&f32s(&smooth), &f32s(&fixture("medical/series_gaussian_1.5mm.npy")), 1e-9, "series gaussian:1.5mm");
}

#[test]
fn a_folder_of_series_folders_is_a_batch_and_bad_series_are_named() {
    let dir = scratch("series-batch");
    let batch = dir.join("study");
    for (name, from) in [("synthetic", "tests/fixtures/dicom/series"), ("phantom", "data/ct_series")] {
        let to = batch.join(name);
        std::fs::create_dir_all(&to).unwrap();
        for f in std::fs::read_dir(root().join(from)).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
        }
    }
    let template = dir.join("out/{stem}.nii.gz");
    ok(&["convert", s(&batch), s(&template)]);
    assert_eq!(read_image(dir.join("out/phantom.nii.gz")).unwrap().array.shape(), &[24, 64, 64]);
    assert_eq!(read_image(dir.join("out/synthetic.nii.gz")).unwrap().array.shape(), &[6, 11, 9]);
    // Two series in one folder: refused, listing both; a missing slice: the two files around the gap.
    let out = dir.join("bad.nii.gz");
    let e = fails(&["convert", s(&fixture("dicom/mixed")), s(&out)], 1);
    assert!(e.contains("series") && e.matches("1.2.").count() >= 2, "{e}");
    let e = fails(&["convert", s(&fixture("dicom/missing_slice")), s(&out)], 1);
    assert!(e.contains("a.dcm") && e.contains("b.dcm") && e.contains("missing"), "{e}"); // named by position, not file order
    assert!(!out.exists());
}

/// `cliper recon --method cg-sense --scaling 1` on BART's own fixtures (tests/fixtures/bart, written by bart 0.8.00
/// with tests/fixtures/bart/make.sh): the image equals `bart pics -l2 -r 0.01 -i 30 -w 1` within 1e-3 NRMSE; maps from
/// their own file (`--maps`) give the same; without maps the refusal says how to give them.
#[test]
fn recon_cg_sense_matches_bart_pics() {
    let dir = scratch("cg-sense");
    let nrmse = |file: &std::path::Path| bart_nrmse(file, "pics_l2");
    let out = dir.join("cg.cfl");
    let said = ok(&[
        "recon",
        "tests/fixtures/bart/phantom8.cfl",
        out.to_str().unwrap(),
        "--method",
        "cg-sense",
        "--lambda",
        "0.01",
        "--iters",
        "30",
        "--scaling",
        "1",
    ]);
    assert!(said.contains("relative residual"), "{said}");
    let e = nrmse(&out);
    assert!(e < 1e-3, "cg-sense against bart pics: {e:e}");
    // The same k-space without the maps beside it, the maps given by --maps.
    for suffix in ["", "_mask"] {
        for ext in ["cfl", "hdr"] {
            std::fs::copy(
                root().join(format!("tests/fixtures/bart/phantom8{suffix}.{ext}")),
                dir.join(format!("k{suffix}.{ext}")),
            )
            .unwrap();
        }
    }
    let out2 = dir.join("cg2.cfl");
    let k = dir.join("k.cfl");
    let args = ["recon", k.to_str().unwrap(), out2.to_str().unwrap(), "--method", "cg-sense", "--lambda", "0.01"];
    let refused = fails(&args, 1);
    assert!(refused.contains("no sensitivity maps") && refused.contains("--maps"), "{refused}");
    assert_eq!(refused.lines().count(), 1, "{refused}");
    ok(&[&args[..], &["--iters", "30", "--scaling", "1", "--maps", "tests/fixtures/bart/phantom8_sens.cfl"]].concat());
    assert!(nrmse(&out2) < 1e-3);
    std::fs::remove_dir_all(&dir).ok();
}

/// `cliper recon --method l1-wavelet --scaling 1` against `bart pics -l1 -r 5 -i 30 -w 1` (and `-n` with
/// `--no-cycle-spinning`) on BART's fixtures: within 1e-3 NRMSE.
#[test]
fn recon_l1_wavelet_matches_bart_pics() {
    let dir = scratch("l1-wavelet");
    for (flag, fixture) in [(None, "pics_l1"), (Some("--no-cycle-spinning"), "pics_l1_n")] {
        let out = dir.join(format!("{fixture}.cfl"));
        let mut args = vec![
            "recon",
            "tests/fixtures/bart/phantom8.cfl",
            out.to_str().unwrap(),
            "--method",
            "l1-wavelet",
            "--lambda",
            "5",
            "--iters",
            "30",
            "--scaling",
            "1",
        ];
        args.extend(flag);
        let said = ok(&args);
        assert!(said.contains("30 FISTA iterations"), "{said}");
        let e = bart_nrmse(&out, fixture);
        assert!(e < 1e-3, "{fixture}: {e:e}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A BART CFL file's values, in the file's dims in row-major order.
fn read_cfl_values(p: &std::path::Path) -> Vec<num_complex::Complex64> {
    cliper::read_cfl(p).unwrap().to_elements::<num_complex::Complex64>(p).unwrap().iter().copied().collect()
}

/// An NPY file's complex values in row-major order.
fn npy_values(p: &std::path::Path) -> Vec<num_complex::Complex64> {
    read_npy(p).unwrap().to_elements::<num_complex::Complex64>(p).unwrap().iter().copied().collect()
}

/// |ours − bart| / |bart| between an image file and the BART fixture `tests/fixtures/bart/FIXTURE.cfl`.
fn bart_nrmse(file: &std::path::Path, fixture: &str) -> f64 {
    let read = read_cfl_values;
    let (ours, bart) = (read(file), read(&root().join(format!("tests/fixtures/bart/{fixture}.cfl"))));
    assert_eq!(ours.len(), bart.len());
    let diff: f64 = ours.iter().zip(&bart).map(|(a, b)| (a - b).norm_sqr()).sum();
    (diff / bart.iter().map(|v| v.norm_sqr()).sum::<f64>()).sqrt()
}

/// `cliper recon --method tv --scaling 1` against `bart pics -R T:7:0:10 -i 50 -w 1`: within 1e-3 NRMSE.
#[test]
fn recon_tv_matches_bart_pics() {
    let dir = scratch("tv");
    let out = dir.join("tv.cfl");
    let said = ok(&[
        "recon",
        "tests/fixtures/bart/phantom8.cfl",
        out.to_str().unwrap(),
        "--method",
        "tv",
        "--lambda",
        "10",
        "--iters",
        "50",
        "--scaling",
        "1",
    ]);
    assert!(said.contains("ADMM until 50 CG iterations"), "{said}");
    let e = bart_nrmse(&out, "pics_tv");
    assert!(e < 1e-3, "{e:e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `cliper recon` without --scaling scales the data as `bart pics` without -w does: the three iterative methods
/// match pics_l2_scaled, pics_l1_scaled and pics_tv_scaled (BART's estimate, 1419.36 here, as it printed it) within
/// the 1e-3 NRMSE of the -w 1 tests; `--scaling` with that value gives the same image, and `--rescale` BART's -S.
#[test]
fn recon_scales_the_data_as_bart_pics_does_by_default() {
    let dir = scratch("bart-scaling");
    let runs = [
        ("cg-sense", "0.01", "30", "pics_l2_scaled"),
        ("l1-wavelet", "0.005", "30", "pics_l1_scaled"),
        ("tv", "0.01", "50", "pics_tv_scaled"),
    ];
    for (method, lambda, iters, fixture) in runs {
        let out = dir.join(format!("{fixture}.cfl"));
        let args = ["--method", method, "--lambda", lambda, "--iters", iters];
        let said = ok(&[&["recon", "tests/fixtures/bart/phantom8.cfl", s(&out)][..], &args].concat());
        let e = bart_nrmse(&out, fixture);
        eprintln!("{method}: {e:e} against {fixture}");
        assert!(e < 1e-3, "{method} with the default scaling against {fixture}: {e:e}\n{said}");
        assert!(said.contains("divided by 1419.35") && said.contains("[24, 24] at [36, 36]"), "{said}");
    }
    let printed = std::fs::read_to_string(root().join("tests/fixtures/bart/pics_scaling.txt")).unwrap();
    assert!(printed.contains("Inverse scaling of the data: 1419.35"), "{printed}");
    // The estimate given by hand (BART's -w 1419.358765) is the same reconstruction.
    let given = dir.join("given.cfl");
    let l1 = ["--method", "l1-wavelet", "--lambda", "0.005", "--iters", "30"];
    ok(&[&["recon", "tests/fixtures/bart/phantom8.cfl", s(&given), "--scaling", "1419.358765"][..], &l1].concat());
    assert!(bart_nrmse(&given, "pics_l1_scaled") < 1e-3);
    let rescaled = dir.join("rescaled.cfl");
    ok(&[&["recon", "tests/fixtures/bart/phantom8.cfl", s(&rescaled), "--rescale"][..], &l1].concat());
    let e = bart_nrmse(&rescaled, "pics_l1_rescaled");
    assert!(e < 1e-3, "--rescale against pics -S: {e:e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// l1-wavelet and tv without --lambda would run unregularised (λ 0); they are refused in one line naming the flag,
/// as are a scaling that is not positive and --scaling on a direct method; nothing is written.
#[test]
fn recon_refuses_a_missing_lambda_and_a_bad_scaling() {
    let dir = scratch("recon-refusals");
    let out = dir.join("image.cfl");
    let k = "tests/fixtures/bart/phantom8.cfl";
    for method in ["l1-wavelet", "tv"] {
        let e = fails(&["recon", k, s(&out), "--method", method], 1);
        assert!(e.contains("needs --lambda") && e.contains(method) && e.lines().count() == 1, "{method}: {e}");
    }
    let e = fails(&["recon", k, s(&out), "--method", "cg-sense", "--scaling", "0"], 1);
    assert!(e.contains("--scaling 0") && e.lines().count() == 1, "{e}");
    let e = fails(&["recon", k, s(&out), "--method", "sense", "--scaling", "2"], 1);
    assert!(e.contains("--scaling") && e.contains("sense") && e.lines().count() == 1, "{e}");
    assert!(!out.exists() && !dir.join("image.hdr").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// `cliper ecalib` writes ESPIRiT maps equal to `bart ecalib -m1`'s (tests/fixtures/bart/phantom8_sens, from the
/// same undersampled data: the file's mask is applied first) within 1e-3, in BART's layout; `recon --maps espirit`
/// then gives bart pics -l2's image.
#[test]
fn ecalib_matches_bart_and_feeds_recon() {
    let dir = scratch("ecalib");
    let maps = dir.join("maps.cfl");
    let said = ok(&["ecalib", "tests/fixtures/bart/phantom8.cfl", maps.to_str().unwrap()]);
    assert!(said.contains("47 of 288 kernels"), "{said}");
    let e = bart_nrmse(&maps, "phantom8_sens");
    assert!(e < 1e-3, "maps: {e:e}");
    let out = dir.join("image.cfl");
    cg_sense_with_maps(&out, "espirit");
    let e = bart_nrmse(&out, "pics_l2");
    assert!(e < 1e-3, "image: {e:e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `cliper recon` of the phantom by CG-SENSE (λ 0.01, 30 iterations, no scaling, as pics_l2) with maps `maps` into
/// `out`.
fn cg_sense_with_maps(out: &std::path::Path, maps: &str) {
    let args = ["--method", "cg-sense", "--maps", maps, "--lambda", "0.01", "--iters", "30", "--scaling", "1"];
    ok(&[&["recon", "tests/fixtures/bart/phantom8.cfl", out.to_str().unwrap()][..], &args].concat());
}

/// `cliper ecalib --method walsh` writes unit-vector maps that agree with `bart ecalib -m1`'s up to a per-pixel
/// phase where BART keeps the pixel; `recon --maps walsh` then gives a CG-SENSE image closer to the fully sampled
/// one than the zero-filled image is.
#[test]
fn walsh_maps_from_the_cli_feed_recon() {
    let dir = scratch("walsh");
    let maps = dir.join("walsh.cfl");
    let said = ok(&["ecalib", "tests/fixtures/bart/phantom8.cfl", maps.to_str().unwrap(), "--method", "walsh"]);
    assert!(said.contains("Walsh: images of the [24, 24] calibration block"), "{said}");
    let read = read_cfl_values;
    let (ours, bart) = (read(&maps), read(&root().join("tests/fixtures/bart/phantom8_sens.cfl")));
    // read_cfl gives BART's dims (x, y, 1, coil) in row-major order: the coil is the fastest index.
    let mut overlaps: Vec<f64> = (0..96 * 96)
        .filter(|&p| (0..8).map(|c| bart[p * 8 + c].norm_sqr()).sum::<f64>() > 0.5)
        .map(|p| (0..8).map(|c| ours[p * 8 + c] * bart[p * 8 + c].conj()).sum::<num_complex::Complex64>().norm())
        .collect();
    overlaps.sort_by(f64::total_cmp);
    assert!(overlaps[overlaps.len() / 2] > 0.99, "median overlap {}", overlaps[overlaps.len() / 2]);
    let out = dir.join("image.cfl");
    cg_sense_with_maps(&out, "walsh");
    // Against the fully sampled SENSE image (BART's maps), magnitudes, each image scaled to fit it best (the
    // reconstructions' scales differ): closer than the zero-filled image, as the issue asks of every method.
    let (truth, zero_filled) = (dir.join("truth.cfl"), dir.join("zf.cfl"));
    ok(&["recon", "tests/fixtures/bart/phantom8.cfl", truth.to_str().unwrap()]);
    ok(&["recon", "tests/fixtures/bart/phantom8.cfl", zero_filled.to_str().unwrap(), "--apply-mask"]);
    let magnitude = |p: &std::path::Path| read(p).iter().map(|v| v.norm()).collect::<Vec<f64>>();
    let truth = magnitude(&truth);
    let error = |p: &std::path::Path| {
        let a = magnitude(p);
        let scale = a.iter().zip(&truth).map(|(x, y)| x * y).sum::<f64>() / a.iter().map(|x| x * x).sum::<f64>();
        let diff: f64 = a.iter().zip(&truth).map(|(x, y)| (scale * x - y).powi(2)).sum();
        (diff / truth.iter().map(|y| y * y).sum::<f64>()).sqrt()
    };
    let (e, zf) = (error(&out), error(&zero_filled));
    eprintln!(
        "walsh: median overlap {}; to the fully sampled image {e:.3}, zero-filled {zf:.3}",
        overlaps[overlaps.len() / 2]
    );
    assert!(e < zf, "cg-sense with walsh maps {e:.3}, zero-filled {zf:.3}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `cliper ecalib` refuses, in one line naming what was wrong and writing nothing, k-space it cannot estimate maps
/// of: a 3-D volume (both methods name the shape) and a fully sampled centre smaller than ESPIRiT's kernel.
#[test]
fn ecalib_refusals_name_the_shape_and_leave_no_output() {
    let dir = scratch("ecalib-refusals");
    let volume = dir.join("volume.cfl");
    // write_cfl takes BART's dims: (x, y, z, coils) = (8, 8, 4, 2), one 3-D frame; cliper reads [2, 8, 8, 4].
    let values = ndarray::ArrayD::from_elem(ndarray::IxDyn(&[8, 8, 4, 2]), num_complex::Complex32::new(1.0, 0.0));
    cliper::write_cfl(&volume, &cliper::HostArray::C32(values)).unwrap();
    // ESPIRiT takes 3-D k-space, but not axes smaller than its kernels' grid (as bart ecalib); Walsh's is 2-D only.
    for (method, expected) in
        [("espirit", "an axis of 8 is smaller than ESPIRiT's grid of 12"), ("walsh", "[2, 8, 8, 4]")]
    {
        let out = dir.join(format!("{method}.cfl"));
        let e = fails(&["ecalib", s(&volume), s(&out), "--method", method], 1);
        assert!(e.contains(expected) && e.lines().count() == 1, "{method}: {e}");
        assert!(!out.exists() && !dir.join(format!("{method}.hdr")).exists(), "{method}");
    }
    // 2 coils of 32² (BART's dims (32, 32, 1, 2)), only a 4 × 4 centre measured.
    let mut small = ndarray::ArrayD::from_elem(ndarray::IxDyn(&[32, 32, 1, 2]), num_complex::Complex32::new(0.0, 0.0));
    small.indexed_iter_mut().for_each(|(i, v)| {
        if (14..18).contains(&i[0]) && (14..18).contains(&i[1]) {
            *v = num_complex::Complex32::new(1.0, 0.5);
        }
    });
    let centre = dir.join("centre.cfl");
    cliper::write_cfl(&centre, &cliper::HostArray::C32(small)).unwrap();
    let out = dir.join("maps.cfl");
    let e = fails(&["ecalib", s(&centre), s(&out)], 1);
    assert!(e.contains("4 × 4") && e.contains("6 × 6") && e.lines().count() == 1, "{e}");
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// The NIfTI-1 header fields a writer chooses, read straight from the bytes of an uncompressed `.nii`.
#[derive(Debug, PartialEq)]
struct NiftiFields {
    datatype: i16,
    bitpix: i16,
    slope: f32,
    inter: f32,
    qform_code: i16,
    sform_code: i16,
}

fn nifti_fields(path: &Path) -> (NiftiFields, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    let i16_at = |at: usize| i16::from_le_bytes([bytes[at], bytes[at + 1]]);
    let f32_at = |at: usize| f32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let fields = NiftiFields {
        datatype: i16_at(70),
        bitpix: i16_at(72),
        slope: f32_at(112),
        inter: f32_at(116),
        qform_code: i16_at(252),
        sform_code: i16_at(254),
    };
    let data = bytes[f32_at(108) as usize..].to_vec();
    (fields, data)
}

/// With `CLIPER_KEEP_SCALED=DIR`, a copy of `file` as DIR/NAME.nii for `make_scaled.py --check DIR` (nibabel).
fn keep_for_nibabel(file: &Path, name: &str) {
    if let Some(dir) = std::env::var_os("CLIPER_KEEP_SCALED") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(file, Path::new(&dir).join(format!("{name}.nii"))).unwrap();
    }
}

#[test]
fn convert_and_transpose_keep_scaled_integers_and_the_transform_codes() {
    let dir = scratch("scaled");
    // nibabel's int16 with scl_slope 0.5, scl_inter −3 (sform code 2, qform code 0), make_nifti.py.
    let input = fixture("nifti/i16_scaled.nii");
    let (fields, stored) = nifti_fields(&input);
    assert_eq!((fields.datatype, fields.slope, fields.inter), (4, 0.5, -3.0));
    let out = dir.join("same.nii");
    let said = ok(&["convert", s(&input), s(&out)]);
    assert!(said.trim_end().ends_with("i16"), "the line names the type the file holds: {said}");
    let (written, data) = nifti_fields(&out);
    let want = NiftiFields { datatype: 4, bitpix: 16, slope: 0.5, inter: -3.0, qform_code: 0, sform_code: 2 };
    assert_eq!(written, want, "int16 and the scaling as dcm2niix keeps them, not float64");
    assert_eq!(data, stored, "the very integers the file stored");
    assert_eq!(read_image(&out).unwrap(), read_image(&input).unwrap(), "the same scaled values and affine");
    keep_for_nibabel(&out, "nifti_i16_scaled");
    // Reoriented (the last two axes swapped): the same integers, moved.
    let swapped = dir.join("swapped.nii");
    ok(&["transpose", s(&input), s(&swapped)]);
    let (written, _) = nifti_fields(&swapped);
    assert_eq!(written, want);
    let (image, t) = (read_image(&input).unwrap(), read_image(&swapped).unwrap());
    // k · 0.5 − 3 is an f32 for every stored k: the values read as f32 (nibabel's float64 values, to the bit).
    let (HostArray::F32(a), HostArray::F32(b)) = (&image.array, &t.array) else { panic!("{:?}", t.array.dtype()) };
    assert_eq!(b, &a.view().permuted_axes(vec![0, 2, 1]), "transposed values, exactly");
    keep_for_nibabel(&swapped, "nifti_transposed");
    // Values that are no longer stored integers under the scaling are written as they are.
    let halved = dir.join("halved.nii");
    ok(&["expression", s(&input), s(&halved), "--expr", "a / 3"]);
    // A 16-bit scan computes in f32 under `--precision auto` (docs/cli.md): float32, as a / 3 is not k · 0.5 − 3.
    assert_eq!(nifti_fields(&halved).0.datatype, 16, "float32: a / 3 is not k · 0.5 − 3");
    // --type decides when given.
    let typed = dir.join("typed.nii");
    ok(&["convert", s(&input), s(&typed), "--type", "f32"]);
    assert_eq!((nifti_fields(&typed).0.datatype, nifti_fields(&typed).0.slope), (16, 1.0));
    // qform code 1 and sform code 2 (nibabel's), kept.
    let codes = dir.join("codes.nii");
    ok(&["convert", s(&fixture("nifti/sform_not_qform.nii")), s(&codes)]);
    let (written, _) = nifti_fields(&codes);
    assert_eq!((written.qform_code, written.sform_code), (1, 2));
    assert_eq!(geometry_of(&codes).affine(), geometry_of(&fixture("nifti/sform_not_qform.nii")).affine());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_reduction_over_time_keeps_the_volumes_geometry() {
    let dir = scratch("reduce-time");
    // nibabel's 4-D float32 (7, 5, 3, 4)… here (4, 3, 2, 5): cliper's [5, 2, 3, 4], time on axis 0.
    let input = fixture("nifti/4d_msec.nii");
    let scan = geometry_of(&input);
    let summed = dir.join("sum.nii");
    ok(&["norm", s(&input), "-p", "1", "--axis", "0", "-o", s(&summed)]);
    let image = read_image(&summed).unwrap();
    assert_eq!(image.array.shape(), &[2, 3, 4]);
    let g = image.geometry.expect("the 3-D affine is carried");
    assert_eq!(g.affine(), scan.affine(), "the volume's voxels lie where the series' did");
    assert_eq!(g.time_step, None, "no time axis is left");
    assert_eq!(nifti_fields(&summed).0.sform_code, 2, "and its sform code");
    // A reduction along a spatial axis leaves no volume to place.
    let rows = dir.join("rows.nii");
    ok(&["norm", s(&input), "--axis", "-1", "-o", s(&rows)]);
    let (fields, _) = nifti_fields(&rows);
    assert_eq!((fields.qform_code, fields.sform_code), (0, 0));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn convert_keeps_the_stored_integers_of_a_scaled_dicom() {
    let dir = scratch("scaled-dicom");
    // pydicom's CT slice: int16 with RescaleSlope 0.25, RescaleIntercept −100 (make_scaled.py).
    let input = fixture("scaled/ct_quarter.dcm");
    let out = dir.join("ct.nii");
    ok(&["convert", s(&input), s(&out)]);
    let (written, data) = nifti_fields(&out);
    assert_eq!((written.datatype, written.bitpix, written.slope, written.inter), (4, 16, 0.25, -100.0));
    assert_eq!((written.qform_code, written.sform_code), (1, 1), "scanner coordinates, as dcm2niix writes");
    // The stored samples are the file's last 6 × 7 × 2 bytes (native little-endian Pixel Data).
    let dicom = std::fs::read(&input).unwrap();
    assert_eq!(data, dicom[dicom.len() - 84..], "the very integers the DICOM stored");
    let (nifti, scan) = (read_image(&out).unwrap(), read_image(&input).unwrap());
    assert_eq!(nifti.array.shape(), &[6, 7]);
    assert_eq!(nifti.array, scan.array, "the same float64 values");
    keep_for_nibabel(&out, "dicom_ct_quarter");
    std::fs::remove_dir_all(&dir).ok();
}

/// |a − b| / |b| over two value lists.
fn relative(a: &[num_complex::Complex64], b: &[num_complex::Complex64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let diff: f64 = a.iter().zip(b).map(|(x, y)| (x - y).norm_sqr()).sum();
    (diff / b.iter().map(|v| v.norm_sqr()).sum::<f64>()).sqrt()
}

/// `cliper nufft` on the files of tests/fixtures/bart_nufft (bart 0.8.00, make.sh there), in BART's layouts and
/// file names: forward within 2e-6 of `bart nufft -s` (the exact sum, unscaled there: divided by √N = 40 here) and
/// within 1e-2 of `bart nufft` (whose kernel errs by 6.8e-3); `--adjoint` within 3e-3 of `bart nufft -a` (BART's
/// own error 1.4e-3); `--inverse` (50 CG steps, λ 0, as `bart nufft -i`) within 5e-2 of the same steps in float64
/// with the exact sums (bart's own lands 0.16 from them: the unregularised iteration magnifies gridding errors,
/// and float32 rounding: ours measured 2.6e-2).
#[test]
fn nufft_matches_bart_nufft_in_bart_layouts() {
    let dir = scratch("nufft");
    let fixture = |name: &str| root().join(format!("tests/fixtures/bart_nufft/{name}"));
    let (traj, image, coil) = (fixture("traj"), fixture("image"), fixture("coil1"));
    let out = |name: &str| dir.join(name);
    let said = ok(&["nufft", s(&image), s(&out("fwd")), "--traj", s(&traj)]);
    assert!(said.contains("forward, 3280 points") && said.contains("[1, 80, 41, 1]"), "{said}");
    let fwd = read_cfl_values(&out("fwd.cfl"));
    let exact: Vec<_> = read_cfl_values(&fixture("nufft_dft.cfl")).iter().map(|v| v / 40.0).collect();
    assert!(relative(&fwd, &exact) < 2e-6, "forward against bart nufft -s: {:e}", relative(&fwd, &exact));
    assert!(relative(&fwd, &read_cfl_values(&fixture("nufft.cfl"))) < 1e-2);
    ok(&["nufft", s(&coil), s(&out("adj.cfl")), "--traj", s(&traj), "--adjoint", "--dims", "40:40:1"]);
    let e = relative(&read_cfl_values(&out("adj.cfl")), &read_cfl_values(&fixture("adjoint.cfl")));
    assert!(e < 3e-3, "adjoint against bart nufft -a: {e:e}");
    // Without --dims, BART's estimate (2⌈max |k|⌉ = 40 per axis) gives the same image.
    ok(&["nufft", s(&coil), s(&out("adj2")), "--traj", s(&traj), "--adjoint"]);
    assert_eq!(read_cfl_values(&out("adj2.cfl")), read_cfl_values(&out("adj.cfl")));
    ok(&["nufft", s(&coil), s(&out("inv")), "--traj", s(&traj), "--inverse"]);
    let exact_inverse: Vec<_> = read_npy(fixture("exact_inverse.npy"))
        .unwrap()
        .to_elements::<num_complex::Complex64>(Path::new("exact_inverse"))
        .unwrap()
        .iter()
        .copied()
        .collect();
    let e = relative(&read_cfl_values(&out("inv.cfl")), &exact_inverse);
    assert!(e < 5e-2, "inverse against the exact iteration: {e:e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Bad trajectories and mismatched files are refused in one line naming the file, and leave no output.
#[test]
fn nufft_refuses_bad_trajectories_naming_the_file() {
    let dir = scratch("nufft-bad");
    let fixture = |name: &str| root().join(format!("tests/fixtures/bart_nufft/{name}"));
    let (traj, image, coil) = (fixture("traj"), fixture("image"), fixture("coil1"));
    let out = dir.join("out.cfl");
    // An image given as the trajectory.
    let said = fails(&["nufft", s(&coil), s(&out), "--traj", s(&image), "--adjoint"], 1);
    assert!(said.contains("image.cfl") && said.contains("[3, samples") && said.lines().count() == 1, "{said}");
    // A NaN and a point far outside the band (cycles/FOV mistaken for radians × N, say).
    let mut values = read_cfl_values(&traj.with_extension("cfl"));
    for (at, value) in [(4, f64::NAN), (7, 900.0)] {
        let mut broken = values.clone();
        broken[at] = num_complex::Complex64::new(value, 0.0);
        let arr = cliper::ndarray::ArrayD::from_shape_vec(cliper::ndarray::IxDyn(&[3, 80, 41]), broken).unwrap();
        let bad = dir.join(format!("bad{at}.cfl"));
        cliper::write_cfl(&bad, &HostArray::C64(arr)).unwrap();
        let said = fails(&["nufft", s(&image), s(&out), "--traj", s(&bad)], 1);
        assert!(
            said.contains(&format!("bad{at}.cfl")) && said.contains("point") && said.lines().count() == 1,
            "{said}"
        );
    }
    values.truncate(3 * 80 * 40);
    // k-space of 41 spokes for a trajectory of 40.
    let arr = cliper::ndarray::ArrayD::from_shape_vec(cliper::ndarray::IxDyn(&[3, 80, 40]), values).unwrap();
    let short = dir.join("short.cfl");
    cliper::write_cfl(&short, &HostArray::C64(arr)).unwrap();
    let said = fails(&["nufft", s(&coil), s(&out), "--traj", s(&short), "--adjoint"], 1);
    assert!(said.contains("does not match the trajectory") && said.contains("[1, 80, 41]"), "{said}");
    assert!(!out.exists() && !dir.join("out.hdr").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// `cliper recon K OUT --traj T --maps S` (CG-SENSE with a trajectory) on the bart_nufft fixtures: in double
/// precision within 1e-5 of the same 30 iterations in float64 with the exact sums (scripts/bart/noncart_ref.py;
/// pics's scaling estimated from the adjoint image as pics does); in single precision within 5e-2 of both that and
/// `bart pics -t … -l2 -r 0.01 -i 30` (float32's drift over 30 iterations of this ill-conditioned system, 2.5e-2
/// measured, and BART's gridding error: pics itself sits 3.5e-2 from the exact iteration). Refusals name what
/// --traj does not take.
#[test]
fn recon_with_a_trajectory_matches_bart_pics_t() {
    let dir = scratch("recon-traj");
    let fixture = |name: &str| root().join(format!("tests/fixtures/bart_nufft/{name}"));
    let (traj, ksp, sens) = (fixture("traj"), fixture("ksp"), fixture("sens"));
    let npy = |p: &Path| npy_values(p);
    let common = ["--traj", s(&traj), "--maps", s(&sens), "--lambda", "0.01", "--iters", "30"];
    let double = dir.join("double.npy");
    let said = ok(&[&["recon", s(&ksp), s(&double)][..], &common, &["--precision", "double"]].concat());
    assert!(said.contains("3280 points, 4 coils") && said.contains("adjoint image"), "{said}");
    let e = relative(&npy(&double), &npy(&fixture("exact_cg_scaled.npy")));
    assert!(e < 1e-5, "double against the exact iteration: {e:e}");
    for (extra, bart, exact) in [(None, "pics_t_l2_scaled", "exact_cg_scaled"), (Some("1"), "pics_t_l2", "exact_cg")] {
        let out = dir.join(format!("{bart}.cfl"));
        let mut args = [&["recon", s(&ksp), s(&out)][..], &common].concat();
        if let Some(scaling) = extra {
            args.extend(["--scaling", scaling]);
        }
        ok(&args);
        let ours = read_cfl_values(&out);
        let (to_bart, to_exact) = (
            relative(&ours, &read_cfl_values(&fixture(&format!("{bart}.cfl")))),
            relative(&ours, &npy(&fixture(&format!("{exact}.npy")))),
        );
        assert!(
            to_bart < 5e-2 && to_exact < 5e-2,
            "{bart}: {to_bart:e} from pics, {to_exact:e} from the exact iteration"
        );
    }
    let out = dir.join("refused.cfl");
    let said = fails(&["recon", s(&ksp), s(&out), "--traj", s(&traj), "--method", "sense"], 1);
    assert!(said.contains("--method sense") && said.lines().count() == 1, "{said}");
    let said = fails(&["recon", s(&ksp), s(&out), "--traj", s(&traj)], 1);
    assert!(said.contains("--maps FILE"), "{said}");
    let said = fails(&["recon", s(&fixture("coil1")), s(&out), "--traj", s(&traj), "--maps", s(&sens)], 1);
    assert!(said.contains("4 coil maps for k-space of 1 coils"), "{said}");
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// `cliper recon K OUT --traj T --method rsos`: gridding (each coil's adjoint NUFFT of its samples weighted by
/// Pipe–Menon's density compensation, in grid cells) and the root sum of squares, on BART's estimate of the image
/// grid (40²), against the same in float64 with exact sums and SigPy's weights (noncart_ref.py, dcf.npy): within
/// 1e-5 in double and single precision (the NUFFT's tolerance 1e-6, ours against SigPy's weights 2e-7, float32's
/// rounding). It takes no maps or penalty options.
#[test]
fn recon_rsos_with_a_trajectory_is_gridding_with_pipe_menon_weights() {
    let dir = scratch("recon-traj-rsos");
    let fixture = |name: &str| root().join(format!("tests/fixtures/bart_nufft/{name}"));
    let (traj, ksp) = (fixture("traj"), fixture("ksp"));
    let exact: Vec<num_complex::Complex64> = npy_values(&fixture("exact_grid_rsos.npy"));
    for precision in ["double", "single"] {
        let out = dir.join(format!("{precision}.npy"));
        let said = ok(&["recon", s(&ksp), s(&out), "--traj", s(&traj), "--method", "rsos", "--precision", precision]);
        assert!(said.contains("gridding") && said.contains("[40, 40]"), "{said}");
        let ours: Vec<num_complex::Complex64> = read_npy(&out)
            .unwrap()
            .to_elements::<f64>(&out)
            .unwrap()
            .iter()
            .map(|&v| num_complex::Complex64::new(v, 0.0))
            .collect();
        let e = relative(&ours, &exact);
        assert!(e < 1e-5, "{precision}: gridding + RSoS against the exact float64 one {e:e}");
    }
    let out = dir.join("refused.npy");
    let said = fails(&["recon", s(&ksp), s(&out), "--traj", s(&traj), "--method", "rsos", "--lambda", "0.1"], 1);
    assert!(said.contains("gridding") && said.lines().count() == 1, "{said}");
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// `cliper recon --traj` with the ℓ1-wavelet and TV penalties on the bart_nufft fixtures (maps of unit
/// root-sum-of-squares, sens_n; pics's scaling estimated from the adjoint image): in double precision within 1e-5
/// of the float64 iterations with the exact sums (noncart_ref.py) for `--step 0.01` (pics -s 0.01), the default
/// step (0.95 over AᴴA's largest eigenvalue, pics -e: ours by 30 power steps, the reference exact) and tv; in single
/// precision within 1.5e-2 of `bart pics -t` (BART's gridding error, 3.8e-3 to 8.4e-3). Refusals: --step with tv, a
/// penalty without --lambda, a step that is not positive.
#[test]
fn recon_with_a_trajectory_and_a_penalty_matches_bart_pics_t() {
    let dir = scratch("recon-traj-penalty");
    let fixture = |name: &str| root().join(format!("tests/fixtures/bart_nufft/{name}"));
    let (traj, ksp, sens) = (fixture("traj"), fixture("ksp"), fixture("sens_n"));
    let npy = |name: &str| npy_values(&fixture(&format!("{name}.npy")));
    let common = ["--traj", s(&traj), "--maps", s(&sens), "--iters"];
    let cases: [(&[&str], &str, &str, f64); 3] = [
        (&["30", "--method", "l1-wavelet", "--lambda", "0.005", "--step", "0.01"], "exact_l1", "pics_t_l1", 1e-5),
        (&["30", "--method", "l1-wavelet", "--lambda", "0.005"], "exact_l1_e", "pics_t_l1_e", 1e-5),
        (&["50", "--method", "tv", "--lambda", "0.01"], "exact_tv", "pics_t_tv", 1e-5),
    ];
    for (extra, exact, bart, tolerance) in cases {
        let double = dir.join(format!("{exact}.npy"));
        let said = ok(&[&["recon", s(&ksp), s(&double)][..], &common, extra, &["--precision", "double"]].concat());
        assert!(said.contains("with a trajectory") && said.contains(extra[2]), "{said}");
        let e = relative(&npy_values(&double), &npy(exact));
        assert!(e < tolerance, "{exact}: double against the exact iteration {e:e}");
        let single = dir.join(format!("{bart}.cfl"));
        ok(&[&["recon", s(&ksp), s(&single)][..], &common, extra].concat());
        let e = relative(&read_cfl_values(&single), &read_cfl_values(&fixture(&format!("{bart}.cfl"))));
        assert!(e < 1.5e-2, "{bart}: single against bart pics -t {e:e}");
    }
    let out = dir.join("refused.cfl");
    let refusals: [(&[&str], &str); 3] = [
        (&["50", "--method", "tv", "--lambda", "0.01", "--step", "0.1"], "--step is FISTA's"),
        (&["30", "--method", "l1-wavelet"], "needs --lambda"),
        (&["30", "--method", "l1-wavelet", "--lambda", "0.005", "--step=0"], "--step 0: the step must be positive"),
    ];
    for (extra, expected) in refusals {
        let said = fails(&[&["recon", s(&ksp), s(&out)][..], &common, extra].concat(), 1);
        assert!(said.contains(expected) && said.lines().count() == 1, "{said}");
    }
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// `--kernel bart` (BART 0.8's own gridding) on the bart_nufft fixtures: `cliper nufft` forward and `--adjoint`
/// within 1e-4 of `bart nufft` / `bart nufft -a` (the library test measures 9e-7 and 3e-7), `--inverse` against
/// `bart nufft -i` (50 unregularised CG steps through the Toeplitz operator, float32 drift allowed: 1e-2), and
/// `cliper recon --traj --method l1-wavelet|tv` within 1e-4 / 5e-3 of `bart pics -t` (3.7e-6 and 1.4e-3 in the
/// library test on a CPU device); the ES kernel's results for comparison sit 3.8e-3 to 8.4e-3 away. Refusals: `--tolerance` with
/// `--kernel bart`, `--kernel` without `--traj`.
#[test]
fn barts_kernel_reproduces_bart_nufft_and_pics_t() {
    let dir = scratch("bart-kernel");
    let fixture = |name: &str| root().join(format!("tests/fixtures/bart_nufft/{name}"));
    let (traj, image, coil, ksp, sens) =
        (fixture("traj"), fixture("image"), fixture("coil1"), fixture("ksp"), fixture("sens_n"));
    let out = |name: &str| dir.join(name);
    let bart = ["--kernel", "bart"];
    let said = ok(&[&["nufft", s(&image), s(&out("fwd")), "--traj", s(&traj)][..], &bart].concat());
    assert!(said.contains("forward, 3280 points"), "{said}");
    let e = relative(&read_cfl_values(&out("fwd.cfl")), &read_cfl_values(&fixture("nufft.cfl")));
    assert!(e < 1e-4, "forward against bart nufft: {e:e}");
    ok(&[&["nufft", s(&coil), s(&out("adj")), "--traj", s(&traj), "--adjoint"][..], &bart].concat());
    let e = relative(&read_cfl_values(&out("adj.cfl")), &read_cfl_values(&fixture("adjoint.cfl")));
    assert!(e < 1e-4, "adjoint against bart nufft -a: {e:e}");
    ok(&[&["nufft", s(&coil), s(&out("inv")), "--traj", s(&traj), "--inverse"][..], &bart].concat());
    let e = relative(&read_cfl_values(&out("inv.cfl")), &read_cfl_values(&fixture("inverse.cfl")));
    eprintln!("inverse against bart nufft -i: {e:e}");
    assert!(e < 1e-2, "inverse against bart nufft -i: {e:e}");
    let common = ["--traj", s(&traj), "--maps", s(&sens), "--kernel", "bart", "--iters"];
    let cases: [(&[&str], &str, f64); 2] = [
        (&["30", "--method", "l1-wavelet", "--lambda", "0.005"], "pics_t_l1_e", 1e-4),
        // TV's ADMM x-update is a CG that drifts in float32 with the FFT's rounding (tests/bart/noncartesian.rs:
        // 1.8e-4 with the kernels' FFT, 1.4e-3 with rustfft on CPU devices), so the CG cases' bound.
        (&["50", "--method", "tv", "--lambda", "0.01"], "pics_t_tv", 5e-3),
    ];
    for (extra, bart_name, tolerance) in cases {
        let image = out(&format!("{bart_name}.cfl"));
        ok(&[&["recon", s(&ksp), s(&image)][..], &common, extra].concat());
        let e = relative(&read_cfl_values(&image), &read_cfl_values(&fixture(&format!("{bart_name}.cfl"))));
        assert!(e < tolerance, "{bart_name}: against bart pics -t {e:e}");
    }
    let refused = out("refused.cfl");
    let said =
        fails(&["nufft", s(&image), s(&refused), "--traj", s(&traj), "--kernel", "bart", "--tolerance", "1e-9"], 1);
    assert!(said.contains("tolerance 0.000000001 with kernel bart") && said.lines().count() == 1, "{said}");
    let said = fails(&["recon", s(&fixture("../bart/phantom8.cfl")), s(&refused), "--kernel", "bart"], 1);
    assert!(said.contains("--kernel bart is the NUFFT's") && said.lines().count() == 1, "{said}");
    assert!(!refused.exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// `cliper recon` of three frames (tests/fixtures/bart_frames: BART's TIME dimension, a line pattern per frame,
/// maps beside the k-space as ksp_sens): cg-sense, l1-wavelet and tv solve the frames as one problem, as `bart pics`
/// does, within 1e-5 of pics (the library test measures 2e-7–1.2e-6) after pics's sign (−1 on an axis of 38 ≡ 2
/// mod 4, docs/bart-semantics.md §2). A CFL image is written in BART's layout ([40, 38, 1, …, 3], frames at
/// dimension 10) so that bart reads it as pics's; an NPY image is [3, 40, 38].
#[test]
fn recon_of_frames_matches_bart_pics() {
    let dir = scratch("recon-frames");
    let fixture = |name: &str| root().join(format!("tests/fixtures/bart_frames/{name}"));
    let ksp = fixture("ksp");
    let cases: [(&[&str], &str); 3] = [
        (&["--method", "cg-sense", "--lambda", "0.01", "--iters", "30"], "pics_l2"),
        (&["--method", "l1-wavelet", "--lambda", "0.005", "--iters", "30"], "pics_l1"),
        (&["--method", "tv", "--lambda", "0.01", "--iters", "50"], "pics_tv"),
    ];
    for (extra, bart) in cases {
        let out = dir.join(format!("{bart}.cfl"));
        let said = ok(&[&["recon", s(&ksp), s(&out)][..], extra].concat());
        assert!(said.contains("wrote image [3, 40, 38]"), "{said}");
        let header = std::fs::read_to_string(out.with_extension("hdr")).unwrap();
        assert!(header.contains("40 38 1 1 1 1 1 1 1 1 3"), "{header}");
        let want: Vec<_> = read_cfl_values(&fixture(&format!("{bart}.cfl"))).iter().map(|v| -v).collect();
        let e = relative(&read_cfl_values(&out), &want);
        assert!(e < 1e-5, "{bart}: {e:e} from bart pics");
    }
    let npy = dir.join("l2.npy");
    ok(&[&["recon", s(&ksp), s(&npy)][..], cases[0].0].concat());
    assert_eq!(read_npy(&npy).unwrap().shape(), &[3, 40, 38]);
    std::fs::remove_dir_all(&dir).ok();
}

/// `cliper recon --traj` of three frames, each with its own golden-angle spokes (tests/fixtures/bart_nufft_frames:
/// `bart traj -t 3`, BART's TIME dimension 10), solved as one problem as `bart pics -t` does: with `--kernel bart`
/// within 1e-3 of pics (measured 6.2e-5 CG, 1.0e-4 ℓ1 with -e, 1e-6 TV); with the default kernel within 5e-2 (BART's
/// own gridding error: 3.3e-2, 9.6e-3, 3.7e-3). The image is written back with its frames at dimension 10; gridding
/// (`--method rsos`) gives one image per frame. Refusals: a trajectory with a different number of frames.
#[test]
fn recon_of_non_cartesian_frames_matches_bart_pics_t() {
    let dir = scratch("recon-traj-frames");
    let fixture = |name: &str| root().join(format!("tests/fixtures/bart_nufft_frames/{name}"));
    let (traj, ksp, sens) = (fixture("traj"), fixture("ksp"), fixture("sens_n"));
    let common = ["--traj", s(&traj), "--maps", s(&sens)];
    let cases: [(&[&str], &str, f64, f64); 3] = [
        (&["--lambda", "0.01", "--iters", "30"], "pics_l2", 1e-3, 5e-2),
        (&["--method", "l1-wavelet", "--lambda", "0.005", "--iters", "30"], "pics_l1", 1e-3, 5e-2),
        (&["--method", "tv", "--lambda", "0.01", "--iters", "50"], "pics_tv", 1e-3, 5e-2),
    ];
    for (extra, bart, tight, loose) in cases {
        let want = read_cfl_values(&fixture(&format!("{bart}.cfl")));
        for (kernel, tolerance) in [("bart", tight), ("es", loose)] {
            let out = dir.join(format!("{bart}_{kernel}.cfl"));
            let said = ok(&[&["recon", s(&ksp), s(&out)][..], &common, extra, &["--kernel", kernel]].concat());
            assert!(said.contains("3 frames along BART dimension 10") && said.contains("[3, 32, 32]"), "{said}");
            let header = std::fs::read_to_string(out.with_extension("hdr")).unwrap();
            assert!(header.contains("32 32 1 1 1 1 1 1 1 1 3"), "{header}");
            let e = relative(&read_cfl_values(&out), &want);
            assert!(e < tolerance, "{bart} --kernel {kernel}: {e:e} from bart pics -t");
        }
    }
    let grid = dir.join("grid.npy");
    let said = ok(&["recon", s(&ksp), s(&grid), "--traj", s(&traj), "--method", "rsos"]);
    assert!(said.contains("3 frames"), "{said}");
    assert_eq!(read_npy(&grid).unwrap().shape(), &[3, 32, 32]);
    // A trajectory of two frames for k-space of three is refused naming both counts, and nothing is written.
    let two = dir.join("traj2.cfl");
    let full = cliper::read_cfl(&traj).unwrap().to_elements::<num_complex::Complex32>(&traj).unwrap();
    let cut = full.slice_axis(ndarray::Axis(10), ndarray::Slice::from(0..2)).to_owned();
    cliper::write_cfl(&two, &cliper::HostArray::C32(cut)).unwrap();
    let out = dir.join("refused.cfl");
    let said = fails(&["recon", s(&ksp), s(&out), "--traj", s(&two), "--maps", s(&sens)], 1);
    assert!(said.contains("3 frames along dimension 10") && said.lines().count() == 1, "{said}");
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// The `nufft-forward` / `nufft-adjoint` steps (SigPy's layout) on BART's files turned into arrays: the trajectory
/// [3, 80, 41] as coordinates [80, 41, 2] (k_x, k_y last), the 40² phantom as an image [40, 40] (BART's x first).
/// With `--kernel bart` within 1e-4 of `bart nufft` and `bart nufft -a` (the library measures 9e-7 and 3e-7); with
/// the default kernel within 1e-2 (BART's own error, 6.8e-3 and 1.4e-3).
#[test]
fn nufft_steps_on_arrays_match_bart_nufft() {
    use num_complex::{Complex32, Complex64};
    let dir = scratch("nufft-steps");
    let fixture = |name: &str| root().join(format!("tests/fixtures/bart_nufft/{name}.cfl"));
    let read = |name: &str| cliper::read_cfl(fixture(name)).unwrap().to_elements::<Complex64>(fixture(name)).unwrap();
    let traj = read("traj");
    let coord = ndarray::ArrayD::from_shape_fn(ndarray::IxDyn(&[80, 41, 2]), |i| traj[[i[2], i[0], i[1]]].re as f32);
    cliper::write_file(dir.join("coord.npy"), &cliper::HostArray::F32(coord)).unwrap();
    let image = read("image").mapv(|v| Complex32::new(v.re as f32, v.im as f32));
    let image = image.into_shape_with_order(ndarray::IxDyn(&[40, 40])).unwrap();
    cliper::write_file(dir.join("image.npy"), &cliper::HostArray::C32(image)).unwrap();
    let coil = read("coil1").mapv(|v| Complex32::new(v.re as f32, v.im as f32));
    let coil = coil.into_shape_with_order(ndarray::IxDyn(&[80, 41])).unwrap();
    cliper::write_file(dir.join("coil.npy"), &cliper::HostArray::C32(coil)).unwrap();
    let (coord, image, coil) = (dir.join("coord.npy"), dir.join("image.npy"), dir.join("coil.npy"));
    for (kernel, tolerance) in [("bart", 1e-4), ("es", 1e-2)] {
        let forward = dir.join(format!("forward_{kernel}.npy"));
        ok(&["nufft-forward", s(&image), s(&coord), s(&forward), "--kernel", kernel]);
        let e = relative(&npy_values(&forward), &read_cfl_values(&fixture("nufft")));
        assert!(e < tolerance, "nufft-forward --kernel {kernel}: {e:e} from bart nufft");
        let adjoint = dir.join(format!("adjoint_{kernel}.npy"));
        ok(&["nufft-adjoint", s(&coil), s(&coord), s(&adjoint), "--shape", "40,40", "--kernel", kernel]);
        let e = relative(&npy_values(&adjoint), &read_cfl_values(&fixture("adjoint")));
        assert!(e < tolerance, "nufft-adjoint --kernel {kernel}: {e:e} from bart nufft -a");
    }
    let said = fails(&["nufft-adjoint", s(&coil), s(&coord), s(&dir.join("x.npy")), "--shape", "40"], 1);
    assert!(said.contains("an image of [40] for 2 coordinates per point") && said.lines().count() == 1, "{said}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `cliper cc` on the bart_cc fixtures (an 8-coil phantom k-space [46, 38, 1, 8] with noise): the compressed
/// k-space of `-p 4` (svd), `-p 4 --method geometric` and `-p 3 --method geometric -r 12` against `bart cc` with the
/// same flags, each virtual coil after the unit factor that best aligns it with BART's (eigenvectors have no set
/// phase): within 1e-4 (the library test measures 4.5e-7–1.5e-5; the file is complex64, as BART's); `-p 4 --method
/// espirit` on the phantom without noise (kp) against `bart cc -p 4 -E` the same way. `--matrix` writes BART's `-M`
/// layout. Refusals: no -p and no --matrix, more virtual coils than coils, a bad -r; no output is left behind.
#[test]
fn cc_matches_bart_cc() {
    let dir = scratch("cc");
    let fixture = |name: &str| root().join(format!("tests/fixtures/bart_cc/{name}"));
    let k = fixture("k");
    let cases: [(&[&str], &str, usize, &str); 4] = [
        (&["-p", "4"], "s4", 4, "k"),
        (&["--virtual-coils", "4", "--method", "geometric"], "g4", 4, "k"),
        (&["-p", "3", "--method", "geometric", "-r", "12"], "g3_r12", 3, "k"),
        (&["-p", "4", "--method", "espirit"], "e4", 4, "kp"),
    ];
    for (flags, name, coils, input) in cases {
        let out = dir.join(format!("{name}.cfl"));
        let said = ok(&[&["cc", s(&fixture(input)), s(&out)][..], flags].concat());
        assert!(said.contains(&format!("{coils} virtual coils of 8")), "{said}");
        let (ours, bart) = (read_cfl_values(&out), read_cfl_values(&fixture(&format!("{name}.cfl"))));
        assert_eq!(ours.len(), bart.len());
        // BART's order: x fastest … coils slowest in the file; read row-major as [x, y, z, coil] — the coil is the
        // last index, so each coil is every `coils`-th value.
        let mut aligned = ours.clone();
        for p in 0..coils {
            let inner: num_complex::Complex64 =
                ours.iter().zip(&bart).skip(p).step_by(coils).map(|(o, b)| o.conj() * b).sum();
            let unit = inner / inner.norm();
            aligned.iter_mut().skip(p).step_by(coils).for_each(|v| *v *= unit);
        }
        let e = relative(&aligned, &bart);
        assert!(e < 1e-4, "{name}: {e:e} from bart cc");
    }
    let out = dir.join("matrix.cfl");
    let said = ok(&["cc", s(&k), s(&out), "--matrix", "--method", "geometric"]);
    assert!(said.contains("[46, 1, 1, 8, 8]"), "{said}");
    let refused = dir.join("refused.cfl");
    let refusals: [(&[&str], &str); 3] = [
        (&[], "--virtual-coils N"),
        (&["-p", "9"], "9 virtual coils: give 1 to 8"),
        (&["-p", "3", "-r", "1:2"], "--calibration 1:2"),
    ];
    for (flags, expected) in refusals {
        let said = fails(&[&["cc", s(&k), s(&refused)][..], flags].concat(), 1);
        assert!(said.contains(expected) && said.lines().count() == 1, "{said}");
        assert!(!refused.exists() && !refused.with_extension("hdr").exists());
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `cliper recon FILE.h5 OUT` on tests/fixtures/mri_h5 (make.sh there): ISMRMRD 1.8.0's generated Shepp–Logan file
/// (4 coils, readout oversampled 2×) and a fastMRI-layout file (2 slices). RSoS on the unitary transform's scale,
/// cut to the header's recon matrix: within 1e-5 of `ismrmrd_recon_cartesian_2d`'s image divided by √(84 · 42) (its
/// FFT is unnormalised) and of fastMRI's `reconstruction_rss` as stored (the message also gives that distance).
/// Written as NIfTI (.nii.gz) as the issue asks, and as NPY to compare. Files whose header does not fit are refused
/// in one line naming the field, with no output.
#[test]
fn recon_reads_ismrmrd_and_fastmri_hdf5_files() {
    let dir = scratch("recon-h5");
    let fixture = |name: &str| root().join(format!("tests/fixtures/mri_h5/{name}"));
    let values =
        |p: &Path| -> Vec<f64> { read_npy(p).unwrap().to_elements::<f64>(p).unwrap().iter().copied().collect() };
    let relative = |a: &[f64], b: &[f64]| {
        let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum();
        (d / b.iter().map(|y| y * y).sum::<f64>()).sqrt()
    };
    let out = dir.join("ismrmrd.npy");
    let said = ok(&["recon", s(&fixture("ismrmrd.h5")), s(&out)]);
    assert!(said.contains("[42, 42] cut to the header's recon matrix") && said.contains("[1, 42, 42]"), "{said}");
    let tool: Vec<f64> =
        values(&fixture("ismrmrd_reference.npy")).iter().map(|v| v / (84.0f64 * 42.0).sqrt()).collect();
    let e = relative(&values(&out), &tool);
    assert!(e < 1e-5, "ISMRMRD: {e:e} from ismrmrd_recon_cartesian_2d / √N");
    let out = dir.join("fastmri.npy");
    let said = ok(&["recon", s(&fixture("fastmri.h5")), s(&out)]);
    assert!(said.contains("the file's own reconstruction is") && said.contains("[2, 20, 20]"), "{said}");
    let e = relative(&values(&out), &values(&fixture("fastmri_reference.npy")));
    assert!(e < 1e-5, "fastMRI: {e:e} from reconstruction_rss");
    let nifti = dir.join("fastmri.nii.gz");
    ok(&["recon", s(&fixture("fastmri.h5")), s(&nifti)]);
    assert!(nifti.exists());
    let refused = dir.join("refused.npy");
    for (name, expected) in [
        ("fastmri_bad_header.h5", "encodedSpace/matrixSize is x 44"),
        ("ismrmrd_bad_line.h5", "kspace_encode_step_1 places it at 50"),
        ("no_raw_data.h5", "no MRI raw data"),
    ] {
        let said = fails(&["recon", s(&fixture(name)), s(&refused)], 1);
        assert!(said.contains(expected) && said.contains(name) && said.lines().count() == 1, "{said}");
        assert!(!refused.exists());
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `cliper ecalib` on 3-D k-space (tests/fixtures/bart/k3d: 4 coils, 24 × 22 × 18): maps in BART's (x, y, z, coils)
/// within 1e-4 of `bart ecalib -m1` after one global sign (measured 2.2e-5), and `--maps 2` as (x, y, z, coils, 2).
#[test]
fn ecalib_of_3d_kspace_matches_bart_ecalib() {
    let dir = scratch("ecalib-3d");
    let k = root().join("tests/fixtures/bart/k3d.cfl");
    let out = dir.join("maps3d.cfl");
    let said = ok(&["ecalib", s(&k), s(&out)]);
    assert!(said.contains("calibration [24, 22, 18]") && said.contains("[4, 24, 22, 18]"), "{said}");
    let header = std::fs::read_to_string(out.with_extension("hdr")).unwrap();
    assert!(header.lines().nth(1).unwrap().starts_with("24 22 18 4"), "{header}");
    let (ours, bart) = (read_cfl_values(&out), read_cfl_values(&root().join("tests/fixtures/bart/ecalib3d.cfl")));
    let sign = if ours.iter().zip(&bart).map(|(a, b)| (a * b.conj()).re).sum::<f64>() < 0.0 { -1.0 } else { 1.0 };
    let e = relative(&ours.iter().map(|v| v * sign).collect::<Vec<_>>(), &bart);
    assert!(e < 1e-4, "3-D maps against bart ecalib: {e:e}");
    let two = dir.join("maps3d_m2.cfl");
    ok(&["ecalib", s(&k), s(&two), "--maps", "2"]);
    let header = std::fs::read_to_string(two.with_extension("hdr")).unwrap();
    assert!(header.lines().nth(1).unwrap().starts_with("24 22 18 4 2"), "{header}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `cliper ecalib K MAPS --maps 2` (bart ecalib -m 2) on tests/fixtures/bart/fold8 (8 coils, 90 × 45, the phantom
/// folded by a halved field of view): the CFL is BART's (x, y, 1, coils, maps) and within 1e-3 of `bart ecalib -m 2`
/// after one global sign (the library test measures 1.7e-4 and 4.4e-4 for the two maps). Refused: more sets than
/// coils, and --maps with walsh; no output is left.
#[test]
fn ecalib_writes_two_sets_of_maps_as_bart_does() {
    let dir = scratch("ecalib-m2");
    let k = root().join("tests/fixtures/bart/fold8.cfl");
    let out = dir.join("maps2.cfl");
    let said = ok(&["ecalib", s(&k), s(&out), "--maps", "2"]);
    assert!(said.contains("[2, 8, 90, 45]"), "{said}");
    let header = std::fs::read_to_string(out.with_extension("hdr")).unwrap();
    assert!(header.lines().nth(1).unwrap().starts_with("90 45 1 8 2"), "{header}");
    let (ours, bart) = (read_cfl_values(&out), read_cfl_values(&root().join("tests/fixtures/bart/fold8_m2.cfl")));
    assert_eq!(ours.len(), bart.len());
    let sign = if ours.iter().zip(&bart).map(|(a, b)| (a * b.conj()).re).sum::<f64>() < 0.0 { -1.0 } else { 1.0 };
    let aligned: Vec<num_complex::Complex64> = ours.iter().map(|v| v * sign).collect();
    let e = relative(&aligned, &bart);
    assert!(e < 1e-3, "two sets of maps against bart ecalib -m 2: {e:e}");
    let refused = dir.join("refused.cfl");
    for (flags, expected) in [
        (&["--maps", "9"][..], "9 sets of maps: give 1 to the coil count (8)"),
        (&["--maps", "2", "--method", "walsh"][..], "walsh gives one set"),
    ] {
        let said = fails(&[&["ecalib", s(&k), s(&refused)][..], flags].concat(), 1);
        assert!(said.contains(expected) && said.lines().count() == 1, "{said}");
        assert!(!refused.exists());
    }
    std::fs::remove_dir_all(&dir).ok();
}
