//! Small files that claim huge arrays (issue 44, item 6): each is processed within the host memory budget
//! (`CLIPER_HOST_MEMORY_LIMIT`) or refused in one line naming the file, the size and the budget — never an
//! abort (exit 134, Rust's allocation-failure backtrace) nor a panic. And `cliper info` streams: its peak
//! resident memory on a 64 MiB NPY stays far below the array.
//!
//! Every file is generated here: NIfTI-1 and MAT level-5 headers written byte by byte as their specifications lay
//! them out, the compressed data made with flate2, the PNG's chunks with their CRCs.

mod common;
use common::*;
use flate2::write::{GzEncoder, ZlibEncoder};
use flate2::{Compress, Compression, FlushCompress};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `cliper args` under `CLIPER_HOST_MEMORY_LIMIT=limit`: (exit code, stdout, stderr). Exit 134 (abort) and
/// a panic fail the test wherever they come.
fn run(args: &[&str], limit: &str) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cliper"))
        .current_dir(root())
        .args(args)
        .env("CLIPER_HOST_MEMORY_LIMIT", limit)
        .output()
        .unwrap();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert_ne!(out.status.code(), Some(134), "aborted: {stderr}");
    assert!(out.status.code().is_some(), "killed by a signal: {stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("memory allocation of"), "{stderr}");
    (out.status.code(), stdout, stderr)
}

/// A refusal: exit 1, one line naming the file, "host memory" and the budget's source, no output file.
fn assert_refused(args: &[&str], limit: &str, file: &Path, output: Option<&Path>) {
    let (code, _, stderr) = run(args, limit);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    let name = file.file_name().unwrap().to_string_lossy();
    assert!(stderr.contains(&*name), "the message names the file: {stderr}");
    assert!(stderr.contains("host memory") && stderr.contains("CLIPER_HOST_MEMORY_LIMIT="), "{stderr}");
    if let Some(out) = output {
        assert!(!out.exists(), "a refused run left {}", out.display());
    }
}

/// A chunk of a PNG: length, type, data, CRC of type and data.
fn png_chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut crc = flate2::Crc::new();
    crc.update(kind);
    crc.update(data);
    let mut out = (data.len() as u32).to_be_bytes().to_vec();
    out.extend(kind);
    out.extend(data);
    out.extend(crc.sum().to_be_bytes());
    out
}

/// A NIfTI-1 header (348 bytes and the 4-byte extension flag) for u8 data of `dims` (i, j, k).
fn nifti_header(dims: [i16; 3]) -> Vec<u8> {
    let mut h = vec![0u8; 352];
    h[0..4].copy_from_slice(&348i32.to_le_bytes());
    for (k, d) in [3i16, dims[0], dims[1], dims[2], 1, 1, 1, 1].iter().enumerate() {
        h[40 + 2 * k..42 + 2 * k].copy_from_slice(&d.to_le_bytes());
    }
    h[70..72].copy_from_slice(&2i16.to_le_bytes()); // datatype: unsigned char
    h[72..74].copy_from_slice(&8i16.to_le_bytes()); // bitpix
    for k in 0..4 {
        h[76 + 4 * k..80 + 4 * k].copy_from_slice(&1f32.to_le_bytes()); // pixdim
    }
    h[108..112].copy_from_slice(&352f32.to_le_bytes()); // vox_offset
    h[344..348].copy_from_slice(b"n+1\0");
    h
}

/// A zlib stream that inflates to `prefix` and then `blocks` MiB of zeros, without compressing them all: after a
/// MiB of zeros the window holds only zeros, so the deflate blocks of the next MiB (ended by a sync flush) inflate
/// to a MiB of zeros wherever they are repeated. The stream has no end (no final block, no Adler-32): a reader
/// stops at the budget first, or fails at the end of the data.
fn zeros_zlib(prefix: &[u8], blocks: usize) -> Vec<u8> {
    let mut compress = Compress::new(Compression::best(), true);
    let mut deflate = |input: &[u8]| {
        let mut out = Vec::with_capacity(input.len() + 1024);
        compress.compress_vec(input, &mut out, FlushCompress::Sync).unwrap();
        assert_eq!(compress.total_in() as usize % (1 << 20), prefix.len() % (1 << 20));
        out
    };
    let mut first = prefix.to_vec();
    first.extend(vec![0u8; 1 << 20]);
    let mut stream = deflate(&first);
    let block = deflate(&vec![0u8; 1 << 20]);
    for _ in 1..blocks {
        stream.extend(&block);
    }
    stream
}

/// A 4 MB `.nii.gz` of 4 GiB of zeros (u8, 2048 × 2048 × 1024): a gzip member with the header, then 4096 members
/// of a MiB of zeros each (gzip readers read concatenated members as one stream).
#[test]
fn a_gzipped_nifti_of_4_gib_of_zeros_is_refused_over_the_budget() {
    let dir = scratch("bomb-nifti");
    let path = dir.join("zeros.nii.gz");
    let mut header = GzEncoder::new(Vec::new(), Compression::default());
    header.write_all(&nifti_header([2048, 2048, 1024])).unwrap();
    let mut bytes = header.finish().unwrap();
    let mut zeros = GzEncoder::new(Vec::new(), Compression::best());
    zeros.write_all(&vec![0u8; 1 << 20]).unwrap();
    let member = zeros.finish().unwrap();
    for _ in 0..4096 {
        bytes.extend(&member);
    }
    assert!(bytes.len() < 5 << 20, "{} bytes", bytes.len());
    std::fs::write(&path, &bytes).unwrap();
    let out = dir.join("out.nii.gz");
    assert_refused(&["info", path.to_str().unwrap()], "1G", &path, None);
    assert_refused(&["convert", path.to_str().unwrap(), out.to_str().unwrap()], "1G", &path, Some(&out));
    assert_refused(&["norm", path.to_str().unwrap(), "-p", "inf"], "1G", &path, None);
    std::fs::remove_dir_all(&dir).ok();
}

/// A 1 MiB PNG whose header claims 60000 × 60000 RGBA pixels of 16 bits (28.8 GB) — small enough a claim for its
/// size that the format's own bound (deflate's ratio) lets it through — with a valid small IDAT.
#[test]
fn a_png_claiming_28_gb_of_pixels_is_refused_over_the_budget() {
    let dir = scratch("bomb-png");
    let path = dir.join("huge.png");
    let mut ihdr = Vec::new();
    ihdr.extend(60000u32.to_be_bytes());
    ihdr.extend(60000u32.to_be_bytes());
    ihdr.extend([16, 6, 0, 0, 0]); // 16-bit RGBA, deflate, adaptive filtering, no interlace
    let mut idat = ZlibEncoder::new(Vec::new(), Compression::default());
    idat.write_all(&[0u8; 64]).unwrap();
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend(png_chunk(b"IHDR", &ihdr));
    // An ancillary chunk makes the file big enough for the claim to pass the deflate-ratio bound.
    let mut text = b"Comment\0".to_vec();
    text.extend(vec![b'x'; 1 << 20]);
    bytes.extend(png_chunk(b"tEXt", &text));
    bytes.extend(png_chunk(b"IDAT", &idat.finish().unwrap()));
    bytes.extend(png_chunk(b"IEND", &[]));
    std::fs::write(&path, &bytes).unwrap();
    let out = dir.join("out.npy");
    assert_refused(&["info", path.to_str().unwrap()], "1G", &path, None);
    assert_refused(&["convert", path.to_str().unwrap(), out.to_str().unwrap()], "1G", &path, Some(&out));
    std::fs::remove_dir_all(&dir).ok();
}

/// A MAT file whose one compressed element holds a 16384 × 16384 double matrix (2 GiB) in 2 MiB of zlib data.
#[test]
fn a_mat_file_whose_compressed_element_inflates_past_the_budget_is_refused() {
    let dir = scratch("bomb-mat");
    let path = dir.join("bomb.mat");
    let le = |v: u32| v.to_le_bytes();
    // The matrix element: flags (double), dimensions, name `x`, then the real part's tag; its data follows as
    // zeros.
    let data_bytes: u32 = 16384 * 16384 * 8;
    let mut matrix = Vec::new();
    for word in [6, 8, 6, 0, 5, 8, 16384, 16384, 1, 1] {
        matrix.extend(le(word));
    }
    matrix.extend(b"x\0\0\0\0\0\0\0");
    matrix.extend(le(9));
    matrix.extend(le(data_bytes));
    let body = matrix.len() as u32 + data_bytes;
    let mut inner = le(14).to_vec(); // miMATRIX
    inner.extend(le(body));
    inner.extend(&matrix);
    let zlib = zeros_zlib(&inner, 2048);
    let mut bytes = format!("{:<116}", "MATLAB 5.0 MAT-file, written by cliper's tests").into_bytes();
    bytes.extend([0u8; 8]);
    bytes.extend(0x0100u16.to_le_bytes());
    bytes.extend(b"IM");
    bytes.extend(le(15)); // miCOMPRESSED
    bytes.extend(le(zlib.len() as u32));
    bytes.extend(&zlib);
    assert!(bytes.len() < 4 << 20, "{} bytes", bytes.len());
    std::fs::write(&path, &bytes).unwrap();
    let out = dir.join("out.npy");
    assert_refused(&["info", path.to_str().unwrap()], "256M", &path, None);
    assert_refused(&["convert", path.to_str().unwrap(), out.to_str().unwrap()], "256M", &path, Some(&out));
    std::fs::remove_dir_all(&dir).ok();
}

/// A valid NPY header for `shape` of u8, its data left to `set_len` (a sparse file: no disk space taken).
fn sparse_npy(path: &Path, elements: u64) {
    let dict = format!("{{'descr': '|u1', 'fortran_order': False, 'shape': ({elements},), }}");
    let mut header = b"\x93NUMPY\x01\x00".to_vec();
    let padded = format!("{dict:<117}\n");
    header.extend((padded.len() as u16).to_le_bytes());
    header.extend(padded.as_bytes());
    let file = std::fs::File::create(path).unwrap();
    (&file).write_all(&header).unwrap();
    file.set_len(header.len() as u64 + elements).unwrap();
}

/// Peak resident memory (VmHWM) of `cliper args`, polled from /proc while it runs; with its exit code and output.
fn peak_rss(args: &[&str]) -> (u64, Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cliper"))
        .current_dir(root())
        .args(args)
        .env_remove("CLIPER_HOST_MEMORY_LIMIT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let code = loop {
        if let Some(kib) = std::fs::read_to_string(&status).ok().and_then(|t| {
            t.lines().find_map(|l| l.strip_prefix("VmHWM:")?.trim().strip_suffix("kB")?.trim().parse::<u64>().ok())
        }) {
            peak = peak.max(kib << 10);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let out = child.wait_with_output().unwrap();
    (peak, code, String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

/// `cliper info` on a 64 MiB u8 NPY holds a slab (16 MiB) at a time, not the array in complex f64 (the issue
/// measured 2.1 GB). The bound: 160 MiB, the process's own footprint (about 50 MiB: the binary, the allocator)
/// plus a slab, with room to spare; the array widened to complex f64 alone would be 1 GiB.
#[test]
fn info_streams_a_64_mib_npy_in_bounded_memory() {
    let dir = scratch("info-rss");
    let path = dir.join("sparse.npy");
    sparse_npy(&path, 64 << 20);
    let (peak, code, output) = peak_rss(&["info", path.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{output}");
    assert!(output.contains("shape [67108864] u8") && output.contains("min 0  max 0  mean 0"), "{output}");
    assert!(peak > 0 && peak < 160 << 20, "info peaked at {} MiB", peak >> 20);
    std::fs::remove_dir_all(&dir).ok();
}

/// The sparse NPY of 2³¹ + 3 u8 (2 GiB, no disk space): `info` streams it, `norm -p inf` runs in tiles
/// under a 512 MiB host budget, `convert` (which reads whole) is refused. Ignored by default: 2³¹ elements take
/// minutes in a debug build on 2 cores; run with `cargo test -p cliper-cli --release --test host_memory --
/// --ignored`.
#[test]
#[ignore]
fn the_sparse_two_gib_npy_streams_tiles_or_is_refused() {
    let dir = scratch("bomb-npy");
    let path = dir.join("sparse.npy");
    sparse_npy(&path, (1 << 31) + 3);
    let file = path.to_str().unwrap();
    let (code, stdout, stderr) = run(&["info", file], "512M");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("shape [2147483651] u8  min 0  max 0  mean 0"), "{stdout}");
    let (code, stdout, stderr) = run(&["norm", file, "-p", "inf"], "512M");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("tiles of") && stdout.trim().ends_with('0'), "{stdout} {stderr}");
    let out = dir.join("out.nii");
    assert_refused(&["convert", file, out.to_str().unwrap()], "512M", &path, Some(&out));
    std::fs::remove_dir_all(&dir).ok();
}

/// A single run whose host buffers would pass the host budget runs in tiles even when the device could hold it
/// (the 2³¹-element f32 ran as "1 tile" beyond host memory), and writes what an untiled run writes.
/// 2048 × 1024 f32 is 8 MiB; its untiled run holds the input, its device copy and the output's copy (24 MiB
/// and more) — over a 16 MiB budget.
#[test]
fn a_run_over_the_host_budget_runs_in_tiles() {
    let dir = scratch("host-tiles");
    let input = dir.join("in.npy");
    let values: Vec<f32> = (0..2048 * 1024).map(|i| ((i as u64 * 2_654_435_761) % 1009) as f32 / 1009.0).collect();
    let array = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[2048, 1024]), values).unwrap();
    cliper::write_npy(&input, &cliper::HostArray::F32(array)).unwrap();
    let (whole, tiled) = (dir.join("whole.npy"), dir.join("tiled.npy"));
    let blur = |out: &Path, limit: &str| {
        run(&["gaussian-filter", input.to_str().unwrap(), out.to_str().unwrap(), "--sigma", "2"], limit)
    };
    let (code, _, stderr) = blur(&whole, "1G");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("tiles of"), "{stderr}");
    let (code, _, stderr) = blur(&tiled, "16M");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("16777216-byte host memory budget") && stderr.contains("tiles of"), "{stderr}");
    assert!(cliper::read_npy(&whole).unwrap() == cliper::read_npy(&tiled).unwrap(), "tiled and whole differ");
    std::fs::remove_dir_all(&dir).ok();
}

/// Converting on save (`--type`) makes copies of the values (48 bytes per element on the way): over the budget
/// it is refused in one line naming the output, before anything is written. The fixture's 6 f32 (24 bytes) read
/// within 200 bytes; their conversion to f64 needs 6 × 56 = 336.
#[test]
fn a_conversion_on_save_over_the_budget_is_refused_naming_the_output() {
    let dir = scratch("host-cast");
    let input = root().join("tests/fixtures/f32_c_order.npy");
    let out = dir.join("out.npy");
    let args = ["convert", input.to_str().unwrap(), out.to_str().unwrap(), "--type", "f64"];
    assert_refused(&args, "200", &out, Some(&out));
    let (_, _, stderr) = run(&args, "200");
    assert!(stderr.contains("336 bytes") && stderr.contains("200 bytes"), "{stderr}");
    let (code, _, stderr) = run(&args, "1M");
    assert_eq!(code, Some(0), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Loading converts a file's type to the device's (u8 → f32 here) into one new array: that conversion is
/// checked too. In a batch (which does not tile) each file whose conversion passes the budget is refused in one
/// line naming it, and the batch fails; within the budget the same batch runs. 1000 u8 read in 1000 bytes; the
/// f32 copy beside them needs 5000.
#[test]
fn a_conversion_on_load_over_the_budget_is_refused_per_file() {
    let dir = scratch("host-load");
    let inputs = dir.join("in");
    std::fs::create_dir_all(&inputs).unwrap();
    for name in ["a.npy", "b.npy"] {
        let array = ndarray::ArrayD::from_shape_fn(ndarray::IxDyn(&[40, 25]), |i| (i[0] * 3 + i[1]) as u8);
        cliper::write_npy(inputs.join(name), &cliper::HostArray::U8(array)).unwrap();
    }
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let args = ["threshold", inputs.to_str().unwrap(), out.to_str().unwrap(), "--value", "50"];
    let (code, _, stderr) = run(&args, "3000");
    assert_ne!(code, Some(0), "{stderr}");
    for name in ["a.npy", "b.npy"] {
        let line = stderr.lines().find(|l| l.contains(name)).unwrap_or_else(|| panic!("{name}: {stderr}"));
        assert!(line.contains("5000 bytes of host memory") && line.contains("3000 bytes"), "{line}");
        assert!(!out.join(name).exists());
    }
    let (code, _, stderr) = run(&args, "1M");
    assert_eq!(code, Some(0), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}
