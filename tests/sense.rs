//! The SENSE operator and CG-SENSE against float64 references: the centred unitary DFT written out as a sum
//! (`X[k] = Σ_n x[n] e^{−2πi(k−c)(n−c)/N} / √N`, c = N/2 rounded down: numpy's fftshift(fftn(ifftshift(x),
//! norm="ortho"))) on shapes that are multiples of nothing (odd and even, 1-D to 3-D), random maps and mask
//! weights, complex64 and complex128; the adjoint identity; and the conjugate-gradient iterates against the same
//! iteration run in float64.
//!
//! Tolerances (relative L2 of the whole result): an FFT of n points has a rounding error of about ε·log₂ n in
//! L2 relative terms, the maps' product and the coil sum add a few ε: 2e-6 for complex64 (ε = 6e-8, n ≤ 1000)
//! and 1e-13 for complex128. CG iterates after k iterations amplify rounding by up to the condition number
//! (≤ 1 + 1/λ = 11 here) per step in the worst case; measured differences are far smaller, the bounds allow
//! 1e-4 (complex64) and 1e-10 (complex128).

mod common;
use cliper::{CgParams, CgSense, ConjugateGradient, Element, KData, Process, SenseOperator, XData};
use common::Rng;
use num_complex::{Complex, Complex64};

/// The centred unitary DFT (or its inverse) along every axis of `x` (row-major `shape`), in float64.
fn centred_dft(x: &[Complex64], shape: &[usize], inverse: bool) -> Vec<Complex64> {
    let mut data = x.to_vec();
    let sign = if inverse { 1.0 } else { -1.0 };
    for axis in 0..shape.len() {
        let n = shape[axis];
        let inner: usize = shape[axis + 1..].iter().product();
        let outer: usize = shape[..axis].iter().product();
        let c = (n / 2) as f64;
        let mut out = vec![Complex64::default(); data.len()];
        for o in 0..outer {
            for i in 0..inner {
                for k in 0..n {
                    let mut sum = Complex64::default();
                    for m in 0..n {
                        let angle = sign * 2.0 * std::f64::consts::PI * (k as f64 - c) * (m as f64 - c) / n as f64;
                        sum += data[(o * n + m) * inner + i] * Complex64::from_polar(1.0, angle);
                    }
                    out[(o * n + k) * inner + i] = sum / (n as f64).sqrt();
                }
            }
        }
        data = out;
    }
    data
}

/// The problem: maps [coils, spatial], a sampling pattern [spatial] (weights W in [0, 1], some zero; A = √W F S
/// as BART's pics weighs k-space).
struct Problem {
    shape: Vec<usize>,
    coils: usize,
    maps: Vec<Complex64>,
    mask: Vec<f64>,
}

impl Problem {
    fn new(rng: &mut Rng, coils: usize, shape: &[usize]) -> Problem {
        let p: usize = shape.iter().product();
        let maps = (0..coils * p).map(|_| Complex64::new(rng.uniform(), rng.uniform())).collect();
        let mask = (0..p).map(|_| if rng.uniform() < -0.4 { 0.0 } else { rng.uniform().abs() }).collect();
        Problem { shape: shape.to_vec(), coils, maps, mask }
    }

    fn positions(&self) -> usize {
        self.shape.iter().product()
    }

    fn forward(&self, x: &[Complex64]) -> Vec<Complex64> {
        let p = self.positions();
        let mut k = Vec::with_capacity(self.coils * p);
        for c in 0..self.coils {
            let coil: Vec<Complex64> = (0..p).map(|i| self.maps[c * p + i] * x[i]).collect();
            k.extend(centred_dft(&coil, &self.shape, false).iter().zip(&self.mask).map(|(v, m)| v * m.sqrt()));
        }
        k
    }

    fn adjoint(&self, k: &[Complex64]) -> Vec<Complex64> {
        let p = self.positions();
        let mut x = vec![Complex64::default(); p];
        for c in 0..self.coils {
            let weighted: Vec<Complex64> = (0..p).map(|i| k[c * p + i] * self.mask[i].sqrt()).collect();
            for (i, v) in centred_dft(&weighted, &self.shape, true).iter().enumerate() {
                x[i] += self.maps[c * p + i].conj() * v;
            }
        }
        x
    }

    fn upload<T: Element>(&self, rng_values: &[Complex64], shape: &[usize]) -> XData<T> {
        let values: Vec<T> = rng_values.iter().map(|&v| T::from_c64(v)).collect();
        XData::from_slice(common::app(), shape, &values).unwrap()
    }

    fn operator<T: cliper::ComplexElement>(&self) -> SenseOperator<T> {
        let maps = self.upload::<T>(&self.maps, &[&[self.coils][..], &self.shape].concat());
        let mask: Vec<T::Real> = self.mask.iter().map(|&m| T::Real::from_c64(Complex::new(m, 0.0))).collect();
        let mask = XData::from_slice(common::app(), &self.shape, &mask).unwrap();
        SenseOperator::new(&maps, Some(&mask)).unwrap()
    }
}

fn relative(got: &[Complex64], want: &[Complex64]) -> f64 {
    let diff: f64 = got.iter().zip(want).map(|(a, b)| (a - b).norm_sqr()).sum();
    let norm: f64 = want.iter().map(|v| v.norm_sqr()).sum();
    (diff / norm.max(1e-300)).sqrt()
}

fn fetch<T: Element>(x: &XData<T>) -> Vec<Complex64> {
    x.to_vec().unwrap().into_iter().map(Element::to_c64).collect()
}

fn operator_matches<T: cliper::ComplexElement>(tolerance: f64) {
    let mut rng = Rng::new(31);
    for (coils, shape) in [(3, vec![13, 10]), (2, vec![7, 9, 6]), (4, vec![33]), (1, vec![16, 12])] {
        let problem = Problem::new(&mut rng, coils, &shape);
        let mut a = problem.operator::<T>();
        let p = problem.positions();
        let x: Vec<Complex64> = (0..p).map(|_| Complex64::new(rng.uniform(), rng.uniform())).collect();
        let y: Vec<Complex64> = (0..coils * p).map(|_| Complex64::new(rng.uniform(), rng.uniform())).collect();
        let kshape = [&[coils][..], &shape].concat();
        let (xd, yd) = (problem.upload::<T>(&x, &shape), problem.upload::<T>(&y, &kshape));
        let k = XData::<T>::zeros(common::app(), &kshape).unwrap();
        a.forward(&xd, &k).unwrap();
        let want_k = problem.forward(&x);
        let e = relative(&fetch(&k), &want_k);
        assert!(e < tolerance, "{} forward {shape:?}: {e:e}", T::NAME);
        let back = XData::<T>::zeros(common::app(), &shape).unwrap();
        a.adjoint(&yd, &back).unwrap();
        let want_back = problem.adjoint(&y);
        let e = relative(&fetch(&back), &want_back);
        assert!(e < tolerance, "{} adjoint {shape:?}: {e:e}", T::NAME);
        // ⟨A x, y⟩ = ⟨x, Aᴴ y⟩ in the operator's own arithmetic.
        let lhs: Complex64 = fetch(&k).iter().zip(&y).map(|(a, b)| a * b.conj()).sum();
        let rhs: Complex64 = x.iter().zip(fetch(&back)).map(|(a, b)| a * b.conj()).sum();
        assert!(
            (lhs - rhs).norm() < 10.0 * tolerance * lhs.norm().max(1.0),
            "{} adjointness {shape:?}: {lhs} {rhs}",
            T::NAME
        );
        let normal = XData::<T>::zeros(common::app(), &shape).unwrap();
        a.normal(&xd, &normal).unwrap();
        let e = relative(&fetch(&normal), &problem.adjoint(&want_k));
        assert!(e < tolerance, "{} normal {shape:?}: {e:e}", T::NAME);
    }
}

#[test]
fn the_sense_operator_matches_float64() {
    operator_matches::<Complex<f32>>(2e-6);
    operator_matches::<Complex<f64>>(1e-13);
}

/// Conjugate gradients as ConjugateGradient runs them, in float64 on the reference operator: the iterates after
/// `iterations` steps.
fn cg_reference(problem: &Problem, b: &[Complex64], lambda: f64, iterations: usize) -> Vec<Complex64> {
    cg_reference_from(problem, b, lambda, iterations, &vec![Complex64::default(); b.len()], 0.0).0
}

/// The same from `x0`, stopping once |r|² ≤ tol²|b|² (BART's CG): the iterate and the iterations that ran.
fn cg_reference_from(
    problem: &Problem,
    b: &[Complex64],
    lambda: f64,
    iterations: usize,
    x0: &[Complex64],
    tol: f64,
) -> (Vec<Complex64>, usize) {
    let dot = |a: &[Complex64], b: &[Complex64]| a.iter().zip(b).map(|(x, y)| (x.conj() * y).re).sum::<f64>();
    let mut x = x0.to_vec();
    let mx: Vec<Complex64> =
        problem.adjoint(&problem.forward(&x)).iter().zip(&x).map(|(v, xv)| v + lambda * xv).collect();
    let mut r: Vec<Complex64> = b.iter().zip(&mx).map(|(a, m)| a - m).collect();
    let mut p = r.clone();
    let mut rr = dot(&r, &r);
    let bb = dot(b, b);
    let mut ran = 0;
    for _ in 0..iterations {
        if rr <= tol * tol * bb && ran > 0 {
            break;
        }
        let q: Vec<Complex64> =
            problem.adjoint(&problem.forward(&p)).iter().zip(&p).map(|(v, pv)| v + lambda * pv).collect();
        let alpha = rr / dot(&p, &q);
        for i in 0..x.len() {
            x[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        let rr_new = dot(&r, &r);
        let beta = rr_new / rr;
        rr = rr_new;
        ran += 1;
        if rr <= tol * tol * bb {
            break;
        }
        for i in 0..p.len() {
            p[i] = r[i] + beta * p[i];
        }
    }
    (x, ran)
}

fn cg_matches<T: cliper::ComplexElement>(tolerance: f64) {
    let mut rng = Rng::new(77);
    let shape = [11, 9];
    let problem = Problem::new(&mut rng, 3, &shape);
    let p = problem.positions();
    let y: Vec<Complex64> = (0..3 * p).map(|_| Complex64::new(rng.uniform(), rng.uniform())).collect();
    let b = problem.adjoint(&y);
    let mut a = problem.operator::<T>();
    for (lambda, iterations) in [(0.1, 8), (0.1, 25), (0.0, 5)] {
        let mut cg =
            ConjugateGradient::<T>::new(common::app(), &shape, CgParams::new(iterations).lambda(lambda)).unwrap();
        let x = XData::<T>::zeros(common::app(), &shape).unwrap();
        cg.solve(&mut a, &problem.upload::<T>(&b, &shape), &x).unwrap();
        let want = cg_reference(&problem, &b, lambda, iterations);
        let e = relative(&fetch(&x), &want);
        assert!(e < tolerance, "{} CG λ {lambda} after {iterations}: {e:e}", T::NAME);
        let residuals = cg.residuals().unwrap();
        assert_eq!(residuals.len(), iterations + 1);
        assert_eq!(residuals[0], 1.0);
        if lambda > 0.0 && iterations == 25 {
            // (AᴴA + 0.1 I) has condition ≤ 11 here: 25 iterations reach far below 1e-3.
            assert!(residuals[iterations] < 1e-3, "{} residuals {residuals:?}", T::NAME);
        }
    }
}

/// A warm start and a tolerance (ADMM's inner solves): the same iterate and the same number of iterations as
/// the float64 reference.
#[test]
fn warm_started_cg_stops_at_the_tolerance() {
    let mut rng = Rng::new(8);
    let shape = [10, 13];
    let problem = Problem::new(&mut rng, 2, &shape);
    let p = problem.positions();
    let b: Vec<Complex64> = (0..p).map(|_| Complex64::new(rng.uniform(), rng.uniform())).collect();
    let x0: Vec<Complex64> = (0..p).map(|_| Complex64::new(rng.uniform(), rng.uniform())).collect();
    let mut a = problem.operator::<Complex<f64>>();
    for (tol, max) in [(1e-3, 30), (1e-3, 4), (0.0, 6)] {
        let params = CgParams::new(max).lambda(0.5).tolerance(tol);
        let mut cg = ConjugateGradient::<Complex<f64>>::new(common::app(), &shape, params).unwrap();
        let x = problem.upload::<Complex<f64>>(&x0, &shape);
        cg.solve_from(&mut a, &problem.upload::<Complex<f64>>(&b, &shape), &x).unwrap();
        let (want, ran) = cg_reference_from(&problem, &b, 0.5, max, &x0, tol);
        assert_eq!(cg.iterations_run().unwrap(), ran, "tol {tol}, at most {max}");
        let e = relative(&fetch(&x), &want);
        assert!(e < 1e-10, "tol {tol}, at most {max}: {e:e}");
    }
}

#[test]
fn conjugate_gradients_match_float64_iterates() {
    cg_matches::<Complex<f32>>(1e-4);
    cg_matches::<Complex<f64>>(1e-10);
}

/// CgSense: the mask inferred from zero-filled k-space (any coil not zero), the right-hand side Aᴴy and the solve
/// equal the float64 reference CG on the same problem; a mask attached to the KData is used as given.
#[test]
fn cg_sense_infers_the_mask_and_matches_float64() {
    let mut rng = Rng::new(5);
    let shape = [12, 10];
    let mut problem = Problem::new(&mut rng, 4, &shape);
    // A binary mask, as scanners sample.
    for m in problem.mask.iter_mut() {
        *m = if *m > 0.0 { 1.0 } else { 0.0 };
    }
    let p = problem.positions();
    let truth: Vec<Complex64> = (0..p).map(|_| Complex64::new(rng.uniform(), rng.uniform())).collect();
    let y = problem.forward(&truth);
    let want = cg_reference(&problem, &problem.adjoint(&y), 0.01, 12);
    let maps = problem.upload::<Complex<f32>>(&problem.maps, &[4, 12, 10]);
    let k =
        KData::new(problem.upload::<Complex<f32>>(&y, &[4, 12, 10]), 2).unwrap().with_sensitivity_maps(maps).unwrap();
    let out = XData::zeros(common::app(), &shape).unwrap();
    let mut recon = CgSense::new(&k, &out, CgParams::new(12).lambda(0.01));
    recon.run().unwrap();
    let e = relative(&fetch(&out), &want);
    assert!(e < 1e-4, "inferred mask: {e:e}");
    // The same with the mask attached (and k-space that is not zero outside it: the mask must win).
    let noisy: Vec<Complex64> = y
        .iter()
        .enumerate()
        .map(|(i, v)| if problem.mask[i % p] == 0.0 { Complex64::new(5.0, 5.0) } else { *v })
        .collect();
    let mask: Vec<f32> = problem.mask.iter().map(|&m| m as f32).collect();
    let maps = problem.upload::<Complex<f32>>(&problem.maps, &[4, 12, 10]);
    let k = KData::new(problem.upload::<Complex<f32>>(&noisy, &[4, 12, 10]), 2)
        .unwrap()
        .with_sensitivity_maps(maps)
        .unwrap()
        .with_sampling_mask(XData::from_slice(common::app(), &shape, &mask).unwrap())
        .unwrap();
    let mut recon = CgSense::new(&k, &out, CgParams::new(12).lambda(0.01));
    recon.run().unwrap();
    let e = relative(&fetch(&out), &want);
    assert!(e < 1e-4, "attached mask: {e:e}");
    assert!(recon.residuals().unwrap()[12] < recon.residuals().unwrap()[1]);
}

/// Refusals name what is wrong.
#[test]
fn sense_refusals_name_the_shapes() {
    let app = common::app();
    let maps = XData::<Complex<f32>>::zeros(app, &[2, 8, 6]).unwrap();
    let bad_mask = XData::<f32>::zeros(app, &[8, 5]).unwrap();
    let e = SenseOperator::new(&maps, Some(&bad_mask)).err().unwrap().to_string();
    assert!(e.contains("[8, 6]") && e.contains("[8, 5]"), "{e}");
    let mut a = SenseOperator::new(&maps, None).unwrap();
    let e = a
        .forward(&XData::zeros(app, &[8, 7]).unwrap(), &XData::zeros(app, &[2, 8, 6]).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("[8, 6]") && e.contains("[8, 7]"), "{e}");
    let k = KData::new(XData::<Complex<f32>>::zeros(app, &[2, 8, 6]).unwrap(), 2).unwrap();
    let e = CgSense::new(&k, &XData::zeros(app, &[8, 6]).unwrap(), CgParams::new(3)).run().unwrap_err().to_string();
    assert!(e.contains("sensitivity maps"), "{e}");
}

/// A frame of a batch (`index_axis(0, 1)`: contiguous, at an offset into its buffer) is refused by the operator,
/// which reads from the buffer's start — before, it silently transformed frame 0 — and `XData::contiguous`
/// copies it, after which the result is that frame's. CgSense gathers k-space handed to it as such a view.
#[test]
fn frame_views_are_refused_or_gathered_never_read_from_the_buffers_start() {
    let app = common::app();
    let c = |re: f32| Complex::new(re, 0.0f32);
    let maps = XData::from_slice(app, &[1, 4, 4], &[c(1.0); 16]).unwrap();
    let mut a = SenseOperator::new(&maps, None).unwrap();
    let mut x = vec![c(0.0); 32];
    x[16 + 2 * 4 + 2] = c(4.0);
    let both = XData::from_slice(app, &[2, 4, 4], &x).unwrap();
    let frame1 = both.index_axis(0, 1).unwrap();
    let k = XData::zeros(app, &[1, 4, 4]).unwrap();
    let refused = a.forward(&frame1, &k).unwrap_err().to_string();
    assert!(refused.contains("buffer's start"), "{refused}");
    a.forward(&frame1.contiguous().unwrap(), &k).unwrap();
    assert!(k.to_vec().unwrap().iter().all(|v| (v - c(1.0)).norm() < 1e-6));
    // CgSense on k-space given as frame 1 of two: the flat spectrum back to the delta.
    let spectra: Vec<_> = [vec![c(0.0); 16], k.to_vec().unwrap()].concat();
    let frames = XData::from_slice(app, &[2, 1, 4, 4], &spectra).unwrap();
    let k1 = KData::new(frames.index_axis(0, 1).unwrap(), 2).unwrap().with_sensitivity_maps(maps).unwrap();
    let out = CgSense::apply(&k1, CgParams::new(5)).unwrap().to_vec().unwrap();
    assert!((out[10] - c(4.0)).norm() < 1e-4 && out.iter().map(|v| v.norm()).sum::<f32>() < 4.01, "{out:?}");
}
