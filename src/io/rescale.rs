//! The linear rescale medical files store beside their samples — DICOM's RescaleSlope/RescaleIntercept (CT in
//! Hounsfield units), NIfTI's scl_slope/scl_inter — applied on reading, one rule for both formats.

use super::host_array::{Dtype, HostArray, Widen, each_variant};
use ndarray::ArrayD;
use num_complex::Complex64;

/// The linear rescale a file stored beside its integer samples, and their type: the values are
/// `stored · slope + intercept` (NIfTI's scl_slope/scl_inter, DICOM's RescaleSlope/RescaleIntercept). An
/// [`Image`](crate::Image) read from such a file carries it, so that a result whose values are still stored
/// integers under it (a converted, transposed or padded scan) is written as those integers and that scaling, as
/// dcm2niix keeps int16 with scl_slope/scl_inter, rather than as the float64 values.
///
/// ```
/// use cliper::{Dtype, HostArray, Scaling};
/// let scaling = Scaling { stored: Dtype::I16, slope: 0.5, intercept: -3.0 };
/// let values = HostArray::F64(ndarray::arr1(&[-3.0, -2.5, 497.0]).into_dyn());
/// let stored = HostArray::I16(ndarray::arr1(&[0i16, 1, 1000]).into_dyn());
/// assert_eq!(scaling.unscale(&values), Some(stored));
/// let smoothed = HostArray::F64(ndarray::arr1(&[-2.75]).into_dyn()); // between two stored values
/// assert_eq!(scaling.unscale(&smoothed), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scaling {
    /// The type of the samples as stored.
    pub stored: Dtype,
    /// The factor.
    pub slope: f64,
    /// The offset.
    pub intercept: f64,
}

impl Scaling {
    /// The scaling of samples of type `stored` rescaled by `per_frame` (the (slope, intercept) pairs a reader
    /// applied): `Some` for one pair shared by every frame, other than slope 1 and intercept 0, of integers.
    pub(crate) fn applied(stored: Dtype, per_frame: &[(f64, f64)]) -> Option<Scaling> {
        match per_frame {
            [(slope, intercept)] if (*slope, *intercept) != (1.0, 0.0) && exact_integer_range(stored).is_some() => {
                Some(Scaling { stored, slope: *slope, intercept: *intercept })
            }
            _ => None,
        }
    }

    /// The stored samples behind `values`: `Some` when every value is exactly `k · slope + intercept` (computed in
    /// f64, as reading computes it; for f32 values, that rounded to f32) for an integer `k` that the stored type holds — then writing `k` with this
    /// scaling gives every reader the same values back — else `None`. Complex values, and a stored type that is
    /// not an integer type, give `None`.
    pub fn unscale(&self, values: &HostArray) -> Option<HostArray> {
        let (lo, hi) = exact_integer_range(self.stored)?;
        if values.dtype().is_complex() || self.slope == 0.0 || !self.slope.is_finite() || !self.intercept.is_finite() {
            return None;
        }
        // Values in f32 are the stored integers' when they are those values rounded to f32 (as single
        // precision takes a scan, docs/formats.md): writing the integers gives every reader the f64 values back.
        let single = values.dtype() == Dtype::F32;
        let stored_integer = |v: f64| -> Option<f64> {
            let k = ((v - self.intercept) / self.slope).round();
            let value = k * self.slope + self.intercept;
            let same = if single { f64::from(value as f32) == v } else { value == v };
            (k >= lo && k <= hi && same).then_some(k)
        };
        let integers: ArrayD<f64> = each_variant!(values, a => {
            let mut out = Vec::with_capacity(a.len());
            for v in a.iter() {
                out.push(stored_integer(v.as_complex64().0.re)?);
            }
            ArrayD::from_shape_vec(a.raw_dim(), out).ok()?
        });
        // Every value is a whole number within the stored type's range: the casts are exact.
        Some(match self.stored {
            Dtype::U8 => HostArray::U8(integers.mapv(|k| k as u8)),
            Dtype::I8 => HostArray::I8(integers.mapv(|k| k as i8)),
            Dtype::U16 => HostArray::U16(integers.mapv(|k| k as u16)),
            Dtype::I16 => HostArray::I16(integers.mapv(|k| k as i16)),
            Dtype::U32 => HostArray::U32(integers.mapv(|k| k as u32)),
            Dtype::I32 => HostArray::I32(integers.mapv(|k| k as i32)),
            _ => return None,
        })
    }
}

/// The least and greatest value of an integer type of at most 32 bits (whose every value f64 holds exactly).
fn exact_integer_range(dtype: Dtype) -> Option<(f64, f64)> {
    Some(match dtype {
        Dtype::U8 => (0.0, f64::from(u8::MAX)),
        Dtype::I8 => (f64::from(i8::MIN), f64::from(i8::MAX)),
        Dtype::U16 => (0.0, f64::from(u16::MAX)),
        Dtype::I16 => (f64::from(i16::MIN), f64::from(i16::MAX)),
        Dtype::U32 => (0.0, f64::from(u32::MAX)),
        Dtype::I32 => (f64::from(i32::MIN), f64::from(i32::MAX)),
        _ => return None,
    })
}

/// `value · slope + intercept`, in the type that holds the result exactly:
///
/// - slope 1 and intercept 0: the array as it is;
/// - integer samples with a whole slope and intercept (CT's 1 and −1024): integers again — the samples' own type
///   when every result fits it, else the smallest of i16, i32, i64 that holds the results' range;
/// - anything else: computed as `f64(value) · slope + intercept` — what pydicom's `apply_modality_lut` and
///   nibabel's `get_fdata()` give — and held as f32 when every value of integer samples is exactly an f32 value
///   (a 12-bit CT under slope 0.5 and intercept −1024: the same values in half the bytes), else as f64 (c64 for
///   complex samples).
pub(crate) fn rescale(array: HostArray, slope: f64, intercept: f64) -> HostArray {
    if slope == 1.0 && intercept == 0.0 {
        return array;
    }
    let whole = |v: f64| v.fract() == 0.0 && v.abs() < 9.0e15;
    if array.dtype().is_float() || array.dtype().is_complex() || !whole(slope) || !whole(intercept) {
        // Integer samples (every core; f32 when it holds every value exactly), else one element at a time.
        if let Some(values) = super::fast_cast::rescale_real(&array, slope, intercept) {
            return values;
        }
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
        let x = rescale(u16s(&[0, 3]), 0.1, 0.25);
        assert_eq!(x, HostArray::F64(ArrayD::from_shape_vec(vec![2], vec![0.25, 3.0 * 0.1 + 0.25]).unwrap()));
        // The same values in f32 when it holds each of them exactly.
        let x = rescale(u16s(&[0, 3]), 0.5, 0.25);
        assert_eq!(x, HostArray::F32(ArrayD::from_shape_vec(vec![2], vec![0.25f32, 1.75]).unwrap()));
        let f = HostArray::F32(ArrayD::from_shape_vec(vec![1], vec![1.5f32]).unwrap());
        assert_eq!(rescale(f, 2.0, 0.0), HostArray::F64(ArrayD::from_shape_vec(vec![1], vec![3.0]).unwrap()));
    }
}
