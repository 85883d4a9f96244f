//! What files hold on the host: the element types ([`Dtype`]) and arrays of them ([`HostArray`]), with lossless
//! conversion to and from the device's element types.

use crate::element::Element;
use crate::error::{Error, Result};
use ndarray::ArrayD;
use num_complex::{Complex32, Complex64};
use std::path::Path;

/// The element type of an array in a file.
///
/// ```
/// use cliper::Dtype;
/// assert_eq!(Dtype::parse("u16")?, Dtype::U16);
/// assert_eq!((Dtype::C64.size(), Dtype::C64.name()), (16, "c64"));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// 8-bit unsigned.
    U8,
    /// 16-bit unsigned.
    U16,
    /// 32-bit unsigned.
    U32,
    /// 64-bit unsigned.
    U64,
    /// 8-bit signed.
    I8,
    /// 16-bit signed.
    I16,
    /// 32-bit signed.
    I32,
    /// 64-bit signed.
    I64,
    /// 32-bit float.
    F32,
    /// 64-bit float.
    F64,
    /// Complex of two 32-bit floats.
    C32,
    /// Complex of two 64-bit floats.
    C64,
}

impl Dtype {
    /// Every type, in the order of this enum.
    pub const ALL: [Dtype; 12] = [
        Dtype::U8,
        Dtype::U16,
        Dtype::U32,
        Dtype::U64,
        Dtype::I8,
        Dtype::I16,
        Dtype::I32,
        Dtype::I64,
        Dtype::F32,
        Dtype::F64,
        Dtype::C32,
        Dtype::C64,
    ];

    /// The short name (`u8`, `i16`, `f32`, `c64`, …), as the CLI and messages spell it.
    ///
    /// ```
    /// use cliper::Dtype;
    /// assert_eq!(Dtype::C32.name(), "c32");
    /// assert_eq!(Dtype::parse("i16")?, Dtype::I16);
    /// assert!(Dtype::parse("f16").unwrap_err().to_string().contains("f16"));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Dtype::U8 => "u8",
            Dtype::U16 => "u16",
            Dtype::U32 => "u32",
            Dtype::U64 => "u64",
            Dtype::I8 => "i8",
            Dtype::I16 => "i16",
            Dtype::I32 => "i32",
            Dtype::I64 => "i64",
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
            Dtype::C32 => "c32",
            Dtype::C64 => "c64",
        }
    }

    /// The type of a short name.
    pub fn parse(name: &str) -> Result<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Dtype::ALL.iter().map(|d| d.name()).collect();
            Error::invalid("Dtype", format!("unknown element type {name:?}; expected one of {}", names.join(", ")))
        })
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Dtype::U8 | Dtype::I8 => 1,
            Dtype::U16 | Dtype::I16 => 2,
            Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
            Dtype::U64 | Dtype::I64 | Dtype::F64 | Dtype::C32 => 8,
            Dtype::C64 => 16,
        }
    }

    /// Whether the type is complex (`c32`, `c64`).
    ///
    /// ```
    /// assert!(cliper::Dtype::C32.is_complex() && !cliper::Dtype::F64.is_complex());
    /// ```
    pub fn is_complex(self) -> bool {
        matches!(self, Dtype::C32 | Dtype::C64)
    }

    /// Whether the type is a real float (`f32`, `f64`).
    ///
    /// ```
    /// assert!(cliper::Dtype::F32.is_float() && !cliper::Dtype::I16.is_float());
    /// ```
    pub fn is_float(self) -> bool {
        matches!(self, Dtype::F32 | Dtype::F64)
    }
}

/// An array read from a file, in the element type the file holds.
///
/// ```
/// use cliper::{Dtype, HostArray};
/// let a = cliper::read_file("data/phantom_256.png")?; // the file's own type: 16-bit grey
/// assert_eq!((a.dtype(), a.shape()), (Dtype::U16, &[256, 256][..]));
/// let exact = a.to_elements::<f32>("data/phantom_256.png")?; // u16 fits f32 exactly
/// assert_eq!(exact.shape(), &[256, 256]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum HostArray {
    U8(ArrayD<u8>),
    U16(ArrayD<u16>),
    U32(ArrayD<u32>),
    U64(ArrayD<u64>),
    I8(ArrayD<i8>),
    I16(ArrayD<i16>),
    I32(ArrayD<i32>),
    I64(ArrayD<i64>),
    F32(ArrayD<f32>),
    F64(ArrayD<f64>),
    C32(ArrayD<Complex32>),
    C64(ArrayD<Complex64>),
}

/// Runs `$body` with `$a` bound to the ndarray inside any variant.
macro_rules! each_variant {
    ($value:expr, $a:ident => $body:expr) => {
        match $value {
            HostArray::U8($a) => $body,
            HostArray::U16($a) => $body,
            HostArray::U32($a) => $body,
            HostArray::U64($a) => $body,
            HostArray::I8($a) => $body,
            HostArray::I16($a) => $body,
            HostArray::I32($a) => $body,
            HostArray::I64($a) => $body,
            HostArray::F32($a) => $body,
            HostArray::F64($a) => $body,
            HostArray::C32($a) => $body,
            HostArray::C64($a) => $body,
        }
    };
}
pub(crate) use each_variant;

impl HostArray {
    /// The array with its axes reordered — axis `k` of the result is axis `order[k]` — stored row-major again.
    /// `order` must be a permutation of the axes (readers build it from the shape).
    pub(crate) fn permuted(&self, order: &[usize]) -> HostArray {
        macro_rules! each {
            ($($v:ident),*) => {
                match self {
                    $(HostArray::$v(a) => HostArray::$v(
                        a.view().permuted_axes(ndarray::IxDyn(order)).as_standard_layout().into_owned()
                    ),)*
                }
            };
        }
        each!(U8, U16, U32, U64, I8, I16, I32, I64, F32, F64, C32, C64)
    }

    /// A copy of indices `rows` along `axis` (every index of the other axes); `None` when `axis` or `rows` is
    /// outside the shape.
    ///
    /// ```
    /// use cliper::HostArray;
    /// let a = HostArray::U8(ndarray::arr2(&[[1u8, 2], [3, 4], [5, 6]]).into_dyn());
    /// assert_eq!(a.slab(0, 1..3), Some(HostArray::U8(ndarray::arr2(&[[3u8, 4], [5, 6]]).into_dyn())));
    /// assert_eq!(a.slab(1, 1..2).map(|s| s.shape().to_vec()), Some(vec![3, 1]));
    /// assert_eq!(a.slab(0, 2..4), None);
    /// ```
    pub fn slab(&self, axis: usize, rows: std::ops::Range<usize>) -> Option<HostArray> {
        let extent = *self.shape().get(axis)?;
        if rows.start > rows.end || rows.end > extent {
            return None;
        }
        let slice = ndarray::Slice::from(rows);
        macro_rules! each {
            ($($v:ident),*) => {
                match self {
                    $(HostArray::$v(a) => HostArray::$v(a.slice_axis(ndarray::Axis(axis), slice).to_owned()),)*
                }
            };
        }
        Some(each!(U8, U16, U32, U64, I8, I16, I32, I64, F32, F64, C32, C64))
    }

    /// Writes `slab` (same type; the shape of `self` but along `axis`) at index `start` of `axis`; `false`, and
    /// nothing written, when it does not fit.
    ///
    /// ```
    /// use cliper::HostArray;
    /// let mut a = HostArray::F32(ndarray::ArrayD::zeros(ndarray::IxDyn(&[3, 2])));
    /// assert!(a.set_slab(0, 1, &HostArray::F32(ndarray::arr2(&[[1.0f32, 2.0]]).into_dyn())));
    /// assert_eq!(a, HostArray::F32(ndarray::arr2(&[[0.0f32, 0.0], [1.0, 2.0], [0.0, 0.0]]).into_dyn()));
    /// assert!(!a.set_slab(0, 3, &HostArray::F32(ndarray::arr2(&[[1.0f32, 2.0]]).into_dyn())));
    /// ```
    pub fn set_slab(&mut self, axis: usize, start: usize, slab: &HostArray) -> bool {
        let rows = slab.shape().get(axis).copied().unwrap_or(0);
        let fits = self.shape().len() == slab.shape().len()
            && self.shape().iter().zip(slab.shape()).enumerate().all(
                |(k, (&n, &m))| {
                    if k == axis { start + m <= n } else { n == m }
                },
            );
        if !fits {
            return false;
        }
        let slice = ndarray::Slice::from(start..start + rows);
        macro_rules! each {
            ($($v:ident),*) => {
                match (self, slab) {
                    $((HostArray::$v(a), HostArray::$v(b)) => {
                        a.slice_axis_mut(ndarray::Axis(axis), slice).assign(b);
                        true
                    })*
                    _ => false,
                }
            };
        }
        each!(U8, U16, U32, U64, I8, I16, I32, I64, F32, F64, C32, C64)
    }

    /// An array of zeros of `dtype` and `shape`.
    ///
    /// ```
    /// let a = cliper::HostArray::zeros(cliper::Dtype::U16, &[2, 3]);
    /// assert_eq!((a.dtype(), a.shape()), (cliper::Dtype::U16, &[2usize, 3][..]));
    /// ```
    pub fn zeros(dtype: Dtype, shape: &[usize]) -> HostArray {
        let shape = ndarray::IxDyn(shape);
        match dtype {
            Dtype::U8 => HostArray::U8(ArrayD::zeros(shape)),
            Dtype::U16 => HostArray::U16(ArrayD::zeros(shape)),
            Dtype::U32 => HostArray::U32(ArrayD::zeros(shape)),
            Dtype::U64 => HostArray::U64(ArrayD::zeros(shape)),
            Dtype::I8 => HostArray::I8(ArrayD::zeros(shape)),
            Dtype::I16 => HostArray::I16(ArrayD::zeros(shape)),
            Dtype::I32 => HostArray::I32(ArrayD::zeros(shape)),
            Dtype::I64 => HostArray::I64(ArrayD::zeros(shape)),
            Dtype::F32 => HostArray::F32(ArrayD::zeros(shape)),
            Dtype::F64 => HostArray::F64(ArrayD::zeros(shape)),
            Dtype::C32 => HostArray::C32(ArrayD::zeros(shape)),
            Dtype::C64 => HostArray::C64(ArrayD::zeros(shape)),
        }
    }

    /// The host array holding device elements `a` in the matching file type (f32, f64, c32 or c64), exactly.
    ///
    /// ```
    /// use cliper::HostArray;
    /// let a = ndarray::arr1(&[1.5f32, -2.0]).into_dyn();
    /// assert_eq!(HostArray::from_elements(a.clone()), HostArray::F32(a));
    /// ```
    pub fn from_elements<T: Element>(a: ArrayD<T>) -> HostArray {
        // The four element types are the four file types: the array moves in without a copy.
        let mut slot = Some(a);
        let any = &mut slot as &mut dyn std::any::Any;
        if let Some(a) = any.downcast_mut::<Option<ArrayD<f32>>>().and_then(Option::take) {
            return HostArray::F32(a);
        }
        if let Some(a) = any.downcast_mut::<Option<ArrayD<f64>>>().and_then(Option::take) {
            return HostArray::F64(a);
        }
        if let Some(a) = any.downcast_mut::<Option<ArrayD<Complex32>>>().and_then(Option::take) {
            return HostArray::C32(a);
        }
        if let Some(a) = any.downcast_mut::<Option<ArrayD<num_complex::Complex64>>>().and_then(Option::take) {
            return HostArray::C64(a);
        }
        let Some(a) = slot else { return HostArray::F32(ArrayD::zeros(ndarray::IxDyn(&[0]))) };
        // `to_c64` is exact for every element type, so narrowing back to T's own width changes nothing.
        match (T::IS_COMPLEX, T::IS_DOUBLE) {
            (false, false) => HostArray::F32(a.mapv(|v| v.to_c64().re as f32)),
            (false, true) => HostArray::F64(a.mapv(|v| v.to_c64().re)),
            (true, false) => HostArray::C32(a.mapv(|v| {
                let z = v.to_c64();
                Complex32::new(z.re as f32, z.im as f32)
            })),
            (true, true) => HostArray::C64(a.mapv(|v| v.to_c64())),
        }
    }

    /// The array itself when it holds exactly `T` (f32 as f32, …), for copies to the device without conversion.
    #[cfg(feature = "chain")]
    pub(crate) fn as_elements<T: Element>(&self) -> Option<&ArrayD<T>> {
        let inner: &dyn std::any::Any = match self {
            HostArray::F32(a) => a,
            HostArray::F64(a) => a,
            HostArray::C32(a) => a,
            HostArray::C64(a) => a,
            _ => return None,
        };
        inner.downcast_ref::<ArrayD<T>>()
    }

    /// [`HostArray::as_elements`], to write into.
    #[cfg(feature = "chain")]
    pub(crate) fn as_elements_mut<T: Element>(&mut self) -> Option<&mut ArrayD<T>> {
        let inner: &mut dyn std::any::Any = match self {
            HostArray::F32(a) => a,
            HostArray::F64(a) => a,
            HostArray::C32(a) => a,
            HostArray::C64(a) => a,
            _ => return None,
        };
        inner.downcast_mut::<ArrayD<T>>()
    }

    /// The host budget's check of a conversion to `T`s: the converted copy is the only allocation, held together
    /// with the array it comes from.
    pub(crate) fn check_conversion_to<T: Element>(&self, path: &Path) -> Result<()> {
        let elements = self.shape().iter().product::<usize>();
        let converted = (elements as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        let what = format!("converting the {} data of shape {:?} to {}", self.dtype().name(), self.shape(), T::NAME);
        super::host_budget::check_host_memory(path, &what, converted.saturating_add(self.bytes()))
    }

    /// The array itself when its elements are `T`s.
    #[cfg(feature = "chain")]
    pub(crate) fn into_elements<T: Element>(self) -> Option<ArrayD<T>> {
        let inner: Box<dyn std::any::Any> = match self {
            HostArray::F32(a) => Box::new(a),
            HostArray::F64(a) => Box::new(a),
            HostArray::C32(a) => Box::new(a),
            HostArray::C64(a) => Box::new(a),
            _ => return None,
        };
        inner.downcast::<ArrayD<T>>().ok().map(|b| *b)
    }

    /// The element type.
    pub fn dtype(&self) -> Dtype {
        match self {
            HostArray::U8(_) => Dtype::U8,
            HostArray::U16(_) => Dtype::U16,
            HostArray::U32(_) => Dtype::U32,
            HostArray::U64(_) => Dtype::U64,
            HostArray::I8(_) => Dtype::I8,
            HostArray::I16(_) => Dtype::I16,
            HostArray::I32(_) => Dtype::I32,
            HostArray::I64(_) => Dtype::I64,
            HostArray::F32(_) => Dtype::F32,
            HostArray::F64(_) => Dtype::F64,
            HostArray::C32(_) => Dtype::C32,
            HostArray::C64(_) => Dtype::C64,
        }
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        each_variant!(self, a => a.shape())
    }

    /// The array in a device element type, converted without loss: every value must be exactly representable in
    /// `T` (integers up to 2²⁴ in `f32`, f64 values that are exact f32 values, …), and complex data needs a
    /// complex `T`. Otherwise an error names the file and both types: [`Error::Type`] for complex data into a real
    /// `T`, [`Error::Inexact`] with the first value that would change. `path` is only used in messages.
    ///
    /// ```
    /// use cliper::HostArray;
    /// let a = HostArray::U16(ndarray::arr1(&[0u16, 65535]).into_dyn());
    /// assert_eq!(a.to_elements::<f32>("x.npy")?.into_raw_vec_and_offset().0, vec![0.0, 65535.0]);
    /// let big = HostArray::I32(ndarray::arr1(&[16_777_217]).into_dyn());
    /// assert!(big.to_elements::<f32>("x.npy").unwrap_err().to_string().contains("16777217"));
    /// assert!(big.to_elements::<f64>("x.npy").is_ok());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn to_elements<T: Element>(&self, path: impl AsRef<Path>) -> Result<ArrayD<T>> {
        let path = path.as_ref();
        if matches!(self, HostArray::C32(_) | HostArray::C64(_)) && !T::IS_COMPLEX {
            return Err(Error::Type {
                op: format!("loading {}", path.display()),
                expected: T::NAME,
                got: self.dtype().name(),
                note: Some("complex data cannot load into a real array; load it as c32 or c64".into()),
            });
        }
        self.check_conversion_to::<T>(path)?;
        let elements = self.shape().iter().product::<usize>();
        // Every value goes through complex float64, one at a time, which holds every type exactly except 64-bit
        // integers past 2⁵³; those and narrowings to f32 are checked by converting back.
        let mut out = Vec::with_capacity(elements);
        let mut first_change = None;
        each_variant!(self, a => {
            for &value in a.iter() {
                let (z, exact) = Widen::as_complex64(value);
                let v = T::from_c64(z);
                if !exact || (v.to_c64() != z && !(z.re.is_nan() || z.im.is_nan())) {
                    first_change = Some(z);
                    break;
                }
                out.push(v);
            }
        });
        if let Some(z) = first_change {
            return Err(Error::Inexact {
                path: path.to_path_buf(),
                stored: self.dtype().name(),
                value: show(z),
                wanted: T::NAME,
            });
        }
        ArrayD::from_shape_vec(ndarray::IxDyn(self.shape()), out)
            .map_err(|e| Error::Format { path: path.to_path_buf(), reason: format!("shape {:?}: {e}", self.shape()) })
    }

    /// Bytes the elements take.
    ///
    /// ```
    /// assert_eq!(cliper::HostArray::zeros(cliper::Dtype::I16, &[3, 5]).bytes(), 30);
    /// ```
    pub fn bytes(&self) -> u64 {
        (self.shape().iter().product::<usize>() as u64).saturating_mul(self.dtype().size() as u64)
    }
}

fn show(z: Complex64) -> String {
    show_value(z, false)
}

/// A value as people read it: [`show_number`] of the real part, and `±` the imaginary part with an `i` when
/// it is not zero.
///
/// ```
/// use cliper::show_value;
/// use num_complex::Complex64;
/// assert_eq!(show_value(Complex64::new(1.5, 0.0), false), "1.5");
/// assert_eq!(show_value(Complex64::new(1.0, 2.0), false), "1+2i");
/// assert_eq!(show_value(Complex64::new(0.1f32 as f64, -1e-9), true), "0.1-1e-9i");
/// ```
pub fn show_value(z: Complex64, single: bool) -> String {
    if z.im == 0.0 {
        show_number(z.re, single)
    } else {
        let sign = if z.im < 0.0 { '-' } else { '+' };
        format!("{}{sign}{}i", show_number(z.re, single), show_number(z.im.abs(), single))
    }
}

/// A number as people read it in a message: the shortest digits that give it back (those of an f32 when
/// `single`), in exponent form when it is tiny or huge — never 300 zeros.
///
/// ```
/// use cliper::show_number;
/// assert_eq!(show_number(0.1f32 as f64, true), "0.1");
/// assert_eq!(show_number(6.7e-10, false), "6.7e-10");
/// assert_eq!(show_number(1e300, false), "1e300");
/// assert_eq!(show_number(-1000.0, false), "-1000");
/// ```
pub fn show_number(v: f64, single: bool) -> String {
    let plain = v == 0.0 || !v.is_finite() || (1e-4..1e15).contains(&v.abs());
    match (single, plain) {
        (true, true) => format!("{}", v as f32),
        (true, false) => format!("{:e}", v as f32),
        (false, true) => format!("{v}"),
        (false, false) => format!("{v:e}"),
    }
}

/// A value as complex float64, and whether that is exact.
pub(super) trait Widen: Copy {
    fn as_complex64(self) -> (Complex64, bool);
}
macro_rules! widen_small {
    ($($t:ty),*) => {$(impl Widen for $t {
        fn as_complex64(self) -> (Complex64, bool) { (Complex64::new(f64::from(self), 0.0), true) }
    })*};
}
widen_small!(u8, u16, u32, i8, i16, i32, f32, f64);
impl Widen for u64 {
    fn as_complex64(self) -> (Complex64, bool) {
        let f = self as f64;
        (Complex64::new(f, 0.0), f < 18_446_744_073_709_551_616.0 && f as u64 == self)
    }
}
impl Widen for i64 {
    fn as_complex64(self) -> (Complex64, bool) {
        let f = self as f64;
        (Complex64::new(f, 0.0), f < 9_223_372_036_854_775_808.0 && f as i64 == self)
    }
}
impl Widen for Complex32 {
    fn as_complex64(self) -> (Complex64, bool) {
        (Complex64::new(f64::from(self.re), f64::from(self.im)), true)
    }
}
impl Widen for Complex64 {
    fn as_complex64(self) -> (Complex64, bool) {
        (self, true)
    }
}
