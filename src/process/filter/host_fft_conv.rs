//! The FFT convolution of real images with real filters on CPU devices (`fft_conv.rs` plans it): after the
//! [`Pad`] of the halo, one command on the host's threads in the mapped buffers (host memory on a CPU device) —
//! real-to-complex transforms along the last axis (realfft), complex ones along the others (rustfft) on the half
//! spectrum, the product with the filter's half spectrum (computed once, in `init`), and back. Half the
//! arithmetic and memory of the complex path, which on PoCL (2 cores) took 11–12.5 ms for 1024² ⊛ 63×63 against
//! scipy.signal.fftconvolve's 10.2.
//!
//! The grid and the filter's placement on it are `fft_conv.rs`'s; values go through float64 only to change type.

use super::pad::Pad;
use crate::app::ffi::{self, Region};
use crate::data::{HostCommand, XData};
use crate::element::{Element, Spectral};
use crate::error::{Error, Result};
use crate::process::Process;
use crate::process::fft::{FftDirection, HostAxes, real_lines, real_lines_inverse};
use num_complex::{Complex, Complex64};
use num_traits::{FromPrimitive, Zero};
use rayon::prelude::*;
use std::sync::Arc;

/// The parts' type the host transforms of `T` compute in (f32 for f32 images, f64 for f64).
type Parts<T> = <<T as Element>::Complex as Spectral>::Parts;

/// A planned host FFT convolution: the pad into the extended block, the grid, the transforms and the filter's
/// half spectrum (scaled by the inverse transform's 1/N).
pub(crate) struct HostFftConv<T: Element> {
    pad: Pad<T>,
    padded: XData<T>,
    output: XData<T>,
    /// Batch entries (the product of the leading axes).
    batch: usize,
    /// Per spatial axis: the extended block's extent, the grid's and the output's.
    extended: Vec<usize>,
    grid: Vec<usize>,
    out: Vec<usize>,
    r2c: Arc<dyn realfft::RealToComplex<Parts<T>>>,
    c2r: Arc<dyn realfft::ComplexToReal<Parts<T>>>,
    forward: HostAxes<Parts<T>>,
    inverse: HostAxes<Parts<T>>,
    filter_hat: Vec<Complex<Parts<T>>>,
}

/// `(outer, n, inner)` of every spatial axis but the last of `[batch, half…]`, the half spectrum's shape.
fn other_axes(batch: usize, half: &[usize]) -> Vec<(usize, usize, usize)> {
    let r = half.len();
    (0..r.saturating_sub(1))
        .map(|k| {
            let outer = batch * half.iter().take(k).product::<usize>();
            let inner: usize = half.iter().skip(k + 1).product();
            (outer, half.get(k).copied().unwrap_or(1), inner)
        })
        .collect()
}

/// `v` in the parts' type.
fn part<T: Element>(v: T) -> Parts<T> {
    Parts::<T>::from_f64(v.to_c64().re).unwrap_or_else(Zero::zero)
}

impl<T: Element> HostFftConv<T> {
    /// The plan for `pad` (into `padded`, the extended block `[batch…, extended…]`) and the grid `grid`, writing
    /// the leading `out` block of the result into the contiguous `output`; `taps` is the oriented filter placed on
    /// the grid (`fft_conv.rs` places it).
    pub(crate) fn new(
        pad: Pad<T>,
        padded: &XData<T>,
        output: &XData<T>,
        taps: &[f64],
        [extended, grid, out]: [Vec<usize>; 3],
    ) -> Result<HostFftConv<T>> {
        let r = grid.len();
        let batch: usize = padded.shape().iter().take(padded.ndim() - r).product();
        let Some(&m) = grid.last() else {
            return Err(Error::invalid("Convolution", "the FFT path needs at least one spatial axis"));
        };
        let mut planner = realfft::RealFftPlanner::<Parts<T>>::new();
        let (r2c, c2r) = (planner.plan_fft_forward(m), planner.plan_fft_inverse(m));
        let mut half = grid.clone();
        if let Some(last) = half.last_mut() {
            *last = m / 2 + 1;
        }
        let forward = HostAxes::new(&other_axes(batch, &half), FftDirection::Forward);
        let inverse = HostAxes::new(&other_axes(batch, &half), FftDirection::Inverse);
        // The filter's grid, transformed like an image (one batch entry), times 1/N.
        let points: usize = grid.iter().product();
        let mut h: Vec<Parts<T>> = taps.iter().map(|&v| Parts::<T>::from_f64(v).unwrap_or_else(Zero::zero)).collect();
        let mut filter_hat = vec![Complex::zero(); points / m * (m / 2 + 1)];
        real_lines(r2c.as_ref(), &mut h, &mut filter_hat).map_err(|e| fft_error(&e))?;
        HostAxes::new(&other_axes(1, &half), FftDirection::Forward).run(&mut filter_hat);
        let scale = Parts::<T>::from_f64(1.0 / points as f64).unwrap_or_else(Zero::zero);
        filter_hat.iter_mut().for_each(|v| *v = *v * scale);
        let mut plan = HostFftConv {
            pad,
            padded: padded.clone(),
            output: output.clone(),
            batch,
            extended,
            grid,
            out,
            r2c,
            c2r,
            forward,
            inverse,
            filter_hat,
        };
        plan.pad.init()?;
        Ok(plan)
    }

    /// Points of one transform (the grid's size).
    pub(crate) fn points(&self) -> usize {
        self.grid.iter().product()
    }

    pub(crate) fn launch(&mut self) -> Result<()> {
        self.pad.launch()?;
        let (padded, output) = (&self.padded, &self.output);
        let (Some((il, ih)), Some((ol, oh))) = (padded.layout().span(), output.layout().span()) else {
            return Ok(());
        };
        let reads = [Region { buffer: padded.storage().buffer(), lo: il, hi: ih + 1 }];
        let write = Region { buffer: output.storage().buffer(), lo: ol, hi: oh + 1 };
        let bytes = ((padded.len() + output.len()) * std::mem::size_of::<T>()) as u64;
        let flops = (10.0 * (self.batch * self.points()) as f64 * (self.points() as f64).log2()) as u64;
        let command =
            HostCommand::new::<T, T>("Convolution", "host_fft_conv", &[padded], &[output])?.work(bytes, flops);
        let mut failure = None;
        command.run(|queue| {
            ffi::with_mapped_overwriting::<T, T, ()>(queue, &reads, &write, |ins, out| {
                failure = self.convolve(ins.first().copied().unwrap_or_default(), out).err();
            })
            .map(|((), event)| event)
        })?;
        failure.map_or(Ok(()), |e| Err(fft_error(&e)))
    }

    /// The convolution of the extended block `padded` into `out` (contiguous), on the host's threads.
    fn convolve(&self, padded: &[T], out: &mut [T]) -> std::result::Result<(), realfft::FftError> {
        // What the threads read (the plan itself holds device handles, which are not shared).
        let (grid, extended, block, filter_hat) = (&self.grid, &self.extended, &self.out, &self.filter_hat);
        let r = grid.len();
        let (m, h) = (self.r2c.len(), self.r2c.len() / 2 + 1);
        let rows = self.batch * grid.iter().take(r - 1).product::<usize>();
        // The extended block zero-extended to the grid, row by row.
        let mut real = vec![Parts::<T>::zero(); rows * m];
        let (l_last, o_last) = (extended.last().copied().unwrap_or(1), block.last().copied().unwrap_or(1));
        real.par_chunks_mut(m).enumerate().for_each(|(q, row)| {
            if let Some(from) = row_in(q, grid, extended) {
                let source = padded.get(from * l_last..(from + 1) * l_last).unwrap_or_default();
                row.iter_mut().zip(source).for_each(|(d, &v)| *d = part(v));
            }
        });
        let mut spectrum = vec![Complex::zero(); rows * h];
        real_lines(self.r2c.as_ref(), &mut real, &mut spectrum)?;
        self.forward.run(&mut spectrum);
        spectrum.par_chunks_mut(filter_hat.len()).for_each(|entry| {
            entry.iter_mut().zip(filter_hat).for_each(|(v, &f)| *v = *v * f);
        });
        self.inverse.run(&mut spectrum);
        real_lines_inverse(self.c2r.as_ref(), &mut spectrum, &mut real)?;
        // The leading `out` block of every grid row that holds one.
        out.par_chunks_mut(o_last).enumerate().for_each(|(p, row)| {
            if let Some(from) = row_in(p, block, grid) {
                let source = real.get(from * m..from * m + o_last).unwrap_or_default();
                row.iter_mut().zip(source).for_each(|(d, &v)| *d = T::from_c64(Complex64::new(v.into(), 0.0)));
            }
        });
        Ok(())
    }
}

/// For row `q` of an array `[batch, a…]` (rows along the last axis): the row of `[batch, b…]` at the same
/// coordinates, or `None` when a coordinate lies outside `b`.
fn row_in(q: usize, a: &[usize], b: &[usize]) -> Option<usize> {
    let r = a.len();
    let (mut rest, mut index, mut scale) = (q, 0usize, 1usize);
    for k in (0..r.saturating_sub(1)).rev() {
        let (ak, bk) = (a.get(k).copied()?, b.get(k).copied()?);
        let c = rest % ak;
        rest /= ak;
        if c >= bk {
            return None;
        }
        index += c * scale;
        scale *= bk;
    }
    Some(index + rest * scale)
}

/// realfft's refusal (a length that does not match its plan: a planning fault) as the crate's error.
fn fft_error(e: &realfft::FftError) -> Error {
    Error::invalid("Convolution", format!("the host FFT refused its buffers: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_map_between_grids_and_blocks() {
        // [2, 4, 5] grid rows against a [2, 3, 5] block: rows with y = 3 lie outside.
        assert_eq!(row_in(0, &[4, 5], &[3, 5]), Some(0));
        assert_eq!(row_in(3, &[4, 5], &[3, 5]), None);
        assert_eq!(row_in(5, &[4, 5], &[3, 5]), Some(4)); // batch 1, y = 1
        // 3-D spatial: [z, y, x] = [3, 4, x] grid, [2, 2, x] block; row q = z·4 + y.
        assert_eq!(row_in(4 + 1, &[3, 4, 7], &[2, 2, 7]), Some(2 + 1));
        assert_eq!(row_in(2 * 4, &[3, 4, 7], &[2, 2, 7]), None);
        assert_eq!(other_axes(3, &[4, 6, 5]), vec![(3, 4, 30), (12, 6, 5)]);
    }
}
