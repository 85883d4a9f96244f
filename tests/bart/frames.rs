//! Frames reconstructed as one problem, as `bart pics` runs data with a TIME dimension: three frames of a 4-coil
//! 40 × 38 phantom, each scaled differently and with its own line pattern, sharing one set of ESPIRiT maps
//! (tests/fixtures/bart_frames/make.sh). CG-SENSE (one CG over every frame), ℓ1-wavelet (FISTA, the same cycle
//! spinning shifts for every frame) and TV (ADMM, no difference across frames) against `bart pics`.
//!
//! BART's pics image is −1 times ours here: 38 ≡ 2 (mod 4), and pics's fftmod² is −1 on such an axis
//! (docs/bart-semantics.md §2); ours is the centred unitary DFT's own image. The comparison flips pics's sign.
//! Measured 2e-7 to 1.2e-6 per frame, complex64 both; held to 1e-5 (float32 rounding over 30–50 iterations).

use super::{common, fetch, nrmse};
use cliper::{
    BartScaling, CgParams, CgSense, KData, L1WaveletParams, L1WaveletSense, Process, TvParams, TvSense, XData, read_cfl,
};
use num_complex::{Complex32, Complex64};

const DIR: &str = "tests/fixtures/bart_frames";

/// pics's image `[40, 38, 1, …, 3]` as our `[3, 40, 38]`, its sign flipped (see above).
fn pics(name: &str) -> Vec<Complex64> {
    let a = read_cfl(format!("{DIR}/{name}")).unwrap().to_elements::<Complex64>(std::path::Path::new(name)).unwrap();
    let a = a.into_shape_with_order(ndarray::IxDyn(&[40, 38, 3])).unwrap();
    (0..3).flat_map(|f| (0..40 * 38).map(move |p| (f, p))).map(|(f, p)| -a[[p / 38, p % 38, f]]).collect()
}

#[test]
fn frames_are_one_problem_as_bart_pics_solves_them() {
    let app = common::app();
    let k = KData::<Complex32>::load(app, format!("{DIR}/ksp")).unwrap();
    assert_eq!((k.frame_shape(), k.num_coils(), k.spatial_shape()), (&[3][..], 4, &[40, 38][..]));
    let scaling = BartScaling::estimate(&k).unwrap();
    assert!((scaling.scale / 4561.680664 - 1.0).abs() < 1e-6, "scaling {} against pics's 4561.680664", scaling.scale);
    let k = BartScaling::divide(&k, scaling.scale).unwrap();
    let check = |name: &str, image: &XData<Complex32>| {
        assert_eq!(image.shape(), &[3, 40, 38]);
        let (ours, want) = (fetch(image), pics(name));
        for f in 0..3 {
            let frame = 40 * 38 * f..40 * 38 * (f + 1);
            let e = nrmse(&ours[frame.clone()], &want[frame]);
            assert!(e < 1e-5, "{name}, frame {f}: {e:e} from bart pics");
        }
    };
    check("pics_l2", &CgSense::apply(&k, CgParams::new(30).lambda(0.01)).unwrap());
    check("pics_l1", &L1WaveletSense::apply(&k, L1WaveletParams::new(0.005, 30)).unwrap());
    check("pics_tv", &TvSense::apply(&k, TvParams::new(0.01, 50)).unwrap());
    // The same patterns given as a per-frame mask [3, 40, 38] rather than inferred: the same image.
    let values = k.as_xdata().to_vec().unwrap();
    let mask: Vec<f32> = (0..3 * 40 * 38)
        .map(|q| {
            let (f, p) = (q / (40 * 38), q % (40 * 38));
            let any = (0..4).any(|c| values[(f * 4 + c) * 40 * 38 + p] != Complex32::new(0.0, 0.0));
            if any { 1.0 } else { 0.0 }
        })
        .collect();
    let masked = k.with_sampling_mask(XData::from_slice(app, &[3, 40, 38], &mask).unwrap()).unwrap();
    let out = XData::zeros(app, &[3, 40, 38]).unwrap();
    CgSense::new(&masked, &out, CgParams::new(30).lambda(0.01)).run().unwrap();
    check("pics_l2", &out);
}
