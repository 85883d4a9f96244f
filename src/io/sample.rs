//! [`Sample`]: one number type's bytes in either byte order — the single place RAW, CFL and MAT files turn
//! bytes into numbers and back.

use num_complex::Complex;

/// A number with a fixed-size byte form in little- or big-endian order (complex: real part, then imaginary).
pub(crate) trait Sample: Copy {
    /// Bytes per value.
    const SIZE: usize;
    /// The value in the first `SIZE` bytes of `bytes`.
    fn read(bytes: &[u8], little: bool) -> Self;
    /// Appends the value's bytes to `out`.
    fn write(self, little: bool, out: &mut Vec<u8>);
    /// The bytes of `values` as they lie in memory (the host's byte order), for the types whose memory is their
    /// bytes; `None` for the others.
    fn memory_bytes(_values: &[Self]) -> Option<&[u8]> {
        None
    }
    /// The values of `bytes` in the host's byte order, copied as they lie (a length that is a multiple of
    /// `SIZE`); `None` where [`Sample::memory_bytes`] is.
    fn from_memory_bytes(_bytes: &[u8]) -> Option<Vec<Self>> {
        None
    }
}

/// Whether bytes of order `little` are the host's own.
fn native(little: bool) -> bool {
    little == cfg!(target_endian = "little")
}

macro_rules! sample {
    ($($t:ty),*) => {$(impl Sample for $t {
        const SIZE: usize = std::mem::size_of::<$t>();
        fn read(bytes: &[u8], little: bool) -> Self {
            // Callers pass at least SIZE bytes (`decode` reads whole chunks).
            let mut b = [0u8; std::mem::size_of::<$t>()];
            b.iter_mut().zip(bytes).for_each(|(d, s)| *d = *s);
            if little { <$t>::from_le_bytes(b) } else { <$t>::from_be_bytes(b) }
        }
        fn write(self, little: bool, out: &mut Vec<u8>) {
            out.extend_from_slice(&if little { self.to_le_bytes() } else { self.to_be_bytes() });
        }
        fn memory_bytes(values: &[Self]) -> Option<&[u8]> {
            Some(bytemuck::cast_slice(values))
        }
        fn from_memory_bytes(bytes: &[u8]) -> Option<Vec<Self>> {
            let mut out = vec![<$t>::default(); bytes.len() / Self::SIZE];
            let target: &mut [u8] = bytemuck::cast_slice_mut(&mut out);
            target.copy_from_slice(bytes.get(..target.len())?);
            Some(out)
        }
    })*};
}
sample!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);

impl<F: Sample> Sample for Complex<F> {
    const SIZE: usize = 2 * F::SIZE;
    fn read(bytes: &[u8], little: bool) -> Self {
        Complex::new(F::read(bytes, little), F::read(bytes.get(F::SIZE..).unwrap_or_default(), little))
    }
    fn write(self, little: bool, out: &mut Vec<u8>) {
        self.re.write(little, out);
        self.im.write(little, out);
    }
}

/// The values in `bytes` (whose length the caller has checked is a multiple of `S::SIZE`).
pub(crate) fn decode<S: Sample>(bytes: &[u8], little: bool) -> Vec<S> {
    // In the host's order the bytes are the values: one copy (a 40 MB volume in milliseconds).
    if native(little)
        && let Some(values) = S::from_memory_bytes(bytes)
    {
        return values;
    }
    bytes.chunks_exact(S::SIZE).map(|c| S::read(c, little)).collect()
}

/// Appends the bytes of `values` to `out`, in one copy when `little` is the host's order.
pub(crate) fn append_encoded<S: Sample>(out: &mut Vec<u8>, values: &[S], little: bool) {
    match S::memory_bytes(values) {
        Some(bytes) if native(little) => out.extend_from_slice(bytes),
        _ => {
            out.reserve(values.len() * S::SIZE);
            values.iter().for_each(|v| v.write(little, out));
        }
    }
}

/// The bytes of `values`.
pub(crate) fn encode<'a, S: Sample + 'a>(values: impl IntoIterator<Item = &'a S>, little: bool) -> Vec<u8> {
    let values = values.into_iter();
    let mut out = Vec::with_capacity(values.size_hint().0 * S::SIZE);
    for v in values {
        v.write(little, &mut out);
    }
    out
}
