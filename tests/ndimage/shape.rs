//! numpy's basic indexing and nibabel's slicer (tests/fixtures/make_shape.py): `Slice` against numpy's `a[...]`
//! on a 13×17×11 array (steps, negative steps and bounds, integer indices, `...`, empty and clamped ranges) in
//! float64 and float32, refusals naming the axis, the shape and the entry, and the geometry a slice keeps against
//! nibabel's `img.slicer` on an oblique NIfTI; `reorient --to CODE` against nibabel's `as_reoriented` on a permuted
//! L-P-I volume and an oblique one.
//!
//! Tolerances: a slice or reorientation copies values, so the data are exact. Affines: nibabel composes its affine
//! in float64 from the same numbers by other operations (a matrix product with the slicing or orientation
//! transform, ours the origin from `Geometry::position` and scaled unit directions): 1e-12 absolute on entries ≤ 35.

use crate::common::app;
use cliper::chain::Op;
use cliper::{Geometry, HostArray, Slice, SliceSpec, StatKind, StatParams, Statistic, XData, read_image, read_npy};
use ndarray::ArrayD;

fn fixture_path(name: &str) -> String {
    format!("{}/tests/fixtures/shape/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn real(name: &str) -> ArrayD<f64> {
    match read_npy(fixture_path(&format!("{name}.npy"))).unwrap() {
        HostArray::F64(a) => a,
        HostArray::F32(a) => a.mapv(f64::from),
        HostArray::I64(a) => a.mapv(|v| v as f64), // numpy's indices, all below 2^53
        other => panic!("{name} holds {:?}", other.dtype()),
    }
}

/// The fixture's cases: name and numpy index text.
fn slices() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(fixture_path("slices.txt")).unwrap();
    text.lines().filter_map(|l| l.split_once('\t')).map(|(n, t)| (n.to_string(), t.to_string())).collect()
}

#[test]
fn slices_equal_numpy_in_f64_and_f32() {
    let a3 = real("a3");
    let x64 = XData::from_ndarray(app(), &a3).unwrap();
    let x32 = XData::from_ndarray(app(), &a3.mapv(|v| v as f32)).unwrap();
    for (name, text) in slices() {
        let spec: SliceSpec = text.parse().unwrap();
        let want = real(&format!("slice_{name}"));
        let got = Slice::apply(&x64, &spec).unwrap().to_ndarray().unwrap();
        assert_eq!(got, want, "{name}: {text}");
        let got = Slice::apply(&x32, &spec).unwrap().to_ndarray().unwrap();
        assert_eq!(got, want.mapv(|v| v as f32), "{name} (float32): {text}");
    }
}

#[test]
fn slices_of_a_strided_view_read_through_its_strides() {
    // The input a transposed view: the gather's strides are the view's times the steps.
    let a3 = real("a3");
    let x = XData::from_ndarray(app(), &a3).unwrap();
    let view = x.permuted_axes(&[2, 0, 1]).unwrap();
    let got = Slice::apply(&view, &"::-2, 3:9, 5".parse().unwrap()).unwrap().to_ndarray().unwrap();
    let permuted = a3.view().permuted_axes(vec![2, 0, 1]);
    let want = permuted.slice(ndarray::s![..;-2, 3..9, 5]).to_owned().into_dyn();
    assert_eq!(got, want);
}

#[test]
fn slice_refusals_name_the_axis_the_shape_and_the_entry() {
    let x = XData::<f32>::zeros(app(), &[13, 17, 11]).unwrap();
    for (text, says) in [
        (":, ::0", "axis 1 of shape [13, 17, 11]: step 0"),
        ("1, 2, 3, 4", "4 entries for data of shape [13, 17, 11]"),
        (":, -18", "index -18 is out of bounds for axis 1 with size 17"),
        ("..., 11", "index 11 is out of bounds for axis 2 with size 11"),
    ] {
        let err = Slice::apply(&x, &text.parse().unwrap()).unwrap_err().to_string();
        assert!(err.contains(says), "{text}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    for (text, says) in [("1:2:3:4", "more than two `:`"), ("..., 1, ...", "more than one `...`"), ("a:", "`a`")] {
        let err = text.parse::<SliceSpec>().unwrap_err().to_string();
        assert!(err.contains(says), "{text}: {err}");
    }
}

fn assert_affine(got: [[f64; 4]; 4], want: &ArrayD<f64>, what: &str) {
    for (r, row) in got.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            assert!((v - want[[r, c]]).abs() <= 1e-12, "{what}: affine {got:?} vs nibabel {want}");
        }
    }
}

fn sliced_geometry(text: &str, shape: &[usize], output: &[usize], geometry: &Geometry) -> Geometry {
    let op: Op = toml::from_str(&format!("op = 'slice'\nslice = '{text}'")).unwrap();
    op.geometry(geometry, shape, output, false).expect("the slice keeps a geometry")
}

#[test]
fn slice_geometry_equals_nibabels_slicer() {
    let image = read_image(fixture_path("oblique.nii")).unwrap();
    let geometry = image.geometry.unwrap();
    let shape = image.array.shape().to_vec();
    assert_eq!(shape, [11, 17, 13]);
    // nibabel's [2:11, ::-3, -2::-2] is cliper's reversed index.
    let steps = sliced_geometry("-2::-2, ::-3, 2:11", &shape, &[5, 6, 9], &geometry);
    assert_affine(steps.affine(), &real("nib_steps_affine"), "steps");
    // An integer index on the slice axis: the plane where nibabel's 4:5 lies.
    let plane = sliced_geometry("4", &shape, &[17, 13], &geometry);
    assert_affine(plane.affine(), &real("nib_plane_affine"), "plane");
    // On the row axis: a [Z, X] image whose rows run along the volume's slices, its implicit slice axis the
    // volume's rows — nibabel's affine with its j and k columns swapped.
    let row_plane = sliced_geometry(":, 6", &shape, &[11, 13], &geometry);
    let want = real("nib_row_plane_affine");
    let swapped = want.select(ndarray::Axis(1), &[0, 2, 1, 3]);
    assert_affine(row_plane.affine(), &swapped, "row plane");
}

#[test]
fn slice_geometry_of_series_keeps_or_drops_by_the_rule() {
    let g = Geometry { time_step: Some(2.0), ..Geometry::from_spacing([3.0, 1.0, 0.5]) };
    // Every other volume of a series: the time step doubles; the spatial geometry stays.
    let every_other = sliced_geometry("::2", &[6, 4, 5, 7], &[3, 4, 5, 7], &g);
    assert_eq!((every_other.time_step, every_other.spacing), (Some(4.0), g.spacing));
    // One volume of a series: a volume without a time step.
    let volume = sliced_geometry("3", &[6, 4, 5, 7], &[4, 5, 7], &g);
    assert_eq!((volume.time_step, volume.spacing), (None, g.spacing));
    // A spatial axis dropped from a series would make time spatial: no geometry.
    let op: Op = toml::from_str("op = 'slice'\nslice = ':, :, 2'").unwrap();
    assert_eq!(op.geometry(&g, &[6, 4, 5, 7], &[6, 4, 7], false), None);
}

#[test]
fn transforms_keep_geometry_only_off_the_spatial_axes() {
    let g = Geometry { time_step: Some(2.0), ..Geometry::from_spacing([3.0, 1.0, 0.5]) };
    let series = [6, 4, 5, 7];
    for (step, axes, keeps, time_step) in [
        ("ifft", "[0]", true, None),       // over time: the volumes stay, time is now frequency
        ("ifft", "[-2, -1]", false, None), // over the image axes
        ("fft", "[]", true, Some(2.0)),    // no axis transformed
        ("irfft", "[0]", true, None),
    ] {
        let op: Op = toml::from_str(&format!("op = '{step}'\naxes = {axes}")).unwrap();
        let got = op.geometry(&g, &series, &series, false);
        assert_eq!(got.is_some(), keeps, "{step} over {axes}");
        if let Some(kept) = got {
            assert_eq!((kept.spacing, kept.time_step), (g.spacing, time_step), "{step} over {axes}");
        }
    }
    let every: Op = toml::from_str("op = 'ifft'").unwrap();
    assert_eq!(every.geometry(&g, &series, &series, false), None);
}

/// One row of make_shape.py's REDUCE table: fixture, input, kind, axes (`None`: every one), keepdims, ddof.
type ReductionCase = (&'static str, &'static str, StatKind, Option<&'static [usize]>, bool, f64);

const REDUCTIONS: &[ReductionCase] = &[
    ("sum_all", "a3", StatKind::Sum, None, false, 0.0),
    ("mean_0", "a3", StatKind::Mean, Some(&[0]), false, 0.0),
    ("var_02_ddof1", "a3", StatKind::Var, Some(&[0, 2]), false, 1.0),
    ("std_1_keep", "a3", StatKind::Std, Some(&[1]), true, 0.0),
    ("min_m1", "a3", StatKind::Min, Some(&[2]), false, 0.0),
    ("max_all", "a3", StatKind::Max, None, false, 0.0),
    ("prod_1", "a3+0.5", StatKind::Prod, Some(&[1]), false, 0.0),
    ("argmax_1", "a3", StatKind::ArgMax, Some(&[1]), false, 0.0),
    ("argmin_all", "a3", StatKind::ArgMin, None, false, 0.0),
    ("nan_max_0", "nan3", StatKind::Max, Some(&[0]), false, 0.0),
    ("nan_argmax_1", "nan3", StatKind::ArgMax, Some(&[1]), false, 0.0),
    ("nan_argmin_all", "nan3", StatKind::ArgMin, None, false, 0.0),
    ("nan_mean_2", "nan3", StatKind::Mean, Some(&[2]), false, 0.0),
    ("ties_argmax_1", "ties", StatKind::ArgMax, Some(&[1]), false, 0.0),
    ("ties_argmax_0", "ties", StatKind::ArgMax, Some(&[0]), false, 0.0),
    ("ties_argmin_all", "ties", StatKind::ArgMin, None, false, 0.0),
];

/// `got` equals numpy's `want` within `rel` of the largest magnitude of `want`, NaN where numpy has NaN.
fn assert_close(got: &ArrayD<f64>, want: &ArrayD<f64>, rel: f64, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    let scale = want.iter().filter(|v| v.is_finite()).fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
    for (g, w) in got.iter().zip(want) {
        assert!(g.is_nan() == w.is_nan() && (w.is_nan() || (g - w).abs() <= rel * scale), "{what}: {g} vs {w}");
    }
}

#[test]
fn reductions_equal_numpy_in_f64_and_f32() {
    // Tolerances: float64 sums of ≤ 2431 terms in [0, 1.5), chunked here and pairwise in numpy: observed ~1e-15
    // relative; 1e-12. float32 accumulates in float32 as numpy does, both within ~n·2⁻²⁴ of the float64 value
    // (n ≤ 2431 terms, here compared with numpy's float64): 2e-4 relative for the sums and products (a product of
    // 17 factors in [0.5, 1.5) loses ~17 ulps), exact for min, max and the indices.
    // Each case by both first passes: one work-item per chunk (PoCL's default) and whole work-groups (GPUs').
    for (&(name, source, kind, axes, keepdims, ddof), groups) in
        REDUCTIONS.iter().flat_map(|case| [(case, false), (case, true)])
    {
        let data = match source {
            "a3+0.5" => real("a3").mapv(|v| v + 0.5),
            other => real(other),
        };
        let want = real(&format!("reduce_{name}"));
        let mut params = StatParams::new(kind).keepdims(keepdims).ddof(ddof).groups(Some(groups));
        if let Some(axes) = axes {
            params = params.axes(axes);
        }
        let x64 = XData::from_ndarray(app(), &data).unwrap();
        let x32 = XData::from_ndarray(app(), &data.mapv(|v| v as f32)).unwrap();
        let (got64, got32) = if kind.gives_indices() {
            let a = Statistic::<f64, f64>::apply(&x64, &params).unwrap().to_ndarray().unwrap();
            let b = Statistic::<f32, f64>::apply(&x32, &params).unwrap().to_ndarray().unwrap();
            (a, b)
        } else {
            let a = Statistic::<f64, f64>::apply(&x64, &params).unwrap().to_ndarray().unwrap();
            let b = Statistic::<f32, f32>::apply(&x32, &params).unwrap().to_ndarray().unwrap().mapv(f64::from);
            (a, b)
        };
        let exact = matches!(kind, StatKind::Min | StatKind::Max | StatKind::ArgMin | StatKind::ArgMax);
        assert_close(&got64, &want, if exact { 0.0 } else { 1e-12 }, name);
        let want32 = if exact && !kind.gives_indices() { want.mapv(|v| v as f32 as f64) } else { want.clone() };
        assert_close(&got32, &want32, if exact { 0.0 } else { 2e-4 }, &format!("{name} (float32)"));
    }
}

#[test]
fn reductions_of_no_elements_and_long_axes() {
    // numpy: sum of none 0, prod 1, mean NaN (with a warning), var NaN; min/max/argmax raise.
    let empty = XData::<f64>::zeros(app(), &[0, 5]).unwrap();
    let along0 = |kind| Statistic::<f64, f64>::apply(&empty, &StatParams::new(kind).axes(&[0]));
    assert_eq!(along0(StatKind::Sum).unwrap().to_vec().unwrap(), vec![0.0; 5]);
    assert_eq!(along0(StatKind::Prod).unwrap().to_vec().unwrap(), vec![1.0; 5]);
    assert!(along0(StatKind::Mean).unwrap().to_vec().unwrap().iter().all(|v| v.is_nan()));
    assert!(along0(StatKind::Var).unwrap().to_vec().unwrap().iter().all(|v| v.is_nan()));
    let err = along0(StatKind::Max).err().unwrap().to_string();
    assert!(err.contains("max of no elements (shape [0, 5], axes [0])"), "{err}");
    // Along axis 1 of the empty array there are no outputs: an empty result, not a refusal (numpy agrees).
    let none = Statistic::<f64, f64>::apply(&empty, &StatParams::new(StatKind::Max).axes(&[1])).unwrap();
    assert_eq!(none.shape(), &[0]);
    // A long reduction cut into many chunks, its states merged in order: the first maximum of 300 001 values
    // where the maximum is reached three times, and the mean and variance against float64 closed forms.
    let n = 300_001usize;
    let mut values: Vec<f64> = (0..n).map(|i| (i % 1000) as f64).collect();
    for at in [123_456, 200_000, 299_999] {
        values[at] = 5000.0;
    }
    let x = XData::from_slice(app(), &[n], &values).unwrap();
    let first = Statistic::<f64, f64>::apply(&x, &StatParams::new(StatKind::ArgMax)).unwrap();
    assert_eq!(first.to_vec().unwrap(), vec![123_456.0]);
    let mean = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
    let got = Statistic::<f64, f64>::apply(&x, &StatParams::new(StatKind::Var)).unwrap().to_vec().unwrap()[0];
    assert!((got - var).abs() <= 1e-10 * var, "{got} vs {var}");
    // Refusals name the axis and the shape.
    let err = Statistic::<f64, f64>::output_shape(&[3, 4], &StatParams::new(StatKind::Sum).axes(&[2])).unwrap_err();
    assert!(err.to_string().contains("[3, 4]"), "{err}");
    let err = Statistic::<f64, f64>::output_shape(&[3, 4], &StatParams::new(StatKind::Sum).axes(&[1, 1])).unwrap_err();
    assert!(err.to_string().contains("axis 1 is given twice"), "{err}");
}

#[test]
fn reduce_geometry_stays_only_off_the_spatial_axes() {
    let g = Geometry { time_step: Some(2.0), ..Geometry::from_spacing([3.0, 1.0, 0.5]) };
    let series = [6, 4, 5, 7];
    let step = |text: &str| -> Op { toml::from_str(&format!("op = 'reduce'\n{text}")).unwrap() };
    // A mean over time: the volume where it was, without the time step.
    let mean = step("operation = 'mean'\naxis = [0]").geometry(&g, &series, &[4, 5, 7], false).unwrap();
    assert_eq!((mean.spacing, mean.time_step), (g.spacing, None));
    // Over a spatial axis, or everything: none.
    assert_eq!(step("operation = 'max'\naxis = [0, -1]").geometry(&g, &series, &[4, 5], false), None);
    assert_eq!(step("operation = 'sum'").geometry(&g, &series, &[], false), None);
}

#[test]
fn stack_geometry_only_when_the_new_axis_comes_before_the_spatial_ones() {
    let g = Geometry::from_spacing([3.0, 1.0, 0.5]);
    let step = |axis: isize| -> Op { toml::from_str(&format!("op = 'stack'\naxis = {axis}")).unwrap() };
    // Volumes into a series: the volumes' geometry.
    assert_eq!(step(0).geometry(&g, &[4, 5, 7], &[3, 4, 5, 7], false), Some(g));
    // Planes into a volume, or a new axis among the spatial ones: no spacing for it, no geometry.
    assert_eq!(step(0).geometry(&g, &[5, 7], &[3, 5, 7], false), None);
    assert_eq!(step(-1).geometry(&g, &[4, 5, 7], &[4, 5, 7, 3], false), None);
    // Data: numpy.stack along a middle axis.
    let a = XData::from_slice(app(), &[2, 3], &[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    let b = XData::from_slice(app(), &[2, 3], &[6.0f32, 7.0, 8.0, 9.0, 10.0, 11.0]).unwrap();
    let got = cliper::Stack::apply(&[a, b], 1).unwrap();
    assert_eq!(got.shape(), &[2, 2, 3]);
    assert_eq!(got.to_vec().unwrap(), vec![0.0, 1.0, 2.0, 6.0, 7.0, 8.0, 3.0, 4.0, 5.0, 9.0, 10.0, 11.0]);
}

/// `reorient` as a chain resolves, plans and runs it on a NIfTI fixture: the data (in cliper's order) and the
/// geometry the step leaves.
fn reoriented(name: &str, to: &str) -> (ArrayD<f64>, Geometry) {
    use cliper::chain::{AnyData, ElementKind};
    let path = fixture_path(&format!("{name}.nii"));
    let image = read_image(&path).unwrap();
    let geometry = image.geometry.unwrap();
    let shape = image.array.shape().to_vec();
    let op: Op = toml::from_str(&format!("op = 'reorient'\nto = '{to}'")).unwrap();
    let op = op.resolved(&shape, false, Some(&geometry)).unwrap();
    let x = AnyData::upload(app(), &image.array, ElementKind::F32, std::path::Path::new(&path)).unwrap();
    let (mut process, y) = op.plan(&[&x]).unwrap();
    process.run().unwrap();
    let moved = op.geometry(&geometry, &shape, y.shape(), false).expect("reorient keeps a geometry");
    (y.to_host().unwrap().to_elements::<f64>(&path).unwrap(), moved)
}

#[test]
fn reorient_to_axis_codes_equals_nibabels_as_reoriented() {
    // nibabel: img.as_reoriented(ornt_transform(io_orientation(img.affine), axcodes2ornt(code))). Exact permutes
    // and flips, so the data are equal; the affine within 1e-12 (see the module's tolerances).
    for name in ["permuted_lpi", "oblique"] {
        for code in ["LPS", "PIR", "RAS"] {
            let (data, geometry) = reoriented(name, code);
            assert_eq!(data, real(&format!("to_{code}_{name}")), "{name} to {code}");
            assert_affine(geometry.affine(), &real(&format!("to_{code}_{name}_affine")), &format!("{name} {code}"));
            assert_eq!(geometry.axis_codes(), code, "{name}");
        }
    }
}

#[test]
fn reorient_refuses_codes_that_name_no_orientation() {
    for code in ["LRS", "RAA", "RA", "RASI", "XYZ", "ras"] {
        let err = toml::from_str::<Op>(&format!("op = 'reorient'\nto = '{code}'")).unwrap_err().to_string();
        assert!(err.contains(&format!("axis codes `{code}`")), "{code}: {err}");
    }
}

/// Rows reduced by whole work-groups (`stat_group`, forced here; by default on GPUs: each output's elements one walk of unit stride; several
/// chunks per output, a tail shorter than the group) against float64 closed forms: sum, mean, min, max and std of
/// three rows of 70 001 values, the second holding a NaN (which every one of them must return for that row), and
/// the whole array's sum. Sums within 1e-12 relative (another addition order), extrema exact.
#[test]
fn long_rows_reduce_by_work_groups_as_numpy() {
    let (rows, n) = (3usize, 70_001usize);
    let mut values: Vec<f64> = (0..rows * n).map(|i| ((i * 7919) % 1009) as f64 - 400.0).collect();
    values[n + 31_337] = f64::NAN;
    let x = XData::from_slice(app(), &[rows, n], &values).unwrap();
    // Groups forced: the default takes them on GPUs only.
    let along = |kind| StatParams::new(kind).axes(&[1]).groups(Some(true));
    let mut sum = Statistic::<f64, f64>::new(&x, &XData::zeros(app(), &[rows]).unwrap(), along(StatKind::Sum));
    cliper::Process::init(&mut sum).unwrap();
    assert!(sum.strategy().unwrap().group > 0, "{}", sum.strategy().unwrap());
    for kind in [StatKind::Sum, StatKind::Mean, StatKind::Min, StatKind::Max, StatKind::Std] {
        let got = Statistic::<f64, f64>::apply(&x, &along(kind)).unwrap().to_vec().unwrap();
        for (r, g) in got.iter().enumerate() {
            let row = &values[r * n..(r + 1) * n];
            let mean = row.iter().sum::<f64>() / n as f64;
            let want = match kind {
                StatKind::Sum => row.iter().sum::<f64>(),
                StatKind::Mean => mean,
                StatKind::Min => row.iter().copied().fold(f64::INFINITY, f64::min),
                StatKind::Max => row.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                _ => (row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64).sqrt(),
            };
            if r == 1 {
                assert!(g.is_nan(), "{kind:?} of the row with a NaN: {g}");
            } else if matches!(kind, StatKind::Min | StatKind::Max) {
                assert_eq!(*g, want, "{kind:?} row {r}");
            } else {
                assert!((g - want).abs() <= 1e-12 * want.abs().max(1.0), "{kind:?} row {r}: {g} vs {want}");
            }
        }
    }
    let finite: Vec<f64> = values.iter().map(|v| if v.is_nan() { 0.5 } else { *v }).collect();
    let y = XData::from_slice(app(), &[rows, n], &finite).unwrap();
    let whole = StatParams::new(StatKind::Sum).groups(Some(true));
    let total = Statistic::<f64, f64>::apply(&y, &whole).unwrap().to_vec().unwrap()[0];
    let want: f64 = finite.iter().sum();
    assert!((total - want).abs() <= 1e-12 * want.abs(), "{total} vs {want}");
}
