//! The schedule of a multilevel wavelet transform: which axes each level splits, where every band lives (the
//! coefficient vector or scratch), and the one-axis analysis or synthesis launches that connect them.

use crate::app::{ClApp, Kernel};
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;

/// Where a band lives: the image (input of analysis, output of synthesis), the coefficient vector, or scratch;
/// with its element offset there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    Image,
    Coefficients(usize),
    Scratch(usize),
}

/// One-axis step: `source` `[outer, n, inner]` split into `low` and `high` `[outer, m, inner]` (analysis), or
/// merged back (synthesis).
#[derive(Clone, Copy, Debug)]
struct Step {
    source: Place,
    low: Place,
    high: Place,
    outer: usize,
    n: usize,
    inner: usize,
    m: usize,
}

/// A planned transform of an image shape: the steps in analysis order, the coefficient count, the scratch size,
/// the per-level split axes (for the strategy), and the kernels.
pub(crate) struct WaveletPlan<T: Element> {
    steps: Vec<Step>,
    pub(crate) coefficients: usize,
    pub(crate) levels: Vec<Vec<usize>>,
    pub(crate) splits_per_axis: Vec<usize>,
    scratch: Option<XData<T>>,
    analysis: Kernel,
    synthesis: Kernel,
    index: IndexType,
}

const GROUP: usize = 256;

/// Coefficients per axis of length n after one split: (n + 3) / 2, for Daubechies-2's 4 taps.
pub(crate) fn split_length(n: usize) -> usize {
    (n + 3) / 2
}

impl<T: Element> WaveletPlan<T> {
    /// Plans the transform of `shape` (1 to 3 axes): `levels` splits of every axis of extent > 1 when given,
    /// otherwise BART's rule — an axis keeps being split while its low band is at least min(n, `min_size`).
    pub(crate) fn new(app: &ClApp, shape: &[usize], levels: Option<usize>, min_size: usize) -> Result<WaveletPlan<T>> {
        let op = "Wavelet";
        if shape.is_empty() || shape.len() > 3 || shape.contains(&0) {
            return Err(Error::invalid(op, format!("the image must have 1 to 3 axes, none empty; got {shape:?}")));
        }
        // The split axes of each level.
        let mut levels_axes: Vec<Vec<usize>> = Vec::new();
        let mut low = shape.to_vec();
        loop {
            let level = levels_axes.len();
            let axes: Vec<usize> = (0..shape.len())
                .filter(|&d| {
                    let n = shape[d];
                    n > 1
                        && match levels {
                            Some(l) => level < l && low[d] >= 2,
                            None => low[d] >= n.min(min_size),
                        }
                })
                .collect();
            if axes.is_empty() {
                break;
            }
            for &d in &axes {
                low[d] = split_length(low[d]);
            }
            levels_axes.push(axes);
            if levels_axes.len() > 64 {
                return Err(Error::invalid(op, format!("{shape:?} would split forever")));
            }
        }
        // Band sizes per level, finest first, to lay out the coefficient vector: the final all-low band first,
        // then the levels from the coarsest, each level's detail bands in order of their index.
        let mut shapes_per_level: Vec<Vec<Vec<usize>>> = Vec::new();
        let mut current = shape.to_vec();
        for axes in &levels_axes {
            let mut bands = vec![current.clone()];
            for &d in axes {
                bands = bands
                    .into_iter()
                    .flat_map(|b| {
                        let mut s = b.clone();
                        s[d] = split_length(b[d]);
                        [s.clone(), s]
                    })
                    .collect();
            }
            current = bands[0].clone();
            shapes_per_level.push(bands);
        }
        let size = |s: &[usize]| s.iter().product::<usize>();
        let mut offsets: Vec<Vec<usize>> = shapes_per_level.iter().map(|b| vec![0; b.len()]).collect();
        let mut at = size(&current);
        for (level, bands) in shapes_per_level.iter().enumerate().rev() {
            for (b, s) in bands.iter().enumerate().skip(1) {
                offsets[level][b] = at;
                at += size(s);
            }
        }
        let coefficients = at;
        // The steps, and scratch for intermediate bands (the results of a level's earlier axes) and the low
        // band each level passes on.
        let mut steps = Vec::new();
        let mut scratch = 0usize;
        let mut source_band: (Place, Vec<usize>) = (Place::Image, shape.to_vec());
        for (level, axes) in levels_axes.iter().enumerate() {
            let last_level = level + 1 == levels_axes.len();
            let mut bands: Vec<(Place, Vec<usize>)> = vec![source_band.clone()];
            for (k, &d) in axes.iter().enumerate() {
                let last_axis = k + 1 == axes.len();
                let mut next = Vec::with_capacity(bands.len() * 2);
                for (b, (place, s)) in bands.iter().enumerate() {
                    let mut out_shape = s.clone();
                    out_shape[d] = split_length(s[d]);
                    let (lo_index, hi_index) = (2 * b, 2 * b + 1);
                    let mut place_of = |index: usize| {
                        if last_axis && index > 0 {
                            Place::Coefficients(offsets[level][index])
                        } else if last_axis && last_level {
                            Place::Coefficients(0)
                        } else {
                            let p = Place::Scratch(scratch);
                            scratch += size(&out_shape);
                            p
                        }
                    };
                    let (low, high) = (place_of(lo_index), place_of(hi_index));
                    steps.push(Step {
                        source: *place,
                        low,
                        high,
                        outer: s[..d].iter().product(),
                        n: s[d],
                        inner: s[d + 1..].iter().product(),
                        m: out_shape[d],
                    });
                    next.push((low, out_shape.clone()));
                    next.push((high, out_shape));
                }
                bands = next;
            }
            source_band = bands[0].clone();
        }
        if levels_axes.is_empty() {
            // Nothing to split (every axis of extent 1): the coefficients are the image.
            steps.clear();
        }
        let mut splits_per_axis = vec![0; shape.len()];
        for axes in &levels_axes {
            for &d in axes {
                splits_per_axis[d] += 1;
            }
        }
        let index = IndexType::for_extent((coefficients.max(size(shape)) + scratch) as u64);
        let options = format!("{} -DIDX={}", T::build_options(), index.cl_type());
        let program = app.build_program("wavelet.cl", &kernels::with_common(kernels::WAVELET), &options)?;
        Ok(WaveletPlan {
            steps,
            coefficients,
            levels: levels_axes,
            splits_per_axis,
            scratch: if scratch > 0 { Some(XData::uninit(app, op, &[scratch])?) } else { None },
            analysis: program.kernel("wavelet_analysis")?.owned_by(op),
            synthesis: program.kernel("wavelet_synthesis")?.owned_by(op),
            index,
        })
    }

    fn buffer<'a>(&'a self, place: Place, image: &'a XData<T>, coefficients: &'a XData<T>) -> (&'a XData<T>, u64) {
        match (place, &self.scratch) {
            (Place::Image, _) => (image, image.offset() as u64),
            (Place::Coefficients(at), _) => (coefficients, (coefficients.offset() + at) as u64),
            (Place::Scratch(at), Some(s)) => (s, at as u64),
            (Place::Scratch(_), None) => (image, image.offset() as u64),
        }
    }

    /// Enqueues the analysis of `image` (contiguous) into `coefficients` (contiguous, `self.coefficients`).
    pub(crate) fn analyse(&mut self, image: &XData<T>, coefficients: &XData<T>) -> Result<()> {
        if self.steps.is_empty() {
            return coefficients.copy_from(image);
        }
        let idx = self.index;
        let steps = self.steps.clone();
        for s in steps {
            let (src, src0) = self.buffer(s.source, image, coefficients);
            let (lo, lo0) = self.buffer(s.low, image, coefficients);
            let (hi, hi0) = self.buffer(s.high, image, coefficients);
            let (src, lo, hi) = (src.clone(), lo.clone(), hi.clone());
            let count = s.outer * s.m * s.inner;
            let groups = count.div_ceil(GROUP).clamp(1, 1 << 16);
            self.analysis
                .launch()
                .input(&src)
                .index(idx, src0)
                .output(&lo)
                .index(idx, lo0)
                .output(&hi)
                .index(idx, hi0)
                .index(idx, s.outer as u64)
                .index(idx, s.n as u64)
                .index(idx, s.inner as u64)
                .index(idx, s.m as u64)
                .global(&[groups * GROUP])
                .local(&[GROUP])
                .work((count * 3 * std::mem::size_of::<T>()) as u64, 16 * count as u64)
                .enqueue()?;
        }
        Ok(())
    }

    /// Enqueues the synthesis of `coefficients` into `image`, the steps in reverse.
    pub(crate) fn synthesise(&mut self, coefficients: &XData<T>, image: &XData<T>) -> Result<()> {
        if self.steps.is_empty() {
            return image.copy_from(coefficients);
        }
        let idx = self.index;
        let steps = self.steps.clone();
        for s in steps.iter().rev() {
            let (out, out0) = self.buffer(s.source, image, coefficients);
            let (lo, lo0) = self.buffer(s.low, image, coefficients);
            let (hi, hi0) = self.buffer(s.high, image, coefficients);
            let (out, lo, hi) = (out.clone(), lo.clone(), hi.clone());
            let count = s.outer * s.n * s.inner;
            let groups = count.div_ceil(GROUP).clamp(1, 1 << 16);
            self.synthesis
                .launch()
                .input(&lo)
                .index(idx, lo0)
                .input(&hi)
                .index(idx, hi0)
                .output(&out)
                .index(idx, out0)
                .index(idx, s.outer as u64)
                .index(idx, s.n as u64)
                .index(idx, s.inner as u64)
                .index(idx, s.m as u64)
                .global(&[groups * GROUP])
                .local(&[GROUP])
                .work((count * 3 * std::mem::size_of::<T>()) as u64, 8 * count as u64)
                .enqueue()?;
        }
        Ok(())
    }
}
