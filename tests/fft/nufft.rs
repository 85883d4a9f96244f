//! Nufft (type 2 forward, type 1 adjoint, BART's convention) against the exact sums in float64 and FINUFFT 2.5.1,
//! from the fixtures scripts/nufft/make_fixtures.py wrote (tests/fixtures/nufft): a 1-D image of 37, a 2-D 40 × 27
//! and a 3-D 12 × 9 × 10, with points uniform over the grid's band, on its edges and beyond it (periodic).
//!
//! Tolerances: the error relative to the exact sum's norm (FINUFFT's definition of its tolerance) must be ≤ ε,
//! the tolerance asked for; against FINUFFT at the same ε, ≤ 3ε (both err by up to ε or so: FINUFFT's own error
//! measured 0.2–1.6 ε on these points). complex64 is asked for ε ≥ 1e-3 here (float32's rounding of ~1e-7 per
//! operation stays well below); complex128 down to 1e-12.

use super::common;
use cliper::{Element, Nufft, NufftParams, NufftPoints, Spreading, Upsampling, XData, read_npy};
use num_complex::{Complex32, Complex64};

const DIR: &str = "tests/fixtures/nufft";

fn npy(name: &str) -> (Vec<usize>, Vec<Complex64>) {
    let a =
        read_npy(format!("{DIR}/{name}.npy")).unwrap().to_elements::<Complex64>(std::path::Path::new(name)).unwrap();
    (a.shape().to_vec(), a.iter().copied().collect())
}

fn nrmse(got: &[Complex64], want: &[Complex64]) -> f64 {
    let num: f64 = got.iter().zip(want).map(|(a, b)| (a - b).norm_sqr()).sum();
    let den: f64 = want.iter().map(|b| b.norm_sqr()).sum();
    (num / den).sqrt()
}

struct Case {
    shape: Vec<usize>,
    points: NufftPoints,
    image: Vec<Complex64>,
    values: Vec<Complex64>,
}

fn case(name: &str) -> Case {
    let (pshape, coords) = npy(&format!("{name}_points"));
    let (shape, image) = npy(&format!("{name}_image"));
    let (_, values) = npy(&format!("{name}_values"));
    assert_eq!(pshape[1], shape.len());
    let points = NufftPoints::new(&shape, coords.iter().map(|c| c.re).collect()).unwrap();
    Case { shape, points, image, values }
}

/// Type 2 and type 1 of `case` in `T` with `params`, widened to complex128.
fn transforms<T: cliper::ComplexElement>(case: &Case, params: NufftParams) -> (Vec<Complex64>, Vec<Complex64>) {
    let app = common::app();
    let mut nufft = Nufft::<T>::new(app, &case.points, 1, params).unwrap();
    let mut image_shape = vec![1];
    image_shape.extend(&case.shape);
    let narrow = |v: &[Complex64]| v.iter().map(|&c| T::from_c64(c)).collect::<Vec<T>>();
    let image = XData::from_slice(app, &image_shape, &narrow(&case.image)).unwrap();
    let values = XData::from_slice(app, &[1, case.values.len()], &narrow(&case.values)).unwrap();
    let y = XData::<T>::zeros(app, &[1, case.values.len()]).unwrap();
    let x = XData::<T>::zeros(app, &image_shape).unwrap();
    nufft.forward(&image, &y).unwrap();
    nufft.adjoint(&values, &x).unwrap();
    let widen = |d: XData<T>| d.to_vec().unwrap().iter().map(|v| v.to_c64()).collect::<Vec<_>>();
    (widen(y), widen(x))
}

fn check<T: cliper::ComplexElement>(name: &str, eps: f64, upsampling: Upsampling) {
    let c = case(name);
    let (t2, t1) = transforms::<T>(&c, NufftParams::default().tolerance(eps).upsampling(upsampling));
    let (_, exact2) = npy(&format!("{name}_t2_exact"));
    let (_, exact1) = npy(&format!("{name}_t1_exact"));
    let (e2, e1) = (nrmse(&t2, &exact2), nrmse(&t1, &exact1));
    eprintln!("ERR {name} {} {eps:e} {upsampling:?} {e2:.2e} {e1:.2e}", T::NAME);
    if std::env::var("NUFFT_PRINT").is_ok() {
        return;
    }
    assert!(e2 <= eps && e1 <= eps, "{name} {} ε {eps:e} {upsampling:?}: type 2 {e2:e}, type 1 {e1:e}", T::NAME);
    for (what, ours, exact) in [("t2", &t2, &exact2), ("t1", &t1, &exact1)] {
        for tag in finufft_tags(eps) {
            let (_, f) = npy(&format!("{name}_{what}_finufft_{tag}"));
            let e = nrmse(ours, &f);
            let theirs = nrmse(&f, exact);
            assert!(e <= 3.0 * eps, "{name} {what} ε {eps:e}: ours vs FINUFFT {e:e} (FINUFFT vs exact {theirs:e})");
        }
    }
}

/// The FINUFFT fixtures at this tolerance, as numpy's `{eps:g}` names them.
fn finufft_tags(eps: f64) -> Vec<&'static str> {
    [(1e-3, "0.001"), (1e-6, "1e-06"), (1e-9, "1e-09")].iter().filter(|(e, _)| *e == eps).map(|(_, t)| *t).collect()
}

#[test]
fn nufft_matches_exact_sums_and_finufft_in_1d_2d_3d() {
    for name in ["line", "plane", "volume"] {
        for up in [Upsampling::Factor(2.0), Upsampling::Factor(1.25)] {
            check::<Complex32>(name, 1e-3, up);
            check::<Complex64>(name, 1e-3, up);
            check::<Complex64>(name, 1e-6, up);
        }
        check::<Complex64>(name, 1e-9, Upsampling::Factor(2.0));
        check::<Complex32>(name, 1e-5, Upsampling::Auto);
        check::<Complex32>(name, 1e-6, Upsampling::Factor(2.0));
        check::<Complex64>(name, 1e-12, Upsampling::Auto);
    }
}

/// Both spreading layouts on this device (the other device kind's default included) give the same values as the
/// default to rounding: the same taps summed in another order.
#[test]
fn spreading_layouts_agree() {
    for name in ["line", "plane", "volume"] {
        let c = case(name);
        let base = NufftParams::default().tolerance(1e-9);
        let (_, reference) = transforms::<Complex64>(&c, base);
        for spreading in
            [Spreading::PointMajor, Spreading::Lines { local_tile: false }, Spreading::Lines { local_tile: true }]
        {
            let (_, t1) = transforms::<Complex64>(&c, base.spreading(spreading));
            let e = nrmse(&t1, &reference);
            assert!(e < 1e-13, "{name} {spreading:?}: {e:e}");
        }
    }
}

/// ⟨A x, y⟩ = ⟨x, Aᴴ y⟩: the two share every table, so they are adjoint to rounding — 1e-5 in float32 (sums of
/// ~10³ products) and 1e-12 in float64, relative to |A x|·|y|.
#[test]
fn type_1_is_the_adjoint_of_type_2() {
    for name in ["line", "plane", "volume"] {
        let c = case(name);
        for (double, tol) in [(false, 1e-5), (true, 1e-12)] {
            let params = NufftParams::default().tolerance(1e-3);
            let (ax, aty) =
                if double { transforms::<Complex64>(&c, params) } else { transforms::<Complex32>(&c, params) };
            let lhs: Complex64 = ax.iter().zip(&c.values).map(|(a, y)| a * y.conj()).sum();
            let rhs: Complex64 = c.image.iter().zip(&aty).map(|(x, b)| x * b.conj()).sum();
            let norm = ax.iter().map(|v| v.norm_sqr()).sum::<f64>().sqrt()
                * c.values.iter().map(|v| v.norm_sqr()).sum::<f64>().sqrt();
            let gap = (lhs - rhs).norm() / norm;
            assert!(gap < tol, "{name} double {double}: |<Ax,y> - <x,A^H y>| / (|Ax||y|) = {gap:e}");
        }
    }
}

/// A batch transforms each entry as alone, and the adjoint gives the same bits on every run (no atomics).
#[test]
fn batches_equal_single_transforms_and_runs_repeat_bit_for_bit() {
    let app = common::app();
    let c = case("plane");
    let params = NufftParams::default().tolerance(1e-6);
    let mut batched = Nufft::<Complex32>::new(app, &c.points, 3, params).unwrap();
    let m = c.values.len();
    let values: Vec<Complex32> =
        (0..3).flat_map(|b| c.values.iter().map(move |v| Complex32::from_c64(v * (b as f64 + 1.0)))).collect();
    let v = XData::from_slice(app, &[3, m], &values).unwrap();
    let x = XData::<Complex32>::zeros(app, &[3, 40, 27]).unwrap();
    batched.adjoint(&v, &x).unwrap();
    let first = x.to_vec().unwrap();
    batched.adjoint(&v, &x).unwrap();
    assert_eq!(first, x.to_vec().unwrap(), "two runs of the adjoint differ");
    let (_, alone) = transforms::<Complex32>(&c, params);
    for b in 0..3 {
        let entry: Vec<Complex64> = first[b * 1080..(b + 1) * 1080].iter().map(|v| v.to_c64()).collect();
        let scaled: Vec<Complex64> = alone.iter().map(|v| v * (b as f64 + 1.0)).collect();
        assert!(nrmse(&entry, &scaled) < 1e-6, "batch entry {b}");
    }
}

#[test]
fn bad_points_and_arrays_are_refused_in_one_line() {
    let app = common::app();
    let err = NufftPoints::new(&[16, 12], vec![0.0, f64::NAN]).unwrap_err().to_string();
    assert!(err.contains("point 0") && err.contains("axis 1") && !err.contains('\n'), "{err}");
    let err = NufftPoints::named(&[16, 12], vec![0.0, 1.0, 24.5, 0.0], "traj.cfl").unwrap_err().to_string();
    assert!(err.contains("traj.cfl") && err.contains("point 1") && err.contains("24.5"), "{err}");
    assert!(NufftPoints::new(&[16, 12], vec![0.0, 1.0, 2.0]).is_err());
    let points = NufftPoints::new(&[16, 12], vec![0.0, 1.0]).unwrap();
    let err = Nufft::<Complex32>::new(app, &points, 1, NufftParams::default().tolerance(1e-9)).err().unwrap();
    assert!(err.to_string().contains("complex64"), "{err}");
    let small = NufftParams::default().tolerance(1e-5).upsampling(Upsampling::Factor(1.25));
    let err = Nufft::<Complex32>::new(app, &points, 1, small).err().unwrap().to_string();
    assert!(err.contains("upsampling 1.25") && err.contains("1e-4"), "{err}");
    let err = Nufft::<Complex64>::new(
        app,
        &points,
        1,
        NufftParams::default().tolerance(1e-13).upsampling(Upsampling::Factor(1.25)),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("wider than 16"), "{err}");
    let mut nufft = Nufft::<Complex32>::new(app, &points, 1, NufftParams::default()).unwrap();
    let wrong = XData::<Complex32>::zeros(app, &[1, 12, 16]).unwrap();
    let y = XData::<Complex32>::zeros(app, &[1, 1]).unwrap();
    let err = nufft.forward(&wrong, &y).unwrap_err().to_string();
    assert!(err.contains("[1, 16, 12]") && err.contains("[1, 12, 16]"), "{err}");
}

/// Pipe–Menon density compensation of `bart traj -r -G -x 64 -o 2 -y 51` (tests/fixtures/bart/nc_t) for a 64²
/// image against SigPy 0.1.27's `pipe_menon_dcf` with its defaults (scripts/nufft/dcf_ref.py): SigPy computes in
/// float32 (30 divisions by sums of 16 taps), ours in float64, so the weights agree to float32's accumulated
/// rounding: within 1e-6 relative to the largest weight (measured 1.9e-7). The trajectory's points run sample-fastest
/// (BART's memory order); SigPy's array is [samples, spokes].
#[test]
fn pipe_menon_weights_match_sigpy() {
    let traj = cliper::read_cfl("tests/fixtures/bart/nc_t")
        .unwrap()
        .to_elements::<Complex64>(std::path::Path::new("nc_t"))
        .unwrap();
    let points = NufftPoints::from_bart(&traj, &[64, 64, 1], "nc_t").unwrap();
    let ours = cliper::DensityCompensation::pipe_menon(&points, cliper::DcfParams::default()).unwrap();
    let sigpy =
        read_npy("tests/fixtures/bart/nc_t_dcf.npy").unwrap().to_elements::<f64>(std::path::Path::new("dcf")).unwrap();
    assert_eq!(sigpy.shape(), &[128, 51]);
    let largest = sigpy.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let worst =
        (0..points.len()).map(|p| (ours.weights()[p] - sigpy[[p % 128, p / 128]]).abs() / largest).fold(0.0, f64::max);
    eprintln!("pipe-menon against sigpy: worst {worst:e} of the largest weight {largest:e}");
    assert!(worst < 1e-6, "{worst:e}");
    let again = cliper::DensityCompensation::pipe_menon(&points, cliper::DcfParams::default()).unwrap();
    assert_eq!(ours, again, "the weights repeat bit for bit");
}
