//! Chains run in tiles under a device memory limit (`Chain::run_tiled`) against the same chains run whole: the
//! outputs must be equal bit for bit (every step is local, the halo is the sum of the steps' reaches, and the
//! tiles at the image's edges hold the real edges), the device memory held must stay under the limit, and steps
//! that need the whole image must be refused by name.
#![cfg(feature = "chain")]

mod common;
use cliper::chain::{Chain, TileInput, TileProgress};
use cliper::{ClApp, Dtype, HostArray, SlabFile, read_npy, write_npy};
use std::path::{Path, PathBuf};

/// A fresh folder for one test's files.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cliper-tiles-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A chain reading `input` with `steps` (TOML `[[step]]` tables) and saving `outputs` (name, file).
fn chain(input: &Path, steps: &str, outputs: &[(&str, &Path)]) -> Chain {
    let outs: String = outputs.iter().map(|(n, p)| format!("{n} = '{}'\n", p.display())).collect();
    let text = format!("input = {{ x = '{}' }}\n{steps}\n[output]\n{outs}", input.display());
    Chain::from_toml(&text, Path::new("tiles.toml")).unwrap()
}

/// Values with structure at every scale and no two neighbours equal (so median and morphology have work).
fn image(shape: &[usize], seed: u64) -> HostArray {
    let mut rng = common::Rng::new(seed);
    let n: usize = shape.iter().product();
    let values: Vec<f32> = (0..n).map(|i| ((i % 97) as f32 * 0.01) + rng.uniform() as f32).collect();
    HostArray::F32(ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), values).unwrap())
}

/// A ClApp on the default device whose arrays may hold at most `bytes`.
fn limited(bytes: u64) -> ClApp {
    ClApp::builder().use_env(true).memory_limit(bytes).build().unwrap()
}

/// Runs `chain` whole on the shared device and tiled under `limit`; returns the tiles it took.
fn whole_and_tiled(chain_whole: &Chain, chain_tiled: &Chain, limit: u64) -> usize {
    chain_whole.run(common::app(), None, false, |_| {}).unwrap();
    let app = limited(limit);
    let mut tiles = 0;
    let outcome = chain_tiled
        .run_tiled(&app, None, |p| {
            if let TileProgress::Tile(_) = p {
                tiles += 1;
            }
        })
        .unwrap();
    assert_eq!(outcome.tiles.len(), tiles);
    let peak = app.memory_stats().peak_bytes;
    assert!(peak <= limit, "the tiles held {peak} bytes of device memory, over the limit of {limit}");
    tiles
}

/// The chain — pad → Gaussian → Sobel magnitude → median — on a 4096² image under a 16 MiB budget (the
/// image alone is 64 MiB): equal to the untiled run bit for bit, NPY in and out (slab by slab).
#[test]
fn pad_gaussian_sobel_median_on_4096_squared_under_16_mib() {
    let dir = folder("4096");
    let input = dir.join("in.npy");
    write_npy(&input, &image(&[4096, 4096], 1)).unwrap();
    let steps = "[[step]]\nop = 'pad'\nwidth = 8\nmode = 'reflect'\nin = 'x'\nout = 'p'\n\
                 [[step]]\nop = 'convolve'\nkernel = 'gaussian:1.5'\nin = 'p'\nout = 'g'\n\
                 [[step]]\nop = 'gradient-magnitude'\nderivative = 'sobel'\nin = 'g'\nout = 'e'\n\
                 [[step]]\nop = 'rank-filter'\nfilter = 'median'\nsize = 3\nin = 'e'\nout = 'm'";
    let (whole, tiled) = (dir.join("whole.npy"), dir.join("tiled.npy"));
    let tiles =
        whole_and_tiled(&chain(&input, steps, &[("m", &whole)]), &chain(&input, steps, &[("m", &tiled)]), 16 << 20);
    assert!(tiles >= 8, "{tiles} tiles");
    let (a, b) = (read_npy(&whole).unwrap(), read_npy(&tiled).unwrap());
    assert_eq!(a.shape(), &[4112, 4112]);
    assert!(a == b, "the tiled result differs from the whole one");
    std::fs::remove_dir_all(&dir).ok();
}

/// A volume (3-D Gaussian and grey opening over all three axes, cut along the slices) and every border rule
/// the steps take, with a second output gathered into a TIFF: both equal to the untiled run.
#[test]
fn volume_and_borders_and_two_outputs() {
    let dir = folder("volume");
    let input = dir.join("vol.npy");
    write_npy(&input, &image(&[121, 37, 29], 2)).unwrap();
    for (border, mode) in
        [("reflect", "symmetric"), ("mirror", "edge"), ("nearest", "reflect"), ("constant", "constant")]
    {
        let steps = format!(
            "[[step]]\nop = 'pad'\nwidth = '3:2,1:1,0:2'\nmode = '{mode}'\nin = 'x'\nout = 'p'\n\
             [[step]]\nop = 'convolve'\nkernel = 'gaussian:1.2'\nrank = 3\nborder = '{border}'\nvalue = 0.5\nin = 'p'\nout = 'g'\n\
             [[step]]\nop = 'grey-morphology'\noperation = 'opening'\nsize = 3\nrank = 3\nborder = '{border}'\nin = 'g'\nout = 'o'\n\
             [[step]]\nop = 'expression'\nexpr = 'a * 2 - 1'\nin = 'o'\nout = 'e'"
        );
        let outs = |tag: &str| [dir.join(format!("{tag}-o.npy")), dir.join(format!("{tag}-e.tif"))];
        let [wo, we] = outs("whole");
        let [to, te] = outs("tiled");
        let whole = chain(&input, &steps, &[("o", &wo), ("e", &we)]);
        let tiled = chain(&input, &steps, &[("o", &to), ("e", &te)]);
        // A slice of 37 × 29 floats costs ~57 KB on PoCL (arrays and scratch); 4 MiB hold ~70 slices, 40 of them halo.
        let tiles = whole_and_tiled(&whole, &tiled, 4 << 20);
        assert!(tiles >= 3, "{border}: {tiles} tiles");
        assert!(read_npy(&wo).unwrap() == read_npy(&to).unwrap(), "{border}/{mode}: the NPY outputs differ");
        let (a, b) = (cliper::read_image(&we).unwrap(), cliper::read_image(&te).unwrap());
        assert!(a.array == b.array, "{border}/{mode}: the TIFF outputs differ");
        assert_eq!(a.array.shape(), &[126, 39, 31]);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A colour PNG (channels first after reading) is cut along its rows, never across the channels.
#[test]
fn colour_image_cut_along_rows() {
    let dir = folder("colour");
    let input = dir.join("rgb.png");
    let mut rng = common::Rng::new(5);
    let pixels: Vec<u8> = (0..3 * 120 * 90).map(|_| rng.below(256) as u8).collect();
    let array = HostArray::U8(ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[3, 120, 90]), pixels).unwrap());
    cliper::write_image(&input, &cliper::Image { array, colour: true, geometry: None, scaling: None }).unwrap();
    let steps = "[[step]]\nop = 'convolve'\nkernel = 'gaussian:1'\nin = 'x'\nout = 'g'";
    let (whole, tiled) = (dir.join("whole.npy"), dir.join("tiled.npy"));
    let source = TileInput::open(&cliper::chain::FileSpec::parse(&input.to_string_lossy())).unwrap();
    let shape = source.shape().to_vec();
    let row_bytes = (shape.iter().product::<usize>() / shape[1]) as u64 * 4 * 3;
    let whole_chain = chain(&input, steps, &[("g", &whole)]);
    whole_chain.run(common::app(), None, false, |_| {}).unwrap();
    let app = limited(row_bytes * 80);
    let outcome = chain(&input, steps, &[("g", &tiled)]).run_tiled(&app, Some(source), |_| {}).unwrap();
    assert_eq!(outcome.plan.axis, 1, "{shape:?}");
    assert!(outcome.tiles.len() > 1, "{} tiles", outcome.tiles.len());
    assert!(read_npy(&whole).unwrap() == read_npy(&tiled).unwrap());
    std::fs::remove_dir_all(&dir).ok();
}

/// What cannot run in tiles is refused before anything is written, naming the step and why; a budget too small
/// for one tile's halo says how many rows of context it needs; a failure in the middle leaves no output.
#[test]
fn refusals_name_the_step_and_leave_nothing() {
    let dir = folder("refusals");
    let input = dir.join("in.npy");
    write_npy(&input, &image(&[200, 50], 3)).unwrap();
    let out = dir.join("out.npy");
    let app = limited(64 << 10);
    for (steps, words) in [
        ("[[step]]\nop = 'label'\nin = 'x'\nout = 'y'", &["step 1 (tiles)", "`label`", "whole image"][..]),
        (
            "[[step]]\nop = 'clip'\nmin = 0\nmax = 1\nin = 'x'\nout = 'c'\n[[step]]\nop = 'convolve'\nkernel = 'box:3'\nborder = 'wrap'\nin = 'c'\nout = 'y'",
            &["step 2", "wrap border"][..],
        ),
        ("[[step]]\nop = 'zoom'\nzoom = '2'\nin = 'x'\nout = 'y'", &["`zoom`", "spline"][..]),
        ("[[step]]\nop = 'norm'\naxis = 0\nin = 'x'\nout = 'y'", &["`norm`", "to a number"][..]),
    ] {
        let e = chain(&input, steps, &[("y", &out)]).run_tiled(&app, None, |_| {}).unwrap_err().to_string();
        assert!(words.iter().all(|w| e.contains(w)), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
    // A 51-wide Gaussian (σ = 6) needs 51 rows of context on each side: 103 rows of 50 floats, ×3 per row, do
    // not fit 20 KiB.
    let steps = "[[step]]\nop = 'convolve'\nkernel = 'gaussian:6'\nin = 'x'\nout = 'y'";
    let e = chain(&input, steps, &[("y", &out)]).run_tiled(&limited(20 << 10), None, |_| {}).unwrap_err();
    assert!(matches!(e, cliper::Error::OutOfMemory { .. }) && e.to_string().contains("rows of context"), "{e}");
    // The second output converts to u8, which values with fractions cannot do exactly: the run fails at its
    // first tile and neither output is left (the NPYs written slab by slab were temporary files).
    let steps = "[[step]]\nop = 'convolve'\nkernel = 'box:3'\nin = 'x'\nout = 'y'";
    let text = format!(
        "input = {{ x = '{}' }}\n{steps}\n[output]\ny = '{}'\nz = {{ path = '{}', type = 'u8' }}\n",
        input.display(),
        out.display(),
        dir.join("z.npy").display()
    );
    let text = text.replace(
        "out = 'y'\n[output]",
        "out = 'y'\n[[step]]\nop = 'expression'\nexpr = 'a'\nin = 'y'\nout = 'z'\n[output]",
    );
    let both = Chain::from_toml(&text, Path::new("t.toml")).unwrap();
    let e = both.run_tiled(&app, None, |_| {}).unwrap_err().to_string();
    assert!(e.contains("z.npy") || e.contains("u8"), "{e}");
    let files = || {
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(files(), vec!["in.npy".to_string()]);
    std::fs::remove_dir_all(&dir).ok();
}

/// Slab reads of an NPY file equal slices of the whole array on every axis; the slab writer refuses a slab of
/// the wrong shape or type by name.
#[test]
fn slab_files_read_and_write_any_axis() {
    let dir = folder("slabs");
    let path = dir.join("a.npy");
    let whole = image(&[7, 5, 6], 4);
    write_npy(&path, &whole).unwrap();
    let file = SlabFile::open(&path).unwrap();
    for axis in 0..3 {
        let n = whole.shape()[axis];
        for rows in [0..1, 1..n - 1, 0..n, n - 2..n] {
            assert!(
                file.read(axis, rows.clone()).unwrap() == whole.slab(axis, rows.clone()).unwrap(),
                "{axis} {rows:?}"
            );
        }
    }
    let e = file.read(1, 3..6).unwrap_err().to_string();
    assert!(e.contains("3..6") && e.contains("a.npy"), "{e}");
    let out = dir.join("b.npy");
    let w = cliper::SlabWriter::npy(&out, Dtype::F32, &[7, 5, 6]).unwrap();
    for axis_rows in [0..3, 3..7] {
        w.write(0, axis_rows.start, &whole.slab(0, axis_rows).unwrap()).unwrap();
    }
    let e = w.write(1, 0, &whole.slab(0, 0..2).unwrap()).unwrap_err().to_string();
    assert!(e.contains("[2, 5, 6]") && e.contains("b.npy"), "{e}");
    w.finish().unwrap();
    assert!(read_npy(&out).unwrap() == whole);
    std::fs::remove_dir_all(&dir).ok();
}

/// Uncompressed NIfTI files are read in slabs equal to the whole reader's slices — scaled, big-endian, NIfTI-2,
/// 4-D — and gzipped or colour ones are left to the whole reader; a NIfTI volume with anisotropic voxels runs in
/// tiles through a Gaussian given in millimetres and is saved with its geometry, equal to the untiled run.
#[test]
fn nifti_slabs_and_a_tiled_volume_in_millimetres() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nifti");
    for name in ["i16_scaled.nii", "big_endian_i16.nii", "big_endian_nifti2_f64.nii", "4d_msec.nii", "u8.nii"] {
        let path = fixtures.join(name);
        let whole = cliper::read_nifti(&path).unwrap();
        let file = SlabFile::open_nifti(&path).unwrap().unwrap_or_else(|| panic!("{name} is a plain NIfTI"));
        assert_eq!(file.geometry(), whole.geometry.as_ref(), "{name}");
        for axis in 0..whole.array.shape().len() {
            let n = whole.array.shape()[axis];
            for rows in [0..1, n / 2..n] {
                assert!(
                    file.read(axis, rows.clone()).unwrap() == whole.array.slab(axis, rows).unwrap(),
                    "{name} {axis}"
                );
            }
        }
    }
    for name in ["f32.nii.gz", "rgb24.nii"] {
        assert!(SlabFile::open_nifti(fixtures.join(name)).unwrap().is_none(), "{name}");
    }
    let dir = folder("nifti");
    let input = dir.join("vol.nii");
    let geometry = cliper::Geometry::from_spacing([2.5, 0.8, 1.1]);
    cliper::write_nifti(&input, &image(&[90, 33, 27], 6), false, Some(&geometry)).unwrap();
    let steps = "[[step]]\nop = 'convolve'\nkernel = 'gaussian:2mm'\nrank = 3\nin = 'x'\nout = 'g'";
    let (whole, tiled) = (dir.join("whole.nii"), dir.join("tiled.nii"));
    let tiles =
        whole_and_tiled(&chain(&input, steps, &[("g", &whole)]), &chain(&input, steps, &[("g", &tiled)]), 1 << 20);
    assert!(tiles >= 3, "{tiles} tiles");
    let (a, b) = (cliper::read_nifti(&whole).unwrap(), cliper::read_nifti(&tiled).unwrap());
    assert!(a.array == b.array && a.geometry == b.geometry && a.geometry.is_some());
    std::fs::remove_dir_all(&dir).ok();
}

/// Grey TIFFs are read in slabs — rows of one page in strips (plain, LZW, Deflate), pages of a stack, BigTIFFs
/// from tifffile — equal to
/// the whole reader's slices; colour TIFFs are left to it; a chain on a TIFF runs in tiles equal to untiled.
#[test]
fn tiff_slabs_and_a_tiled_tiff() {
    let dir = folder("tiff");
    let page = image(&[301, 57], 7);
    let page16 = HostArray::U16(page.to_elements::<f32>("x").unwrap().mapv(|v| (v * 1000.0) as u16));
    let stack = image(&[9, 40, 31], 8);
    for (name, array, compression) in [
        ("plain.tif", &page, cliper::TiffCompression::None),
        ("lzw.tif", &page16, cliper::TiffCompression::Lzw),
        ("deflate.tif", &page, cliper::TiffCompression::Deflate),
        ("stack.tif", &stack, cliper::TiffCompression::Deflate),
    ] {
        let path = dir.join(name);
        cliper::write_tiff_with(&path, array, cliper::TiffOptions { compression, colour: false }).unwrap();
        let file = SlabFile::open_tiff(&path).unwrap().unwrap_or_else(|| panic!("{name} is a grey TIFF"));
        assert_eq!(file.shape(), array.shape(), "{name}");
        let n = array.shape()[0];
        for rows in [0..1, 3..n / 2, n / 2..n, 0..n] {
            assert!(file.read(0, rows.clone()).unwrap() == array.slab(0, rows.clone()).unwrap(), "{name} {rows:?}");
        }
        assert!(file.read(1, 0..1).unwrap_err().to_string().contains("first axis"));
    }
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    // BigTIFFs written by tifffile (tests/fixtures/make_tiff.py): value p*10000 + r*100 + c.
    let strips = SlabFile::open_tiff(fixtures.join("bigtiff_strips.tif")).unwrap().unwrap();
    let rows = strips.read(0, 5..23).unwrap().to_elements::<f64>("bigtiff_strips.tif").unwrap();
    assert_eq!(rows.shape(), &[18, 30]);
    assert!(rows.indexed_iter().all(|(i, &v)| v == ((i[0] + 5) * 100 + i[1]) as f64));
    let stack = SlabFile::open_tiff(fixtures.join("bigtiff_stack.tif")).unwrap().unwrap();
    let pages = stack.read(0, 2..5).unwrap().to_elements::<f64>("bigtiff_stack.tif").unwrap();
    assert_eq!(pages.shape(), &[3, 12, 9]);
    assert!(pages.indexed_iter().all(|(i, &v)| v == ((i[0] + 2) * 10000 + i[1] * 100 + i[2]) as f64));
    for name in ["rgb8.tif", "rgb8_3pages.tif", "rgb16_planar.tif"] {
        assert!(SlabFile::open_tiff(fixtures.join(name)).unwrap().is_none(), "{name}");
    }
    let input = dir.join("lzw.tif");
    let steps = "[[step]]\nop = 'rank-filter'\nfilter = 'median'\nsize = 3\nin = 'x'\nout = 'm'";
    let (whole, tiled) = (dir.join("whole.tif"), dir.join("tiled.tif"));
    let tiles =
        whole_and_tiled(&chain(&input, steps, &[("m", &whole)]), &chain(&input, steps, &[("m", &tiled)]), 40 << 10);
    assert!(tiles >= 3, "{tiles} tiles");
    assert!(cliper::read_image(&whole).unwrap().array == cliper::read_image(&tiled).unwrap().array);
    std::fs::remove_dir_all(&dir).ok();
}

/// Norms and dot products that end a chain combine their per-tile partials (sums of powers, maxima, sums) and
/// agree with the untiled run's values to f32 rounding of sums over 200 000 elements (relative 1e-5); saving
/// one is refused by name.
#[test]
fn reductions_combine_over_tiles() {
    let dir = folder("reductions");
    let input = dir.join("in.npy");
    write_npy(&input, &image(&[500, 400], 9)).unwrap();
    let steps = "[[step]]\nop = 'convolve'\nkernel = 'gaussian:1.5'\nin = 'x'\nout = 'g'\n\
                 [[step]]\nop = 'norm'\nin = 'g'\nout = 'n2'\n\
                 [[step]]\nop = 'norm'\np = 'inf'\nin = 'g'\nout = 'ninf'\n\
                 [[step]]\nop = 'norm'\np = 1\nin = 'x'\nout = 'n1'\n\
                 [[step]]\nop = 'dot'\nin = ['g', 'x']\nout = 'd'";
    let smooth = dir.join("g.npy");
    let whole = chain(&input, steps, &[("g", &smooth)]).run(common::app(), None, false, |_| {}).unwrap();
    let want: std::collections::HashMap<String, f64> =
        whole.records[0].values.iter().map(|(n, _, v, _)| (n.clone(), v[0].re)).collect();
    let app = limited(1 << 20);
    let outcome = chain(&input, steps, &[("g", &dir.join("tiled.npy"))]).run_tiled(&app, None, |_| {}).unwrap();
    assert!(outcome.tiles.len() >= 3, "{} tiles", outcome.tiles.len());
    assert_eq!(outcome.values.len(), 4);
    for (name, value, _) in &outcome.values {
        let w = want[name];
        assert!((value.re - w).abs() <= 1e-5 * w.abs(), "{name}: tiled {value}, whole {w}");
    }
    assert!(read_npy(&smooth).unwrap() == read_npy(dir.join("tiled.npy")).unwrap());
    let e = chain(&input, steps, &[("n2", &dir.join("n.npy"))]).run_tiled(&app, None, |_| {}).unwrap_err();
    assert!(e.to_string().contains("`n2`"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Tiles spread over two devices (`Chain::run_tiled_on`; this machine's PoCL gives two with
/// `POCL_DEVICES="pthread pthread"`, so the test runs itself again as a child with it): a volume through pad →
/// Gaussian → grey opening, with a NPY output streamed, a TIFF gathered and two reductions, equals the untiled
/// run bit for bit; the reductions equal one device's tiled run exactly (the same tiles, partials combined in tile
/// order) and the untiled values to f32 rounding; both devices ran tiles.
#[test]
fn tiles_spread_over_two_devices() {
    if common::ran_with_two_devices("tiles_spread_over_two_devices") {
        return;
    }
    let dir = folder("pool");
    let input = dir.join("vol.npy");
    write_npy(&input, &image(&[143, 37, 29], 12)).unwrap();
    let steps = "[[step]]\nop = 'pad'\nwidth = '2:3,1:1,0:2'\nmode = 'reflect'\nin = 'x'\nout = 'p'\n\
         [[step]]\nop = 'convolve'\nkernel = 'gaussian:1.2'\nrank = 3\nin = 'p'\nout = 'g'\n\
         [[step]]\nop = 'grey-morphology'\noperation = 'opening'\nsize = 3\nrank = 3\nin = 'g'\nout = 'o'\n\
         [[step]]\nop = 'norm'\nin = 'o'\nout = 'n2'\n\
         [[step]]\nop = 'norm'\np = 'inf'\nin = 'g'\nout = 'ninf'";
    let outs = |tag: &str| [dir.join(format!("{tag}-o.npy")), dir.join(format!("{tag}-g.tif"))];
    let with = |[o, g]: &[PathBuf; 2]| chain(&input, steps, &[("o", o), ("g", g)]);
    let whole = with(&outs("whole")).run(common::app(), None, false, |_| {}).unwrap();
    let want: std::collections::HashMap<String, f64> =
        whole.records[0].values.iter().map(|(n, _, v, _)| (n.clone(), v[0].re)).collect();
    let limit = 4 << 20;
    let one = with(&outs("one")).run_tiled(&limited(limit), None, |_| {}).unwrap();
    let apps = ClApp::builder().select("all").memory_limit(limit).build_all().unwrap();
    if apps.iter().all(|a| a.device().platform_name.contains("Portable")) {
        assert_eq!(apps.len(), 2, "POCL_DEVICES=\"pthread pthread\" gives two devices");
    }
    let pool = cliper::DevicePool::new(apps.clone()).unwrap();
    let spread = with(&outs("pool")).run_tiled_on(&pool, None, |_| {}).unwrap();
    assert!(spread.tiles.len() >= 4, "{} tiles", spread.tiles.len());
    // Every row once, in order.
    assert!(spread.tiles.windows(2).all(|t| t[0].rows.end == t[1].rows.start), "{:?}", spread.tiles);
    assert_eq!((spread.tiles[0].rows.start, spread.tiles.last().unwrap().rows.end), (0, 143));
    let devices: std::collections::BTreeSet<&str> = spread.tiles.iter().map(|t| t.device.as_str()).collect();
    assert_eq!(devices.len(), apps.len(), "every device should run tiles: {:?}", spread.tiles);
    let [wo, wg] = outs("whole");
    let [po, pg] = outs("pool");
    assert!(read_npy(&wo).unwrap() == read_npy(&po).unwrap(), "the streamed NPY differs from the whole run's");
    assert!(cliper::read_image(&wg).unwrap().array == cliper::read_image(&pg).unwrap().array, "the TIFF differs");
    for ((name, value, _), (_, single, _)) in spread.values.iter().zip(&one.values) {
        if one.tiles.len() == spread.tiles.len() {
            assert_eq!(value, single, "{name}: the same tiles on two devices give another value than on one");
        }
        let w = want[name];
        assert!((value.re - w).abs() <= 1e-5 * w.abs(), "{name}: tiled over two devices {value}, whole {w}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Tile heights (issue 44, item 7): at every device memory limit a chain either runs in tiles that compute at
/// least as many rows as their context on each side (so re-read context is at most two thirds of a tile's
/// reads, never 2 computed rows under 17 of context), or is refused with numbers that agree: the bytes the
/// smallest tile needs exceed the bytes free.
#[test]
fn tiles_are_not_slivers_and_refusals_add_up() {
    let dir = folder("heights");
    let input = dir.join("in.npy");
    write_npy(&input, &image(&[300, 40], 5)).unwrap();
    let steps = "[[step]]\nop = 'convolve'\nkernel = 'gaussian:2'\nin = 'x'\nout = 'y'";
    let blur = chain(&input, steps, &[("y", &dir.join("out.npy"))]);
    let (mut ran, mut refused) = (0, 0);
    for limit in (8u64..=96).step_by(4).map(|k| k << 10) {
        match blur.run_tiled(&limited(limit), None, |_| {}) {
            Ok(outcome) => {
                let plan = outcome.plan;
                assert!(plan.rows >= plan.halo, "{limit}: tiles of {} rows under {} of context", plan.rows, plan.halo);
                assert_eq!(outcome.tiles.len(), plan.tiles());
                ran += 1;
            }
            Err(cliper::Error::OutOfMemory { what, bytes, limit: free }) => {
                let numbers: Vec<u64> =
                    free.split(|c: char| !c.is_ascii_digit()).filter_map(|n| n.parse().ok()).collect();
                // "F bytes … are free under the limit of L (a row takes R bytes …)", or from the allocation that
                // failed: "… a memory limit of L bytes … hold H already".
                let fits = match free.contains("already") {
                    true => numbers.first().zip(numbers.last()).is_some_and(|(l, h)| bytes + h <= *l),
                    false => numbers.first().is_some_and(|f| bytes <= *f),
                };
                assert!(!fits, "{limit}: the refusal says {bytes} bytes fit: {what} needs {bytes} bytes; {free}");
                refused += 1;
            }
            Err(e) => panic!("{limit}: {e}"),
        }
    }
    assert!(ran > 0 && refused > 0, "{ran} ran, {refused} refused");
    std::fs::remove_dir_all(&dir).ok();
}
