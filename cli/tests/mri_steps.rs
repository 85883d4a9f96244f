//! The MRI operations as steps on arrays (`rsos`, `sense`, `cg-sense`, `l1-wavelet`, `tv`, `espirit`, `walsh-maps`)
//! against `cliper recon` / `cliper ecalib`, which run the same library processes on a k-space file and are
//! compared with BART elsewhere (cli/tests/medical.rs, tests/bart.rs): the same input gives the same image, and a
//! pipeline chains the maps into the reconstruction.
//!
//! Tolerance: both sides run the same kernels on the same device in the same precision (complex64), so they agree
//! to float32 rounding; 1e-5 of the largest magnitude leaves room for reductions summed in another order.

mod common;

use cliper::{HostArray, KData, KSpaceMat, XData, read_file};
use common::*;
use num_complex::{Complex32, Complex64};
use std::path::{Path, PathBuf};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The values of an output file as complex numbers.
fn values(path: &Path) -> Vec<Complex64> {
    read_file(path).unwrap().to_elements::<Complex64>(path).unwrap().iter().copied().collect()
}

fn same(a: &Path, b: &Path, what: &str) {
    let (x, y) = (values(a), values(b));
    assert_eq!(x.len(), y.len(), "{what}: sizes");
    let scale = y.iter().map(|v| v.norm()).fold(0.0, f64::max);
    assert!(scale > 0.0, "{what}: an empty image");
    let worst = x.iter().zip(&y).map(|(p, q)| (p - q).norm()).fold(0.0, f64::max);
    assert!(worst <= 1e-5 * scale, "{what}: differs by {worst:e} of {scale:e}");
}

/// data/kspace.mat's k-space (8 coils, 64²) undersampled by its own mask, with its maps, as a MAT file without a
/// mask: the steps infer the samples from the zeros, as `recon` does for such a file.
fn undersampled_mat(dir: &Path) -> PathBuf {
    let app = app();
    let k = KData::<Complex32>::load(&app, root().join("data/kspace.mat")).unwrap();
    let mask = k.sampling_mask().unwrap().to_ndarray().unwrap();
    let mut data = k.as_xdata().to_ndarray().unwrap();
    for mut coil in data.outer_iter_mut() {
        coil.zip_mut_with(&mask, |v, &m| *v *= m);
    }
    let masked = KData::new(XData::from_ndarray(&app, &data).unwrap(), 2).unwrap();
    let masked = masked.with_sensitivity_maps(k.sensitivity_maps().unwrap().clone()).unwrap();
    let path = dir.join("undersampled.mat");
    masked.save_mat(&path, &KSpaceMat::default()).unwrap();
    path
}

#[test]
fn coil_combinations_equal_recon() {
    let dir = scratch("mri-steps-combine");
    let mat = root().join("data/kspace.mat");
    let (k, maps) = (format!("{}:kspace", s(&mat)), format!("{}:sensitivity_maps", s(&mat)));
    let out = |n: &str| dir.join(format!("{n}.npy"));
    ok(&["sense", &k, &maps, s(&out("sense"))]);
    ok(&["recon", s(&mat), s(&out("recon-sense")), "--method", "sense", "--part", "complex"]);
    same(&out("sense"), &out("recon-sense"), "sense");
    ok(&["rsos", &k, s(&out("rsos"))]);
    ok(&["recon", s(&mat), s(&out("recon-rsos")), "--method", "rsos"]);
    same(&out("rsos"), &out("recon-rsos"), "rsos");
    assert_eq!(read_file(out("rsos")).unwrap().dtype(), cliper::Dtype::F32, "a magnitude image");
}

#[test]
fn iterative_reconstructions_equal_recon_on_the_data_as_given() {
    let dir = scratch("mri-steps-iterative");
    let mat = undersampled_mat(&dir);
    let (k, maps) = (format!("{}:kspace", s(&mat)), format!("{}:sensitivity_maps", s(&mat)));
    let out = |n: &str| dir.join(format!("{n}.npy"));
    let recon = |name: &str, method: &[&str]| {
        let target = out(name);
        let mut args = vec!["recon", s(&mat), s(&target), "--scaling", "1", "--part", "complex"];
        args.extend_from_slice(method);
        ok(&args);
    };
    ok(&["cg-sense", &k, &maps, s(&out("cg")), "--iters", "8", "--lambda", "0.01"]);
    recon("recon-cg", &["--method", "cg-sense", "--iters", "8", "--lambda", "0.01"]);
    same(&out("cg"), &out("recon-cg"), "cg-sense");
    ok(&["l1-wavelet", &k, &maps, s(&out("l1")), "--lambda", "0.005", "--iters", "6", "--no-cycle-spinning"]);
    recon("recon-l1", &["--method", "l1-wavelet", "--lambda", "0.005", "--iters", "6", "--no-cycle-spinning"]);
    same(&out("l1"), &out("recon-l1"), "l1-wavelet");
    ok(&["tv", &k, &maps, s(&out("tv")), "--lambda", "0.01", "--iters", "6"]);
    recon("recon-tv", &["--method", "tv", "--lambda", "0.01", "--iters", "6"]);
    same(&out("tv"), &out("recon-tv"), "tv");
    // λ is refused before anything runs, naming the step.
    let e = fails(&["tv", &k, &maps, s(&out("never")), "--lambda", "-1"], 1);
    assert!(e.contains("tv") && e.contains("-1") && !out("never").exists(), "{e}");
}

#[test]
fn maps_chain_into_a_reconstruction() {
    let dir = scratch("mri-steps-chain");
    let mat = undersampled_mat(&dir);
    let out = |n: &str| dir.join(format!("{n}.npy"));
    ok(&["espirit", &format!("{}:kspace", s(&mat)), s(&out("maps")), "--crop", "0.9", "--calibration", "20"]);
    ok(&["ecalib", s(&mat), s(&out("ecalib")), "--crop", "0.9", "--calibration", "20"]);
    same(&out("maps"), &out("ecalib"), "espirit");
    ok(&["walsh-maps", &format!("{}:kspace", s(&mat)), s(&out("walsh")), "--smoothing", "7"]);
    ok(&["ecalib", s(&mat), s(&out("ecalib-walsh")), "--method", "walsh", "--smoothing", "7"]);
    same(&out("walsh"), &out("ecalib-walsh"), "walsh-maps");
    // One pipeline: the maps stay on the device and feed CG-SENSE, as `recon --maps espirit` does in one command.
    let pipeline = dir.join("recon.toml");
    std::fs::write(
        &pipeline,
        format!(
            "[input]\nk = \"{}:kspace\"\n\n[[step]]\nop = \"espirit\"\nin = \"k\"\nout = \"maps\"\ncrop = 0.9\n\n\
             [[step]]\nop = \"cg-sense\"\nin = [\"k\", \"maps\"]\nout = \"image\"\niters = 8\n\n\
             [output]\nimage = \"{}\"\n",
            s(&mat),
            s(&out("chained"))
        ),
    )
    .unwrap();
    ok(&["run", s(&pipeline)]);
    let target = out("recon-chain");
    let args = ["recon", s(&mat), s(&target), "--method", "cg-sense", "--maps", "espirit", "--crop", "0.9"];
    ok(&[&args[..], &["--scaling", "1", "--iters", "8", "--part", "complex"]].concat());
    same(&out("chained"), &out("recon-chain"), "espirit → cg-sense");
    // Real data is no k-space: refused naming the type.
    let real = dir.join("real.npy");
    cliper::write_npy(&real, &HostArray::F32(ndarray::ArrayD::zeros(ndarray::IxDyn(&[2, 8, 8])))).unwrap();
    let e = fails(&["rsos", s(&real), s(&out("never"))], 1);
    assert!(e.contains("complex k-space") && e.contains("f32"), "{e}");
}

/// `cliper traj` with BART's option letters writes bart traj's file: the golden-angle fixture
/// (tests/fixtures/bart/traj_r_G, `bart traj -r -G -x 16 -y 13`) and the 3-D kooshball one. Tolerance 1e-6 of
/// max|k|: BART computes the spoke directions in float, we in f64 rounded once (tests/bart.rs measures ≤ 1e-7).
#[test]
fn traj_command_writes_bart_traj_files() {
    let dir = scratch("traj_command");
    let fixtures = root().join("tests/fixtures/bart");
    let cases: [(&str, &[&str]); 3] = [
        ("traj_r_G", &["-x", "16", "-y", "13", "--radial", "--golden"]),
        ("traj_r_3_D", &["-x", "16", "-y", "21", "-r", "-3", "-D"]),
        ("traj_r_R30", &["--readout", "16", "--spokes", "5", "--radial", "--rotate", "30"]),
    ];
    for (name, flags) in cases {
        let out = dir.join(name);
        let mut args = vec!["traj", s(&out)];
        args.extend_from_slice(flags);
        ok(&args);
        let (got, want) = (values(&dir.join(format!("{name}.cfl"))), values(&fixtures.join(format!("{name}.cfl"))));
        assert_eq!(got.len(), want.len(), "{name}: sizes");
        let max_k = want.iter().map(|v| v.norm()).fold(0.0, f64::max);
        let worst = got.iter().zip(&want).map(|(p, q)| (p - q).norm()).fold(0.0, f64::max);
        assert!(worst <= 1e-6 * max_k, "{name}: differs by {worst:e} of {max_k:e}");
    }
    // An .npy output holds the same values, real.
    let npy = dir.join("t.npy");
    ok(&["traj", s(&npy), "-x", "16", "-y", "13", "-r", "-G"]);
    assert_eq!(read_file(&npy).unwrap().shape(), &[3, 16, 13]);
}

/// What bart traj aborts on is refused in one line naming the options, and nothing is written.
#[test]
fn traj_command_refuses_what_bart_aborts_on() {
    let dir = scratch("traj_refusals");
    let out = dir.join("t");
    let e = fails(&["traj", s(&out), "-x", "16", "-y", "5", "-r", "-a", "2"], 1);
    assert!(e.contains("-a 2") && e.trim().lines().count() == 1, "{e}");
    let e = fails(&["traj", s(&out), "-x", "16", "-y", "5", "-H", "-D"], 1);
    assert!(e.contains("-H with -D"), "{e}");
    assert!(!dir.join("t.cfl").exists() && !dir.join("t.hdr").exists());
}
