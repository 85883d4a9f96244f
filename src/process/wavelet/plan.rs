//! The schedule of a multilevel wavelet transform: which axes each level splits, where every band lives (the
//! coefficient vector or scratch), and the one-axis analysis or synthesis launches that connect them.

use crate::app::{ClApp, Kernel, Program};
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
    /// The program the kernels come from (the wavelet threshold takes its own kernels from it too).
    pub(crate) program: Program,
    pub(crate) index: IndexType,
}

const GROUP: usize = 256;

/// Coefficients per axis of length n after one split: (n + 3) / 2, for Daubechies-2's 4 taps.
pub(crate) fn split_length(n: usize) -> usize {
    (n + 3) / 2
}

/// The extent of axis `d` of `shape` (1 past its end).
fn extent(shape: &[usize], d: usize) -> usize {
    shape.get(d).copied().unwrap_or(1)
}

/// `shape` with axis `d` split once.
fn split(shape: &[usize], d: usize) -> Vec<usize> {
    shape.iter().enumerate().map(|(k, &n)| if k == d { split_length(n) } else { n }).collect()
}

fn size(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// The axes each level splits, finest first: `levels` splits of every axis of extent > 1 when given, otherwise
/// BART's rule — an axis keeps being split while its low band is at least min(n, `min_size`).
pub(crate) fn schedule(shape: &[usize], levels: Option<usize>, min_size: usize) -> Result<Vec<Vec<usize>>> {
    if shape.is_empty() || shape.len() > 3 || shape.contains(&0) {
        return Err(Error::invalid("Wavelet", format!("the image must have 1 to 3 axes, none empty; got {shape:?}")));
    }
    let mut levels_axes: Vec<Vec<usize>> = Vec::new();
    let mut low = shape.to_vec();
    loop {
        let level = levels_axes.len();
        let axes: Vec<usize> = shape
            .iter()
            .zip(&low)
            .enumerate()
            .filter(|&(_, (&n, &l))| {
                n > 1
                    && match levels {
                        Some(count) => level < count && l >= 2,
                        None => l >= n.min(min_size),
                    }
            })
            .map(|(d, _)| d)
            .collect();
        if axes.is_empty() {
            return Ok(levels_axes);
        }
        for &d in &axes {
            low = split(&low, d);
        }
        levels_axes.push(axes);
        if levels_axes.len() > 64 {
            return Err(Error::invalid("Wavelet", format!("{shape:?} would split forever")));
        }
    }
}

/// The coefficient count of an image of `shape` under the schedule.
pub(crate) fn coefficient_count(shape: &[usize], levels: Option<usize>, min_size: usize) -> Result<usize> {
    let mut low = shape.to_vec();
    let mut total = 0usize;
    for axes in schedule(shape, levels, min_size)? {
        let mut next = low.clone();
        for &d in &axes {
            next = split(&next, d);
        }
        // 2^axes bands of the split shape, all but the low one stored at this level.
        total += ((1usize << axes.len()) - 1) * size(&next);
        low = next;
    }
    Ok(total + size(&low))
}

impl<T: Element> WaveletPlan<T> {
    /// Plans the transform of `shape` (1 to 3 axes): `levels` splits of every axis of extent > 1 when given,
    /// otherwise BART's rule — an axis keeps being split while its low band is at least min(n, `min_size`).
    pub(crate) fn new(app: &ClApp, shape: &[usize], levels: Option<usize>, min_size: usize) -> Result<WaveletPlan<T>> {
        let op = "Wavelet";
        let levels_axes = schedule(shape, levels, min_size)?;
        // Band shapes per level, finest first; the coefficient vector holds the final all-low band first, then
        // the levels from the coarsest, each level's detail bands in order of their index.
        let mut shapes_per_level: Vec<Vec<Vec<usize>>> = Vec::new();
        let mut current = shape.to_vec();
        for axes in &levels_axes {
            let mut bands = vec![current.clone()];
            for &d in axes {
                bands = bands.into_iter().flat_map(|b| [split(&b, d), split(&b, d)]).collect();
            }
            current = bands.first().cloned().unwrap_or_default();
            shapes_per_level.push(bands);
        }
        let mut offsets: Vec<Vec<usize>> = Vec::with_capacity(shapes_per_level.len());
        let mut at = size(&current);
        let mut per_level_offsets: Vec<(usize, Vec<usize>)> = Vec::new();
        for (level, bands) in shapes_per_level.iter().enumerate().rev() {
            let mut these = vec![0; bands.len()];
            for (slot, s) in these.iter_mut().zip(bands).skip(1) {
                *slot = at;
                at += size(s);
            }
            per_level_offsets.push((level, these));
        }
        per_level_offsets.sort_by_key(|(level, _)| *level);
        offsets.extend(per_level_offsets.into_iter().map(|(_, o)| o));
        let coefficients = at;
        // The steps, and scratch for intermediate bands (the results of a level's earlier axes) and the low
        // band each level passes on.
        let mut steps = Vec::new();
        let mut scratch = 0usize;
        let mut source_band: (Place, Vec<usize>) = (Place::Image, shape.to_vec());
        for ((level, axes), level_offsets) in levels_axes.iter().enumerate().zip(&offsets) {
            let last_level = level + 1 == levels_axes.len();
            let mut bands: Vec<(Place, Vec<usize>)> = vec![source_band.clone()];
            for (k, &d) in axes.iter().enumerate() {
                let last_axis = k + 1 == axes.len();
                let mut next = Vec::with_capacity(bands.len() * 2);
                for (b, (place, s)) in bands.iter().enumerate() {
                    let out_shape = split(s, d);
                    let mut place_of = |index: usize| match level_offsets.get(index) {
                        Some(&offset) if last_axis && index > 0 => Place::Coefficients(offset),
                        _ if last_axis && last_level && index == 0 => Place::Coefficients(0),
                        _ => {
                            let p = Place::Scratch(scratch);
                            scratch += size(&out_shape);
                            p
                        }
                    };
                    let (low, high) = (place_of(2 * b), place_of(2 * b + 1));
                    steps.push(Step {
                        source: *place,
                        low,
                        high,
                        outer: s.iter().take(d).product(),
                        n: extent(s, d),
                        inner: s.iter().skip(d + 1).product(),
                        m: extent(&out_shape, d),
                    });
                    next.push((low, out_shape.clone()));
                    next.push((high, out_shape));
                }
                bands = next;
            }
            if let Some(first) = bands.first() {
                source_band = first.clone();
            }
        }
        let mut splits_per_axis = vec![0; shape.len()];
        for axes in &levels_axes {
            for &d in axes {
                if let Some(count) = splits_per_axis.get_mut(d) {
                    *count += 1;
                }
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
            program,
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
        self.run(image, coefficients, false)
    }

    /// Enqueues the synthesis of `coefficients` into `image`, the steps in reverse.
    pub(crate) fn synthesise(&mut self, coefficients: &XData<T>, image: &XData<T>) -> Result<()> {
        self.run(image, coefficients, true)
    }

    /// The steps forward (analysis: each band split into its low and high halves) or backward (synthesis: the
    /// halves merged into the band); both kernels take the band, then the halves, then the geometry.
    fn run(&mut self, image: &XData<T>, coefficients: &XData<T>, synthesis: bool) -> Result<()> {
        if self.steps.is_empty() {
            return if synthesis { image.copy_from(coefficients) } else { coefficients.copy_from(image) };
        }
        let idx = self.index;
        let steps = self.steps.clone();
        let order: Box<dyn Iterator<Item = &Step>> =
            if synthesis { Box::new(steps.iter().rev()) } else { Box::new(steps.iter()) };
        for s in order {
            let (band, band0) = self.buffer(s.source, image, coefficients);
            let (lo, lo0) = self.buffer(s.low, image, coefficients);
            let (hi, hi0) = self.buffer(s.high, image, coefficients);
            let (band, lo, hi) = (band.clone(), lo.clone(), hi.clone());
            let count = s.outer * if synthesis { s.n } else { s.m } * s.inner;
            let groups = count.div_ceil(GROUP).clamp(1, 1 << 16);
            let kernel = if synthesis { &mut self.synthesis } else { &mut self.analysis };
            let launch = kernel.launch();
            // wavelet_synthesis writes the band `out` from `lo` and `hi`; wavelet_analysis reads it as `in`.
            let launch = if synthesis {
                launch.output("out", &band).index("out0", idx, band0).input("lo", &lo).index("lo0", idx, lo0)
            } else {
                launch.input("in", &band).index("in0", idx, band0).output("lo", &lo).index("lo0", idx, lo0)
            };
            let launch = if synthesis { launch.input("hi", &hi) } else { launch.output("hi", &hi) };
            launch
                .index("hi0", idx, hi0)
                .index("outer", idx, s.outer as u64)
                .index("n", idx, s.n as u64)
                .index("inner", idx, s.inner as u64)
                .index("m", idx, s.m as u64)
                .global(&[groups * GROUP])
                .local(&[GROUP])
                .work((count * 3 * std::mem::size_of::<T>()) as u64, 8 * count as u64)
                .enqueue()?;
        }
        Ok(())
    }
}
