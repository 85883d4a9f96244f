//! Selection networks: the compare-exchanges that put the `r`-th smallest of `n` values in place, generated once
//! per window size and rank and written out as straight-line OpenCL (registers only: no private array indexed
//! by a loop variable, which NVIDIA puts in off-chip memory).
//!
//! The network is Batcher's odd–even merge sort for the next power of two, with the comparisons against the
//! padding dropped (the padding would be +∞: a comparison with it moves nothing), then pruned backwards from
//! the one output wanted: a compare-exchange neither of whose results is needed goes, and one with a single
//! needed result becomes a lone `fmin` or `fmax`. The median of 9 values (3×3) takes 40 min/max operations
//! instead of the unpruned 56; of 25 (5×5) 202 instead of 280; of 49 (7×7) 590 instead of 788; of 125
//! (5×5×5) 2,244 instead of 2,882.

/// One step of a selection network on the values `v0 … v(n−1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// `(va, vb) = (min, max)`.
    Exchange(usize, usize),
    /// `va = min(va, vb)` (only the smaller is needed later).
    Min(usize, usize),
    /// `vb = max(va, vb)` (only the larger is needed later).
    Max(usize, usize),
}

/// Batcher's odd–even merge sort of `p` (a power of two) values, as the comparisons `(a, b)`, `a < b`.
fn batcher(p: usize) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    let mut q = 1;
    while q < p {
        let mut k = q;
        while k > 0 {
            let mut j = k % q;
            while j + k < p {
                for i in 0..k.min(p - j - k) {
                    if (i + j) / (2 * q) == (i + j + k) / (2 * q) {
                        pairs.push((i + j, i + j + k));
                    }
                }
                j += 2 * k;
            }
            k /= 2;
        }
        q *= 2;
    }
    pairs
}

/// The steps that leave the `r`-th smallest (0-based) of `n` values in `v_r`.
pub(super) fn selection(n: usize, r: usize) -> Vec<Step> {
    let pairs: Vec<(usize, usize)> = batcher(n.next_power_of_two()).into_iter().filter(|&(_, b)| b < n).collect();
    let mut needed = vec![false; n];
    if let Some(slot) = needed.get_mut(r) {
        *slot = true;
    }
    let mut steps = Vec::new();
    for &(a, b) in pairs.iter().rev() {
        let (na, nb) = (needed.get(a).copied().unwrap_or(false), needed.get(b).copied().unwrap_or(false));
        let step = match (na, nb) {
            (false, false) => continue,
            (true, true) => Step::Exchange(a, b),
            (true, false) => Step::Min(a, b),
            (false, true) => Step::Max(a, b),
        };
        for i in [a, b] {
            if let Some(slot) = needed.get_mut(i) {
                *slot = true;
            }
        }
        steps.push(step);
    }
    steps.reverse();
    steps
}

/// The network as OpenCL statements on variables `{prefix}0 …` of type `R`.
pub(super) fn emit(steps: &[Step], prefix: &str) -> String {
    let mut text = String::new();
    for s in steps {
        let line = match *s {
            Step::Exchange(a, b) => {
                let (x, y) = (format!("{prefix}{a}"), format!("{prefix}{b}"));
                format!("{{ const R lo = fmin({x}, {y}); {y} = fmax({x}, {y}); {x} = lo; }}\n")
            }
            Step::Min(a, b) => format!("{prefix}{a} = fmin({prefix}{a}, {prefix}{b});\n"),
            Step::Max(a, b) => format!("{prefix}{b} = fmax({prefix}{a}, {prefix}{b});\n"),
        };
        text.push_str("    ");
        text.push_str(&line);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(steps: &[Step], values: &mut [f64]) {
        for s in steps {
            match *s {
                Step::Exchange(a, b) => {
                    let (lo, hi) = (values[a].min(values[b]), values[a].max(values[b]));
                    values[a] = lo;
                    values[b] = hi;
                }
                Step::Min(a, b) => values[a] = values[a].min(values[b]),
                Step::Max(a, b) => values[b] = values[a].max(values[b]),
            }
        }
    }

    /// Every rank of every size up to 40 on random values with ties, and the 0–1 principle's hardest inputs.
    #[test]
    fn selects_every_rank() {
        let mut state = 12345u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 33) % 7) as f64
        };
        for n in 1..=40 {
            for r in 0..n {
                let steps = selection(n, r);
                for _ in 0..20 {
                    let mut v: Vec<f64> = (0..n).map(|_| next()).collect();
                    let mut sorted = v.clone();
                    sorted.sort_by(f64::total_cmp);
                    run(&steps, &mut v);
                    assert_eq!(v[r], sorted[r], "n {n} r {r}");
                }
            }
        }
    }

    #[test]
    fn pruning_counts() {
        let ops = |n: usize, r: usize| {
            selection(n, r).iter().map(|s| if matches!(s, Step::Exchange(..)) { 2 } else { 1 }).sum::<usize>()
        };
        assert_eq!(ops(9, 4), 40);
        assert_eq!(ops(25, 12), 202);
        assert_eq!(ops(49, 24), 590);
        assert_eq!(ops(125, 62), 2244);
        assert_eq!(batcher(16).len(), 63);
    }
}
