//! [`Border`]: how values outside an array are defined, shared by [`super::Pad`] and the convolutions.

use crate::error::{Error, Result};

/// How an array is extended past its edges (by [`super::Pad`], and on the fly inside the convolution kernels).
///
/// The variants are scipy.ndimage's mode names — the one vocabulary of the filters, the interpolations
/// ([`crate::InterpMode`]), the command line and pipeline files; `pad` alone speaks numpy.pad's, which
/// [`Border::numpy`] parses. Each mode extends as `numpy.pad` does, including widths larger than the axis (the rule
/// then repeats periodically). For an array `a b c d`:
///
/// | `Border`          | extension            | scipy.ndimage mode        | numpy.pad mode |
/// |-------------------|----------------------|---------------------------|----------------|
/// | `Constant(v)`     | `v v v │ a b c d │ v v v` | `constant` (`cval = v`) | `constant` |
/// | `Nearest`         | `a a a │ a b c d │ d d d` | `nearest`               | `edge`     |
/// | `Reflect`         | `c b a │ a b c d │ d c b` | `reflect`               | `symmetric`|
/// | `Mirror`          | `d c b │ a b c d │ c b a` | `mirror`                | `reflect`  |
/// | `Wrap`            | `b c d │ a b c d │ a b c` | `wrap` / `grid-wrap`    | `wrap`     |
///
/// Note numpy's crossed names: numpy's `symmetric` is scipy's `reflect` (edge repeated), numpy's `reflect` is
/// scipy's `mirror`. There is no default border: each process's parameters state theirs (numpy.pad's `constant` for
/// [`super::PadParams`], scipy.ndimage's `reflect` = [`Border::Reflect`] for [`super::ConvParams`], zeros for
/// [`super::FilterBankParams`] as in cuDNN). [`Border::numpy`] and [`Border::scipy`] parse either library's names. An axis of extent 1
/// extends as `Nearest` under `Mirror`, as both libraries do.
///
/// ```
/// use cliper::Border;
/// assert_eq!(Border::scipy("reflect")?, Border::Reflect);
/// assert_eq!(Border::numpy("reflect")?, Border::Mirror);
/// assert_eq!(Border::scipy("nearest")?, Border::Nearest);
/// assert!(Border::numpy("mirror").unwrap_err().to_string().contains("mirror"));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Border {
    /// A constant value (for complex data: real part `v`, imaginary part 0).
    Constant(f64),
    /// The edge value repeated (scipy `nearest`, numpy `edge`).
    Nearest,
    /// Mirrored about the edge, which is repeated (scipy `reflect`, numpy `symmetric`).
    Reflect,
    /// Mirrored about the edge element, which is not repeated (scipy `mirror`, numpy `reflect`).
    Mirror,
    /// Periodic continuation.
    Wrap,
}

impl Border {
    /// Zero padding.
    pub const ZERO: Border = Border::Constant(0.0);

    /// A mode by its `numpy.pad` name: `constant` (zero), `edge`, `reflect`, `symmetric`, `wrap`.
    pub fn numpy(name: &str) -> Result<Border> {
        Ok(match name {
            "constant" => Border::ZERO,
            "edge" => Border::Nearest,
            "reflect" => Border::Mirror,
            "symmetric" => Border::Reflect,
            "wrap" => Border::Wrap,
            _ => {
                return Err(Error::invalid(
                    "Border",
                    format!("unknown numpy.pad mode {name:?}; expected constant, edge, reflect, symmetric or wrap"),
                ));
            }
        })
    }

    /// A mode by its `scipy.ndimage` name: `constant`/`grid-constant` (zero), `nearest`, `reflect`, `mirror`,
    /// `wrap`/`grid-wrap`, `grid-mirror` (= `reflect`).
    pub fn scipy(name: &str) -> Result<Border> {
        Ok(match name {
            "constant" | "grid-constant" => Border::ZERO,
            "nearest" => Border::Nearest,
            "reflect" | "grid-mirror" => Border::Reflect,
            "mirror" => Border::Mirror,
            "wrap" | "grid-wrap" => Border::Wrap,
            _ => {
                return Err(Error::invalid(
                    "Border",
                    format!("unknown scipy.ndimage mode {name:?}; expected constant, nearest, reflect, mirror or wrap"),
                ));
            }
        })
    }

    /// The `-DBORDER=` option the kernels take (`border_index` in `kernels/common.cl`): the name of the mode's
    /// macro there, so that its number is written in one place only (common.cl's `#define`s).
    pub(crate) fn build_option(self) -> String {
        format!("-DBORDER={}", self.cl_name())
    }

    /// The macro `kernels/common.cl` defines for this mode (numpy's names, as the kernels think in numpy.pad's).
    fn cl_name(self) -> &'static str {
        match self {
            Border::Constant(_) => "BORDER_CONSTANT",
            Border::Nearest => "BORDER_EDGE",
            Border::Mirror => "BORDER_REFLECT",
            Border::Reflect => "BORDER_SYMMETRIC",
            Border::Wrap => "BORDER_WRAP",
        }
    }

    /// The fill value (0 for the modes that copy from the array).
    pub(crate) fn value(self) -> f64 {
        match self {
            Border::Constant(v) => v,
            _ => 0.0,
        }
    }

    /// Where coordinate `i` of an axis of extent `n` (≥ 1) reads from: `Some(index in 0..n)`, or `None` for a
    /// constant. The host-side twin of the kernels' `border_index`: the CPU devices' host paths, and unit tests.
    pub(crate) fn index(self, i: i64, n: i64) -> Option<i64> {
        if (0..n).contains(&i) {
            return Some(i);
        }
        match self {
            Border::Constant(_) => None,
            Border::Nearest => Some(i.clamp(0, n - 1)),
            Border::Wrap => Some(i.rem_euclid(n)),
            Border::Reflect => {
                let m = i.rem_euclid(2 * n);
                Some(if m < n { m } else { 2 * n - 1 - m })
            }
            Border::Mirror if n == 1 => Some(0),
            Border::Mirror => {
                let m = i.rem_euclid(2 * n - 2);
                Some(if m < n { m } else { 2 * n - 2 - m })
            }
        }
    }

    /// Fills `dst` with a row of `n` elements (element i at `src[start + i·stride]`) read at coordinates `first,
    /// first + 1, …` through this rule, `value` where a constant fills: the part inside the row in one copy when
    /// it is contiguous, only the rest coordinate by coordinate. The host paths' row extension (pad, convolution).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fill_row<T: Copy>(
        self,
        dst: &mut [T],
        src: &[T],
        start: usize,
        stride: usize,
        n: usize,
        first: i64,
        value: T,
    ) {
        let n = n as i64;
        let at = |i: i64| self.index(i, n).and_then(|k| src.get(start + k as usize * stride)).copied().unwrap_or(value);
        // Coordinates [a, b) lie inside the row: dst[a − first .. b − first] (empty, at an end of dst, when the
        // whole of dst lies before or after the row).
        let end = first + dst.len() as i64;
        let a = first.max(0).min(n).clamp(first, end);
        let b = end.min(n).max(a);
        let Some((before, rest)) = dst.split_at_mut_checked((a - first) as usize) else { return };
        let Some((inside, after)) = rest.split_at_mut_checked((b - a) as usize) else { return };
        for (j, slot) in before.iter_mut().enumerate() {
            *slot = at(first + j as i64);
        }
        match src.get(start + a as usize..start + b as usize) {
            Some(row) if stride == 1 => inside.copy_from_slice(row),
            _ => {
                for (j, slot) in inside.iter_mut().enumerate() {
                    *slot = src.get(start + (a as usize + j) * stride).copied().unwrap_or(value);
                }
            }
        }
        for (j, slot) in after.iter_mut().enumerate() {
            *slot = at(b + j as i64);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_border_names_a_macro_common_cl_defines() {
        use super::Border;
        for border in [Border::ZERO, Border::Nearest, Border::Mirror, Border::Reflect, Border::Wrap] {
            let define = format!("#define {} ", border.cl_name());
            assert!(crate::kernels::COMMON.contains(&define), "kernels/common.cl has no `{define}`");
        }
    }

    use super::*;

    #[test]
    fn rows_fill_through_the_rule_before_inside_and_after() {
        // A row of 4 stored with stride 2 from element 1, and a contiguous one; windows wholly before it, across
        // it, inside it and wholly after it, for every rule.
        let src = [0.0, 10.0, 0.0, 11.0, 0.0, 12.0, 0.0, 13.0];
        let contiguous = [10.0, 11.0, 12.0, 13.0];
        for border in [Border::Constant(-1.0), Border::Nearest, Border::Mirror, Border::Reflect, Border::Wrap] {
            for (first, len) in [(-9, 3), (-3, 10), (1, 2), (6, 4), (-2, 0)] {
                let want: Vec<f64> =
                    (first..first + len).map(|i| border.index(i, 4).map_or(-1.0, |k| 10.0 + k as f64)).collect();
                let mut strided = vec![f64::NAN; len as usize];
                border.fill_row(&mut strided, &src, 1, 2, 4, first, -1.0);
                assert_eq!(strided, want, "{border:?} from {first}, strided");
                let mut dense = vec![f64::NAN; len as usize];
                border.fill_row(&mut dense, &contiguous, 0, 1, 4, first, -1.0);
                assert_eq!(dense, want, "{border:?} from {first}, contiguous");
            }
        }
    }

    fn extend(b: Border, n: i64, w: i64) -> Vec<i64> {
        (-w..n + w).map(|i| b.index(i, n).map_or(-1, |k| k + 1)).collect()
    }

    #[test]
    fn matches_numpy_pad_with_wide_borders() {
        // np.pad([1, 2, 3], 7, mode) printed by numpy 2.4.
        assert_eq!(extend(Border::Mirror, 3, 7), [2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2]);
        assert_eq!(extend(Border::Reflect, 3, 7), [1, 1, 2, 3, 3, 2, 1, 1, 2, 3, 3, 2, 1, 1, 2, 3, 3]);
        assert_eq!(extend(Border::Wrap, 3, 7), [3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1]);
        assert_eq!(extend(Border::Nearest, 3, 2), [1, 1, 1, 2, 3, 3, 3]);
        assert_eq!(extend(Border::Mirror, 1, 3), [1; 7]);
        assert_eq!(extend(Border::Mirror, 2, 5), [2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1]);
        assert_eq!(extend(Border::ZERO, 2, 1), [-1, 1, 2, -1]);
    }
}
