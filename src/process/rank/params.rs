//! What a rank filter computes and over which window: [`RankKind`], [`Footprint`], [`RankParams`], and the
//! window they resolve to (offsets of every tap, and which rank of the sorted window is taken), by scipy.ndimage's
//! rules for sizes, footprints, origins and percentiles.

use crate::error::{Error, Result};
use crate::process::filter::Border;

/// Which value of the sorted window a rank filter keeps.
///
/// ```
/// use cliper::RankKind;
/// assert_eq!(RankKind::Median.rank_of(9)?, 4);
/// assert_eq!(RankKind::Median.rank_of(4)?, 2); // scipy: the upper of the two middle values
/// assert_eq!(RankKind::Percentile(90.0).rank_of(25)?, 22); // int(25 · 0.9)
/// assert_eq!(RankKind::Rank(-1).rank_of(9)?, 8);
/// assert!(RankKind::Rank(9).rank_of(9).is_err());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RankKind {
    /// scipy.ndimage.median_filter: rank `n / 2` (the upper middle for even windows).
    Median,
    /// scipy.ndimage.minimum_filter (grey erosion).
    Minimum,
    /// scipy.ndimage.maximum_filter (grey dilation).
    Maximum,
    /// scipy.ndimage.percentile_filter: rank `int(n · p / 100)` (`n − 1` at 100; negative `p` counts from 100).
    Percentile(f64),
    /// scipy.ndimage.rank_filter: this rank, 0-based; negative counts from the largest (−1).
    Rank(isize),
}

impl RankKind {
    /// The 0-based rank taken from a window of `n` values, or the error scipy gives.
    pub fn rank_of(self, n: usize) -> Result<usize> {
        let out_of =
            |r: isize| Error::invalid("RankFilter", format!("rank {r} is not within the footprint's {n} values"));
        let r: isize = match self {
            RankKind::Median => (n / 2) as isize,
            RankKind::Minimum => 0,
            RankKind::Maximum => n as isize - 1,
            RankKind::Percentile(p) => {
                let p = if p < 0.0 { p + 100.0 } else { p };
                if !(0.0..=100.0).contains(&p) {
                    return Err(Error::invalid("RankFilter", format!("percentile {p} is not within [-100, 100]")));
                }
                if p == 100.0 { n as isize - 1 } else { (n as f64 * p / 100.0) as isize }
            }
            RankKind::Rank(r) if r < 0 => r + n as isize,
            RankKind::Rank(r) => r,
        };
        if r < 0 || r >= n as isize { Err(out_of(r)) } else { Ok(r as usize) }
    }

    /// scipy's name of the filter.
    pub fn name(self) -> &'static str {
        match self {
            RankKind::Median => "median_filter",
            RankKind::Minimum => "minimum_filter",
            RankKind::Maximum => "maximum_filter",
            RankKind::Percentile(_) => "percentile_filter",
            RankKind::Rank(_) => "rank_filter",
        }
    }
}

/// A window's shape with the taps it includes (scipy's boolean `footprint`), 1 to 3 axes.
///
/// ```
/// use cliper::Footprint;
/// let cross = Footprint::new(&[3, 3], vec![false, true, false, true, true, true, false, true, false])?;
/// assert_eq!(cross.count(), 5);
/// assert!(Footprint::new(&[3, 3], vec![true; 8]).is_err());
/// assert_eq!(Footprint::ball(&[5, 5], 2.0)?.count(), 13);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Footprint {
    shape: Vec<usize>,
    mask: Vec<bool>,
}

impl Footprint {
    /// A footprint of `shape` (row-major `mask`); at least one tap.
    pub fn new(shape: &[usize], mask: Vec<bool>) -> Result<Footprint> {
        let n: usize = shape.iter().product();
        if !(1..=3).contains(&shape.len()) || shape.contains(&0) {
            return Err(Error::shape_rule("Footprint", "1 to 3 axes, none empty", shape));
        }
        if mask.len() != n {
            return Err(Error::Length { op: "Footprint".into(), shape: shape.to_vec(), got: mask.len() });
        }
        if !mask.iter().any(|&m| m) {
            return Err(Error::invalid("Footprint", format!("the footprint of shape {shape:?} selects nothing")));
        }
        Ok(Footprint { shape: shape.to_vec(), mask })
    }

    /// The full box of `shape`.
    pub fn full(shape: &[usize]) -> Result<Footprint> {
        Footprint::new(shape, vec![true; shape.iter().product()])
    }

    /// The taps within `radius` of the centre (`shape / 2`) in a box of `shape`: a disc or ball structuring
    /// element, as `skimage.morphology.disk(2)` is `ball(&[5, 5], 2.0)`.
    pub fn ball(shape: &[usize], radius: f64) -> Result<Footprint> {
        let n: usize = shape.iter().product();
        let mask = (0..n)
            .map(|i| {
                let mut rest = i;
                let mut d2 = 0.0;
                for &s in shape.iter().rev() {
                    let c = (rest % s) as f64 - (s / 2) as f64;
                    rest /= s;
                    d2 += c * c;
                }
                d2 <= radius * radius
            })
            .collect();
        Footprint::new(shape, mask)
    }

    /// scipy's generate_binary_structure(rank, connectivity): the elements of a 3^rank box within
    /// `connectivity` unit steps of the centre (1: the cross, rank: the full box).
    ///
    /// ```
    /// use cliper::Footprint;
    /// let cross = Footprint::binary_structure(2, 1)?;
    /// assert_eq!(cross.mask(), &[false, true, false, true, true, true, false, true, false]);
    /// assert_eq!(Footprint::binary_structure(3, 3)?.count(), 27);
    /// assert!(Footprint::binary_structure(2, 3).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn binary_structure(rank: usize, connectivity: usize) -> Result<Footprint> {
        if !(1..=rank.max(1)).contains(&connectivity) {
            return Err(Error::invalid(
                "generate_binary_structure",
                format!("connectivity {connectivity} is not within 1 to {rank} (the axes filtered)"),
            ));
        }
        let mask = (0..3usize.pow(rank as u32))
            .map(|i| {
                let mut rest = i;
                let mut steps = 0;
                for _ in 0..rank {
                    steps += usize::from(rest % 3 != 1);
                    rest /= 3;
                }
                steps <= connectivity
            })
            .collect();
        Footprint::new(&vec![3; rank], mask)
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The flags, row-major.
    pub fn mask(&self) -> &[bool] {
        &self.mask
    }

    /// How many taps are set.
    pub fn count(&self) -> usize {
        self.mask.iter().filter(|&&m| m).count()
    }

    /// Whether every tap is set (a box: minimum and maximum then run one axis at a time).
    pub fn is_full(&self) -> bool {
        self.mask.iter().all(|&m| m)
    }

    /// The footprint reversed along every axis (scipy's grey_dilation reflects it).
    pub fn reflected(&self) -> Footprint {
        Footprint { shape: self.shape.clone(), mask: self.mask.iter().rev().copied().collect() }
    }
}

/// The settings of a [`super::RankFilter`]: which rank (default median), the window (`size`, one value for every
/// axis or one per axis, default 3; or a `footprint`, which wins), scipy's border mode (default `reflect`,
/// [`Border::Reflect`]; `Border::Constant(cval)` for `constant`), the `origin` (one or per axis, default 0) and
/// the axes spanned (the last `rank`; default the footprint's or the sizes' count, else every axis up to three).
///
/// ```
/// use cliper::{Border, RankKind, RankParams};
/// let p = RankParams::new(RankKind::Median).size(&[5]).border(Border::Nearest).rank(2);
/// assert_eq!((p.size.as_slice(), p.rank), (&[5usize][..], Some(2)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RankParams {
    /// Which rank.
    pub kind: RankKind,
    /// The window's size: one for every axis, or one per axis.
    pub size: Vec<usize>,
    /// The window's taps (overrides `size`).
    pub footprint: Option<Footprint>,
    /// The border rule.
    pub border: Border,
    /// The window's shift (scipy's `origin`): one for every axis, or one per axis.
    pub origin: Vec<isize>,
    /// The axes spanned, the last ones.
    pub rank: Option<usize>,
    /// Non-flat structuring element values over the footprint's shape (row-major), for minimum and maximum
    /// only: the minimum of `x − s` (scipy's grey erosion with `structure`) or the maximum of `x + s`.
    pub structure: Option<Vec<f64>>,
    /// Keep the kernels on CPU devices, whose median, percentile and rank filters over windows of more than 49
    /// values otherwise run on the host's threads (`RankStrategy::Host`); for tests and benchmarks of the kernels.
    pub kernels_only: bool,
}

impl Default for RankParams {
    fn default() -> RankParams {
        RankParams::new(RankKind::Median)
    }
}

impl RankParams {
    /// A 3-wide window of `kind`, border `reflect`, origin 0.
    pub fn new(kind: RankKind) -> RankParams {
        RankParams {
            kind,
            size: vec![3],
            footprint: None,
            border: Border::Reflect,
            origin: vec![0],
            rank: None,
            structure: None,
            kernels_only: false,
        }
    }
    /// Sets the window's size (one, or one per axis).
    pub fn size(mut self, size: &[usize]) -> RankParams {
        self.size = size.to_vec();
        self
    }
    /// Sets the footprint.
    pub fn footprint(mut self, footprint: Footprint) -> RankParams {
        self.footprint = Some(footprint);
        self
    }
    /// Sets the border rule.
    pub fn border(mut self, border: Border) -> RankParams {
        self.border = border;
        self
    }
    /// Sets the origin (one, or one per axis).
    pub fn origin(mut self, origin: &[isize]) -> RankParams {
        self.origin = origin.to_vec();
        self
    }
    /// Sets the axes spanned (the last `rank`).
    pub fn rank(mut self, rank: usize) -> RankParams {
        self.rank = Some(rank);
        self
    }
    /// Keeps the kernels on CPU devices (see [`RankParams::kernels_only`](RankParams#structfield.kernels_only)).
    ///
    /// ```
    /// use cliper::{ClApp, DeviceKind, Process, RankFilter, RankKind, RankParams, RankStrategy, XData};
    /// let app = ClApp::new()?;
    /// let (x, y) = (XData::<f32>::zeros(&app, &[20, 30])?, XData::<f32>::zeros(&app, &[20, 30])?);
    /// let mut planned = RankFilter::new(&x, &y, RankParams::new(RankKind::Median).size(&[9]));
    /// let mut kernels = RankFilter::new(&x, &y, RankParams::new(RankKind::Median).size(&[9]).kernels_only(true));
    /// planned.init()?;
    /// kernels.init()?;
    /// let cpu = app.device().kind == DeviceKind::Cpu;
    /// assert_eq!(planned.strategy() == Some(RankStrategy::Host { taps: 81 }), cpu);
    /// assert_ne!(kernels.strategy(), Some(RankStrategy::Host { taps: 81 }));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn kernels_only(mut self, on: bool) -> RankParams {
        self.kernels_only = on;
        self
    }
    /// Sets non-flat structuring element values (row-major over `shape`; the footprint becomes `shape`'s box
    /// unless one is set), for minimum and maximum filters.
    ///
    /// ```
    /// use cliper::{RankKind, RankParams};
    /// let p = RankParams::new(RankKind::Minimum).structure(&[1, 3], &[1.0, 0.0, 1.0]).unwrap();
    /// assert_eq!(p.footprint.unwrap().shape(), &[1, 3]);
    /// assert!(RankParams::new(RankKind::Minimum).structure(&[3], &[1.0]).is_err());
    /// ```
    pub fn structure(mut self, shape: &[usize], values: &[f64]) -> Result<RankParams> {
        if shape.iter().product::<usize>() != values.len() {
            return Err(Error::invalid(
                self.kind.name(),
                format!(
                    "a structure of shape {shape:?} needs {} values, got {}",
                    shape.iter().product::<usize>(),
                    values.len()
                ),
            ));
        }
        if self.footprint.is_none() {
            self.footprint = Some(Footprint::full(shape)?);
        }
        self.structure = Some(values.to_vec());
        Ok(self)
    }

    /// The window these settings give on an array of `ndim` axes.
    pub(crate) fn window(&self, ndim: usize) -> Result<Window> {
        self.window_of(self.kind.name(), ndim)
    }

    /// The window on an array of `ndim` axes, errors naming `op` (a filter that uses the window, not its rank).
    pub(crate) fn window_of(&self, op: &str, ndim: usize) -> Result<Window> {
        let rank = self.rank.unwrap_or_else(|| match &self.footprint {
            Some(f) => f.shape.len(),
            None if self.size.len() > 1 => self.size.len(),
            None => ndim.min(3),
        });
        if !(1..=3).contains(&rank) || rank > ndim {
            return Err(Error::invalid(op, format!("spans 1 to 3 of the input's {ndim} axes; asked for {rank}")));
        }
        let per_axis = |values: &[usize], what: &str| -> Result<Vec<usize>> {
            match values {
                [one] => Ok(vec![*one; rank]),
                many if many.len() == rank => Ok(many.to_vec()),
                many => Err(Error::invalid(op, format!("gives {} {what} for a window over {rank} axes", many.len()))),
            }
        };
        let footprint = match &self.footprint {
            Some(f) if f.shape.len() != rank => {
                return Err(Error::shape_rule(op, format!("a footprint of {rank} axes (the axes filtered)"), &f.shape));
            }
            Some(f) => f.clone(),
            None => {
                let size = per_axis(&self.size, "sizes")?;
                if size.contains(&0) {
                    return Err(Error::invalid(op, format!("window sizes must be at least 1, got {size:?}")));
                }
                Footprint::full(&size)?
            }
        };
        let origin: Vec<isize> = match self.origin.as_slice() {
            [one] => vec![*one; rank],
            many if many.len() == rank => many.to_vec(),
            many => {
                return Err(Error::invalid(op, format!("gives {} origins for a window over {rank} axes", many.len())));
            }
        };
        // scipy: the window's tap j along an axis of size s reads index i + j − (s/2 + origin); the origin must
        // keep the centre inside the window.
        let mut before = Vec::with_capacity(rank);
        for (&s, &o) in footprint.shape.iter().zip(&origin) {
            let centre = (s / 2) as isize + o;
            if centre < 0 || centre >= s as isize {
                return Err(Error::invalid(op, format!("origin {o} moves the centre out of a window of size {s}")));
            }
            before.push(centre);
        }
        let count = footprint.count();
        let r = self.kind.rank_of(count)?;
        let values: Vec<f64> = match &self.structure {
            None => Vec::new(),
            Some(_) if !matches!(self.kind, RankKind::Minimum | RankKind::Maximum) => {
                return Err(Error::invalid(op, "a non-flat structure goes with minimum and maximum filters only"));
            }
            Some(v) if v.len() != footprint.mask.len() => {
                return Err(Error::Length {
                    op: format!("{op} structure values"),
                    shape: footprint.shape.clone(),
                    got: v.len(),
                });
            }
            Some(v) => v.iter().zip(&footprint.mask).filter(|(_, m)| **m).map(|(v, _)| *v).collect(),
        };
        let mut taps = Vec::with_capacity(count);
        for (i, _) in footprint.mask.iter().enumerate().filter(|(_, m)| **m) {
            let mut rest = i;
            let mut offset = [0isize; 3];
            for (k, (&s, &b)) in footprint.shape.iter().zip(&before).enumerate().rev() {
                let slot = 3 - rank + k;
                if let Some(o) = offset.get_mut(slot) {
                    *o = (rest % s) as isize - b;
                }
                rest /= s;
            }
            taps.push(offset);
        }
        Ok(Window { rank, shape: footprint.shape.clone(), before, full: footprint.is_full(), taps, r, values })
    }
}

/// A resolved window: the taps' offsets (z, y, x; unused leading axes 0), the rank taken, and for boxes the
/// per-axis extent and offset of the first tap.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Window {
    /// Axes spanned.
    pub(crate) rank: usize,
    /// The window's shape.
    pub(crate) shape: Vec<usize>,
    /// Per axis, how far the first tap lies before the element.
    pub(crate) before: Vec<isize>,
    /// Every tap of the box is set.
    pub(crate) full: bool,
    /// Every tap's offset.
    pub(crate) taps: Vec<[isize; 3]>,
    /// The 0-based rank taken.
    pub(crate) r: usize,
    /// Per tap, the non-flat structure's value (empty when flat).
    pub(crate) values: Vec<f64>,
}

impl Window {
    /// The taps on the device as int4 (z, y, x, 0) for the kernels' `global const int4*`: arrays hold floats only,
    /// so the integers travel as the bit patterns of f32 values (copied, never computed with).
    pub(crate) fn taps_on(&self, app: &crate::app::ClApp) -> Result<crate::data::XData<f32>> {
        let bits: Vec<f32> =
            self.taps.iter().flat_map(|t| [t[0], t[1], t[2], 0].map(|v| f32::from_bits(v as i32 as u32))).collect();
        crate::data::XData::from_slice(app, &[bits.len()], &bits)
    }
}

impl std::str::FromStr for RankKind {
    type Err = Error;
    /// `median`, `minimum`, `maximum`, `percentile:P` or `rank:R`.
    ///
    /// ```
    /// use cliper::RankKind;
    /// assert_eq!("percentile:90".parse::<RankKind>()?, RankKind::Percentile(90.0));
    /// assert_eq!("rank:-2".parse::<RankKind>()?, RankKind::Rank(-2));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    fn from_str(filter: &str) -> Result<RankKind> {
        let bad = || {
            Error::invalid(
                "rank-filter",
                format!("`{filter}` is not a rank filter: give median, minimum, maximum, percentile:P or rank:R"),
            )
        };
        let t = filter.trim().to_ascii_lowercase();
        Ok(match t.split_once(':') {
            None if t == "median" => RankKind::Median,
            None if t == "minimum" => RankKind::Minimum,
            None if t == "maximum" => RankKind::Maximum,
            Some(("percentile", p)) => RankKind::Percentile(p.trim().parse().map_err(|_| bad())?),
            Some(("rank", r)) => RankKind::Rank(r.trim().parse().map_err(|_| bad())?),
            _ => return Err(bad()),
        })
    }
}
