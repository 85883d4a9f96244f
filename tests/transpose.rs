//! Transpose, ConjugateTranspose and Permute against float64 references (ndarray), on every element type.
//!
//! Tolerance: exact equality. These operations only move elements (conjugation flips a sign bit), so any
//! difference at all is a bug. Outputs start filled with a value the inputs never hold, so an element the
//! kernel skipped shows up. Shapes are deliberately not multiples of any tile size.

mod common;
use cliper::prelude::*;
use common::*;

const SHAPES: &[&[usize]] = &[&[1, 1], &[1, 517], &[517, 1], &[7, 129], &[257, 1023], &[3, 65, 33], &[2, 3, 31, 45]];

fn transpose_shapes<T: Element>() {
    let mut rng = Rng::new(1);
    for &shape in SHAPES {
        let (x, host) = random::<T>(&mut rng, shape);
        for conjugate in [false, true] {
            let out = poisoned::<T>(&Transpose::<T>::output_shape(shape).unwrap());
            let strategy = if conjugate {
                let mut t = ConjugateTranspose::new(&x, &out);
                t.init().unwrap();
                t.launch().unwrap();
                t.strategy()
            } else {
                let mut t = Transpose::new(&x, &out);
                t.init().unwrap();
                t.launch().unwrap();
                t.strategy()
            };
            let what = format!("{} transpose {shape:?} conj={conjugate} via {strategy:?}", T::NAME);
            assert_same(&fetch(&out), &transpose_ref(&host, conjugate && T::IS_COMPLEX), &what);
        }
    }
}

#[test]
fn transpose_matches_reference_for_all_types_and_shapes() {
    for_each_element!(transpose_shapes);
}

#[test]
fn planner_uses_the_tiled_kernel_for_real_transposes() {
    let mut rng = Rng::new(2);
    let (x, _) = random::<f32>(&mut rng, &[257, 1023]);
    let out = XData::<f32>::zeros(app(), &[1023, 257]).unwrap();
    let mut t = Transpose::new(&x, &out);
    t.init().unwrap();
    // CPUs move 16×16 blocks per work-item instead (faster on PoCL); explicit tiles still get copy_tiled.
    let cpu = app().device().kind == cliper::DeviceKind::Cpu;
    match t.strategy() {
        Some(CopyStrategy::Blocks { block: 16 }) => assert!(cpu),
        Some(CopyStrategy::Tiled(_)) => assert!(!cpu),
        other => panic!("{other:?}"),
    }
    let tiles = TransposeTiles { tile: 16, rows: 4 };
    let mut t = StridedCopy::new(&x.t(), &out, CopyParams::default().tiles(tiles));
    t.init().unwrap();
    assert_eq!(t.strategy(), Some(CopyStrategy::Tiled(tiles)));
    // Vectors need no tile: [1, n] -> [n, 1] is the same memory order.
    let (v, _) = random::<f32>(&mut rng, &[1, 517]);
    let vt = XData::<f32>::zeros(app(), &[517, 1]).unwrap();
    let mut t = Transpose::new(&v, &vt);
    t.init().unwrap();
    assert_eq!(t.strategy(), Some(CopyStrategy::Buffer));
}

fn transpose_of_view_roundtrips<T: Element>() {
    let mut rng = Rng::new(3);
    let (x, host) = random::<T>(&mut rng, &[3, 65, 129]);
    // Transposing the transposed view gives the original back, element for element.
    let back = Transpose::apply(&x.t()).unwrap();
    assert_same(&fetch(&back), &host, &format!("{} (x.t())ᵀ", T::NAME));
    // And the view itself reads as the transpose.
    assert_same(&fetch(&x.t()), &transpose_ref(&host, false), &format!("{} x.t()", T::NAME));
    assert_same(&fetch(&x.t().t()), &host, &format!("{} x.t().t()", T::NAME));
}

#[test]
fn transposing_a_transposed_view_gives_the_original() {
    for_each_element!(transpose_of_view_roundtrips);
}

fn strided_inputs_and_outputs<T: Element>() {
    let mut rng = Rng::new(4);
    let (x, host) = random::<T>(&mut rng, &[4, 257, 301]);
    use ndarray::{Axis, Slice};
    // A sliced, indexed view: x[1, 7..200, 3..298].
    let view = x.index_axis(0, 1).unwrap().slice_axis(0, 7..200).unwrap().slice_axis(1, 3..298).unwrap();
    let mut want = host.index_axis(Axis(0), 1).to_owned();
    want.slice_axis_inplace(Axis(0), Slice::from(7..200));
    want.slice_axis_inplace(Axis(1), Slice::from(3..298));
    let got = Transpose::apply(&view).unwrap();
    assert_same(&fetch(&got), &transpose_ref(&want, false), &format!("{} transpose of a sliced view", T::NAME));

    // Writing into a window of a larger array: the rest of it must stay untouched.
    let big = poisoned::<T>(&[300, 400]);
    let window = big.slice_axis(0, 5..300).unwrap().slice_axis(1, 11..204).unwrap();
    let mut t = ConjugateTranspose::new(&view, &window);
    t.init().unwrap();
    t.launch().unwrap();
    let got = fetch(&big);
    let sentinel = fetch(&poisoned::<T>(&[1]))[[0]];
    let wt = transpose_ref(&want, T::IS_COMPLEX);
    for ((i, j), v) in got.clone().into_dimensionality::<ndarray::Ix2>().unwrap().indexed_iter() {
        let inside = (5..300).contains(&i) && (11..204).contains(&j);
        let expected = if inside { wt[[i - 5, j - 11]] } else { sentinel };
        assert_eq!(*v, expected, "{} strided output at [{i}, {j}]", T::NAME);
    }
}

#[test]
fn strided_views_in_and_out() {
    for_each_element!(strided_inputs_and_outputs);
}

fn permutations<T: Element>() {
    let mut rng = Rng::new(5);
    for shape in [&[5usize, 67, 33][..], &[2, 1, 129, 7]] {
        let (x, host) = random::<T>(&mut rng, shape);
        let n = shape.len();
        let mut axes: Vec<usize> = (0..n).collect();
        // every permutation (Heap's algorithm)
        let mut perms = Vec::new();
        heap(n, &mut axes, &mut perms);
        for axes in perms {
            let out = poisoned::<T>(&Permute::<T>::output_shape(shape, &axes).unwrap());
            let mut p = Permute::new(&x, &out, &axes);
            p.init().unwrap();
            p.launch().unwrap();
            let want = host.clone().permuted_axes(ndarray::IxDyn(&axes)).as_standard_layout().to_owned();
            assert_same(
                &fetch(&out),
                &want,
                &format!("{} permute {shape:?} by {axes:?} via {:?}", T::NAME, p.strategy()),
            );
        }
    }
}

fn heap(k: usize, a: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    if k <= 1 {
        out.push(a.clone());
        return;
    }
    for i in 0..k {
        heap(k - 1, a, out);
        let j = if k.is_multiple_of(2) { i } else { 0 };
        a.swap(j, k - 1);
    }
}

#[test]
fn permute_matches_reference_for_every_axis_order() {
    for_each_element!(permutations);
}

#[test]
fn batches_beyond_grid_limits() {
    // 70 000 tiny matrices: more work-groups than one grid dimension of some GPUs allows (65 535).
    let mut rng = Rng::new(6);
    let (x, host) = random::<f32>(&mut rng, &[70_000, 2, 3]);
    let t = Transpose::apply(&x).unwrap();
    assert_same(&fetch(&t), &transpose_ref(&host, false), "70000 × 2×3 transposes");
    // And a permute whose row copies span more than 65 535 rows.
    let (y, hy) = random::<f32>(&mut rng, &[300, 300, 2]);
    let p = Permute::apply(&y, &[1, 0, 2]).unwrap();
    let want = hy.permuted_axes(ndarray::IxDyn(&[1, 0, 2])).as_standard_layout().to_owned();
    assert_same(&fetch(&p), &want, "row copy permute");
}

#[test]
fn empty_arrays_transpose_to_empty_arrays() {
    let x = XData::<f32>::zeros(app(), &[0, 5]).unwrap();
    let t = Transpose::apply(&x).unwrap();
    assert_eq!(t.shape(), &[5, 0]);
    assert!(t.to_vec().unwrap().is_empty());
}
