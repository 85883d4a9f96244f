//! Element-wise maths on the command line: `expression`, `window`, `threshold`, `clip`, and element-wise steps
//! of a pipeline file fused into one kernel. References are computed here in float64 from the same inputs.

use crate::common::*;
use cliper::{HostArray, read_file, read_image, write_npy};
use ndarray::ArrayD;
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn write_f32(path: &Path, shape: &[usize], seed: u64) -> ArrayD<f64> {
    let mut state = seed;
    let values: Vec<f32> = (0..shape.iter().product::<usize>())
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
        })
        .collect();
    let a = ArrayD::from_shape_vec(shape.to_vec(), values).unwrap();
    write_npy(path, &HostArray::F32(a.clone())).unwrap();
    a.mapv(f64::from)
}

#[test]
fn expression_of_two_files_broadcasts_and_matches_float64() {
    let dir = scratch("expr");
    let (a, b, out) = (dir.join("gx.npy"), dir.join("gy.npy"), dir.join("m.npy"));
    let ga = write_f32(&a, &[13, 29], 1);
    let gb = write_f32(&b, &[29], 2);
    ok(&["expression", s(&a), s(&b), s(&out), "--expr", "sqrt(a*a + b**2) + where(x > 0, 1, -1)"]);
    let got = f32s(&out);
    assert_eq!(got.shape(), &[13, 29]);
    for ((i, j), g) in got.clone().into_dimensionality::<ndarray::Ix2>().unwrap().indexed_iter() {
        let (x, y) = (ga[[i, j]], gb[[j]]);
        let want = (x * x + y * y).sqrt() + if x > 0.0 { 1.0 } else { -1.0 };
        // float32 inputs and arithmetic: a square root of a sum of two products, ≤ 4 ulps → 2e-6 relative.
        assert!((g - want).abs() <= 2e-6 * want.abs().max(1.0), "[{i},{j}] {g} vs {want}");
    }
}

#[test]
fn window_makes_an_8_bit_display_image_of_a_ct_slice() {
    let dir = scratch("window");
    let slice = root().join("data/ct_series/IM0005.dcm");
    let out = dir.join("soft_tissue.png");
    ok(&["window", s(&slice), s(&out), "--level", "40", "--width", "400"]);
    let HostArray::U8(png) = read_file(&out).unwrap() else { panic!("an 8-bit PNG") };
    let hu = read_image(&slice).unwrap().array.to_elements::<f64>(&slice).unwrap();
    assert_eq!(png.len(), hu.len());
    let mut ends = [0, 0];
    for (&p, &h) in png.iter().zip(&hu) {
        let exact = ((h - (40.0 - 200.0)) / 400.0).clamp(0.0, 1.0) * 255.0;
        // Rounded to the nearest of 0..255; the f32 arithmetic may round a value within 1e-4 of a half the
        // other way.
        let near_half = (exact.fract() - 0.5).abs() < 1e-4;
        assert!(p as f64 == exact.round() || (near_half && (p as f64 - exact).abs() <= 0.5 + 1e-4), "{h} HU → {p}");
        ends[0] += usize::from(p == 0);
        ends[1] += usize::from(p == 255);
    }
    assert!(ends[0] > 0 && ends[1] > 0, "the slice has air and bone: both ends of the window are used");
}

#[test]
fn threshold_and_clip_keep_the_volume_geometry() {
    let dir = scratch("threshold");
    let series = root().join("data/ct_series");
    let (mask, clipped) = (dir.join("bone.nii.gz"), dir.join("clipped.nii.gz"));
    ok(&["threshold", s(&series), s(&mask), "--value", "300"]);
    ok(&["clip", s(&series), s(&clipped), "--min", "-200", "--max", "200"]);
    let input = read_image(&series).unwrap();
    let hu = input.array.to_elements::<f64>(&series).unwrap();
    let m = read_image(&mask).unwrap();
    let c = read_image(&clipped).unwrap();
    // The NIfTI header holds the geometry in float32: the same within 1e-5 mm.
    for out in [&m, &c] {
        let (g, want) = (out.geometry.unwrap().affine(), input.geometry.unwrap().affine());
        assert!(g.iter().flatten().zip(want.iter().flatten()).all(|(a, b)| (a - b).abs() < 1e-5), "overlays the scan");
    }
    let (mv, cv) = (m.array.to_elements::<f64>(&mask).unwrap(), c.array.to_elements::<f64>(&clipped).unwrap());
    for ((&h, &t), &k) in hu.iter().zip(&mv).zip(&cv) {
        assert_eq!(t, if h > 300.0 { 1.0 } else { 0.0 });
        assert_eq!(k, h.clamp(-200.0, 200.0));
    }
    assert!(mv.iter().any(|&v| v == 1.0) && mv.iter().any(|&v| v == 0.0));
}

#[test]
fn element_wise_steps_of_a_pipeline_run_as_one_kernel() {
    let dir = scratch("fuse");
    let input = dir.join("x.npy");
    let x = write_f32(&input, &[37, 41], 3);
    let out = dir.join("y.npy");
    let pipeline = dir.join("p.toml");
    std::fs::write(
        &pipeline,
        format!(
            "[input]\nx = '{}'\n[output]\ny = '{}'\n\n[[step]]\nop = 'clip'\nmin = -1\nmax = 1\nin = 'x'\nout = 'c'\n\n\
             [[step]]\nop = 'expression'\nexpr = 'exp(a) * 2'\nin = 'c'\nout = 'e'\n\n\
             [[step]]\nop = 'threshold'\nvalue = 1.5\nabove = 10\nbelow = -10\nin = 'e'\nout = 'y'\n",
            s(&input),
            s(&out)
        ),
    )
    .unwrap();
    let report = ok(&["--profile", "run", s(&pipeline)]);
    let launches = report.lines().filter(|l| l.contains("expression")).count();
    assert_eq!(launches, 1, "three element-wise steps, one kernel:\n{report}");
    let got = f32s(&out);
    for (g, v) in got.iter().zip(&x) {
        let e = v.clamp(-1.0, 1.0).exp() * 2.0;
        // The threshold decides on a float32 value: skip the (absent in practice) values within 1e-5 of it.
        if (e - 1.5).abs() > 1e-5 {
            assert_eq!(*g, if e > 1.5 { 10.0 } else { -10.0 });
        }
    }
}

#[test]
fn refusals_name_the_problem_and_write_nothing() {
    let dir = scratch("expr-refusals");
    let (a, b, out) = (dir.join("a.npy"), dir.join("b.npy"), dir.join("out.npy"));
    write_f32(&a, &[4, 6], 1);
    write_f32(&b, &[5], 2);
    let e = fails(&["expression", s(&a), s(&b), s(&out), "--expr", "a + b"], 1);
    assert!(e.contains("[4, 6]") && e.contains("[5]"), "{e}");
    let e = fails(&["expression", s(&a), s(&out), "--expr", "sqrt(a"], 1);
    assert!(e.contains("expected `)`"), "{e}");
    let e = fails(&["expression", s(&a), s(&out), "--expr", "a + q"], 1);
    assert!(e.contains("unknown name `q`"), "{e}");
    let e = fails(&["window", s(&a), s(&out), "--level", "0", "--width", "1", "--range", "0-255"], 1);
    assert!(e.contains("is not LOW:HIGH"), "{e}");
    assert!(!out.exists(), "no output after a refusal");
}

/// `abs`, `sqrt` and `log` as subcommands and as pipeline steps, on real and complex data of an odd shape, against
/// float64 (numpy.absolute, numpy.sqrt's principal root, numpy.log).
#[test]
fn abs_sqrt_log_subcommands_and_steps_match_float64() {
    use num_complex::{Complex32, Complex64};
    let dir = scratch("abs-sqrt-log");
    let real = dir.join("r.npy");
    let values = write_f32(&real, &[7, 11, 3], 5);
    let flat: Vec<f64> = values.iter().copied().collect();
    let complex = dir.join("c.npy");
    let z: Vec<Complex32> =
        flat.iter().zip(flat.iter().rev()).map(|(&a, &b)| Complex32::new(a as f32, b as f32)).collect();
    write_npy(&complex, &HostArray::C32(ArrayD::from_shape_vec(vec![7, 11, 3], z.clone()).unwrap())).unwrap();
    // f32 arithmetic: one correctly rounded function of an exact input, a few ulps → 1e-6 relative (log: absolute
    // near 1, where its value is near 0).
    let check = |name: &str, got: &Path, want: &dyn Fn(usize) -> Complex64| {
        let g = read_file(got).unwrap();
        let got: Vec<Complex64> = g.to_elements::<Complex64>(got).unwrap().iter().copied().collect();
        assert_eq!(got.len(), 7 * 11 * 3, "{name}");
        for (k, g) in got.iter().enumerate() {
            let w = want(k);
            if w.re.is_nan() {
                assert!(g.re.is_nan(), "{name}[{k}]: {g} vs NaN");
                continue;
            }
            assert!((g - w).norm() <= 1e-6 * w.norm().max(1.0), "{name}[{k}]: {g} vs {w}");
        }
    };
    let out = |n: &str| dir.join(format!("{n}.npy"));
    ok(&["abs", s(&real), s(&out("abs"))]);
    check("abs", &out("abs"), &|k| Complex64::new(flat[k].abs(), 0.0));
    ok(&["sqrt", s(&real), s(&out("sqrt"))]);
    check("sqrt", &out("sqrt"), &|k| Complex64::new(flat[k].sqrt(), 0.0));
    ok(&["log", s(&real), s(&out("log"))]);
    check("log", &out("log"), &|k| Complex64::new(flat[k].ln(), 0.0));
    let zc = |k: usize| Complex64::new(z[k].re as f64, z[k].im as f64);
    ok(&["abs", s(&complex), s(&out("cabs"))]);
    assert_eq!(read_file(out("cabs")).unwrap().dtype(), cliper::Dtype::F32, "the modulus of complex data is real");
    check("cabs", &out("cabs"), &|k| Complex64::new(zc(k).norm(), 0.0));
    ok(&["sqrt", s(&complex), s(&out("csqrt"))]);
    check("csqrt", &out("csqrt"), &|k| zc(k).sqrt());
    ok(&["log", s(&complex), s(&out("clog"))]);
    check("clog", &out("clog"), &|k| zc(k).ln());
    // The same definitions as pipeline steps: sqrt(abs(x)), fused into one kernel.
    let pipeline = dir.join("p.toml");
    std::fs::write(
        &pipeline,
        format!(
            "[input]\nx = \"{}\"\n[[step]]\nop = \"abs\"\nin = \"x\"\nout = \"m\"\n[[step]]\nop = \"sqrt\"\nin = \"m\"\nout = \"r\"\n[output]\nr = \"{}\"\n",
            s(&complex),
            s(&out("steps"))
        ),
    )
    .unwrap();
    ok(&["run", s(&pipeline)]);
    check("steps", &out("steps"), &|k| Complex64::new(zc(k).norm().sqrt(), 0.0));
}
