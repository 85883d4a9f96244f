//! The FFT's schedule: which launches run in which order, between which buffers ([`Slot`]), for the axes an
//! [`super::Fft`] plan transforms. Pure — it sees the axes' shapes ([`AxisShape`]), no device array — so every
//! route (Stockham in registers or in global passes, four-step on rows and columns, Bluestein whole or in
//! passes, transposed or not) is unit-tested here.

/// Which transforms a [`Step::Local`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LocalPart {
    /// The axis's own (Stockham, or Bluestein's length-m) transforms.
    Main,
    /// Four-step, first step: length n1 over the columns, twiddled.
    First,
    /// Four-step, second step: length n2 over the rows.
    Second,
    /// Bluestein's chirp products, both length-m transforms and the product between them.
    Bluestein,
}

/// Where a step reads or writes: the input, the output, or one of the scratch arrays (0 and 1 of the array's
/// size, 2 and 3 of the largest Bluestein size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Slot {
    Input,
    Output,
    Scratch(usize),
}

/// One kernel launch of the plan, reading and writing buffers named by [`Slot`].
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Step {
    /// One global Stockham pass of `radix` (`ns` the length done so far) over lines of `n`.
    Pass { radix: usize, ns: usize, n: usize, axis: usize, inverse: bool, scale: f64, src: Slot, dst: Slot },
    /// Every pass of an axis (or all of Bluestein's algorithm, or a four-step part) in one `fft_lines` launch of
    /// the plan's kernel number `kernel` (filled in when the kernels are built).
    Local { axis: usize, part: LocalPart, inverse: bool, scale: f64, src: Slot, dst: Slot, kernel: usize },
    /// The `copy`-th of the schedule's [`TransposeSpec`]s.
    Transpose { copy: usize },
    /// Bluestein's first chirp product, into the padded grid.
    Pre { axis: usize, src: Slot, dst: Slot },
    /// Bluestein's product with the transformed conjugate chirp, in place.
    Mul { axis: usize, dst: Slot },
    /// Bluestein's last chirp product, out of the padded grid.
    Post { axis: usize, src: Slot, dst: Slot, scale: f64 },
}

/// What the schedule needs to know of an axis's transform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum AxisShape {
    /// Stockham, all passes in one `fft_lines` launch.
    Local,
    /// Stockham in global passes of these (radix, ns), over lines of `n`.
    Passes { n: usize, steps: Vec<(usize, usize)> },
    /// n = n1·n2 in two `fft_lines` launches.
    FourStep { n1: usize, n2: usize },
    /// Bluestein of length `n` in one launch, through a transpose to rows and back when `transposed`.
    BluesteinLocal { n: usize, transposed: bool },
    /// Bluestein in global passes of these (radix, ns) over the padded length `m`.
    BluesteinPasses { m: usize, steps: Vec<(usize, usize)> },
}

/// One transformed axis: the array as `[outer, n, inner]`, the normalisation factor, and the transform.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ScheduledAxis {
    pub outer: usize,
    pub inner: usize,
    pub scale: f64,
    pub shape: AxisShape,
}

/// A transpose the schedule asks for: slot `from` viewed with `from_dims` and permuted by `perm`, copied into
/// slot `to` viewed with `to_dims`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct TransposeSpec {
    pub from: Slot,
    pub from_dims: Vec<usize>,
    pub perm: Vec<usize>,
    pub to: Slot,
    pub to_dims: Vec<usize>,
}

/// The steps for `axes` in order, starting from `start` (the input, or scratch 0 holding its copy), ending in
/// the output when `direct_out` (it is contiguous and apart from the input), and the transposes they name.
/// Returns the slot the result ends in too (not the output when it needs a copy out).
pub(super) fn schedule(
    axes: &[ScheduledAxis],
    start: Slot,
    direct_out: bool,
    inverse: bool,
) -> (Vec<Step>, Vec<TransposeSpec>, Slot) {
    let other = |s: Slot| if s == Slot::Scratch(0) { Slot::Scratch(1) } else { Slot::Scratch(0) };
    let mut src = start;
    let mut steps = Vec::new();
    let mut transposes = Vec::new();
    let last_axis = axes.len().saturating_sub(1);
    for (ai, plan) in axes.iter().enumerate() {
        let into_output = ai == last_axis && direct_out;
        let final_dst = |src: Slot| if into_output { Slot::Output } else { other(src) };
        match &plan.shape {
            AxisShape::Local => {
                let dst = final_dst(src);
                let part = LocalPart::Main;
                steps.push(Step::Local { axis: ai, part, inverse, scale: plan.scale, src, dst, kernel: 0 });
                src = dst;
            }
            &AxisShape::FourStep { n1, n2 } => {
                // Columns (inner > 1): the second part writes k1 + n1·k2 itself (whole rows of `inner` stay
                // together, so the scattered rows are still coalesced). Rows: it writes [k1, k2] into b and a
                // transpose follows.
                let a = other(src);
                let b = other(a);
                let columns = plan.inner > 1;
                let into = |slot: Slot| if into_output { Slot::Output } else { slot };
                let (second, dst) = if columns { (into(b), into(b)) } else { (b, into(a)) };
                let (first_part, second_part) = (LocalPart::First, LocalPart::Second);
                steps.push(Step::Local { axis: ai, part: first_part, inverse, scale: 1.0, src, dst: a, kernel: 0 });
                let scale = plan.scale;
                steps.push(Step::Local { axis: ai, part: second_part, inverse, scale, src: a, dst: second, kernel: 0 });
                src = dst;
                if !columns {
                    transposes.push(TransposeSpec {
                        from: b,
                        from_dims: vec![plan.outer, n1, n2, plan.inner],
                        perm: vec![0, 2, 1, 3],
                        to: dst,
                        to_dims: vec![plan.outer, n2, n1, plan.inner],
                    });
                    steps.push(Step::Transpose { copy: transposes.len() - 1 });
                }
            }
            AxisShape::Passes { n, steps: passes } => {
                for (pi, &(radix, ns)) in passes.iter().enumerate() {
                    let last = pi + 1 == passes.len();
                    let dst = if last { final_dst(src) } else { other(src) };
                    let scale = if last { plan.scale } else { 1.0 };
                    steps.push(Step::Pass { radix, ns, n: *n, axis: ai, inverse, scale, src, dst });
                    src = dst;
                }
            }
            &AxisShape::BluesteinLocal { n, transposed } => {
                // Columns that do not fit a group: [outer, n, inner] → [outer, inner, n], rows, and back.
                let (o, i) = (plan.outer, plan.inner);
                let dst = final_dst(src);
                let (from, to) = if transposed { (other(src), other(other(src))) } else { (src, dst) };
                if transposed {
                    let (from_dims, to_dims) = (vec![o, n, i], vec![o, i, n]);
                    transposes.push(TransposeSpec { from: src, from_dims, perm: vec![0, 2, 1], to: from, to_dims });
                    steps.push(Step::Transpose { copy: transposes.len() - 1 });
                }
                let part = LocalPart::Bluestein;
                let scale = plan.scale;
                steps.push(Step::Local { axis: ai, part, inverse: false, scale, src: from, dst: to, kernel: 0 });
                if transposed {
                    let (from_dims, to_dims) = (vec![o, i, n], vec![o, n, i]);
                    transposes.push(TransposeSpec { from: to, from_dims, perm: vec![0, 2, 1], to: dst, to_dims });
                    steps.push(Step::Transpose { copy: transposes.len() - 1 });
                }
                src = dst;
            }
            AxisShape::BluesteinPasses { m, steps: passes } => {
                let (a, b) = (Slot::Scratch(2), Slot::Scratch(3));
                steps.push(Step::Pre { axis: ai, src, dst: a });
                let mut cur = a;
                for inv in [false, true] {
                    for &(radix, ns) in passes {
                        let dst = if cur == a { b } else { a };
                        steps.push(Step::Pass { radix, ns, n: *m, axis: ai, inverse: inv, scale: 1.0, src: cur, dst });
                        cur = dst;
                    }
                    if !inv {
                        steps.push(Step::Mul { axis: ai, dst: cur });
                    }
                }
                let dst = final_dst(src);
                steps.push(Step::Post { axis: ai, src: cur, dst, scale: plan.scale });
                src = dst;
            }
        }
    }
    (steps, transposes, src)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(outer: usize, inner: usize, shape: AxisShape) -> ScheduledAxis {
        ScheduledAxis { outer, inner, scale: 0.5, shape }
    }

    /// Every step reads what the previous one wrote, except Bluestein's own work arrays.
    fn src_dst(step: &Step) -> Option<(Slot, Slot)> {
        match *step {
            Step::Pass { src, dst, .. } | Step::Local { src, dst, .. } | Step::Pre { src, dst, .. } => Some((src, dst)),
            Step::Post { src, dst, .. } => Some((src, dst)),
            Step::Transpose { .. } | Step::Mul { .. } => None,
        }
    }

    #[test]
    fn global_passes_ping_pong_and_end_in_the_output() {
        let passes = AxisShape::Passes { n: 60, steps: vec![(4, 1), (3, 4), (5, 12)] };
        let (steps, transposes, end) = schedule(&[axis(1, 1, passes)], Slot::Input, true, false);
        let slots: Vec<_> = steps.iter().filter_map(src_dst).collect();
        assert_eq!(
            slots,
            vec![
                (Slot::Input, Slot::Scratch(0)),
                (Slot::Scratch(0), Slot::Scratch(1)),
                (Slot::Scratch(1), Slot::Output)
            ]
        );
        assert!(transposes.is_empty() && end == Slot::Output);
        // Only the last pass scales.
        let scales: Vec<f64> =
            steps.iter().map(|s| if let Step::Pass { scale, .. } = s { *scale } else { 0.0 }).collect();
        assert_eq!(scales, vec![1.0, 1.0, 0.5]);
    }

    #[test]
    fn an_output_that_needs_a_copy_ends_in_scratch() {
        let (steps, _, end) = schedule(&[axis(4, 1, AxisShape::Local)], Slot::Scratch(0), false, true);
        assert_eq!(steps.len(), 1);
        assert_eq!(end, Slot::Scratch(1));
        assert!(matches!(steps[0], Step::Local { inverse: true, src: Slot::Scratch(0), .. }));
    }

    #[test]
    fn four_step_rows_transpose_and_columns_write_in_place() {
        let rows = schedule(&[axis(2, 1, AxisShape::FourStep { n1: 64, n2: 128 })], Slot::Input, true, false);
        let (steps, transposes, end) = rows;
        assert_eq!(steps.len(), 3);
        assert_eq!(
            transposes,
            vec![TransposeSpec {
                from: Slot::Scratch(1),
                from_dims: vec![2, 64, 128, 1],
                perm: vec![0, 2, 1, 3],
                to: Slot::Output,
                to_dims: vec![2, 128, 64, 1],
            }]
        );
        assert!(matches!(steps[0], Step::Local { part: LocalPart::First, scale: 1.0, .. }));
        assert!(matches!(steps[1], Step::Local { part: LocalPart::Second, scale: 0.5, .. }));
        assert_eq!(end, Slot::Output);
        let (steps, transposes, _) =
            schedule(&[axis(1, 8, AxisShape::FourStep { n1: 64, n2: 128 })], Slot::Input, true, false);
        assert_eq!((steps.len(), transposes.len()), (2, 0));
        assert!(matches!(steps[1], Step::Local { dst: Slot::Output, .. }));
    }

    #[test]
    fn bluestein_routes() {
        // In one launch, columns transposed to rows and back.
        let whole = AxisShape::BluesteinLocal { n: 97, transposed: true };
        let (steps, transposes, end) = schedule(&[axis(3, 5, whole)], Slot::Input, true, true);
        assert_eq!(steps.len(), 3);
        assert_eq!((transposes[0].from_dims.clone(), transposes[1].to_dims.clone()), (vec![3, 97, 5], vec![3, 97, 5]));
        assert!(matches!(steps[1], Step::Local { part: LocalPart::Bluestein, inverse: false, .. }));
        assert_eq!(end, Slot::Output);
        // In global passes: pre, forward passes, product, inverse passes, post, in the work arrays 2 and 3.
        let passes = AxisShape::BluesteinPasses { m: 200, steps: vec![(8, 1), (5, 8), (5, 40)] };
        let (steps, _, _) = schedule(&[axis(1, 1, passes)], Slot::Input, true, false);
        assert_eq!(steps.len(), 1 + 3 + 1 + 3 + 1);
        assert!(matches!(steps[0], Step::Pre { dst: Slot::Scratch(2), .. }));
        assert!(matches!(steps[4], Step::Mul { .. }));
        assert!(matches!(steps.last(), Some(Step::Post { dst: Slot::Output, scale: 0.5, .. })));
    }

    #[test]
    fn several_axes_chain_through_scratch() {
        let axes = [axis(1, 64, AxisShape::Local), axis(64, 1, AxisShape::Local)];
        let (steps, _, end) = schedule(&axes, Slot::Input, true, false);
        let slots: Vec<_> = steps.iter().filter_map(src_dst).collect();
        assert_eq!(slots, vec![(Slot::Input, Slot::Scratch(0)), (Slot::Scratch(0), Slot::Output)]);
        assert_eq!(end, Slot::Output);
    }
}
