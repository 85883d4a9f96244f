//! KData: axis bookkeeping, attached maps and masks, and zero-copy conversion.

mod common;
use cliper::prelude::*;
use common::*;
use num_complex::{Complex32, Complex64};

#[test]
fn axes_are_split_into_frames_coils_and_space() {
    let k = KData::<Complex64>::zeros(app(), &[3, 2], 8, &[17, 33, 5]).unwrap();
    assert_eq!(k.frame_shape(), &[3, 2]);
    assert_eq!(k.num_frames(), 6);
    assert_eq!(k.num_coils(), 8);
    assert_eq!(k.spatial_shape(), &[17, 33, 5]);
    let single = KData::<Complex32>::zeros(app(), &[], 4, &[31]).unwrap();
    assert_eq!((single.frame_shape().len(), single.num_frames(), single.num_coils()), (0, 1, 4));
}

#[test]
fn conversion_to_and_from_xdata_shares_the_samples() {
    let mut rng = Rng::new(30);
    let (x, host) = random::<Complex32>(&mut rng, &[2, 4, 7, 9]);
    let k = KData::new(x.clone(), 2).unwrap();
    assert_eq!(k.num_coils(), 4);
    // Same buffer: a write through the KData's array is seen through the original handle.
    assert!(k.as_xdata().overlaps(&x));
    let back: XData<Complex32> = k.into();
    assert_same(&fetch(&back), &host, "KData → XData");
}

#[test]
fn maps_and_masks_must_match_the_data() {
    let k = KData::<Complex32>::zeros(app(), &[5], 8, &[16, 12]).unwrap();
    let maps = XData::<Complex32>::zeros(app(), &[8, 16, 12]).unwrap();
    let k = k.with_sensitivity_maps(maps).unwrap();
    assert_eq!(k.sensitivity_maps().unwrap().shape(), &[8, 16, 12]);
    let per_frame = XData::<f32>::zeros(app(), &[5, 16, 12]).unwrap();
    let k = k.with_sampling_mask(per_frame).unwrap();
    assert!(k.sampling_mask().is_some());

    let bad_maps = XData::<Complex32>::zeros(app(), &[7, 16, 12]).unwrap();
    let err = k.clone().with_sensitivity_maps(bad_maps).unwrap_err();
    assert!(matches!(err, Error::Shape { .. }));
    assert!(err.to_string().contains("[8, 16, 12]") && err.to_string().contains("[7, 16, 12]"), "{err}");
    let bad_mask = XData::<f32>::zeros(app(), &[12, 16]).unwrap();
    let msg = k.with_sampling_mask(bad_mask).unwrap_err().to_string();
    assert!(msg.contains("[16, 12]") && msg.contains("[12, 16]"), "{msg}");
}

#[test]
fn too_few_axes_are_refused() {
    let x = XData::<Complex32>::zeros(app(), &[16, 12]).unwrap();
    assert!(KData::new(x.clone(), 2).is_err()); // no coil axis
    assert!(KData::new(x.clone(), 0).is_err());
    assert!(KData::new(x, 1).is_ok());
}

fn scratch(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cliper-kdata-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Random k-space of `frames`, `coils` and `spatial` extents with random maps and a random 0/1 mask of
/// `mask_shape` (`[spatial…]` or `[frames…, spatial…]`).
fn random_kdata<T: cliper::ComplexElement>(
    seed: u64,
    frames: &[usize],
    coils: usize,
    spatial: &[usize],
    per_frame_mask: bool,
) -> KData<T>
where
    T::Real: cliper::Element,
{
    let mut rng = Rng::new(seed);
    let shape: Vec<usize> = frames.iter().copied().chain([coils]).chain(spatial.iter().copied()).collect();
    let maps_shape: Vec<usize> = [coils].into_iter().chain(spatial.iter().copied()).collect();
    let mask_shape: Vec<usize> =
        if per_frame_mask { frames.iter().chain(spatial).copied().collect() } else { spatial.to_vec() };
    let (x, _) = random::<T>(&mut rng, &shape);
    let (maps, _) = random::<T>(&mut rng, &maps_shape);
    let mask: Vec<T::Real> = (0..mask_shape.iter().product::<usize>())
        .map(|_| <T::Real as cliper::Element>::from_c64(Complex64::new(rng.below(2) as f64, 0.0)))
        .collect();
    KData::new(x, spatial.len())
        .unwrap()
        .with_sensitivity_maps(maps)
        .unwrap()
        .with_sampling_mask(XData::from_slice(app(), &mask_shape, &mask).unwrap())
        .unwrap()
}

fn assert_same_kdata<T: cliper::ComplexElement>(got: &KData<T>, want: &KData<T>, what: &str)
where
    T::Real: cliper::Element,
{
    assert_eq!(got.frame_shape(), want.frame_shape(), "{what}: frames");
    assert_eq!(got.num_coils(), want.num_coils(), "{what}: coils");
    assert_eq!(got.spatial_shape(), want.spatial_shape(), "{what}: spatial");
    assert_same(&fetch(got.as_xdata()), &fetch(want.as_xdata()), what);
    assert_same(&fetch(got.sensitivity_maps().unwrap()), &fetch(want.sensitivity_maps().unwrap()), what);
    assert_same(&fetch(got.sampling_mask().unwrap()), &fetch(want.sampling_mask().unwrap()), what);
}

// Round trips are bit-exact (assert_same compares exactly): the files hold the same binary floats.
#[test]
fn kdata_round_trips_through_mat_in_both_axis_orders() {
    let dir = scratch("mat");
    let cases: [(&[usize], usize, &[usize], bool); 4] =
        [(&[], 8, &[17, 9], false), (&[3], 4, &[7, 5], true), (&[2, 3], 2, &[5, 3, 4], false), (&[], 1, &[129], false)];
    for (i, &(frames, coils, spatial, per_frame)) in cases.iter().enumerate() {
        let k32 = random_kdata::<Complex32>(40 + i as u64, frames, coils, spatial, per_frame);
        let k64 = random_kdata::<Complex64>(50 + i as u64, frames, coils, spatial, per_frame);
        let path = dir.join(format!("k{i}.mat"));
        k32.save(&path).unwrap();
        assert_same_kdata(&KData::<Complex32>::load(app(), &path).unwrap(), &k32, "MAT c32");
        k64.save(&path).unwrap();
        assert_same_kdata(&KData::<Complex64>::load(app(), &path).unwrap(), &k64, "MAT c64");
        // MATLAB's habitual order, under other names.
        let names = KSpaceMat {
            kspace: "raw".into(),
            sensitivity_maps: "smaps".into(),
            mask: "pattern".into(),
            spatial_dims: None,
            spatial_first: true,
            round: false,
        };
        k32.save_mat(&path, &names).unwrap();
        let raw = cliper::read_mat_variable(&path, "raw").unwrap();
        let expected: Vec<usize> = spatial.iter().copied().chain([coils]).chain(frames.iter().copied()).collect();
        assert_eq!(raw.shape(), expected.as_slice(), "spatial-first layout in the file");
        assert_same_kdata(&KData::<Complex32>::load_mat(app(), &path, &names).unwrap(), &k32, "MAT spatial-first");
    }
}

#[test]
fn kdata_round_trips_through_bart_cfl_with_maps_and_mask() {
    let dir = scratch("cfl");
    let cases: [(&[usize], usize, &[usize], bool); 4] =
        [(&[], 8, &[17, 9], false), (&[3], 4, &[7, 5], true), (&[2, 3], 2, &[5, 3, 4], false), (&[], 3, &[129], false)];
    for (i, &(frames, coils, spatial, per_frame)) in cases.iter().enumerate() {
        let k = random_kdata::<Complex32>(60 + i as u64, frames, coils, spatial, per_frame);
        let base = dir.join(format!("k{i}"));
        k.save(base.with_extension("cfl")).unwrap();
        for file in ["", "_sens", "_mask"] {
            assert!(dir.join(format!("k{i}{file}.hdr")).exists() && dir.join(format!("k{i}{file}.cfl")).exists());
        }
        assert_same_kdata(&KData::<Complex32>::load(app(), base.with_extension("hdr")).unwrap(), &k, "CFL");
    }
    // BART's dimensions: [READ, PHS1, PHS2, COIL, …, TIME (10), TIME2 (11)].
    // The first two lines are BART's; cliper's `# Cliper-Data` section (the data's size and CRC-32) follows.
    let hdr = |name: &str| {
        std::fs::read_to_string(dir.join(name)).unwrap().lines().take(2).collect::<Vec<_>>().join("\n") + "\n"
    };
    assert_eq!(hdr("k0.hdr"), "# Dimensions\n17 9 1 8\n");
    assert_eq!(hdr("k1.hdr"), "# Dimensions\n7 5 1 4 1 1 1 1 1 1 3\n");
    assert_eq!(hdr("k1_mask.hdr"), "# Dimensions\n7 5 1 1 1 1 1 1 1 1 3\n");
    assert_eq!(hdr("k2.hdr"), "# Dimensions\n5 3 4 2 1 1 1 1 1 1 2 3\n");
    assert_eq!(hdr("k3_sens.hdr"), "# Dimensions\n129 1 1 3\n");
}

#[test]
fn kdata_files_with_problems_give_errors_naming_them() {
    let dir = scratch("errors");
    let k = random_kdata::<Complex32>(70, &[], 4, &[6, 5], false);
    let path = dir.join("k.mat");
    k.save(&path).unwrap();
    let names = KSpaceMat { kspace: "data".into(), ..KSpaceMat::default() };
    let msg = KData::<Complex32>::load_mat(app(), &path, &names).unwrap_err().to_string();
    assert!(msg.contains("\"data\"") && msg.contains("kspace") && msg.contains("k.mat"), "{msg}");

    // Maps with two sets (ecalib -m2) do not fit one KData.
    let base = dir.join("two");
    k.save(base.with_extension("cfl")).unwrap();
    let two_sets = HostArray::C32(ndarray::ArrayD::zeros(ndarray::IxDyn(&[6, 5, 1, 4, 2])));
    cliper::write_cfl(dir.join("two_sens"), &two_sets).unwrap();
    let msg = KData::<Complex32>::load(app(), base.with_extension("cfl")).unwrap_err().to_string();
    assert!(msg.contains("MAPS") && msg.contains("two_sens"), "{msg}");

    // A complex mask, and c64 values that complex64 CFL cannot hold.
    let base = dir.join("cmask");
    k.save(base.with_extension("cfl")).unwrap();
    let complex_mask = HostArray::C32(ndarray::ArrayD::from_elem(ndarray::IxDyn(&[6, 5]), Complex32::new(1.0, 0.5)));
    cliper::write_cfl(dir.join("cmask_mask"), &complex_mask).unwrap();
    let msg = KData::<Complex32>::load(app(), base.with_extension("cfl")).unwrap_err().to_string();
    assert!(msg.contains("real") && msg.contains("cmask_mask"), "{msg}");
    let fine = random_kdata::<Complex64>(71, &[], 2, &[3, 3], false);
    let msg = fine.save(dir.join("fine.cfl")).unwrap_err().to_string();
    assert!(msg.contains("c32") || msg.contains("complex64") || msg.contains("exactly"), "{msg}");
    assert!(!dir.join("fine.cfl").exists());

    let msg = k.save(dir.join("k.npy")).unwrap_err().to_string();
    assert!(msg.contains(".npy"), "{msg}");
}

/// Two arrays of 24 complex64 elements each, shaped 4 × 6 and 6 × 4: pairs of one carry bytes the other's
/// header also accepts by size.
fn same_size_pairs(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf, HostArray, HostArray) {
    let values = |k: f32| (0..24).map(|i| Complex32::new(i as f32 + k, -(i as f32))).collect::<Vec<_>>();
    let a = HostArray::C32(ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[4, 6]), values(0.0)).unwrap());
    let b = HostArray::C32(ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[6, 4]), values(100.0)).unwrap());
    let (old, new) = (dir.join("scan"), dir.join("next"));
    cliper::write_cfl(&old, &a).unwrap();
    cliper::write_cfl(&new, &b).unwrap();
    (old, new, a, b)
}

#[test]
fn a_torn_cfl_pair_is_refused_naming_both_files() {
    let dir = scratch("torn");
    // A kill between the two renames of a save over `scan`: one file is the new save's, the other the old one's.
    for (replaced, kept) in [("cfl", "hdr"), ("hdr", "cfl")] {
        let (old, new, a, _) = same_size_pairs(&dir);
        assert_eq!(cliper::read_cfl(&old).unwrap(), a, "a whole pair reads back");
        std::fs::copy(new.with_extension(replaced), old.with_extension(replaced)).unwrap();
        let err = cliper::read_cfl(&old).map(|x| x.shape().to_vec()).unwrap_err().to_string();
        assert!(
            err.contains("scan.cfl") && err.contains("scan.hdr") && err.contains("torn") && !err.contains('\n'),
            "new .{replaced} beside the old .{kept}: {err}"
        );
        // In memory too.
        let header = std::fs::read_to_string(old.with_extension("hdr")).unwrap();
        let data = std::fs::read(old.with_extension("cfl")).unwrap();
        assert!(cliper::decode_cfl(&header, &data).is_err(), "decode_cfl of new .{replaced}, old .{kept}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn pairs_without_the_integrity_line_load_as_bart_wrote_them() {
    // BART writes `# Dimensions`, `# Command`, `# Files` and `# Creator` sections; no data checksum.
    let base = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/bart/phantom8");
    let header = std::fs::read_to_string(format!("{base}.hdr")).unwrap();
    assert!(!header.contains("Cliper-Data"), "{header}");
    assert_eq!(cliper::read_cfl(base).unwrap().shape(), &[96, 96, 1, 8]);
}
