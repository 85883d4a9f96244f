//! The `cliper` command line end to end on PoCL (or CLIPER_DEVICE's device): every subcommand on the sample
//! data and on random arrays with checked outputs, a pipeline file, a batch directory with a corrupt file, and
//! bad arguments (one clear line, exit code 1, no panic).
//!
//! Results are compared with float64 host references at the tolerance of the element type the CLI computed
//! in (f32: 1e-5 relative to the largest magnitude — a few hundred roundings of 6e-8 in sums of up to 129
//! terms; f64: 1e-12), or bit for bit with the library where the CLI only passes the arguments on.

mod common;
use cliper::{ClApp, ConvParams, Convolution, Element, Filter, HostArray, XData, read_file, read_npy, write_npy};
use common::*;
use ndarray::{ArrayD, Ix2, IxDyn};
use num_complex::Complex32;
use rand::{Rng, SeedableRng, rngs::StdRng};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn random_npy(dir: &Path, name: &str, shape: &[usize], seed: u64) -> (PathBuf, ArrayD<f64>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let a = ArrayD::from_shape_fn(IxDyn(shape), |_| rng.random_range(-1.0f32..1.0));
    let path = dir.join(name);
    write_npy(&path, &HostArray::F32(a.clone())).unwrap();
    (path, a.mapv(f64::from))
}

#[test]
fn the_cli_lists_devices() {
    let out = cliper().arg("devices").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let devices = ClApp::devices().unwrap();
    for d in &devices {
        assert!(text.contains(&d.id()), "{text}");
    }
    assert_eq!(text.lines().filter(|l| l.starts_with('*')).count(), 1, "{text}");
}

#[test]
fn devices_and_help() {
    let text = ok(&["devices"]);
    assert!(text.contains('*') && text.contains("chosen by"), "{text}");
    let json: Value = serde_json::from_str(&ok(&["devices", "--json"])).unwrap();
    assert_eq!(json["devices"].as_array().unwrap().iter().filter(|d| d["default"] == true).count(), 1);
    for sub in [
        "devices",
        "info",
        "convert",
        "transpose",
        "permute",
        "matmul",
        "power",
        "norm",
        "dot",
        "pad",
        "convolve",
        "run",
        "demo",
    ] {
        let help = ok(&[sub, "--help"]);
        assert!(help.contains("Example"), "{sub} --help has no example:\n{help}");
    }
}

#[test]
fn info_reports_statistics_variables_and_kspace() {
    let text = ok(&["info", "data/phantom_256.png"]);
    assert!(text.contains("[256,256] u16") && text.contains("max 65535") && text.contains("NaN 0"), "{text}");
    let json: Value = serde_json::from_str(&ok(&["info", "data/kspace.mat", "--json"])).unwrap();
    let names: Vec<&str> = json["variables"].as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["kspace", "spatial_dims", "sensitivity_maps", "mask"]);
    assert_eq!(json["variables"][3]["mean"], 0.625);
    assert_eq!(
        (json["kspace"]["coils"].as_u64(), json["kspace"]["spatial"].clone()),
        (Some(8), serde_json::json!([64, 64]))
    );
    let json: Value = serde_json::from_str(&ok(&["info", "data/matrices.mat:A", "--json"])).unwrap();
    assert_eq!(json["variables"][0]["shape"], serde_json::json!([64, 48]));
}

#[test]
fn convert_changes_format_and_type_explicitly() {
    let dir = scratch("convert");
    let npy = dir.join("p.npy");
    ok(&["convert", "data/phantom_256.tif", npy.to_str().unwrap()]);
    assert_eq!(read_npy(&npy).unwrap(), read_file(root().join("data/phantom_256.tif")).unwrap(), "bit-exact");
    let png = dir.join("p8.png");
    ok(&["convert", "data/phantom_256.tif", png.to_str().unwrap(), "--type", "u8", "--scale", "minmax"]);
    let HostArray::U8(p8) = read_file(&png).unwrap() else { panic!("u8") };
    assert_eq!((p8.iter().min(), p8.iter().max()), (Some(&0), Some(&255)));
    let err = fails(&["convert", "data/phantom_256.tif", dir.join("f.png").to_str().unwrap()], 1);
    assert!(err.contains("--type") && err.contains("f.png"), "{err}");
    assert!(!dir.join("f.png").exists());
}

#[test]
fn linear_algebra_subcommands_match_references() {
    let dir = scratch("linalg");
    let (a, ha) = random_npy(&dir, "a.npy", &[7, 129], 1);
    let (b, hb) = random_npy(&dir, "b.npy", &[129, 5], 2);
    let out = |n: &str| dir.join(n).to_str().unwrap().to_string();

    ok(&["transpose", a.to_str().unwrap(), &out("at.npy")]);
    assert_eq!(f32s(&dir.join("at.npy")), ha.t().to_owned(), "transpose is exact");

    ok(&["matmul", a.to_str().unwrap(), b.to_str().unwrap(), &out("c.npy")]);
    let c = ha.view().into_dimensionality::<Ix2>().unwrap().dot(&hb.view().into_dimensionality::<Ix2>().unwrap());
    close(&f32s(&dir.join("c.npy")), &c.clone().into_dyn(), 1e-5, "matmul");
    // --gemm-precision tf32: TF32 tensor cores where the device has them (2⁻¹⁰ relative per term: 129 terms of
    // magnitude ≤ 1 stay within 1e-2 of the largest output), FP32 elsewhere; an unknown precision is refused
    // naming it, with no output written.
    ok(&["matmul", a.to_str().unwrap(), b.to_str().unwrap(), &out("c_tf32.npy"), "--gemm-precision", "tf32"]);
    close(&f32s(&dir.join("c_tf32.npy")), &c.clone().into_dyn(), 1e-2, "matmul --gemm-precision tf32");
    let err =
        fails(&["matmul", a.to_str().unwrap(), b.to_str().unwrap(), &out("c_half.npy"), "--gemm-precision", "half"], 1);
    assert!(err.contains("half") && err.contains("fp32-split"), "{err}");
    assert!(!dir.join("c_half.npy").exists(), "a refused matmul wrote its output");
    ok(&["matmul", a.to_str().unwrap(), a.to_str().unwrap(), &out("aat.npy"), "--tb"]);
    let h2 = ha.view().into_dimensionality::<Ix2>().unwrap();
    close(&f32s(&dir.join("aat.npy")), &h2.dot(&h2.t()).into_dyn(), 1e-5, "matmul --tb");

    // f64 matrices from the MAT sample compute in double: 1e-12.
    ok(&["matmul", "data/matrices.mat:A", "data/matrices.mat:B", &out("ab.mat")]);
    ok(&["power", &out("ab.mat"), "3", &out("ab3.npy")]);
    // f64 data ignores the f32 precision: the same result.
    ok(&["power", &out("ab.mat"), "3", &out("ab3_tf32.npy"), "--gemm-precision", "tf32"]);
    assert_eq!(f32s(&dir.join("ab3_tf32.npy")), f32s(&dir.join("ab3.npy")), "power --gemm-precision on f64");
    let (HostArray::F64(ma), HostArray::F64(mb)) = (
        cliper::read_mat_variable(root().join("data/matrices.mat"), "A").unwrap(),
        cliper::read_mat_variable(root().join("data/matrices.mat"), "B").unwrap(),
    ) else {
        panic!("f64")
    };
    let m = ma.into_dimensionality::<Ix2>().unwrap().dot(&mb.into_dimensionality::<Ix2>().unwrap());
    let m3 = m.dot(&m).dot(&m);
    close(&f32s(&dir.join("ab3.npy")), &m3.into_dyn(), 1e-12, "power 3 in f64");

    let text = ok(&["norm", a.to_str().unwrap()]);
    let norm2: f64 = text.trim().strip_prefix("norm = ").unwrap().parse().unwrap();
    let want = ha.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!((norm2 - want).abs() < 1e-5 * want, "{norm2} vs {want}");
    let json: Value = serde_json::from_str(&ok(&["norm", a.to_str().unwrap(), "-p", "inf", "--json"])).unwrap();
    let inf = json["runs"][0]["values"][0]["values"].as_f64().unwrap();
    // max |x| is exact in f32 (serde_json's default float parsing may be off by one f64 ulp).
    assert_eq!(inf as f32, ha.iter().fold(0.0f64, |m, v| m.max(v.abs())) as f32);
    ok(&["norm", a.to_str().unwrap(), "--axis", "1", "-p", "1.5", "-o", &out("rows.npy")]);
    let rows = ndarray::Array1::from_iter(
        ha.outer_iter().map(|r| r.iter().map(|v| v.abs().powf(1.5)).sum::<f64>().powf(1.0 / 1.5)),
    );
    close(&f32s(&dir.join("rows.npy")), &rows.into_dyn(), 1e-5, "row 1.5-norms");

    let json: Value = serde_json::from_str(&ok(&["dot", a.to_str().unwrap(), a.to_str().unwrap(), "--json"])).unwrap();
    let dot = json["runs"][0]["values"][0]["values"].as_f64().unwrap();
    assert!((dot - want * want).abs() < 1e-5 * want * want, "{dot}");
    // Complex data with --conj: ⟨k, k⟩ = ‖k‖², real.
    let json: Value =
        serde_json::from_str(&ok(&["dot", "data/kspace.mat:kspace", "data/kspace.mat:kspace", "--conj", "--json"]))
            .unwrap();
    let z = &json["runs"][0]["values"][0]["values"];
    let (re, im) = (z[0].as_f64().unwrap(), z[1].as_f64().unwrap());
    assert!(re > 0.0 && im.abs() < 1e-5 * re, "{z}");

    let err = fails(&["matmul", a.to_str().unwrap(), a.to_str().unwrap(), &out("bad.npy")], 1);
    assert!(err.contains("[7, 129]") && err.contains("MatMul") && !err.contains("step 1"), "{err}");
}

#[test]
fn pad_and_convolve_pass_their_arguments_on() {
    let dir = scratch("conv");
    let (x, hx) = random_npy(&dir, "x.npy", &[31, 17], 3);
    let out = |n: &str| dir.join(n).to_str().unwrap().to_string();
    ok(&["pad", x.to_str().unwrap(), &out("p.npy"), "--width", "2:3,1:0", "--mode", "wrap"]);
    let p = f32s(&dir.join("p.npy"));
    assert_eq!(p.shape(), &[36, 18]);
    for ((i, j), v) in p.view().into_dimensionality::<Ix2>().unwrap().indexed_iter() {
        assert_eq!(*v, hx[[(i + 31 - 2) % 31, (j + 17 - 1) % 17]], "wrap at ({i}, {j})");
    }

    // The CLI's convolution is the library's, bit for bit, with the same parameters (named filters correlate, as
    // scipy.ndimage's functions of those names do).
    let x_dev = XData::<f32>::load(&app(), &x).unwrap();
    let cases: [(&[&str], Filter<f32>, ConvParams); 3] = [
        (
            &["--kernel", "gaussian:1.5"],
            Filter::gaussian(1.5, 2).unwrap(),
            ConvParams::default().mode(cliper::ConvMode::Correlation).border(cliper::Border::scipy("reflect").unwrap()),
        ),
        (
            &["--kernel", "sobel-y", "--border", "constant", "--value", "2", "--output", "full"],
            Filter::sobel_y(),
            ConvParams::default()
                .mode(cliper::ConvMode::Correlation)
                .border(cliper::Border::Constant(2.0))
                .output(cliper::ConvOutput::Full),
        ),
        (
            &["--kernel", "log:1", "--border", "wrap", "--output", "valid"],
            Filter::laplacian_of_gaussian(1.0, 2).unwrap(),
            ConvParams::default()
                .mode(cliper::ConvMode::Correlation)
                .border(cliper::Border::Wrap)
                .output(cliper::ConvOutput::Valid),
        ),
    ];
    for (i, (flags, filter, params)) in cases.iter().enumerate() {
        let path = out(&format!("c{i}.npy"));
        let mut args = vec!["convolve", x.to_str().unwrap(), path.as_str()];
        args.extend_from_slice(flags);
        ok(&args);
        let want = Convolution::apply(&x_dev, filter, params.clone()).unwrap().to_ndarray().unwrap();
        assert_eq!(f32s(Path::new(&path)), want.mapv(f64::from), "{flags:?}");
    }
    // A filter file: a complex filter on complex data.
    let k = ArrayD::from_shape_fn(IxDyn(&[3, 2]), |ix| Complex32::new(ix[0] as f32, ix[1] as f32 - 0.5));
    write_npy(dir.join("k.npy"), &HostArray::C32(k)).unwrap();
    ok(&["convolve", "data/kspace.cfl", &out("kc.npy"), "--kernel", &out("k.npy")]);
    assert_eq!(read_file(dir.join("kc.npy")).unwrap().shape(), &[64, 64, 1, 8]);
    let err = fails(&["convolve", x.to_str().unwrap(), &out("y.npy"), "--kernel", &out("k.npy")], 1);
    assert!(err.contains("real"), "complex filter on real data: {err}");
    let err = fails(&["convolve", x.to_str().unwrap(), &out("y.npy"), "--kernel", "median:3"], 1);
    assert!(err.contains("gaussian:SIGMA") && err.contains("median:3"), "{err}");
}

#[test]
fn pipeline_file_runs_a_chain_and_reports() {
    let dir = scratch("pipeline");
    let (x, hx) = random_npy(&dir, "x.npy", &[9, 7], 4);
    let file = dir.join("p.toml");
    let toml = format!(
        r#"
[input]
x = "{x}"

[[step]]
op = "transpose"
in = "x"
out = "xt"

[[step]]
op = "matmul"
in = ["x", "xt"]
out = "gram"

[[step]]
op = "norm"
in = "gram"
out = "size"
p = "inf"

[output]
gram = {{ path = "{dir}/gram.tif" }}
xt = "{dir}/xt.npy"
"#,
        x = x.display(),
        dir = dir.display()
    );
    std::fs::write(&file, toml).unwrap();
    let json: Value = serde_json::from_str(&ok(&["run", file.to_str().unwrap(), "--json", "--profile"])).unwrap();
    let h = hx.view().into_dimensionality::<Ix2>().unwrap();
    let gram = h.dot(&h.t()).into_dyn();
    close(&f32s(&dir.join("gram.tif")), &gram, 1e-5, "gram through the chain");
    assert_eq!(f32s(&dir.join("xt.npy")), hx.t().to_owned());
    let size = json["runs"][0]["values"][0]["values"].as_f64().unwrap();
    assert!((size - gram.iter().fold(0.0f64, |m, v| m.max(v.abs()))).abs() < 1e-5 * size);
    assert!(json["profile"]["kernels"].as_array().unwrap().len() >= 3, "{}", json["profile"]);

    // Mistakes in the file name the step and the problem.
    let bad = dir.join("bad.toml");
    for (text, needle) in [
        ("[input]\nx = \"a.npy\"\n[[step]]\nop = \"norm\"\nin = \"y\"\nout = \"n\"\n", "reads `y`"),
        ("[input]\nx = \"a.npy\"\n[[step]]\nop = \"blur\"\nin = \"x\"\nout = \"n\"\n", "step 1"),
        ("[input]\nx = \"a.npy\"\n[[step]]\nop = \"norm\"\nin = \"x\"\nout = \"n\"\nq = 3\n", "q"),
        ("[input]\nx = \"a.npy\"\n", "no [[step]]"),
    ] {
        std::fs::write(&bad, text).unwrap();
        let err = fails(&["run", bad.to_str().unwrap()], 1);
        assert!(err.contains(needle) && err.contains("bad.toml"), "{needle}: {err}");
    }
}

#[test]
fn expressions_after_a_convolution_fuse_with_it_and_equal_the_steps_run_apart() {
    let dir = scratch("fused_convolution");
    let (x, _) = random_npy(&dir, "x.npy", &[37, 45], 5);
    let file = dir.join("p.toml");
    let toml = format!(
        r#"
[input]
x = "{x}"

[[step]]
op = "convolve"
kernel = "laplace"
in = "x"
out = "y"

[[step]]
op = "expression"
expr = "a * 2 - 1"
in = "y"
out = "z"

[[step]]
op = "expression"
expr = "where(a > 0, a, 0)"
in = "z"
out = "m"

[output]
y = "{dir}/y.npy"
m = "{dir}/m.npy"
"#,
        x = x.display(),
        dir = dir.display()
    );
    std::fs::write(&file, toml).unwrap();
    let json: Value = serde_json::from_str(&ok(&["run", file.to_str().unwrap(), "--json", "--profile"])).unwrap();
    // On GPUs one kernel computed the convolution and both expressions: the profile lists no expression kernel;
    // CPU devices run both expressions as one kernel after the convolution.
    let kernels = json["profile"]["kernels"].as_array().unwrap();
    let names: Vec<&str> = kernels.iter().filter_map(|k| k["kernel"].as_str()).collect();
    let cpu = app().device().kind == cliper::DeviceKind::Cpu;
    assert!(names.iter().any(|k| k.starts_with("conv_")), "{names:?}");
    assert_eq!(names.iter().filter(|&&k| k == "expression").count(), usize::from(cpu), "{names:?}");
    // The same steps one command each: the same files, bit for bit.
    let (y1, z1, m1) = (dir.join("y1.npy"), dir.join("z1.npy"), dir.join("m1.npy"));
    let path = |p: &std::path::Path| p.to_str().unwrap().to_string();
    ok(&["convolve", &path(&x), &path(&y1), "--kernel", "laplace"]);
    ok(&["expression", &path(&y1), &path(&z1), "--expr", "a * 2 - 1"]);
    ok(&["expression", &path(&z1), &path(&m1), "--expr", "where(a > 0, a, 0)"]);
    assert_eq!(f32s(&dir.join("y.npy")), f32s(&y1));
    assert_eq!(f32s(&dir.join("m.npy")), f32s(&m1));
    assert!(f32s(&m1).iter().any(|&v| v > 0.0) && f32s(&m1).iter().any(|&v| v == 0.0), "a mask of both kinds");
}

#[test]
fn batch_directory_goes_on_past_a_corrupt_file() {
    let dir = scratch("batch");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    for i in 0..3 {
        random_npy(&input, &format!("img{i}.npy"), &[20, 13], 10 + i);
    }
    random_npy(&input, "other_shape.npy", &[5, 8], 20);
    std::fs::write(input.join("broken.npy"), b"\x93NUMPY garbage").unwrap();
    let out = dir.join("out");
    let err = fails(&["convolve", input.to_str().unwrap(), &format!("{}/", out.display()), "--kernel", "box:3"], 1);
    assert!(err.contains("broken.npy") && err.contains("1 of 5"), "{err}");
    for i in 0..3 {
        let got = f32s(&out.join(format!("img{i}.npy")));
        assert_eq!(got.shape(), &[20, 13]);
    }
    assert_eq!(f32s(&out.join("other_shape.npy")).shape(), &[5, 8], "a new shape rebuilds the chain");
    assert!(!out.join("broken.npy").exists());
    // A batch needs an output per file.
    let err = fails(&["transpose", input.to_str().unwrap(), dir.join("one.npy").to_str().unwrap()], 1);
    assert!(err.contains("{stem}"), "{err}");
}

/// SIGINT in the middle of a batch: the run stops with exit code 130, and every file in the output directory is
/// a complete output — no temporary `.NAME.cliper-tmp-*` file is left and every output reads back whole.
#[test]
fn an_interrupted_batch_leaves_only_complete_outputs() {
    let dir = scratch("interrupt");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let files = 60;
    for i in 0..files {
        random_npy(&input, &format!("img{i:02}.npy"), &[384, 257], 100 + i);
    }
    let out = dir.join("out");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cliper"))
        .args(["convolve", input.to_str().unwrap(), &format!("{}/", out.display()), "--kernel", "gaussian:3"])
        .args(["--type", "f64"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once a few outputs exist, at a moment when a save is in flight (its temporary file exists)
    // if the polling sees one within a second, else between saves.
    let start = std::time::Instant::now();
    let names = || -> Vec<String> {
        std::fs::read_dir(&out)
            .map_or(Vec::new(), |d| d.map(|e| e.unwrap().file_name().to_string_lossy().into()).collect())
    };
    while names().iter().filter(|n| !n.contains("cliper-tmp")).count() < 3 {
        assert!(start.elapsed().as_secs() < 120, "no outputs after two minutes");
        assert!(child.try_wait().unwrap().is_none(), "the batch ended before it was interrupted");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let saving = std::time::Instant::now();
    while saving.elapsed().as_secs() < 1 && !names().iter().any(|n| n.contains("cliper-tmp")) {}
    let kill = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted") && !stderr.contains("panicked"), "{stderr}");
    let written: Vec<PathBuf> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(written.len() < files as usize, "all {files} outputs were written before the interrupt");
    for path in &written {
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(!name.contains("cliper-tmp"), "a partial output was left: {name}");
        let HostArray::F64(a) = read_npy(path).unwrap() else { panic!("{name} is not f64") };
        assert_eq!(a.shape(), &[384, 257], "{name}");
        assert!(a.iter().all(|v| v.is_finite()), "{name}");
    }
    eprintln!("interrupted after {} of {files} outputs; {stderr}", written.len());
}

#[test]
fn bad_arguments_give_one_clear_line_and_exit_code_1() {
    fails(&["frobnicate"], 1);
    let err = fails(&["norm", "no/such/file.npy"], 1);
    assert!(err.contains("no/such/file.npy"), "{err}");
    let err = fails(&["norm", "data/README.md"], 1);
    assert!(err.contains(".md"), "{err}");
    let err = fails(&["norm", "data/phantom_256.png", "-p", "0.5"], 1);
    assert!(err.contains("0.5"), "{err}");
    let err = fails(&["info", "data/kspace.mat:nothing"], 1);
    assert!(err.contains("nothing") && err.contains("kspace"), "{err}");
    // No device matching --device is the device failing: exit code 2 (docs/cli.md).
    let err = fails(&["--device", "no-such-device-xyz", "norm", "data/phantom_256.png"], 2);
    assert!(err.contains("no-such-device-xyz") && err.contains("cliper devices"), "{err}");
    let err = fails(&["pad", "data/phantom_256.png", "/tmp/x.npy", "--width", "a:b"], 1);
    assert!(err.contains("a:b"), "{err}");
}

#[test]
fn demo_writes_its_results() {
    let dir = scratch("demo");
    let text = ok(&["demo", "--out", dir.to_str().unwrap()]);
    for file in ["demo_smooth.tif", "demo_edges.png", "demo_column_energy.npy"] {
        assert!(dir.join(file).exists() && text.contains(file), "{file}:\n{text}");
    }
    assert!(text.contains("edge_energy = ") && text.contains("device ms"), "{text}");
    assert!(text.contains("host↔device copies during the chain: 0"), "{text}");
}

#[test]
fn recon_reconstructs_the_sample_phantom() {
    let dir = scratch("recon");
    let phantom = cliper::SheppLogan::<f32>::reference(&[64, 64]).unwrap();
    // SENSE into NPY keeps the complex image; RSoS into TIFF a magnitude; both equal the phantom within 1e-5
    // (float32 FFTs of length 64 and float32-stored maps).
    let npy = dir.join("sense.npy");
    let line = ok(&["recon", "data/kspace.mat", npy.to_str().unwrap()]);
    assert!(line.contains("recon (sense): 8 coils"), "{line}");
    let HostArray::C32(image) = read_file(&npy).unwrap() else { panic!("expected complex64 in {}", npy.display()) };
    let worst = image.iter().zip(&phantom).map(|(g, p)| (g.to_c64() - p).norm()).fold(0.0, f64::max);
    assert!(worst < 1e-5, "SENSE off by {worst:.2e}");
    let tif = dir.join("rsos.tif");
    ok(&["recon", "data/kspace.cfl", tif.to_str().unwrap(), "--method", "rsos"]);
    let worst = f32s(&tif).iter().zip(&phantom).map(|(g, p)| (g - p.abs()).abs()).fold(0.0, f64::max);
    assert!(worst < 1e-5, "RSoS off by {worst:.2e}");
    // The masked (zero-filled) reconstruction differs from the full one; JSON reports it.
    let masked = dir.join("masked.tif");
    let json: Value =
        serde_json::from_str(&ok(&["recon", "data/kspace.mat", masked.to_str().unwrap(), "--apply-mask", "--json"]))
            .unwrap();
    let recon = &json["recon"];
    assert_eq!(
        (recon["method"].as_str(), recon["masked"].as_bool(), recon["coils"].as_u64()),
        (Some("sense"), Some(true), Some(8))
    );
    let diff = f32s(&masked).iter().zip(&phantom).map(|(g, p)| (g - p.abs()).abs()).fold(0.0, f64::max);
    assert!(diff > 1e-3, "the mask changed nothing ({diff:.2e})");
    // Bad inputs: one clear line, exit 1.
    let e = fails(&["recon", "data/phantom_256.png", dir.join("x.tif").to_str().unwrap()], 1);
    assert!(e.contains("data/phantom_256.png") && e.contains(".cfl"), "{e}");
    // A CFL pair without its _sens companion: rsos by default, and --method sense names what is missing.
    for ext in ["cfl", "hdr"] {
        std::fs::copy(root().join(format!("data/kspace.{ext}")), dir.join(format!("bare.{ext}"))).unwrap();
    }
    let bare = dir.join("bare.cfl");
    let line = ok(&["recon", bare.to_str().unwrap(), dir.join("b.png").to_str().unwrap(), "--scale", "minmax"]);
    assert!(line.contains("recon (rsos)"), "{line}");
    let e = fails(&["recon", bare.to_str().unwrap(), dir.join("b.npy").to_str().unwrap(), "--method", "sense"], 1);
    assert!(e.contains("bare.cfl") && e.contains("no sensitivity maps") && e.contains("--method rsos"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_cliper_device_environment_variable_fails_cleanly_in_the_cli() {
    let out = cliper().arg("demo").env("CLIPER_DEVICE", "no-such-device-anywhere").output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("CLIPER_DEVICE=no-such-device-anywhere"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn no_opencl_platform_gives_the_install_hint() {
    // The ICD loader (ocl-icd, as on Debian) reads its vendor list from OCL_ICD_VENDORS: an empty folder
    // looks exactly like a machine without any OpenCL driver.
    let empty = std::env::temp_dir().join(format!("cliper-no-vendors-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let out = cliper().arg("devices").env("OCL_ICD_VENDORS", &empty).output().unwrap();
    let _ = std::fs::remove_dir(&empty);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("pocl-opencl-icd") && stderr.contains("ocl-icd-libopencl1"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Refusals of two-input operations and of axes: one line that names both element types (or the axis and the
/// shape), exit code 1. The inputs are numpy's files (tests/fixtures: f32_c_order.npy is float32 [2, 3],
/// c64.npy complex64 [2], which cliper calls c32).
#[test]
fn mixed_types_and_missing_axes_are_named() {
    let real = "tests/fixtures/f32_c_order.npy";
    let complex = "tests/fixtures/c64.npy";
    let e = fails(&["dot", real, complex], 1);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("dot: type mismatch: expected f32, got c32 (the second input"), "{e}");
    let e = fails(&["dot", real, real, "--axis", "-3"], 1);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("axis -3 does not exist in an array of shape [2, 3] (2 axes)"), "{e}");
}
