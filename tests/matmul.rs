//! MatMul against a float64 reference on every element type, op combination and kernel.
//!
//! Tolerance, per output element: |Δ| ≤ c·(K + 2)·ε·(|α|·(|op A|·|op B|)ᵢⱼ + |β|·|C₀ᵢⱼ|), with ε the unit
//! roundoff of the element's real type and c = 1 for real, 4 for complex types. This is the classical
//! worst-case bound for a length-K dot product in any summation order (Higham, Accuracy and Stability, §3.1)
//! plus two roundings for the α and β terms; a complex multiply-add rounds up to four real operations, hence
//! c = 4. A wrong index, a dropped K tail or a missed conjugation breaks it by orders of magnitude.

mod common;
use cliper::prelude::*;
use common::*;
use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};

/// (M, N, K): none is a multiple of any tile size.
const SIZES: &[[usize; 3]] = &[[1, 1, 1], [1, 257, 1], [7, 129, 33], [257, 1023, 65], [130, 2, 1025]];
const OPS: [MatOp; 3] = [MatOp::None, MatOp::Transpose, MatOp::ConjTranspose];

/// op applied to a `[batch…, r, c]` host array.
fn op_ref(x: &ArrayD<Complex64>, op: MatOp) -> ArrayD<Complex64> {
    match op {
        MatOp::None => x.clone(),
        MatOp::Transpose => transpose_ref(x, false),
        MatOp::ConjTranspose => transpose_ref(x, true),
    }
}

/// `alpha·a·b + beta·c0` for `[batch…, M, K]`·`[batch…, K, N]` with numpy batch broadcasting, and the matching
/// magnitude `|alpha|·|a|·|b| + |beta|·|c0|` for the error bound. `c0` has the output's shape.
fn matmul_ref(
    a: &ArrayD<Complex64>,
    b: &ArrayD<Complex64>,
    c0: &ArrayD<Complex64>,
    alpha: Complex64,
    beta: Complex64,
) -> (ArrayD<Complex64>, ArrayD<f64>) {
    let out_shape = c0.shape().to_vec();
    let nd = out_shape.len();
    let (m, n, k) = (out_shape[nd - 2], out_shape[nd - 1], a.shape()[a.ndim() - 1]);
    let (av, bv, cv) = (flat(a), flat(b), flat(c0));
    let (mut want, mut bound) = (Vec::with_capacity(cv.len()), Vec::with_capacity(cv.len()));
    let batches: usize = out_shape[..nd - 2].iter().product();
    // First element of output batch entry `q` in an operand whose batch axes may be fewer or of extent 1.
    let matrix_start = |x: &ArrayD<Complex64>, q: usize| -> usize {
        let lead = nd - x.ndim();
        let (mut rest, mut start, mut step) = (q, 0, x.shape()[x.ndim() - 2] * x.shape()[x.ndim() - 1]);
        for ax in (0..nd - 2).rev() {
            let i = rest % out_shape[ax];
            rest /= out_shape[ax];
            if ax >= lead {
                let extent = x.shape()[ax - lead];
                if extent != 1 {
                    start += i * step;
                }
                step *= extent;
            }
        }
        start
    };
    for q in 0..batches {
        let (a0, b0, c0_start) = (matrix_start(a, q), matrix_start(b, q), q * m * n);
        for i in 0..m {
            for j in 0..n {
                let (mut s, mut mag) = (Complex64::new(0.0, 0.0), 0.0);
                for l in 0..k {
                    let (x, y) = (av[a0 + i * k + l], bv[b0 + l * n + j]);
                    s += x * y;
                    mag += x.norm() * y.norm();
                }
                let old = cv[c0_start + i * n + j];
                want.push(alpha * s + beta * old);
                bound.push(alpha.norm() * mag + beta.norm() * old.norm());
            }
        }
    }
    let shape = IxDyn(&out_shape);
    (ArrayD::from_shape_vec(shape.clone(), want).unwrap(), ArrayD::from_shape_vec(shape, bound).unwrap())
}

/// Random op(A) `[m, k]`, op(B) `[k, n]` and C₀ `[m, n]` with the reference `alpha·op(A)·op(B) + beta·C₀` and
/// its error bound's magnitudes.
struct Case<T> {
    ha: ArrayD<Complex64>,
    hb: ArrayD<Complex64>,
    c0: Vec<T>,
    want: ArrayD<Complex64>,
    bound: ArrayD<f64>,
}

impl<T: Element> Case<T> {
    fn random(rng: &mut Rng, [m, n, k]: [usize; 3], alpha: T, beta: T) -> Case<T> {
        let (_, ha) = random::<T>(rng, &[m, k]);
        let (_, hb) = random::<T>(rng, &[k, n]);
        let (c0, hc0) = random::<T>(rng, &[m, n]);
        let (want, bound) = matmul_ref(&ha, &hb, &hc0, alpha.to_c64(), beta.to_c64());
        Case { ha, hb, c0: c0.to_vec().unwrap(), want, bound }
    }
}

fn flat(x: &ArrayD<Complex64>) -> Vec<Complex64> {
    x.as_standard_layout().iter().copied().collect()
}

/// A device array holding `op⁻¹(host)`: the array whose `op` is `host`.
fn stored_for_op<T: Element>(host: &ArrayD<Complex64>, op: MatOp) -> XData<T> {
    let stored = op_ref(host, op); // op is its own inverse for all three
    let data: Vec<T> = flat(&stored).into_iter().map(T::from_c64).collect();
    XData::from_slice(app(), stored.shape(), &data).unwrap()
}

fn assert_close<T: Element>(
    got: &ArrayD<Complex64>,
    want: &ArrayD<Complex64>,
    bound: &ArrayD<f64>,
    k: usize,
    what: &str,
) {
    let c = if T::IS_COMPLEX { 4.0 } else { 1.0 };
    assert_within(got, want, bound, c * (k + 2) as f64 * eps::<T>(), what);
}

/// |Δ| ≤ scale · bound element by element.
fn assert_within(got: &ArrayD<Complex64>, want: &ArrayD<Complex64>, bound: &ArrayD<f64>, scale: f64, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shapes differ");
    for (i, ((g, w), b)) in got.iter().zip(want.iter()).zip(bound.iter()).enumerate() {
        let err = (g - w).norm();
        assert!(
            err <= scale * b || err == 0.0,
            "{what}: element {i} is {g}, expected {w} (|Δ| {err:e} > bound {:e})",
            scale * b
        );
    }
}

fn scalars<T: Element>() -> (T, T) {
    (T::from_c64(Complex64::new(0.75, -1.25)), T::from_c64(Complex64::new(-0.5, 0.375)))
}

fn all_ops_sizes_and_kernels<T: Element>() {
    let mut rng = Rng::new(11);
    let (alpha, beta) = scalars::<T>();
    for &[m, n, k] in SIZES {
        // One op(A), op(B), C₀ and reference per size; each op combination stores the operands so that
        // applying the op gives them back.
        let Case { ha, hb, c0, want, bound } = Case::<T>::random(&mut rng, [m, n, k], alpha, beta);
        for op_a in OPS {
            let a = stored_for_op::<T>(&ha, op_a);
            for op_b in OPS {
                let b = stored_for_op::<T>(&hb, op_b);
                for strategy in [main_strategy::<T>(), GemmStrategy::Direct, GemmStrategy::Native] {
                    let c = XData::from_slice(app(), &[m, n], &c0).unwrap();
                    let mut mm = MatMul::new(
                        &a,
                        &b,
                        &c,
                        MatMulParams::default().op_a(op_a).op_b(op_b).alpha(alpha).beta(beta).strategy(strategy),
                    );
                    mm.init().unwrap();
                    mm.launch().unwrap();
                    let what = format!("{} ({m},{n},{k}) {op_a:?}·{op_b:?} {strategy:?}", T::NAME);
                    assert_close::<T>(&fetch(&c), &want, &bound, k, &what);
                }
            }
        }
    }
}

#[test]
fn matmul_matches_reference_for_all_types_ops_sizes_and_kernels() {
    for_each_element!(all_ops_sizes_and_kernels);
}

/// The blocked kernel of the device's tiles where the planner uses local-memory tiles (GPUs), the tiled one
/// elsewhere (CPUs); the tests exercise it on fewer cases, as each layout is another program to compile.
fn main_strategy<T: Element>() -> GemmStrategy {
    GemmStrategy::for_problem::<T>(app().device(), 4096, 4096, 4096, 1)
}

fn other_strategy<T: Element>() -> GemmStrategy {
    let tiles = GemmTiles::for_device::<T>(app().device());
    match main_strategy::<T>() {
        GemmStrategy::Tiled(_) => GemmStrategy::Blocked(tiles),
        _ => GemmStrategy::Tiled(tiles),
    }
}

fn the_other_blocked_kernel<T: Element>() {
    let mut rng = Rng::new(16);
    let (alpha, beta) = scalars::<T>();
    for &[m, n, k] in &SIZES[2..] {
        let Case { ha, hb, c0, want, bound } = Case::<T>::random(&mut rng, [m, n, k], alpha, beta);
        for (op_a, op_b) in [(MatOp::None, MatOp::None), (MatOp::ConjTranspose, MatOp::Transpose)] {
            let (a, b) = (stored_for_op::<T>(&ha, op_a), stored_for_op::<T>(&hb, op_b));
            let c = XData::from_slice(app(), &[m, n], &c0).unwrap();
            let strategy = other_strategy::<T>();
            let mut mm = MatMul::new(
                &a,
                &b,
                &c,
                MatMulParams::default().op_a(op_a).op_b(op_b).alpha(alpha).beta(beta).strategy(strategy),
            );
            mm.init().unwrap();
            mm.launch().unwrap();
            let what = format!("{} ({m},{n},{k}) {op_a:?}·{op_b:?} {strategy:?}", T::NAME);
            assert_close::<T>(&fetch(&c), &want, &bound, k, &what);
        }
    }
}

#[test]
fn the_kernel_the_planner_does_not_pick_here_is_right_too() {
    the_other_blocked_kernel::<f32>();
    the_other_blocked_kernel::<num_complex::Complex64>();
}

/// The local-memory kernel with the tiles the GPUs of the built-in table run (vector reads of runs of rows and
/// columns, two K slices in flight) and one uneven choice, on edges in M, N and K and on both loader layouts.
fn tiled_with_vector_runs<T: Element>() {
    let mut rng = Rng::new(17);
    let (alpha, beta) = scalars::<T>();
    let gpu_entries = cliper::GemmTable::built_in().gemm.iter().filter(|e| e.kind.as_deref() == Some("gpu"));
    let mut tiles: Vec<GemmTiles> = gpu_entries
        .filter(|e| e.element == T::NAME)
        .filter_map(|e| match e.strategy().unwrap() {
            GemmStrategy::Tiled(t) => Some(t),
            _ => None,
        })
        .collect();
    tiles.push("32x64x4/8x4/2x4".parse().unwrap());
    for &[m, n, k] in &[[257, 1023, 65], [7, 129, 33]] {
        let Case { ha, hb, c0, want, bound } = Case::<T>::random(&mut rng, [m, n, k], alpha, beta);
        for (op_a, op_b) in [(MatOp::None, MatOp::None), (MatOp::ConjTranspose, MatOp::Transpose)] {
            let (a, b) = (stored_for_op::<T>(&ha, op_a), stored_for_op::<T>(&hb, op_b));
            for &t in &tiles {
                let c = XData::from_slice(app(), &[m, n], &c0).unwrap();
                let strategy = GemmStrategy::Tiled(t);
                let mut mm = MatMul::new(
                    &a,
                    &b,
                    &c,
                    MatMulParams::default().op_a(op_a).op_b(op_b).alpha(alpha).beta(beta).strategy(strategy),
                );
                mm.init().unwrap();
                mm.launch().unwrap();
                let what = format!("{} ({m},{n},{k}) {op_a:?}·{op_b:?} tiles {t}", T::NAME);
                assert_close::<T>(&fetch(&c), &want, &bound, k, &what);
            }
        }
    }
}

#[test]
fn vector_runs_and_double_buffered_slices_match_the_reference() {
    for_each_element!(tiled_with_vector_runs);
}

fn batched_with_broadcast<T: Element>() {
    let mut rng = Rng::new(12);
    let (alpha, beta) = scalars::<T>();
    // A [3, 1, 7, 33] broadcasts over B's batch of 4; B [4, 33, 129]; C [3, 4, 7, 129]. Then a 2-D A used for
    // every matrix of a batched B, and the reverse.
    let cases: &[(&[usize], &[usize])] = &[
        (&[3, 1, 7, 33], &[4, 33, 129]),
        (&[20, 65], &[5, 65, 3]),
        (&[2, 130, 17], &[17, 129]),
        (&[2, 1, 1], &[2, 1, 1]),
    ];
    for &(sa, sb) in cases {
        let out_shape = MatMul::<T>::output_shape(sa, sb, &MatMulParams::default()).unwrap();
        let (a, ha) = random::<T>(&mut rng, sa);
        let (b, hb) = random::<T>(&mut rng, sb);
        let (c, hc0) = random::<T>(&mut rng, &out_shape);
        let (want, bound) = matmul_ref(&ha, &hb, &hc0, alpha.to_c64(), beta.to_c64());
        let mut mm = MatMul::new(&a, &b, &c, MatMulParams::default().alpha(alpha).beta(beta));
        mm.init().unwrap();
        mm.launch().unwrap();
        let what = format!("{} batched {sa:?}·{sb:?} via {:?}", T::NAME, mm.strategy());
        assert_close::<T>(&fetch(&c), &want, &bound, sa[sa.len() - 1], &what);
    }
}

#[test]
fn batches_broadcast_like_numpy() {
    for_each_element!(batched_with_broadcast);
}

fn views_are_read_through_strides<T: Element>() {
    let mut rng = Rng::new(13);
    // A sliced, transposed view of a bigger array, a permuted batch for B, and a column slice of C.
    let (big_a, hbig_a) = random::<T>(&mut rng, &[70, 40]);
    let a = big_a.slice_axis(0, 3..68).unwrap().slice_axis(1, 1..34).unwrap().t(); // [33, 65]
    let ha = transpose_ref(&hbig_a.slice(ndarray::s![3..68, 1..34]).to_owned().into_dyn(), false);
    let (big_b, hbig_b) = random::<T>(&mut rng, &[65, 2, 31]);
    let b = big_b.permuted_axes(&[1, 0, 2]).unwrap(); // [2, 65, 31]
    let hb = hbig_b.permuted_axes(IxDyn(&[1, 0, 2])).as_standard_layout().to_owned();
    let big_c = poisoned::<T>(&[2, 33, 40]);
    let c = big_c.slice_axis(2, 5..36).unwrap(); // [2, 33, 31], rows of 40
    let zero = ArrayD::<Complex64>::zeros(IxDyn(&[2, 33, 31]));
    let one = T::from_c64(Complex64::new(1.0, 0.0));
    let (want, bound) = matmul_ref(&ha, &hb, &zero, one.to_c64(), Complex64::new(0.0, 0.0));
    // Non-square tiles with more work-items along N than M, through the planner's kind of kernel.
    let tiles = GemmTiles::scalar(32, 64, 8, 8, 16);
    let odd = match main_strategy::<T>() {
        GemmStrategy::Tiled(_) => GemmStrategy::Tiled(tiles),
        _ => GemmStrategy::Blocked(tiles),
    };
    for strategy in [odd, GemmStrategy::Direct, GemmStrategy::Native] {
        let mut mm = MatMul::new(&a, &b, &c, MatMulParams::default().strategy(strategy));
        mm.init().unwrap();
        mm.launch().unwrap();
        let what = format!("{} strided views {strategy:?}", T::NAME);
        assert_close::<T>(&fetch(&c), &want, &bound, 65, &what);
    }
    // The rest of the big C is untouched.
    let all = fetch(&big_c);
    let marker = T::from_c64(Complex64::new(1234.5, -987.25)).to_c64();
    assert!(all.slice(ndarray::s![.., .., 0..5]).iter().all(|&v| v == marker), "{}: wrote left of the view", T::NAME);
    assert!(all.slice(ndarray::s![.., .., 36..]).iter().all(|&v| v == marker), "{}: wrote right of the view", T::NAME);
}

#[test]
fn strided_views_need_no_copies() {
    for_each_element!(views_are_read_through_strides);
    // And consuming `a.t()` equals asking for MatOp::Transpose.
    let mut rng = Rng::new(14);
    let (a, _) = random::<f32>(&mut rng, &[65, 33]);
    let (b, _) = random::<f32>(&mut rng, &[65, 17]);
    let via_view = MatMul::apply(&a.t(), &b, MatMulParams::default()).unwrap();
    let via_op = XData::<f32>::zeros(common::app(), &[33, 17]).unwrap();
    let mut mm = MatMul::new(&a, &b, &via_op, MatMulParams::default().op_a(MatOp::Transpose));
    mm.init().unwrap();
    mm.launch().unwrap();
    assert_eq!(via_view.to_vec().unwrap(), via_op.to_vec().unwrap());
}

#[test]
fn beta_zero_never_reads_c() {
    let mut rng = Rng::new(15);
    let (a, _) = random::<f32>(&mut rng, &[129, 33]);
    let (b, _) = random::<f32>(&mut rng, &[33, 65]);
    let c = XData::from_slice(app(), &[129, 65], &vec![f32::NAN; 129 * 65]).unwrap();
    for strategy in [main_strategy::<f32>(), other_strategy::<f32>(), GemmStrategy::Direct, GemmStrategy::Native] {
        let mut mm = MatMul::new(&a, &b, &c, MatMulParams::default().strategy(strategy));
        mm.init().unwrap();
        mm.launch().unwrap();
        assert!(c.to_vec().unwrap().iter().all(|v| v.is_finite()), "{strategy:?} let NaN through with beta = 0");
    }
}

/// The host's GEMM maps each buffer once: A and Aᵀ from one buffer; then C in the other half of A's buffer
/// (one mapping, written) must get A·I and leave A as it was.
fn native_shares_buffers<T: Element>() {
    let mut rng = Rng::new(16);
    let (big, hbig) = random::<T>(&mut rng, &[2, 37, 23]);
    let (a, c) = (big.index_axis(0, 0).unwrap(), big.index_axis(0, 1).unwrap());
    let ha = hbig.index_axis(ndarray::Axis(0), 0).to_owned().into_dyn();
    let (want, bound) = matmul_ref(
        &ha,
        &transpose_ref(&ha, false),
        &ArrayD::zeros(IxDyn(&[37, 37])),
        Complex64::new(1.0, 0.0),
        Complex64::new(0.0, 0.0),
    );
    let square = XData::<T>::zeros(app(), &[37, 37]).unwrap();
    let mut mm = MatMul::new(&a, &a.t(), &square, MatMulParams::default().strategy(GemmStrategy::Native));
    mm.init().unwrap();
    mm.launch().unwrap();
    assert_close::<T>(&fetch(&square), &want, &bound, 23, &format!("{} A·Aᵀ from one buffer", T::NAME));
    let eye: Vec<T> =
        (0..23 * 23).map(|i| T::from_c64(Complex64::new(f64::from(u8::from(i % 24 == 0)), 0.0))).collect();
    let identity = XData::from_slice(app(), &[23, 23], &eye).unwrap();
    let mut copy = MatMul::new(&a, &identity, &c, MatMulParams::default().strategy(GemmStrategy::Native));
    copy.init().unwrap();
    copy.launch().unwrap();
    assert_eq!(fetch(&c), ha, "{}: A·I into the other half of A's buffer", T::NAME);
    assert_eq!(fetch(&a), ha, "{}: A changed", T::NAME);
}

#[test]
fn native_gemm_maps_shared_buffers_once() {
    for_each_element!(native_shares_buffers);
}

#[test]
fn planner_picks_direct_for_small_and_tiled_for_large_products() {
    let device = app().device();
    assert_eq!(GemmStrategy::for_problem::<f32>(device, 7, 129, 33, 1), GemmStrategy::Direct);
    assert_eq!(GemmStrategy::for_problem::<f32>(device, 1, 4096, 4096, 1), GemmStrategy::Direct);
    // The table entry tuned nearest the product's size (cube root of M·N·K).
    let big = GemmStrategy::for_problem::<f32>(device, 257, 1023, 65, 1);
    let size = (257.0f64 * 1023.0 * 65.0).cbrt().round() as usize;
    assert_eq!(big, GemmStrategy::for_size::<f32>(device, size));
    assert!(matches!(big, GemmStrategy::Tiled(_) | GemmStrategy::Blocked(_)), "{big:?}");
}

#[test]
fn bad_shapes_and_tiles_are_named() {
    let a = XData::<f32>::zeros(app(), &[7, 33]).unwrap();
    let b = XData::<f32>::zeros(app(), &[32, 5]).unwrap();
    let c = XData::<f32>::zeros(app(), &[7, 5]).unwrap();
    let err = MatMul::new(&a, &b, &c, MatMulParams::default()).init().unwrap_err().to_string();
    assert!(err.contains("[7, 33]") && err.contains("[32, 5]") && err.contains("33") && err.contains("32"), "{err}");

    let b = XData::<f32>::zeros(app(), &[33, 5]).unwrap();
    let wrong_c = XData::<f32>::zeros(app(), &[5, 7]).unwrap();
    let err = MatMul::new(&a, &b, &wrong_c, MatMulParams::default()).init().unwrap_err();
    assert!(matches!(err, cliper::Error::Shape { .. }), "{err:?}");
    assert!(err.to_string().contains("[7, 5]") && err.to_string().contains("[5, 7]"), "{err}");

    let err =
        MatMul::new(&a, &b, &a.slice_axis(1, 0..5).unwrap(), MatMulParams::default()).init().unwrap_err().to_string();
    assert!(err.contains("overlaps A"), "{err}");

    let batch_a = XData::<f32>::zeros(app(), &[2, 7, 33]).unwrap();
    let batch_b = XData::<f32>::zeros(app(), &[3, 33, 5]).unwrap();
    let err = MatMul::apply(&batch_a, &batch_b, MatMulParams::default()).unwrap_err().to_string();
    assert!(err.contains("[2]") && err.contains("[3]") && err.contains("broadcast"), "{err}");

    let vector = XData::<f32>::zeros(app(), &[33]).unwrap();
    assert!(MatMul::apply(&a, &vector, MatMulParams::default()).unwrap_err().to_string().contains("[33]"));

    let odd = GemmTiles::scalar(48, 64, 8, 32, 16);
    let err = MatMul::new(&a, &b, &c, MatMulParams::default().strategy(GemmStrategy::Tiled(odd)))
        .init()
        .unwrap_err()
        .to_string();
    assert!(err.contains("mdimc must divide mwg"), "{err}");
    let unaligned: GemmTiles = "64x64x8/16x16/8x1".parse().unwrap();
    let err = MatMul::new(&a, &b, &c, MatMulParams::default().strategy(GemmStrategy::Tiled(unaligned)))
        .init()
        .unwrap_err()
        .to_string();
    assert!(err.contains("64x64x8/16x16/8x1") && err.contains("mdimc·vwm must divide mwg"), "{err}");
}

/// C as a row-major `[m, n]` array (`columns` false) or as the transpose of a row-major `[n, m]` one, holding
/// `c0`'s values either way.
fn output_in<T: Element>(c0: &[T], [m, n]: [usize; 2], columns: bool) -> XData<T> {
    if !columns {
        return XData::from_slice(app(), &[m, n], c0).unwrap();
    }
    let transposed: Vec<T> = (0..n * m).map(|e| c0[(e % m) * n + e / m]).collect();
    XData::from_slice(app(), &[n, m], &transposed).unwrap().t()
}

/// Complex products as one real product ([`GemmStrategy::RealEmbedding`]), on every device (the real product
/// runs whatever its planner picks: on PoCL the host's GEMM). Every op pair with C row-major and column-major
/// (the product then runs transposed), so that the left operand is contiguous along K or copied so; complex
/// alpha, complex, real and zero beta; edges that are multiples of no tile; a broadcast batch. The bound is the
/// complex kernels' (c = 4): a complex term's real and imaginary parts are each two real terms of the real
/// product, whose sum over 2K terms errs by at most 2K·ε·Σ|a||b| per part, and alpha folded into B adds one
/// complex rounding. Real types and a C contiguous along neither axis are refused by name.
fn real_embedding_products<T: Element>() {
    let mut rng = Rng::new(29);
    let (alpha, complex_beta) = scalars::<T>();
    let params = MatMulParams::default().strategy(GemmStrategy::RealEmbedding);
    if !T::IS_COMPLEX {
        let (a, _) = random::<T>(&mut rng, &[9, 7]);
        let err = MatMul::apply(&a, &a.t(), params).unwrap_err().to_string();
        assert!(err.contains("real embedding") && err.contains(T::NAME), "{err}");
        return;
    }
    let betas = [complex_beta, T::from_c64(Complex64::new(0.5, 0.0)), T::default()];
    for (&[m, n, k], beta) in [[1, 1, 1], [7, 129, 33], [257, 130, 65], [130, 2, 1025]].iter().zip(betas.iter().cycle())
    {
        let Case { ha, hb, c0, want, bound } = Case::<T>::random(&mut rng, [m, n, k], alpha, *beta);
        for op_a in OPS {
            let a = stored_for_op::<T>(&ha, op_a);
            for op_b in OPS {
                let b = stored_for_op::<T>(&hb, op_b);
                for columns in [false, true] {
                    let c = output_in(&c0, [m, n], columns);
                    let mut mm = MatMul::new(&a, &b, &c, params.op_a(op_a).op_b(op_b).alpha(alpha).beta(*beta));
                    mm.run().unwrap();
                    assert!(mm.embedded_strategy().is_some());
                    let what = format!("{} ({m},{n},{k}) {op_a:?}·{op_b:?} C by columns {columns} embedded", T::NAME);
                    assert_close::<T>(&fetch(&c), &want, &bound, k, &what);
                }
            }
        }
    }
    // A broadcast batch: [3, 1, 20, 33] · [4, 33, 17] → [3, 4, 20, 17].
    let (a, ha) = random::<T>(&mut rng, &[3, 1, 20, 33]);
    let (b, hb) = random::<T>(&mut rng, &[4, 33, 17]);
    let (c, hc0) = random::<T>(&mut rng, &[3, 4, 20, 17]);
    let (want, bound) = matmul_ref(&ha, &hb, &hc0, alpha.to_c64(), complex_beta.to_c64());
    MatMul::new(&a, &b, &c, params.alpha(alpha).beta(complex_beta)).run().unwrap();
    assert_close::<T>(&fetch(&c), &want, &bound, 33, &format!("{} broadcast batch embedded", T::NAME));
    // C with neither axis contiguous: every other column of a wider array.
    let (a, _) = random::<T>(&mut rng, &[6, 5]);
    let wide = XData::<T>::zeros(app(), &[6, 8]).unwrap();
    let every_other = wide.reshape(&[6, 4, 2]).unwrap().index_axis(2, 0).unwrap();
    let (b, _) = random::<T>(&mut rng, &[5, 4]);
    let err = MatMul::new(&a, &b, &every_other, params).init().unwrap_err().to_string();
    assert!(err.contains("real embedding") && err.contains("[8, 2]"), "{err}");
}

#[test]
fn complex_products_run_as_real_ones() {
    for_each_element!(real_embedding_products);
}

/// The FP64 tensor-core kernel where the device has the tensor cores (NVIDIA, compute capability ≥ 8.0), for
/// f64 and (through the real embedding) c64: on edges in M, N and K (none a multiple of their blocks), both loader layouts of A and B,
/// conjugation, complex alpha and beta, broadcast batches, and the planner's choice. Elsewhere asking for them
/// is an error naming the device.
#[test]
fn tensor_core_dgemm_where_the_device_has_it() {
    let info = app().device();
    let mut rng = Rng::new(19);
    if let Err(why) = GemmStrategy::tensor_cores::<f64>(info, GemmPrecision::Full) {
        let (a, _) = random::<f64>(&mut rng, &[40, 30]);
        let (b, _) = random::<f64>(&mut rng, &[30, 20]);
        let c = XData::<f64>::zeros(app(), &[40, 20]).unwrap();
        let mut mm = MatMul::new(&a, &b, &c, MatMulParams::default().strategy(GemmStrategy::TensorCore));
        let err = mm.init().unwrap_err().to_string();
        assert!(err.contains("tensor-core") && err.contains(&info.name) && err == why.to_string(), "{err}");
        assert_ne!(
            GemmStrategy::planned::<f64>(info, 2048, 2048, 2048, 1, GemmPrecision::Full),
            GemmStrategy::TensorCore
        );
        return;
    }
    assert_eq!(GemmStrategy::planned::<f64>(info, 2048, 2048, 2048, 1, GemmPrecision::Full), GemmStrategy::TensorCore);
    // Complex products run on them as real ones.
    assert_eq!(
        GemmStrategy::planned::<num_complex::Complex64>(info, 2048, 2048, 2048, 1, GemmPrecision::Full),
        GemmStrategy::RealEmbedding
    );
    assert_ne!(GemmStrategy::planned::<f32>(info, 2048, 2048, 2048, 1, GemmPrecision::Full), GemmStrategy::TensorCore);
    tensor_core_products::<f64>(&mut rng);
    tensor_core_products::<num_complex::Complex64>(&mut rng);
}

fn tensor_core_products<T: Element>(rng: &mut Rng) {
    let (alpha, beta) = scalars::<T>();
    let ops = [
        (MatOp::None, MatOp::None),
        (MatOp::Transpose, MatOp::ConjTranspose),
        (MatOp::ConjTranspose, MatOp::Transpose),
    ];
    for &[m, n, k] in &[[257, 1023, 65], [130, 131, 1025], [1, 300, 9], [129, 1, 7], [385, 260, 3]] {
        let Case { ha, hb, c0, want, bound } = Case::<T>::random(rng, [m, n, k], alpha, beta);
        for (op_a, op_b) in ops {
            let (a, b) = (stored_for_op::<T>(&ha, op_a), stored_for_op::<T>(&hb, op_b));
            let c = XData::from_slice(app(), &[m, n], &c0).unwrap();
            let params = MatMulParams::default().op_a(op_a).op_b(op_b).alpha(alpha).beta(beta);
            let mut mm = MatMul::new(&a, &b, &c, params.strategy(GemmStrategy::TensorCore));
            mm.init().unwrap();
            mm.launch().unwrap();
            let what = format!("{} ({m},{n},{k}) {op_a:?}·{op_b:?} tensor cores", T::NAME);
            assert_close::<T>(&fetch(&c), &want, &bound, k, &what);
        }
    }
    // A broadcast batch: [3, 1, 200, 70] · [4, 70, 150] → [3, 4, 200, 150].
    let (a, ha) = random::<T>(rng, &[3, 1, 200, 70]);
    let (b, hb) = random::<T>(rng, &[4, 70, 150]);
    let (c, hc0) = random::<T>(rng, &[3, 4, 200, 150]);
    let (want, bound) = matmul_ref(&ha, &hb, &hc0, alpha.to_c64(), beta.to_c64());
    let params = MatMulParams::default().alpha(alpha).beta(beta).strategy(GemmStrategy::TensorCore);
    let mut mm = MatMul::new(&a, &b, &c, params);
    mm.init().unwrap();
    mm.launch().unwrap();
    assert_close::<T>(&fetch(&c), &want, &bound, 70, &format!("{} broadcast batch on tensor cores", T::NAME));
}

/// f32 products at [`GemmPrecision::Fp32Split`] and [`GemmPrecision::Tf32`]. Where the device has TF32 tensor
/// cores the planner takes them for large products, and both loader layouts, the 16-byte and the element-wise
/// loads, both block widths, edges in M, N and K, alpha/beta and broadcast batches meet their bounds: the FP32
/// bound of this file plus, per product term, 3·2⁻²⁰ for Fp32Split and 2⁻¹⁰ + 2⁻²² for Tf32 (each operand
/// rounded to 11 significant bits); ±∞ and NaN operands give what FP32 gives. Elsewhere the precision is only a
/// permission: the FP32 kernels run and meet the FP32 bound, and asking for the tensor cores is an error that
/// names the device.
#[test]
fn tf32_tensor_cores_where_the_device_has_them() {
    let info = app().device();
    let mut rng = Rng::new(23);
    let (a, _) = random::<f32>(&mut rng, &[40, 30]);
    let (b, _) = random::<f32>(&mut rng, &[30, 20]);
    let c = XData::<f32>::zeros(app(), &[40, 20]).unwrap();
    // Plain FP32 never runs on tensor cores, and asking for them says which precisions can.
    let full = MatMulParams::default().strategy(GemmStrategy::TensorCore);
    let err = MatMul::new(&a, &b, &c, full).init().unwrap_err().to_string();
    assert!(err.contains("TF32 tensor-core") && err.contains("Fp32Split") && err.contains(&info.name), "{err}");
    assert_ne!(GemmStrategy::planned::<f32>(info, 2048, 2048, 2048, 1, GemmPrecision::Full), GemmStrategy::TensorCore);
    let capable = GemmStrategy::tensor_cores::<f32>(info, GemmPrecision::Fp32Split);
    for precision in [GemmPrecision::Fp32Split, GemmPrecision::Tf32] {
        // The planner takes gemm_tmma at Tf32 only (its split is no faster than the FP32 kernel), wgmma at both.
        let planned = GemmStrategy::planned::<f32>(info, 2048, 2048, 2048, 1, precision);
        let wgmma = GemmStrategy::wgmma::<f32>(info, precision);
        // The split runs on wgmma where it can (faster than FP32 there), never on gemm_tmma.
        let expected = capable.is_ok() && (precision == GemmPrecision::Tf32 || wgmma.is_ok());
        let on_tensor_cores = matches!(planned, GemmStrategy::TensorCore | GemmStrategy::Wgmma);
        assert_eq!(on_tensor_cores, expected, "{precision}: planned {planned}");
        assert_eq!(planned == GemmStrategy::Wgmma, wgmma.is_ok(), "{precision}: planned {planned}");
        // 1024² makes 64 blocks of 128 × 128, half a wave on an H200: wgmma where it runs; 512² makes 16, too few.
        assert_eq!(
            GemmStrategy::planned::<f32>(info, 1024, 1024, 1024, 1, precision) == GemmStrategy::Wgmma,
            wgmma.is_ok()
        );
        assert_ne!(GemmStrategy::planned::<f32>(info, 512, 512, 512, 1, precision), GemmStrategy::Wgmma);
        if let Err(why) = &wgmma {
            let params = MatMulParams::default().precision(precision).strategy(GemmStrategy::Wgmma);
            let err = MatMul::new(&a, &b, &c, params).init().unwrap_err().to_string();
            assert_eq!(err, why.to_string());
            assert!(err.contains("wgmma") && err.contains(&info.name), "{err}");
        }
        if let Err(why) = &capable {
            let params = MatMulParams::default().precision(precision).strategy(GemmStrategy::TensorCore);
            let err = MatMul::new(&a, &b, &c, params).init().unwrap_err().to_string();
            assert_eq!(err, why.to_string());
            assert!(err.contains("compute capability") || err.contains("NVIDIA"), "{err}");
        }
        // Per product term on tensor cores: Tf32 rounds both operands to 11 significant bits; Fp32Split's
        // truncated rest and dropped lo·lo leave at most 3·2⁻²⁰ (see gemm_tmma).
        let extra = match (precision, capable.is_ok()) {
            (_, false) => 0.0,
            (GemmPrecision::Tf32, true) => 2f64.powi(-10) + 2f64.powi(-22),
            (_, true) => 3.0 * 2f64.powi(-20),
        };
        tf32_products(&mut rng, precision, capable.is_ok().then_some(GemmStrategy::TensorCore), extra);
        if wgmma.is_ok() {
            tf32_products(&mut rng, precision, Some(GemmStrategy::Wgmma), extra);
        }
    }
    // c32 runs on them as real products (RealEmbedding) wherever f32 does.
    for precision in [GemmPrecision::Fp32Split, GemmPrecision::Tf32] {
        let c32 = GemmStrategy::tensor_cores::<Complex32>(info, precision).map_err(|e| e.to_string());
        assert_eq!(c32, GemmStrategy::tensor_cores::<f32>(info, precision).map_err(|e| e.to_string()));
        let planned = GemmStrategy::planned::<Complex32>(info, 2048, 2048, 2048, 1, precision);
        let real = GemmStrategy::planned::<f32>(info, 2048, 4096, 4096, 1, precision);
        let on_tensor_cores = matches!(real, GemmStrategy::TensorCore | GemmStrategy::Wgmma);
        assert_eq!(planned == GemmStrategy::RealEmbedding, on_tensor_cores, "{precision}: planned {planned}");
        let extra = match precision {
            _ if !on_tensor_cores => 0.0,
            GemmPrecision::Tf32 => 2f64.powi(-10) + 2f64.powi(-22),
            _ => 3.0 * 2f64.powi(-20),
        };
        c32_products(&mut rng, precision, extra);
    }
}

/// c32 products at `precision` through the real embedding (its real product at that precision, on tensor cores
/// where its planner takes them, which adds `extra` per real product term): the complex bound of this file plus
/// twice `extra` per complex term (each of its parts sums two real terms, |re a·re b| + |im a·im b| ≤ |a||b|).
fn c32_products(rng: &mut Rng, precision: GemmPrecision, extra: f64) {
    let (alpha, beta) = scalars::<Complex32>();
    let params = MatMulParams::default().precision(precision).strategy(GemmStrategy::RealEmbedding);
    for &[m, n, k] in &[[257, 1023, 65], [131, 133, 1025], [1030, 1300, 72]] {
        let Case { ha, hb, c0, want, bound } = Case::<Complex32>::random(rng, [m, n, k], alpha, beta);
        for (op_a, op_b) in [(MatOp::None, MatOp::None), (MatOp::ConjTranspose, MatOp::Transpose)] {
            let (a, b) = (stored_for_op::<Complex32>(&ha, op_a), stored_for_op::<Complex32>(&hb, op_b));
            let c = XData::from_slice(app(), &[m, n], &c0).unwrap();
            let mut mm = MatMul::new(&a, &b, &c, params.op_a(op_a).op_b(op_b).alpha(alpha).beta(beta));
            mm.run().unwrap();
            let what = format!("c32 ({m},{n},{k}) {op_a:?}·{op_b:?} at {precision} ({:?})", mm.embedded_strategy());
            assert_within(&fetch(&c), &want, &bound, 4.0 * (k + 2) as f64 * eps::<f32>() + 2.0 * extra, &what);
        }
    }
}

/// The products of `tf32_tensor_cores_where_the_device_has_them` on `kernel` (`None`: the planner's).
fn tf32_products(rng: &mut Rng, precision: GemmPrecision, kernel: Option<GemmStrategy>, extra: f64) {
    let with_kernel = |params: MatMulParams<f32>| match kernel {
        Some(s) => params.strategy(s),
        None => params,
    };
    let (alpha, beta) = scalars::<f32>();
    let ops = [(MatOp::None, MatOp::None), (MatOp::Transpose, MatOp::Transpose), (MatOp::None, MatOp::Transpose)];
    // K = 68 and N = 260 make aligned rows (the 16-byte loads); the others are element-wise.
    for &[m, n, k] in &[[257, 1023, 65], [130, 260, 68], [131, 133, 1025], [1, 300, 9], [129, 1, 7], [385, 260, 3]] {
        let Case { ha, hb, c0, want, bound } = Case::<f32>::random(rng, [m, n, k], alpha, beta);
        for (op_a, op_b) in ops {
            let (a, b) = (stored_for_op::<f32>(&ha, op_a), stored_for_op::<f32>(&hb, op_b));
            let c = XData::from_slice(app(), &[m, n], &c0).unwrap();
            let params = MatMulParams::default().op_a(op_a).op_b(op_b).alpha(alpha).beta(beta).precision(precision);
            let mut mm = MatMul::new(&a, &b, &c, with_kernel(params));
            mm.init().unwrap();
            mm.launch().unwrap();
            let what = format!("f32 ({m},{n},{k}) {op_a:?}·{op_b:?} at {precision} ({:?})", mm.strategy());
            assert_within(&fetch(&c), &want, &bound, (k + 2) as f64 * eps::<f32>() + extra, &what);
        }
    }
    // Wide blocks (128 × 256, chosen when they fill the device), element-wise and 16-byte loads.
    for &[m, n, k] in &[[1300, 2600, 37], [1030, 3100, 72]] {
        let Case { ha, hb, c0, want, bound } = Case::<f32>::random(rng, [m, n, k], alpha, beta);
        let (a, b) = (stored_for_op::<f32>(&ha, MatOp::None), stored_for_op::<f32>(&hb, MatOp::None));
        let c = XData::from_slice(app(), &[m, n], &c0).unwrap();
        let params = MatMulParams::default().alpha(alpha).beta(beta).precision(precision);
        MatMul::new(&a, &b, &c, with_kernel(params)).run().unwrap();
        let what = format!("f32 ({m},{n},{k}) at {precision} in wide blocks");
        assert_within(&fetch(&c), &want, &bound, (k + 2) as f64 * eps::<f32>() + extra, &what);
    }
    // Tiny operands (2⁻⁶⁰ each, product terms near 2⁻¹²⁰): the split's rest products, 2⁻¹⁰ below the heads',
    // would be FP32 subnormals; they keep their accuracy (the rests are scaled by 2¹⁰ and summed apart).
    let tiny = 2f64.powi(-60);
    let Case { ha, hb, .. } = Case::<f32>::random(rng, [257, 300, 70], 1.0, 0.0);
    let (ha, hb) = (ha.mapv(|v| v * tiny), hb.mapv(|v| v * tiny));
    let zero = ArrayD::from_elem(IxDyn(&[257, 300]), Complex64::new(0.0, 0.0));
    let (want, bound) = matmul_ref(&ha, &hb, &zero, Complex64::new(1.0, 0.0), Complex64::new(0.0, 0.0));
    let (a, b) = (stored_for_op::<f32>(&ha, MatOp::None), stored_for_op::<f32>(&hb, MatOp::None));
    let params = MatMulParams::default().precision(precision);
    let c = MatMul::apply(&a, &b, with_kernel(params)).unwrap();
    let what = format!("f32 operands of 2⁻⁶⁰ at {precision}");
    assert_within(&fetch(&c), &want, &bound, 72.0 * eps::<f32>() + extra, &what);
    // ±∞ and NaN in A, B positive: those rows of C are +∞ and NaN, as in FP32.
    let (m, n, k) = (140, 270, 40);
    let mut ha: Vec<f32> = rng.vec(m * k);
    let hb: Vec<f32> = rng.vec::<f32>(k * n).into_iter().map(|v| v.abs() + 0.5).collect();
    ha[5 * k + 3] = f32::INFINITY;
    ha[7 * k + 2] = f32::NAN;
    ha[9 * k + 39] = f32::NEG_INFINITY;
    let a = XData::from_slice(app(), &[m, k], &ha).unwrap();
    let b = XData::from_slice(app(), &[k, n], &hb).unwrap();
    let params = MatMulParams::default().precision(precision);
    let params = with_kernel(params);
    let c = MatMul::apply(&a, &b, params).unwrap().to_vec().unwrap();
    for j in 0..n {
        assert_eq!(c[5 * n + j], f32::INFINITY, "{precision}: C[5][{j}]");
        assert!(c[7 * n + j].is_nan(), "{precision}: C[7][{j}] = {}", c[7 * n + j]);
        assert_eq!(c[9 * n + j], f32::NEG_INFINITY, "{precision}: C[9][{j}]");
        assert!(c[6 * n + j].is_finite(), "{precision}: C[6][{j}] = {}", c[6 * n + j]);
    }
    // And in B, A positive, B's other entries of either sign: column 11 of C is +∞.
    let ha: Vec<f32> = rng.vec::<f32>(m * k).into_iter().map(|v| v.abs() + 0.5).collect();
    let mut hb: Vec<f32> = rng.vec(k * n);
    hb[20 * n + 11] = f32::INFINITY;
    let a = XData::from_slice(app(), &[m, k], &ha).unwrap();
    let b = XData::from_slice(app(), &[k, n], &hb).unwrap();
    let c = MatMul::apply(&a, &b, params).unwrap().to_vec().unwrap();
    for i in 0..m {
        assert_eq!(c[i * n + 11], f32::INFINITY, "{precision}: C[{i}][11]");
        assert!(c[i * n + 12].is_finite(), "{precision}: C[{i}][12] = {}", c[i * n + 12]);
    }
    // A broadcast batch with aligned rows: [3, 1, 200, 72] · [4, 72, 152] → [3, 4, 200, 152].
    let (a, ha) = random::<f32>(rng, &[3, 1, 200, 72]);
    let (b, hb) = random::<f32>(rng, &[4, 72, 152]);
    let (c, hc0) = random::<f32>(rng, &[3, 4, 200, 152]);
    let (want, bound) = matmul_ref(&ha, &hb, &hc0, alpha.to_c64(), beta.to_c64());
    let params = MatMulParams::default().alpha(alpha).beta(beta).precision(precision);
    let mut mm = MatMul::new(&a, &b, &c, with_kernel(params));
    mm.init().unwrap();
    mm.launch().unwrap();
    let what = format!("f32 broadcast batch at {precision}");
    assert_within(&fetch(&c), &want, &bound, 74.0 * eps::<f32>() + extra, &what);
}
