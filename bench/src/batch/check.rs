//! The batch benchmark's output check: cliper's files against the scipy peer's, file for file, read with
//! cliper's own readers (no Python), so a fast run that writes wrong images is marked failed, not praised.
//!
//! - Labels (the CT and DICOM cases): the two files must split the voxels the same way. scipy numbers components
//!   in raster order and so does cliper, but nothing here relies on it: the check counts the voxels of every
//!   (cliper label, scipy label) pair and asks for a bijection — every label's voxels mostly in one label of the
//!   other file, and that label's mostly in it, background with background. Voxels outside the matched pairs
//!   are the mismatch; at most [`MISMATCH_PER_VOXELS`] of them pass (see there why any).
//! - Images (the PNG case): the same shape and every value within 1 (both round a float result to u16).
//!
//! Where both files carry geometry (NIfTI), their affines must agree within [`AFFINE_TOLERANCE_MM`].

use cliper::{Image, Result};
use ndarray::ArrayD;
use std::collections::HashMap;
use std::path::Path;

/// One voxel in this many may fall on the other side of the threshold without failing the check. The scipy peer
/// smooths float32 values (and rounds the result to float32) while cliper may smooth in float64 or in float32
/// with another order of sums; the results differ by ~1e-4 HU, so a voxel whose smoothed value lies that close
/// to 300 HU can be above in one and below in the other. Such ties are rare: on three 256×256×160 volumes of
/// peer_batch.py, scipy's float32 and float64 smoothing differ by at most 1.6e-4 HU and no smoothed value lies
/// within 1e-3 HU of 300 (none of 31 million flips); the quick CT batch against cliper smoothing in float64
/// matched on every voxel. A real error — a wrong sigma, a border, a connectivity — moves far more.
pub(crate) const MISMATCH_PER_VOXELS: u64 = 100_000;

/// How far two affines may differ (mm, each entry): NIfTI stores them as float32, ~1e-6 relative.
pub(crate) const AFFINE_TOLERANCE_MM: f64 = 1e-3;

/// How the outputs of a case are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Comparison {
    /// Label images: the same partition of the voxels (numbering free), the same number of labels.
    Partition,
    /// Images rounded to integers: every value within 1.
    WithinOne,
}

/// The verdict on a whole batch.
#[derive(Clone, Debug)]
pub(crate) struct CheckOutcome {
    pub(crate) passed: bool,
    /// One line: what was compared and the worst file, or what differs.
    pub(crate) detail: String,
}

/// How two label images split their voxels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PartitionMatch {
    /// Distinct non-zero labels in cliper's image and in the peer's.
    pub(crate) labels_ours: usize,
    pub(crate) labels_theirs: usize,
    /// Voxels outside the mutually matched label pairs.
    pub(crate) mismatched: u64,
    pub(crate) voxels: u64,
}

impl PartitionMatch {
    pub(crate) fn acceptable(&self) -> bool {
        self.mismatched <= self.voxels / MISMATCH_PER_VOXELS
    }
}

/// Compares every file of `theirs` with the file of the same name in `ours`; the names must be the same sets.
/// A file that cannot be read, or any difference past the tolerances, fails the check (never an error: the
/// benchmark goes on and reports it).
pub(crate) fn check_outputs(comparison: Comparison, ours: &Path, theirs: &Path) -> CheckOutcome {
    match compare_folders(comparison, ours, theirs) {
        Ok(outcome) => outcome,
        Err(e) => CheckOutcome { passed: false, detail: e.to_string() },
    }
}

fn compare_folders(comparison: Comparison, ours: &Path, theirs: &Path) -> Result<CheckOutcome> {
    let (our_names, their_names) = (file_names(ours)?, file_names(theirs)?);
    if our_names != their_names {
        return Ok(CheckOutcome {
            passed: false,
            detail: format!(
                "cliper wrote {our_names:?} into {}, the peer {their_names:?} into {}",
                ours.display(),
                theirs.display()
            ),
        });
    }
    // The file furthest from the peer's, and how far (mismatched voxels, or the largest difference).
    let mut worst: Option<(f64, String)> = None;
    for name in &our_names {
        let (a, b) = (ours.join(name), theirs.join(name));
        let (file, distance) = compare_files(comparison, &a, &b)?;
        if !file.passed {
            return Ok(CheckOutcome { passed: false, detail: format!("{}: {}", a.display(), file.detail) });
        }
        if worst.as_ref().is_none_or(|(d, _)| distance > *d) {
            worst = Some((distance, format!("{name}: {}", file.detail)));
        }
    }
    let what = match comparison {
        Comparison::Partition => "the same partition as scipy's",
        Comparison::WithinOne => "within 1 of scipy's",
    };
    let worst = worst.map_or(String::new(), |(_, detail)| format!(" (furthest, {detail})"));
    Ok(CheckOutcome { passed: true, detail: format!("{} files {what}{worst}", our_names.len()) })
}

/// The names of the plain files in a folder, sorted.
fn file_names(dir: &Path) -> Result<Vec<String>> {
    let io = |source| cliper::Error::Io { path: dir.to_path_buf(), source };
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        if entry.file_type().map_err(io)?.is_file() {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// One file of cliper's against the peer's: the shape, colour and geometry, then the values; the verdict and how
/// far the file is from the peer's (mismatched voxels, or the largest difference).
fn compare_files(comparison: Comparison, ours: &Path, theirs: &Path) -> Result<(CheckOutcome, f64)> {
    let (a, b) = (cliper::read_image(ours)?, cliper::read_image(theirs)?);
    let fail = |detail: String| Ok((CheckOutcome { passed: false, detail }, f64::INFINITY));
    if a.array.shape() != b.array.shape() || a.colour != b.colour {
        return fail(format!(
            "shape {:?}{} but the peer's {} is {:?}{}",
            a.array.shape(),
            if a.colour { " (colour)" } else { "" },
            theirs.display(),
            b.array.shape(),
            if b.colour { " (colour)" } else { "" }
        ));
    }
    if let Some(difference) = affine_difference(&a, &b)
        && difference > AFFINE_TOLERANCE_MM
    {
        return fail(format!(
            "affine {:?} but the peer's {} has {:?} (entries differ by up to {difference:.3e} mm)",
            a.geometry.map(|g| g.affine()),
            theirs.display(),
            b.geometry.map(|g| g.affine())
        ));
    }
    let (x, y) = (a.array.to_elements::<f64>(ours)?, b.array.to_elements::<f64>(theirs)?);
    match comparison {
        Comparison::Partition => {
            let m = compare_partitions(&x, &y).map_err(|e| cliper::Error::invalid(ours.display().to_string(), e))?;
            let detail = format!(
                "{} labels, scipy {}; {} of {} voxels outside the matched labels (≤ 1 in {MISMATCH_PER_VOXELS} pass)",
                m.labels_ours, m.labels_theirs, m.mismatched, m.voxels
            );
            Ok((CheckOutcome { passed: m.acceptable(), detail }, m.mismatched as f64))
        }
        Comparison::WithinOne => {
            let worst = x.iter().zip(y.iter()).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
            Ok((
                CheckOutcome { passed: worst <= 1.0, detail: format!("largest difference {worst} (≤ 1 passes)") },
                worst,
            ))
        }
    }
}

/// The largest difference between the two files' affines, when both have geometry; an affine on one side only
/// counts as infinitely different (a file that lost its geometry is wrong).
fn affine_difference(a: &Image, b: &Image) -> Option<f64> {
    match (&a.geometry, &b.geometry) {
        (None, None) => None,
        (Some(g), Some(h)) => {
            let (p, q) = (g.affine(), h.affine());
            Some(p.iter().flatten().zip(q.iter().flatten()).map(|(u, v)| (u - v).abs()).fold(0.0, f64::max))
        }
        _ => Some(f64::INFINITY),
    }
}

/// How `ours` and `theirs` (label images of one shape, read in the same order) split their voxels; an error
/// when a value is not a label (negative or not whole).
pub(crate) fn compare_partitions(
    ours: &ArrayD<f64>,
    theirs: &ArrayD<f64>,
) -> std::result::Result<PartitionMatch, String> {
    if ours.shape() != theirs.shape() {
        return Err(format!("shapes {:?} and {:?} differ", ours.shape(), theirs.shape()));
    }
    let pairs = pair_counts(ours, theirs)?;
    let partner_of_ours = dominant_partners(pairs.iter().map(|(&(a, b), &n)| (a, b, n)));
    let partner_of_theirs = dominant_partners(pairs.iter().map(|(&(a, b), &n)| (b, a, n)));
    let matched: u64 = pairs
        .iter()
        .filter(|&(&(a, b), _)| {
            partner_of_ours.get(&a) == Some(&b) && partner_of_theirs.get(&b) == Some(&a) && (a == 0) == (b == 0)
        })
        .map(|(_, &n)| n)
        .sum();
    let voxels = ours.len() as u64;
    let labels = |partners: &HashMap<u64, u64>| partners.keys().filter(|&&l| l != 0).count();
    Ok(PartitionMatch {
        labels_ours: labels(&partner_of_ours),
        labels_theirs: labels(&partner_of_theirs),
        mismatched: voxels - matched,
        voxels,
    })
}

/// Voxels per (our label, their label) pair. Label images are long runs of one pair, so runs are counted before
/// they are hashed.
fn pair_counts(ours: &ArrayD<f64>, theirs: &ArrayD<f64>) -> std::result::Result<HashMap<(u64, u64), u64>, String> {
    let label = |v: f64| {
        if v >= 0.0 && v.fract() == 0.0 && v < 2f64.powi(53) {
            Ok(v as u64)
        } else {
            Err(format!("{v} is not a label (labels are whole numbers ≥ 0)"))
        }
    };
    let mut counts: HashMap<(u64, u64), u64> = HashMap::new();
    let mut run: Option<((u64, u64), u64)> = None;
    for (&a, &b) in ours.iter().zip(theirs.iter()) {
        let pair = (label(a)?, label(b)?);
        run = match run {
            Some((current, n)) if current == pair => Some((current, n + 1)),
            Some((current, n)) => {
                *counts.entry(current).or_default() += n;
                Some((pair, 1))
            }
            None => Some((pair, 1)),
        };
    }
    if let Some((current, n)) = run {
        *counts.entry(current).or_default() += n;
    }
    Ok(counts)
}

/// For every label on one side, the label of the other side that holds most of its voxels (the smaller label on
/// a tie, so the result does not depend on the hash order).
fn dominant_partners(pairs: impl Iterator<Item = (u64, u64, u64)>) -> HashMap<u64, u64> {
    let mut best: HashMap<u64, (u64, u64)> = HashMap::new();
    for (label, partner, n) in pairs {
        let entry = best.entry(label).or_insert((partner, n));
        if n > entry.1 || (n == entry.1 && partner < entry.0) {
            *entry = (partner, n);
        }
    }
    best.into_iter().map(|(label, (partner, _))| (label, partner)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(values: &[f64]) -> ArrayD<f64> {
        ArrayD::from_shape_vec(ndarray::IxDyn(&[values.len()]), values.to_vec()).unwrap()
    }

    #[test]
    fn renumbered_labels_are_the_same_partition() {
        let m =
            compare_partitions(&labels(&[0., 1., 1., 0., 2., 2., 3.]), &labels(&[0., 7., 7., 0., 1., 1., 2.])).unwrap();
        assert_eq!(m, PartitionMatch { labels_ours: 3, labels_theirs: 3, mismatched: 0, voxels: 7 });
    }

    #[test]
    fn merged_components_are_a_mismatch() {
        // Two of scipy's components are one of ours: the smaller one's voxels are outside the bijection.
        let m = compare_partitions(&labels(&[1., 1., 1., 1., 1., 0.]), &labels(&[1., 1., 1., 2., 2., 0.])).unwrap();
        assert_eq!((m.labels_ours, m.labels_theirs, m.mismatched), (1, 2, 2));
        assert!(!m.acceptable());
    }

    #[test]
    fn background_must_match_background() {
        // The same split, but our background is their component: not the same image.
        let m = compare_partitions(&labels(&[0., 0., 1., 1.]), &labels(&[1., 1., 0., 0.])).unwrap();
        assert_eq!(m.mismatched, 4);
    }

    #[test]
    fn one_voxel_in_a_hundred_thousand_may_flip() {
        let mut ours = vec![0.0; 200_000];
        ours[..1000].fill(1.0);
        let mut theirs = ours.clone();
        theirs[1000] = 1.0; // a tie at the threshold grows the component by one voxel
        theirs[150_000] = 2.0; // and makes one isolated voxel a component
        let m = compare_partitions(&labels(&ours), &labels(&theirs)).unwrap();
        assert_eq!((m.mismatched, m.labels_ours, m.labels_theirs), (2, 1, 2));
        assert!(m.acceptable());
        theirs[150_001] = 2.0;
        assert!(!compare_partitions(&labels(&ours), &labels(&theirs)).unwrap().acceptable());
    }

    #[test]
    fn values_that_are_not_labels_are_refused() {
        let e = compare_partitions(&labels(&[0.5]), &labels(&[0.0])).unwrap_err();
        assert!(e.contains("0.5"), "{e}");
    }
}
