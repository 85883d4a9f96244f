//! Convolution through the FFT, for [`super::Convolution`]'s planner: the input is extended by the border rule
//! (a [`Pad`] of exactly the halo the output needs), zero-extended to a smooth length, transformed, multiplied
//! by the transform of the (oriented) filter — computed once in `init` — and transformed back; the output is the
//! leading block, narrowed to the element type. Same border rules, modes, origins and output sizes as the direct
//! kernels (stride and dilation 1 only), in `T::Complex` arithmetic.
//!
//! With E the border-extended input (E[u] = X(u − start) on each axis) every output is
//! `out[i] = Σ_t f[t] · E[i + t]`, a correlation of E with the oriented filter f. With h[u] = f[(−u) mod M] that is
//! the circular convolution E ⊛ h, free of wrap-around for i < c as long as M ≥ c + w − 1 on every axis.

use super::border::Border;
use super::conv_params::AxisPlan;
use super::host_fft_conv::HostFftConv;
use super::pad::{Pad, PadParams};
use super::weights::Filter;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::process::elementwise::{ComplexElementProd, ProductKind};
use crate::process::elementwise::{EwOp, EwPlan};
use crate::process::fft::smooth_length;
use crate::process::fft::{Fft, FftParams};
use crate::process::{Process, init_together};
use num_complex::Complex64;

/// The FFT convolution: complex transforms on the device, or for real images and filters on CPU devices the
/// host's real transforms (`host_fft_conv.rs`).
pub(crate) enum FftConv<T: Element> {
    Complex(Box<ComplexFftConv<T>>),
    Host(Box<HostFftConv<T>>),
}

/// An error when the filter `fshape` is wider than the transform `grid` along an axis.
fn fits_grid(op: &str, fshape: &[usize], grid: &[usize]) -> Result<()> {
    match fshape.iter().zip(grid).enumerate().find(|(_, (w, m))| w > m) {
        Some((k, (w, m))) => Err(Error::invalid(
            op,
            format!("the filter {fshape:?} is wider than the transform grid {grid:?} along axis {k} ({w} > {m})"),
        )),
        None => Ok(()),
    }
}

/// The filter placed on the transform grid in float64 on the host, as `filter_on_grid` places it on the device
/// (for the host's FFT convolution; the grid holds at least the filter, as `Extension::new` checked).
fn filter_on_host_grid<K: Element>(filter: &Filter<K>, grid: &[usize]) -> Vec<f64> {
    let mut h = vec![0.0; grid.iter().product()];
    let (Some(&w), Some(&m)) = (filter.shape().last(), grid.last()) else { return h };
    for (row, taps) in filter.values().chunks(w.max(1)).enumerate() {
        let at = grid_row_start(row, filter.shape(), grid);
        let positions = std::iter::once(at).chain((1..w).map(|i| at + m - i));
        for (k, v) in positions.zip(taps) {
            if let Some(slot) = h.get_mut(k) {
                *slot = v.to_c64().re;
            }
        }
    }
    h
}

/// Where row `row` of a filter of shape `fshape` (rows along its last axis) starts on the flattened `grid`: each
/// leading coordinate c taken to (M − c) mod M. Tap 0 of the row sits there, taps 1… reversed at the row's end.
fn grid_row_start(row: usize, fshape: &[usize], grid: &[usize]) -> usize {
    let (mut rest, mut at, mut scale) = (row, 0usize, grid.last().copied().unwrap_or(1));
    for (&fw, &gm) in fshape.iter().zip(grid).rev().skip(1) {
        let coord = rest % fw;
        rest /= fw;
        at += (gm - coord) % gm * scale;
        scale *= gm;
    }
    at
}

impl<T: Element> FftConv<T> {
    /// Plans the FFT path for `input` → `output` with the oriented (flipped for a convolution, normalised)
    /// `filter` over the trailing `axes.len()` axes; on the host when `on_host` and the image, the filter and
    /// the output allow it (real, real, contiguous).
    pub(crate) fn new<K: Element>(
        op: &str,
        input: &XData<T>,
        output: &XData<T>,
        filter: &Filter<K>,
        axes: &[AxisPlan],
        border: Border,
        on_host: bool,
    ) -> Result<FftConv<T>> {
        let extension = Extension::new(op, input, filter, axes, border)?;
        if on_host && !T::IS_COMPLEX && !K::IS_COMPLEX && output.is_contiguous() {
            let Extension { pad, padded, extended, grid, .. } = extension;
            let out: Vec<usize> = axes.iter().map(|a| a.out).collect();
            let spatial = extended.iter().skip(input.ndim() - axes.len()).copied().collect();
            let taps = filter_on_host_grid(filter, &grid);
            let plan = HostFftConv::new(pad, &padded, output, &taps, [spatial, grid, out])?;
            return Ok(FftConv::Host(Box::new(plan)));
        }
        Ok(FftConv::Complex(Box::new(ComplexFftConv::new(op, input, output, filter, axes, extension)?)))
    }

    /// Points of one transform (the product of the padded lengths), for the strategy.
    pub(crate) fn points(&self) -> usize {
        match self {
            FftConv::Complex(plan) => plan.points,
            FftConv::Host(plan) => plan.points(),
        }
    }

    pub(crate) fn launch(&mut self) -> Result<()> {
        match self {
            FftConv::Complex(plan) => plan.launch(),
            FftConv::Host(plan) => plan.launch(),
        }
    }
}

/// The FFT convolution on the device: complex transforms of the widened extended block.
pub(crate) struct ComplexFftConv<T: Element> {
    pad: Pad<T>,
    padded: XData<T>,
    widen: EwPlan,
    window: XData<T::Complex>,
    forward: Fft<T::Complex>,
    product: ComplexElementProd<T::Complex>,
    inverse: Fft<T::Complex>,
    narrow: EwPlan,
    result: XData<T::Complex>,
    output: XData<T>,
    /// Points of one transform (the product of the padded lengths), for the strategy.
    pub(crate) points: usize,
}

/// Where each spatial axis of an input of these extents sits in its extended block: `(before, after, length)`,
/// the block being `out + filter − 1` long with the data `start` elements in. Pure, so it is unit-tested.
fn placement(op: &str, spatial: &[usize], axes: &[AxisPlan]) -> Result<Vec<(usize, usize, usize)>> {
    spatial
        .iter()
        .zip(axes)
        .enumerate()
        .map(|(k, (&n, a))| {
            let length = a.out + a.filter - 1;
            let placed = usize::try_from(a.start).ok().and_then(|b| length.checked_sub(n + b).map(|after| (b, after)));
            let Some((before, after)) = placed else {
                return Err(Error::invalid(
                    op,
                    format!("the FFT path cannot place spatial axis {k} (start {}, {n} → {length})", a.start),
                ));
            };
            Ok((before, after, length))
        })
        .collect()
}

/// The filter placed on the transform grid as a device array: tap `c` (per axis) at `(M − c) mod M`, zeros
/// elsewhere. The grid is zero-filled on the device and each row of taps written as two runs (tap 0 at the row's
/// start, taps 1… reversed at its end): a grid of 8400² built on the host in float64 took 0.95 s of `init`
/// (1.1 GB of mostly zeros, converted and uploaded).
fn filter_on_grid<T: Element, K: Element>(
    op: &str,
    app: &crate::app::ClApp,
    filter: &Filter<K>,
    grid: &[usize],
) -> Result<XData<T>> {
    let fshape = filter.shape();
    fits_grid(op, fshape, grid)?;
    let points: usize = grid.iter().product();
    let h = XData::<T>::zeros(app, grid)?.reshape(&[points])?;
    let (Some(&w), Some(&m)) = (fshape.last(), grid.last()) else { return h.reshape(grid) };
    let values = filter.values();
    for (row, taps) in values.chunks(w.max(1)).enumerate() {
        let at = grid_row_start(row, fshape, grid);
        let convert = |v: &K| T::from_c64(v.to_c64());
        h.slice_axis(0, at..at + 1)?.write(&taps.iter().take(1).map(convert).collect::<Vec<_>>())?;
        if w > 1 {
            let reversed: Vec<T> = taps.iter().skip(1).rev().map(convert).collect();
            h.slice_axis(0, at + m - (w - 1)..at + m)?.write(&reversed)?;
        }
    }
    h.reshape(grid)
}

/// The input extended by the border rule to the block the outputs need (a [`Pad`] into `padded`), and the
/// smooth transform grid above it.
struct Extension<T: Element> {
    pad: Pad<T>,
    padded: XData<T>,
    /// The extended block's shape (batch axes, then the spatial ones).
    extended: Vec<usize>,
    /// The transform grid, per spatial axis.
    grid: Vec<usize>,
    /// The batch axes, then the grid.
    padded_shape: Vec<usize>,
}

impl<T: Element> Extension<T> {
    fn new<K: Element>(
        op: &str,
        input: &XData<T>,
        filter: &Filter<K>,
        axes: &[AxisPlan],
        border: Border,
    ) -> Result<Extension<T>> {
        let r = axes.len();
        let lead = input.ndim() - r;
        if let Some((k, a)) = axes.iter().enumerate().find(|(_, a)| a.stride != 1 || a.dilation != 1) {
            return Err(Error::invalid(
                op,
                format!(
                    "the FFT path needs stride and dilation 1; spatial axis {k} has stride {} and dilation {}",
                    a.stride, a.dilation
                ),
            ));
        }
        let placed = placement(op, input.shape().get(lead..).unwrap_or_default(), axes)?;
        // The batch axes keep their extents; the transform grid is the smooth length above each extended one.
        let batch = input.shape().iter().take(lead);
        let widths: Vec<(usize, usize)> =
            batch.clone().map(|_| (0, 0)).chain(placed.iter().map(|&(before, after, _)| (before, after))).collect();
        let extended: Vec<usize> = batch.clone().copied().chain(placed.iter().map(|p| p.2)).collect();
        let grid: Vec<usize> = placed.iter().map(|p| smooth_length(p.2)).collect();
        fits_grid(op, filter.shape(), &grid)?;
        let padded_shape: Vec<usize> = batch.copied().chain(grid.iter().copied()).collect();
        let padded = XData::<T>::uninit(input.app(), op, &extended)?;
        let pad = Pad::new(input, &padded, PadParams::new(&widths).border(border));
        Ok(Extension { pad, padded, extended, grid, padded_shape })
    }
}

impl<T: Element> ComplexFftConv<T> {
    /// Plans the complex path for `input` → `output` with the oriented (flipped for a convolution, normalised)
    /// `filter` over the trailing `axes.len()` axes.
    fn new<K: Element>(
        op: &str,
        input: &XData<T>,
        output: &XData<T>,
        filter: &Filter<K>,
        axes: &[AxisPlan],
        extension: Extension<T>,
    ) -> Result<ComplexFftConv<T>> {
        let app = input.app();
        let lead = input.ndim() - axes.len();
        let Extension { pad, padded, grid, padded_shape, .. } = extension;
        // The transform's input: zeros beyond the extended block, written once here.
        let spectrum_in = XData::<T::Complex>::zeros(app, &padded_shape)?;
        let mut window = spectrum_in.clone();
        for (k, a) in axes.iter().enumerate() {
            window = window.slice_axis(lead + k, ..a.out + a.filter - 1)?;
        }
        let widen = EwPlan::new::<T, T, T::Complex>(op, EwOp::Widen, &padded, None, &window)?;
        let spectrum = XData::<T::Complex>::uninit(app, op, &padded_shape)?;
        let spatial: Vec<usize> = (lead..input.ndim()).collect();
        let forward = Fft::new(&spectrum_in, &spectrum, FftParams::forward().axes(&spatial));
        let points: usize = grid.iter().product();
        let h_grid = filter_on_grid::<T::Complex, K>(op, app, filter, &grid)?;
        let h_hat = XData::<T::Complex>::uninit(app, op, &grid)?;
        let mut transform = Fft::new(&h_grid, &h_hat, FftParams::forward());
        let product = ComplexElementProd::new(&spectrum, &h_hat, &spectrum, ProductKind::Plain);
        let result = XData::<T::Complex>::uninit(app, op, &padded_shape)?;
        let inverse = Fft::new(&spectrum, &result, FftParams::inverse().axes(&spatial));
        let mut block = result.clone();
        for (k, a) in axes.iter().enumerate() {
            block = block.slice_axis(lead + k, ..a.out)?;
        }
        let narrow = EwPlan::new::<T::Complex, T::Complex, T>(op, EwOp::Narrow, &block, None, output)?;
        let mut plan = ComplexFftConv {
            pad,
            padded,
            widen,
            window,
            forward,
            product,
            inverse,
            narrow,
            result: block,
            output: output.clone(),
            points,
        };
        // The filter's transform compiles the forward programs while the inverse's and the rest compile beside it;
        // the input's forward transform then finds its programs built.
        init_together(vec![&mut transform, &mut plan.pad, &mut plan.product, &mut plan.inverse])?;
        transform.launch()?;
        plan.forward.init()?;
        Ok(plan)
    }

    pub(crate) fn launch(&mut self) -> Result<()> {
        let zero = T::from_c64(Complex64::new(0.0, 0.0));
        self.pad.launch()?;
        self.widen.launch(&self.padded, &self.padded, &self.window, zero)?;
        self.forward.launch()?;
        self.product.launch()?;
        self.inverse.launch()?;
        let czero = <T::Complex as Element>::from_c64(Complex64::new(0.0, 0.0));
        self.narrow.launch(&self.result, &self.result, &self.output, czero)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(filter: usize, start: i64, out: usize) -> AxisPlan {
        AxisPlan { filter, stride: 1, dilation: 1, start, out }
    }

    #[test]
    fn the_extended_block_holds_the_data_and_the_halo() {
        // A 5-tap filter centred on each of 10 outputs: 2 before, 2 after, 14 in all.
        assert_eq!(placement("t", &[10], &[axis(5, 2, 10)]).unwrap(), vec![(2, 2, 14)]);
        // "full" output of 12 from 10 with a 3-tap filter: 2 before and after.
        assert_eq!(placement("t", &[10, 4], &[axis(3, 2, 12), axis(1, 0, 4)]).unwrap(), vec![(2, 2, 14), (0, 0, 4)]);
        // A negative start (valid output) cannot be placed by extension.
        assert!(placement("t", &[10], &[axis(3, -1, 8)]).is_err());
    }

    #[test]
    fn filters_wrap_onto_the_grid_reversed() {
        let app = crate::app::ClApp::new().unwrap();
        let f = Filter::new(&[3], vec![1.0f64, 2.0, 3.0]).unwrap();
        let h = filter_on_grid::<f64, f64>("t", &app, &f, &[5]).unwrap().to_vec().unwrap();
        assert_eq!(h, vec![1.0, 0.0, 0.0, 3.0, 2.0]); // f[0] at 0, f[1] at −1, f[2] at −2
        let f2 = Filter::new(&[2, 2], vec![1.0f64, 2.0, 3.0, 4.0]).unwrap();
        let h2 = filter_on_grid::<f64, f64>("t", &app, &f2, &[3, 4]).unwrap().to_vec().unwrap();
        // Row 0 → grid row 0: [1, 0, 0, 2]; row 1 → grid row 3 − 1 = 2: [3, 0, 0, 4].
        assert_eq!(h2, vec![1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 4.0]);
        let f3 = Filter::new(&[2, 2, 3], (1..=12).map(f64::from).collect()).unwrap();
        let h3 = filter_on_grid::<f64, f64>("t", &app, &f3, &[3, 3, 4]).unwrap().to_vec().unwrap();
        for (t, &v) in f3.values().iter().enumerate() {
            let (a, b, c) = (t / 6, t / 3 % 2, t % 3);
            assert_eq!(h3[(3 - a) % 3 * 12 + (3 - b) % 3 * 4 + (4 - c) % 4], v, "tap {t}");
        }
        assert_eq!(h3.iter().filter(|&&v| v != 0.0).count(), 12);
        assert!(filter_on_grid::<f64, f64>("t", &app, &f, &[2]).is_err());
    }
}
