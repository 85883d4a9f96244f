//! Elementwise and Expr against numpy (tests/fixtures/make_elementwise.py wrote the results with numpy 2.4 in
//! float64/complex128 from float32-exact inputs), and Pipeline fusion of element-wise stages.

use crate::common::app;
use cliper::{ClApp, Element, Elementwise, Expr, ExprStrategy, HostArray, Pipeline, Process, XData, read_npy};
use num_complex::{Complex32, Complex64};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/elementwise/");

fn expressions(kind: &str) -> Vec<String> {
    std::fs::read_to_string(format!("{DIR}{kind}_expressions.txt")).unwrap().lines().map(str::to_string).collect()
}

fn npy_c64(name: &str) -> (Vec<usize>, Vec<Complex64>) {
    match read_npy(format!("{DIR}{name}")).unwrap() {
        HostArray::F64(a) => (a.shape().to_vec(), a.iter().map(|&v| Complex64::new(v, 0.0)).collect()),
        HostArray::C64(a) => (a.shape().to_vec(), a.iter().copied().collect()),
        other => panic!("{name}: unexpected {:?}", other.dtype()),
    }
}

/// Evaluates every expression of `kind` on the fixture's inputs as element type `T`, as fused pipelines of 20
/// stages (every stage reads the two inputs and writes its own output: one kernel per 20 expressions, which is
/// also what keeps this test at a few programs), and compares with numpy within `tol · max(1, |numpy|)`.
fn check_against_numpy<T: Element>(kind: &str, names: [&str; 2], tol: f64) {
    let app = app();
    let exprs = expressions(kind);
    let (shape, inputs) = npy_c64(&format!("{kind}_inputs.npy"));
    let (_, results) = npy_c64(&format!("{kind}_results.npy"));
    let n: usize = shape[1..].iter().product();
    let arrays: Vec<XData<T>> = (0..2)
        .map(|k| {
            let v: Vec<T> = inputs[k * n..(k + 1) * n].iter().map(|&c| T::from_c64(c)).collect();
            XData::from_slice(app, &shape[1..], &v).unwrap()
        })
        .collect();
    let outputs: Vec<XData<T>> = exprs.iter().map(|_| XData::zeros(app, &shape[1..]).unwrap()).collect();
    for (chunk, outs) in exprs.chunks(20).zip(outputs.chunks(20)) {
        let mut p = Pipeline::new(app);
        for (text, out) in chunk.iter().zip(outs) {
            let e = Expr::parse(text, &names).unwrap();
            p = p.then(Elementwise::new(&[&arrays[0], &arrays[1]], out, e));
        }
        let report = p.profile().unwrap();
        assert_eq!(report.launches.len(), 1, "{kind}: {} stages fused into one kernel", chunk.len());
    }
    let mut failures = Vec::new();
    for (k, (text, out)) in exprs.iter().zip(&outputs).enumerate() {
        let got = out.to_vec().unwrap();
        for (i, (g, want)) in got.iter().zip(&results[k * n..(k + 1) * n]).enumerate() {
            let g = g.to_c64();
            let same_nan = (g.re.is_nan() == want.re.is_nan()) && (g.im.is_nan() == want.im.is_nan());
            let close =
                |a: f64, b: f64| (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * b.abs().max(1.0);
            if !same_nan || !close(g.re, want.re) || !close(g.im, want.im) {
                failures.push(format!("{text} [{i}]: got {g}, numpy {want}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} ({}): {} mismatches, first: {:?}",
        kind,
        T::NAME,
        failures.len(),
        &failures[..failures.len().min(8)]
    );
}

// Tolerances: float64 builtins of OpenCL are within a few ulps (≤ 4 for exp/log/pow/trig in the spec's full
// profile), so 1e-13 relative leaves room for the compositions; float32 builtins are within ≤ 4 ulps (exp, log,
// tan: 3–4; pow: 16 ulps ≈ 2e-6) of the exact result of float32 inputs — 4e-6 relative covers pow's bound.
// Comparisons, rint/floor/ceil, sign, clip, min/max and where are exact in both.
#[test]
fn real_expressions_match_numpy_in_f64() {
    check_against_numpy::<f64>("real", ["a", "b"], 1e-13);
}

#[test]
fn real_expressions_match_numpy_in_f32() {
    check_against_numpy::<f32>("real", ["a", "b"], 4e-6);
}

#[test]
fn complex_expressions_match_numpy_in_c128() {
    check_against_numpy::<Complex64>("complex", ["z", "w"], 1e-13);
}

#[test]
fn complex_expressions_match_numpy_in_c64() {
    check_against_numpy::<Complex32>("complex", ["z", "w"], 4e-6);
}

#[test]
fn real_results_of_complex_data_and_broadcast_views() {
    let app = app();
    let mut rng = crate::common::Rng::new(7);
    // z: a transposed (non-contiguous) complex view [7, 5]; s: a column [7, 1] broadcast along the rows.
    let (z, zh) = crate::common::random::<Complex32>(&mut rng, &[5, 7]);
    let (s, sh) = crate::common::random::<Complex32>(&mut rng, &[7, 1]);
    let zt = z.t();
    let out: XData<f32> =
        Elementwise::apply(&[&zt, &s], Expr::parse("abs(z * s) + angle(z)", &["z", "s"]).unwrap()).unwrap();
    assert_eq!(out.shape(), &[7, 5]);
    let got = out.to_vec().unwrap();
    for i in 0..7 {
        for j in 0..5 {
            let (zv, sv) = (zh[[j, i]], sh[[i, 0]]);
            // f32 inputs, f64 reference: 4e-6 relative (a product, a modulus and an angle, each ≤ 4 ulps).
            let want = (zv * sv).norm() + zv.arg();
            assert!((got[i * 5 + j] as f64 - want).abs() <= 4e-6 * want.abs().max(1.0), "[{i},{j}]");
        }
    }
    // In place: the output is the first input, the same view.
    let x = XData::from_slice(app, &[3], &[1.0f64, 4.0, 9.0]).unwrap();
    Elementwise::new(&[&x], &x, Expr::input(0).sqrt() * 2.0).run().unwrap();
    assert_eq!(x.to_vec().unwrap(), vec![2.0, 4.0, 6.0]);
}

/// hypot (and |z|) computed as sqrt(a² + b²) where that is safe must still give numpy's values where a² + b²
/// overflows or underflows float32: the library hypot takes those.
#[test]
fn hypot_keeps_the_whole_float_range() {
    let a = XData::from_slice(app(), &[5], &[3e30f32, 3e-30, 0.0, f32::INFINITY, 3.0]).unwrap();
    let b = XData::from_slice(app(), &[5], &[4e30f32, 4e-30, 0.0, f32::NAN, 4.0]).unwrap();
    let h = Elementwise::evaluate(&[&a, &b], Expr::magnitude(2)).unwrap().to_vec().unwrap();
    let want = [5e30f32, 5e-30, 0.0, f32::INFINITY, 5.0];
    for (g, w) in h.iter().zip(want) {
        // numpy.hypot in float32: exact here but for one rounding of the tiny and huge values (4 ulps).
        assert!(g == &w || (g - w).abs() <= 4.0 * f32::EPSILON * w.abs(), "{h:?}");
    }
    let z: Vec<Complex32> = vec![Complex32::new(3e30, 4e30), Complex32::new(3e-30, -4e-30)];
    let z = XData::from_slice(app(), &[2], &z).unwrap();
    let m: XData<f32> = Elementwise::apply(&[&z], Expr::input(0).abs()).unwrap();
    let m = m.to_vec().unwrap();
    assert!((m[0] / 5e30 - 1.0).abs() < 1e-6 && (m[1] / 5e-30 - 1.0).abs() < 1e-6, "{m:?}");
}

#[test]
fn refusals_name_what_is_wrong() {
    let app = app();
    let a = XData::<f32>::zeros(app, &[4, 6]).unwrap();
    let b = XData::<f32>::zeros(app, &[5]).unwrap();
    let e = Elementwise::add(&a, &b).unwrap_err().to_string();
    assert!(e.contains("[4, 6]") && e.contains("[5]"), "{e}");
    let z = XData::<Complex32>::zeros(app, &[3]).unwrap();
    let e = Elementwise::<Complex32, f32>::apply(&[&z], Expr::input(0) * 2.0).unwrap_err().to_string();
    assert!(e.contains("is complex and the output is real"), "{e}");
    let e = Elementwise::evaluate(&[&z], Expr::input(0).maximum(0.0)).unwrap_err().to_string();
    assert!(e.contains("`maximum` is defined for real values only"), "{e}");
    let e = Elementwise::evaluate(&[&a], Expr::input(1)).unwrap_err().to_string();
    assert!(e.contains("reads 2 input(s), and 1 were given"), "{e}");
    // Writing the transpose of an input over it would read elements already overwritten.
    let sq = XData::<f32>::zeros(app, &[4, 4]).unwrap();
    let e = Elementwise::new(&[&sq], &sq.t(), Expr::input(0) + 1.0).run().unwrap_err().to_string();
    assert!(e.contains("overlaps input 0"), "{e}");
    let e = Elementwise::<f32, f64>::new(&[&a], &XData::zeros(app, &[4, 6]).unwrap(), Expr::input(0)).run();
    assert!(e.unwrap_err().to_string().contains("an output of f32 or f32"));
}

/// A three-stage chain: clip → window → gradient-like magnitude with a second input. Fused, it is one launch;
/// the intermediates are still written, and everything equals the stages run one by one.
#[test]
fn pipeline_fuses_back_to_back_stages_and_keeps_every_output() {
    let app = ClApp::builder().use_env(true).profiling(true).build().unwrap();
    let mut rng = crate::common::Rng::new(3);
    let n = [33, 47];
    let x = XData::<f32>::from_slice(&app, &n, &rng.vec::<f32>(33 * 47)).unwrap();
    let g = XData::<f32>::from_slice(&app, &[47], &rng.vec::<f32>(47)).unwrap();
    let stages = |x: &XData<f32>, outs: &[XData<f32>; 3]| {
        [
            Elementwise::new(&[x], &outs[0], Expr::input(0).clip(-0.5, 0.75)),
            Elementwise::new(&[&outs[0]], &outs[1], Expr::input(0).window(0.1, 1.0)),
            Elementwise::new(&[&outs[1], &g], &outs[2], Expr::magnitude(2)),
        ]
    };
    let fused: [XData<f32>; 3] = std::array::from_fn(|_| XData::zeros(&app, &n).unwrap());
    let mut p = Pipeline::new(&app);
    for s in stages(&x, &fused) {
        p = p.then(s);
    }
    let report = p.profile().unwrap();
    assert_eq!(report.launches.len(), 1, "{report}");
    let apart: [XData<f32>; 3] = std::array::from_fn(|_| XData::zeros(&app, &n).unwrap());
    for mut s in stages(&x, &apart) {
        s.run().unwrap();
    }
    for (f, a) in fused.iter().zip(&apart) {
        // The fused kernel computes the same operations in the same order: bit-identical.
        assert_eq!(f.to_vec().unwrap(), a.to_vec().unwrap());
    }
    let mut check = Elementwise::new(&[&x], &fused[0], Expr::input(0));
    check.init().unwrap();
    // Contiguous and aligned: four elements per work-item (33·47 = 1551: three left for the scalar tail).
    assert!(
        matches!(check.strategy(), Some(ExprStrategy::Kernel { outputs: 1, lanes: 4, .. })),
        "{:?}",
        check.strategy()
    );
    let (head, tail) = (x.slice_axis(1, 1..47).unwrap(), fused[1].slice_axis(1, 1..47).unwrap());
    let mut offset = Elementwise::new(&[&head], &tail, Expr::input(0) * 3.0);
    offset.run().unwrap();
    assert!(matches!(offset.strategy(), Some(ExprStrategy::Kernel { lanes: 1, .. })));
    let (xs, ts) = (x.to_vec().unwrap(), fused[1].to_vec().unwrap());
    for r in 0..33 {
        for c in 1..47 {
            assert_eq!(ts[r * 47 + c], xs[r * 47 + c] * 3.0);
        }
    }
}

/// A stage that reads its predecessor's output in another order (a transpose) must not be fused.
#[test]
fn pipeline_does_not_fuse_a_stage_reading_another_view() {
    let app = ClApp::builder().use_env(true).profiling(true).build().unwrap();
    let x = XData::<f64>::from_slice(&app, &[3, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]).unwrap();
    let y = XData::<f64>::zeros(&app, &[3, 3]).unwrap();
    let z = XData::<f64>::zeros(&app, &[3, 3]).unwrap();
    let mut p = Pipeline::new(&app).then(Elementwise::new(&[&x], &y, Expr::input(0) * 10.0)).then(Elementwise::new(
        &[&y.t()],
        &z,
        Expr::input(0) + 1.0,
    ));
    assert_eq!(p.profile().unwrap().launches.len(), 2);
    assert_eq!(z.to_vec().unwrap(), vec![11.0, 41.0, 71.0, 21.0, 51.0, 81.0, 31.0, 61.0, 91.0]);
}
