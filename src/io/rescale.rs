//! The linear rescale medical files store beside their samples — DICOM's RescaleSlope/RescaleIntercept (CT in
//! Hounsfield units), NIfTI's scl_slope/scl_inter — applied on reading, one rule for both formats.

use super::host_array::{Dtype, HostArray, Widen, each_variant};
use ndarray::ArrayD;
use num_complex::Complex64;

/// `value · slope + intercept`, in the type that holds the result exactly:
///
/// - slope 1 and intercept 0: the array as it is;
/// - integer samples with a whole slope and intercept (CT's 1 and −1024): integers again — the samples' own type
///   when every result fits it, else the smallest of i16, i32, i64 that holds the results' range;
/// - anything else: f64 (c64 for complex samples), computed as `f64(value) · slope + intercept` — what pydicom's
///   `apply_modality_lut` and nibabel's `get_fdata()` give.
pub(crate) fn rescale(array: HostArray, slope: f64, intercept: f64) -> HostArray {
    if slope == 1.0 && intercept == 0.0 {
        return array;
    }
    let whole = |v: f64| v.fract() == 0.0 && v.abs() < 9.0e15;
    if array.dtype().is_float() || array.dtype().is_complex() || !whole(slope) || !whole(intercept) {
        return match array {
            HostArray::C32(_) | HostArray::C64(_) => {
                let values: ArrayD<Complex64> = each_variant!(&array, a => a.mapv(|v| v.as_complex64().0));
                HostArray::C64(values.mapv(|z| z * slope + intercept))
            }
            _ => HostArray::F64(each_variant!(&array, a => a.mapv(|v| v.as_complex64().0.re * slope + intercept))),
        };
    }
    // Whole numbers throughout: exact in i128 (slope and intercept below 2⁵³; 64-bit samples past 2⁵³, which no
    // scanner writes, pass through f64 on the way).
    let (slope, intercept) = (slope as i128, intercept as i128);
    let values: ArrayD<i128> =
        each_variant!(&array, a => a.mapv(|v| v.as_complex64().0.re as i128 * slope + intercept));
    let (lo, hi) = values.iter().fold((0i128, 0i128), |(l, h), &v| (l.min(v), h.max(v)));
    let fits = |dtype: Dtype| match dtype {
        Dtype::U8 => lo >= 0 && hi <= u8::MAX as i128,
        Dtype::U16 => lo >= 0 && hi <= u16::MAX as i128,
        Dtype::U32 => lo >= 0 && hi <= u32::MAX as i128,
        Dtype::U64 => lo >= 0 && hi <= u64::MAX as i128,
        Dtype::I8 => lo >= i8::MIN as i128 && hi <= i8::MAX as i128,
        Dtype::I16 => lo >= i16::MIN as i128 && hi <= i16::MAX as i128,
        Dtype::I32 => lo >= i32::MIN as i128 && hi <= i32::MAX as i128,
        Dtype::I64 => lo >= i64::MIN as i128 && hi <= i64::MAX as i128,
        _ => false,
    };
    let own = array.dtype();
    let target = [own, Dtype::I16, Dtype::I32, Dtype::I64].into_iter().find(|&d| fits(d));
    // `fits` checked the range: the `as` conversions are exact.
    match target {
        Some(Dtype::U8) => HostArray::U8(values.mapv(|v| v as u8)),
        Some(Dtype::U16) => HostArray::U16(values.mapv(|v| v as u16)),
        Some(Dtype::U32) => HostArray::U32(values.mapv(|v| v as u32)),
        Some(Dtype::U64) => HostArray::U64(values.mapv(|v| v as u64)),
        Some(Dtype::I8) => HostArray::I8(values.mapv(|v| v as i8)),
        Some(Dtype::I16) => HostArray::I16(values.mapv(|v| v as i16)),
        Some(Dtype::I32) => HostArray::I32(values.mapv(|v| v as i32)),
        Some(Dtype::I64) => HostArray::I64(values.mapv(|v| v as i64)),
        _ => HostArray::F64(values.mapv(|v| v as f64)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u16s(v: &[u16]) -> HostArray {
        HostArray::U16(ArrayD::from_shape_vec(vec![v.len()], v.to_vec()).unwrap())
    }

    #[test]
    fn ct_numbers_become_hounsfield_units_in_a_signed_type() {
        let hu = rescale(u16s(&[0, 1024, 4095]), 1.0, -1024.0);
        assert_eq!(hu, HostArray::I16(ArrayD::from_shape_vec(vec![3], vec![-1024i16, 0, 3071]).unwrap()));
        // Results that stay in the samples' type keep it; wider ones widen.
        assert_eq!(rescale(u16s(&[1, 2]), 2.0, 10.0).dtype(), Dtype::U16);
        assert_eq!(rescale(u16s(&[0, 65535]), 1.0, -1.0).dtype(), Dtype::I32);
        assert_eq!(rescale(u16s(&[7]), 1.0, 0.0), u16s(&[7]));
    }

    #[test]
    fn fractional_rescales_give_float64_as_pydicom_and_nibabel_do() {
        let x = rescale(u16s(&[0, 3]), 0.5, 0.25);
        assert_eq!(x, HostArray::F64(ArrayD::from_shape_vec(vec![2], vec![0.25, 1.75]).unwrap()));
        let f = HostArray::F32(ArrayD::from_shape_vec(vec![1], vec![1.5f32]).unwrap());
        assert_eq!(rescale(f, 2.0, 0.0), HostArray::F64(ArrayD::from_shape_vec(vec![1], vec![3.0]).unwrap()));
    }
}
