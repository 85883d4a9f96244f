//! watershed and watershed-ift from the binary, against scikit-image 0.26 and scipy 1.17 fixtures
//! (tests/fixtures/make_segment.py): labels, so exact (tolerance 0); written as int32; as commands with --mask,
//! --connectivity, --watershed-line, --minima and --structure, as a pipeline step with the mask as a third input,
//! and refusals in one line.

use crate::common::*;
use cliper::{HostArray, read_file, write_npy};
use ndarray::{ArrayD, IxDyn};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/segment").join(format!("{name}.npy"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn same(out: &Path, want: &str) {
    assert!(matches!(read_file(out).unwrap(), HostArray::I32(_)), "{} is not int32", out.display());
    let (got, want) = (f32s(out), f32s(&fixture(want)));
    assert_eq!(got.shape(), want.shape());
    let wrong = got.iter().zip(want.iter()).filter(|(g, w)| g != w).count();
    assert_eq!(wrong, 0, "{wrong} elements differ from the reference's");
}

#[test]
fn watershed_commands_equal_skimage() {
    let dir = scratch("watershed");
    let out = dir.join("out.npy");
    let (img2, mk2, mask2) = (fixture("img2"), fixture("mk2"), fixture("mask2"));
    ok(&["watershed", s(&img2), s(&mk2), s(&out)]);
    same(&out, "ws2_c1");
    ok(&["watershed", s(&img2), s(&mk2), s(&out), "--mask", s(&mask2), "--connectivity", "2", "--watershed-line"]);
    same(&out, "ws2_line_c2_mask");
    ok(&[
        "watershed",
        s(&fixture("img3")),
        s(&fixture("mk3")),
        s(&out),
        "--compactness",
        "0.01",
        "--mask",
        s(&fixture("mask3")),
    ]);
    same(&out, "ws3_mask_compact");
    ok(&["watershed", s(&img2), s(&mk2), s(&out), "--structure", s(&fixture("wide_footprint"))]);
    same(&out, "ws2_footprint");
    ok(&["watershed", s(&img2), s(&img2), s(&out), "--minima", "--connectivity", "2", "--mask", s(&mask2)]);
    same(&out, "ws2_minima_c2_mask");
}

#[test]
fn watershed_step_takes_the_mask_as_a_third_input() {
    let dir = scratch("watershed-step");
    let pipeline = dir.join("p.toml");
    std::fs::write(
        &pipeline,
        format!(
            "input = {{ image = '{}', markers = '{}', mask = '{}' }}\n[[step]]\nop = 'watershed'\n\
             watershed_line = true\nin = ['image', 'markers', 'mask']\nout = 'labels'\n[output]\nlabels = '{}'\n",
            s(&fixture("img3")),
            s(&fixture("mk3")),
            s(&fixture("mask3")),
            s(&dir.join("labels.npy"))
        ),
    )
    .unwrap();
    ok(&["run", s(&pipeline)]);
    // skimage with the same mask and line (the fixture without a mask differs, so the mask was used).
    let want = dir.join("want.npy");
    ok(&[
        "watershed",
        s(&fixture("img3")),
        s(&fixture("mk3")),
        s(&want),
        "--mask",
        s(&fixture("mask3")),
        "--watershed-line",
    ]);
    assert_eq!(f32s(&dir.join("labels.npy")), f32s(&want));
    assert_ne!(f32s(&want), f32s(&fixture("ws3_line")));
}

#[test]
fn watershed_ift_command_equals_scipy() {
    let dir = scratch("watershed-ift");
    let out = dir.join("out.npy");
    ok(&["watershed-ift", s(&fixture("u8_as_u8")), s(&fixture("imk2")), s(&out)]);
    same(&out, "ift2");
    let full = dir.join("full.npy");
    write_npy(&full, &HostArray::U8(ArrayD::from_elem(IxDyn(&[3, 3]), 1))).unwrap();
    ok(&["watershed-ift", s(&fixture("u8_as_u8")), s(&fixture("imk2")), s(&out), "--structure", s(&full)]);
    same(&out, "ift2_full");
}

#[test]
fn segment_refusals_are_one_line() {
    let dir = scratch("watershed-refusals");
    let out = dir.join("out.npy");
    // A float image is no uint8/uint16 image (scipy raises TypeError).
    let halves = dir.join("halves.npy");
    write_npy(&halves, &HostArray::F64(ArrayD::from_elem(IxDyn(&[37, 45]), 0.5))).unwrap();
    let e = fails(&["watershed-ift", s(&halves), s(&fixture("imk2")), s(&out)], 1);
    assert!(e.contains("65535") && e.trim().lines().count() <= 2, "{e}");
    assert!(!out.exists());
    let e = fails(&["watershed", s(&fixture("img2")), s(&fixture("mk3")), s(&out)], 1);
    assert!(e.contains("[37, 45]") && e.contains("[13, 17, 11]"), "{e}");
    assert!(!out.exists());
}
