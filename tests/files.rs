//! File formats so far: NPY and RAW. Round trips of every element type are bit-exact; fixtures written by numpy
//! (tests/fixtures/make_npy.py) read back with their known values (C and Fortran order, big-endian, complex);
//! bad files give typed errors that name the path; saves are atomic.

mod common;
use cliper::prelude::*;
use cliper::{
    read_npy, read_png, read_raw, read_tiff, write_mat, write_npy, write_png, write_raw, write_tiff, write_tiff_with,
};
use common::*;
use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// A fresh empty directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cliper-files-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One array of every type with values at the edges of its range (and NaN/∞ for floats).
fn samples() -> Vec<HostArray> {
    let shape = IxDyn(&[2, 3]);
    let a = |v: Vec<f64>| ArrayD::from_shape_vec(shape.clone(), v).unwrap();
    vec![
        HostArray::U8(ArrayD::from_shape_vec(shape.clone(), vec![0, 1, 2, 127, 128, 255]).unwrap()),
        HostArray::U16(ArrayD::from_shape_vec(shape.clone(), vec![0, 1, 256, 1000, 32768, 65535]).unwrap()),
        HostArray::U32(
            ArrayD::from_shape_vec(shape.clone(), vec![0, 1, 1 << 24, (1 << 24) + 1, 1 << 31, u32::MAX]).unwrap(),
        ),
        HostArray::U64(
            ArrayD::from_shape_vec(shape.clone(), vec![0, 1, 1 << 53, (1 << 53) + 1, 1 << 63, u64::MAX]).unwrap(),
        ),
        HostArray::I8(ArrayD::from_shape_vec(shape.clone(), vec![-128, -1, 0, 1, 100, 127]).unwrap()),
        HostArray::I16(ArrayD::from_shape_vec(shape.clone(), vec![i16::MIN, -300, 0, 1, 300, i16::MAX]).unwrap()),
        HostArray::I32(ArrayD::from_shape_vec(shape.clone(), vec![i32::MIN, -70000, 0, 1, 70000, i32::MAX]).unwrap()),
        HostArray::I64(ArrayD::from_shape_vec(shape.clone(), vec![i64::MIN, -1, 0, 1, 1 << 40, i64::MAX]).unwrap()),
        HostArray::F32(a(vec![0.0, -0.0, 1.5e-40, -3.25, f64::INFINITY, f64::NAN]).mapv(|v| v as f32)),
        HostArray::F64(a(vec![0.0, -0.0, 5e-324, -3.25, f64::NEG_INFINITY, 1e300])),
        HostArray::C32(a(vec![0.0, 1.0, -2.5, 1e-30, 3.0, 7.0]).mapv(|v| Complex32::new(v as f32, -(v as f32) / 3.0))),
        HostArray::C64(a(vec![0.0, 1.0, -2.5, 1e-300, 3.0, 7.0]).mapv(|v| Complex64::new(v, v / 3.0))),
    ]
}

/// Bit patterns, so NaN and -0.0 compare exactly.
fn bits(a: &HostArray) -> Vec<u64> {
    match a {
        HostArray::F32(x) => x.iter().map(|v| v.to_bits() as u64).collect(),
        HostArray::F64(x) => x.iter().map(|v| v.to_bits()).collect(),
        HostArray::C32(x) => x.iter().flat_map(|v| [v.re.to_bits() as u64, v.im.to_bits() as u64]).collect(),
        HostArray::C64(x) => x.iter().flat_map(|v| [v.re.to_bits(), v.im.to_bits()]).collect(),
        HostArray::U8(x) => x.iter().map(|&v| v as u64).collect(),
        HostArray::U16(x) => x.iter().map(|&v| v as u64).collect(),
        HostArray::U32(x) => x.iter().map(|&v| v as u64).collect(),
        HostArray::U64(x) => x.iter().copied().collect(),
        HostArray::I8(x) => x.iter().map(|&v| v as u64).collect(),
        HostArray::I16(x) => x.iter().map(|&v| v as u64).collect(),
        HostArray::I32(x) => x.iter().map(|&v| v as u64).collect(),
        HostArray::I64(x) => x.iter().map(|&v| v as u64).collect(),
    }
}

#[test]
fn npy_and_raw_round_trip_every_type_bit_exact() {
    let dir = scratch("round-trip");
    for a in samples() {
        let name = a.dtype().name();
        let npy = dir.join(format!("{name}.npy"));
        write_npy(&npy, &a).unwrap();
        let back = read_npy(&npy).unwrap();
        assert_eq!((back.dtype(), back.shape()), (a.dtype(), a.shape()), "{name} npy");
        assert_eq!(bits(&back), bits(&a), "{name} npy");
        for endian in [Endian::Little, Endian::Big] {
            let raw = dir.join(format!("{name}-{endian:?}.raw"));
            write_raw(&raw, &a, endian).unwrap();
            assert_eq!(std::fs::metadata(&raw).unwrap().len() as usize, 6 * a.dtype().size());
            let format = RawFormat { shape: vec![2, 3], dtype: a.dtype(), endian };
            assert_eq!(bits(&read_raw(&raw, &format).unwrap()), bits(&a), "{name} raw {endian:?}");
        }
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("cliper-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left behind: {leftovers:?}");
}

#[test]
fn xdata_save_and_load_every_element_type() {
    let dir = scratch("xdata");
    let mut rng = Rng::new(71);
    macro_rules! trip {
        ($t:ty) => {{
            let (x, host) = random::<$t>(&mut rng, &[7, 129]);
            let path = dir.join(format!("{}.npy", <$t as cliper::Element>::NAME));
            x.save(&path).unwrap();
            assert_same(&fetch(&XData::<$t>::load(app(), &path).unwrap()), &host, "npy");
            let raw = dir.join(format!("{}.raw", <$t as cliper::Element>::NAME));
            x.t().save_raw(&raw, Endian::Big).unwrap();
            let dtype = Dtype::parse(<$t as cliper::Element>::NAME).unwrap();
            let format = RawFormat { shape: vec![129, 7], dtype, endian: Endian::Big };
            let want = host.clone().reversed_axes().as_standard_layout().to_owned();
            assert_same(&fetch(&XData::<$t>::load_raw(app(), &raw, &format).unwrap()), &want, "raw of a view");
        }};
    }
    trip!(f32);
    trip!(f64);
    trip!(Complex32);
    trip!(Complex64);
}

#[test]
fn numpy_fixtures_read_with_known_values() {
    let f32s = XData::<f32>::load(app(), fixture("f32_c_order.npy")).unwrap();
    assert_eq!((f32s.shape(), f32s.to_vec().unwrap()), (&[2usize, 3][..], vec![1.5, -2.0, 3.25, 4.0, 5.5, -6.75]));
    // Fortran order: numpy's a[i, j] stays a[i, j].
    let f64s = XData::<f64>::load(app(), fixture("f64_fortran_order.npy")).unwrap();
    assert_eq!(f64s.to_vec().unwrap(), vec![0.0, 0.125, 0.25, 0.375, 0.5, 0.625]);
    let c = XData::<Complex32>::load(app(), fixture("c64.npy")).unwrap();
    assert_eq!(c.to_vec().unwrap(), vec![Complex32::new(1.0, 2.0), Complex32::new(-3.5, -0.25)]);
    let i16s = read_npy(fixture("i16_big_endian.npy")).unwrap();
    assert_eq!(i16s, HostArray::I16(ArrayD::from_shape_vec(IxDyn(&[2, 2]), vec![1, -2, 300, -32768]).unwrap()));
    let as_float = XData::<f32>::load(app(), fixture("i16_big_endian.npy")).unwrap();
    assert_eq!(as_float.to_vec().unwrap(), vec![1.0, -2.0, 300.0, -32768.0]);
    let u8s = XData::<f64>::load(app(), fixture("u8.npy")).unwrap();
    assert_eq!(u8s.to_vec().unwrap(), vec![0.0, 60.0, 120.0, 180.0, 240.0]);
}

fn format_error(e: Error, path: &Path, words: &[&str]) {
    let text = e.to_string();
    assert!(text.contains(&path.display().to_string()), "the error should name {}: {text}", path.display());
    for w in words {
        assert!(text.contains(w), "the error should say {w:?}: {text}");
    }
}

#[test]
fn bad_files_give_errors_that_name_the_path() {
    let dir = scratch("bad");
    let good = std::fs::read(fixture("f32_c_order.npy")).unwrap();
    let truncated = dir.join("truncated.npy");
    std::fs::write(&truncated, &good[..good.len() - 5]).unwrap();
    format_error(XData::<f32>::load(app(), &truncated).unwrap_err(), &truncated, &["NPY"]);
    let short_header = dir.join("short.npy");
    std::fs::write(&short_header, &good[..40]).unwrap();
    format_error(read_npy(&short_header).unwrap_err(), &short_header, &["truncated"]);
    let garbage = dir.join("garbage.npy");
    std::fs::write(&garbage, b"this is not numpy data at all").unwrap();
    format_error(read_npy(&garbage).unwrap_err(), &garbage, &["magic"]);
    let mut corrupted = good.clone();
    corrupted[8] = 0xff; // header length far beyond the file
    corrupted[9] = 0x7f;
    let corrupt = dir.join("corrupt.npy");
    std::fs::write(&corrupt, &corrupted).unwrap();
    assert!(matches!(read_npy(&corrupt), Err(Error::Format { .. })));
    format_error(read_npy(fixture("bool.npy")).unwrap_err(), &fixture("bool.npy"), &["b1", "not supported"]);
    let missing = dir.join("missing.npy");
    assert!(matches!(read_npy(&missing), Err(Error::Io { .. })));
    let unknown = dir.join("image.xyz");
    std::fs::write(&unknown, b"x").unwrap();
    format_error(XData::<f32>::load(app(), &unknown).unwrap_err(), &unknown, &[".xyz"]);
    let complex = fixture("c64.npy");
    let e = XData::<f32>::load(app(), &complex).unwrap_err();
    assert!(
        matches!(e, Error::Type { .. }) && e.to_string().contains("c64.npy") && e.to_string().contains("complex"),
        "{e}"
    );
    let raw = dir.join("short.raw");
    std::fs::write(&raw, [0u8; 10]).unwrap();
    let format = RawFormat { shape: vec![3], dtype: Dtype::F32, endian: Endian::Little };
    format_error(read_raw(&raw, &format).unwrap_err(), &raw, &["10 bytes", "12"]);
    let big = RawFormat { shape: vec![usize::MAX, 4], dtype: Dtype::F64, endian: Endian::Little };
    format_error(read_raw(&raw, &big).unwrap_err(), &raw, &["overflows"]);
}

#[test]
fn a_failed_save_leaves_nothing_and_keeps_the_old_file() {
    let dir = scratch("atomic");
    let x = XData::from_slice(app(), &[2], &[1.0f32, 2.0]).unwrap();
    let nowhere = dir.join("no-such-dir").join("x.npy");
    assert!(matches!(x.save(&nowhere), Err(Error::Io { .. })));
    assert!(!nowhere.exists());
    // A save that cannot finish (the directory turned read-only) must not touch the existing file.
    let path = dir.join("kept.npy");
    x.save(&path).unwrap();
    let before = std::fs::read(&path).unwrap();
    let original = std::fs::metadata(&dir).unwrap().permissions();
    let mut readonly = original.clone();
    readonly.set_readonly(true);
    std::fs::set_permissions(&dir, readonly).unwrap();
    let y = XData::from_slice(app(), &[3], &[7.0f32, 8.0, 9.0]).unwrap();
    let result = y.save(&path);
    std::fs::set_permissions(&dir, original).unwrap();
    // Root may write anyway; either way the file is whole: the old bytes or the new array.
    match result {
        Err(_) => assert_eq!(std::fs::read(&path).unwrap(), before),
        Ok(()) => assert_eq!(XData::<f32>::load(app(), &path).unwrap().to_vec().unwrap(), vec![7.0, 8.0, 9.0]),
    }
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into())
        .collect();
    assert_eq!(names, vec!["kept.npy".to_string()], "only the saved file remains");
}

#[test]
fn lossy_conversions_are_refused() {
    let big = HostArray::U32(ArrayD::from_shape_vec(IxDyn(&[2]), vec![1, (1 << 24) + 1]).unwrap());
    let e = big.to_elements::<f32>("f.npy").unwrap_err().to_string();
    assert!(e.contains("16777217") && e.contains("f32") && e.contains("u32"), "{e}");
    assert_eq!(big.to_elements::<f64>("f.npy").unwrap().into_raw_vec_and_offset().0, vec![1.0, 16_777_217.0]);
    let wide = HostArray::F64(ArrayD::from_shape_vec(IxDyn(&[2]), vec![0.5, 0.1]).unwrap());
    assert!(wide.to_elements::<f32>("f.npy").unwrap_err().to_string().contains("0.1"));
    let huge = HostArray::U64(ArrayD::from_shape_vec(IxDyn(&[1]), vec![(1 << 53) + 1]).unwrap());
    assert!(huge.to_elements::<f64>("f.npy").is_err());
    let nan = HostArray::F64(ArrayD::from_shape_vec(IxDyn(&[1]), vec![f64::NAN]).unwrap());
    assert!(nan.to_elements::<f32>("f.npy").unwrap()[0].is_nan());
}

#[test]
fn bart_cfl_fixture_and_round_trip() {
    // Written in BART's layout by tests/fixtures/make_cfl.py: 16 extents, column-major complex64.
    let x = XData::<Complex32>::load(app(), fixture("bart_3x4x2.cfl")).unwrap();
    assert_eq!(x.shape(), &[3, 4, 2], "trailing extents of 1 are dropped, as BART's readcfl does");
    let host = x.to_ndarray().unwrap();
    for ((i, j, k), v) in host.indexed_iter().map(|(ix, v)| ((ix[0], ix[1], ix[2]), v)) {
        let want = Complex32::new((i + 10 * j + 100 * k) as f32, k as f32 - i as f32);
        assert_eq!(*v, want, "x[{i}, {j}, {k}]");
    }
    let dir = scratch("cfl");
    let base = dir.join("copy");
    x.save(base.with_extension("cfl")).unwrap();
    assert_eq!(std::fs::read(base.with_extension("cfl")).unwrap(), std::fs::read(fixture("bart_3x4x2.cfl")).unwrap());
    let again = XData::<Complex64>::load(app(), base.with_extension("hdr")).unwrap();
    assert_eq!(again.shape(), &[3, 4, 2]);
    let mut rng = Rng::new(72);
    let (y, yh) = random::<Complex32>(&mut rng, &[5, 1, 7]);
    y.save(dir.join("y.cfl")).unwrap();
    assert_same(&fetch(&XData::<Complex32>::load(app(), dir.join("y.hdr")).unwrap()), &yh, "cfl round trip");
    let e = XData::<f32>::load(app(), fixture("bart_3x4x2.cfl")).unwrap_err().to_string();
    assert!(e.contains("complex"), "{e}");
    std::fs::write(dir.join("bad.hdr"), "# Dimensions\n3 x 2\n").unwrap();
    std::fs::write(dir.join("bad.cfl"), [0u8; 48]).unwrap();
    format_error(read_cfl_err(&dir.join("bad.cfl")), &dir.join("bad.hdr"), &["whole numbers"]);
    std::fs::write(dir.join("bad.hdr"), "# Dimensions\n3 3\n").unwrap();
    format_error(read_cfl_err(&dir.join("bad.cfl")), &dir.join("bad.cfl"), &["48 bytes", "72"]);
    std::fs::remove_file(dir.join("bad.hdr")).unwrap();
    assert!(matches!(cliper::read_cfl(dir.join("bad.cfl")), Err(Error::Io { .. })));
}

fn read_cfl_err(path: &Path) -> Error {
    cliper::read_cfl(path).unwrap_err()
}

/// The zlib level field (FLEVEL, RFC 1950) of a PNG's first IDAT chunk: 0 fastest, 1 fast, 2 default, 3 best.
fn idat_zlib_level(png: &[u8]) -> u8 {
    let mut at = 8; // the signature
    while let Some(header) = png.get(at..at + 8) {
        let length = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
        if &header[4..] == b"IDAT" {
            return png[at + 9] >> 6; // the FLG byte after CMF
        }
        at += 12 + length;
    }
    panic!("no IDAT chunk")
}

/// PNGs are written at zlib's level 3 on the zlib-rs engine (10× faster than the crate's default level on
/// miniz_oxide, files the same size: src/io/png.rs): a 1024 × 512 16-bit CT-like image and an RGB one come back
/// exactly, smaller than a quarter of their samples. Leaves NAME.png and NAME.png.npy for
/// `python3 tests/fixtures/check_png.py DIR` (Pillow reads the same values).
#[test]
fn png_is_written_at_a_fast_zlib_level_and_reads_back_exactly() {
    let dir = scratch("png-level");
    let ct = HostArray::U16(ArrayD::from_shape_fn(IxDyn(&[512, 1024]), |i| {
        let (y, x) = (i[0] as f64 - 256.0, i[1] as f64 - 512.0);
        let body = if (x / 480.0).powi(2) + (y / 230.0).powi(2) < 1.0 { 1000.0 + 0.3 * x } else { 0.0 };
        let noise = ((i[0] * 1024 + i[1]) as u32).wrapping_mul(2_654_435_761) >> 28;
        (body + f64::from(noise)) as u16
    }));
    let rgb = HostArray::U8(ArrayD::from_shape_fn(IxDyn(&[3, 200, 300]), |i| (i[0] * 80 + i[1] / 2 + i[2] / 3) as u8));
    for (name, image) in [("ct16.png", &ct), ("rgb8.png", &rgb)] {
        let path = dir.join(name);
        write_png(&path, image).unwrap();
        assert_eq!(&read_png(&path).unwrap(), image, "{name}");
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(idat_zlib_level(&bytes), 1, "{name}: zlib's level 2–5 (\"fast\") in its IDAT header");
        let samples = image.shape().iter().product::<usize>() * image.dtype().size();
        assert!(bytes.len() * 4 < samples, "{name}: {} bytes for {samples} bytes of samples", bytes.len());
        write_npy(dir.join(format!("{name}.npy")), image).unwrap();
    }
    eprintln!("left 2 PNG files for check_png.py in {}", dir.display());
}

#[test]
fn png_fixtures_written_by_pillow() {
    let grey8 = read_png(fixture("grey8_3x5.png")).unwrap();
    let grey16 = read_png(fixture("grey16_3x5.png")).unwrap();
    let rgb = read_png(fixture("rgb_3x5.png")).unwrap();
    let rgba = read_png(fixture("rgba_3x5.png")).unwrap();
    let palette = read_png(fixture("palette_3x5.png")).unwrap();
    let bilevel = read_png(fixture("bilevel_3x5.png")).unwrap();
    for r in 0..3 {
        for c in 0..5 {
            let (
                HostArray::U8(g8),
                HostArray::U16(g16),
                HostArray::U8(c3),
                HostArray::U8(c4),
                HostArray::U8(p),
                HostArray::U8(b),
            ) = (&grey8, &grey16, &rgb, &rgba, &palette, &bilevel)
            else {
                panic!(
                    "types: {:?}",
                    [grey8.dtype(), grey16.dtype(), rgb.dtype(), rgba.dtype(), palette.dtype(), bilevel.dtype()]
                );
            };
            assert_eq!(g8[[r, c]] as usize, r * 40 + c * 7);
            assert_eq!(g16[[r, c]] as usize, r * 4000 + c * 700 + 3);
            let want = [r * 50, c * 30, r + c];
            // Colour is channel first: [C, H, W].
            for k in 0..3 {
                assert_eq!(c3[[k, r, c]] as usize, want[k]);
                assert_eq!(c4[[k, r, c]] as usize, want[k]);
                assert_eq!(p[[k, r, c]] as usize, want[k], "palette expanded to RGB");
            }
            assert_eq!(c4[[3, r, c]] as usize, c * 60);
            assert_eq!(b[[r, c]], if (r + c) % 2 == 1 { 255 } else { 0 }, "1-bit grey expanded to 0/255");
        }
    }
    assert_eq!(
        (grey8.shape(), rgb.shape(), rgba.shape()),
        (&[3usize, 5][..], &[3usize, 3, 5][..], &[4usize, 3, 5][..])
    );
    let x = XData::<f32>::load(app(), fixture("grey16_3x5.png")).unwrap();
    assert_eq!(x.to_vec().unwrap()[14], 10803.0);
}

#[test]
fn png_saving_is_explicit_and_round_trips() {
    let dir = scratch("png");
    let mut rng = Rng::new(73);
    // Grey [H, W], and colour [C, H, W]: grey + alpha, RGB, RGBA, one channel.
    for shape in [vec![7, 129], vec![2, 9, 4], vec![3, 5, 3], vec![4, 1, 2]] {
        let n: usize = shape.iter().product();
        let values: Vec<u16> = (0..n).map(|_| (rng.next_u64() % 65536) as u16).collect();
        let a = HostArray::U16(ArrayD::from_shape_vec(IxDyn(&shape), values).unwrap());
        let path = dir.join("a.png");
        write_png(&path, &a).unwrap();
        assert_eq!(read_png(&path).unwrap(), a, "u16 {shape:?}");
        let b = HostArray::U8(
            ArrayD::from_shape_vec(IxDyn(&shape), (0..n).map(|i| (i * 37 % 256) as u8).collect()).unwrap(),
        );
        write_png(&path, &b).unwrap();
        assert_eq!(read_png(&path).unwrap(), b, "u8 {shape:?}");
    }
    let x = XData::from_slice(app(), &[2, 3], &[0.0f32, 1.0, 2.4, 2.6, 65535.0, 70000.0]).unwrap();
    let path = dir.join("x.png");
    // Raw values are exact: fractions are refused (never rounded silently), then values out of range.
    let e = x.save(&path).unwrap_err().to_string();
    assert!(e.contains("2.4") && e.contains("2 value(s) are not whole") && e.contains("x.png"), "{e}");
    let whole = XData::from_slice(app(), &[1, 3], &[0.0f32, 1.0, 70000.0]).unwrap();
    let e = whole.save(&path).unwrap_err().to_string();
    assert!(e.contains("70000") && e.contains("1 value(s)") && e.contains("x.png"), "{e}");
    assert!(!path.exists(), "a refused save writes nothing");
    x.save_png(&path, PngOptions { scale: Scale::Round, clip: true, ..PngOptions::default() }).unwrap();
    assert_eq!(XData::<f32>::load(app(), &path).unwrap().to_vec().unwrap(), vec![0.0, 1.0, 2.0, 3.0, 65535.0, 65535.0]);
    let complex = XData::<Complex32>::zeros(app(), &[2, 2]).unwrap();
    assert!(complex.save(&path).unwrap_err().to_string().contains("real"));
    let nan = XData::from_slice(app(), &[1, 2], &[1.0f32, f32::NAN]).unwrap();
    let stretch = PngOptions { depth: PngDepth::Eight, scale: Scale::MinMax, ..PngOptions::default() };
    assert!(nan.save_png(&path, stretch).unwrap_err().to_string().contains("NaN"));
    // A stack is not a colour image unless the options say so.
    let cube = XData::<f32>::zeros(app(), &[2, 2, 5]).unwrap();
    assert!(cube.save(dir.join("cube.png")).unwrap_err().to_string().contains("[2, 2, 5]"));
    cube.save_png(dir.join("cube.png"), PngOptions { colour: true, ..PngOptions::default() }).unwrap();
    let five = XData::<f32>::zeros(app(), &[5, 2, 2]).unwrap();
    let e = five.save_png(dir.join("five.png"), PngOptions { colour: true, ..PngOptions::default() }).unwrap_err();
    assert!(e.to_string().contains("[5, 2, 2]"), "{e}");
    let bad = dir.join("bad.png");
    let mut bytes = std::fs::read(fixture("rgb_3x5.png")).unwrap();
    bytes.truncate(bytes.len() - 20);
    std::fs::write(&bad, &bytes).unwrap();
    format_error(read_png(&bad).unwrap_err(), &bad, &["PNG"]);
}

#[test]
fn tiff_fixtures_written_by_tifffile_and_pillow() {
    let value = |p: usize, r: usize, c: usize| (p * 1000 + r * 10 + c) as f64;
    let u16s = read_tiff(fixture("u16_3pages_deflate.tif")).unwrap();
    assert_eq!((u16s.dtype(), u16s.shape()), (Dtype::U16, &[3usize, 4, 5][..]));
    let f32s = XData::<f32>::load(app(), fixture("f32_3pages.tif")).unwrap().to_ndarray().unwrap();
    let as_f64 = XData::<f64>::load(app(), fixture("u16_3pages_deflate.tif")).unwrap().to_ndarray().unwrap();
    let i16s = XData::<f32>::load(app(), fixture("i16_1page.tif")).unwrap().to_ndarray().unwrap();
    let f64s = XData::<f64>::load(app(), fixture("f64_1page.tif")).unwrap().to_ndarray().unwrap();
    let u32s = XData::<f64>::load(app(), fixture("u32_1page.tif")).unwrap().to_ndarray().unwrap();
    let lzw = XData::<f32>::load(app(), fixture("u8_lzw.tif")).unwrap().to_ndarray().unwrap();
    for p in 0..3 {
        for r in 0..4 {
            for c in 0..5 {
                assert_eq!(as_f64[[p, r, c]], value(p, r, c), "u16 deflate page {p}");
                assert_eq!(f32s[[p, r, c]] as f64, value(p, r, c) / 4.0, "f32 page {p}");
            }
        }
    }
    for r in 0..4 {
        for c in 0..5 {
            assert_eq!(i16s[[r, c]] as f64, -value(0, r, c));
            assert_eq!(f64s[[r, c]], value(1, r, c) / 8.0);
            assert_eq!(u32s[[r, c]], value(2, r, c) * 100000.0);
            assert_eq!(lzw[[r, c]] as f64, value(2, r, c) % 256.0, "LZW");
        }
    }
}

/// The colour convention: channels before the image plane, `[C, H, W]` and `[pages, C, H, W]`, whether the file
/// stores the samples of a pixel together (chunky) or each channel as a plane of its own (planar).
#[test]
fn tiff_colour_reads_channels_first_from_planar_and_chunky_files() {
    let planar = read_tiff(fixture("rgb16_planar.tif")).unwrap();
    let HostArray::U16(rgb) = &planar else { panic!("rgb16_planar.tif is {:?}", planar.dtype()) };
    assert_eq!(rgb.shape(), &[3, 4, 5]);
    for ((k, r, c), &v) in rgb.indexed_iter().map(|(ix, v)| ((ix[0], ix[1], ix[2]), v)) {
        assert_eq!(v as usize, k * 1000 + r * 10 + c, "planar [{k}, {r}, {c}]");
    }
    assert_eq!(read_tiff(fixture("rgb16_chunky.tif")).unwrap(), planar, "chunky and planar give the same array");
    let rgb8 = read_tiff(fixture("rgb8.tif")).unwrap();
    let HostArray::U8(rgb8) = rgb8 else { panic!("rgb8.tif is {:?}", rgb8.dtype()) };
    assert_eq!(rgb8.shape(), &[3, 4, 5]);
    assert_eq!((rgb8[[0, 3, 4]], rgb8[[1, 3, 4]], rgb8[[2, 3, 4]]), (150, 120, 7));
    let value = |p: usize, k: usize, r: usize, c: usize| (p * 80 + k * 20 + r * 4 + c) as u8;
    let pages = read_tiff(fixture("rgb8_3pages.tif")).unwrap();
    let HostArray::U8(pages) = pages else { panic!("rgb8_3pages.tif is {:?}", pages.dtype()) };
    assert_eq!(pages.shape(), &[3, 3, 4, 5]);
    for ((p, k, r, c), &v) in pages.indexed_iter().map(|(ix, v)| ((ix[0], ix[1], ix[2], ix[3]), v)) {
        assert_eq!(v, value(p, k, r, c), "page {p} channel {k}");
    }
    for (file, channels) in [("rgba8.tif", 4), ("grey_alpha8.tif", 2)] {
        let a = read_tiff(fixture(file)).unwrap();
        let HostArray::U8(a) = a else { panic!("{file} is {:?}", a.dtype()) };
        assert_eq!(a.shape(), &[channels, 4, 5], "{file}");
        for ((k, r, c), &v) in a.indexed_iter().map(|(ix, v)| ((ix[0], ix[1], ix[2]), v)) {
            assert_eq!(v, value(0, k, r, c), "{file} [{k}, {r}, {c}]");
        }
    }
    // Trailing-axes operations act per channel: an RGB image loads as three planes.
    let x = XData::<f32>::load(app(), fixture("rgb16_planar.tif")).unwrap();
    assert_eq!((x.shape(), x.to_vec().unwrap()[20]), (&[3usize, 4, 5][..], 1000.0));
}

/// Complex samples (SampleFormat 6) as tifffile writes complex64 and complex128, in either byte order, with or
/// without compression.
#[test]
fn tiff_complex_fixtures_written_by_tifffile() {
    let value = |p: usize, r: usize, c: usize| (p * 1000 + r * 10 + c) as f64;
    for (file, pages) in [("c64_2pages.tif", 2), ("c64_big_endian_deflate.tif", 3)] {
        let a = read_tiff(fixture(file)).unwrap();
        let HostArray::C32(a) = a else { panic!("{file} is {:?}", a.dtype()) };
        assert_eq!(a.shape(), &[pages, 4, 5], "{file}");
        for ((p, r, c), &z) in a.indexed_iter().map(|(ix, v)| ((ix[0], ix[1], ix[2]), v)) {
            let v = value(p, r, c) as f32;
            assert_eq!(z, Complex32::new(v, -v / 2.0), "{file} [{p}, {r}, {c}]");
        }
    }
    let a = read_tiff(fixture("c128_1page.tif")).unwrap();
    let HostArray::C64(a) = a else { panic!("c128_1page.tif is {:?}", a.dtype()) };
    assert_eq!(a.shape(), &[4, 5]);
    for ((r, c), &z) in a.indexed_iter().map(|(ix, v)| ((ix[0], ix[1]), v)) {
        assert_eq!(z, Complex64::new(value(1, r, c) / 8.0, -3.0 * value(1, r, c)), "c128 [{r}, {c}]");
    }
    let x = XData::<Complex64>::load(app(), fixture("c64_2pages.tif")).unwrap();
    assert_eq!(x.to_vec().unwrap()[26], Complex64::new(1011.0, -505.5));
    let e = XData::<f32>::load(app(), fixture("c128_1page.tif")).unwrap_err().to_string();
    assert!(e.contains("complex") && e.contains("c128_1page.tif"), "{e}");
}

/// An array of `dtype` that spans the type's whole range (integers), [0, 1] (floats) or has distinct real and
/// imaginary parts (complex), no two neighbours alike.
fn ramp(dtype: Dtype, shape: &[usize]) -> HostArray {
    let n: usize = shape.iter().product();
    let values = ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(|i| ((i * 7919) % 1009) as f64).collect()).unwrap();
    match dtype {
        Dtype::C32 | Dtype::C64 => {
            HostArray::C64(values.mapv(|v| Complex64::new(v - 500.0, v / 4.0))).cast(dtype, Scale::Raw, false).unwrap()
        }
        _ => HostArray::F64(values).cast(dtype, Scale::MinMax, false).unwrap(),
    }
}

/// Every element type as grey pages and (real types) as grey + alpha, RGB and RGBA, one page and several, with
/// each compression: what is written reads back bit-exact in its type and shape. Each file is left beside an
/// `.npy` of the same array, so `python3 tests/fixtures/check_tiff.py DIR` can check that tifffile reads the
/// same values and dtype.
#[test]
fn tiff_round_trips_every_type_grey_and_colour() {
    let dir = scratch("tiff-types");
    let compressions = [TiffCompression::None, TiffCompression::Lzw, TiffCompression::Deflate];
    let trip = |name: String, a: &HostArray, options: TiffOptions, reads_as: &[usize]| {
        let path = dir.join(format!("{name}.tif"));
        write_tiff_with(&path, a, options).unwrap_or_else(|e| panic!("{name}: {e}"));
        let back = read_tiff(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((back.dtype(), back.shape()), (a.dtype(), reads_as), "{name}");
        assert_eq!(bits(&back), bits(a), "{name}");
        write_npy(dir.join(format!("{name}.npy")), a).unwrap();
    };
    for a in samples() {
        for compression in compressions {
            let options = TiffOptions { compression, colour: false };
            trip(format!("{}_edges_{compression:?}", a.dtype().name()), &a, options, a.shape());
        }
    }
    for dtype in Dtype::ALL {
        let name = dtype.name();
        let grey = |compression| TiffOptions { compression, colour: false };
        trip(format!("{name}_pages"), &ramp(dtype, &[3, 5, 9]), grey(TiffCompression::Deflate), &[3, 5, 9]);
        trip(format!("{name}_one_page"), &ramp(dtype, &[1, 7, 4]), grey(TiffCompression::None), &[7, 4]);
        if matches!(dtype, Dtype::C32 | Dtype::C64) {
            continue;
        }
        let shapes: [&[usize]; 6] = [&[2, 5, 9], &[3, 5, 9], &[4, 5, 9], &[2, 3, 5, 9], &[3, 4, 2, 7], &[2, 2, 1, 1]];
        for (i, shape) in shapes.into_iter().enumerate() {
            let colour = TiffOptions { compression: compressions[i % 3], colour: true };
            let label = shape.iter().map(|n| n.to_string()).collect::<Vec<_>>().join("x");
            trip(format!("{name}_colour_{label}"), &ramp(dtype, shape), colour, shape);
        }
        let colour = TiffOptions { colour: true, ..TiffOptions::default() };
        trip(format!("{name}_colour_one_page"), &ramp(dtype, &[1, 3, 4, 6]), colour, &[3, 4, 6]);
    }
}

#[test]
fn xdata_saves_tiff_grey_colour_and_complex() {
    let dir = scratch("tiff-xdata");
    let path = dir.join("t.tiff");
    let mut rng = Rng::new(74);
    let (x, host) = random::<f32>(&mut rng, &[4, 33, 17]);
    x.save(&path).unwrap();
    assert_same(&fetch(&XData::<f32>::load(app(), &path).unwrap()), &host, "XData f32 stack");
    let (z, zh) = random::<Complex32>(&mut rng, &[2, 6, 5]);
    z.save(&path).unwrap();
    assert_eq!(read_tiff(&path).unwrap().dtype(), Dtype::C32, "complex64 pages");
    assert_same(&fetch(&XData::<Complex32>::load(app(), &path).unwrap()), &zh, "XData c32 pages");
    let (w, wh) = random::<Complex64>(&mut rng, &[9, 7]);
    w.save_tiff(&path, TiffOptions { compression: TiffCompression::Lzw, ..TiffOptions::default() }).unwrap();
    assert_same(&fetch(&XData::<Complex64>::load(app(), &path).unwrap()), &wh, "XData c64 LZW");
    // Colour: [pages, C, H, W]; a view saves as it looks.
    let (rgb, rh) = random::<f64>(&mut rng, &[2, 3, 6, 5]);
    let colour = TiffOptions { compression: TiffCompression::Deflate, colour: true };
    rgb.save_tiff(&path, colour).unwrap();
    assert_same(&fetch(&XData::<f64>::load(app(), &path).unwrap()), &rh, "XData RGB pages");
    rgb.t().save_tiff(&path, colour).unwrap();
    let want = rh.clone().permuted_axes(IxDyn(&[0, 1, 3, 2])).as_standard_layout().to_owned();
    assert_same(&fetch(&XData::<f64>::load(app(), &path).unwrap()), &want, "transposed RGB view");
    let e = z.save_tiff(&path, colour).unwrap_err().to_string();
    assert!(e.contains("complex") && e.contains("[2, 6, 5]") && e.contains("c32"), "{e}");
}

/// Refusals are one line naming the file, the shape and the element type.
fn one_line(e: Error, path: &Path, words: &[&str]) {
    assert!(!e.to_string().contains('\n'), "one line: {e}");
    format_error(e, path, words);
}

#[test]
fn tiff_refusals_name_the_path_the_shape_and_the_type() {
    let dir = scratch("tiff-errors");
    let path = dir.join("x.tif");
    let colour = TiffOptions { colour: true, ..TiffOptions::default() };
    let u8s = |shape: &[usize]| HostArray::U8(ArrayD::zeros(IxDyn(shape)));
    one_line(write_tiff_with(&path, &u8s(&[5, 4, 3]), colour).unwrap_err(), &path, &["[5, 4, 3]", "u8", "C = 2"]);
    one_line(write_tiff_with(&path, &u8s(&[4, 3]), colour).unwrap_err(), &path, &["[4, 3]", "u8", "[C, H, W]"]);
    one_line(write_tiff_with(&path, &u8s(&[1, 2, 3, 4, 5]), colour).unwrap_err(), &path, &["[1, 2, 3, 4, 5]"]);
    let stack = HostArray::I16(ArrayD::zeros(IxDyn(&[2, 3, 4, 5])));
    one_line(write_tiff(&path, &stack).unwrap_err(), &path, &["[2, 3, 4, 5]", "i16", "colour: true"]);
    let complex = HostArray::C32(ArrayD::zeros(IxDyn(&[3, 4, 5])));
    one_line(write_tiff_with(&path, &complex, colour).unwrap_err(), &path, &["[3, 4, 5]", "c32", "complex"]);
    one_line(write_tiff(&path, &u8s(&[0, 4, 5])).unwrap_err(), &path, &["[0, 4, 5]", "u8"]);
    assert!(!path.exists(), "a refused save writes nothing");
    let f16 = fixture("f16_1page.tif");
    one_line(read_tiff(&f16).unwrap_err(), &f16, &["page 0", "[4, 5] grey 16-bit float"]);
    let mixed = fixture("mixed_pages.tif");
    one_line(read_tiff(&mixed).unwrap_err(), &mixed, &["page 1 is [4, 5] grey u16 but page 0 is [4, 5] grey u8"]);
    let bad = dir.join("bad.tif");
    let mut bytes = std::fs::read(fixture("f32_3pages.tif")).unwrap();
    bytes.truncate(100);
    std::fs::write(&bad, &bytes).unwrap();
    one_line(read_tiff(&bad).unwrap_err(), &bad, &["TIFF"]);
}

#[test]
fn mat_files_written_by_scipy_keep_matlab_shape_and_indexing() {
    for file in ["example.mat", "example_compressed.mat"] {
        let path = fixture(file);
        let vars = cliper::read_mat(&path).unwrap();
        let names: Vec<&str> = vars.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["A", "Z", "I", "V", "U8"], "{file}");
        let get = |name: &str| cliper::read_mat_variable(&path, name).unwrap();
        let HostArray::F64(a) = get("A") else { panic!("A") };
        assert_eq!(a, ndarray::arr2(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).into_dyn(), "column-major A");
        let HostArray::C32(z) = get("Z") else { panic!("Z") };
        assert_eq!(z[[0, 1]], Complex32::new(3.0, -4.0));
        assert_eq!(z[[1, 1]], Complex32::new(0.0, -6.0));
        let HostArray::I16(i) = get("I") else { panic!("I") };
        assert_eq!((i.shape(), i.iter().copied().collect::<Vec<_>>()), (&[3usize, 1][..], vec![-1, 0, 300]));
        let HostArray::F64(v) = get("V") else { panic!("V") };
        assert_eq!(v.shape(), &[2, 3, 2]);
        for ((x, y, w), value) in v.indexed_iter().map(|(ix, val)| ((ix[0], ix[1], ix[2]), *val)) {
            assert_eq!(value, (100 * (x + 1) + 10 * (y + 1) + w + 1) as f64, "V({}, {}, {})", x + 1, y + 1, w + 1);
        }
        let HostArray::U8(u) = get("U8") else { panic!("U8") };
        assert_eq!((u.shape(), u.iter().copied().collect::<Vec<_>>()), (&[1usize, 3][..], vec![0, 128, 255]));
        let e = cliper::read_mat_variable(&path, "missing").unwrap_err().to_string();
        assert!(e.contains("missing") && e.contains("\"V\"") && e.contains(file), "{e}");
    }
    let HostArray::I32(n) = cliper::read_mat_variable(fixture("int32.mat"), "N").unwrap() else { panic!("N") };
    assert_eq!(n, ndarray::arr2(&[[1, -2, 3], [4, 5, 70000]]).into_dyn());
    let dir = scratch("mat");
    let mut bytes = std::fs::read(fixture("example_compressed.mat")).unwrap();
    bytes.truncate(300);
    let bad = dir.join("bad.mat");
    std::fs::write(&bad, &bytes).unwrap();
    format_error(cliper::read_mat(&bad).unwrap_err(), &bad, &["truncated"]);
    std::fs::write(&bad, b"MATLAB 5.0 MAT-file, but only a header").unwrap();
    format_error(cliper::read_mat(&bad).unwrap_err(), &bad, &["MAT"]);
    // MATLAB -v7.3: the level-5 header with version 0x0200, then HDF5.
    let mut v73 =
        format!("{:<116}", "MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Sun Nov 22 2026 HDF5 schema 1.00 .")
            .into_bytes();
    v73.extend_from_slice(&[0; 8]);
    v73.extend_from_slice(&[0x00, 0x02, b'I', b'M']);
    v73.extend_from_slice(b"\x89HDF\r\n\x1a\n");
    std::fs::write(&bad, &v73).unwrap();
    format_error(cliper::read_mat(&bad).unwrap_err(), &bad, &["v7.3", "-v7"]);
}

#[test]
fn mat_writing_round_trips_every_type_plain_and_compressed() {
    let dir = scratch("mat-write");
    let arrays = samples();
    let names: Vec<String> = arrays.iter().map(|a| format!("v_{}", a.dtype().name())).collect();
    let variables: Vec<(&str, &HostArray)> = names.iter().map(String::as_str).zip(arrays.iter()).collect();
    for compress in [false, true] {
        let path = dir.join(if compress { "all_compressed.mat" } else { "all.mat" });
        write_mat(&path, &variables, compress).unwrap();
        let back = cliper::read_mat(&path).unwrap();
        assert_eq!(back.len(), arrays.len());
        for ((name, got), (want_name, want)) in back.iter().zip(&variables) {
            assert_eq!(name, want_name);
            assert_eq!((got.dtype(), got.shape()), (want.dtype(), want.shape()), "{name}");
            assert_eq!(bits(got), bits(want), "{name} compress={compress}");
        }
    }
    let mut rng = Rng::new(75);
    let (x, host) = random::<Complex64>(&mut rng, &[3, 4, 5]);
    let path = dir.join("x.mat");
    x.save(&path).unwrap();
    assert_same(&fetch(&XData::<Complex64>::load(app(), &path).unwrap()), &host, "XData c64 through MAT");
    let e = write_mat(&path, &[("1bad", &arrays[0])], false).unwrap_err().to_string();
    assert!(e.contains("1bad"), "{e}");
}

#[test]
fn cast_converts_explicitly_with_range_checks() {
    use cliper::{Dtype, Scale};
    let x = HostArray::F64(ndarray::arr1(&[-1.5, 0.0, 0.49, 2.5, 70000.0]).into_dyn());
    // Raw: exact, so fractions are refused even when clipping; Round: to nearest (half away from zero), range
    // errors unless clipped.
    let msg = x.cast(Dtype::U16, Scale::Raw, true).unwrap_err().to_string();
    assert!(msg.contains("3 value(s) are not whole") && msg.contains("-1.5") && msg.contains("element 0"), "{msg}");
    let clipped = x.cast(Dtype::U16, Scale::Round, true).unwrap();
    assert_eq!(clipped, HostArray::U16(ndarray::arr1(&[0u16, 0, 0, 3, 65535]).into_dyn()));
    let msg = x.cast(Dtype::U16, Scale::Round, false).unwrap_err().to_string();
    assert!(msg.contains("2 value(s)") && msg.contains("-1.5") && msg.contains("element 0"), "{msg}");
    assert_eq!(
        x.cast(Dtype::I16, Scale::Round, true).unwrap(),
        HostArray::I16(ndarray::arr1(&[-2i16, 0, 0, 3, 32767]).into_dyn())
    );
    // MinMax onto each integer type's full range, and onto [0, 1] for floats.
    let HostArray::I8(s) = x.cast(Dtype::I8, Scale::MinMax, false).unwrap() else { panic!("i8") };
    assert_eq!((s[0], s[4]), (-128, 127));
    let HostArray::F32(f) = x.cast(Dtype::F32, Scale::MinMax, false).unwrap() else { panic!("f32") };
    assert_eq!((f[0], f[4]), (0.0, 1.0));
    let HostArray::U8(c) =
        HostArray::F32(ndarray::arr1(&[3.0f32; 4]).into_dyn()).cast(Dtype::U8, Scale::MinMax, false).unwrap()
    else {
        panic!("u8")
    };
    assert!(c.iter().all(|&v| v == 0), "a constant array maps to the lowest value");
    // Real → complex gets zero imaginary parts; complex → real and NaN → integer are refused by name.
    let HostArray::C32(z) = x.cast(Dtype::C32, Scale::Raw, false).unwrap() else { panic!("c32") };
    assert_eq!(z[3], Complex32::new(2.5, 0.0));
    let complex = HostArray::C64(ndarray::arr1(&[Complex64::new(1.0, 2.0)]).into_dyn());
    assert!(complex.cast(Dtype::F64, Scale::Raw, false).unwrap_err().to_string().contains("complex"));
    let nan = HostArray::F32(ndarray::arr1(&[1.0f32, f32::NAN]).into_dyn());
    assert!(nan.cast(Dtype::U8, Scale::Raw, true).unwrap_err().to_string().contains("element 1 is NaN"));
    assert!(nan.cast(Dtype::F64, Scale::Raw, false).is_ok(), "NaN stays NaN in a float type");
}

/// Files whose compressed data has one bit flipped (tests/fixtures/make_integrity.py, from files Pillow, scipy
/// and tifffile wrote): the deflate data still inflates to the right size, only a checksum tells. Each is refused
/// in one line that names the file and the check that failed. The PNG with its chunk CRC rewritten to match used
/// to load with wrong pixels (the `png` crate skips the zlib Adler-32 unless asked).
#[test]
fn a_bit_flipped_in_compressed_data_is_refused_by_its_checksum() {
    let integrity = fixture("integrity");
    type Reader = fn(&Path) -> cliper::Result<()>;
    let cases: [(&str, Reader, &[&str]); 5] = [
        ("grey16_adler.png", |p| read_png(p).map(drop), &["zlib Adler-32 mismatch", "IDAT"]),
        ("grey16_idat_crc.png", |p| read_png(p).map(drop), &["CRC", "IDAT"]),
        // An ancillary chunk: the crate skips a bad one by default; Pillow refuses the file, and so does cliper.
        ("grey16_text_crc.png", |p| read_png(p).map(drop), &["CRC", "tEXt"]),
        ("compressed_bitflip.mat", |p| cliper::read_mat(p).map(drop), &["zlib Adler-32 mismatch"]),
        ("u16_deflate_bitflip.tif", |p| read_tiff(p).map(drop), &["zlib Adler-32 mismatch", "strip 0"]),
    ];
    for (name, read, words) in cases {
        let path = integrity.join(name);
        let e = read(&path).expect_err(name);
        assert!(!e.to_string().contains('\n'), "one line: {e}");
        format_error(e, &path, words);
    }
    // The PNG they were made from loads exactly: r*4000 + c*700 + 3 on 6 rows and 9 columns.
    let HostArray::U16(grey) = read_png(integrity.join("grey16.png")).unwrap() else { panic!("not u16") };
    assert_eq!(grey, ArrayD::from_shape_fn(IxDyn(&[6, 9]), |i| (i[0] * 4000 + i[1] * 700 + 3) as u16));
}
