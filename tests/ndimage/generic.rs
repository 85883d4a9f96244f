//! scipy.ndimage.generic_filter with numpy's reductions against scipy (tests/fixtures/make_generic_filter.py,
//! scipy 1.17 calling numpy's functions on float64 windows). The minimum, maximum, peak-to-peak and median pick
//! (or average two of) the window's values: exact in float64, and in float32 equal to scipy's value rounded to
//! float32 (the inputs are float32-exact; the mean of two float32 values rounds once either way). Sums, products, means and variances add in another
//! order than numpy's pairwise sums: float64 within 1e-12 relative (+1e-14 absolute, for results near 0), float32
//! within 2e-6 relative + 2e-6 absolute (a few float32 roundings of values of magnitude ≤ 1 over ≤ 27 taps).
//! NaN and ±inf must land where numpy puts them (NaN through min, max, median and ptp).

use crate::common::app;
use cliper::{
    Border, Footprint, GenericFilter, GenericParams, GenericStrategy, HostArray, RealElement, WindowFunction, XData,
    read_npy,
};
use ndarray::ArrayD;

fn fixture(name: &str) -> ArrayD<f64> {
    match read_npy(format!("{}/tests/fixtures/generic/{name}.npy", env!("CARGO_MANIFEST_DIR"))).unwrap() {
        HostArray::F64(a) => a,
        other => panic!("{name}: {:?}", other.dtype()),
    }
}

fn footprint(name: &str) -> Footprint {
    let a = fixture(name);
    Footprint::new(a.shape(), a.iter().map(|&v| v != 0.0).collect()).unwrap()
}

fn border(mode: &str, cval: f64) -> Border {
    match Border::scipy(mode).unwrap() {
        Border::Constant(_) => Border::Constant(cval),
        b => b,
    }
}

fn cases() -> Vec<(&'static str, &'static str, GenericParams)> {
    use WindowFunction::{Max, Mean, Median, Min, Prod, Ptp, Std, Sum, Var};
    let g = GenericParams::new;
    vec![
        ("sum3_reflect", "x2", g(Sum).size(&[3])),
        ("prod2_nearest", "x2", g(Prod).size(&[2]).border(border("nearest", 0.0))),
        ("mean3x5_wrap", "x2", g(Mean).size(&[3, 5]).border(border("wrap", 0.0))),
        ("var5_mirror", "x2", g(Var).size(&[5]).border(border("mirror", 0.0))),
        ("std_ball_nearest", "x2", g(Std).footprint(footprint("ball")).border(border("nearest", 0.0))),
        ("min_cross_constant", "x2", g(Min).footprint(footprint("cross")).border(border("constant", -0.5))),
        ("max_ell_origin", "x2", g(Max).footprint(footprint("ell")).origin(&[1, 0])),
        ("ptp4_reflect", "x2", g(Ptp).size(&[4])),
        ("median4_ties", "i2", g(Median).size(&[4])),
        ("median_cross_ties", "i2", g(Median).footprint(footprint("cross")).border(border("wrap", 0.0))),
        ("mean333_3d", "x3", g(Mean).size(&[3])),
        ("median233_3d", "x3", g(Median).size(&[2, 3, 3]).border(border("nearest", 0.0))),
        ("var_batched_133", "x3", g(Var).size(&[3]).rank(2)),
        ("nan_sum3", "n2", g(Sum).size(&[3])),
        ("nan_min3", "n2", g(Min).size(&[3]).border(border("nearest", 0.0))),
        ("nan_max_cross", "n2", g(Max).footprint(footprint("cross"))),
        ("nan_median3", "n2", g(Median).size(&[3]).border(border("mirror", 0.0))),
        ("nan_ptp2", "n2", g(Ptp).size(&[2]).border(border("constant", 0.25))),
    ]
}

fn run<T: RealElement>(params: &GenericParams, input: &ArrayD<f64>) -> Vec<f64> {
    let x = XData::from_ndarray(app(), &input.mapv(|v| T::from_c64(v.into()))).unwrap();
    let y = GenericFilter::apply(&x, params.clone()).unwrap();
    y.to_vec().unwrap().iter().map(|v| v.to_c64().re).collect()
}

/// Whether `got` is `want` within the case's tolerance (NaN where numpy has NaN, infinities exactly).
/// float32 results are scipy's float64 value rounded once to float32 (as scipy's own output cast would).
fn close<T: RealElement>(function: WindowFunction, got: f64, want: f64) -> bool {
    let want = if T::NAME == "f64" { want } else { want as f32 as f64 };
    let picks = matches!(function, WindowFunction::Min | WindowFunction::Max | WindowFunction::Median);
    if want.is_nan() || got.is_nan() || want.is_infinite() || picks {
        return got == want || (got.is_nan() && want.is_nan());
    }
    let (relative, absolute) = if T::NAME == "f64" { (1e-12, 1e-14) } else { (2e-6, 2e-6) };
    (got - want).abs() <= relative * want.abs() + absolute
}

fn check<T: RealElement>() {
    for (name, input, params) in cases() {
        let want = fixture(name);
        let got = run::<T>(&params, &fixture(input));
        let wrong: Vec<String> = got
            .iter()
            .zip(want.iter())
            .enumerate()
            .filter(|(_, (g, w))| !close::<T>(params.function, **g, **w))
            .take(5)
            .map(|(i, (g, w))| format!("[{i}] {g} vs scipy {w}"))
            .collect();
        assert!(wrong.is_empty(), "{name} ({}): {wrong:?}", T::NAME);
    }
}

#[test]
fn generic_filter_reductions_equal_scipy_in_f32() {
    check::<f32>();
}

#[test]
fn generic_filter_reductions_equal_scipy_in_f64() {
    check::<f64>();
}

/// An odd window's median runs as median_filter's selection and a NaN pass (the fixtures above check its values,
/// NaN and ±inf windows included); an even one keeps the bisection, which averages the middle pair.
#[test]
fn an_odd_median_runs_as_median_filter_then_nan_windows() {
    let x = XData::<f32>::zeros(app(), &[6, 7]).unwrap();
    let y = XData::<f32>::zeros(app(), &[6, 7]).unwrap();
    for (size, want) in [
        (3, GenericStrategy::MedianFilterThenNan { taps: 9 }),
        (2, GenericStrategy::Taps { function: WindowFunction::Median, taps: 4 }),
    ] {
        let mut f = GenericFilter::new(&x, &y, GenericParams::new(WindowFunction::Median).size(&[size]));
        cliper::Process::run(&mut f).unwrap();
        assert_eq!(f.strategy(), Some(want));
    }
}

#[test]
fn empty_arrays_and_refusals() {
    let empty = XData::<f32>::zeros(app(), &[0, 5]).unwrap();
    let y = XData::<f32>::zeros(app(), &[0, 5]).unwrap();
    let mut f = GenericFilter::new(&empty, &y, GenericParams::new(WindowFunction::Mean));
    cliper::Process::run(&mut f).unwrap();
    assert_eq!(f.strategy(), Some(GenericStrategy::Nothing));
    let x = XData::<f32>::zeros(app(), &[6, 7]).unwrap();
    let e = GenericFilter::apply(&x, GenericParams::new(WindowFunction::Sum).size(&[3, 3, 3])).unwrap_err().to_string();
    assert!(e.contains("generic_filter") && e.contains("input's 2 axes"), "{e}");
    let e = GenericFilter::apply(&x, GenericParams::new(WindowFunction::Sum).origin(&[2])).unwrap_err().to_string();
    assert!(e.contains("origin 2 moves the centre out of a window of size 3"), "{e}");
    let mut same = GenericFilter::new(&x, &x, GenericParams::new(WindowFunction::Sum));
    let e = cliper::Process::run(&mut same).unwrap_err().to_string();
    assert!(e.contains("overlaps the input"), "{e}");
}
