//! Rank filters and grey morphology against scipy.ndimage (tests/fixtures/make_rank.py, scipy 1.17). A rank
//! filter picks one of its input values, so the results are exact: every element equal, in float32 (the inputs
//! are float32-exact) and float64, with ties (integer-valued inputs), every border mode, odd and even windows,
//! footprints and origins, 2-D and 3-D, batched, and each of the three algorithms (separable box, selection
//! network, bisection; and on CPU devices the host's sliding window and selection). Grey morphology with non-flat structures and the compositions (gradient, laplace,
//! top-hats) run on integer data with integer structures: their sums and differences are exact in both types.

use crate::common::app;
use cliper::{
    Border, Footprint, GreyMorphology, GreyOp, GreyParams, HostArray, RankFilter, RankKind, RankParams, RankStrategy,
    RealElement, XData, read_npy,
};
use ndarray::ArrayD;

fn fixture(name: &str) -> ArrayD<f64> {
    match read_npy(format!("{}/tests/fixtures/rank/{name}.npy", env!("CARGO_MANIFEST_DIR"))).unwrap() {
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

enum Case {
    Filter(RankParams),
    Grey(GreyParams),
}

fn cases() -> Vec<(&'static str, &'static str, Case, Option<&'static str>)> {
    use Case::{Filter, Grey};
    use RankKind::{Maximum, Median, Minimum, Percentile};
    let r = RankParams::new;
    vec![
        ("median3_reflect", "x2", Filter(r(Median).size(&[3])), Some("network")),
        ("median4_nearest_ties", "i2", Filter(r(Median).size(&[4]).border(border("nearest", 0.0))), None),
        ("median7_mirror", "x2", Filter(r(Median).size(&[7]).border(border("mirror", 0.0))), Some("network")),
        ("median3x5_wrap", "x2", Filter(r(Median).size(&[3, 5]).border(border("wrap", 0.0))), None),
        ("min15_constant", "x2", Filter(r(Minimum).size(&[15]).border(border("constant", -0.5))), Some("separable")),
        ("max4x6_reflect_ties", "i2", Filter(r(Maximum).size(&[4, 6])), Some("separable")),
        ("pct90_size5", "x2", Filter(r(Percentile(90.0)).size(&[5])), None),
        ("pct-20_size3_ties", "i2", Filter(r(Percentile(-20.0)).size(&[3]).border(border("nearest", 0.0))), None),
        ("rank-2_size3_ties", "i2", Filter(r(RankKind::Rank(-2)).size(&[3])), None),
        ("median_cross", "x2", Filter(r(Median).footprint(footprint_cross())), None),
        (
            "median_ball_origin",
            "x2",
            Filter(r(Median).footprint(footprint("ball")).origin(&[1, -1]).border(border("wrap", 0.0))),
            None,
        ),
        ("median13_bisect", "x2", Filter(r(Median).size(&[13])), Some("bisection")),
        (
            "pct30_big_constant",
            "x2",
            Filter(r(Percentile(30.0)).footprint(footprint("big")).border(border("constant", 0.25))),
            Some("bisection"),
        ),
        ("median555_3d", "x3", Filter(r(Median).size(&[5])), None), // a network on GPUs, bisection elsewhere
        ("min333_constant_3d", "x3", Filter(r(Minimum).size(&[3]).border(border("constant", 0.0))), Some("separable")),
        ("median_batched_3x3", "x3", Filter(r(Median).size(&[3]).rank(2)), None),
        ("max5x4x6_wrap_3d", "x3", Filter(r(Maximum).size(&[5, 4, 6]).border(border("wrap", 0.0))), Some("separable")),
        ("erosion5_ties", "i2", Grey(GreyParams::new(GreyOp::Erosion).size(&[5])), None),
        ("dilation4", "x2", Grey(GreyParams::new(GreyOp::Dilation).size(&[4])), None),
        (
            "dilation_ell_nearest",
            "x2",
            Grey(GreyParams::new(GreyOp::Dilation).footprint(footprint("ell")).border(border("nearest", 0.0))),
            None,
        ),
        ("opening3x4", "x2", Grey(GreyParams::new(GreyOp::Opening).size(&[3, 4])), None),
        ("closing_cross_ties", "i2", Grey(GreyParams::new(GreyOp::Closing).footprint(footprint_cross())), None),
        (
            "closing_ell_origin",
            "x2",
            Grey(GreyParams::new(GreyOp::Closing).footprint(footprint("ell")).origin(&[1, 0])),
            None,
        ),
        // Non-flat structures (scipy's `structure`) and the compositions.
        ("erosion_s3_ties", "i2", Grey(structured(GreyOp::Erosion, "s3")), None),
        ("dilation_sa_constant", "i2", Grey(structured(GreyOp::Dilation, "sa").border(border("constant", -1.0))), None),
        ("opening_s3", "i2", Grey(structured(GreyOp::Opening, "s3")), None),
        ("closing_sa_origin", "i2", Grey(structured(GreyOp::Closing, "sa").origin(&[1, 0])), None),
        (
            "dilation_sa_ell_mirror",
            "i2",
            Grey(structured(GreyOp::Dilation, "sa").footprint(footprint("ell")).border(border("mirror", 0.0))),
            None,
        ),
        ("erosion_sb_3d", "i3", Grey(structured(GreyOp::Erosion, "sb").border(border("wrap", 0.0))), None),
        ("gradient5", "i2", Grey(GreyParams::new(GreyOp::Gradient).size(&[5])), None),
        ("laplace_cross", "i2", Grey(GreyParams::new(GreyOp::Laplace).footprint(footprint_cross())), None),
        ("white_tophat4", "i2", Grey(GreyParams::new(GreyOp::WhiteTophat).size(&[4])), None),
        (
            "black_tophat_s3_nearest",
            "i2",
            Grey(structured(GreyOp::BlackTophat, "s3").border(border("nearest", 0.0))),
            None,
        ),
    ]
}

/// `op` with the structure of fixture `name` (its values; the footprint its box).
fn structured(op: GreyOp, name: &str) -> GreyParams {
    let s = fixture(name);
    GreyParams::new(op).structure(s.shape(), &s.iter().copied().collect::<Vec<_>>()).unwrap()
}

fn footprint_cross() -> Footprint {
    Footprint::new(&[3, 3], vec![false, true, false, true, true, true, false, true, false]).unwrap()
}

fn run<T: RealElement>(case: &Case, input: &ArrayD<f64>) -> (Vec<f64>, String) {
    let x = XData::from_ndarray(app(), &input.mapv(|v| T::from_c64(v.into()))).unwrap();
    let (y, strategy) = match case {
        Case::Filter(p) => {
            let y = XData::<T>::zeros(app(), input.shape()).unwrap();
            let mut f = RankFilter::new(&x, &y, p.clone());
            cliper::Process::run(&mut f).unwrap();
            (y, f.strategy().map(|s| format!("{s:?}")).unwrap_or_default())
        }
        Case::Grey(p) => (GreyMorphology::apply(&x, p.clone()).unwrap(), String::new()),
    };
    (y.to_vec().unwrap().iter().map(|v| v.to_c64().re).collect(), strategy.to_lowercase())
}

/// Every case against scipy, the rank filters twice: as planned (on CPU devices windows of more than 49 values
/// run on the host), and with the kernels only (`algorithm` names the kernel then).
fn check<T: RealElement>(only: Option<&[&str]>) {
    let cases = cases().into_iter().flat_map(|(name, input, case, algorithm)| {
        let kernels = match &case {
            Case::Filter(p) => Some((name, input, Case::Filter(p.clone().kernels_only(true)), algorithm)),
            Case::Grey(_) => None,
        };
        let cpu = app().device().kind == cliper::DeviceKind::Cpu;
        let planned = match (&case, algorithm) {
            (Case::Filter(_), Some("bisection")) if cpu => Some("host"),
            _ => algorithm,
        };
        std::iter::once((name, input, case, planned)).chain(kernels)
    });
    for (name, input, case, algorithm) in cases {
        if only.is_some_and(|o| !o.contains(&name)) {
            continue;
        }
        let want = fixture(name);
        let (got, strategy) = run::<T>(&case, &fixture(input));
        if let Some(a) = algorithm {
            assert!(strategy.contains(a), "{name}: expected the {a} path, planned {strategy}");
        }
        let wrong: Vec<String> = got
            .iter()
            .zip(want.iter())
            .enumerate()
            .filter(|(_, (g, w))| g != w)
            .take(5)
            .map(|(i, (g, w))| format!("[{i}] {g} vs scipy {w}"))
            .collect();
        assert!(wrong.is_empty(), "{name} ({}, {strategy}): {wrong:?}", T::NAME);
    }
}

#[test]
fn rank_filters_equal_scipy_in_f32() {
    check::<f32>(None);
}

/// float64: a few cases covering the three algorithms (each new window is a new program).
#[test]
fn rank_filters_equal_scipy_in_f64() {
    check::<f64>(Some(&[
        "median7_mirror",
        "min15_constant",
        "median13_bisect",
        "closing_ell_origin",
        "dilation_sa_ell_mirror",
        "black_tophat_s3_nearest",
    ]));
}

#[test]
fn the_planner_takes_the_cheapest_path() {
    let x = XData::<f32>::zeros(app(), &[20, 30]).unwrap();
    let plan = |p: RankParams| {
        let y = XData::<f32>::zeros(app(), &[20, 30]).unwrap();
        let mut f = RankFilter::new(&x, &y, p);
        cliper::Process::init(&mut f).unwrap();
        f.strategy().unwrap()
    };
    // A rank-0 box (a percentile of 0) is a minimum filter.
    assert_eq!(plan(RankParams::new(RankKind::Percentile(0.0)).size(&[9])), RankStrategy::Separable { passes: 2 });
    assert!(matches!(
        plan(RankParams::new(RankKind::Median).size(&[3])),
        RankStrategy::Network { taps: 9, operations: 40 }
    ));
}

#[test]
fn refusals_name_the_problem() {
    let x = XData::<f32>::zeros(app(), &[6, 7]).unwrap();
    let e = RankFilter::apply(&x, RankParams::new(RankKind::Rank(9)).size(&[3])).unwrap_err().to_string();
    assert!(e.contains("rank 9 is not within the footprint's 9 values"), "{e}");
    let e = RankFilter::apply(&x, RankParams::new(RankKind::Median).size(&[3, 3, 3])).unwrap_err().to_string();
    assert!(e.contains("input's 2 axes"), "{e}");
    let e = RankFilter::apply(&x, RankParams::new(RankKind::Median).origin(&[2])).unwrap_err().to_string();
    assert!(e.contains("origin 2 moves the centre out of a window of size 3"), "{e}");
    let e = RankFilter::apply(&x, RankParams::new(RankKind::Median).footprint(footprint_cross()).rank(1))
        .unwrap_err()
        .to_string();
    assert!(e.contains("a footprint of 1 axes") && e.contains("[3, 3]"), "{e}");
    let e = RankFilter::new(&x, &x, RankParams::new(RankKind::Median)).run_once().unwrap_err().to_string();
    assert!(e.contains("overlaps the input"), "{e}");
}

trait RunOnce {
    fn run_once(self) -> cliper::Result<()>;
}
impl<P: cliper::Process> RunOnce for P {
    fn run_once(mut self) -> cliper::Result<()> {
        self.run()
    }
}

/// tests/fixtures/nonfinite/NAME.npy (tests/fixtures/make_nonfinite.py): scipy's results for the three images of
/// inputs.npy (NaN; ±inf; both), stacked.
fn nonfinite(name: &str) -> ArrayD<f64> {
    match read_npy(format!("{}/tests/fixtures/nonfinite/{name}.npy", env!("CARGO_MANIFEST_DIR"))).unwrap() {
        HostArray::F64(a) => a,
        other => panic!("{name}: {:?}", other.dtype()),
    }
}

/// The operations of the NaN/inf fixtures, and which of the three images each is held to. The median only to the
/// ±inf one: where a window holds a NaN, scipy's answer is whatever its quickselect (NI_Select, a Hoare partition
/// whose scans stop at a NaN from either side) leaves at the middle, which cliper's selection networks do not
/// reproduce.
fn nonfinite_cases() -> Vec<(&'static str, Case, &'static [usize])> {
    use Case::{Filter, Grey};
    let grey = GreyParams::new;
    let all: &[usize] = &[0, 1, 2];
    vec![
        ("erosion3", Grey(grey(GreyOp::Erosion).size(&[3])), all),
        ("dilation3", Grey(grey(GreyOp::Dilation).size(&[3])), all),
        ("erosion_cross", Grey(grey(GreyOp::Erosion).footprint(footprint_cross())), all),
        ("dilation_cross", Grey(grey(GreyOp::Dilation).footprint(footprint_cross())), all),
        ("erosion_s3", Grey(structured(GreyOp::Erosion, "s3")), all),
        ("dilation_s3", Grey(structured(GreyOp::Dilation, "s3")), all),
        ("opening3", Grey(grey(GreyOp::Opening).size(&[3])), all),
        ("closing_cross", Grey(grey(GreyOp::Closing).footprint(footprint_cross())), all),
        ("gradient3", Grey(grey(GreyOp::Gradient).size(&[3])), all),
        ("white_tophat3", Grey(grey(GreyOp::WhiteTophat).size(&[3])), all),
        ("black_tophat_s3", Grey(structured(GreyOp::BlackTophat, "s3")), all),
        ("morphological_laplace_cross", Grey(grey(GreyOp::Laplace).footprint(footprint_cross())), all),
        ("minimum3", Filter(RankParams::new(RankKind::Minimum).size(&[3])), all),
        ("maximum3", Filter(RankParams::new(RankKind::Maximum).size(&[3])), all),
        ("median3", Filter(RankParams::new(RankKind::Median).size(&[3])), &[1]),
    ]
}

/// Every difference from scipy, per operation, in type `T`: NaN must meet NaN, ±inf the same infinity, finite
/// values be equal (integer inputs and structures: exact in both types).
fn nonfinite_differences<T: RealElement>() -> Vec<String> {
    let inputs = nonfinite("inputs");
    let mut report = vec![];
    for (name, case, images) in nonfinite_cases() {
        let want = nonfinite(name);
        for &k in images {
            let got = run::<T>(&case, &inputs.index_axis(ndarray::Axis(0), k).to_owned()).0;
            let wrong: Vec<String> = got
                .iter()
                .zip(want.index_axis(ndarray::Axis(0), k).iter())
                .enumerate()
                .filter(|(_, (g, w))| !(g == w || (g.is_nan() && w.is_nan())))
                .map(|(i, (g, w))| format!("[{}, {}] {g} vs scipy {w}", i / 9, i % 9))
                .collect();
            if !wrong.is_empty() {
                report.push(format!("{name} image {k} ({}): {} differ: {wrong:?}", T::NAME, wrong.len()));
            }
        }
    }
    report
}

/// NaN and ±inf at interior, edge and corner places (tests/fixtures/make_nonfinite.py) come out of grey morphology
/// and the minimum and maximum filters where scipy's come out, element for element: a footprint or a structure by
/// scipy's first-tap rule (rank_structured), a box by scipy's deque rerun on the lines that hold a NaN
/// (rank_line_nan). Before, 2 to 13 elements per operation differed in both types (NaN skipped by fmin/fmax or
/// the running minimum from +inf, a value scipy's deque keeps past a NaN missed).
#[test]
fn nan_and_infinities_spread_as_in_scipy() {
    let mut report = nonfinite_differences::<f32>();
    report.extend(nonfinite_differences::<f64>());
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// The same in 3-D with larger boxes (the row and block kernels run before the rerun), along z too, and the
/// constant, nearest and wrap borders (tests/fixtures/make_nonfinite.py's volume: NaN inside, on faces and at a
/// corner, +inf and −inf); element for element in both types.
#[test]
fn nan_in_volumes_spreads_as_in_scipy() {
    let volume = nonfinite("volume");
    let cases = [
        ("volume_min345", Case::Filter(RankParams::new(RankKind::Minimum).size(&[3, 4, 5]))),
        (
            "volume_max5_constant",
            Case::Filter(RankParams::new(RankKind::Maximum).size(&[5]).border(border("constant", 2.0))),
        ),
        (
            "volume_erosion4_nearest",
            Case::Grey(GreyParams::new(GreyOp::Erosion).size(&[4]).border(border("nearest", 0.0))),
        ),
        (
            "volume_dilation_wrap",
            Case::Grey(GreyParams::new(GreyOp::Dilation).size(&[2, 3, 6]).border(border("wrap", 0.0))),
        ),
    ];
    for (name, case) in cases {
        let want = nonfinite(name);
        for (got, ty) in [(run::<f32>(&case, &volume).0, "f32"), (run::<f64>(&case, &volume).0, "f64")] {
            let wrong: Vec<String> = got
                .iter()
                .zip(want.iter())
                .enumerate()
                .filter(|(_, (g, w))| !(*g == *w || (g.is_nan() && w.is_nan())))
                .map(|(i, (g, w))| format!("[{}] {g} vs scipy {w}", i))
                .collect();
            assert!(wrong.is_empty(), "{name} ({ty}): {} differ: {wrong:?}", wrong.len());
        }
    }
}
