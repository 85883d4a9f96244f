//! Element conversions of whole arrays on every core, for the common cases a batch meets on every file: a scan's
//! integers to the f32 the device computes in, a rescale into f32 or f64, labels back to int32, a mask to uint8.
//!
//! Each function gives `None` where its exact rule does not apply (a value that would change, complex data, a
//! 64-bit integer, an array not in standard layout); the caller then takes the general path
//! ([`HostArray::to_elements`], [`HostArray::cast`]), which handles every case one element at a time and names
//! the first value that would change. So these functions decide nothing the general path would not: they only
//! reach the same result sooner.

use super::host_array::{Dtype, HostArray};
use ndarray::{ArrayD, IxDyn};
use rayon::prelude::*;

/// Elements per parallel piece: large enough that splitting costs nothing, small enough to spread a slice.
const PIECE: usize = 1 << 16;

/// A real element type read as f64 exactly (every type here but 64-bit integers).
trait ExactF64: Copy + Send + Sync {
    fn f64(self) -> f64;
}

macro_rules! exact_f64 {
    ($($t:ty),*) => {$(
        impl ExactF64 for $t {
            fn f64(self) -> f64 {
                f64::from(self)
            }
        }
    )*};
}
exact_f64!(u8, i8, u16, i16, u32, i32, f32, f64);

/// A real element type written from an f64 that it holds exactly, or `None`.
trait FromF64Exact: Copy + Send + Sync + Default {
    fn from_exact(v: f64) -> Option<Self>;
}

macro_rules! integer_from_f64 {
    ($($t:ty),*) => {$(
        impl FromF64Exact for $t {
            fn from_exact(v: f64) -> Option<Self> {
                // `as` truncates and saturates (NaN to 0): the value is exact when it comes back unchanged, which
                // every type here holds exactly as an f64. (No `fract`: without SSE4.1 it is a call per element.)
                let whole = v as $t;
                (whole as f64 == v).then_some(whole)
            }
        }
    )*};
}
integer_from_f64!(u8, i8, u16, i16, u32, i32);

impl FromF64Exact for i64 {
    fn from_exact(v: f64) -> Option<i64> {
        // i64::MAX as f64 rounds up to 2^63, which i64 does not hold: the upper bound is strict.
        const LIMIT: f64 = 9_223_372_036_854_775_808.0;
        (v.fract() == 0.0 && (-LIMIT..LIMIT).contains(&v)).then_some(v as i64)
    }
}

impl FromF64Exact for f32 {
    fn from_exact(v: f64) -> Option<f32> {
        let single = v as f32;
        (f64::from(single) == v || v.is_nan()).then_some(single)
    }
}

impl FromF64Exact for f64 {
    fn from_exact(v: f64) -> Option<f64> {
        Some(v)
    }
}

/// `map` of every element of `source` (standard layout) into a new array of `shape`, on every core; `None` when
/// `map` refuses any element.
fn map_all<S: ExactF64, D: FromF64Exact>(
    source: &[S],
    shape: &[usize],
    map: impl Fn(S) -> Option<D> + Sync,
) -> Option<ArrayD<D>> {
    let mut out = vec![D::default(); source.len()];
    let all = out
        .par_chunks_mut(PIECE)
        .zip(source.par_chunks(PIECE))
        .all(|(to, from)| to.iter_mut().zip(from).all(|(t, &f)| map(f).map(|v| *t = v).is_some()));
    all.then(|| ArrayD::from_shape_vec(IxDyn(shape), out).ok()).flatten()
}

/// Runs `$body` with `$s` bound to the elements of a real, standard-layout array other than 64-bit integers;
/// `None` otherwise.
macro_rules! real_slice {
    ($array:expr, $s:ident => $body:expr) => {
        match $array {
            HostArray::U8(a) => a.as_slice().and_then(|$s| $body),
            HostArray::I8(a) => a.as_slice().and_then(|$s| $body),
            HostArray::U16(a) => a.as_slice().and_then(|$s| $body),
            HostArray::I16(a) => a.as_slice().and_then(|$s| $body),
            HostArray::U32(a) => a.as_slice().and_then(|$s| $body),
            HostArray::I32(a) => a.as_slice().and_then(|$s| $body),
            HostArray::F32(a) => a.as_slice().and_then(|$s| $body),
            HostArray::F64(a) => a.as_slice().and_then(|$s| $body),
            _ => None,
        }
    };
}

/// The array converted to `dtype` when every value is exactly a value of it — after rounding half away from zero
/// when `round` and `dtype` is an integer type — as [`HostArray::cast`] with [`Scale::Raw`](crate::Scale) or
/// `Round` and no clipping gives it; `None` when a value would change otherwise (or the case is not one of
/// these: complex, 64-bit integers, not standard layout), and the general path decides.
#[cfg(feature = "chain")]
pub(crate) fn cast_exact(array: &HostArray, dtype: Dtype, round: bool) -> Option<HostArray> {
    let rows = 0..array.shape().first().copied().unwrap_or(1);
    cast_exact_rows(array, rows, dtype, round)
}

/// Indices `rows` of the first axis of `array`, converted as [`cast_exact`] converts the whole array, read in
/// place: a tile's rows go to their file's type without being copied out first. `None` also for rows outside the
/// array.
#[cfg(feature = "chain")]
pub(crate) fn cast_exact_rows(
    array: &HostArray,
    rows: std::ops::Range<usize>,
    dtype: Dtype,
    round: bool,
) -> Option<HostArray> {
    let mut shape = array.shape().to_vec();
    let inner: usize = shape.iter().skip(1).product();
    match shape.first_mut() {
        Some(extent) if rows.start <= rows.end && rows.end <= *extent => *extent = rows.len(),
        Some(_) => return None,
        // A 0-d array has one element, taken whole.
        None if rows == (0..1) => {}
        None => return None,
    }
    let span = rows.start * inner..rows.end * inner;
    let integer = !matches!(dtype, Dtype::F32 | Dtype::F64);
    let prepare = move |v: f64| if round && integer { v.round() } else { v };
    macro_rules! to {
        ($t:ty, $variant:ident) => {
            real_slice!(array, s => s.get(span.clone())
                .and_then(|s| map_all(s, &shape, |v| <$t>::from_exact(prepare(v.f64())))))
                .map(HostArray::$variant)
        };
    }
    match dtype {
        Dtype::U8 => to!(u8, U8),
        Dtype::I8 => to!(i8, I8),
        Dtype::U16 => to!(u16, U16),
        Dtype::I16 => to!(i16, I16),
        Dtype::U32 => to!(u32, U32),
        Dtype::I32 => to!(i32, I32),
        Dtype::I64 => to!(i64, I64),
        Dtype::F32 => to!(f32, F32),
        Dtype::F64 => to!(f64, F64),
        _ => None,
    }
}

/// The f64 array as f32 rounded to nearest (`None` for other types): how single precision takes a scan's values
/// that f32 does not hold exactly (a rescale by 0.1): each within half an f32 ulp of the f64 value.
#[cfg(feature = "chain")]
pub(crate) fn round_to_f32(array: &HostArray) -> Option<HostArray> {
    let HostArray::F64(a) = array else { return None };
    a.as_slice().and_then(|s| map_all(s, a.shape(), |v| Some(v as f32))).map(HostArray::F32)
}

/// `stored · slope + intercept` computed in f64 for every element of integer samples (as nibabel's `get_fdata` and
/// pydicom's `apply_modality_lut` compute it), held as f32 when every result is exactly an f32 value (a 12-bit CT
/// under slope 0.5 and intercept −1024), else as f64; `None` for other sample types (the general path).
pub(crate) fn rescale_real(array: &HostArray, slope: f64, intercept: f64) -> Option<HostArray> {
    if matches!(array.dtype(), Dtype::F32 | Dtype::F64) {
        return None;
    }
    let shape = array.shape().to_vec();
    let value = |v: f64| v * slope + intercept;
    real_slice!(array, s => map_all(s, &shape, |k| f32::from_exact(value(k.f64()))).map(HostArray::F32))
        .or_else(|| real_slice!(array, s => map_all(s, &shape, |k| Some(value(k.f64())))).map(HostArray::F64))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(feature = "chain")]
    use crate::Scale;

    fn i16s(v: &[i16]) -> HostArray {
        HostArray::I16(ArrayD::from_shape_vec(IxDyn(&[v.len()]), v.to_vec()).unwrap())
    }

    #[test]
    #[cfg(feature = "chain")]
    fn exact_casts_agree_with_the_general_cast_and_refuse_what_it_refuses() {
        let values = [0.0, 1.0, 0.1, 2.5, -3.0, 255.0, 256.0, -0.5, f64::NAN, 1e10];
        let x = HostArray::F64(ArrayD::from_shape_vec(IxDyn(&[values.len()]), values.to_vec()).unwrap());
        for dtype in [Dtype::U8, Dtype::I8, Dtype::U16, Dtype::I16, Dtype::U32, Dtype::I32, Dtype::F32, Dtype::F64] {
            for round in [false, true] {
                // Every single element alone, then all together: Some exactly where the general cast succeeds,
                // with the same values.
                for &value in &values {
                    let one = HostArray::F64(ArrayD::from_shape_vec(IxDyn(&[1]), vec![value]).unwrap());
                    let scale = if round { Scale::Round } else { Scale::Raw };
                    let general = one.cast(dtype, scale, false).ok();
                    let fast = cast_exact(&one, dtype, round);
                    // The fast path may leave a case to the general one (f64 → f32 rounding), never differ.
                    let same = match (&general, &fast) {
                        (Some(g), Some(f)) => format!("{g:?}") == format!("{f:?}"),
                        (_, None) => true,
                        (None, Some(_)) => false,
                    };
                    assert!(same, "{value} {dtype:?} round {round}: {general:?} vs {fast:?}");
                }
                assert!(cast_exact(&x, dtype, round).is_none() || dtype == Dtype::F64);
                let whole = HostArray::I16(ArrayD::from_shape_vec(IxDyn(&[3]), vec![-2i16, 0, 200]).unwrap());
                let expect = whole.cast(dtype, Scale::Raw, false).ok();
                assert_eq!(cast_exact(&whole, dtype, round), expect, "{dtype:?}");
            }
        }
    }

    fn long_ok(long: &HostArray) {
        let HostArray::I32(a) = long else { unreachable!() };
        let mut a = a.clone();
        a[[2 * PIECE + 5]] = 2;
        assert_eq!(rescale_real(&HostArray::I32(a), 1.0, 0.5).unwrap().dtype(), Dtype::F32);
    }

    #[test]
    fn rescales_into_f32_only_when_every_value_is_exact_there() {
        let ct = rescale_real(&i16s(&[0, 1, 2047, 4095]), 0.5, -1024.0).unwrap();
        assert_eq!(
            ct,
            HostArray::F32(ArrayD::from_shape_vec(IxDyn(&[4]), vec![-1024.0, -1023.5, -0.5, 1023.5]).unwrap())
        );
        let tenth = rescale_real(&i16s(&[0, 1, 3]), 0.1, 0.0).unwrap();
        assert_eq!(tenth, HostArray::F64(ArrayD::from_shape_vec(IxDyn(&[3]), vec![0.0, 0.1, 3.0 * 0.1]).unwrap()));
        #[cfg(feature = "chain")]
        assert_eq!(round_to_f32(&tenth).unwrap().dtype(), Dtype::F32);
        // Pieces past the first: a value that is not exact deep in the array still sends it to f64.
        let mut long = vec![2i32; 3 * PIECE];
        long[2 * PIECE + 5] = 16_777_217; // 2²⁴ + 1.5 is not an f32
        let long = HostArray::I32(ArrayD::from_shape_vec(IxDyn(&[long.len()]), long).unwrap());
        assert_eq!(rescale_real(&long, 1.0, 0.5).unwrap().dtype(), Dtype::F64);
        long_ok(&long);
    }

    #[test]
    #[cfg(feature = "chain")]
    fn rows_convert_as_the_same_rows_copied_out_do() {
        let a = ArrayD::from_shape_fn(IxDyn(&[7, 3, 5]), |d| (d[0] * 15 + d[1] * 5 + d[2]) as f32 * 0.5);
        let tile = HostArray::F32(a);
        for rows in [0..7, 2..5, 6..7, 3..3] {
            for round in [false, true] {
                let copied = cast_exact(&tile.slab(0, rows.clone()).unwrap(), Dtype::U8, round);
                assert_eq!(cast_exact_rows(&tile, rows.clone(), Dtype::U8, round), copied, "{rows:?} {round}");
            }
        }
        // Rows 0..1 hold only whole halves (0, 0.5 …): not exact as integers, exact once rounded.
        assert!(cast_exact_rows(&tile, 0..1, Dtype::I16, false).is_none());
        assert_eq!(cast_exact_rows(&tile, 0..1, Dtype::I16, true).unwrap().shape(), &[1, 3, 5]);
        assert!(cast_exact_rows(&tile, 5..8, Dtype::F64, false).is_none(), "rows past the end");
        let scalar = HostArray::F64(ArrayD::from_elem(IxDyn(&[]), 3.0));
        assert_eq!(cast_exact_rows(&scalar, 0..1, Dtype::U8, false).unwrap().shape(), &[] as &[usize]);
    }
}
