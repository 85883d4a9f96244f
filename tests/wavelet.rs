//! The wavelet transform against PyWavelets: fixtures in tests/fixtures/wavelet were written by pywt 1.8 with
//! make_pywt.py (wavedecn/waverecn, "db2", mode="symmetric") on a 45 × 37 image (2 levels), a 20 × 17 × 9 volume
//! (1 level) and 50 samples (3 levels) — none a multiple of anything. Tolerances: every coefficient is a sum of at
//! most 4ᵈ·levels products of weights below 1, so float64 agrees to ~1e-14 and float32 to a few ε times the
//! coefficients' size (1e-5 relative); complex data are two real transforms (the transform is linear).

mod common;
use cliper::{Process, Wavelet, WaveletParams, XData, read_npy};
use num_complex::Complex;

fn fixture(name: &str) -> (Vec<usize>, Vec<f64>) {
    let a = read_npy(format!("tests/fixtures/wavelet/{name}.npy"))
        .unwrap()
        .to_elements::<f64>(std::path::Path::new(name))
        .unwrap();
    (a.shape().to_vec(), a.iter().copied().collect())
}

fn worst(got: &[f64], want: &[f64]) -> f64 {
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    got.iter().zip(want).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max) / scale
}

const CASES: [(&str, usize); 3] = [("2d", 2), ("3d", 1), ("1d", 3)];

#[test]
fn analysis_and_synthesis_match_pywt() {
    let app = common::app();
    for (name, levels) in CASES {
        let (shape, image) = fixture(&format!("{name}_image"));
        let (_, want) = fixture(&format!("{name}_coefficients"));
        let params = WaveletParams::analysis().levels(levels);
        assert_eq!(Wavelet::<f64>::output_shape(&shape, &params).unwrap(), vec![want.len()], "{name}");
        // float64.
        let c = Wavelet::apply(&XData::from_slice(app, &shape, &image).unwrap(), params).unwrap();
        let e = worst(&c.to_vec().unwrap(), &want);
        assert!(e < 1e-13, "{name} f64 analysis: {e:e}");
        // float32.
        let x32: Vec<f32> = image.iter().map(|&v| v as f32).collect();
        let c = Wavelet::apply(&XData::from_slice(app, &shape, &x32).unwrap(), params).unwrap();
        let got: Vec<f64> = c.to_vec().unwrap().iter().map(|&v| v as f64).collect();
        let e = worst(&got, &want);
        assert!(e < 1e-5, "{name} f32 analysis: {e:e}");
        // complex64: image + i·(2·image reversed).
        let other: Vec<f64> = image.iter().rev().map(|v| 2.0 * v).collect();
        let z: Vec<Complex<f32>> = image.iter().zip(&other).map(|(&a, &b)| Complex::new(a as f32, b as f32)).collect();
        let c = Wavelet::apply(&XData::from_slice(app, &shape, &z).unwrap(), params).unwrap().to_vec().unwrap();
        let o = Wavelet::apply(&XData::from_slice(app, &shape, &other).unwrap(), params).unwrap().to_vec().unwrap();
        let re: Vec<f64> = c.iter().map(|v| v.re as f64).collect();
        let im: Vec<f64> = c.iter().map(|v| v.im as f64).collect();
        assert!(worst(&re, &want) < 1e-5 && worst(&im, &o) < 1e-5, "{name} c32 analysis");
        // Synthesis of random coefficients (not an analysis: every band matters) against pywt.waverecn.
        let (_, random) = fixture(&format!("{name}_random_coefficients"));
        let (_, want) = fixture(&format!("{name}_synthesis"));
        let back = Wavelet::apply(
            &XData::from_slice(app, &[random.len()], &random).unwrap(),
            WaveletParams::synthesis().levels(levels).image_shape(&shape),
        )
        .unwrap();
        let e = worst(&back.to_vec().unwrap(), &want);
        assert!(e < 1e-13, "{name} f64 synthesis: {e:e}");
    }
}

/// BART's level rule (split while the low band is at least min(n, 16)) and perfect reconstruction there, on a
/// non-square image whose axes stop splitting at different levels.
#[test]
fn bart_levels_and_perfect_reconstruction() {
    let app = common::app();
    let shape = [97usize, 23];
    let image: Vec<f64> = (0..97 * 23).map(|i| ((i * 37) % 101) as f64 - 50.0).collect();
    let x = XData::from_slice(app, &shape, &image).unwrap();
    let c = XData::zeros(app, &Wavelet::<f64>::output_shape(&shape, &WaveletParams::analysis()).unwrap()).unwrap();
    let mut w = Wavelet::new(&x, &c, WaveletParams::analysis());
    w.run().unwrap();
    // 97 → 50 → 26 → 14 (three splits); 23 → 13 (one split: 13 < 16 stops it).
    let s = w.strategy().unwrap();
    assert_eq!(s.splits_per_axis, vec![3, 1], "{s}");
    assert_eq!(s.levels, vec![vec![0, 1], vec![0], vec![0]]);
    assert_eq!(s.coefficients, 3 * 50 * 13 + 26 * 13 + 14 * 13 + 14 * 13);
    let back = Wavelet::apply(&c, WaveletParams::synthesis().image_shape(&shape)).unwrap();
    let e = worst(&back.to_vec().unwrap(), &image);
    assert!(e < 1e-14, "{e:e}");
    // A wrong coefficient count is refused with both sizes.
    let bad = XData::<f64>::zeros(app, &[100]).unwrap();
    let e = Wavelet::new(&x, &bad, WaveletParams::analysis()).run().unwrap_err().to_string();
    assert!(e.contains(&s.coefficients.to_string()) && e.contains("[100]"), "{e}");
}
