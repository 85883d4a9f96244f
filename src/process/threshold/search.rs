//! The threshold searches over a histogram, on the host (at most a few thousand bins; 65536 for 16-bit integer
//! images): scikit-image's `threshold_otsu`, `threshold_yen`, `threshold_triangle` and `threshold_multiotsu`,
//! with its arithmetic types, so that the bin each picks is the one scikit-image picks, ties included.
//!
//! scikit-image computes with float32 counts (`counts.astype('float32')`) and with bin centres of the image's
//! own type: float32 centres for a float32 image (so Otsu's class means are float32 sums), float64 for float64
//! and integer images (whose centres are int64, promoted to float64 in the products). `C` below is that centre
//! type. Sums run in order, as numpy's `cumsum` does. The one sum numpy does pairwise, Yen's total, is exact
//! here and there while the pixel count stays below 2²⁴ (every partial sum of integers then is a float32).

use crate::error::{Error, Result};
use num_traits::Float;

/// A histogram as scikit-image builds it: the counts and each bin's centre.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram<C> {
    /// How many values each bin holds.
    pub counts: Vec<u64>,
    /// Each bin's centre, in the arithmetic type of the image's centres.
    pub centres: Vec<C>,
}

/// numpy's argmax: the first largest value, or the first NaN when there is one.
fn argmax<F: Float>(values: &[F]) -> Option<usize> {
    if let Some(nan) = values.iter().position(|v| v.is_nan()) {
        return Some(nan);
    }
    let mut best: Option<(usize, F)> = None;
    for (k, &v) in values.iter().enumerate() {
        if best.is_none_or(|(_, b)| v > b) {
            best = Some((k, v));
        }
    }
    best.map(|(k, _)| k)
}

/// Running sums in order (numpy's cumsum).
fn cumsum<F: Float>(values: impl Iterator<Item = F>) -> Vec<F> {
    let mut total = F::zero();
    values
        .map(|v| {
            total = total + v;
            total
        })
        .collect()
}

/// Running sums from the last element back (numpy's `cumsum(a[::-1])[::-1]`).
fn cumsum_from_end<F: Float>(values: &[F]) -> Vec<F> {
    let mut sums = cumsum(values.iter().rev().copied());
    sums.reverse();
    sums
}

fn as_f32(count: u64) -> f32 {
    count as f32
}

fn centre_of<C: Float>(histogram: &Histogram<C>, k: usize, what: &str) -> Result<C> {
    histogram.centres.get(k).copied().ok_or_else(|| Error::invalid(what, format!("no bin {k}")))
}

/// skimage.filters.threshold_otsu's search (the image's "all values equal" answer is the caller's).
pub fn otsu<C: Float + From<f32>>(histogram: &Histogram<C>) -> Result<C> {
    let counts: Vec<f32> = histogram.counts.iter().map(|&c| as_f32(c)).collect();
    let weight1 = cumsum(counts.iter().copied());
    let weight2 = cumsum_from_end(&counts);
    let moments: Vec<C> = counts.iter().zip(&histogram.centres).map(|(&c, &x)| <C as From<f32>>::from(c) * x).collect();
    let mean1: Vec<C> = cumsum(moments.iter().copied()).iter().zip(&weight1).map(|(&m, &w)| m / w.into()).collect();
    let mean2: Vec<C> =
        cumsum_from_end(&moments).iter().zip(&weight2).map(|(&m, &w)| m / <C as From<f32>>::from(w)).collect();
    // weight1 · weight2 is a float32 product, rounded before the float-C square of the means' difference.
    let variance: Vec<C> = weight1
        .iter()
        .zip(weight2.iter().skip(1))
        .zip(mean1.iter().zip(mean2.iter().skip(1)))
        .map(|((&w1, &w2), (&m1, &m2))| {
            let d = m1 - m2;
            <C as From<f32>>::from(w1 * w2) * (d * d)
        })
        .collect();
    let k = argmax(&variance).ok_or_else(|| Error::invalid("threshold-value", "Otsu needs two bins or more"))?;
    centre_of(histogram, k, "threshold-value")
}

/// skimage.filters.threshold_yen's search, in float32 as scikit-image computes it.
pub fn yen<C: Float>(histogram: &Histogram<C>) -> Result<C> {
    if histogram.centres.len() == 1 {
        return centre_of(histogram, 0, "threshold-value");
    }
    let total = histogram.counts.iter().map(|&c| c as f64).sum::<f64>() as f32;
    let pmf: Vec<f32> = histogram.counts.iter().map(|&c| as_f32(c) / total).collect();
    let p1 = cumsum(pmf.iter().copied());
    let p1_sq = cumsum(pmf.iter().map(|&p| p * p));
    let p2_sq = cumsum_from_end(&pmf.iter().map(|&p| p * p).collect::<Vec<f32>>());
    let crit: Vec<f32> = p1
        .iter()
        .zip(&p1_sq)
        .zip(p2_sq.iter().skip(1))
        .map(|((&p, &sq1), &sq2)| {
            let spread = p * (1.0 - p);
            ((1.0 / (sq1 * sq2)) * (spread * spread)).ln()
        })
        .collect();
    let k = argmax(&crit).ok_or_else(|| Error::invalid("threshold-value", "Yen needs two bins or more"))?;
    centre_of(histogram, k, "threshold-value")
}

/// skimage.filters.threshold_triangle's search; `first` is the image's first value, its answer when a single bin
/// holds every value.
pub fn triangle<C: Float>(histogram: &Histogram<C>, first: C) -> Result<C> {
    let counts = &histogram.counts;
    let nbins = counts.len();
    let refuse = || Error::invalid("threshold-value", "the triangle method needs a histogram with values");
    let peak_at = argmax(&counts.iter().map(|&c| c as f64).collect::<Vec<_>>()).ok_or_else(refuse)?;
    let low = counts.iter().position(|&c| c > 0).ok_or_else(refuse)?;
    let high = counts.iter().rposition(|&c| c > 0).ok_or_else(refuse)?;
    if low == high {
        return Ok(first);
    }
    let peak_height = counts.get(peak_at).copied().ok_or_else(refuse)?;
    // The longer side of the peak is searched; scikit-image flips the histogram so that it lies on the left.
    let flip = (peak_at as i64 - low as i64) < (high as i64 - peak_at as i64);
    let (hist, low, peak_at): (Vec<u64>, usize, usize) = if flip {
        (counts.iter().rev().copied().collect(), nbins - high - 1, nbins - peak_at - 1)
    } else {
        (counts.clone(), low, peak_at)
    };
    let width = peak_at - low;
    // Integer squares, as numpy squares int64 counts, then one rounding to float64.
    let norm = ((peak_height as u128).pow(2) + (width as u128).pow(2)) as f64;
    let norm = norm.sqrt();
    let (height, width_n) = (peak_height as f64 / norm, width as f64 / norm);
    let length: Vec<f64> =
        hist.iter().skip(low).take(width).enumerate().map(|(x, &h)| height * x as f64 - width_n * h as f64).collect();
    let level = argmax(&length).ok_or_else(refuse)? + low;
    centre_of(histogram, if flip { nbins - level - 1 } else { level }, "threshold-value")
}

/// skimage.filters.threshold_multiotsu's search: `classes - 1` thresholds maximising the variance between
/// classes (Liao, Chen and Chung's lookup table of S²/P over every bin range, float32 throughout), found by trying
/// every combination in order and keeping the first best, as scikit-image does.
pub fn multiotsu<C: Float>(histogram: &Histogram<C>, classes: usize) -> Result<Vec<C>> {
    if classes < 2 {
        return Err(Error::invalid("threshold-value", format!("multiotsu needs 2 classes or more, got {classes}")));
    }
    let total: u64 = histogram.counts.iter().sum();
    let prob: Vec<f32> = histogram.counts.iter().map(|&c| (c as f64 / total as f64) as f32).collect();
    let nonzero: Vec<usize> = prob.iter().enumerate().filter(|(_, p)| **p != 0.0).map(|(k, _)| k).collect();
    if nonzero.len() < classes {
        return Err(Error::invalid(
            "threshold-value",
            format!(
                "after discretization into bins the image has only {} different values: it cannot be thresholded \
                 in {classes} classes (more bins, --nbins, may separate more)",
                nonzero.len()
            ),
        ));
    }
    let indices = if nonzero.len() == classes {
        nonzero.iter().take(classes - 1).copied().collect()
    } else {
        best_class_bounds(&prob, classes - 1)
    };
    indices.iter().map(|&k| centre_of(histogram, k, "threshold-value")).collect()
}

/// The variance-between-classes table: H(i, j) = S(i..=j)² / P(i..=j) in float32, 0 where P is not positive
/// (and H(0, 0), which scikit-image leaves 0).
struct BetweenClasses {
    nbins: usize,
    table: Vec<f32>,
}

impl BetweenClasses {
    fn new(prob: &[f32]) -> BetweenClasses {
        let nbins = prob.len();
        // P and S: running sums of the probabilities and of k times them, in float32 as scikit-image's loop.
        let (mut zeroth, mut first) = (Vec::with_capacity(nbins), Vec::with_capacity(nbins));
        let (mut p, mut s) = (0f32, 0f32);
        for (k, &pk) in prob.iter().enumerate() {
            p = if k == 0 { pk } else { p + pk };
            s = if k == 0 { pk } else { s + k as f32 * pk };
            zeroth.push(p);
            first.push(s);
        }
        let mut table = vec![0f32; nbins * (nbins + 1) / 2];
        // Row 0 (classes from bin 0): S(j)² / P(j), except H(0, 0).
        for ((slot, &p), &s) in table.iter_mut().zip(&zeroth).zip(&first).skip(1) {
            if p > 0.0 {
                *slot = s * s / p;
            }
        }
        // Row i ≥ 1, stored after the rows before it: classes from bin i to each j ≥ i.
        let mut rows = table.iter_mut().skip(nbins);
        for (i, (&p_before, &s_before)) in zeroth.iter().zip(&first).enumerate().take(nbins.saturating_sub(1)) {
            for (&pj, &sj) in zeroth.iter().zip(&first).skip(i + 1) {
                let p = pj - p_before;
                if let Some(slot) = rows.next()
                    && p > 0.0
                {
                    let s = sj - s_before;
                    *slot = s * s / p;
                }
            }
        }
        BetweenClasses { nbins, table }
    }

    fn get(&self, i: usize, j: usize) -> f32 {
        self.table.get(i * (2 * self.nbins - i + 1) / 2 + j - i).copied().unwrap_or(0.0)
    }
}

/// The threshold indices (each the last bin of its class) that maximise the sum of H over the classes.
fn best_class_bounds(prob: &[f32], count: usize) -> Vec<usize> {
    let table = BetweenClasses::new(prob);
    let nbins = prob.len();
    let mut current = vec![0usize; count];
    let mut best = vec![0usize; count];
    let mut sigma_max = 0f32;
    search(&table, nbins, 0, 0, &mut current, &mut best, &mut sigma_max);
    best
}

/// Tries every position of threshold `which` from bin `from` on, and the ones after it, in order.
fn search(
    table: &BetweenClasses,
    nbins: usize,
    from: usize,
    which: usize,
    current: &mut [usize],
    best: &mut [usize],
    sigma_max: &mut f32,
) {
    let count = current.len();
    if which < count {
        for k in from..nbins - count + which {
            if let Some(slot) = current.get_mut(which) {
                *slot = k;
            }
            search(table, nbins, k + 1, which + 1, current, best, sigma_max);
        }
        return;
    }
    let (Some(&lowest), Some(&highest)) = (current.first(), current.last()) else { return };
    let mut sigma = table.get(0, lowest) + table.get(highest + 1, nbins - 1);
    for pair in current.windows(2) {
        if let [a, b] = pair {
            sigma += table.get(a + 1, *b);
        }
    }
    if sigma > *sigma_max {
        *sigma_max = sigma;
        best.copy_from_slice(current);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(counts: &[u64]) -> Histogram<f64> {
        Histogram { counts: counts.to_vec(), centres: (0..counts.len()).map(|k| k as f64).collect() }
    }

    #[test]
    fn otsu_splits_two_separated_groups_between_them() -> Result<()> {
        // Values 0,1 and 8,9: any threshold from 1 to 7 separates them; Otsu's first maximum is 1.
        assert_eq!(otsu(&hist(&[5, 5, 0, 0, 0, 0, 0, 0, 5, 5]))?, 1.0);
        Ok(())
    }

    #[test]
    fn multiotsu_with_as_many_values_as_classes_takes_the_values_but_the_last() -> Result<()> {
        assert_eq!(multiotsu(&hist(&[3, 0, 4, 0, 2]), 3)?, vec![0.0, 2.0]);
        assert!(multiotsu(&hist(&[3, 0, 0, 0, 2]), 3).is_err());
        Ok(())
    }

    #[test]
    fn triangle_of_a_single_bin_is_the_first_value() -> Result<()> {
        assert_eq!(triangle(&hist(&[0, 7, 0]), 1.25)?, 1.25);
        Ok(())
    }
}
