//! Labelling and hole filling from the binary, against scipy.ndimage fixtures (tests/fixtures/make_morphology.py):
//! exact (integers), on .npy masks, as a pipeline step, and the refusal when labels do not fit the output type.

use crate::common::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/morphology").join(format!("{name}.npy"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn same(out: &Path, want: &str) {
    let (got, want) = (f32s(out), f32s(&fixture(want)));
    assert_eq!(got.shape(), want.shape());
    let wrong = got.iter().zip(want.iter()).filter(|(g, w)| g != w).count();
    assert_eq!(wrong, 0, "{wrong} elements differ from scipy's");
}

#[test]
fn label_and_fill_holes_commands_equal_scipy() {
    let dir = scratch("label");
    let out = dir.join("out.npy");
    ok(&["label", s(&fixture("m2")), s(&out), "--precision", "single"]);
    same(&out, "label_m2_c1");
    ok(&["label", s(&fixture("m3s")), s(&out), "--rank", "3", "--connectivity", "3"]);
    same(&out, "label_m3s_c3");
    ok(&["fill-holes", s(&fixture("blobs")), s(&out), "--connectivity", "2"]);
    same(&out, "fill_blobs_c2");
    ok(&["fill-holes", s(&fixture("cav")), s(&out), "--rank", "3"]);
    same(&out, "fill_cav");
    // A pipeline: fill the holes, then label.
    let pipeline = dir.join("p.toml");
    std::fs::write(
        &pipeline,
        format!(
            "[input]\nmask = \"{}\"\n\n[[step]]\nop = \"fill-holes\"\nin = \"mask\"\nout = \"filled\"\n\n[[step]]\n\
             op = \"label\"\nconnectivity = 2\nin = \"filled\"\nout = \"labels\"\n\n[output]\nlabels = \"{}\"\n",
            s(&fixture("m2")),
            s(&dir.join("labels.npy"))
        ),
    )
    .unwrap();
    ok(&["run", s(&pipeline)]);
    let labels = f32s(&dir.join("labels.npy"));
    assert!(labels.iter().all(|v| v.fract() == 0.0) && labels.iter().fold(0.0f64, |m, &v| m.max(v)) >= 1.0);
    // 400 labels do not fit 8 bits: refused, naming the range and the first label beyond it; nothing written.
    let many = dir.join("many.npy");
    let mut grid = ndarray::ArrayD::<f64>::zeros(ndarray::IxDyn(&[40, 40]));
    for ((i, j), v) in (0..40).flat_map(|i| (0..40).map(move |j| (i, j))).zip(grid.iter_mut()) {
        *v = f64::from(u8::from(i % 2 == 0 && j % 2 == 0));
    }
    cliper::write_npy(&many, &cliper::HostArray::F64(grid)).unwrap();
    let png = dir.join("labels.png");
    let e = fails(&["label", s(&many), s(&png), "--type", "u8"], 1);
    assert!(e.contains("0..=255") && e.contains("256"), "{e}");
    assert!(!png.exists());
}
