//! Element types an array can hold: `f32`, `f64`, `Complex<f32>`, `Complex<f64>`.
//!
//! The trait is sealed: kernels are written once in OpenCL C against the macros `T` (element), `R` (its real
//! type), `IS_COMPLEX` and `IS_DOUBLE`, and [`Element::build_options`] supplies them, so one source serves all
//! four types.

use crate::kernel_args::KernelScalar;
use num_complex::Complex;
use std::fmt::Debug;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for num_complex::Complex<f32> {}
    impl Sealed for num_complex::Complex<f64> {}

    /// What the host's FFT (rustfft) needs of a complex element: its parts' type, and the values as
    /// `Complex<Parts>` (they are exactly that; the trait only names it where the type is generic).
    pub trait Spectral: Sized {
        type Parts: rustfft::FftNum + Into<f64>;
        fn spectral_mut(values: &mut [Self]) -> &mut [num_complex::Complex<Self::Parts>];
    }
    impl<R: rustfft::FftNum + Into<f64>> Spectral for num_complex::Complex<R> {
        type Parts = R;
        fn spectral_mut(values: &mut [Self]) -> &mut [Self] {
            values
        }
    }
}
pub(crate) use sealed::Spectral;

/// A type cliper arrays can hold on the device. Values of it can also be passed to kernels by value
/// ([`KernelScalar`]), as `alpha` factors and the like.
///
/// `Complex<f32>` and `Complex<f64>` are `repr(C)` pairs, the same layout as OpenCL's `float2`/`double2`. Sums
/// and products are the types' own (the host paths of CPU devices compute with them).
///
/// ```
/// use cliper::Element;
/// use num_complex::Complex32;
/// assert_eq!(<f32 as Element>::CL_TYPE, "float");
/// assert_eq!(Complex32::CL_TYPE, "float2");
/// assert!(Complex32::IS_COMPLEX && !Complex32::IS_DOUBLE);
/// assert!(<f64 as Element>::build_options().contains("-DT=double"));
/// ```
pub trait Element:
    sealed::Sealed
    + KernelScalar
    + Copy
    + Default
    + PartialEq
    + Debug
    + Send
    + Sync
    + 'static
    + std::ops::Add<Output = Self>
    + std::ops::Mul<Output = Self>
{
    /// The real type underneath: `f32` for `f32` and `Complex<f32>`, `f64` for the other two.
    type Real: RealElement;
    /// The complex type of the same precision: `Complex<f32>` for `f32` and `Complex<f32>`, `Complex<f64>` for
    /// the other two (where FFT-based processes compute).
    type Complex: ComplexElement;
    /// The OpenCL C type name (`float`, `double`, `float2`, `double2`).
    const CL_TYPE: &'static str;
    /// The Rust-side name used in messages and file formats (`f32`, `f64`, `c32`, `c64`).
    const NAME: &'static str;
    /// True for the complex types.
    const IS_COMPLEX: bool;
    /// True when the type needs the device's fp64 support.
    const IS_DOUBLE: bool;

    /// The `-D` options that make a generic kernel source compile for this type.
    fn build_options() -> String {
        format!(
            "-DT={} -DR={} -DIS_COMPLEX={} -DIS_DOUBLE={}",
            Self::CL_TYPE,
            <Self::Real as Element>::CL_TYPE,
            u8::from(Self::IS_COMPLEX),
            u8::from(Self::IS_DOUBLE)
        )
    }

    /// Widens to `Complex<f64>` (imaginary part 0 for real types); handy for references in float64.
    fn to_c64(self) -> Complex<f64>;

    /// Narrows from `Complex<f64>` (real types keep the real part).
    fn from_c64(value: Complex<f64>) -> Self;

    /// The complex conjugate (the identity for real types).
    fn conj(self) -> Self;

    /// The values as their memory holds them, real and imaginary parts in turn (real types: unchanged).
    ///
    /// ```
    /// use cliper::Element;
    /// use num_complex::Complex32;
    /// assert_eq!(Complex32::as_reals(&[Complex32::new(1.0, 2.0), Complex32::new(3.0, 4.0)]), &[1.0, 2.0, 3.0, 4.0]);
    /// assert_eq!(f64::as_reals(&[5.0]), &[5.0]);
    /// ```
    fn as_reals(values: &[Self]) -> &[Self::Real];
}

/// The real element types, `f32` and `f64`.
///
/// ```
/// fn norm2<T: cliper::Element>(v: &[T]) -> f64 { v.iter().map(|x| x.to_c64().norm_sqr()).sum::<f64>().sqrt() }
/// fn real_only<T: cliper::RealElement>(_: &[T]) {}
/// real_only(&[1.0f32]);
/// assert_eq!(norm2(&[3.0f64, 4.0]), 5.0);
/// ```
pub trait RealElement: Element<Real = Self> {}

/// The complex element types, `Complex<f32>` and `Complex<f64>` (the only ones k-space data may hold).
///
/// ```
/// use cliper::{ComplexElement, Element};
/// fn phase<T: ComplexElement>(v: T) -> f64 { v.to_c64().arg() }
/// assert_eq!(phase(num_complex::Complex32::new(0.0, 1.0)), std::f64::consts::FRAC_PI_2);
/// ```
pub trait ComplexElement: Element + sealed::Spectral {}

impl Element for f32 {
    type Real = f32;
    type Complex = Complex<f32>;
    const CL_TYPE: &'static str = "float";
    const NAME: &'static str = "f32";
    const IS_COMPLEX: bool = false;
    const IS_DOUBLE: bool = false;
    fn to_c64(self) -> Complex<f64> {
        Complex::new(f64::from(self), 0.0)
    }
    fn from_c64(value: Complex<f64>) -> Self {
        value.re as f32
    }
    fn conj(self) -> Self {
        self
    }
    fn as_reals(values: &[f32]) -> &[f32] {
        values
    }
}

impl Element for f64 {
    type Real = f64;
    type Complex = Complex<f64>;
    const CL_TYPE: &'static str = "double";
    const NAME: &'static str = "f64";
    const IS_COMPLEX: bool = false;
    const IS_DOUBLE: bool = true;
    fn to_c64(self) -> Complex<f64> {
        Complex::new(self, 0.0)
    }
    fn from_c64(value: Complex<f64>) -> Self {
        value.re
    }
    fn conj(self) -> Self {
        self
    }
    fn as_reals(values: &[f64]) -> &[f64] {
        values
    }
}

impl Element for Complex<f32> {
    type Real = f32;
    type Complex = Complex<f32>;
    const CL_TYPE: &'static str = "float2";
    const NAME: &'static str = "c32";
    const IS_COMPLEX: bool = true;
    const IS_DOUBLE: bool = false;
    fn to_c64(self) -> Complex<f64> {
        Complex::new(f64::from(self.re), f64::from(self.im))
    }
    fn from_c64(value: Complex<f64>) -> Self {
        Complex::new(value.re as f32, value.im as f32)
    }
    fn conj(self) -> Self {
        Complex::conj(&self)
    }
    fn as_reals(values: &[Complex<f32>]) -> &[f32] {
        bytemuck::cast_slice(values)
    }
}

impl Element for Complex<f64> {
    type Real = f64;
    type Complex = Complex<f64>;
    const CL_TYPE: &'static str = "double2";
    const NAME: &'static str = "c64";
    const IS_COMPLEX: bool = true;
    const IS_DOUBLE: bool = true;
    fn to_c64(self) -> Complex<f64> {
        self
    }
    fn from_c64(value: Complex<f64>) -> Self {
        value
    }
    fn conj(self) -> Self {
        Complex::conj(&self)
    }
    fn as_reals(values: &[Complex<f64>]) -> &[f64] {
        bytemuck::cast_slice(values)
    }
}

impl RealElement for f32 {}
impl RealElement for f64 {}
impl ComplexElement for Complex<f32> {}
impl ComplexElement for Complex<f64> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_opencl_vector_types() {
        assert_eq!(std::mem::size_of::<Complex<f32>>(), 8);
        assert_eq!(std::mem::align_of::<Complex<f32>>(), 4);
        assert_eq!(std::mem::size_of::<Complex<f64>>(), 16);
    }

    #[test]
    fn build_options_name_real_type() {
        let o = <Complex<f64> as Element>::build_options();
        assert_eq!(o, "-DT=double2 -DR=double -DIS_COMPLEX=1 -DIS_DOUBLE=1");
    }
}
