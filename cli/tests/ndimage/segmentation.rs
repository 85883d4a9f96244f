//! remove-small-objects and remove-small-holes from the binary, against scikit-image 0.26 fixtures
//! (tests/fixtures/make_segmentation.py): exact (0/1 and labels), on .npy files, and as a pipeline step.

use crate::common::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/segmentation").join(format!("{name}.npy"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn same(out: &Path, want: &str) {
    let (got, want) = (f32s(out), f32s(&fixture(want)));
    assert_eq!(got.shape(), want.shape());
    let wrong = got.iter().zip(want.iter()).filter(|(g, w)| g != w).count();
    assert_eq!(wrong, 0, "{wrong} elements differ from skimage's");
}

#[test]
fn remove_small_commands_equal_skimage() {
    let dir = scratch("remove-small");
    let out = dir.join("out.npy");
    ok(&["remove-small-objects", s(&fixture("m2")), s(&out), "--max-size", "5", "--connectivity", "2"]);
    same(&out, "objects_m2_c2_max5");
    ok(&["remove-small-objects", s(&fixture("lab2")), s(&out), "--max-size", "30", "--labelled"]);
    same(&out, "objects_lab2_max30");
    ok(&["remove-small-holes", s(&fixture("m3h")), s(&out), "--max-size", "2", "--connectivity", "3"]);
    same(&out, "holes_m3h_c3_max2");
    let pipeline = dir.join("p.toml");
    std::fs::write(
        &pipeline,
        format!(
            "[input]\nmask = \"{}\"\n\n[[step]]\nop = \"remove-small-holes\"\nmax_size = 4\nin = \"mask\"\n\
             out = \"filled\"\n\n[output]\nfilled = \"{}\"\n",
            s(&fixture("m2")),
            s(&dir.join("filled.npy"))
        ),
    )
    .unwrap();
    ok(&["run", s(&pipeline)]);
    same(&dir.join("filled.npy"), "holes_m2_c1_max4");
}
