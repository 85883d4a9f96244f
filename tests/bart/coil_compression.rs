//! Coil compression against `bart cc` 0.8.00 on tests/fixtures/bart_cc (make.sh there: an 8-coil phantom k-space
//! [46, 38, 1, 8] with noise). Eigenvectors have no set phase, so each virtual coil (and each matrix column) is
//! compared after the one unit factor that best aligns it with BART's (LAPACK's choice against faer's); everything
//! else — which combination, its energy, the alignment along the readout — must agree. BART computes in float32
//! (cheev, float FFTs), ours in float64: the tolerance is 1e-4 NRMSE (measured 4.5e-7 to 1.5e-5, printed).

use super::nrmse;
use cliper::{CoilCompression, CompressionMethod, CompressionParams, images_from_bart, read_cfl};
use num_complex::Complex64;

const DIMS: [usize; 3] = [46, 38, 1];

/// A fixture as `[coils, x, y]` values and its coil count.
fn fixture(name: &str) -> (usize, Vec<Complex64>) {
    let a = read_cfl(format!("tests/fixtures/bart_cc/{name}"))
        .unwrap()
        .to_elements::<Complex64>(std::path::Path::new(name))
        .unwrap();
    images_from_bart(&a, &DIMS, name).unwrap()
}

/// NRMSE of `ours` against `bart` after multiplying each of `ours`' `groups` equal parts by the unit factor that
/// aligns it best with BART's.
fn phase_aligned_nrmse(ours: &[Complex64], bart: &[Complex64], groups: usize) -> f64 {
    let n = ours.len() / groups;
    let aligned: Vec<Complex64> = ours
        .chunks(n)
        .zip(bart.chunks(n))
        .flat_map(|(o, b)| {
            let inner: Complex64 = o.iter().zip(b).map(|(o, b)| o.conj() * b).sum();
            let unit = if inner.norm() > 0.0 { inner / inner.norm() } else { Complex64::new(1.0, 0.0) };
            o.iter().map(move |v| v * unit).collect::<Vec<_>>()
        })
        .collect();
    nrmse(&aligned, bart)
}

#[test]
fn coil_compression_matches_bart_cc() {
    let (coils, k) = fixture("k");
    assert_eq!(coils, 8);
    let shape = [8, DIMS[0], DIMS[1], 1];
    let cases: [(&str, CompressionParams, usize); 4] = [
        ("s4", CompressionParams::new(CompressionMethod::Svd), 4),
        ("s4_all", CompressionParams::new(CompressionMethod::Svd).all_data(true), 4),
        ("g4", CompressionParams::new(CompressionMethod::Geometric), 4),
        ("g3_r12", CompressionParams::new(CompressionMethod::Geometric).calibration([12, 12, 12]), 3),
    ];
    for (name, params, virtual_coils) in cases {
        let cc = CoilCompression::estimate(&k, shape, params).unwrap();
        let ours = cc.compress(&k, shape, virtual_coils).unwrap();
        let (p, bart) = fixture(name);
        assert_eq!(p, virtual_coils);
        let e = phase_aligned_nrmse(&ours, &bart, virtual_coils);
        eprintln!("{name}: {e:e} from bart cc; energy {:?}", &cc.energy()[..virtual_coils]);
        assert!(e < 1e-4, "{name}: {e:e} from bart cc");
    }
}

/// `bart cc -M`: the SVD matrix `[1, 1, 1, 8, 8]` and the geometric ones `[46, 1, 1, 8, 8]` (before alignment), each
/// virtual coil's column compared up to its unit factor.
#[test]
fn compression_matrices_match_bart_cc_m() {
    let (_, k) = fixture("k");
    let shape = [8, DIMS[0], DIMS[1], 1];
    for (name, method) in [("sm", CompressionMethod::Svd), ("gm", CompressionMethod::Geometric)] {
        let cc = CoilCompression::estimate(&k, shape, CompressionParams::new(method)).unwrap();
        let a = read_cfl(format!("tests/fixtures/bart_cc/{name}"))
            .unwrap()
            .to_elements::<Complex64>(std::path::Path::new(name))
            .unwrap();
        let positions = a.shape()[0];
        assert_eq!(positions, cc.matrices().len());
        // BART's element (x, 0, 0, c, p) is w_p[c] at readout position x; ours [x][p][c].
        let bart: Vec<Complex64> =
            (0..positions * 64).map(|i| a[[i / 64, 0, 0, i % 8, (i / 8) % 8].as_slice()]).collect();
        let ours: Vec<Complex64> = cc.matrices().concat();
        let e = phase_aligned_nrmse(&ours, &bart, positions * 8);
        eprintln!("{name}: {e:e} from bart cc -M");
        assert!(e < 1e-4, "{name}: {e:e} from bart cc -M");
    }
}

/// ESPIRiT-based compression (`bart cc -E`) on the phantom without noise (kp; on the noisy k, BART's threshold keeps
/// every kernel, the operator is 1/12 times the identity at every readout position — checked here — and any basis
/// is an answer: BART's own warning that -E lacks a parameter choice rule). The compressed k-space of `-p 4`, each
/// virtual coil after its unit factor, within 1e-4 (measured 1.2e-5 to 2.9e-5); the matrices of `-M -E`, each
/// column per position after its unit factor, within 5e-3: the two leading eigenvalues are within 3e-4 of each other
/// (1.000 and 0.9997 at some positions), so float32 (BART) and float64 (ours) turn their vectors into each other by
/// up to 2.3e-3 — the 4-column subspace they span agrees to 1e-6 at every position.
#[test]
fn espirit_compression_matches_bart_cc_e() {
    let (_, kp) = fixture("kp");
    let shape = [8, DIMS[0], DIMS[1], 1];
    let cc = CoilCompression::estimate(&kp, shape, CompressionParams::new(CompressionMethod::Espirit)).unwrap();
    let (p, bart) = fixture("e4");
    assert_eq!(p, 4);
    let e = phase_aligned_nrmse(&cc.compress(&kp, shape, 4).unwrap(), &bart, 4);
    assert!(e < 1e-4, "e4: {e:e} from bart cc -p 4 -E");
    let a =
        read_cfl("tests/fixtures/bart_cc/em").unwrap().to_elements::<Complex64>(std::path::Path::new("em")).unwrap();
    let positions = a.shape()[0];
    assert_eq!(positions, cc.matrices().len());
    let bart: Vec<Complex64> = (0..positions * 64).map(|i| a[[i / 64, 0, 0, i % 8, (i / 8) % 8].as_slice()]).collect();
    let ours: Vec<Complex64> = cc.matrices().concat();
    let e = phase_aligned_nrmse(&ours, &bart, positions * 8);
    assert!(e < 5e-3, "em: {e:e} from bart cc -M -E");
    // The leading four columns span BART's at every position: the smallest singular value of B_4ᴴ O_4 is 1.
    for x in 0..positions {
        let column = |m: &[Complex64], p: usize| m.get(x * 64 + p * 8..x * 64 + p * 8 + 8).unwrap().to_vec();
        let cross = faer::Mat::<Complex64>::from_fn(4, 4, |i, j| {
            column(&bart, i).iter().zip(column(&ours, j)).map(|(b, o)| b.conj() * o).sum()
        });
        let smallest = cross.singular_values().unwrap().into_iter().fold(f64::INFINITY, f64::min);
        assert!(smallest > 1.0 - 1e-6, "position {x}: the 4-column subspaces meet at {smallest}");
    }
    // The noisy k keeps every kernel: the compression's energy is spread evenly over the 8 coils.
    let (_, k) = fixture("k");
    let noisy = CoilCompression::estimate(&k, shape, CompressionParams::new(CompressionMethod::Espirit)).unwrap();
    assert!(noisy.energy().iter().all(|&e| (e - 0.125).abs() < 1e-3), "{:?}", noisy.energy());
}
