//! Shaping commands from the binary (tests/fixtures/make_shape.py): `slice` on a NIfTI against nibabel's slicer
//! (data and the affine written), a plane cut from a volume, a pipeline step, and refusals that name the axis, the
//! shape and the entry and write nothing.
//!
//! Tolerances: a slice copies values (exact). Affines: a NIfTI holds its affine in float32 (srow), so the one
//! written back is within float32 rounding of nibabel's float64 one: 1e-5 absolute on entries ≤ 35.

use crate::common::*;
use ndarray::ArrayD;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/shape").join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn assert_affine(got: [[f64; 4]; 4], want: &ArrayD<f64>, what: &str) {
    for (r, row) in got.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            assert!((v - want[[r, c]]).abs() <= 1e-5, "{what}: affine {got:?} vs nibabel {want}");
        }
    }
}

fn written(path: &Path) -> (ArrayD<f64>, [[f64; 4]; 4]) {
    let image = cliper::read_image(path).unwrap();
    let geometry = image.geometry.expect("a NIfTI output has a geometry");
    (image.array.to_elements::<f64>(path).unwrap(), geometry.affine())
}

#[test]
fn slice_of_a_nifti_equals_nibabels_slicer() {
    let dir = scratch("shape-slice");
    let volume = fixture("oblique.nii");
    // nibabel's [2:11, 16::-3, 9::-2] (X, Y, Z) is cliper's reversed index on [Z, Y, X].
    let out = dir.join("steps.nii");
    ok(&["slice", s(&volume), s(&out), "--slice=9::-2,16::-3,2:11"]);
    let (data, affine) = written(&out);
    assert_eq!(data, f32s(&fixture("nib_steps.npy")));
    assert_affine(affine, &f32s(&fixture("nib_steps_affine.npy")), "steps");
    // An integer index on the slice axis: a 2-D image in the plane nibabel's 4:5 keeps.
    let plane = dir.join("plane.nii.gz");
    ok(&["slice", s(&volume), s(&plane), "--slice", "4"]);
    let (data, affine) = written(&plane);
    let want = f32s(&fixture("nib_plane.npy"));
    assert_eq!(data, want.to_shape(vec![17, 13]).unwrap().to_owned().into_dyn());
    assert_affine(affine, &f32s(&fixture("nib_plane_affine.npy")), "plane");
}

#[test]
fn slice_in_a_pipeline_and_refusals() {
    let dir = scratch("shape-slice-refusals");
    let a3 = fixture("a3.npy");
    let pipeline = dir.join("p.toml");
    std::fs::write(
        &pipeline,
        "[input]\nx = \"IN\"\n\n[[step]]\nop = \"slice\"\nslice = \"-3:1:-2, ::-1, 4:-2\"\nin = \"x\"\nout = \"y\"\n\n\
         [output]\ny = \"OUT\"\n"
            .replace("IN", s(&a3))
            .replace("OUT", s(&dir.join("negative.npy"))),
    )
    .unwrap();
    ok(&["run", s(&pipeline)]);
    assert_eq!(f32s(&dir.join("negative.npy")), f32s(&fixture("slice_negative.npy")));
    let out = dir.join("never.npy");
    for (spec, says) in [
        ("--slice=:,::0", "axis 1 of shape [13, 17, 11]: step 0"),
        ("--slice=1,2,3,4", "4 entries for data of shape [13, 17, 11]"),
        ("--slice=-14", "index -14 is out of bounds for axis 0 with size 13"),
        ("--slice=1:2:3:4", "more than two `:`"),
    ] {
        let err = fails(&["slice", s(&a3), s(&out), spec], 1);
        assert!(err.contains(says), "{spec}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!out.exists());
    }
}

/// The complex elements of an NPY file.
fn complexes(path: &Path) -> ArrayD<num_complex::Complex64> {
    cliper::read_file(path).unwrap().to_elements::<num_complex::Complex64>(path).unwrap()
}

#[test]
fn ifft_and_irfft_shortcuts_equal_numpy() {
    // float64 transforms of data in [0, 1) (sums of ≤ 90 terms): numpy's pocketfft and ours round differently,
    // observed ~1e-16; 1e-12 absolute.
    let dir = scratch("shape-ifft");
    let c3 = fixture("c3.npy");
    let out = dir.join("ifft.npy");
    ok(&["ifft", s(&c3), s(&out), "--axes", "1,2"]);
    let (got, want) = (complexes(&out), complexes(&fixture("ifft_axes12.npy")));
    assert_eq!(got.shape(), want.shape());
    assert!(got.iter().zip(want.iter()).all(|(g, w)| (g - w).norm() <= 1e-12));
    let out = dir.join("irfft.npy");
    ok(&["irfft", s(&c3), s(&out), "--axes=-1", "--length", "17", "--norm", "ortho"]);
    let (got, want) = (f32s(&out), f32s(&fixture("irfft_len17.npy")));
    assert_eq!(got.shape(), want.shape());
    assert!(got.iter().zip(want.iter()).all(|(g, w)| (g - w).abs() <= 1e-12));
    // The shortcut's parameters are checked as fft's.
    let err = fails(&["ifft", s(&c3), s(&out), "--norm", "unitary"], 1);
    assert!(err.contains("unitary"), "{err}");
}

/// The values of a reduction's file, which must be int64 for argmin/argmax (numpy's indices) and float64 else.
fn typed_values(path: &Path, name: &str) -> ArrayD<f64> {
    match cliper::read_file(path).unwrap() {
        cliper::HostArray::I64(a) if name.contains("arg") => a.mapv(|v| v as f64),
        cliper::HostArray::F64(a) if !name.contains("arg") => a,
        other => panic!("{}: {:?}", path.display(), other.dtype()),
    }
}

#[test]
fn reduce_commands_equal_numpy() {
    // Tolerance: float64 files, sums of ≤ 2431 terms chunked here and pairwise in numpy: 1e-12 relative to the
    // largest value; min, max and the indices exact (indices are written as int64, numpy's type).
    let dir = scratch("shape-reduce");
    let table = std::fs::read_to_string(fixture("reduce.txt")).unwrap();
    for line in table.lines() {
        let [name, source, flags] = line.split('\t').collect::<Vec<_>>()[..] else { panic!("{line}") };
        if flags.is_empty() {
            continue;
        }
        let input = fixture(&format!("{source}.npy"));
        let out = dir.join(format!("{name}.npy"));
        let mut args = vec!["reduce", s(&input), "-o", s(&out), "--operation"];
        args.extend(flags.split(' '));
        ok(&args);
        let (want, got) = (typed_values(&fixture(&format!("reduce_{name}.npy")), name), typed_values(&out, name));
        assert_eq!(got.shape(), want.shape(), "{name}");
        let scale = want.iter().filter(|v| v.is_finite()).fold(0.0f64, |m, v| m.max(v.abs()));
        for (g, w) in got.iter().zip(want.iter()) {
            assert!(g.is_nan() == w.is_nan() && (w.is_nan() || (g - w).abs() <= 1e-12 * scale), "{name}: {g} vs {w}");
        }
    }
    // Everything reduced and no output named: the value is printed.
    let printed = ok(&["reduce", s(&fixture("ties.npy")), "--operation", "argmax"]);
    assert_eq!(printed.trim(), "reduce = 1");
    // Refusals: one line naming what was wrong, nothing written.
    let (never, a3) = (dir.join("never.npy"), fixture("a3.npy"));
    for (args, says) in [
        (vec!["--operation", "median"], "unknown operation `median`"),
        (vec!["--operation", "sum", "--axis", "3"], "[13, 17, 11]"),
        (vec!["--operation", "var", "--ddof=-1"], "ddof -1"),
    ] {
        let mut all = vec!["reduce", s(&a3), "-o", s(&never)];
        all.extend(args);
        let err = fails(&all, 1);
        assert!(err.contains(says), "{all:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!never.exists());
    }
    let err = fails(&["reduce", s(&fixture("c3.npy")), "-o", s(&never), "--operation", "sum"], 1);
    assert!(err.contains("real data"), "{err}");
}

#[test]
fn stack_joins_volumes_into_a_series() {
    let dir = scratch("shape-stack");
    let (volume, moved) = (fixture("oblique.nii"), fixture("oblique_moved.nii"));
    // Three volumes of one geometry: a 4-D series in that geometry, numpy.stack's data.
    let series = dir.join("series.nii");
    ok(&["stack", s(&volume), s(&volume), s(&volume), s(&series), "--axis", "0"]);
    let image = cliper::read_image(&series).unwrap();
    let one = cliper::read_image(&volume).unwrap();
    let data = image.array.to_elements::<f64>(&series).unwrap();
    let want = one.array.to_elements::<f64>(&volume).unwrap();
    assert_eq!(data.shape(), &[3, 11, 17, 13]);
    for k in 0..3 {
        assert_eq!(data.index_axis(ndarray::Axis(0), k), want.view());
    }
    let (got, kept) = (image.geometry.unwrap().affine(), one.geometry.unwrap().affine());
    assert_eq!(got, kept);
    // Volumes of different geometries: numpy.stack's data without a geometry (NIfTI's no-transform default).
    let mixed = dir.join("mixed.nii");
    ok(&["stack", s(&volume), s(&moved), s(&mixed)]);
    let written = std::fs::read(&mixed).unwrap();
    let codes = (i16::from_le_bytes([written[252], written[253]]), i16::from_le_bytes([written[254], written[255]]));
    assert_eq!(codes, (0, 0), "qform and sform codes of a stack without one geometry");
    // Along the last axis of NPY arrays; refusals name both shapes, or both types, and write nothing.
    let a3 = fixture("a3.npy");
    let last = dir.join("last.npy");
    ok(&["stack", s(&a3), s(&a3), s(&last), "--axis=-1"]);
    assert_eq!(f32s(&last).shape(), &[13, 17, 11, 2]);
    let never = dir.join("never.npy");
    let err = fails(&["stack", s(&a3), s(&fixture("slice_negative.npy")), s(&never)], 1);
    assert!(err.contains("input 1 has shape [5, 17, 5], input 0 [13, 17, 11]"), "{err}");
    let err = fails(&["stack", s(&a3), s(&fixture("c3.npy")), s(&never)], 1);
    assert!(err.contains("input 1"), "{err}");
    let err = fails(&["stack", s(&a3), s(&a3), s(&never), "--axis", "4"], 1);
    assert!(err.contains("axis 4 is outside the 4 axes"), "{err}");
    assert!(!never.exists());
}

#[test]
fn reorient_equals_nibabels_closest_canonical() {
    let dir = scratch("shape-reorient");
    for name in ["permuted_lpi", "oblique"] {
        let out = dir.join(format!("{name}.nii"));
        ok(&["reorient", s(&fixture(&format!("{name}.nii"))), s(&out)]);
        let (data, affine) = written(&out);
        assert_eq!(data, f32s(&fixture(&format!("canonical_{name}.npy"))), "{name}");
        assert_affine(affine, &f32s(&fixture(&format!("canonical_{name}_affine.npy"))), name);
        assert_eq!(cliper::read_image(&out).unwrap().geometry.unwrap().axis_codes(), "RAS", "{name}");
    }
    // A plain array has no orientation to start from.
    let err = fails(&["reorient", s(&fixture("a3.npy")), s(&dir.join("never.npy"))], 1);
    assert!(err.contains("needs the input's geometry"), "{err}");
    assert!(!dir.join("never.npy").exists());
}

#[test]
fn reorient_to_axis_codes_equals_nibabels_as_reoriented() {
    // nibabel: img.as_reoriented(ornt_transform(io_orientation(img.affine), axcodes2ornt(code))). The data are
    // permuted and flipped (exact). The NIfTI written holds its affine in float32 (srow), so it is compared with
    // nibabel's float64 affine rounded to float32, within 1e-12: both round the same numbers, composed in float64
    // within 1e-14 of each other.
    let dir = scratch("shape-reorient-to");
    for name in ["permuted_lpi", "oblique"] {
        for code in ["LPS", "PIR", "RAS"] {
            let out = dir.join(format!("{name}_{code}.nii"));
            ok(&["reorient", s(&fixture(&format!("{name}.nii"))), s(&out), "--to", code]);
            let (data, affine) = written(&out);
            assert_eq!(data, f32s(&fixture(&format!("to_{code}_{name}.npy"))), "{name} to {code}");
            let want = f32s(&fixture(&format!("to_{code}_{name}_affine.npy"))).mapv(|v| v as f32 as f64);
            for (r, row) in affine.iter().enumerate() {
                for (c, v) in row.iter().enumerate() {
                    assert!((v - want[[r, c]]).abs() <= 1e-12, "{name} {code}: affine {affine:?} vs nibabel {want}");
                }
            }
            assert_eq!(cliper::read_image(&out).unwrap().geometry.unwrap().axis_codes(), code, "{name}");
        }
    }
    // The same as a pipeline step.
    let pipeline = dir.join("p.toml");
    let out = dir.join("step.nii");
    std::fs::write(
        &pipeline,
        format!(
            "[input]\nx = \"{}\"\n\n[[step]]\nop = \"reorient\"\nto = \"PIR\"\nin = \"x\"\nout = \"y\"\n\n[output]\ny = \"{}\"\n",
            s(&fixture("oblique.nii")),
            s(&out)
        ),
    )
    .unwrap();
    ok(&["run", s(&pipeline)]);
    assert_eq!(written(&out).0, f32s(&fixture("to_PIR_oblique.npy")));
    // Codes that name no orientation: one line naming the code, nothing written.
    let never = dir.join("never.nii");
    for code in ["LRS", "RAX", "RA"] {
        let err = fails(&["reorient", s(&fixture("oblique.nii")), s(&never), "--to", code], 1);
        assert!(err.contains(&format!("axis codes `{code}`")), "{code}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    assert!(!never.exists());
}
