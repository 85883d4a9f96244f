//! Golden records of the whole command line (issue 46's safety net): every subcommand's `--help` and at least one
//! run of every subcommand with options other than the defaults, compared with files blessed from a known-good
//! binary, so that a rewrite of how subcommands are defined shows every difference it makes.
//!
//! - `golden/help/NAME.txt`: `cliper --help` (NAME `cliper`) and `cliper SUB --help` for every SUB that
//!   `cliper --help` lists under "Commands:" (clap's own `help` aside). The files present must be exactly those.
//! - `golden/runs/NAME.txt`: one run of [`RUNS`]: its command line, exit code, stdout and stderr (the scratch
//!   folder written `$DIR`, the device's names `$DEVICE`…, timings `… ms`); `golden/runs/FILE` each file the run
//!   writes (a run's outputs are named for it, so the names do not collide). Refusals are runs too.
//!
//! Bless (rewrite every golden file from the binary as built, removing those no longer made), then review the diff:
//!
//! ```text
//! CLIPER_BLESS=1 cargo test -p cliper-cli --all-features --test golden
//! git diff --stat cli/tests/golden
//! ```
//!
//! Without it a missing, extra or different golden file fails, naming it. Text is compared exactly. Arrays must
//! have the golden type and shape exactly and their values within 1e-6 of the golden array's largest magnitude
//! (integers exactly): the same binary on the same device is deterministic, and the margin only lets a harmless
//! reordering of a float sum through. The records are of this machine's device (PoCL's CPU device when blessed);
//! on another device, kernel choices and rounding may differ: bless there first.

mod common;

use cliper::{DeviceInfo, HostArray, read_file, write_file};
use common::{cliper, root, scratch};
use ndarray::{ArrayD, Dimension, IxDyn, s};
use num_complex::{Complex32, Complex64};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// A run: its record's name, the command line after `cliper` (words split at spaces, '…' quoting one with
/// spaces; `$DIR` stands for the scratch folder holding the inputs [`write_inputs`] made; outputs go to
/// `$DIR/out`), and the files it writes there, which are compared with `golden/runs/FILE`.
struct Run {
    name: &'static str,
    command_line: &'static str,
    outputs: &'static [&'static str],
}

const fn run(name: &'static str, command_line: &'static str, outputs: &'static [&'static str]) -> Run {
    Run { name, command_line, outputs }
}

/// Subcommands without a run: `devices` and `cache` describe this machine, not an operation, and `help` is clap's.
const NOT_RUN: [&str; 3] = ["devices", "cache", "help"];

/// One run (or more) per subcommand and per alias, each with options other than the defaults so that a flag the
/// rewrite drops or maps differently changes a record; then refusals. Dropping any one option of these runs
/// changes the record or makes a refusal (checked once when blessing on PoCL), but for three whose value is what
/// the binary does anyway here: `--gemm-precision fp32-split` (no different from `full` on PoCL's CPU device),
/// `recon --method rsos` (the default for a file without maps), and `rotate --axes 0,1` (the plane of scipy's
/// default 1,0).
///
/// Inputs (see [`write_inputs`]): x2 f32 23×19, r2 f32 23×19 (values inexact in binary), x3 f32 7×13×11, d2 f64
/// 23×19, u16.png, c2/cd complex64 5×7, cb complex64 5×4, sq f32 6×6, masks m2 (23×19, [`in_m2`]) and m3
/// (7×13×11, [`in_m3`]) as u8, coords f32 2×5×4, kc f32 6×2 (NUFFT points) and kv complex64 2×6 (values at them), fp (footprint) and bs/ls (binary structures) u8 3×3, st (grey
/// structure) f32 3×3, kern f32 3×4, ks.cfl (+ ks_mask.cfl) 3-coil 26×26 k-space, batch/ three 4×5 files.
const RUNS: &[Run] = &[
    run("info", "info $DIR/ks.cfl", &[]),
    run("info-json", "info $DIR/c2.npy --json", &[]),
    run("convert", "convert $DIR/x2.npy $DIR/out/convert.png --type u8 --scale minmax", &["convert.png"]),
    run(
        "convert-clip",
        "convert $DIR/x2.npy $DIR/out/convert-clip.npy --type u8 --scale round --clip",
        &["convert-clip.npy"],
    ),
    run("transpose", "transpose $DIR/c2.npy $DIR/out/transpose.npy --conj", &["transpose.npy"]),
    run("permute", "permute $DIR/x3.npy $DIR/out/permute.npy --axes 2,0,1 --type f64", &["permute.npy"]),
    run("ifft", "ifft $DIR/c2.npy $DIR/out/ifft.npy --axes=-1 --norm ortho", &["ifft.npy"]),
    run("irfft", "irfft $DIR/c2.npy $DIR/out/irfft.npy --length 7", &["irfft.npy"]),
    run("reduce", "reduce $DIR/x3.npy --operation std --axis 0,2 --ddof 1", &[]),
    run("stack", "stack $DIR/x3.npy $DIR/x3.npy $DIR/out/stack.npy --axis=-1", &["stack.npy"]),
    run("reorient", "reorient tests/fixtures/shape/permuted_lpi.nii $DIR/out/reorient.npy", &["reorient.npy"]),
    run(
        "reorient-to",
        "reorient tests/fixtures/shape/oblique.nii $DIR/out/reorient-to.npy --to PIR",
        &["reorient-to.npy"],
    ),
    run("slice", "slice $DIR/x3.npy $DIR/out/slice.npy --slice=-1:0:-2,1,::3", &["slice.npy"]),
    run("matmul", "matmul $DIR/c2.npy $DIR/cb.npy $DIR/out/matmul.npy --ha", &["matmul.npy"]),
    run(
        "matmul-tb",
        "matmul $DIR/r2.npy $DIR/r2.npy $DIR/out/matmul-tb.npy --tb --gemm-precision fp32-split",
        &["matmul-tb.npy"],
    ),
    run("power", "power $DIR/sq.npy 5 $DIR/out/power.npy --precision double", &["power.npy"]),
    run("norm", "norm $DIR/c2.npy -p inf", &[]),
    run("norm-axis", "norm $DIR/x3.npy -p 3 --axis -2 -o $DIR/out/norm-axis.npy", &["norm-axis.npy"]),
    run("dot", "dot $DIR/c2.npy $DIR/cd.npy --conj", &[]),
    run("threshold-value", "threshold-value $DIR/x2.npy --method multiotsu --classes 3", &[]),
    run(
        "measure",
        "measure $DIR/m2.npy $DIR/x2.npy --stats count,mean,center_of_mass,bbox --index 1,0 -o $DIR/out/measure.csv",
        &["measure.csv"],
    ),
    run("measure-printed", "measure $DIR/m2.npy --stats count,extrema", &[]),
    run(
        "regionprops",
        "regionprops $DIR/m2.npy $DIR/x2.npy --properties label,area,centroid,orientation,intensity_max --index 1",
        &[],
    ),
    run("peak-local-max", "peak-local-max $DIR/x2.npy --min-distance 2 --exclude-border false --num-peaks 4", &[]),
    run(
        "peak-mask",
        "peak-mask $DIR/x2.npy $DIR/out/peak-mask.npy --threshold-rel 0.5 --labels $DIR/m2.npy",
        &["peak-mask.npy"],
    ),
    run("dot-axis", "dot $DIR/x3.npy $DIR/x3.npy --axis 0 -o $DIR/out/dot-axis.npy", &["dot-axis.npy"]),
    run("fft", "fft $DIR/c2.npy $DIR/out/fft.npy --inverse --axes -1 --norm ortho", &["fft.npy"]),
    run("fft-real", "fft $DIR/x2.npy $DIR/out/fft-real.npy", &[]),
    run("rfft", "rfft $DIR/x2.npy $DIR/out/rfft.npy --axes 1,0", &["rfft.npy"]),
    run(
        "fourier-gaussian",
        "fourier-gaussian $DIR/c2.npy $DIR/out/fourier-gaussian.npy --sigma 1.5",
        &["fourier-gaussian.npy"],
    ),
    run(
        "fourier-uniform",
        "fourier-uniform $DIR/c2.npy $DIR/out/fourier-uniform.npy --size 3,2",
        &["fourier-uniform.npy"],
    ),
    run(
        "fourier-ellipsoid",
        "fourier-ellipsoid $DIR/c2.npy $DIR/out/fourier-ellipsoid.npy --size 2",
        &["fourier-ellipsoid.npy"],
    ),
    run("fourier-shift", "fourier-shift $DIR/c2.npy $DIR/out/fourier-shift.npy --shift 1,-0.5", &["fourier-shift.npy"]),
    run("fftshift", "fftshift $DIR/x3.npy $DIR/out/fftshift.npy --inverse --axes 0,2", &["fftshift.npy"]),
    run("pad", "pad $DIR/x2.npy $DIR/out/pad.npy --width 3:1,2:4 --mode reflect", &["pad.npy"]),
    run("pad-constant", "pad $DIR/x2.npy $DIR/out/pad-constant.npy --width 2 --value -7", &["pad-constant.npy"]),
    run(
        "convolve",
        "convolve $DIR/x3.npy $DIR/out/convolve.npy --kernel gaussian:1.5 --border nearest --rank 2",
        &["convolve.npy"],
    ),
    run(
        "convolve-file",
        "convolve $DIR/x2.npy $DIR/out/convolve-file.npy -k $DIR/kern.npy --mode corr --border constant --value 1.5 --output full",
        &["convolve-file.npy"],
    ),
    run(
        "expression",
        "expression $DIR/x2.npy $DIR/d2.npy $DIR/out/expression.npy --expr 'where(a > 1, hypot(a, b), clip(b, -2, 0.5))'",
        &["expression.npy"],
    ),
    run("expr", "expr $DIR/x2.npy $DIR/out/expr.npy -e 'sqrt(abs(x)) * 2 - pi'", &["expr.npy"]),
    run("window", "window $DIR/u16.png $DIR/out/window.png --level 20000 --width 30000", &["window.png"]),
    run(
        "window-range",
        "window $DIR/x2.npy $DIR/out/window-range.npy --level 2 --width 6 --range -1:1 --type f32",
        &["window-range.npy"],
    ),
    run(
        "threshold",
        "threshold $DIR/x2.npy $DIR/out/threshold.npy --value 1.5 --above 7 --below -2",
        &["threshold.npy"],
    ),
    run("clip", "clip $DIR/x2.npy $DIR/out/clip.npy --min -1.25 --max 3", &["clip.npy"]),
    run(
        "gradient-magnitude",
        "gradient-magnitude $DIR/x3.npy $DIR/out/gradient-magnitude.npy --derivative gaussian:1,1.5 --border constant --value 1 --rank 2",
        &["gradient-magnitude.npy"],
    ),
    run(
        "gaussian-gradient-magnitude",
        "gaussian-gradient-magnitude $DIR/x2.npy $DIR/out/ggm.npy --derivative scharr --border wrap",
        &["ggm.npy"],
    ),
    run(
        "gaussian-filter",
        "gaussian-filter $DIR/x3.npy $DIR/out/gaussian-filter.npy --sigma 1,2 --order 0,1 --border mirror --rank 2",
        &["gaussian-filter.npy"],
    ),
    run(
        "uniform-filter",
        "uniform-filter $DIR/x3.npy $DIR/out/uniform-filter.npy --size 4 --border constant --value -1 --rank 2",
        &["uniform-filter.npy"],
    ),
    run(
        "derivative",
        "derivative $DIR/x2.npy $DIR/out/derivative.npy --filter prewitt --axis -2 --border wrap",
        &["derivative.npy"],
    ),
    run("median", "median $DIR/x2.npy $DIR/out/median.npy --size 3,5 --border constant --value 2", &["median.npy"]),
    run(
        "median-filter",
        "median-filter $DIR/x3.npy $DIR/out/median-filter.npy --size 4 --origin 1",
        &["median-filter.npy"],
    ),
    run(
        "minimum",
        "minimum $DIR/x2.npy $DIR/out/minimum.npy --footprint $DIR/fp.npy --border nearest --origin -1,0",
        &["minimum.npy"],
    ),
    run("minimum-filter", "minimum-filter $DIR/x2.npy $DIR/out/minimum-filter.npy --size 2", &["minimum-filter.npy"]),
    run("maximum", "maximum $DIR/x3.npy $DIR/out/maximum.npy --size 2,3 --rank 2 --border mirror", &["maximum.npy"]),
    run("maximum-filter", "maximum-filter $DIR/x2.npy $DIR/out/maximum-filter.npy --size 4,1", &["maximum-filter.npy"]),
    run(
        "percentile",
        "percentile $DIR/x2.npy $DIR/out/percentile.npy --percentile 75 --size 4 --border wrap",
        &["percentile.npy"],
    ),
    run(
        "percentile-filter",
        "percentile-filter $DIR/x2.npy $DIR/out/percentile-filter.npy --percentile -20 --size 2,4",
        &["percentile-filter.npy"],
    ),
    run(
        "rank-filter",
        "rank-filter $DIR/x2.npy $DIR/out/rank-filter.npy --index -2 --size 3,4 --origin 0,1",
        &["rank-filter.npy"],
    ),
    run(
        "grey-erosion",
        "grey-erosion $DIR/x2.npy $DIR/out/grey-erosion.npy --size 3,5 --border constant --value -6",
        &["grey-erosion.npy"],
    ),
    run(
        "grey-dilation",
        "grey-dilation $DIR/x2.npy $DIR/out/grey-dilation.npy --structure $DIR/st.npy --border constant --value 20",
        &["grey-dilation.npy"],
    ),
    run(
        "grey-opening",
        "grey-opening $DIR/x2.npy $DIR/out/grey-opening.npy --footprint $DIR/fp.npy",
        &["grey-opening.npy"],
    ),
    run(
        "grey-closing",
        "grey-closing $DIR/x2.npy $DIR/out/grey-closing.npy --size 4 --origin -1",
        &["grey-closing.npy"],
    ),
    run(
        "morphological-gradient",
        "morphological-gradient $DIR/x3.npy $DIR/out/morphological-gradient.npy --size 2 --rank 2",
        &["morphological-gradient.npy"],
    ),
    run(
        "morphological-laplace",
        "morphological-laplace $DIR/x2.npy $DIR/out/morphological-laplace.npy --size 2,3 --border wrap",
        &["morphological-laplace.npy"],
    ),
    run(
        "white-tophat",
        "white-tophat $DIR/x2.npy $DIR/out/white-tophat.npy --structure $DIR/st.npy --border wrap",
        &["white-tophat.npy"],
    ),
    run(
        "black-tophat",
        "black-tophat $DIR/x2.npy $DIR/out/black-tophat.npy --footprint $DIR/fp.npy --border mirror",
        &["black-tophat.npy"],
    ),
    run(
        "binary-erosion",
        "binary-erosion $DIR/m2.npy $DIR/out/binary-erosion.npy --connectivity 2 --border-value 1",
        &["binary-erosion.npy"],
    ),
    run(
        "binary-dilation",
        "binary-dilation $DIR/m2.npy $DIR/out/binary-dilation.npy --structure $DIR/bs.npy --origin 0,1",
        &["binary-dilation.npy"],
    ),
    run(
        "binary-opening",
        "binary-opening $DIR/m3.npy $DIR/out/binary-opening.npy --rank 2 --connectivity 2",
        &["binary-opening.npy"],
    ),
    run(
        "binary-closing",
        "binary-closing $DIR/m2.npy $DIR/out/binary-closing.npy --iterations 3",
        &["binary-closing.npy"],
    ),
    run("label", "label $DIR/m3.npy $DIR/out/label.npy --connectivity 3", &["label.npy"]),
    run("label-rank", "label $DIR/m3.npy $DIR/out/label-rank.npy --rank 2 --connectivity 2", &["label-rank.npy"]),
    run(
        "label-structure",
        "label $DIR/m2.npy $DIR/out/label-structure.npy --structure $DIR/ls.npy",
        &["label-structure.npy"],
    ),
    run("fill-holes", "fill-holes $DIR/m3.npy $DIR/out/fill-holes.npy --rank 2", &["fill-holes.npy"]),
    run(
        "fill-holes-connectivity",
        "fill-holes $DIR/m2.npy $DIR/out/fill-holes-connectivity.npy --connectivity 2",
        &["fill-holes-connectivity.npy"],
    ),
    run(
        "remove-small-objects",
        "remove-small-objects $DIR/m2.npy $DIR/out/remove-small-objects.npy --max-size 3",
        &["remove-small-objects.npy"],
    ),
    run(
        "remove-small-holes",
        "remove-small-holes $DIR/m2.npy $DIR/out/remove-small-holes.npy --max-size 3 --connectivity 2",
        &["remove-small-holes.npy"],
    ),
    run(
        "watershed",
        "watershed $DIR/x2.npy $DIR/m2.npy $DIR/out/watershed.npy --connectivity 2 --compactness 0.01 --watershed-line",
        &["watershed.npy"],
    ),
    run(
        "watershed-minima",
        "watershed $DIR/x2.npy $DIR/x2.npy $DIR/out/watershed-minima.npy --minima",
        &["watershed-minima.npy"],
    ),
    run(
        "watershed-ift",
        "watershed-ift $DIR/u16.png $DIR/m2.npy $DIR/out/watershed-ift.npy --structure $DIR/bs.npy",
        &["watershed-ift.npy"],
    ),
    run("watershed_ift", "watershed_ift $DIR/u16.png $DIR/m2.npy $DIR/out/watershed_ift.npy", &["watershed_ift.npy"]),
    run("skeletonize", "skeletonize $DIR/m2.npy $DIR/out/skeletonize.npy", &["skeletonize.npy"]),
    run(
        "skeletonize-lee",
        "skeletonize $DIR/m3.npy $DIR/out/skeletonize-lee.npy --method lee",
        &["skeletonize-lee.npy"],
    ),
    run("distance", "distance $DIR/m2.npy $DIR/out/distance.npy --sampling 1.5,0.5", &["distance.npy"]),
    run(
        "distance-transform",
        "distance-transform $DIR/m3.npy $DIR/out/distance-transform.npy --rank 3 --sampling 2,1,0.5",
        &["distance-transform.npy"],
    ),
    run("abs", "abs $DIR/c2.npy $DIR/out/abs.npy", &["abs.npy"]),
    run("absolute", "absolute $DIR/x2.npy $DIR/out/absolute.npy", &["absolute.npy"]),
    run("sqrt", "sqrt $DIR/c2.npy $DIR/out/sqrt.npy", &["sqrt.npy"]),
    run("log", "log $DIR/x2.npy $DIR/out/log.npy --precision double", &["log.npy"]),
    run(
        "generic-filter",
        "generic-filter $DIR/x2.npy $DIR/out/generic-filter.npy --function std --size 3,5 --border nearest",
        &["generic-filter.npy"],
    ),
    run(
        "grey-morphology",
        "grey-morphology $DIR/x2.npy $DIR/out/grey-morphology.npy --operation white_tophat --size 3,5 --border mirror",
        &["grey-morphology.npy"],
    ),
    run(
        "binary-morphology",
        "binary-morphology $DIR/m2.npy $DIR/out/binary-morphology.npy --operation opening --iterations 2 --connectivity 2",
        &["binary-morphology.npy"],
    ),
    run(
        "rank-filter-by-name",
        "rank-filter $DIR/x2.npy $DIR/out/rank-filter-by-name.npy --filter percentile:30 --size 3,5",
        &["rank-filter-by-name.npy"],
    ),
    run("distance-transform-edt", "distance-transform-edt $DIR/m3.npy $DIR/out/edt.npy --rank 2", &["edt.npy"]),
    run(
        "distance-indices",
        "distance-transform $DIR/m2.npy $DIR/out/distance-indices.npy --indices",
        &["distance-indices.npy"],
    ),
    run("distance-transform-cdt", "distance-transform-cdt $DIR/m3.npy $DIR/out/cdt.npy --metric taxicab", &["cdt.npy"]),
    run("cdt", "cdt $DIR/m2.npy $DIR/out/cdt-indices.npy --indices", &["cdt-indices.npy"]),
    run("distance-transform-bf", "distance-transform-bf $DIR/m2.npy $DIR/out/bf.npy --metric chessboard", &["bf.npy"]),
    run(
        "zoom",
        "zoom $DIR/x2.npy $DIR/out/zoom.npy --zoom 1.5,0.75 --order 1 --mode nearest --grid-mode",
        &["zoom.npy"],
    ),
    run(
        "zoom-spacing",
        "zoom data/mr_phantom.nii.gz $DIR/out/zoom-spacing.npy --spacing 6,8,8 --order 5 --mode grid-wrap",
        &["zoom-spacing.npy"],
    ),
    run(
        "shift",
        "shift $DIR/x2.npy $DIR/out/shift.npy --shift 2.5,-1.25 --order 2 --mode grid-constant --cval -3 --no-prefilter",
        &["shift.npy"],
    ),
    run(
        "rotate",
        "rotate $DIR/x2.npy $DIR/out/rotate.npy --angle 17 --axes 0,1 --no-reshape --order 1 --mode nearest",
        &["rotate.npy"],
    ),
    run(
        "rotate-3d",
        "rotate $DIR/x3.npy $DIR/out/rotate-3d.npy --angle -30 --axes 0,2 --mode grid-constant --cval 2",
        &["rotate-3d.npy"],
    ),
    run(
        "affine-transform",
        "affine-transform $DIR/x2.npy $DIR/out/affine-transform.npy --matrix '0.9,0.2;-0.1,1.1' --offset=1.5,-2 --output-shape 20,25 --mode mirror",
        &["affine-transform.npy"],
    ),
    run(
        "resample-from-to",
        "resample-from-to tests/fixtures/geometry/iso.nii tests/fixtures/geometry/oblique.nii $DIR/out/resample-from-to.npy --order 1 --cval 2",
        &["resample-from-to.npy"],
    ),
    run(
        "map-coordinates",
        "map-coordinates $DIR/x2.npy $DIR/coords.npy $DIR/out/map-coordinates.npy --order 1 --mode wrap",
        &["map-coordinates.npy"],
    ),
    run(
        "spline-filter",
        "spline-filter $DIR/x3.npy $DIR/out/spline-filter.npy --order 4 --mode nearest --axis -1",
        &["spline-filter.npy"],
    ),
    run(
        "run",
        "run $DIR/pipe.toml --input image=$DIR/d2.npy --output edges=$DIR/out/run-edges.npy",
        &["run-edges.npy", "run-mask.png"],
    ),
    run("run-dry-run", "run $DIR/pipe.toml --dry-run", &[]),
    run(
        "recon",
        "recon $DIR/ks.cfl $DIR/out/recon.npy --method cg-sense --maps walsh --lambda 0.01 --iters 4 --rescale --part abs",
        &["recon.npy"],
    ),
    run(
        "recon-espirit",
        "recon $DIR/ks.cfl $DIR/out/recon-espirit.npy --maps espirit --part real",
        &["recon-espirit.npy"],
    ),
    run(
        "recon-rsos",
        "recon $DIR/ks.cfl $DIR/out/recon-rsos.npy --method rsos --apply-mask --uncentered",
        &["recon-rsos.npy"],
    ),
    run("ecalib", "ecalib $DIR/ks.cfl $DIR/out/ecalib.npy --crop 0.7", &["ecalib.npy"]),
    run(
        "nufft",
        "nufft tests/fixtures/bart_nufft/coil1 $DIR/out/nufft.npy --traj tests/fixtures/bart_nufft/traj --adjoint --tolerance 1e-4",
        &["nufft.npy"],
    ),
    run(
        "nufft-forward",
        "nufft-forward $DIR/c2.npy $DIR/kc.npy $DIR/out/nufft-forward.npy --tolerance 1e-4",
        &["nufft-forward.npy"],
    ),
    run("nufft-type2", "nufft-type2 $DIR/c2.npy $DIR/kc.npy $DIR/out/nufft-type2.npy", &["nufft-type2.npy"]),
    run(
        "nufft-adjoint",
        "nufft-adjoint $DIR/kv.npy $DIR/kc.npy $DIR/out/nufft-adjoint.npy --shape 5,7 --tolerance 1e-3",
        &["nufft-adjoint.npy"],
    ),
    run(
        "nufft-type1",
        "nufft-type1 $DIR/kv.npy $DIR/kc.npy $DIR/out/nufft-type1.npy --shape 6,8",
        &["nufft-type1.npy"],
    ),
    run(
        "nufft-forward-bart-refused",
        "nufft-forward $DIR/c2.npy $DIR/kc.npy $DIR/out/nufft-bart.npy --kernel bart",
        &[],
    ),
    run(
        "recon-traj",
        "recon tests/fixtures/bart_nufft/ksp $DIR/out/recon-traj.npy --traj tests/fixtures/bart_nufft/traj --maps tests/fixtures/bart_nufft/sens --lambda 0.01 --iters 5",
        &["recon-traj.npy"],
    ),
    run("cc", "cc tests/fixtures/bart_cc/k $DIR/out/cc.npy -p 3 --method geometric -r 12", &["cc.npy"]),
    run("traj", "traj $DIR/out/traj.npy -x 12 -y 7 --radial --golden --tiny-golden 2 -o 2 -R 10", &["traj.npy"]),
    run("traj-refused", "traj $DIR/out/traj-refused.npy -x 12 -y 7 --radial --acceleration 2", &[]),
    run("rsos", "rsos $DIR/ksc.npy $DIR/out/rsos.npy --uncentered", &["rsos.npy"]),
    run("sense", "sense $DIR/ksc.npy $DIR/kmaps.npy $DIR/out/sense.npy", &["sense.npy"]),
    run(
        "cg-sense",
        "cg-sense $DIR/ksc.npy $DIR/kmaps.npy $DIR/out/cg-sense.npy --iters 3 --lambda 0.02",
        &["cg-sense.npy"],
    ),
    run(
        "l1-wavelet",
        "l1-wavelet $DIR/ksc.npy $DIR/kmaps.npy $DIR/out/l1-wavelet.npy --lambda 0.005 --iters 3 --no-cycle-spinning",
        &["l1-wavelet.npy"],
    ),
    run("tv", "tv $DIR/ksc.npy $DIR/kmaps.npy $DIR/out/tv.npy --lambda 0.01 --iters 3", &["tv.npy"]),
    run(
        "espirit",
        "espirit $DIR/ksc.npy $DIR/out/espirit.npy --crop 0.9 --calibration 16 --kernel-size 5 --threshold 0.002",
        &["espirit.npy"],
    ),
    run("ecalib-maps", "ecalib-maps $DIR/ksc.npy $DIR/out/ecalib-maps.npy", &["ecalib-maps.npy"]),
    run("walsh-maps", "walsh-maps $DIR/ksc.npy $DIR/out/walsh-maps.npy --smoothing 3", &["walsh-maps.npy"]),
    run(
        "ecalib-settings",
        "ecalib $DIR/ks.cfl $DIR/out/ecalib-settings.npy --calibration 12 --kernel-size 5 --threshold 0.01 --precision double",
        &["ecalib-settings.npy"],
    ),
    run(
        "recon-espirit-settings",
        "recon $DIR/ks.cfl $DIR/out/recon-espirit-settings.npy --maps espirit --crop 0.95 --calibration 12 --part abs",
        &["recon-espirit-settings.npy"],
    ),
    run(
        "ecalib-walsh",
        "ecalib $DIR/ks.cfl $DIR/out/ecalib-walsh.npy --method walsh --smoothing 3",
        &["ecalib-walsh.npy"],
    ),
    run(
        "demo",
        "demo --input $DIR/u16.png --out $DIR/out",
        &["demo_column_energy.npy", "demo_edges.png", "demo_smooth.tif"],
    ),
    // Global options: a batch over a folder, its second share (b.npy of a, b, c), as JSON.
    run(
        "batch-shard-json",
        "clip $DIR/batch '$DIR/out/{stem}-clip.npy' --min 0 --max 1 --shard 1/2 --json",
        &["b-clip.npy"],
    ),
    // Refusals: exit code and one-line message, and no output left behind (the scratch folder is checked).
    run("error-pad-width", "pad $DIR/x2.npy $DIR/out/bad.npy --width 3:x", &[]),
    run("error-matmul-shape", "matmul $DIR/x2.npy $DIR/x2.npy $DIR/out/bad.npy", &[]),
    run("error-missing-file", "median $DIR/missing.npy $DIR/out/bad.npy", &[]),
    run("error-unknown-option", "median $DIR/x2.npy $DIR/out/bad.npy --sizes 3", &[]),
    run("error-rotate-axes", "rotate $DIR/x2.npy $DIR/out/bad.npy --angle 10 --axes 0,2", &[]),
    run("error-expression", "expression $DIR/x2.npy $DIR/out/bad.npy --expr 'a +'", &[]),
    run("error-window-level", "window $DIR/x2.npy $DIR/out/bad.png --width 10", &[]),
];

/// The pipeline `run` runs: options other than the defaults in each step, two outputs (one converted).
const PIPELINE: &str = r#"precision = "double"

[input]
image = "x2.npy"

[[step]]
op = "gradient-magnitude"
in = "image"
out = "edges"
derivative = "prewitt"
border = "nearest"
rank = 2

[[step]]
op = "threshold"
in = "edges"
out = "mask"
value = 4.5
above = 200

[[step]]
op = "norm"
in = "edges"
out = "energy"
p = "inf"

[output]
edges = "out/unused-edges.npy"
mask = { path = "out/run-mask.png", type = "u8", scale = "round" }
"#;

/// A difference between the arrays is tolerated up to this fraction of the golden array's largest magnitude.
const RELATIVE_TOLERANCE: f64 = 1e-6;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn blessing() -> bool {
    std::env::var_os("CLIPER_BLESS").is_some()
}

/// The binary as the tests run it; clap wraps help text by the terminal's width only with its `wrap_help`
/// feature, so a fixed COLUMNS keeps the text the same even if that is ever turned on.
fn command() -> assert_cmd::Command {
    let mut c = cliper();
    c.env("COLUMNS", "100");
    c
}

#[test]
fn help_texts_equal_the_golden_files() {
    let top = help_text(&["--help"]);
    let subcommands = subcommands_listed(&top);
    assert!(subcommands.len() > 40, "too few subcommands read from `cliper --help`: {subcommands:?}");
    assert!(!subcommands.iter().any(|s| s == "cliper"), "a subcommand named cliper would share the top level's file");
    let mut texts = vec![("cliper.txt".to_string(), top)];
    for sub in &subcommands {
        texts.push((format!("{sub}.txt"), help_text(&[sub, "--help"])));
    }
    let mut failures = Vec::new();
    let dir = golden_dir().join("help");
    let expected: BTreeSet<String> = texts.iter().map(|(name, _)| name.clone()).collect();
    check_file_set(&dir, &expected, &mut failures);
    for (name, text) in &texts {
        check_text(&dir.join(name), text, &mut failures);
    }
    report(failures);
}

#[test]
fn runs_equal_the_golden_files() {
    let top = help_text(&["--help"]);
    let (subcommands, aliases) = (subcommands_listed(&top), aliases_listed(&top));
    let mut failures = Vec::new();
    check_every_command_runs(&subcommands, &aliases, &mut failures);

    let dir = scratch("golden");
    write_inputs(&dir);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let outcomes = run_all(&dir);

    let golden = golden_dir().join("runs");
    let mut expected = BTreeSet::new();
    for (spec, outcome) in RUNS.iter().zip(&outcomes) {
        assert!(expected.insert(format!("{}.txt", spec.name)), "run {} is named twice in RUNS", spec.name);
        check_text(&golden.join(format!("{}.txt", spec.name)), &record(spec, outcome, &dir), &mut failures);
        for file in spec.outputs {
            assert!(expected.insert(file.to_string()), "{file} is named twice in RUNS");
            check_array(&golden.join(file), &out.join(file), &mut failures);
        }
    }
    check_file_set(&golden, &expected, &mut failures);
    check_nothing_else_written(&out, &mut failures);
    std::fs::remove_dir_all(&dir).ok();
    report(failures);
}

/// Help text on stdout, with exit code 0 and nothing on stderr.
fn help_text(args: &[&str]) -> String {
    let out = command().args(args).output().unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "cliper {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The names under "Commands:" in `cliper --help`, clap's `help` aside.
fn subcommands_listed(top: &str) -> Vec<String> {
    command_lines(top)
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(String::from)
        .collect()
}

/// The names `[alias: NAME]` (or `[aliases: A, B]`) gives under "Commands:".
fn aliases_listed(top: &str) -> Vec<String> {
    command_lines(top)
        .filter_map(|line| line.split_once("[alias: ").or_else(|| line.split_once("[aliases: ")))
        .flat_map(|(_, rest)| rest.trim_end_matches(']').split(", ").map(String::from).collect::<Vec<_>>())
        .collect()
}

fn command_lines(top: &str) -> impl Iterator<Item = &str> {
    top.lines().skip_while(|line| *line != "Commands:").skip(1).take_while(|line| !line.trim().is_empty())
}

/// Every subcommand and alias has a run (the first word of its arguments), but those in [`NOT_RUN`].
fn check_every_command_runs(subcommands: &[String], aliases: &[String], failures: &mut Vec<String>) {
    let run: BTreeSet<String> = RUNS.iter().filter_map(|r| words(r.command_line).into_iter().next()).collect();
    for name in subcommands.iter().chain(aliases).filter(|n| !NOT_RUN.contains(&n.as_str())) {
        if !run.contains(name) {
            failures.push(format!("`cliper {name}` has no run in RUNS (cli/tests/golden.rs): add one"));
        }
    }
}

/// What one run did.
struct Outcome {
    output: Output,
}

/// Runs every entry of [`RUNS`] on two threads (the machine's cores; each run is mostly its own process's
/// start-up and the device's work), returning the outcomes in the table's order.
fn run_all(dir: &Path) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Outcome>>> = RUNS.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some(spec) = RUNS.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let index = RUNS.iter().position(|r| std::ptr::eq(r, spec)).unwrap();
                    *slots[index].lock().unwrap() = Some(run_one(spec, dir));
                }
            });
        }
    });
    slots.into_iter().map(|slot| slot.into_inner().unwrap().unwrap()).collect()
}

fn run_one(spec: &Run, dir: &Path) -> Outcome {
    let dir_text = dir.to_str().unwrap();
    let args: Vec<String> = words(spec.command_line).iter().map(|a| a.replace("$DIR", dir_text)).collect();
    Outcome { output: command().args(&args).output().unwrap() }
}

/// The words of a command line: split at spaces, but not inside '…' (the quotes are dropped), as a shell would.
fn words(command_line: &str) -> Vec<String> {
    let mut words = Vec::new();
    for (i, piece) in command_line.split('\'').enumerate() {
        if i % 2 == 1 {
            words.push(piece.to_string());
        } else {
            words.extend(piece.split_whitespace().map(String::from));
        }
    }
    words
}

/// The text record of a run: command line, exit code, stdout and stderr, with what varies between machines and
/// runs replaced.
fn record(spec: &Run, outcome: &Outcome, dir: &Path) -> String {
    let normal = |bytes: &[u8]| normalised(&String::from_utf8_lossy(bytes), dir);
    let (stdout, stderr) = (normal(&outcome.output.stdout), normal(&outcome.output.stderr));
    assert!(!stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"), "{}: {stderr}", spec.name);
    let code = outcome.output.status.code().map_or("signal".to_string(), |c| c.to_string());
    format!("$ cliper {}\nexit: {code}\n--- stdout\n{stdout}--- stderr\n{stderr}", spec.command_line)
}

/// The device the binary picks, as the library picks it (once: each ClApp looks at every platform).
fn device() -> &'static DeviceInfo {
    static DEVICE: OnceLock<DeviceInfo> = OnceLock::new();
    DEVICE.get_or_init(|| common::app().device().clone())
}

/// The scratch folder as `$DIR`, the device's names as `$DEVICE`, `$PLATFORM` and `$DEVICE_VERSION`, timings
/// (`12.5 ms`) as `… ms`, and the numbers of `--profile`'s table (times and rates) dropped.
fn normalised(text: &str, dir: &Path) -> String {
    let device = device();
    let text = text
        .replace(dir.to_str().unwrap(), "$DIR")
        .replace(&device.name, "$DEVICE")
        .replace(&device.platform_name, "$PLATFORM")
        .replace(&device.version, "$DEVICE_VERSION");
    let mut lines = Vec::new();
    let mut in_profile = false;
    for line in text.lines() {
        if line.starts_with("process ") && line.contains("device ms") {
            in_profile = true;
            lines.push("process kernel (times and rates left out)".to_string());
            continue;
        }
        if in_profile {
            let mut words = line.split_whitespace();
            let (process, kernel) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
            in_profile = process != "total";
            lines.push(if in_profile { format!("{process} {kernel}") } else { "total".to_string() });
            continue;
        }
        lines.push(without_timings(line));
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// `host 468.0 ms` → `host … ms`: a number just before " ms" is a timing.
fn without_timings(line: &str) -> String {
    let pieces: Vec<&str> = line.split(" ms").collect();
    let last = pieces.len() - 1;
    let masked = pieces.iter().enumerate().map(|(i, piece)| {
        let number_start = piece.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.').len();
        if i < last && number_start < piece.len() {
            format!("{}…", &piece[..number_start])
        } else {
            piece.to_string()
        }
    });
    masked.collect::<Vec<_>>().join(" ms")
}

/// The golden folder holds exactly `expected` (blessing removes the others).
fn check_file_set(dir: &Path, expected: &BTreeSet<String>, failures: &mut Vec<String>) {
    let present: BTreeSet<String> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    for extra in present.difference(expected) {
        if blessing() {
            std::fs::remove_file(dir.join(extra)).unwrap();
        } else {
            failures.push(format!(
                "{}: a golden file no subcommand or run makes (CLIPER_BLESS=1 removes it)",
                dir.join(extra).display()
            ));
        }
    }
    // Missing files are reported by the comparisons themselves.
}

/// After every run, `$DIR/out` holds only the outputs RUNS names: a refusal left nothing behind.
fn check_nothing_else_written(out: &Path, failures: &mut Vec<String>) {
    let named: BTreeSet<&str> = RUNS.iter().flat_map(|r| r.outputs.iter().copied()).collect();
    for entry in std::fs::read_dir(out).unwrap().filter_map(|e| e.ok()) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !named.contains(name.as_str()) {
            failures.push(format!(
                "{}: written by a run but named by none (partial output of a refusal?)",
                entry.path().display()
            ));
        }
    }
}

/// Compares `text` with the golden file exactly (or writes it when blessing).
fn check_text(golden: &Path, text: &str, failures: &mut Vec<String>) {
    if blessing() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(golden, text).unwrap();
        return;
    }
    match std::fs::read_to_string(golden) {
        Err(e) => failures.push(format!("{}: no golden file ({e}); CLIPER_BLESS=1 writes it", golden.display())),
        Ok(want) if want != text => failures.push(format!("{} differs:\n{}", golden.display(), line_diff(&want, text))),
        Ok(_) => {}
    }
}

/// The first differing lines (at most 5), numbered, golden and now, and the line counts if they differ.
fn line_diff(want: &str, got: &str) -> String {
    let (want, got): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    let mut text = String::new();
    let differing = (0..want.len().max(got.len())).filter(|&i| want.get(i) != got.get(i));
    for i in differing.take(5) {
        let side = |lines: &[&str]| lines.get(i).map_or("(no line)".to_string(), |l| format!("{l:?}"));
        text.push_str(&format!("  line {}:\n    golden: {}\n    now:    {}\n", i + 1, side(&want), side(&got)));
    }
    if want.len() != got.len() {
        text.push_str(&format!("  lines: golden {}, now {}\n", want.len(), got.len()));
    }
    text
}

/// Compares a table a run wrote (CSV) with the golden one: the header exactly, every number within
/// [`RELATIVE_TOLERANCE`] of the golden table's largest magnitude (sums of floats are added by atomics in no fixed
/// order, so their last digits may change from run to run), NaN where it has NaN.
fn check_table(golden: &Path, written: &Path, failures: &mut Vec<String>) {
    let read = |path: &Path| -> (String, Vec<f64>) {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let mut lines = text.lines();
        let header = lines.next().unwrap_or_default().to_string();
        let numbers = lines.flat_map(|l| l.split(',').map(|v| v.parse::<f64>().unwrap_or(f64::INFINITY))).collect();
        (header, numbers)
    };
    let ((want_header, want), (got_header, got)) = (read(golden), read(written));
    let scale = want.iter().filter(|v| v.is_finite()).fold(0.0f64, |m, v| m.max(v.abs()));
    let close =
        |(w, g): (&f64, &f64)| w == g || (w.is_nan() && g.is_nan()) || (w - g).abs() <= RELATIVE_TOLERANCE * scale;
    if want_header != got_header || want.len() != got.len() || !want.iter().zip(&got).all(close) {
        failures.push(format!("{} differs from {}", written.display(), golden.display()));
    }
}

/// Compares the array a run wrote with the golden one: type and shape exactly, values within
/// [`RELATIVE_TOLERANCE`] of the golden array's largest magnitude (integers exactly), NaN where it has NaN.
fn check_array(golden: &Path, written: &Path, failures: &mut Vec<String>) {
    if !written.exists() {
        failures.push(format!("{}: not written", written.display()));
        return;
    }
    if blessing() {
        std::fs::copy(written, golden).unwrap();
        return;
    }
    if golden.extension().is_some_and(|e| e == "csv") {
        check_table(golden, written, failures);
        return;
    }
    let (want, got) = match (read_file(golden), read_file(written)) {
        (Ok(want), Ok(got)) => (want, got),
        (want, got) => {
            failures.push(format!("{}: cannot compare ({:?} / {:?})", golden.display(), want.err(), got.err()));
            return;
        }
    };
    if (want.dtype(), want.shape()) != (got.dtype(), got.shape()) {
        failures.push(format!(
            "{}: golden {} {:?}, now {} {:?}",
            golden.display(),
            want.dtype().name(),
            want.shape(),
            got.dtype().name(),
            got.shape()
        ));
        return;
    }
    let exact = !want.dtype().is_float() && !want.dtype().is_complex();
    let (want_values, got_values) = (components(&want), components(&got));
    let scale = want_values.iter().filter(|v| v.is_finite()).fold(0.0f64, |m, v| m.max(v.abs()));
    let allowed = if exact { 0.0 } else { RELATIVE_TOLERANCE * scale };
    let differs = |(w, g): &(&f64, &f64)| !(w == g || (w.is_nan() && g.is_nan()) || (*w - *g).abs() <= allowed);
    let bad: Vec<(usize, (&f64, &f64))> =
        want_values.iter().zip(&got_values).enumerate().filter(|(_, p)| differs(p)).collect();
    if let Some((index, (w, g))) = bad.first() {
        failures.push(format!(
            "{}: {} of {} values differ by more than {allowed:e}; the first, component {index}: golden {w}, now {g}",
            golden.display(),
            bad.len(),
            want_values.len()
        ));
    }
}

/// The values in logical order as f64, a complex value as its real and imaginary parts.
fn components(array: &HostArray) -> Vec<f64> {
    if array.dtype().is_complex() {
        let values: ArrayD<Complex64> = array.to_elements("golden").unwrap();
        values.iter().flat_map(|z| [z.re, z.im]).collect()
    } else {
        let values: ArrayD<f64> = array.to_elements("golden").unwrap();
        values.iter().copied().collect()
    }
}

/// Fails with every failure at once, so one look shows all that changed.
fn report(failures: Vec<String>) {
    assert!(failures.is_empty(), "{} golden comparison(s) failed:\n{}", failures.len(), failures.join("\n"));
}

/// Writes the inputs [`RUNS`] name into `dir`: small deterministic arrays whose sizes are no multiples of a
/// work-group's, values from integer formulas (exact in f32, with ties and negatives), and a k-space cut from
/// the repository's sample.
fn write_inputs(dir: &Path) {
    let f32_of = |shape: &[usize], f: &dyn Fn(&[usize]) -> f32| {
        HostArray::F32(ArrayD::from_shape_fn(IxDyn(shape), |i| f(i.slice())))
    };
    let save = |name: &str, array: HostArray| write_file(dir.join(name), &array).unwrap();
    let x2 = |i: &[usize]| ((i[0] * 37 + i[1] * 101 + i[0] * i[1] * 7) % 113) as f32 / 8.0 - 5.0;
    save("x2.npy", f32_of(&[23, 19], &x2));
    save(
        "x3.npy",
        f32_of(&[7, 13, 11], &|i| ((i[0] * 53 + i[1] * 29 + i[2] * 71 + i[0] * i[1] * i[2]) % 97) as f32 / 4.0 - 10.0),
    );
    save("r2.npy", f32_of(&[23, 19], &|i| x2(i) / 7.0 + 0.1));
    save(
        "d2.npy",
        HostArray::F64(ArrayD::from_shape_fn(IxDyn(&[23, 19]), |i| {
            f64::from(x2(i.slice())) + (i[0] * i[1]) as f64 / 3.0
        })),
    );
    save(
        "u16.png",
        HostArray::U16(ArrayD::from_shape_fn(IxDyn(&[23, 19]), |i| ((i[0] * 37 + i[1] * 101) % 113) as u16 * 500)),
    );
    let complex = |shape: &[usize], a: usize, b: usize| {
        HostArray::C32(ArrayD::from_shape_fn(IxDyn(shape), |i| {
            Complex32::new(((i[0] * a + i[1] * b) % 7) as f32 - 3.0, ((i[0] * b + i[1] * 2) % 9) as f32 / 2.0 - 2.0)
        }))
    };
    save("c2.npy", complex(&[5, 7], 3, 5));
    save("cd.npy", complex(&[5, 7], 4, 1));
    save("cb.npy", complex(&[5, 4], 2, 3));
    save("sq.npy", f32_of(&[6, 6], &|i| ((i[0] * 5 + i[1] * 3) % 7) as f32 / 4.0 - 0.75));
    save("m2.npy", mask(&[23, 19], &in_m2));
    save("m3.npy", mask(&[7, 13, 11], &in_m3));
    save("coords.npy", f32_of(&[2, 5, 4], &|i| (i[1] * 4 + i[2] * 3 + i[0] * 7) as f32 * 1.3 - 2.5));
    save("kc.npy", f32_of(&[6, 2], &|i| ((i[0] * 5 + i[1] * 3) % 11) as f32 * 0.55 - 2.4));
    save("kv.npy", complex(&[2, 6], 3, 2));
    save("fp.npy", small_mask(&[[1, 1, 0], [0, 1, 0], [0, 1, 1]]));
    save("bs.npy", small_mask(&[[0, 1, 0], [1, 1, 1], [0, 1, 1]]));
    save("ls.npy", small_mask(&[[1, 1, 0], [1, 1, 1], [0, 1, 1]]));
    save("st.npy", f32_of(&[3, 3], &|i| [[0.0, 1.0, 0.0], [1.0, 2.5, 1.0], [0.0, 0.5, 0.0]][i[0]][i[1]]));
    save("kern.npy", f32_of(&[3, 4], &|i| (i[0] * 4 + i[1]) as f32 - 5.5));
    std::fs::create_dir_all(dir.join("batch")).unwrap();
    for (k, name) in ["a", "b", "c"].iter().enumerate() {
        save(&format!("batch/{name}.npy"), f32_of(&[4, 5], &|i| (i[0] * 5 + i[1] + k * 3) as f32 / 10.0 - 0.5));
    }
    std::fs::write(dir.join("pipe.toml"), PIPELINE).unwrap();
    write_small_kspace(dir);
}

/// The centre 26×26 of the first 3 coils of data/kspace.cfl (BART's [x, y, z, coil]) and of its mask: a k-space
/// that ESPIRiT's 24² calibration still fits, with maps 16 KB large.
fn write_small_kspace(dir: &Path) {
    let centre = 19..45;
    let kspace = match read_file(root().join("data/kspace.cfl")).unwrap() {
        HostArray::C32(k) => k.slice(s![centre.clone(), centre.clone(), .., 0..3]).to_owned().into_dyn(),
        other => panic!("data/kspace.cfl holds {:?}", other.dtype()),
    };
    let mask = match read_file(root().join("data/kspace_mask.cfl")).unwrap() {
        HostArray::C32(m) => m.slice(s![centre.clone(), centre]).to_owned().into_dyn(),
        other => panic!("data/kspace_mask.cfl holds {:?}", other.dtype()),
    };
    // The same k-space undersampled by its mask in cliper's order [coils, y, x] (the MRI steps' input), and
    // uniform maps 1/√3 for the steps that take maps.
    let kc = ArrayD::from_shape_fn(IxDyn(&[3, 26, 26]), |i| kspace[[i[2], i[1], 0, i[0]]] * mask[[i[2], i[1]]].re);
    write_file(dir.join("ksc.npy"), &HostArray::C32(kc)).unwrap();
    let maps = ArrayD::from_elem(IxDyn(&[3, 26, 26]), Complex32::new(1.0 / 3f32.sqrt(), 0.0));
    write_file(dir.join("kmaps.npy"), &HostArray::C32(maps)).unwrap();
    write_file(dir.join("ks.cfl"), &HostArray::C32(kspace)).unwrap();
    write_file(dir.join("ks_mask.cfl"), &HostArray::C32(mask)).unwrap();
}

fn mask(shape: &[usize], inside: &dyn Fn(&[usize]) -> bool) -> HostArray {
    HostArray::U8(ArrayD::from_shape_fn(IxDyn(shape), |i| u8::from(inside(i.slice()))))
}

fn small_mask(rows: &[[u8; 3]; 3]) -> HostArray {
    HostArray::U8(ArrayD::from_shape_fn(IxDyn(&[3, 3]), |i| rows[i[0]][i[1]]))
}

/// The 2-D mask: a ring about (11, 9) (a hole for fill-holes, a closed curve for label), a rectangle, a block in
/// the corner (which erosion keeps only with --border-value 1), a square outline whose centre (20, 12) is closed
/// to faces but open through the corner (21, 13) (filled at connectivity 1, not 2), and two pixels meeting at a
/// corner (one label with a diagonal structure, two without).
fn in_m2(i: &[usize]) -> bool {
    let (r, c) = (i[0], i[1]);
    let ring = (16..=49).contains(&((r as i64 - 11).pow(2) + (c as i64 - 9).pow(2)));
    let rectangle = (1..4).contains(&r) && (1..7).contains(&c);
    let corner_block = r >= 18 && c < 4;
    let leaky_square = (19..=21).contains(&r) && (11..=13).contains(&c) && i != [20, 12] && i != [21, 13];
    ring || rectangle || corner_block || leaky_square || i == [20, 16] || i == [21, 17]
}

/// The 3-D mask: a thick spherical shell about (3, 4, 4), a square tube along axis 0 (a hole in every slice,
/// none in the volume: its ends reach the array's faces), two voxels meeting only at a corner (connectivity 3
/// joins them) and two meeting at an edge within slice 0 (connectivity 2 joins them).
fn in_m3(i: &[usize]) -> bool {
    let shell = (1..=9).contains(&i.iter().zip([3i64, 4, 4]).map(|(&a, c)| (a as i64 - c).pow(2)).sum::<i64>());
    let (j, k) = (i[1], i[2]);
    let tube = (8..=12).contains(&j) && (6..=10).contains(&k) && (j == 8 || j == 12 || k == 6 || k == 10);
    shell || tube || i == [5, 0, 10] || i == [6, 1, 9] || i == [0, 12, 0] || i == [0, 11, 1]
}
