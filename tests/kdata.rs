//! KData: axis bookkeeping, attached maps and masks, and zero-copy conversion.

mod common;
use cliper::{Error, KData, XData};
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
