//! MRI reconstructions against BART 0.8.00 on its own data: the fixtures in tests/fixtures/bart were written by
//! bart (tests/fixtures/bart/make.sh says how); the tests read them without bart. Agreement is measured as the
//! normalised RMSE |ours − bart| / |bart| over the image, the target being 1e-3 (BART computes in
//! complex64 too: both sides round at ε ≈ 6e-8 per operation over 30 iterations).

#[path = "bart/coil_compression.rs"]
mod coil_compression;
mod common;
#[path = "bart/frames.rs"]
mod frames;
#[path = "bart/noncartesian.rs"]
mod noncartesian;
use cliper::{
    BartScaling, BartTrajectory, CgParams, CgSense, EspiritMaps, EspiritParams, KData, L1WaveletParams, L1WaveletSense,
    Process, SenseOperator, TrajectoryParams, TvParams, TvSense, XData, read_cfl,
};
use num_complex::{Complex32, Complex64};

const DIR: &str = "tests/fixtures/bart";

fn nrmse(got: &[Complex64], want: &[Complex64]) -> f64 {
    let diff: f64 = got.iter().zip(want).map(|(a, b)| (a - b).norm_sqr()).sum();
    let norm: f64 = want.iter().map(|v| v.norm_sqr()).sum();
    (diff / norm).sqrt()
}

fn fetch(x: &XData<Complex32>) -> Vec<Complex64> {
    x.to_vec().unwrap().iter().map(|v| Complex64::new(v.re as f64, v.im as f64)).collect()
}

/// A BART image file (96 × 96, BART's x[i, j] = BART(i, j)), row-major.
fn bart_image(name: &str) -> Vec<Complex64> {
    let a = read_cfl(format!("{DIR}/{name}")).unwrap().to_elements::<Complex64>(std::path::Path::new(name)).unwrap();
    // BART's dimensions, trailing ones included: 96 × 96 and then ones.
    assert_eq!(a.len(), 96 * 96, "{name}: shape {:?}", a.shape());
    assert!(a.shape().iter().skip(2).all(|&n| n == 1) && a.shape()[..2] == [96, 96], "{name}: shape {:?}", a.shape());
    a.iter().copied().collect()
}

/// BART's phantom k-space with its maps and mask, the fully sampled image (Aᴴy with every sample, the unitary
/// FFT's scale), and the zero-filled image's NRMSE to it.
fn phantom() -> (KData<Complex32>, Vec<Complex64>, f64) {
    let app = common::app();
    let k = KData::<Complex32>::load(app, format!("{DIR}/phantom8.cfl")).unwrap();
    let maps = k.sensitivity_maps().unwrap();
    let full = XData::zeros(app, &[96, 96]).unwrap();
    SenseOperator::new(maps, None).unwrap().adjoint(k.as_xdata(), &full).unwrap();
    let zf = XData::zeros(app, &[96, 96]).unwrap();
    SenseOperator::new(maps, k.sampling_mask()).unwrap().adjoint(k.as_xdata(), &zf).unwrap();
    let truth = fetch(&full);
    let zf_err = nrmse(&fetch(&zf), &truth);
    (k, truth, zf_err)
}

/// CG-SENSE on BART's 8-coil phantom, Poisson-disc mask R ≈ 4, ESPIRiT maps: equal to `bart pics -l2 -r 0.01
/// -i 30 -w 1` within 1e-3 (measured: 7e-6), and closer to the fully sampled SENSE image than the zero-filled
/// one is.
#[test]
fn cg_sense_matches_bart_pics_l2() {
    let app = common::app();
    let (k, truth, zf_err) = phantom();
    assert_eq!(k.as_xdata().shape(), &[8, 96, 96]);
    let mask = k.sampling_mask().expect("phantom8_mask").to_vec().unwrap();
    let sampled = mask.iter().filter(|&&m| m != 0.0).count();
    assert!((2100..2300).contains(&sampled), "{sampled} samples");
    let image = XData::zeros(app, &[96, 96]).unwrap();
    let mut recon = CgSense::new(&k, &image, CgParams::new(30).lambda(0.01));
    recon.run().unwrap();
    let ours = fetch(&image);
    let bart = bart_image("pics_l2");
    let e = nrmse(&ours, &bart);
    assert!(e < 1e-3, "CG-SENSE against bart pics -l2: NRMSE {e:e}");
    let (ours_err, bart_err) = (nrmse(&ours, &truth), nrmse(&bart, &truth));
    eprintln!(
        "against bart {e:e}; to the fully sampled image: ours {ours_err:.4}, bart {bart_err:.4}, zero-filled {zf_err:.4}"
    );
    assert!(
        ours_err < zf_err && bart_err < zf_err,
        "to the fully sampled image: ours {ours_err}, bart {bart_err}, zero-filled {zf_err}"
    );
}

/// ℓ1-wavelet SENSE by FISTA against `bart pics -l1 -r 5 -i 30 -w 1`, with BART's cycle spinning (the shifts drawn
/// as BART draws them) and without (`-n`): within 1e-3 each; the two BART results differ by far more than that
/// (so the spinning is reproduced, not averaged away), and both are closer to the fully sampled image than the
/// zero-filled one.
#[test]
fn l1_wavelet_matches_bart_pics_l1() {
    let (k, truth, zf_err) = phantom();
    let (spun, plain) = (bart_image("pics_l1"), bart_image("pics_l1_n"));
    assert!(nrmse(&plain, &spun) > 1e-2, "the fixtures should differ: {}", nrmse(&plain, &spun));
    for (spin, bart) in [(true, &spun), (false, &plain)] {
        let image = L1WaveletSense::apply(&k, L1WaveletParams::new(5.0, 30).cycle_spinning(spin)).unwrap();
        let ours = fetch(&image);
        let e = nrmse(&ours, bart);
        let err = nrmse(&ours, &truth);
        eprintln!(
            "l1-wavelet (spinning {spin}) against bart {e:e}; to the fully sampled image {err:.4}, zero-filled {zf_err:.4}"
        );
        assert!(e < 1e-3, "spinning {spin}: NRMSE {e:e} against bart pics -l1");
        assert!(err < zf_err, "spinning {spin}: {err} to the fully sampled image, zero-filled {zf_err}");
    }
}

/// TV-SENSE by ADMM against `bart pics -R T:7:0:10 -i 50 -w 1`: within 1e-3, and closer to the fully sampled image
/// than the zero-filled one.
#[test]
fn tv_matches_bart_pics_tv() {
    let (k, truth, zf_err) = phantom();
    let ours = fetch(&TvSense::apply(&k, TvParams::new(10.0, 50)).unwrap());
    let e = nrmse(&ours, &bart_image("pics_tv"));
    let err = nrmse(&ours, &truth);
    eprintln!("tv against bart {e:e}; to the fully sampled image {err:.4}, zero-filled {zf_err:.4}");
    assert!(e < 1e-3, "NRMSE {e:e} against bart pics -R T");
    assert!(err < zf_err);
}

/// ESPIRiT maps from the undersampled phantom against `bart ecalib -m1` (phantom8_sens): within 1e-3 after one
/// global sign (the principal component's sign is arbitrary in LAPACK too); the calibration region and kernel
/// count BART reports; and CG-SENSE with our maps equals bart pics -l2 with BART's maps, up to the same sign.
#[test]
fn espirit_maps_match_bart_ecalib() {
    let app = common::app();
    let k = KData::<Complex32>::load(app, format!("{DIR}/phantom8.cfl")).unwrap();
    // ESPIRiT sees what a scan delivers: the undersampled k-space, zero where the mask is 0.
    let mask = k.sampling_mask().unwrap().to_vec().unwrap();
    let undersampled: Vec<Complex32> =
        k.as_xdata().to_vec().unwrap().iter().enumerate().map(|(i, v)| v * mask[i % (96 * 96)]).collect();
    let u = KData::new(XData::from_slice(app, &[8, 96, 96], &undersampled).unwrap(), 2).unwrap();
    // What GPUs run (the Casorati Gram on the device, a work-item per pixel and coil) gives the same maps as what
    // CPUs run (the host's Gram, a work-item per pixel). AᴴA here: 288 kernel columns against 361 positions.
    let on_device = XData::<Complex32>::zeros(app, &[8, 96, 96]).unwrap();
    let gpu_like = EspiritParams::default().gram_on_device(true).work_item_per_pixel(false);
    EspiritMaps::new(&u, &on_device, gpu_like).run().unwrap();
    let maps = XData::zeros(app, &[8, 96, 96]).unwrap();
    let cpu_like = EspiritParams::default().gram_on_device(false).work_item_per_pixel(true);
    let mut espirit = EspiritMaps::new(&u, &maps, cpu_like);
    espirit.run().unwrap();
    let (a, b) = (fetch(&on_device), fetch(&maps));
    let e = nrmse(&a, &b);
    assert!(e < 1e-4, "the GPU's choices against the CPU's: NRMSE {e:e}");
    let s = espirit.strategy().unwrap();
    let ours = fetch(&maps);
    let bart = fetch(k.sensitivity_maps().unwrap());
    let sign = if ours.iter().zip(&bart).map(|(a, b)| (a * b.conj()).re).sum::<f64>() < 0.0 { -1.0 } else { 1.0 };
    let aligned: Vec<Complex64> = ours.iter().map(|v| v * sign).collect();
    let e = nrmse(&aligned, &bart);
    eprintln!("espirit: {s}; maps against bart ecalib {e:e} (sign {sign})");
    assert!(e < 1e-3, "maps: NRMSE {e:e}");
    let image = CgSense::apply(&u.with_sensitivity_maps(maps).unwrap(), CgParams::new(30).lambda(0.01)).unwrap();
    let image: Vec<Complex64> = fetch(&image).iter().map(|v| v * sign).collect();
    let e = nrmse(&image, &bart_image("pics_l2"));
    assert!(e < 1e-3, "CG-SENSE with our maps: NRMSE {e:e}");
}

/// The numbers `bart pics -d5` printed of its scaling estimate (tests/fixtures/bart/NAME_scaling.txt): the
/// calibration block's size and position, max, p90 and median, and whether it chose the max (`!`).
fn bart_printed_scaling(name: &str) -> (Vec<usize>, Vec<usize>, [f64; 3], bool) {
    let text = std::fs::read_to_string(format!("{DIR}/{name}_scaling.txt")).unwrap();
    let between = |from: &str, to: &str| {
        let rest = &text[text.find(from).unwrap() + from.len()..];
        rest[..rest.find(to).unwrap()].to_string()
    };
    let sizes = |s: String| s.split('x').map(|v| v.trim().parse().unwrap()).collect::<Vec<usize>>();
    let number = |from: &str, to: &str| between(from, to).trim().parse::<f64>().unwrap();
    (
        sizes(between("size: ", ",")),
        sizes(between("pos: ", ")")),
        [number("(max = ", "/"), number("p90 = ", "/"), number("median = ", ")")],
        between("Scaling: ", "(").trim_end().ends_with('!'),
    )
}

/// BART's default data scaling (no -w) estimated from the delivered samples equals what `bart pics -d5` printed:
/// the calibration block's size and position, max, p90 and median within 1e-5 relative (BART sorts float32
/// magnitudes from a float32 FFT; ours are float64: they differ in the 7th digit), and the same choice. On the
/// phantom (96 × 96, mask beside it): the 24 × 24 block at (36, 36), the max chosen; on espirit5 (70 × 53, odd and
/// 2 mod 4 sizes, where BART's fftmod phase is no sign flip; a 14 × 14 block): the p90 chosen; on vol3 (3-D,
/// 34 × 14 × 12): a 32 × 6 × 6 block moved along the readout to position 1.
#[test]
fn bart_scaling_matches_pics_estimate() {
    let app = common::app();
    for (name, want_size) in [("phantom8", [24, 24, 1]), ("espirit5", [14, 14, 1]), ("vol3", [32, 6, 6])] {
        let k = KData::<Complex32>::load(app, format!("{DIR}/{name}.cfl")).unwrap();
        let s = BartScaling::estimate(&k).unwrap();
        let (size, position, [max, p90, median], chose_max) =
            bart_printed_scaling(if name == "phantom8" { "pics" } else { name });
        assert_eq!(size, want_size, "{name}");
        let axes = k.spatial_shape().len();
        assert_eq!(s.calibration_shape, size[..axes], "{name}");
        assert_eq!(s.calibration_position, position[..axes], "{name}");
        for (what, ours, bart) in [("max", s.max, max), ("p90", s.p90, p90), ("median", s.median, median)] {
            assert!((ours - bart).abs() <= 1e-5 * bart, "{name} {what}: ours {ours}, bart {bart}");
        }
        assert_eq!(s.chose_max(), chose_max, "{name}: {s:?}");
        assert_eq!(s.scale, if chose_max { s.max } else { s.p90 }, "{name}");
    }
}

/// A reconstruction of a k-space, for tests that run several.
type Reconstruction = dyn Fn(&KData<Complex32>) -> XData<Complex32>;

/// The three reconstructions with BART's default scaling (k-space divided by the estimate, λ on the scaled data,
/// the image not scaled back) against `bart pics -l2 -r 0.01 -i 30`, `-l1 -r 0.005 -i 30` and `-R T:7:0:0.01 -i
/// 50` without -w: within the 1e-3 NRMSE of the -w 1 tests above. The same λ on the unscaled data is far off
/// (the fixtures tell the two apart).
#[test]
fn reconstructions_with_bart_default_scaling_match_pics() {
    let (k, _, _) = phantom();
    let scaling = BartScaling::estimate(&k).unwrap();
    let scaled = BartScaling::divide(&k, scaling.scale).unwrap();
    let cases: [(&str, &Reconstruction); 3] = [
        ("pics_l2_scaled", &|k| CgSense::apply(k, CgParams::new(30).lambda(0.01)).unwrap()),
        ("pics_l1_scaled", &|k| L1WaveletSense::apply(k, L1WaveletParams::new(0.005, 30)).unwrap()),
        ("pics_tv_scaled", &|k| TvSense::apply(k, TvParams::new(0.01, 50)).unwrap()),
    ];
    for (fixture, recon) in cases {
        let bart = bart_image(fixture);
        let e = nrmse(&fetch(&recon(&scaled)), &bart);
        let unscaled = nrmse(&fetch(&recon(&k)), &bart);
        eprintln!("{fixture}: scaled by {} {e:e}; unscaled {unscaled:e}", scaling.scale);
        assert!(e < 1e-3, "{fixture}: NRMSE {e:e}");
        assert!(unscaled > 0.5, "{fixture}: the unscaled image is as close ({unscaled:e})");
    }
}

/// `pics -S` multiplies the image by the scaling afterwards: pics_l1_rescaled is pics_l1_scaled times the
/// estimate, within float32 rounding (1e-6 NRMSE: one multiplication per value on both sides).
#[test]
fn bart_rescaled_image_is_the_scaled_one_times_the_estimate() {
    let app = common::app();
    let k = KData::<Complex32>::load(app, format!("{DIR}/phantom8.cfl")).unwrap();
    let s = BartScaling::estimate(&k).unwrap().scale;
    let scaled: Vec<Complex64> = bart_image("pics_l1_scaled").iter().map(|v| v * s).collect();
    let e = nrmse(&scaled, &bart_image("pics_l1_rescaled"));
    assert!(e < 1e-6, "{e:e}");
}

/// `bart traj`'s flags for each traj_* fixture (tests/fixtures/bart/make_noncart.sh), as our parameters.
fn bart_traj_cases() -> Vec<(&'static str, TrajectoryParams)> {
    let base = |readout, spokes| TrajectoryParams { readout, spokes, ..TrajectoryParams::default() };
    let radial = |readout, spokes| TrajectoryParams { radial: true, ..base(readout, spokes) };
    vec![
        ("traj_cart", base(12, 9)),
        ("traj_cart_a2", TrajectoryParams { acceleration: 2, ..base(12, 10) }),
        ("traj_r", radial(16, 7)),
        ("traj_r_odd", radial(15, 4)),
        ("traj_r_D", TrajectoryParams { full_circle: true, ..radial(16, 7) }),
        ("traj_r_G", TrajectoryParams { golden: true, ..radial(16, 13) }),
        ("traj_r_G_s7", TrajectoryParams { golden: true, tiny_golden: 7, ..radial(16, 13) }),
        ("traj_r_H", TrajectoryParams { half_circle_golden: true, ..base(16, 13) }),
        ("traj_r_c", TrajectoryParams { asymmetric: true, ..radial(15, 5) }),
        ("traj_r_o2", TrajectoryParams { oversampling: 2.0, ..radial(16, 5) }),
        ("traj_r_o15", TrajectoryParams { oversampling: 1.5, ..radial(11, 5) }),
        ("traj_r_R30", TrajectoryParams { rotation_degrees: 30.0, ..radial(16, 5) }),
        ("traj_r_t3", TrajectoryParams { turns: 3, ..radial(8, 5) }),
        ("traj_r_m4", TrajectoryParams { partitions: 4, ..radial(8, 5) }),
        ("traj_r_m4_l", TrajectoryParams { partitions: 4, aligned: true, ..radial(8, 5) }),
        ("traj_r_G_m3_t2", TrajectoryParams { golden: true, partitions: 3, turns: 2, ..radial(8, 5) }),
        ("traj_r_3", TrajectoryParams { three_d: true, ..radial(16, 21) }),
        ("traj_r_3_D", TrajectoryParams { three_d: true, full_circle: true, ..radial(16, 21) }),
        // The NUFFT fixtures' trajectories (make_noncart.sh): golden angle, 64 samples oversampled 2, and 64.
        ("nc_t", TrajectoryParams { golden: true, oversampling: 2.0, ..radial(64, 51) }),
        ("nc_t64", TrajectoryParams { golden: true, ..radial(64, 47) }),
    ]
}

/// Every supported `bart traj` flag set (and the NUFFT fixtures' trajectories) against bart's own file: the same shape (trailing ones aside) and every
/// coordinate within 1e-6 · max|k|. Tolerance: BART computes the spoke directions in float (cosf of the angle
/// rounded to float, ~6e-8 relative each) while we compute in f64 and round once, so the two differ by a few
/// 1e-8 · |k|; 1e-6 · max|k| is 10× that and still far below any angle or offset mistake (≥ 1e-3 here).
#[test]
fn trajectories_match_bart_traj() {
    for (name, params) in bart_traj_cases() {
        let want =
            read_cfl(format!("{DIR}/{name}")).unwrap().to_elements::<Complex64>(std::path::Path::new(name)).unwrap();
        let got = BartTrajectory::new(params).unwrap().generate().unwrap();
        let trimmed = |s: &[usize]| {
            let last = s.iter().rposition(|&n| n != 1).map_or(0, |i| i + 1);
            s[..last].to_vec()
        };
        assert_eq!(trimmed(got.shape()), trimmed(want.shape()), "{name}: shape");
        let max_k = want.iter().map(|v| v.re.abs()).fold(0.0, f64::max);
        assert!(want.iter().all(|v| v.im == 0.0), "{name}: bart wrote imaginary parts");
        let worst = got.iter().zip(want.iter()).map(|(g, w)| (*g as f64 - w.re).abs()).fold(0.0, f64::max);
        eprintln!("{name}: max |Δ| / max|k| = {:.2e}", worst / max_k);
        assert!(worst <= 1e-6 * max_k, "{name}: max |Δ| {worst:e} > 1e-6 · {max_k}");
    }
}

/// What BART 0.8 aborts on (an assertion) or refuses is refused in one line naming the option.
#[test]
fn trajectory_refusals_name_the_option() {
    let radial = TrajectoryParams { readout: 8, spokes: 5, radial: true, ..TrajectoryParams::default() };
    let cases = [
        (TrajectoryParams { acceleration: 2, ..radial.clone() }, "-a 2"),
        (TrajectoryParams { acceleration: 2, radial: false, ..radial.clone() }, "-y 5 -a 2"),
        (TrajectoryParams { oversampling: 0.0, ..radial.clone() }, "-o 0"),
        (TrajectoryParams { half_circle_golden: true, full_circle: true, ..radial.clone() }, "-H with -D"),
        (TrajectoryParams { three_d: true, turns: 2, ..radial.clone() }, "-3 with -t 2"),
        (TrajectoryParams { turns: 2, radial: false, ..radial.clone() }, "-t 2"),
        (TrajectoryParams { readout: 0, ..radial.clone() }, "-x 0"),
    ];
    for (params, named) in cases {
        let message = BartTrajectory::new(params).unwrap_err().to_string();
        assert!(message.contains(named) && !message.contains('\n'), "{message}");
    }
}

/// Two sets of ESPIRiT maps (`bart ecalib -m 2`, with and without the crop) of k-space whose field of view is half the
/// phantom's along y (tests/fixtures/bart/make_maps2.sh: 8 coils, 90 × 45), where the phantom folds and the second
/// map holds energy. Both maps within 1e-3 of BART's (NRMSE over each map, one global sign for all as for one map;
/// BART computes in float32 with its orthogonal iteration, which ours follows step for step).
#[test]
fn two_map_espirit_matches_bart_ecalib_m2() {
    let app = common::app();
    let k = KData::<Complex32>::load(app, format!("{DIR}/fold8.cfl")).unwrap();
    assert_eq!(k.as_xdata().shape(), &[8, 90, 45]);
    for (name, crop) in [("fold8_m2", 0.8), ("fold8_m2c0", 0.0)] {
        let maps = EspiritMaps::apply(&k, EspiritParams::default().sets(2).crop(crop)).unwrap();
        assert_eq!(maps.shape(), &[2, 8, 90, 45]);
        let ours = fetch(&maps);
        let a =
            read_cfl(format!("{DIR}/{name}")).unwrap().to_elements::<Complex64>(std::path::Path::new(name)).unwrap();
        // BART's (x, y, 0, coil, map) as [map, coil, x, y].
        let bart: Vec<Complex64> = (0..ours.len())
            .map(|i| {
                let (m, c, x, y) = (i / (8 * 90 * 45), (i / (90 * 45)) % 8, (i / 45) % 90, i % 45);
                a[[x, y, 0, c, m].as_slice()]
            })
            .collect();
        let sign = if ours.iter().zip(&bart).map(|(a, b)| (a * b.conj()).re).sum::<f64>() < 0.0 { -1.0 } else { 1.0 };
        let half = ours.len() / 2;
        for (m, range) in [(0, 0..half), (1, half..ours.len())] {
            let o: Vec<Complex64> = ours[range.clone()].iter().map(|v| v * sign).collect();
            let e = nrmse(&o, &bart[range]);
            eprintln!("{name}: map {m} against bart ecalib -m 2: {e:e}");
            assert!(e < 1e-3, "{name}: map {m}: NRMSE {e:e}");
        }
    }
}

/// 3-D ESPIRiT against `bart ecalib` on a 3-D phantom (tests/fixtures/bart/make_ecalib3d.sh: 4 coils, 24 × 22 ×
/// 18, the whole volume fully sampled, so the calibration block is 24 × 22 × 18 and the kernels 6 × 6 × 6): one set
/// within 1e-4 of `ecalib -m1` (measured 2.2e-5), two sets within 1e-3 of `ecalib -m 2` (2.2e-5 and 1.6e-4; the
/// second set's eigenvectors carry no phase reference of their own, so each set is aligned by one unit factor, as
/// the 2-D test does), up to BART's global sign; complex64 both.
#[test]
fn espirit_3d_matches_bart_ecalib() {
    let app = common::app();
    let k = KData::<Complex32>::load(app, format!("{DIR}/k3d")).unwrap();
    assert_eq!((k.num_coils(), k.spatial_shape()), (4, &[24, 22, 18][..]));
    // BART's maps [x, y, z, coils(, sets)] as ours [(sets,) coils, x, y, z].
    let bart = |name: &str, sets: usize| -> Vec<Complex64> {
        let a =
            read_cfl(format!("{DIR}/{name}")).unwrap().to_elements::<Complex64>(std::path::Path::new(name)).unwrap();
        let a = a.into_shape_with_order(ndarray::IxDyn(&[24, 22, 18, 4, sets])).unwrap();
        let mut out = Vec::with_capacity(a.len());
        for m in 0..sets {
            for c in 0..4 {
                for x in 0..24 {
                    for y in 0..22 {
                        for z in 0..18 {
                            out.push(a[[x, y, z, c, m]]);
                        }
                    }
                }
            }
        }
        out
    };
    // Each set aligned to BART's by the unit factor that fits best.
    let aligned = |ours: &[Complex64], want: &[Complex64]| -> f64 {
        let dot: Complex64 = ours.iter().zip(want).map(|(a, b)| a.conj() * b).sum();
        let unit = if dot.norm() > 0.0 { dot / dot.norm() } else { Complex64::new(1.0, 0.0) };
        nrmse(&ours.iter().map(|v| v * unit).collect::<Vec<_>>(), want)
    };
    let one = XData::zeros(app, &[4, 24, 22, 18]).unwrap();
    let mut espirit = EspiritMaps::new(&k, &one, EspiritParams::default());
    espirit.run().unwrap();
    let e = aligned(&fetch(&one), &bart("ecalib3d", 1));
    let s = espirit.strategy().unwrap();
    assert_eq!(s.calibration, vec![24, 22, 18]);
    assert_eq!(s.candidates, 6 * 6 * 6 * 4);
    assert!(e < 1e-4, "3-D maps against bart ecalib: {e:e} ({s})");
    let two = EspiritMaps::apply(&k, EspiritParams::default().sets(2)).unwrap();
    assert_eq!(two.shape(), &[2, 4, 24, 22, 18]);
    let (ours, want) = (fetch(&two), bart("ecalib3d_m2", 2));
    let half = ours.len() / 2;
    for (m, range) in [(0, 0..half), (1, half..2 * half)] {
        let e = aligned(&ours[range.clone()], &want[range]);
        assert!(e < 1e-3, "3-D set {m} against bart ecalib -m 2: {e:e}");
    }
}
