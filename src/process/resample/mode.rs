//! scipy.ndimage's boundary modes for interpolation and the host-side (float64) arithmetic that follows them:
//! where a coordinate outside the array lands (`map_coordinate`), where a spline tap outside lands (`map_tap`),
//! the B-spline weights and poles. The kernels in `kernels/resample.cl` carry the same rules for coordinates
//! computed on the device (affine transforms, `map_coordinates`).

use crate::error::{Error, Result};

/// How interpolation extends the input beyond its edges — scipy.ndimage's `mode` names, with scipy's meaning
/// (input `a b c d`):
///
/// | mode | beyond the edge | note |
/// |---|---|---|
/// | `Constant` | `cval` | no interpolation past the outermost samples (scipy's `constant`) |
/// | `GridConstant` | `cval` | interpolates towards `cval` past the edge (`grid-constant`) |
/// | `Nearest` | `a a a a b c d d d d` | (`nearest`) |
/// | `Reflect` | `d c b a a b c d d c b a` | half-sample symmetric (`reflect`, alias `grid-mirror`) |
/// | `Mirror` | `d c b a b c d c b a` | whole-sample symmetric (`mirror`) |
/// | `Wrap` | scipy's `wrap`: period `n − 1` | kept for compatibility; usually `GridWrap` is meant |
/// | `GridWrap` | `a b c d a b c d a b c d` | periodic (`grid-wrap`) |
///
/// ```
/// use cliper::InterpMode;
/// assert_eq!(InterpMode::parse("grid-mirror")?, InterpMode::Reflect);
/// assert_eq!(InterpMode::GridConstant.name(), "grid-constant");
/// assert!(InterpMode::parse("edge").is_err());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum InterpMode {
    /// `cval` outside `[0, n − 1]`, no interpolation there (scipy's default for zoom, shift, rotate, …).
    #[default]
    Constant,
    /// `cval` samples past the edge, interpolated with the data.
    GridConstant,
    /// The edge sample repeated.
    Nearest,
    /// Reflection about the edge of the last pixel (half-sample symmetric).
    Reflect,
    /// Reflection about the centre of the last pixel (whole-sample symmetric).
    Mirror,
    /// scipy's `wrap` (period n − 1: the first and last samples coincide).
    Wrap,
    /// Periodic with period n.
    GridWrap,
}

impl InterpMode {
    /// scipy's name (`grid-mirror` parses as `Reflect`).
    pub fn name(self) -> &'static str {
        match self {
            InterpMode::Constant => "constant",
            InterpMode::GridConstant => "grid-constant",
            InterpMode::Nearest => "nearest",
            InterpMode::Reflect => "reflect",
            InterpMode::Mirror => "mirror",
            InterpMode::Wrap => "wrap",
            InterpMode::GridWrap => "grid-wrap",
        }
    }

    /// The mode from scipy's name.
    pub fn parse(text: &str) -> Result<InterpMode> {
        Ok(match text {
            "constant" => InterpMode::Constant,
            "grid-constant" => InterpMode::GridConstant,
            "nearest" => InterpMode::Nearest,
            "reflect" | "grid-mirror" => InterpMode::Reflect,
            "mirror" => InterpMode::Mirror,
            "wrap" => InterpMode::Wrap,
            "grid-wrap" => InterpMode::GridWrap,
            other => {
                return Err(Error::invalid(
                    "interpolation",
                    format!(
                        "unknown mode `{other}`: use constant, grid-constant, nearest, reflect (grid-mirror), mirror, \
                         wrap or grid-wrap"
                    ),
                ));
            }
        })
    }

    /// The number the kernels know the mode by (`MODE_*` in `kernels/resample.cl`).
    pub(crate) fn code(self) -> i32 {
        match self {
            InterpMode::Constant => 0,
            InterpMode::GridConstant => 1,
            InterpMode::Nearest => 2,
            InterpMode::Reflect => 3,
            InterpMode::Mirror => 4,
            InterpMode::Wrap => 5,
            InterpMode::GridWrap => 6,
        }
    }

    /// How spline taps past the edge are mapped: `constant` and `wrap` have no exact spline boundary in scipy
    /// and use mirror; the others their own rule (`grid-constant` taps are `cval`).
    pub(crate) fn tap_mode(self) -> InterpMode {
        match self {
            InterpMode::Constant | InterpMode::Wrap => InterpMode::Mirror,
            other => other,
        }
    }

    /// The boundary the prefilter's recursions start from (scipy's `apply_filter`): 0 mirror, 1 reflect, 2 wrap.
    pub(crate) fn filter_init(self) -> i32 {
        match self {
            InterpMode::Constant | InterpMode::GridConstant | InterpMode::Mirror | InterpMode::Wrap => 0,
            InterpMode::Nearest | InterpMode::Reflect => 1,
            InterpMode::GridWrap => 2,
        }
    }

    /// Samples added on each side before prefiltering (scipy pads `nearest` and `grid-constant` by 12 with the
    /// edge value or `cval`, so that the prefilter sees the extension; the other modes have exact boundaries).
    pub(crate) fn prepad(self) -> usize {
        match self {
            InterpMode::Nearest | InterpMode::GridConstant => 12,
            _ => 0,
        }
    }
}

/// Where a coordinate outside `[0, len − 1]` lands (scipy's `map_coordinate`): −1 means "outside" for
/// `Constant`; `Nearest` and `GridConstant` are not mapped (the caller skips them, as scipy does).
pub(crate) fn map_coordinate(x: f64, len: usize, mode: InterpMode) -> f64 {
    let n = len as f64;
    if x < 0.0 {
        match mode {
            InterpMode::Mirror if len > 1 => {
                let s2 = 2.0 * n - 2.0;
                let t = s2 * (-x / s2).trunc() + x;
                if t <= 1.0 - n { t + s2 } else { -t }
            }
            InterpMode::Reflect if len > 1 => {
                let s2 = 2.0 * n;
                let t = if x < -s2 { s2 * (-x / s2).trunc() + x } else { x };
                if t < -n { t + s2 } else { (if t > -1e-15 { 1e-15 } else { -t }) - 1.0 }
            }
            InterpMode::Wrap if len > 1 => {
                let s = n - 1.0;
                x + s * ((-x / s).trunc() + 1.0)
            }
            InterpMode::GridWrap if len > 1 => x + n * (((-1.0 - x) / n).trunc() + 1.0),
            InterpMode::Nearest => 0.0,
            InterpMode::Constant => -1.0,
            InterpMode::GridConstant => x,
            _ => 0.0,
        }
    } else if x > n - 1.0 {
        match mode {
            InterpMode::Mirror if len > 1 => {
                let s2 = 2.0 * n - 2.0;
                let t = x - s2 * (x / s2).trunc();
                if t >= n { s2 - t } else { t }
            }
            InterpMode::Reflect if len > 1 => {
                let s2 = 2.0 * n;
                let t = x - s2 * (x / s2).trunc();
                if t >= n { s2 - t - 1.0 } else { t }
            }
            InterpMode::Wrap if len > 1 => {
                let s = n - 1.0;
                x - s * (x / s).trunc()
            }
            InterpMode::GridWrap if len > 1 => x - n * (x / n).trunc(),
            InterpMode::Nearest => n - 1.0,
            InterpMode::Constant => -1.0,
            InterpMode::GridConstant => x,
            _ => 0.0,
        }
    } else {
        x
    }
}

/// Where spline tap `i` (an integer index, maybe outside) lands for the tap mode `mode` (see
/// [`InterpMode::tap_mode`]); `None` for a `GridConstant` tap outside (it reads `cval`). The kernels' `map_tap`
/// does the same on the device; this one is the reference the unit tests hold it to.
#[cfg(test)]
fn map_tap(i: i64, len: usize, mode: InterpMode) -> Option<i64> {
    let n = len as i64;
    if (0..n).contains(&i) {
        return Some(i);
    }
    if mode == InterpMode::GridConstant {
        return None;
    }
    if mode == InterpMode::Nearest {
        return Some(i.clamp(0, n - 1));
    }
    // Integer taps map exactly in float64 (scipy maps them through map_coordinate).
    Some(map_coordinate(i as f64, len, mode) as i64)
}

/// The poles of the B-spline prefilter of `order` (2 to 5; none below).
pub(crate) fn poles(order: usize) -> &'static [f64] {
    match order {
        2 => &[-0.171_572_875_253_809_9],
        3 => &[-0.267_949_192_431_122_7],
        4 => &[-0.361_341_225_900_220_2, -0.013_725_429_297_339_121],
        5 => &[-0.430_575_347_099_973_8, -0.043_096_288_203_264_65],
        _ => &[],
    }
}

/// The first tap of the spline of `order` around coordinate `x` (scipy: odd orders start at floor(x), even at
/// the nearest sample, each minus order/2).
pub(crate) fn first_tap(x: f64, order: usize) -> i64 {
    let centre = if order % 2 == 1 { x.floor() } else { (x + 0.5).floor() };
    centre as i64 - (order / 2) as i64
}

/// The `order + 1` B-spline weights of the taps from [`first_tap`] (scipy's
/// `get_spline_interpolation_weights`; order 0 gives the single weight 1).
pub(crate) fn weights(x: f64, order: usize) -> [f64; 6] {
    let mut w = [0.0; 6];
    let x = x - if order % 2 == 1 { x.floor() } else { (x + 0.5).floor() };
    let z = 1.0 - x;
    match order {
        1 => w[0] = 1.0 - x,
        2 => {
            w[1] = 0.75 - x * x;
            let y = 0.5 - x;
            w[0] = 0.5 * y * y;
        }
        3 => {
            w[1] = (x * x * (x - 2.0) * 3.0 + 4.0) / 6.0;
            w[2] = (z * z * (z - 2.0) * 3.0 + 4.0) / 6.0;
            w[0] = z * z * z / 6.0;
        }
        4 => {
            let t = x * x;
            w[2] = t * (t * 0.25 - 0.625) + 115.0 / 192.0;
            let y = 1.0 + x;
            w[1] = y * (y * (y * (5.0 - y) / 6.0 - 1.25) + 5.0 / 24.0) + 55.0 / 96.0;
            w[3] = z * (z * (z * (5.0 - z) / 6.0 - 1.25) + 5.0 / 24.0) + 55.0 / 96.0;
            let y = 0.5 - x;
            let t = y * y;
            w[0] = t * t / 24.0;
        }
        5 => {
            let t = x * x;
            w[2] = t * (t * (0.25 - x / 12.0) - 0.5) + 0.55;
            let t = z * z;
            w[3] = t * (t * (0.25 - z / 12.0) - 0.5) + 0.55;
            let y = x + 1.0;
            w[1] = y * (y * (y * (y * (y / 24.0 - 0.375) + 1.25) - 1.75) + 0.625) + 0.425;
            let z2 = z + 1.0;
            w[4] = z2 * (z2 * (z2 * (z2 * (z2 / 24.0 - 0.375) + 1.25) - 1.75) + 0.625) + 0.425;
            let y = 1.0 - x;
            let t = y * y;
            w[0] = y * t * t / 120.0;
        }
        _ => {}
    }
    // The weights add to one: the last is what the others leave (as scipy computes it).
    let rest: f64 = w.iter().take(order).sum();
    if let Some(last) = w.get_mut(order) {
        *last = 1.0 - rest;
    }
    w
}

/// One output index's row of a separable pass: the first tap, whether the output is `cval` (a `Constant`
/// coordinate outside the input), and the weights.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct AxisRow {
    pub(crate) start: i64,
    pub(crate) outside: bool,
    pub(crate) weights: [f64; 6],
}

/// The row for input coordinate `x` (already shifted by the prepadding) on an axis of `len` samples, as scipy's
/// NI_ZoomShift and NI_GeometricTransform compute it.
pub(crate) fn axis_row(x: f64, len: usize, mode: InterpMode, order: usize) -> AxisRow {
    let x = match mode {
        InterpMode::GridConstant | InterpMode::Nearest => x,
        _ => map_coordinate(x, len, mode),
    };
    if x > -1.0 || matches!(mode, InterpMode::GridConstant | InterpMode::Nearest) {
        AxisRow { start: first_tap(x, order), outside: false, weights: weights(x, order) }
    } else {
        AxisRow { start: 0, outside: true, weights: [0.0; 6] }
    }
}

/// cos and sin of an angle in degrees, exact at multiples of 90° (scipy uses cosdg/sindg, which are).
pub(crate) fn cos_sin_degrees(angle: f64) -> (f64, f64) {
    let turn = angle.rem_euclid(360.0);
    if turn % 90.0 == 0.0 {
        match (turn / 90.0) as i64 {
            0 => (1.0, 0.0),
            1 => (0.0, 1.0),
            2 => (-1.0, 0.0),
            _ => (0.0, -1.0),
        }
    } else {
        let r = angle.to_radians();
        (r.cos(), r.sin())
    }
}

impl std::str::FromStr for InterpMode {
    type Err = Error;
    /// scipy's name, as [`InterpMode::parse`].
    fn from_str(text: &str) -> Result<InterpMode> {
        InterpMode::parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_map_as_scipy_does() {
        // Hand-checked against scipy.ndimage's map_coordinate for n = 5.
        assert_eq!(map_coordinate(-0.5, 5, InterpMode::Mirror), 0.5);
        assert_eq!(map_coordinate(-0.5, 5, InterpMode::Reflect), -0.5);
        assert_eq!(map_coordinate(-1.0, 5, InterpMode::Reflect), 0.0);
        assert_eq!(map_coordinate(5.5, 5, InterpMode::Mirror), 2.5);
        assert_eq!(map_coordinate(5.5, 5, InterpMode::GridWrap), 0.5);
        assert_eq!(map_coordinate(-0.5, 5, InterpMode::GridWrap), 4.5);
        assert_eq!(map_coordinate(4.5, 5, InterpMode::Wrap), 0.5);
        assert_eq!(map_coordinate(-0.5, 5, InterpMode::Constant), -1.0);
        assert_eq!(map_tap(-2, 5, InterpMode::Mirror), Some(2));
        assert_eq!(map_tap(-2, 5, InterpMode::Reflect), Some(1));
        assert_eq!(map_tap(6, 5, InterpMode::GridWrap), Some(1));
        assert_eq!(map_tap(6, 5, InterpMode::Nearest), Some(4));
        assert_eq!(map_tap(-1, 5, InterpMode::GridConstant), None);
    }

    #[test]
    fn weights_add_to_one_and_interpolate_at_knots() {
        for order in 0..=5 {
            for x in [0.0, 0.25, 0.5, 0.75, 3.3] {
                let w = weights(x, order);
                assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-15, "order {order} at {x}");
            }
        }
        // Cubic at a knot: 1/6, 4/6, 1/6.
        let w = weights(2.0, 3);
        assert!((w[0] - 1.0 / 6.0).abs() < 1e-15 && (w[1] - 4.0 / 6.0).abs() < 1e-15 && w[3].abs() < 1e-15);
        assert_eq!(cos_sin_degrees(90.0), (0.0, 1.0));
        assert_eq!(cos_sin_degrees(-90.0), (0.0, -1.0));
    }
}
