//! Measurements of labelled regions (the measure family): [`Measure`] computes scipy.ndimage's per-label
//! statistics — `sum_labels`, `mean`, `variance`, `standard_deviation`, `minimum`, `maximum`, their positions,
//! `center_of_mass`, `find_objects`' boxes — of an image over a label image, as one table of a row per label.
//! Two device passes accumulate in double precision with atomics, one per run of a label along a row (kernels:
//! `kernels/measure.cl`); the host turns the few accumulators per label into the table. regionprops' convex-hull
//! properties (`area_convex`, `solidity`, `feret_diameter_max`) are exact integer geometry on the host (`convex.rs`), a step run only
//! when they are asked.

mod convex;
mod per_label;

pub use per_label::{LabelRows, Measure, MeasureParams, MeasureStat, MeasureStrategy};
