//! What kernel arguments are made of: the index type kernels compute in ([`IndexType`]) and the values that
//! can be passed by value ([`KernelScalar`], which every element type is). Launching kernels on arrays is
//! `data/launch.rs`.

use num_complex::Complex;

/// The integer type a kernel uses for indices, chosen per launch from the extent it must address: 32-bit
/// arithmetic is markedly cheaper on GPUs, 64-bit is needed past 2³¹ elements.
///
/// ```
/// use cliper::IndexType;
/// assert_eq!(IndexType::for_extent(1 << 20).cl_type(), "uint");
/// assert_eq!(IndexType::for_extent(1 << 31), IndexType::U64);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexType {
    /// `uint`.
    U32,
    /// `ulong`.
    U64,
}

impl IndexType {
    /// `U32` when every index below `max_extent` (elements, with strides applied) fits in an `i32`.
    ///
    /// ```
    /// use cliper::IndexType;
    /// assert_eq!(IndexType::for_extent(1 << 20), IndexType::U32);
    /// assert_eq!(IndexType::for_extent(1 << 31), IndexType::U64);
    /// ```
    pub fn for_extent(max_extent: u64) -> IndexType {
        if max_extent < (1u64 << 31) { IndexType::U32 } else { IndexType::U64 }
    }

    /// The OpenCL C type (`uint`, `ulong`), for a `-DIDX=` build option.
    pub fn cl_type(self) -> &'static str {
        match self {
            IndexType::U32 => "uint",
            IndexType::U64 => "ulong",
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// Values that can be passed by value to a kernel: integers, floats, complex numbers, `[u64; 8]` for an
/// OpenCL `ulong8` (how cliper passes up to eight extents or strides in one argument), `[f64; 8]` for a `double8`
/// (a constant per axis), and `[i32; 4]` /
/// `[i32; 16]` for `int4` / `int16`.
///
/// ```
/// use cliper::KernelScalar;
/// assert_eq!(7u32.to_arg_bytes().len(), 4);
/// assert_eq!(num_complex::Complex64::new(1.0, 2.0).to_arg_bytes().len(), 16);
/// assert_eq!([0u64; 8].to_arg_bytes().len(), 64); // a ulong8
/// ```
pub trait KernelScalar: sealed::Sealed {
    /// The bytes OpenCL expects for this argument.
    fn to_arg_bytes(&self) -> Vec<u8>;
}

macro_rules! scalar {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl KernelScalar for $t {
            fn to_arg_bytes(&self) -> Vec<u8> { self.to_ne_bytes().to_vec() }
        }
    )*};
}
scalar!(u32, i32, u64, i64, f32, f64);

impl<F: KernelScalar + Copy> sealed::Sealed for Complex<F> {}
impl<F: KernelScalar + Copy> KernelScalar for Complex<F> {
    fn to_arg_bytes(&self) -> Vec<u8> {
        let mut b = self.re.to_arg_bytes();
        b.extend(self.im.to_arg_bytes());
        b
    }
}

// OpenCL vectors of integers: ulong8 for extents and strides, long8 for signed strides (Slice), int4/int16 for
// small signed geometry.
macro_rules! vector {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl KernelScalar for $t {
            fn to_arg_bytes(&self) -> Vec<u8> { self.iter().flat_map(|v| v.to_ne_bytes()).collect() }
        }
    )*};
}
vector!([u64; 8], [i64; 8], [f64; 8], [i32; 4], [i32; 16]);
