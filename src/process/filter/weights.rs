//! [`Filter`]: a small host-side filter (convolution kernel) with its shape, the named filters researchers
//! reach for, and the rank-1 test behind the separable fast path.

use crate::element::Element;
use crate::error::{Error, Result};
use num_complex::{Complex, Complex64};

/// Element types a filter may have for data of type `T`: `T` itself, or `T`'s real type for complex data (a
/// real Gaussian on complex k-space images costs half the multiplies of a complex one).
///
/// ```
/// fn accepts<T: cliper::Element, K: cliper::FilterElement<T>>() {}
/// accepts::<f32, f32>();
/// accepts::<num_complex::Complex32, f32>();
/// accepts::<num_complex::Complex64, num_complex::Complex64>();
/// ```
pub trait FilterElement<T: Element>: Element {
    /// The weight times a value, as the kernels form it (a real weight scales both parts of a complex value).
    ///
    /// ```
    /// use cliper::FilterElement;
    /// use num_complex::Complex32;
    /// assert_eq!(2.0f32.weigh(Complex32::new(1.0, -3.0)), Complex32::new(2.0, -6.0));
    /// ```
    fn weigh(self, x: T) -> T;
}
impl<T: Element> FilterElement<T> for T {
    #[inline(always)]
    fn weigh(self, x: T) -> T {
        self * x
    }
}
impl FilterElement<Complex<f32>> for f32 {
    #[inline(always)]
    fn weigh(self, x: Complex<f32>) -> Complex<f32> {
        x * self
    }
}
impl FilterElement<Complex<f64>> for f64 {
    #[inline(always)]
    fn weigh(self, x: Complex<f64>) -> Complex<f64> {
        x * self
    }
}

/// The smoothing across the derivative's axis in scipy.ndimage.sobel and .prewitt.
pub(super) const SOBEL_SMOOTHING: [f64; 3] = [1.0, 2.0, 1.0];
pub(super) const PREWITT_SMOOTHING: [f64; 3] = [1.0, 1.0, 1.0];
/// Scharr's smoothing (rotationally more symmetric than Sobel's), unnormalised as scipy's Sobel is.
pub(super) const SCHARR_SMOOTHING: [f64; 3] = [3.0, 10.0, 3.0];

/// A filter for [`super::Convolution`]: an N-d array of weights (rank 1 to 3) on the host. Filters are small;
/// `init` uploads them (flipped for a convolution, normalised when asked) so `launch` reads them on the device.
///
/// ```
/// use cliper::Filter;
/// let sobel = Filter::<f32>::sobel_x();
/// assert_eq!(sobel.shape(), &[3, 3]);
/// assert_eq!(sobel.values(), &[-1.0, 0.0, 1.0, -2.0, 0.0, 2.0, -1.0, 0.0, 1.0]);
/// let g = Filter::<f64>::gaussian(1.0, 2)?; // scipy's radius: ⌊4σ + 0.5⌋
/// assert_eq!(g.shape(), &[9, 9]);
/// assert!((g.values().iter().sum::<f64>() - 1.0).abs() < 1e-12);
/// let parts = g.separate().expect("a Gaussian is separable");
/// assert_eq!((parts[0].shape(), parts[1].shape()), (&[9usize][..], &[9usize][..]));
/// assert!(Filter::<f64>::laplacian().separate().is_none());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Filter<K: Element> {
    shape: Vec<usize>,
    values: Vec<K>,
    /// Whether a tap of weight 0 is left out of the sum rather than multiplied (0 · inf and 0 · NaN are NaN).
    zero_taps_skipped: bool,
}

/// Whether scipy's Gaussian filters leave an axis of this sigma alone (`gaussian_filter` skips sigmas ≤ 1e-15,
/// derivative orders on them included).
fn skipped(sigma: f64) -> bool {
    sigma <= 1e-15
}

/// The weights per axis of a Gaussian of `sigma`: scipy's radius ⌊4σ + 0.5⌋ on each side of the centre.
fn gaussian_extent(sigma: f64) -> f64 {
    2.0 * (4.0 * sigma + 0.5).floor() + 1.0
}

impl<K: Element> Filter<K> {
    /// The most weights a generated filter ([`Filter::gaussian`], [`Filter::box_filter`], [`Filter::outer`], …)
    /// may have: 2²⁸ (2 GiB of f64), far past any filter a convolution runs (a σ = 100 Gaussian on 3 axes has
    /// 801³ ≈ 5·10⁸ weights and is refused). Without it, `gaussian:1e15` asked for 64 PB and aborted the process.
    ///
    /// ```
    /// use cliper::Filter;
    /// assert!(Filter::<f32>::gaussian(1e15, 2).unwrap_err().to_string().contains("weights"));
    /// assert!(Filter::<f32>::gaussian(100.0, 2).is_ok());
    /// ```
    pub const MAX_ELEMENTS: usize = 1 << 28;

    /// `Ok` when a filter of `extents` weights per axis stays within [`Filter::MAX_ELEMENTS`] (checked before
    /// anything is allocated).
    fn check_generated(op: &str, what: &str, extents: &[f64]) -> Result<()> {
        let total = extents.iter().product::<f64>();
        if total.is_nan() || total > Filter::<K>::MAX_ELEMENTS as f64 {
            return Err(Error::invalid(
                op,
                format!(
                    "{what} makes {extents:?} weights per axis, {total:e} in all: more than the {} weights a \
                     generated filter may have",
                    Filter::<K>::MAX_ELEMENTS
                ),
            ));
        }
        Ok(())
    }

    /// A filter of `shape` (rank 1 to 3, no zero extent) from row-major `values`.
    pub fn new(shape: &[usize], values: Vec<K>) -> Result<Filter<K>> {
        let op = "Filter";
        if !(1..=3).contains(&shape.len()) {
            return Err(Error::invalid(op, format!("a filter has 1 to 3 axes, got shape {shape:?}")));
        }
        if shape.contains(&0) {
            return Err(Error::invalid(
                op,
                format!("a filter needs at least one weight per axis, got shape {shape:?}"),
            ));
        }
        let n = shape.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
        if n != Some(values.len()) {
            return Err(Error::invalid(
                op,
                format!("shape {shape:?} holds {} weights but {} were given", n.unwrap_or(usize::MAX), values.len()),
            ));
        }
        Ok(Filter { shape: shape.to_vec(), values, zero_taps_skipped: false })
    }

    /// The filter's shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The weights, row-major.
    pub fn values(&self) -> &[K] {
        &self.values
    }

    /// The number of axes.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// `outer(a, b, …)`: the filter whose weight at `(i, j, …)` is `a[i]·b[j]·…` for 1-D filters `a`, `b`, ….
    pub fn outer(parts: &[Filter<K>]) -> Result<Filter<K>> {
        let shape: Vec<usize> =
            parts.iter().filter_map(|p| if let &[n] = p.shape.as_slice() { Some(n) } else { None }).collect();
        if parts.is_empty() || parts.len() > 3 || shape.len() != parts.len() {
            return Err(Error::invalid("Filter::outer", "needs one to three 1-D filters"));
        }
        let extents: Vec<f64> = shape.iter().map(|&n| n as f64).collect();
        Self::check_generated("Filter::outer", &format!("shape {shape:?}"), &extents)?;
        let mut values = vec![Complex64::new(1.0, 0.0)];
        for p in parts {
            values = values.iter().flat_map(|&a| p.values.iter().map(move |&b| a * b.to_c64())).collect();
        }
        Filter::new(&shape, values.into_iter().map(K::from_c64).collect())
    }

    /// scipy.ndimage.gaussian_filter's kernel of standard deviation `sigma` on `rank` axes: radius ⌊4σ + 0.5⌋,
    /// weights `exp(−x²/2σ²)` normalised to sum 1 per axis.
    pub fn gaussian(sigma: f64, rank: usize) -> Result<Filter<K>> {
        Filter::gaussian_axes(&vec![sigma; rank.clamp(1, 3)]).map_err(|e| match e {
            Error::InvalidArgument { reason, .. } => Error::InvalidArgument { op: "Filter::gaussian".into(), reason },
            other => other,
        })
    }

    /// scipy.ndimage.gaussian_filter's kernel with one standard deviation per axis (`gaussian_filter(x, sigma=[…])`
    /// over 1 to 3 axes): the outer product of the 1-D kernels, each of radius ⌊4σ + 0.5⌋ and sum 1. Anisotropic
    /// voxels take this with σ in millimetres divided by each axis's spacing (`gaussian:1.5mm` on the command line).
    ///
    /// ```
    /// use cliper::Filter;
    /// let g = Filter::<f64>::gaussian_axes(&[0.5, 1.5])?; // coarse rows, fine columns
    /// assert_eq!(g.shape(), &[5, 13]);
    /// assert!((g.values().iter().sum::<f64>() - 1.0).abs() < 1e-12);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn gaussian_axes(sigmas: &[f64]) -> Result<Filter<K>> {
        Filter::outer(&Self::gaussian_lines(sigmas, "Filter::gaussian_axes")?)
    }

    /// The 1-D Gaussians of `sigmas` (one to three, positive and finite), their product's size checked before
    /// anything is allocated; errors name `op`.
    fn gaussian_lines(sigmas: &[f64], op: &str) -> Result<Vec<Filter<K>>> {
        if !(1..=3).contains(&sigmas.len()) {
            return Err(Error::invalid(op, format!("needs one to three sigmas, got {sigmas:?}")));
        }
        if let Some(bad) = sigmas.iter().find(|s| !(**s >= 0.0 && s.is_finite())) {
            return Err(Error::invalid(op, format!("sigma must be zero or positive and finite, got {bad}")));
        }
        let extents: Vec<f64> = sigmas.iter().map(|&s| gaussian_extent(s)).collect();
        Self::check_generated(op, &format!("sigmas {sigmas:?}"), &extents)?;
        sigmas.iter().map(|&s| Self::gaussian_line(s)).collect()
    }

    /// scipy.ndimage.gaussian_filter's kernel with derivative orders (`gaussian_filter(x, sigma, order=[…])`):
    /// per axis, the `order`-th derivative of the Gaussian of that axis's sigma (radius ⌊4σ + 0.5⌋), as
    /// correlation weights. Order 0 is the smoothing kernel of [`Filter::gaussian_axes`]; order 1 the first
    /// derivative (positive weights ahead of the centre, as `sobel`'s), and so on — scipy's weights
    /// `q(x)·g(x)`, with `g` the Gaussian normalised to sum 1 and `q` the polynomial of the derivative.
    ///
    /// ```
    /// use cliper::Filter;
    /// let d = Filter::<f64>::gaussian_derivative(&[1.0, 2.0], &[1, 0])?; // d/d(rows), smoothed along columns
    /// assert_eq!(d.shape(), &[9, 17]);
    /// assert!(d.values()[8 * 17 + 8] > 0.0 && d.values()[8] < 0.0); // ahead of the centre positive, behind negative
    /// assert!(Filter::<f64>::gaussian_derivative(&[1.0], &[5]).unwrap_err().to_string().contains("0 to 4"));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn gaussian_derivative(sigmas: &[f64], orders: &[usize]) -> Result<Filter<K>> {
        let op = "Filter::gaussian_derivative";
        if orders.len() != sigmas.len() {
            return Err(Error::invalid(op, format!("gives {} orders for {} sigmas", orders.len(), sigmas.len())));
        }
        if let Some(bad) = orders.iter().find(|&&o| o > 4) {
            return Err(Error::invalid(op, format!("derivative orders are 0 to 4, got {bad}")));
        }
        Self::gaussian_lines(sigmas, op)?;
        let lines: Vec<Filter<K>> =
            sigmas.iter().zip(orders).map(|(&s, &o)| Self::gaussian_derivative_line(s, o)).collect::<Result<_>>()?;
        Filter::outer(&lines)
    }

    /// scipy's `_gaussian_kernel1d(sigma, order, radius)` reversed (gaussian_filter1d correlates with it
    /// reversed): the Gaussian times the polynomial `q` with `q₀ = 1` and `qₙ₊₁ = qₙ' − x·qₙ/σ²`.
    fn gaussian_derivative_line(sigma: f64, order: usize) -> Result<Filter<K>> {
        if skipped(sigma) {
            return Self::identity_line();
        }
        let extent = gaussian_extent(sigma);
        let radius = ((extent - 1.0) / 2.0) as i64;
        let g: Vec<f64> = (-radius..=radius).map(|x| (-0.5 * (x as f64 / sigma).powi(2)).exp()).collect();
        let sum: f64 = g.iter().sum();
        // q's coefficients, lowest power first.
        let mut q = vec![1.0];
        for _ in 0..order {
            let mut next = vec![0.0; q.len() + 1];
            for (k, &c) in q.iter().enumerate() {
                if let Some(slot) = k.checked_sub(1).and_then(|j| next.get_mut(j)) {
                    *slot += k as f64 * c;
                }
                if let Some(slot) = next.get_mut(k + 1) {
                    *slot -= c / (sigma * sigma);
                }
            }
            q = next;
        }
        let mut w: Vec<f64> = (-radius..=radius)
            .zip(&g)
            .map(|(x, gx)| q.iter().rev().fold(0.0, |acc, c| acc * x as f64 + c) * gx / sum)
            .collect();
        w.reverse();
        Filter::new(&[w.len()], w.iter().map(|&v| K::from_c64(v.into())).collect())
    }

    /// The 1-D Gaussian of `sigma` (radius ⌊4σ + 0.5⌋, sum 1); `gaussian_lines` checked sigma and the size.
    fn gaussian_line(sigma: f64) -> Result<Filter<K>> {
        if skipped(sigma) {
            return Self::identity_line();
        }
        let extent = gaussian_extent(sigma);
        let radius = ((extent - 1.0) / 2.0) as i64;
        let w: Vec<f64> = (-radius..=radius).map(|x| (-0.5 * (x as f64 / sigma).powi(2)).exp()).collect();
        let sum: f64 = w.iter().sum();
        Filter::new(&[w.len()], w.iter().map(|v| K::from_c64((v / sum).into())).collect())
    }

    /// The one-tap line `[1]`: an axis scipy's Gaussian filters leave alone.
    fn identity_line() -> Result<Filter<K>> {
        Filter::new(&[1], vec![K::from_c64(1.0.into())])
    }

    /// scipy.ndimage.gaussian_laplace's operator as one kernel on `rank` axes: the sum over the axes of the
    /// Gaussian's second derivative along that axis times the Gaussian along the others. Radius ⌊4σ + 0.5⌋ and
    /// scipy's order-2 weights `(x²/σ⁴ − 1/σ²)·g(x)`, with `g` the Gaussian normalised to sum 1.
    ///
    /// ```
    /// use cliper::Filter;
    /// let log = Filter::<f64>::laplacian_of_gaussian(1.0, 2)?;
    /// assert_eq!(log.shape(), &[9, 9]);
    /// assert!(log.values()[4 * 9 + 4] < 0.0); // a negative centre, like scipy's
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn laplacian_of_gaussian(sigma: f64, rank: usize) -> Result<Filter<K>> {
        if !(1..=3).contains(&rank) {
            return Err(Error::invalid("Filter::laplacian_of_gaussian", format!("needs rank 1 to 3, got {rank}")));
        }
        Filter::laplacian_of_gaussian_axes(&vec![sigma; rank]).map_err(|e| match e {
            Error::InvalidArgument { reason, .. } => {
                Error::InvalidArgument { op: "Filter::laplacian_of_gaussian".into(), reason }
            }
            other => other,
        })
    }

    /// scipy.ndimage.gaussian_laplace with one standard deviation per axis (1 to 3 axes): the sum over the axes
    /// of the second derivative of that axis's Gaussian times the Gaussians of the others.
    ///
    /// ```
    /// let log = cliper::Filter::<f64>::laplacian_of_gaussian_axes(&[1.0, 2.0])?;
    /// assert_eq!(log.shape(), &[9, 17]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn laplacian_of_gaussian_axes(sigmas: &[f64]) -> Result<Filter<K>> {
        let op = "Filter::laplacian_of_gaussian_axes";
        let gaussians = Self::gaussian_lines(sigmas, op)?;
        let mut total: Option<Filter<K>> = None;
        for (axis, (gaussian, &sigma)) in gaussians.iter().zip(sigmas).enumerate() {
            // An axis of sigma 0 is skipped by scipy's gaussian_filter, its order 2 with it: its term is the
            // Gaussian of the other axes. Elsewhere scipy's order-2 weights (x²/σ⁴ − 1/σ²)·g(x), g of sum 1.
            let s2 = if skipped(sigma) { 1.0 } else { sigma * sigma };
            let curvature = if skipped(sigma) { 0.0 } else { 1.0 };
            let radius = (gaussian.values.len() / 2) as f64;
            let second: Vec<K> = gaussian
                .values
                .iter()
                .enumerate()
                .map(|(i, g)| {
                    let x = i as f64 - radius;
                    K::from_c64(g.to_c64() * (curvature * (x * x / (s2 * s2) - 1.0 / s2) + 1.0 - curvature))
                })
                .collect();
            let second = Filter::new(&[second.len()], second)?;
            let parts: Vec<Filter<K>> =
                gaussians.iter().enumerate().map(|(a, g)| if a == axis { second.clone() } else { g.clone() }).collect();
            let term = Filter::outer(&parts)?;
            total = Some(match total {
                None => term,
                Some(t) => {
                    let values = t.values.iter().zip(&term.values).map(|(a, b)| K::from_c64(a.to_c64() + b.to_c64()));
                    Filter { shape: t.shape, values: values.collect(), zero_taps_skipped: false }
                }
            });
        }
        total.ok_or_else(|| Error::invalid(op, "no sigma"))
    }

    /// A filter by name, as the `cliper` command line and pipeline files spell them, on `rank` axes (1 to 3, the
    /// last `rank` axes of the data): `gaussian:SIGMA`, `box:SIZE`, `log:SIGMA` (Laplacian of Gaussian),
    /// `laplacian`, and the derivatives `sobel-x`, `sobel-y`, `sobel-z`, `prewitt-x`, `prewitt-y`, `prewitt-z`
    /// (x the last axis, y the one before, z the one before that). Applied as correlations (the weights as they
    /// lie), each equals scipy.ndimage's function of that name: `gaussian_filter`, `uniform_filter`,
    /// `gaussian_laplace`, `laplace`, `sobel(axis=-1)`, … An unknown name, a derivative along an axis the rank
    /// does not have, or a bad number is an error listing the names.
    ///
    /// ```
    /// use cliper::Filter;
    /// assert_eq!(Filter::<f32>::named("gaussian:1.5", 2)?.shape(), &[13, 13]);
    /// assert_eq!(Filter::<f32>::named("box:3", 3)?.shape(), &[3, 3, 3]);
    /// assert_eq!(Filter::<f32>::named("sobel-x", 2)?, Filter::sobel_x());
    /// assert_eq!(Filter::<f32>::named("sobel-z", 3)?, Filter::sobel(0, 3)?);
    /// assert!(Filter::<f32>::named("sobel-z", 2).unwrap_err().to_string().contains("rank 3"));
    /// assert!(Filter::<f32>::named("blur:2", 2).unwrap_err().to_string().contains("gaussian:SIGMA"));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn named(spec: &str, rank: usize) -> Result<Filter<K>> {
        let known = "gaussian:SIGMA, gaussian:SIGMA:ORDER, box:SIZE, log:SIGMA, laplacian, sobel-x, sobel-y, \
                     sobel-z, prewitt-x, prewitt-y, prewitt-z, scharr-x, scharr-y, scharr-z";
        let bad = |why: String| Error::invalid("filter", format!("{why}; known filters: {known}"));
        let (name, arg) = match spec.split_once(':') {
            Some((n, a)) => (n.trim().to_ascii_lowercase().replace('_', "-"), Some(a.trim())),
            None => (spec.trim().to_ascii_lowercase().replace('_', "-"), None),
        };
        // gaussian:SIGMA:ORDER — derivative orders, one for every axis or one per axis (gaussian_filter's order).
        let (arg, orders) = match arg.and_then(|a| a.split_once(':')) {
            Some((sigma, orders)) if name == "gaussian" => (Some(sigma.trim()), Some(orders.trim())),
            Some(_) => return Err(bad(format!("`{spec}`: only gaussian takes a second parameter (the orders)"))),
            None => (arg, None),
        };
        let number = |what: &str| -> Result<f64> {
            let text = arg.ok_or_else(|| bad(format!("`{name}` needs a {what}, as in `{name}:2`")))?;
            text.parse::<f64>().map_err(|_| bad(format!("`{text}` in `{spec}` is not a number")))
        };
        // One sigma for every axis, or one per axis (`gaussian:1,1,2.5`), in voxels.
        let sigmas = || -> Result<Vec<f64>> {
            let text = arg.ok_or_else(|| bad(format!("`{name}` needs a sigma, as in `{name}:2` or `{name}:1,2`")))?;
            if text.to_ascii_lowercase().contains("mm") {
                return Err(Error::invalid(
                    format!("filter {spec}"),
                    "sigmas in millimetres need the input's voxel spacing, which only DICOM and NIfTI inputs carry; \
                     give sigma in voxels (`gaussian:2`, or one per axis `gaussian:1,1,2`)",
                ));
            }
            let values: Vec<f64> = text
                .split(',')
                .map(|t| t.trim().parse::<f64>().map_err(|_| bad(format!("`{t}` in `{spec}` is not a number"))))
                .collect::<Result<_>>()?;
            match values.as_slice() {
                [one] => Ok(vec![*one; rank.clamp(1, 3)]),
                many if many.len() == rank => Ok(many.to_vec()),
                many => Err(Error::invalid(
                    format!("filter {spec}"),
                    format!("gives {} sigmas for a filter over {rank} axes: give one, or one per axis", many.len()),
                )),
            }
        };
        if arg.is_some() && !matches!(name.as_str(), "gaussian" | "log" | "box") {
            return Err(bad(format!("`{name}` takes no parameter")));
        }
        // Derivative axes counted from the last: x = rank − 1, y = rank − 2, z = rank − 3.
        let derivative_axis = |letter: &str| -> Result<usize> {
            let back = match letter {
                "x" => 1,
                "y" => 2,
                _ => 3,
            };
            rank.checked_sub(back).filter(|_| (1..=3).contains(&rank)).ok_or_else(|| {
                Error::invalid(
                    "filter",
                    format!("`{name}` differentiates along axis {letter}, which needs rank {back} or more, not {rank}"),
                )
            })
        };
        // Errors speak of the filter by the name it was given, not of the function that makes it.
        let as_named = |e: Error| match e {
            Error::InvalidArgument { reason, .. } => Error::InvalidArgument { op: format!("filter {spec}"), reason },
            other => other,
        };
        let filter = match name.as_str() {
            "gaussian" if (1..=3).contains(&rank) => match orders {
                None => Filter::gaussian_axes(&sigmas()?),
                Some(text) => {
                    let sigmas = sigmas()?;
                    let orders: Vec<usize> = text
                        .split(',')
                        .map(|t| {
                            t.trim().parse::<usize>().map_err(|_| bad(format!("`{t}` in `{spec}` is not an order")))
                        })
                        .collect::<Result<_>>()?;
                    let orders = match orders.as_slice() {
                        [one] => vec![*one; sigmas.len()],
                        many => many.to_vec(),
                    };
                    Filter::gaussian_derivative(&sigmas, &orders)
                }
            },
            "log" | "gaussian-laplace" if (1..=3).contains(&rank) => Filter::laplacian_of_gaussian_axes(&sigmas()?),
            "gaussian" | "log" | "gaussian-laplace" => {
                Err(Error::invalid("filter", format!("`{name}` spans 1 to 3 axes, not {rank}")))
            }
            "box" => {
                let size = number("size")?;
                if size < 1.0 || size.fract() != 0.0 {
                    return Err(bad(format!("box size must be a whole number ≥ 1, got {size}")));
                }
                Filter::box_filter(size as usize, rank)
            }
            "laplacian" | "laplace" => Filter::laplace(rank),
            "sobel-x" | "sobel-y" | "sobel-z" => Filter::sobel(derivative_axis(&name[6..])?, rank),
            "prewitt-x" | "prewitt-y" | "prewitt-z" => Filter::prewitt(derivative_axis(&name[8..])?, rank),
            "scharr-x" | "scharr-y" | "scharr-z" => Filter::scharr(derivative_axis(&name[7..])?, rank),
            _ => Err(bad(format!("unknown filter `{spec}`"))),
        };
        filter.map_err(as_named)
    }

    /// scipy.ndimage.sobel along `axis` of `rank` axes, as correlation weights: the central difference
    /// `[−1, 0, 1]` along `axis` times the smoothing `[1, 2, 1]` along every other axis.
    ///
    /// ```
    /// use cliper::Filter;
    /// assert_eq!(Filter::<f64>::sobel(1, 2)?, Filter::sobel_x()); // axis −1 of a 2-D image
    /// assert_eq!(Filter::<f64>::sobel(2, 3)?.shape(), &[3, 3, 3]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn sobel(axis: usize, rank: usize) -> Result<Filter<K>> {
        Self::derivative(axis, rank, SOBEL_SMOOTHING, "Filter::sobel")
    }

    /// scipy.ndimage.prewitt along `axis` of `rank` axes, as correlation weights: `[−1, 0, 1]` along `axis`
    /// times `[1, 1, 1]` along every other axis.
    ///
    /// ```
    /// let p = cliper::Filter::<f32>::prewitt(0, 2)?;
    /// assert_eq!(p.values(), &[-1.0, -1.0, -1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn prewitt(axis: usize, rank: usize) -> Result<Filter<K>> {
        Self::derivative(axis, rank, PREWITT_SMOOTHING, "Filter::prewitt")
    }

    /// Scharr's derivative along `axis` of `rank` axes in scipy.ndimage.sobel's convention (scipy has no
    /// `scharr`; scikit-image's divides by 32 in 2-D): `[−1, 0, 1]` along `axis` times `[3, 10, 3]` along every
    /// other axis, unnormalised.
    ///
    /// ```
    /// let s = cliper::Filter::<f32>::scharr(1, 2)?;
    /// assert_eq!(s.values(), &[-3.0, 0.0, 3.0, -10.0, 0.0, 10.0, -3.0, 0.0, 3.0]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn scharr(axis: usize, rank: usize) -> Result<Filter<K>> {
        Self::derivative(axis, rank, SCHARR_SMOOTHING, "Filter::scharr")
    }

    fn derivative(axis: usize, rank: usize, smooth: [f64; 3], op: &str) -> Result<Filter<K>> {
        if !(1..=3).contains(&rank) || axis >= rank {
            return Err(Error::invalid(
                op,
                format!("needs rank 1 to 3 and an axis below it, got axis {axis} of rank {rank}"),
            ));
        }
        Ok(Self::derivative_weights(axis, rank, smooth))
    }

    /// The weights of `derivative` for a valid axis and rank: at each index, the product over the axes
    /// of `[−1, 0, 1]` (along `axis`) or `smooth` (along the others) at that index's coordinate.
    fn derivative_weights(axis: usize, rank: usize, smooth: [f64; 3]) -> Filter<K> {
        let weight = |i: usize| {
            (0..rank).fold(1.0, |w, a| {
                let coordinate = i / 3usize.pow((rank - 1 - a) as u32) % 3;
                let line = if a == axis { [-1.0, 0.0, 1.0] } else { smooth };
                w * line.get(coordinate).copied().unwrap_or(0.0)
            })
        };
        let values: Vec<f64> = (0..3usize.pow(rank as u32)).map(weight).collect();
        Self::fixed(&vec![3; rank], &values)
    }

    /// scipy.ndimage.laplace on `rank` axes: the sum over the axes of `[1, −2, 1]` along each — in 2-D the
    /// five-point stencil, in 3-D the seven-point one (zero sum).
    ///
    /// ```
    /// use cliper::Filter;
    /// assert_eq!(Filter::<f32>::laplace(2)?, Filter::laplacian());
    /// let l3 = Filter::<f64>::laplace(3)?;
    /// assert_eq!((l3.shape(), l3.values()[13]), (&[3usize, 3, 3][..], -6.0));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn laplace(rank: usize) -> Result<Filter<K>> {
        if !(1..=3).contains(&rank) {
            return Err(Error::invalid("Filter::laplace", format!("needs rank 1 to 3, got {rank}")));
        }
        Ok(Self::laplace_weights(rank))
    }

    /// The weights of `laplace` for rank 1 to 3: −2·rank at the centre, 1 at the centre ± 3^k (the
    /// neighbours along each axis). The zero taps are skipped: scipy sums a `[1, −2, 1]` pass per axis, so a value
    /// off the axes through the centre (a diagonal) takes no part, and an infinity there makes no NaN.
    fn laplace_weights(rank: usize) -> Filter<K> {
        let count = 3usize.pow(rank as u32);
        let centre = count / 2;
        let neighbours: Vec<usize> = (0..rank as u32).map(|k| 3usize.pow(k)).collect();
        let values: Vec<f64> = (0..count)
            .map(|i| match i.abs_diff(centre) {
                0 => -2.0 * rank as f64,
                d if neighbours.contains(&d) => 1.0,
                _ => 0.0,
            })
            .collect();
        Self::fixed(&vec![3; rank], &values).skipping_zero_taps(true)
    }

    /// Leaves the taps of weight 0 out of the sum (on) or multiplies them as every other (off, the default):
    /// they differ only where a value under a zero tap is NaN or infinite (0 · inf is NaN). On is
    /// scipy.ndimage.laplace's rule (and `correlate`'s, which drops weights of magnitude ≤ 2⁻⁵²: give such weights
    /// as 0); off is `correlate1d`'s, which Sobel, Prewitt and the Gaussian derivatives run on. FFT convolution
    /// cannot skip taps: it spreads a NaN or an infinity over the whole image either way.
    ///
    /// ```
    /// use cliper::Filter;
    /// assert!(Filter::<f32>::laplacian().skips_zero_taps() && !Filter::<f32>::sobel_x().skips_zero_taps());
    /// let cross = Filter::<f32>::new(&[3, 3], vec![0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0])?;
    /// assert!(cross.skipping_zero_taps(true).skips_zero_taps());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn skipping_zero_taps(mut self, on: bool) -> Filter<K> {
        self.zero_taps_skipped = on;
        self
    }

    /// Whether taps of weight 0 are left out of the sum ([`Filter::skipping_zero_taps`]).
    pub fn skips_zero_taps(&self) -> bool {
        self.zero_taps_skipped
    }

    /// Whether the sum leaves some tap out: zero taps skipped and at least one weight 0.
    pub(crate) fn leaves_taps_out(&self) -> bool {
        self.zero_taps_skipped && self.values.iter().any(|v| v.to_c64() == Complex64::new(0.0, 0.0))
    }

    /// The mean over a box of `size` weights per axis on `rank` axes (scipy.ndimage.uniform_filter).
    pub fn box_filter(size: usize, rank: usize) -> Result<Filter<K>> {
        Self::check_generated("Filter::box_filter", &format!("size {size}"), &vec![size as f64; rank.clamp(1, 3)])?;
        Self::repeated_1d(vec![1.0 / size as f64; size], rank, "Filter::box_filter")
    }

    fn repeated_1d(w: Vec<f64>, rank: usize, op: &str) -> Result<Filter<K>> {
        if !(1..=3).contains(&rank) || w.is_empty() {
            return Err(Error::invalid(op, format!("needs rank 1 to 3 and a size of at least 1, got rank {rank}")));
        }
        let line = Filter::new(&[w.len()], w.into_iter().map(|v| K::from_c64(v.into())).collect())?;
        Filter::outer(&vec![line; rank])
    }

    /// The 3×3 Sobel derivative along the last axis (x), as correlation weights (scipy.ndimage.sobel, axis=-1).
    pub fn sobel_x() -> Filter<K> {
        Self::derivative_weights(1, 2, SOBEL_SMOOTHING)
    }

    /// The 3×3 Sobel derivative along the first axis (y), as correlation weights (scipy.ndimage.sobel, axis=0).
    pub fn sobel_y() -> Filter<K> {
        Self::derivative_weights(0, 2, SOBEL_SMOOTHING)
    }

    /// The 3×3 five-point Laplacian `[[0, 1, 0], [1, −4, 1], [0, 1, 0]]` (zero sum).
    pub fn laplacian() -> Filter<K> {
        Self::laplace_weights(2)
    }

    fn fixed(shape: &[usize], w: &[f64]) -> Filter<K> {
        Filter {
            shape: shape.to_vec(),
            values: w.iter().map(|&v| K::from_c64(v.into())).collect(),
            zero_taps_skipped: false,
        }
    }

    /// The sum of the weights.
    pub fn sum(&self) -> Complex64 {
        self.values.iter().map(|v| v.to_c64()).sum()
    }

    /// The filter divided by the sum of its weights, or an error when that sum is zero up to rounding
    /// (|Σw| < 64·ε·Σ|w|, ε the unit roundoff of the weights' type): Sobel and Laplacian filters sum to zero and
    /// cannot be normalised.
    pub fn normalized(&self) -> Result<Filter<K>> {
        let sum = self.sum();
        let magnitude: f64 = self.values.iter().map(|v| v.to_c64().norm()).sum();
        let eps = if K::IS_DOUBLE { f64::EPSILON / 2.0 } else { f32::EPSILON as f64 / 2.0 };
        // NaN weights fail the comparison too.
        let distinguishable = sum.norm() >= 64.0 * eps * magnitude;
        if !distinguishable || magnitude == 0.0 {
            return Err(Error::invalid(
                "Convolution",
                format!(
                    "cannot normalise a filter of shape {:?} by its sum {sum}: the weights sum to zero (Σ|w| = \
                     {magnitude}); zero-sum filters such as Sobel or Laplacian are used unnormalised",
                    self.shape
                ),
            ));
        }
        let values = self.values.iter().map(|&v| K::from_c64(v.to_c64() / sum)).collect();
        Ok(Filter { shape: self.shape.clone(), values, zero_taps_skipped: self.zero_taps_skipped })
    }

    /// The filter reversed along every axis (what turns a correlation into a convolution).
    pub fn flipped(&self) -> Filter<K> {
        let mut values = self.values.clone();
        // Reversing the row-major list reverses every axis at once.
        values.reverse();
        Filter { shape: self.shape.clone(), values, zero_taps_skipped: self.zero_taps_skipped }
    }

    /// One 1-D filter per axis whose outer product is this filter, when it has rank 1 up to rounding (every
    /// weight within 32·ε·max|w| of the product, ε the unit roundoff of the weights' type); `None` for 1-D
    /// filters, for filters of rank > 1 (a Laplacian), and for an all-zero filter.
    ///
    /// The factors come from the largest weight `w[p]`: along each axis, the line of weights through `p`,
    /// divided by `w[p]` on all but the first axis.
    pub fn separate(&self) -> Option<Vec<Filter<K>>> {
        if self.ndim() < 2 {
            return None;
        }
        let w: Vec<Complex64> = self.values.iter().map(|v| v.to_c64()).collect();
        let (pivot, peak, top) = w
            .iter()
            .enumerate()
            .map(|(i, &v)| (i, v.norm(), v))
            .fold((0, 0.0, Complex64::new(0.0, 0.0)), |best, cur| if cur.1 > best.1 { cur } else { best });
        if peak == 0.0 {
            return None;
        }
        // Row-major strides: products of extents ≥ 1 (`Filter::new` refuses empty axes), so never 0.
        let strides: Vec<usize> = (1..=self.ndim()).map(|k| self.shape.iter().skip(k).product()).collect();
        let factors: Vec<Vec<Complex64>> = strides
            .iter()
            .zip(&self.shape)
            .enumerate()
            .map(|(k, (&s, &n))| {
                let base = pivot - pivot / s % n * s;
                let scale = if k == 0 { Complex64::new(1.0, 0.0) } else { top };
                w.iter().skip(base).step_by(s).take(n).map(|&v| v / scale).collect()
            })
            .collect();
        let eps = if K::IS_DOUBLE { f64::EPSILON / 2.0 } else { f32::EPSILON as f64 / 2.0 };
        // The outer product of the factors, row-major like `w`: each entry the product over the axes in order.
        let mut products = vec![Complex64::new(1.0, 0.0)];
        for f in &factors {
            products = products.iter().flat_map(|&a| f.iter().map(move |&b| a * b)).collect();
        }
        let fits = w.len() == products.len()
            && w.iter().zip(&products).all(|(&v, &product)| (v - product).norm() <= 32.0 * eps * peak);
        fits.then(|| {
            factors
                .into_iter()
                .map(|f| Filter {
                    shape: vec![f.len()],
                    values: f.into_iter().map(K::from_c64).collect(),
                    zero_taps_skipped: self.zero_taps_skipped,
                })
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_checked() {
        assert!(Filter::<f32>::new(&[2, 2], vec![1.0; 3]).unwrap_err().to_string().contains("holds 4"));
        assert!(Filter::<f32>::new(&[0, 2], vec![]).is_err());
        assert!(Filter::<f32>::new(&[1, 1, 1, 1], vec![1.0]).is_err());
    }

    #[test]
    fn separation_rebuilds_rank_one_filters_only() {
        let g = Filter::<f32>::gaussian(1.5, 3).unwrap();
        let parts = g.separate().unwrap();
        let back = Filter::outer(&parts).unwrap();
        for (a, b) in back.values().iter().zip(g.values()) {
            assert!((a - b).abs() <= 1e-6 * g.values().iter().fold(0.0f32, |m, v| m.max(*v)));
        }
        assert!(Filter::<f32>::sobel_x().separate().is_some()); // [1 2 1]ᵀ ⊗ [-1 0 1]
        assert!(Filter::<f32>::laplacian().separate().is_none());
        assert!(Filter::<f32>::new(&[2, 2], vec![0.0; 4]).unwrap().separate().is_none());
        assert!(Filter::<f32>::new(&[5], vec![1.0; 5]).unwrap().separate().is_none());
    }

    #[test]
    fn zero_sum_filters_do_not_normalise() {
        let e = Filter::<f64>::laplacian().normalized().unwrap_err().to_string();
        assert!(e.contains("sum to zero") && e.contains("[3, 3]"), "{e}");
        let b = Filter::<f64>::new(&[2], vec![1.0, 3.0]).unwrap().normalized().unwrap();
        assert_eq!(b.values(), &[0.25, 0.75]);
    }
}
