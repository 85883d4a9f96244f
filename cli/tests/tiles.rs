//! The CLI on inputs that do not fit the device memory (`CLIPER_MEMORY_LIMIT` lowers it): it says it runs in
//! tiles and the files it writes equal an untiled run's bit for bit; what cannot run in tiles fails in one line
//! naming the step, leaving no output.

mod common;
use cliper::{HostArray, read_image, read_npy, write_npy};
use common::*;
use std::path::Path;

/// Runs `cliper args` with `CLIPER_MEMORY_LIMIT=limit` (or none); gives (exit code, stderr).
fn limited(args: &[&str], limit: Option<&str>) -> (Option<i32>, String) {
    let mut command = cliper();
    command.args(args);
    match limit {
        Some(l) => command.env("CLIPER_MEMORY_LIMIT", l),
        None => command.env_remove("CLIPER_MEMORY_LIMIT"),
    };
    let out = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    // A run that wrote its output says so once, tiled or not.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.code() != Some(0) || stdout.matches("wrote").count() == 1, "{stdout}");
    (out.status.code(), stderr)
}

fn noise(shape: &[usize]) -> HostArray {
    let n: usize = shape.iter().product();
    let values: Vec<f32> = (0..n).map(|i| ((i as u64).wrapping_mul(2_654_435_761) % 1009) as f32 / 1009.0).collect();
    HostArray::F32(ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), values).unwrap())
}

fn str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn commands_tile_under_a_memory_limit_and_match_untiled_runs() {
    let dir = scratch("tiles");
    let input = dir.join("in.npy");
    write_npy(&input, &noise(&[600, 300])).unwrap();
    // 600 × 300 floats are 720 KB: a 400 KB limit leaves no room for the whole chain.
    for (command, extra) in [
        ("gaussian-filter", &["--sigma", "2.5"][..]),
        ("median", &["--size", "5"][..]),
        ("gradient-magnitude", &["--derivative", "sobel"][..]),
        ("pad", &["--width", "7", "--mode", "symmetric"][..]),
    ] {
        let (whole, tiled) = (dir.join(format!("{command}-whole.npy")), dir.join(format!("{command}-tiled.npy")));
        let run = |out: &Path, limit| {
            let mut args = vec![command, str(&input), str(out)];
            args.extend(extra);
            limited(&args, limit)
        };
        let (code, stderr) = run(&whole, None);
        assert_eq!(code, Some(0), "{stderr}");
        assert!(!stderr.contains("tiles"), "{stderr}");
        let (code, stderr) = run(&tiled, Some("400K"));
        assert_eq!(code, Some(0), "{stderr}");
        assert!(stderr.contains("running in") && stderr.contains("tiles of"), "{command}: {stderr}");
        assert!(read_npy(&whole).unwrap() == read_npy(&tiled).unwrap(), "{command}: tiled and whole differ");
    }
    // A PNG in, a TIFF out (gathered on the host, saved once): u8 back to u8 as untiled.
    let png = root().join("data/phantom_256.png");
    let (whole, tiled) = (dir.join("whole.tif"), dir.join("tiled.tif"));
    for (out, limit) in [(&whole, None), (&tiled, Some("150K"))] {
        let (code, stderr) = limited(&["gaussian-filter", str(&png), str(out), "--sigma", "1"], limit);
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(stderr.contains("tiles of"), limit.is_some(), "{stderr}");
    }
    assert!(read_image(&whole).unwrap().array == read_image(&tiled).unwrap().array);
    std::fs::remove_dir_all(&dir).ok();
}

/// `cliper norm` on an input larger than the limit: the per-tile partials combine into the value an untiled run
/// prints, to f32 rounding of a sum over 180 000 elements.
#[test]
fn norms_combine_over_tiles() {
    let dir = scratch("tiles-norm");
    let input = dir.join("in.npy");
    write_npy(&input, &noise(&[600, 300])).unwrap();
    let value = |args: &[&str], limit| {
        let mut command = cliper();
        command.args(args).arg("--json");
        match limit {
            Some(l) => command.env("CLIPER_MEMORY_LIMIT", l),
            None => command.env_remove("CLIPER_MEMORY_LIMIT"),
        };
        let out = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert_eq!(stderr.contains("tiles of"), limit.is_some(), "{stderr}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        json["runs"][0]["values"][0]["values"].as_f64().unwrap()
    };
    for args in
        [&["norm", str(&input)][..], &["norm", str(&input), "-p", "inf"][..], &["norm", str(&input), "-p", "1"][..]]
    {
        let (whole, tiled) = (value(args, None), value(args, Some("200K")));
        assert!((whole - tiled).abs() <= 1e-5 * whole.abs(), "{args:?}: whole {whole}, tiled {tiled}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn what_needs_the_whole_image_is_refused_in_one_line_without_output() {
    let dir = scratch("tiles-refused");
    let input = dir.join("in.npy");
    write_npy(&input, &noise(&[400, 200])).unwrap();
    let out = dir.join("labels.npy");
    let (code, stderr) = limited(&["label", str(&input), str(&out)], Some("200K"));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("`label`") && stderr.contains("whole image") && stderr.contains("[400, 200]"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(!out.exists());
    // A limit that is not a size is named.
    let (code, stderr) = limited(&["gaussian-filter", str(&input), str(&out), "--sigma", "1"], Some("lots"));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("CLIPER_MEMORY_LIMIT") && stderr.contains("lots"), "{stderr}");
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// Fortran-order NPY files (numpy's `np.asfortranarray`, tests/fixtures/make_npy.py) run through the commands
/// that read their input in slabs — whole and in tiles — and give exactly what the same array in C order gives
/// (the same values reach the device in the same order: the comparison is exact).
#[test]
fn fortran_order_npy_runs_as_its_c_order_twin() {
    let dir = scratch("fortran");
    let fixture = |name: &str| root().join("tests/fixtures").join(name);
    for name in ["fortran_i16_5x7.npy", "fortran_f32_64x12x10.npy", "fortran_f32_64x12x10_big_endian.npy"] {
        let fortran = fixture(name);
        let c_order = dir.join(format!("c-{name}"));
        write_npy(&c_order, &read_npy(&fortran).unwrap()).unwrap();
        for (command, extra) in [
            ("gaussian-filter", &["--sigma", "1"][..]),
            ("transpose", &[][..]),
            ("threshold", &["--value", "3"][..]),
            ("label", &[][..]),
            ("median", &["--size", "3"][..]),
        ] {
            let transposable = command != "transpose" || name.contains("5x7");
            if !transposable {
                continue;
            }
            let run = |input: &Path, out: &Path, limit| {
                let mut args = vec![command, str(input), str(out)];
                args.extend(extra);
                limited(&args, limit)
            };
            let from_c = dir.join(format!("{command}-c-{name}"));
            let (code, stderr) = run(&c_order, &from_c, None);
            assert_eq!(code, Some(0), "{command} {name} (C order): {stderr}");
            let from_fortran = dir.join(format!("{command}-f-{name}"));
            let (code, stderr) = run(&fortran, &from_fortran, None);
            assert_eq!(code, Some(0), "{command} {name}: {stderr}");
            assert!(read_npy(&from_c).unwrap() == read_npy(&from_fortran).unwrap(), "{command} {name}: differs");
            // Tiled: local steps only, under a limit the volume does not fit.
            if name.contains("64x12x10") && matches!(command, "gaussian-filter" | "median" | "threshold") {
                let tiled = dir.join(format!("{command}-tiled-{name}"));
                let (code, stderr) = run(&fortran, &tiled, Some("64K"));
                assert_eq!(code, Some(0), "{command} {name} tiled: {stderr}");
                assert!(stderr.contains("tiles of"), "{command} {name}: {stderr}");
                assert!(read_npy(&from_c).unwrap() == read_npy(&tiled).unwrap(), "{command} {name} tiled differs");
            }
        }
        // A norm is a number on stdout.
        let norm = |input: &Path| {
            let out = cliper().args(["norm", str(input)]).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        assert_eq!(norm(&fortran), norm(&c_order), "norm {name}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A tiled run writes its NPY outputs through memory maps (`CLIPER_MAPPED_WRITES=on`, the default from four cores)
/// or by positioned writes (`off`): the same bytes either way, f32 values and a uint8 mask alike, and an untiled
/// run's. A setting that is not one is refused in one line, with no output.
#[test]
fn outputs_are_the_same_written_through_maps_or_not() {
    let dir = scratch("tiles-maps");
    let input = dir.join("in.npy");
    write_npy(&input, &noise(&[700, 310])).unwrap();
    for (command, extra) in [("gaussian-filter", &["--sigma", "2"][..]), ("threshold", &["--value", "0.5"][..])] {
        let mut written = Vec::new();
        for (setting, limit) in [("off", None), ("on", Some("400K")), ("off", Some("400K")), ("auto", Some("400K"))] {
            let out = dir.join(format!("{command}-{setting}-{}.npy", limit.is_some()));
            let mut command_line = cliper();
            command_line.args([command, str(&input), str(&out)]).args(extra).env("CLIPER_MAPPED_WRITES", setting);
            match limit {
                Some(l) => command_line.env("CLIPER_MEMORY_LIMIT", l),
                None => command_line.env_remove("CLIPER_MEMORY_LIMIT"),
            };
            let run = command_line.output().unwrap();
            let stderr = String::from_utf8_lossy(&run.stderr);
            assert_eq!(run.status.code(), Some(0), "{command} {setting}: {stderr}");
            assert_eq!(stderr.contains("tiles of"), limit.is_some(), "{stderr}");
            written.push(std::fs::read(&out).unwrap());
        }
        assert!(written.iter().all(|w| *w == written[0]), "{command}: outputs differ between the ways of writing");
        assert_eq!(read_npy(dir.join(format!("{command}-on-true.npy"))).unwrap().shape(), &[700, 310]);
    }
    let out = dir.join("refused.npy");
    let run = cliper()
        .args(["gaussian-filter", str(&input), str(&out), "--sigma", "2"])
        .env("CLIPER_MAPPED_WRITES", "sometimes")
        .env("CLIPER_MEMORY_LIMIT", "400K")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    // The tiling notice, then the refusal in one line.
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert!(
        matches!(errors[..], [line] if line.contains("CLIPER_MAPPED_WRITES") && line.contains("sometimes")),
        "{stderr}"
    );
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).ok();
}
