//! `--devices`: a batch spread over several OpenCL devices (two PoCL devices here, from
//! `POCL_DEVICES="pthread pthread"`): the same files as one device writes, the one bad input named with the
//! device that met it, and a line per device saying how many files it took.

mod common;
use cliper::{HostArray, write_npy};
use common::*;

#[test]
fn a_batch_over_two_devices_writes_what_one_device_writes() {
    let dir = scratch("devices");
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    for i in 0..40 {
        let values: Vec<f32> = (0..48 * 40).map(|k| ((k * 7 + i * 13) % 101) as f32 / 101.0).collect();
        let a = HostArray::F32(ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[48, 40]), values).unwrap());
        write_npy(input.join(format!("scan{i:02}.npy")), &a).unwrap();
    }
    std::fs::write(input.join("scan17.npy"), b"not an NPY file").unwrap();
    let run = |out: &str, devices: Option<&str>| {
        let mut command = cliper();
        command.args(["median", input.to_str().unwrap(), &format!("{}/", dir.join(out).display()), "--size", "3"]);
        command.env("POCL_DEVICES", "pthread pthread").env_remove("CLIPER_DEVICE");
        if let Some(d) = devices {
            command.args(["--devices", d]);
        }
        let out = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!stderr.contains("panicked"), "{stderr}");
        (out.status.code(), stderr)
    };
    let (code, one) = run("one", None);
    assert_eq!(code, Some(1), "{one}");
    let (code, two) = run("two", Some("all"));
    assert_eq!(code, Some(1), "{two}");
    // The bad file is the only failure, named with its device.
    let errors: Vec<&str> = two.lines().filter(|l| l.starts_with("error: ") && l.contains("scan")).collect();
    assert_eq!(errors.len(), 1, "{two}");
    assert!(errors[0].contains("scan17.npy") && errors[0].contains("(on 0:"), "{two}");
    assert!(two.contains("1 of 40 files failed"), "{two}");
    let shares: Vec<&str> = two.lines().filter(|l| l.starts_with("device ")).collect();
    assert!(!shares.is_empty(), "{two}");
    // On PoCL with two devices both take files.
    if shares.len() == 2 {
        assert!(shares.iter().all(|l| !l.contains(": 0 file(s)")), "{two}");
    }
    for i in (0..40).filter(|&i| i != 17) {
        let name = format!("scan{i:02}.npy");
        let (a, b) =
            (std::fs::read(dir.join("one").join(&name)).unwrap(), std::fs::read(dir.join("two").join(&name)).unwrap());
        assert!(a == b, "{name} differs between one device and two");
    }
    assert!(!dir.join("two/scan17.npy").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// A single file too large for the device memory limit runs in tiles over both devices with `--devices all`:
/// the message names both, and the file equals the one an untiled run writes.
#[test]
fn a_file_too_large_runs_in_tiles_over_two_devices() {
    let dir = scratch("devices-tiles");
    let input = dir.join("big.npy");
    let (h, w) = (611, 173);
    let values: Vec<f32> = (0..h * w).map(|k| ((k * 31 + 7) % 211) as f32 / 211.0).collect();
    write_npy(&input, &HostArray::F32(ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[h, w]), values).unwrap()))
        .unwrap();
    let run = |out: &str, limit: Option<&str>| {
        let mut command = cliper();
        let output = dir.join(out);
        command.args(["gaussian-filter", input.to_str().unwrap(), output.to_str().unwrap(), "--sigma", "2"]);
        command.env("POCL_DEVICES", "pthread pthread").env_remove("CLIPER_DEVICE").args(["--devices", "all"]);
        if let Some(l) = limit {
            command.env("CLIPER_MEMORY_LIMIT", l);
        }
        let out = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        stderr
    };
    run("whole.npy", None);
    let said = run("tiled.npy", Some("300K"));
    let line = said.lines().find(|l| l.contains("running in")).unwrap_or_else(|| panic!("no tiles: {said}"));
    assert!(line.contains(" and "), "both devices should be named: {line}");
    let (a, b) = (std::fs::read(dir.join("whole.npy")).unwrap(), std::fs::read(dir.join("tiled.npy")).unwrap());
    assert!(a == b, "the file tiled over two devices differs from the untiled one");
    std::fs::remove_dir_all(&dir).ok();
}
