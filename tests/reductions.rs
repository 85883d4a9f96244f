//! NormN and Dot against float64 references, on every element type, over whole arrays and along each axis.
//!
//! Tolerance (relative to the reference norm, or to Σ|xᵢ||yᵢ| for dot products):
//! (m + ⌈log2 n⌉ + 40)·ε, where ε is the unit roundoff of the element's real type, n the reduction length and
//! m = ⌈n / wg⌉ the longest run one work-item sums sequentially (wg = the work-group size the planner uses,
//! min(256, device limit), rounded down to a power of two). A sum of n terms summed as a tree with sequential
//! leaves of length m has relative error at most (m + log2 n)·ε (the bound for positive terms; for dot
//! products relative to Σ|xᵢyᵢ|); the 40 covers |z| (hypot), the division by the scale, and OpenCL's 16-ulp
//! allowance each for `pow`/`pown` on the terms and the final root (term errors amplified p times are divided
//! by p again by the root). Infinity norms are exact for real data. A dropped, doubled or misplaced element
//! breaks the bound at every length in f64, and up to length 1023 in f32.

mod common;
use cliper::prelude::*;
use common::*;
use num_complex::Complex64;

const LENGTHS: &[usize] = &[1, 2, 1023, (1 << 20) + 3];
const ORDERS: &[NormOrder] = &[
    NormOrder::P(1.0),
    NormOrder::P(1.5),
    NormOrder::P(2.0),
    NormOrder::P(3.0),
    NormOrder::P(20.0),
    NormOrder::P(1000.0),
    NormOrder::Inf,
];

/// `kernels_only` both ways: the planner's choice (on CPU devices the host's float64 loops), then the OpenCL
/// kernels.
const PATHS: [bool; 2] = [false, true];

fn tolerance<T: Element>(n: usize) -> f64 {
    let limit = app().device().max_work_group_size.min(256);
    let wg = 1usize << (usize::BITS - 1 - limit.leading_zeros());
    (n.div_ceil(wg) as f64 + (n.max(2) as f64).log2().ceil() + 40.0) * eps::<T>()
}

/// ‖v‖_p in float64, scaled by the largest |vᵢ| so nothing overflows.
fn norm_ref(v: &[Complex64], order: NormOrder) -> f64 {
    let mags: Vec<f64> = v.iter().map(|z| z.norm()).collect();
    if mags.iter().any(|m| m.is_nan()) {
        return f64::NAN;
    }
    let scale = mags.iter().copied().fold(0.0, f64::max);
    match order {
        NormOrder::Inf => scale,
        _ if scale == 0.0 || scale.is_infinite() => scale,
        NormOrder::P(p) => scale * mags.iter().map(|m| (m / scale).powf(p)).sum::<f64>().powf(1.0 / p),
    }
}

fn check_norm(got: f64, want: f64, tol: f64, what: &str) {
    let ok = if want.is_nan() {
        got.is_nan()
    } else if want.is_infinite() || want == 0.0 {
        got == want
    } else {
        ((got - want) / want).abs() <= tol
    };
    assert!(ok, "{what}: got {got:e}, expected {want:e} (relative tolerance {tol:e})");
}

fn norms_of_random_vectors<T: Element>() {
    let mut rng = Rng::new(21);
    for &n in LENGTHS {
        let (x, host) = random::<T>(&mut rng, &[n]);
        let v: Vec<Complex64> = host.iter().copied().collect();
        for (&order, kernels) in ORDERS.iter().flat_map(|o| PATHS.map(|k| (o, k))) {
            let out = XData::<T::Real>::zeros(app(), &[]).unwrap();
            let mut norm = NormN::new(&x, &out, NormParams::new(order).kernels_only(kernels));
            norm.init().unwrap();
            norm.launch().unwrap();
            let got = out.to_vec().unwrap()[0].to_c64().re;
            let what = format!("{} n={n} {order:?} via {:?}", T::NAME, norm.strategy());
            check_norm(got, norm_ref(&v, order), tolerance::<T>(n), &what);
        }
    }
}

#[test]
fn norms_match_reference_for_all_types_orders_and_lengths() {
    for_each_element!(norms_of_random_vectors);
}

/// The kernels' norm, after checking that the planner's (on CPU devices the host's float64 loops) agrees: the
/// same NaN, the same infinity, else within f32's tolerance (both are far closer to the float64 reference).
fn norm_of<T: Element>(values: &[T], order: NormOrder) -> f64 {
    let x = XData::from_slice(app(), &[values.len()], values).unwrap();
    let [planned, kernels] = PATHS.map(|kernels| {
        NormN::apply(&x, NormParams::new(order).kernels_only(kernels)).unwrap().to_vec().unwrap()[0].to_c64().re
    });
    let agree = (planned.is_nan() && kernels.is_nan())
        || planned == kernels
        || (kernels.is_finite() && ((planned - kernels) / kernels).abs() <= tolerance::<f32>(values.len()));
    assert!(agree, "{order:?} of {} values: planned {planned:e}, kernels {kernels:e}", values.len());
    kernels
}

#[test]
fn norms_neither_overflow_nor_underflow() {
    let tol = tolerance::<f32>(2);
    for &order in ORDERS {
        for (values, what) in [(vec![1e30f32, 1e30], "[1e30, 1e30]"), (vec![1e-30f32, -1e-30], "[1e-30, -1e-30]")] {
            let want = norm_ref(&values.iter().map(|&v| v.to_c64()).collect::<Vec<_>>(), order);
            check_norm(norm_of(&values, order), want, tol, &format!("f32 {what} {order:?}"));
        }
        // Every norm of this fits in f32 (‖·‖₁ = 3e38 < 3.4e38), though squares of its entries do not.
        let mixed = [2e38f32, 1e-38, 0.0, -1e38];
        let want = norm_ref(&mixed.iter().map(|&v| v.to_c64()).collect::<Vec<_>>(), order);
        check_norm(norm_of(&mixed, order), want, tol, &format!("f32 {mixed:?} {order:?}"));
        let complex = [num_complex::Complex32::new(3e30, 4e30)];
        check_norm(norm_of(&complex, order), 5e30, tol, &format!("c32 3e30+4e30i {order:?}"));
    }
    // The example: ‖[1e30, 1e30]‖₂ = 1.414e30 in f32.
    let two = norm_of(&[1e30f32, 1e30], NormOrder::P(2.0));
    assert!((two / 1.41421356e30 - 1.0).abs() < 1e-6, "{two:e}");
    assert_eq!(norm_of(&[0.0f32; 5], NormOrder::P(3.0)), 0.0);
}

#[test]
fn nan_and_infinity_propagate() {
    let mut rng = Rng::new(22);
    for &order in ORDERS {
        let mut values: Vec<f32> = rng.vec(1023);
        values[517] = f32::INFINITY;
        assert_eq!(norm_of(&values, order), f64::INFINITY, "∞ in, {order:?}");
        values[700] = -f32::INFINITY;
        assert_eq!(norm_of(&values, order), f64::INFINITY, "two ∞ in, {order:?}");
        values[3] = f32::NAN;
        assert!(norm_of(&values, order).is_nan(), "NaN and ∞ in, {order:?}");
        let mut values: Vec<f64> = rng.vec((1 << 20) + 3);
        values[1 << 19] = f64::NAN;
        assert!(norm_of(&values, order).is_nan(), "NaN in a long vector, {order:?}");
        let z = [num_complex::Complex64::new(1.0, f64::NAN), num_complex::Complex64::new(2.0, 0.0)];
        assert!(norm_of(&z, order).is_nan(), "complex NaN, {order:?}");
    }
}

/// Infinities a single work-item meets one after another (a 4-element vector is one vector load): ∞ then −∞
/// gave NaN, where numpy gives ∞.
#[test]
fn infinities_next_to_each_other_give_infinity() {
    for &order in ORDERS {
        let real = [1.0f32, f32::INFINITY, -f32::INFINITY, 2.0];
        assert_eq!(norm_of(&real, order), f64::INFINITY, "f32 {real:?} {order:?}");
        let double = [f64::INFINITY, f64::INFINITY, 3.0];
        assert_eq!(norm_of(&double, order), f64::INFINITY, "f64 {double:?} {order:?}");
        let z = [num_complex::Complex32::new(f32::INFINITY, 1.0), num_complex::Complex32::new(-f32::INFINITY, 0.0)];
        assert_eq!(norm_of(&z, order), f64::INFINITY, "c32 two ∞ {order:?}");
    }
}

/// Norms and dot products of no elements are 0 (numpy: `linalg.norm(zeros((0, 3)))` and `dot` of empty
/// vectors), whatever the other extents; outputs start poisoned so an unwritten one shows.
fn empty_reductions<T: Element>() {
    for shape in [&[0usize][..], &[0, 3], &[3, 0], &[2, 0, 5]] {
        let x = XData::<T>::zeros(app(), shape).unwrap();
        for &order in ORDERS {
            let out = poisoned::<T::Real>(&[]);
            NormN::new(&x, &out, NormParams::new(order)).run().unwrap();
            assert_eq!(fetch(&out).iter().next().unwrap().norm(), 0.0, "norm {order:?} of {shape:?}");
        }
        for kind in [DotKind::Plain, DotKind::Conjugated] {
            let out = poisoned::<T>(&[]);
            Dot::new(&x, &x, &out, DotParams::new(kind)).run().unwrap();
            assert_eq!(fetch(&out).iter().next().unwrap().norm(), 0.0, "dot {kind:?} of {shape:?}");
        }
        for axis in 0..shape.len() {
            let reduced: Vec<usize> = shape.iter().enumerate().filter(|&(i, _)| i != axis).map(|(_, &n)| n).collect();
            let out = poisoned::<T::Real>(&reduced);
            NormN::new(&x, &out, NormParams::new(NormOrder::P(2.0)).along(axis)).run().unwrap();
            assert!(fetch(&out).iter().all(|v| v.norm() == 0.0), "norm along {axis} of {shape:?}");
        }
    }
}

#[test]
fn empty_arrays_reduce_to_zero() {
    empty_reductions::<f32>();
    empty_reductions::<f64>();
    empty_reductions::<num_complex::Complex32>();
    empty_reductions::<num_complex::Complex64>();
}

/// Reference values along `axis` of a `[..]` host array: `f` applied to each line.
fn along_ref<F: Fn(&[Complex64]) -> Complex64>(
    host: &ndarray::ArrayD<Complex64>,
    axis: usize,
    f: F,
) -> ndarray::ArrayD<Complex64> {
    host.map_axis(ndarray::Axis(axis), |line| f(&line.to_vec()))
}

fn norms_along_axes<T: Element>() {
    let mut rng = Rng::new(23);
    // Shapes that give every strategy: short strided lines (lanes), long contiguous ones (groups), and a
    // handful of long lines (groups split into partials).
    for shape in [&[7usize, 129, 33][..], &[300, 517], &[3, 70001]] {
        let (x, host) = random::<T>(&mut rng, shape);
        for axis in 0..shape.len() {
            let orders = [NormOrder::P(1.0), NormOrder::P(2.0), NormOrder::P(2.5), NormOrder::Inf];
            for (order, kernels) in orders.into_iter().flat_map(|o| PATHS.map(|k| (o, k))) {
                let out_shape: Vec<usize> = [&shape[..axis], &shape[axis + 1..]].concat();
                let out = XData::<T::Real>::zeros(app(), &out_shape).unwrap();
                let mut norm = NormN::new(&x, &out, NormParams::new(order).along(axis).kernels_only(kernels));
                norm.init().unwrap();
                norm.launch().unwrap();
                let want = along_ref(&host, axis, |line| Complex64::new(norm_ref(line, order), 0.0));
                let got = fetch(&out);
                let what = format!("{} {shape:?} axis {axis} {order:?} via {:?}", T::NAME, norm.strategy());
                for (g, w) in got.iter().zip(want.iter()) {
                    check_norm(g.re, w.re, tolerance::<T>(shape[axis]), &what);
                }
            }
        }
    }
}

#[test]
fn norms_along_every_axis() {
    for_each_element!(norms_along_axes);
}

#[test]
fn strided_views_are_gathered_or_read_in_place() {
    let mut rng = Rng::new(24);
    let (x, host) = random::<f64>(&mut rng, &[129, 257]);
    let all: Vec<Complex64> = host.iter().copied().collect();
    // The transpose covers the same elements in another order: one merged axis, no gather.
    let mut t = NormN::new(&x.t(), &XData::zeros(app(), &[]).unwrap(), NormParams::default());
    t.init().unwrap();
    assert!(!t.strategy().unwrap().gathered, "{:?}", t.strategy());
    // A window with gaps between its rows is gathered into contiguous scratch first.
    let window = x.slice_axis(1, 5..200).unwrap();
    let want: Vec<Complex64> = host.slice(ndarray::s![.., 5..200]).iter().copied().collect();
    for kernels in PATHS {
        let out = XData::<f64>::zeros(app(), &[]).unwrap();
        let mut w = NormN::new(&window, &out, NormParams::new(NormOrder::P(3.0)).kernels_only(kernels));
        w.init().unwrap();
        w.launch().unwrap();
        assert!(w.strategy().unwrap().gathered, "{:?}", w.strategy());
        let what = format!("window via {:?}", w.strategy());
        check_norm(out.to_vec().unwrap()[0], norm_ref(&want, NormOrder::P(3.0)), tolerance::<f64>(want.len()), &what);
    }
    let whole = NormN::apply(&x.t(), NormParams::new(NormOrder::P(2.0))).unwrap().to_vec().unwrap()[0];
    check_norm(whole, norm_ref(&all, NormOrder::P(2.0)), tolerance::<f64>(all.len()), "transposed");
}

fn dot_ref(x: &[Complex64], y: &[Complex64], conjugate: bool) -> (Complex64, f64) {
    let mut s = Complex64::new(0.0, 0.0);
    let mut mag = 0.0;
    for (a, b) in x.iter().zip(y) {
        s += if conjugate { a.conj() } else { *a } * b;
        mag += a.norm() * b.norm();
    }
    (s, mag)
}

fn dots_of_random_vectors<T: Element>() {
    let mut rng = Rng::new(25);
    for &n in LENGTHS {
        let (x, hx) = random::<T>(&mut rng, &[n]);
        let (y, hy) = random::<T>(&mut rng, &[n]);
        let (vx, vy): (Vec<Complex64>, Vec<Complex64>) = (hx.iter().copied().collect(), hy.iter().copied().collect());
        let c = if T::IS_COMPLEX { 4.0 } else { 1.0 };
        let tol = c * tolerance::<T>(n);
        let mut results = Vec::new();
        for (kind, kernels) in [DotKind::Plain, DotKind::Conjugated].into_iter().flat_map(|d| PATHS.map(|k| (d, k))) {
            let conjugate = kind == DotKind::Conjugated && T::IS_COMPLEX;
            let params = DotParams::new(kind).kernels_only(kernels);
            let got = Dot::apply(&x, &y, params).unwrap().to_vec().unwrap()[0].to_c64();
            let (want, mag) = dot_ref(&vx, &vy, conjugate);
            let err = (got - want).norm();
            assert!(
                err <= tol * mag,
                "{} n={n} {kind:?} kernels only {kernels}: got {got}, expected {want} (|Δ| {err:e} > {:e})",
                T::NAME,
                tol * mag
            );
            results.push((got, err));
        }
        if T::IS_COMPLEX && n > 1 {
            let ((plain, e1), (conj, e2)) = (results[0], results[2]);
            assert!(
                (plain - conj).norm() > 10.0 * (e1 + e2),
                "{} n={n}: dotu {plain} and dotc {conj} should differ by far more than their errors",
                T::NAME
            );
        }
    }
}

#[test]
fn dots_match_reference_and_dotc_differs_from_dotu() {
    for_each_element!(dots_of_random_vectors);
}

fn dots_along_axes<T: Element>() {
    let mut rng = Rng::new(26);
    for shape in [&[7usize, 129, 33][..], &[300, 517]] {
        let (x, hx) = random::<T>(&mut rng, shape);
        let (y, hy) = random::<T>(&mut rng, shape);
        for (axis, kernels) in (0..shape.len()).flat_map(|a| PATHS.map(|k| (a, k))) {
            let out_shape: Vec<usize> = [&shape[..axis], &shape[axis + 1..]].concat();
            let out = XData::<T>::zeros(app(), &out_shape).unwrap();
            let params = DotParams::new(DotKind::Conjugated).along(axis).kernels_only(kernels);
            let mut dot = Dot::new(&x, &y, &out, params);
            dot.init().unwrap();
            dot.launch().unwrap();
            let got = fetch(&out);
            let lines = |h: &ndarray::ArrayD<Complex64>| -> Vec<Vec<Complex64>> {
                h.lanes(ndarray::Axis(axis)).into_iter().map(|l| l.to_vec()).collect()
            };
            let tol = if T::IS_COMPLEX { 4.0 } else { 1.0 } * tolerance::<T>(shape[axis]);
            for (g, (lx, ly)) in got.iter().zip(lines(&hx).iter().zip(lines(&hy))) {
                let (want, mag) = dot_ref(lx, &ly, T::IS_COMPLEX);
                assert!((g - want).norm() <= tol * mag, "{} {shape:?} axis {axis}: got {g}, expected {want}", T::NAME);
            }
        }
    }
}

#[test]
fn dots_along_every_axis() {
    for_each_element!(dots_along_axes);
}

#[test]
fn bad_input_is_named() {
    let x = XData::<f32>::zeros(app(), &[4, 5]).unwrap();
    for p in [0.5, -1.0, f64::NAN] {
        let err = NormN::apply(&x, NormParams::new(NormOrder::P(p))).unwrap_err();
        assert!(matches!(err, cliper::Error::InvalidArgument { .. }), "{err:?}");
        assert!(err.to_string().contains(&format!("p = {p}")), "{err}");
    }
    let y = XData::<f32>::zeros(app(), &[5, 4]).unwrap();
    let err = Dot::apply(&x, &y, DotParams::new(DotKind::Plain)).unwrap_err().to_string();
    assert!(err.contains("[4, 5]") && err.contains("[5, 4]"), "{err}");
    let wrong = XData::<f32>::zeros(app(), &[5]).unwrap();
    let err = NormN::new(&x, &wrong, NormParams::new(NormOrder::P(2.0)).along(1)).init().unwrap_err();
    assert!(matches!(err, cliper::Error::Shape { .. }) && err.to_string().contains("[4]"), "{err}");
    let err = NormN::apply(&x, NormParams::new(NormOrder::Inf).along(2)).unwrap_err().to_string();
    assert!(err.contains("axis 2") && err.contains("[4, 5]"), "{err}");
    let err = Dot::new(&x, &x, &XData::zeros(app(), &[4]).unwrap(), DotParams::default().along(7))
        .init()
        .unwrap_err()
        .to_string();
    assert!(err.contains("axis 7"), "{err}");
    let mut not_ready = NormN::new(&x, &XData::zeros(app(), &[]).unwrap(), NormParams::new(NormOrder::Inf));
    assert!(matches!(not_ready.launch().unwrap_err(), cliper::Error::NotInitialized { .. }));
}
