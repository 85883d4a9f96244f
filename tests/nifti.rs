//! NIfTI-1 and NIfTI-2: fixtures written by nibabel (tests/fixtures/make_nifti.py) load with nibabel's values
//! (after scl_slope/scl_inter), element type and affine; every type round-trips through write_nifti with its
//! geometry; bad files give typed errors naming the path and the problem.

use cliper::{Dtype, Geometry, HostArray, Image, SpaceUnit, decode_nifti, read_file, read_image, read_nifti, read_npy};
use cliper::{write_image, write_nifti, write_npy};
use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nifti")
}

/// A fresh empty directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cliper-nifti-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The values as complex128, exactly (every type the fixtures hold converts without loss).
fn complex(a: &HostArray) -> ArrayD<Complex64> {
    let real = |v: f64| Complex64::new(v, 0.0);
    match a {
        HostArray::U8(x) => x.mapv(|v| real(v.into())),
        HostArray::U16(x) => x.mapv(|v| real(v.into())),
        HostArray::U32(x) => x.mapv(|v| real(v.into())),
        HostArray::U64(x) => x.mapv(|v| real(v as f64)),
        HostArray::I8(x) => x.mapv(|v| real(v.into())),
        HostArray::I16(x) => x.mapv(|v| real(v.into())),
        HostArray::I32(x) => x.mapv(|v| real(v.into())),
        HostArray::I64(x) => x.mapv(|v| real(v as f64)),
        HostArray::F32(x) => x.mapv(|v| real(v.into())),
        HostArray::F64(x) => x.mapv(real),
        HostArray::C32(x) => x.mapv(|v| Complex64::new(v.re.into(), v.im.into())),
        HostArray::C64(x) => x.clone(),
    }
}

/// An image's array in nibabel's axis order: the axes reversed, a colour image's channel axis (−3) last.
fn as_nibabel(image: &Image) -> ArrayD<Complex64> {
    let values = complex(&image.array);
    let rank = values.ndim();
    let order: Vec<usize> = if image.colour {
        let mut order: Vec<usize> = (0..rank).rev().filter(|&a| a != rank - 3).collect();
        order.push(rank - 3);
        order
    } else {
        (0..rank).rev().collect()
    };
    values.permuted_axes(order)
}

struct Expected {
    name: String,
    npy: String,
    dtype: String,
    colour: bool,
    time_step: Option<f64>,
    shape: Vec<usize>,
    affine: [[f64; 4]; 4],
}

fn expected() -> Vec<Expected> {
    let text = std::fs::read_to_string(fixtures().join("expected.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let numbers: Vec<f64> = f[6].split(' ').map(|v| v.parse().unwrap()).collect();
            let mut affine = [[0.0; 4]; 4];
            for (k, v) in numbers.iter().enumerate() {
                affine[k / 4][k % 4] = *v;
            }
            Expected {
                name: f[0].into(),
                npy: f[1].into(),
                dtype: f[2].into(),
                colour: f[3] == "true",
                time_step: (f[4] != "-").then(|| f[4].parse().unwrap()),
                shape: f[5].split(',').map(|n| n.parse().unwrap()).collect(),
                affine,
            }
        })
        .collect()
}

fn assert_affine(got: [[f64; 4]; 4], want: [[f64; 4]; 4], what: &str) {
    for r in 0..4 {
        for c in 0..4 {
            let (g, w) = (got[r][c], want[r][c]);
            assert!((g - w).abs() <= 1e-6 * w.abs().max(1.0), "{what}: affine[{r}][{c}] is {g}, expected {w}\n{got:?}");
        }
    }
}

#[test]
fn nibabel_fixtures_load_with_nibabels_values_types_and_affines() {
    let cases = expected();
    assert_eq!(cases.len(), 30);
    for case in &cases {
        let path = fixtures().join(&case.name);
        let image = read_nifti(&path).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        // nibabel's get_fdata is float64; ours is float32 where that holds every value of a scaled file exactly
        // (the values compared below are then nibabel's to the bit).
        let dtype = image.array.dtype().name();
        let exact_in_f32 = image.scaling.is_some() && case.dtype == "f64" && dtype == "f32";
        assert!(dtype == case.dtype || exact_in_f32, "{}: {dtype}, nibabel {}", case.name, case.dtype);
        assert_eq!(image.colour, case.colour, "{}", case.name);
        let ours = as_nibabel(&image);
        let want = complex(&read_npy(fixtures().join(&case.npy)).unwrap());
        let spatial = if case.colour { &ours.shape()[..ours.ndim() - 1] } else { ours.shape() };
        assert_eq!(spatial, &case.shape[..], "{}: nibabel's shape", case.name);
        let want_shape: Vec<usize> =
            if case.colour { want.shape()[..want.ndim() - 1].to_vec() } else { want.shape().to_vec() };
        assert_eq!(want_shape, case.shape, "{}", case.npy);
        assert_eq!(ours.shape(), want.shape(), "{}", case.name);
        let differ = ours.iter().zip(want.iter()).filter(|(a, b)| a != b).count();
        assert_eq!(differ, 0, "{}: {differ} values differ from nibabel's", case.name);
        let geometry = image.geometry.unwrap_or_else(|| panic!("{}: no geometry", case.name));
        assert_affine(geometry.affine(), case.affine, &case.name);
        assert_eq!(geometry.time_step, case.time_step, "{}", case.name);
        // The same bytes in memory give the same image.
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(decode_nifti(&bytes).unwrap(), image, "{}", case.name);
    }
}

#[test]
fn array_order_units_and_geometry_of_particular_files() {
    // nibabel's (7, 5, 3, 4) is [4, 3, 5, 7]: x fastest, as the bytes lie.
    let image = read_nifti(fixtures().join("4d_sec.nii.gz")).unwrap();
    assert_eq!(image.array.shape(), &[4, 3, 5, 7]);
    let g = image.geometry.unwrap();
    assert_eq!(g.units, SpaceUnit::Millimetre);
    assert_eq!(g.time_step, Some(2.5));
    assert!((g.spacing[0] - 3.0).abs() < 1e-6 && (g.spacing[2] - 0.8).abs() < 1e-6, "{:?}", g.spacing);
    // Milliseconds become seconds; micrometres stay micrometres.
    assert!(
        (read_nifti(fixtures().join("4d_msec.nii")).unwrap().geometry.unwrap().time_step.unwrap() - 1.2).abs() < 1e-9
    );
    assert_eq!(
        read_nifti(fixtures().join("qform_only_oblique.nii")).unwrap().geometry.unwrap().units,
        SpaceUnit::Micrometre
    );
    // The 2-D file is [Y, X]; RGB24 of nibabel's (7, 5, 3) is [Z, C, Y, X] = [3, 3, 5, 7], colour.
    assert_eq!(read_nifti(fixtures().join("2d_f64.nii")).unwrap().array.shape(), &[5, 7]);
    let rgb = read_nifti(fixtures().join("rgb24.nii")).unwrap();
    assert_eq!((rgb.array.shape(), rgb.colour), (&[3, 3, 5, 7][..], true));
    assert_eq!(read_nifti(fixtures().join("rgba32.nii.gz")).unwrap().array.shape(), &[4, 5, 7]);
    // sform_code > 0 wins over a different qform; a whole-number rescale of u8 stays integer (i16).
    let both = read_nifti(fixtures().join("sform_not_qform.nii")).unwrap().geometry.unwrap();
    assert_ne!(both.affine(), read_nifti(fixtures().join("i16.nii")).unwrap().geometry.unwrap().affine());
    assert_eq!(read_nifti(fixtures().join("u8_whole_rescale.nii.gz")).unwrap().array.dtype(), Dtype::I16);
    // The dispatchers by extension.
    assert_eq!(read_file(fixtures().join("i16.nii")).unwrap().shape(), &[3, 5, 7]);
    assert!(read_image(fixtures().join("rgb24_2d.nii")).unwrap().colour);
}

/// One array of every type, values at the edges of each type's range, shape [3, 5, 7] (nibabel's (7, 5, 3)).
fn every_type(shape: &[usize]) -> Vec<HostArray> {
    let n: usize = shape.iter().product();
    let s = IxDyn(shape);
    let pick = |edges: &[f64], k: usize| edges[k % edges.len()];
    let ints =
        |lo: f64, hi: f64| -> Vec<f64> { (0..n).map(|k| pick(&[lo, hi, 0.0, 1.0, lo + 1.0, hi - 1.0], k)).collect() };
    let floats: Vec<f64> =
        (0..n).map(|k| pick(&[-1.5e300, 3.25, -0.0, f64::INFINITY, 1e-300, 7.0], k) * (1.0 + k as f64)).collect();
    let f = |v: Vec<f64>| ArrayD::from_shape_vec(s.clone(), v).unwrap();
    vec![
        HostArray::U8(f(ints(0.0, 255.0)).mapv(|v| v as u8)),
        HostArray::I8(f(ints(-128.0, 127.0)).mapv(|v| v as i8)),
        HostArray::U16(f(ints(0.0, 65535.0)).mapv(|v| v as u16)),
        HostArray::I16(f(ints(-32768.0, 32767.0)).mapv(|v| v as i16)),
        HostArray::U32(f(ints(0.0, u32::MAX as f64)).mapv(|v| v as u32)),
        HostArray::I32(f(ints(i32::MIN as f64, i32::MAX as f64)).mapv(|v| v as i32)),
        HostArray::U64(ArrayD::from_shape_fn(
            s.clone(),
            |i| if i[0] == 0 { u64::MAX - i[2] as u64 } else { i[1] as u64 },
        )),
        HostArray::I64(ArrayD::from_shape_fn(s.clone(), |i| {
            if i[0] == 0 { i64::MIN + i[2] as i64 } else { i64::MAX - i[1] as i64 }
        })),
        HostArray::F32(f(floats.clone()).mapv(|v| v as f32)),
        HostArray::F64(f(floats.clone())),
        HostArray::C32(f(floats.clone()).mapv(|v| Complex32::new(v as f32, -(v as f32) / 3.0))),
        HostArray::C64(f(floats).mapv(|v| Complex64::new(v, v / 7.0))),
    ]
}

fn oblique() -> Geometry {
    let (c, s) = (0.3f64.cos(), 0.3f64.sin());
    Geometry {
        spacing: [2.5, 1.1, 0.9],
        origin: [-90.25, 12.5, 33.0],
        direction: [[0.0, 0.0, -1.0], [-s, c, 0.0], [c, s, 0.0]], // slices run inferior: left-handed, qfac −1
        units: SpaceUnit::Millimetre,
        time_step: None,
        nifti_codes: None,
    }
}

#[test]
fn every_type_round_trips_with_its_geometry_and_nibabel_reads_it() {
    // Leaves NAME.nii(.gz), NAME.npy (the array in cliper's order) and NAME.affine.npy in the directory for
    // `python3 tests/fixtures/check_nifti.py DIR`.
    let dir = scratch("round-trip");
    let mut written = 0;
    for (k, array) in every_type(&[3, 5, 7]).into_iter().enumerate() {
        for (ext, geometry) in
            [("nii", Some(oblique())), ("nii.gz", Some(Geometry::from_spacing([3.0, 0.7, 0.8]))), ("none.nii", None)]
        {
            let name = format!("{k:02}_{}.{ext}", array.dtype().name());
            let path = dir.join(&name);
            write_nifti(&path, &array, false, geometry.as_ref()).unwrap();
            let back = read_nifti(&path).unwrap();
            assert_eq!(back.array, array, "{name}");
            assert!(!back.colour);
            let g = back.geometry.unwrap();
            let want = geometry.unwrap_or(Geometry {
                // Codes 0: nibabel's base affine, x flipped and centred: the origin is −(n − 1)/2 · zoom.
                origin: [3.0, -2.0, -1.0],
                direction: [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]],
                units: SpaceUnit::Unknown,
                ..Geometry::from_spacing([1.0; 3])
            });
            assert_affine(g.affine(), want.affine(), &name);
            assert_eq!(g.units, want.units, "{name}");
            write_npy(dir.join(format!("{k:02}_{}.{ext}.npy", array.dtype().name())), &array).unwrap();
            let affine = want.affine().iter().flatten().copied().collect::<Vec<f64>>();
            let affine = HostArray::F64(ArrayD::from_shape_vec(IxDyn(&[4, 4]), affine).unwrap());
            write_npy(dir.join(format!("{k:02}_{}.{ext}.affine.npy", array.dtype().name())), &affine).unwrap();
            written += 1;
        }
    }
    // 4-D with a time step, 2-D, 1-D and 7-D; colour RGB and RGBA through write_image.
    let time = Geometry { time_step: Some(2.5), ..oblique() };
    let cases: Vec<(&str, Image)> = vec![
        (
            "4d.nii.gz",
            Image {
                array: HostArray::I16(ArrayD::from_shape_fn(IxDyn(&[4, 3, 5, 7]), |i| {
                    (i[0] * 1000 + i[1] * 100 + i[2] * 10 + i[3]) as i16
                })),
                colour: false,
                geometry: Some(time),
                scaling: None,
            },
        ),
        (
            "2d.nii",
            Image {
                array: HostArray::F32(ArrayD::from_shape_fn(IxDyn(&[5, 7]), |i| (i[0] * 7 + i[1]) as f32 / 4.0)),
                colour: false,
                geometry: Some(oblique()),
                scaling: None,
            },
        ),
        (
            "1d.nii",
            Image {
                array: HostArray::U16(ArrayD::from_shape_fn(IxDyn(&[9]), |i| i[0] as u16)),
                colour: false,
                geometry: Some(oblique()),
                scaling: None,
            },
        ),
        (
            "7d.nii",
            Image {
                array: HostArray::U8(ArrayD::from_shape_fn(IxDyn(&[2, 1, 2, 3, 2, 3, 4]), |i| {
                    (i[3] * 12 + i[5] * 4 + i[6]) as u8
                })),
                colour: false,
                geometry: Some(oblique()),
                scaling: None,
            },
        ),
        (
            "rgb.nii",
            Image {
                array: HostArray::U8(ArrayD::from_shape_fn(IxDyn(&[3, 3, 5, 7]), |i| {
                    (i[0] * 50 + i[1] * 20 + i[2] * 7 + i[3]) as u8
                })),
                colour: true,
                geometry: Some(oblique()),
                scaling: None,
            },
        ),
        (
            "rgba_2d.nii.gz",
            Image {
                array: HostArray::U8(ArrayD::from_shape_fn(IxDyn(&[4, 5, 7]), |i| (i[0] * 60 + i[1] * 7 + i[2]) as u8)),
                colour: true,
                geometry: Some(oblique()),
                scaling: None,
            },
        ),
    ];
    for (name, image) in cases {
        let path = dir.join(name);
        write_image(&path, &image).unwrap();
        let back = read_image(&path).unwrap();
        assert_eq!((&back.array, back.colour), (&image.array, image.colour), "{name}");
        let (g, want) = (back.geometry.unwrap(), image.geometry.unwrap());
        assert_affine(g.affine(), want.affine(), name);
        let step = g.time_step.map(|t| (t * 1e6).round() / 1e6);
        assert_eq!(step, if image.array.shape().len() >= 4 && !image.colour { want.time_step } else { None }, "{name}");
        write_npy(dir.join(format!("{name}.npy")), &image.array).unwrap();
        let affine = want.affine().iter().flatten().copied().collect::<Vec<f64>>();
        write_npy(
            dir.join(format!("{name}.affine.npy")),
            &HostArray::F64(ArrayD::from_shape_vec(IxDyn(&[4, 4]), affine).unwrap()),
        )
        .unwrap();
        written += 1;
    }
    assert_eq!(written, 42);
    eprintln!("left {written} NIfTI files for check_nifti.py in {}", dir.display());
}

#[test]
fn what_cannot_be_written_is_refused_by_name() {
    let dir = scratch("refused");
    let path = dir.join("x.nii");
    let eight = HostArray::U8(ArrayD::zeros(IxDyn(&[1; 8])));
    let err = write_nifti(&path, &eight, false, None).unwrap_err().to_string();
    assert!(err.contains("x.nii") && err.contains("8 axes"), "{err}");
    let wide = HostArray::U8(ArrayD::zeros(IxDyn(&[1, 40000])));
    let err = write_nifti(&path, &wide, false, None).unwrap_err().to_string();
    assert!(err.contains("40000") && err.contains("32767"), "{err}");
    let grey16 = HostArray::U16(ArrayD::zeros(IxDyn(&[3, 2, 2])));
    let err = write_nifti(&path, &grey16, true, None).unwrap_err().to_string();
    assert!(err.contains("RGB24") && err.contains("u16"), "{err}");
    let scalar = HostArray::F32(ArrayD::zeros(IxDyn(&[])));
    assert!(write_nifti(&path, &scalar, false, None).is_err());
    assert!(!path.exists(), "a refused save leaves no file");
}

/// The fixture i16.nii (nibabel's (7, 5, 3) of int16, data at 352) with `edit` applied, read from a file.
fn edited(test: &str, edit: impl FnOnce(&mut Vec<u8>)) -> (PathBuf, String) {
    let mut bytes = std::fs::read(fixtures().join("i16.nii")).unwrap();
    edit(&mut bytes);
    let path = scratch(test).join("bad.nii");
    std::fs::write(&path, &bytes).unwrap();
    let err = read_nifti(&path).unwrap_err();
    assert!(matches!(err, cliper::Error::Format { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains(&*path.to_string_lossy()), "{message}");
    // The same bytes in memory: the same reason, naming <memory>.
    let memory = decode_nifti(&bytes).unwrap_err().to_string();
    assert!(memory.contains("<memory>"), "{memory}");
    (path, message)
}

fn set(bytes: &mut [u8], at: usize, value: &[u8]) {
    bytes[at..at + value.len()].copy_from_slice(value);
}

#[test]
fn bad_files_give_typed_errors_naming_the_path_and_the_problem() {
    let (_, e) = edited("truncated", |b| b.truncate(b.len() - 10));
    assert!(e.contains("dims [7, 5, 3] of i16 need 210 bytes of data, the file has 200 after vox_offset 352"), "{e}");
    let (_, e) = edited("header", |b| b.truncate(200));
    assert!(e.contains("header needs 348 bytes"), "{e}");
    let (_, e) = edited("vox-offset", |b| set(b, 108, &100f32.to_le_bytes()));
    assert!(e.contains("vox_offset 100 lies inside the 352-byte header"), "{e}");
    let (_, e) = edited("vox-offset-past", |b| set(b, 108, &4096f32.to_le_bytes()));
    assert!(e.contains("vox_offset 4096 lies past the end of the 562-byte file"), "{e}");
    let (_, e) = edited("vox-offset-fraction", |b| set(b, 108, &352.5f32.to_le_bytes()));
    assert!(e.contains("vox_offset 352.5"), "{e}");
    let (_, e) = edited("huge", |b| {
        for (k, n) in [4i16, 1024, 1024, 1024, 1024].iter().enumerate() {
            set(b, 40 + 2 * k, &n.to_le_bytes());
        }
    });
    assert!(e.contains("need 2199023255552 bytes of data, the file has 210"), "{e}");
    let (_, e) = edited("negative", |b| set(b, 44, &(-5i16).to_le_bytes()));
    assert!(e.contains("dim[2] is -5"), "{e}");
    let (_, e) = edited("rank", |b| set(b, 40, &9i16.to_le_bytes()));
    assert!(e.contains("dim[0] is 9"), "{e}");
    let (_, e) = edited("datatype-99", |b| set(b, 70, &99i16.to_le_bytes()));
    assert!(e.contains("datatype 99 is not a NIfTI datatype code"), "{e}");
    let (_, e) = edited("float128", |b| set(b, 70, &1536i16.to_le_bytes()));
    assert!(e.contains("datatype 1536 (float128) is not supported"), "{e}");
    let (_, e) = edited("complex256", |b| set(b, 70, &2048i16.to_le_bytes()));
    assert!(e.contains("datatype 2048 (complex256)"), "{e}");
    let (_, e) = edited("binary", |b| set(b, 70, &1i16.to_le_bytes()));
    assert!(e.contains("datatype 1 (binary, 1 bit)"), "{e}");
    let (_, e) = edited("pair", |b| set(b, 344, b"ni1\0"));
    assert!(e.contains(".hdr/.img pair"), "{e}");
    let (_, e) = edited("magic", |b| set(b, 344, b"xyz\0"));
    assert!(e.contains("magic"), "{e}");
    let (_, e) = edited("not-nifti", |b| set(b, 0, &1234i32.to_le_bytes()));
    assert!(e.contains("sizeof_hdr is 1234"), "{e}");
    let (_, e) = edited("inter", |b| {
        set(b, 112, &2f32.to_le_bytes());
        set(b, 116, &f32::NAN.to_le_bytes());
    });
    assert!(e.contains("scl_inter is NaN"), "{e}");
    // A degenerate affine (no sform or qform, pixdim 0) loads the pixels without a geometry.
    let mut bytes = std::fs::read(fixtures().join("no_transform.nii")).unwrap();
    set(&mut bytes, 80, &0f32.to_le_bytes());
    let image = decode_nifti(&bytes).unwrap();
    assert_eq!((image.array.shape(), image.geometry), (&[3, 5, 7][..], None));
}

#[test]
fn nifti2_claims_and_gzip_bombs_are_refused_before_allocating() {
    // NIfTI-2's 64-bit dims: 2⁶² elements overflow; 2⁴⁰ exceed the file.
    let base = std::fs::read(fixtures().join("nifti2_f32.nii")).unwrap();
    for (dims, want) in
        [([2i64, 1 << 31, 1 << 31], "overflow the address space"), ([2, 1 << 20, 1 << 20], "need 4398046511104 bytes")]
    {
        let mut b = base.clone();
        for (k, n) in dims.iter().enumerate() {
            set(&mut b, 16 + 8 * k, &n.to_le_bytes());
        }
        let e = decode_nifti(&b).unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
    }
    // A gzipped header claiming 2⁴⁰ i16 elements: refused from the header, without inflating the rest.
    let mut b = std::fs::read(fixtures().join("i16.nii")).unwrap();
    for (k, n) in [4i16, 1024, 1024, 1024, 1024].iter().enumerate() {
        set(&mut b, 40 + 2 * k, &n.to_le_bytes());
    }
    b.resize(1 << 20, 0); // 1 MiB of zeros gzips to about 1 KiB
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut gz, &b).unwrap();
    let gz = gz.finish().unwrap();
    let e = decode_nifti(&gz).unwrap_err().to_string();
    assert!(e.contains("more than a") && e.contains("gzip stream can hold"), "{e}");
    // A truncated gzip stream and one that inflates to too little.
    let good = std::fs::read(fixtures().join("i16_scaled.nii.gz")).unwrap();
    let e = decode_nifti(&good[..good.len() / 2]).unwrap_err().to_string();
    assert!(e.contains("<memory>"), "{e}");
}

/// A `.nii.gz` written by nibabel with one bit flipped in its deflate data (tests/fixtures/make_integrity.py): the
/// stream still inflates to the right number of bytes, only gzip's CRC-32 tells it is corrupt. It used to load
/// with wrong voxels.
#[test]
fn a_bit_flipped_in_a_gzip_nifti_is_refused_by_its_crc() {
    let corrupt = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/integrity/f32_bitflip.nii.gz");
    let message = read_nifti(&corrupt).expect_err("a corrupt gzip stream must be refused").to_string();
    assert!(!message.contains('\n'), "one line: {message}");
    assert!(message.contains("f32_bitflip.nii.gz") && message.contains("gzip CRC mismatch"), "{message}");
    // The same bytes in memory, and through the generic reader.
    let bytes = std::fs::read(&corrupt).unwrap();
    assert!(decode_nifti(&bytes).unwrap_err().to_string().contains("gzip CRC mismatch"));
    assert!(read_image(&corrupt).unwrap_err().to_string().contains("gzip CRC mismatch"));
    // The file it was made from loads (its values are checked against nibabel's above).
    assert!(read_nifti(fixtures().join("f32.nii.gz")).is_ok());
}

/// A `.nii.gz` gzipped as block-parallel writers do (tests/fixtures/make_blocked_gzip.py: nibabel's NIfTI in 5
/// deflate blocks by Python's zlib, each with the 32 KiB before it as dictionary and a sync flush, one member):
/// it loads with the values the script wrote, exactly.
#[test]
fn a_block_parallel_gzip_written_by_zlib_loads_with_its_values() {
    let image = read_nifti(fixtures().join("blocked_i16.nii.gz")).unwrap();
    // nibabel's (X, Y, Z) = (48, 40, 20) reversed.
    let want = HostArray::I16(ArrayD::from_shape_fn(IxDyn(&[20, 40, 48]), |i| {
        ((7 * i[2] + 13 * i[1] + 29 * i[0]) % 2000) as i16 - 1000
    }));
    assert_eq!(image.array, want);
    // pixdim is float32: 0.8 as nibabel stored it.
    assert_eq!(image.geometry.unwrap().spacing, [2.0, f64::from(0.8f32), f64::from(0.8f32)]);
}

/// A `.nii.gz` large enough for the writer to deflate it in several blocks at once (512 KiB each: this one is
/// 1.2 MB, 3 blocks): the blocks join into one gzip member that a plain single-member reader (flate2's
/// `GzDecoder`, as Python's gzip and nibabel read) inflates to exactly the bytes of the `.nii`, and our reader
/// loads the same voxels. Leaves the file for `python3 tests/fixtures/check_nifti.py DIR`.
#[test]
fn a_large_gzip_nifti_is_written_in_blocks_that_a_plain_gzip_reader_takes() {
    use std::io::Read;
    let dir = scratch("blocks");
    let volume = HostArray::I16(ArrayD::from_shape_fn(IxDyn(&[40, 96, 160]), |i| {
        // Smooth anatomy and noise, as a CT holds: neither incompressible nor trivially so.
        let noise = (((i[0] * 96 + i[1]) * 160 + i[2]) as u32).wrapping_mul(2_654_435_761) >> 26;
        (i[0] * 40 + i[1] * 7 + i[2] * 3 + noise as usize) as i16 - 1000
    }));
    let geometry = Geometry::from_spacing([2.5, 0.7, 0.7]);
    let (gz_path, plain_path) = (dir.join("blocks.nii.gz"), dir.join("blocks.nii"));
    write_nifti(&gz_path, &volume, false, Some(&geometry)).unwrap();
    write_nifti(&plain_path, &volume, false, Some(&geometry)).unwrap();
    let gz = std::fs::read(&gz_path).unwrap();
    let plain = std::fs::read(&plain_path).unwrap();
    let mut inflated = Vec::new();
    flate2::read::GzDecoder::new(gz.as_slice()).read_to_end(&mut inflated).unwrap();
    assert!(inflated == plain, "a plain gzip reader inflates {} bytes, not the .nii's {}", inflated.len(), plain.len());
    assert_eq!(read_nifti(&gz_path).unwrap().array, volume);
    // Each cut between blocks ends in a sync flush, an empty stored block 00 00 ff ff: 1.2 MB makes 3 blocks.
    let cuts = gz.windows(4).filter(|w| *w == [0, 0, 0xff, 0xff]).count();
    assert!(cuts >= plain.len().div_ceil(512 << 10) - 1, "{cuts} sync flushes in {} bytes", plain.len());
    write_npy(dir.join("blocks.nii.gz.npy"), &volume).unwrap();
    let affine = geometry.affine().iter().flatten().copied().collect::<Vec<f64>>();
    write_npy(
        dir.join("blocks.nii.gz.affine.npy"),
        &HostArray::F64(ArrayD::from_shape_vec(IxDyn(&[4, 4]), affine).unwrap()),
    )
    .unwrap();
    std::fs::remove_file(&plain_path).unwrap();
    eprintln!("left blocks.nii.gz for check_nifti.py in {}", dir.display());
}

#[test]
fn scaled_images_store_their_integers_only_when_every_value_comes_back_exactly() {
    let dir = scratch("scaled-write");
    let datatype = |path: &Path| {
        let bytes = std::fs::read(path).unwrap();
        i16::from_le_bytes([bytes[70], bytes[71]])
    };
    // nibabel's int16 with scl_slope 0.5, scl_inter −3: the reader says so.
    let scan = read_image(fixtures().join("i16_scaled.nii")).unwrap();
    let scaling = scan.scaling.expect("the scaling read");
    assert_eq!((scaling.stored, scaling.slope, scaling.intercept), (Dtype::I16, 0.5, -3.0));
    let same = dir.join("same.nii");
    write_image(&same, &scan).unwrap();
    assert_eq!(datatype(&same), 4, "int16 again");
    assert_eq!(read_image(&same).unwrap(), scan);
    // Every k · 0.5 − 3 is an f32: the values read as f32 (nibabel's float64 values, to the bit).
    assert_eq!(scan.array.dtype(), Dtype::F32, "an exact rescale reads as f32");
    // A value between two stored ones (k · 0.5 − 3 + 0.25): the values as they are, float32.
    let mut moved = scan.clone();
    if let HostArray::F32(a) = &mut moved.array {
        a[[0, 0, 0]] += 0.25;
    }
    let float = dir.join("moved.nii");
    write_image(&float, &moved).unwrap();
    assert_eq!(datatype(&float), 16);
    assert_eq!(read_image(&float).unwrap().array, moved.array);
    // A DICOM-style slope float32 cannot hold (0.1): scl_slope would change the values, so float64 too.
    let tenths = Image {
        array: HostArray::F64(ArrayD::from_shape_fn(IxDyn(&[2, 3]), |i| (i[0] * 3 + i[1]) as f64 * 0.1)),
        colour: false,
        geometry: None,
        scaling: Some(cliper::Scaling { stored: Dtype::I16, slope: 0.1, intercept: 0.0 }),
    };
    let path = dir.join("tenths.nii");
    write_image(&path, &tenths).unwrap();
    assert_eq!(datatype(&path), 64);
    assert_eq!(read_image(&path).unwrap().array, tenths.array);
    // The codes: nibabel's qform 1 / sform 2 are read and written back; 1 / 1 and 0 / 0 carry none.
    let codes = |name: &str| read_image(fixtures().join(name)).unwrap().geometry.unwrap().nifti_codes;
    assert_eq!(codes("sform_not_qform.nii"), Some([1, 2]));
    assert_eq!(codes("no_transform.nii"), None);
    std::fs::remove_dir_all(&dir).ok();
}
