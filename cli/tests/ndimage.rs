//! The operations of issue 25 from the binary, against numpy and scipy.ndimage fixtures, in one test binary:
//! element-wise maths, derivatives, rank filters and grey morphology, binary morphology and distances,
//! resampling.

mod common;

#[path = "ndimage/derivatives.rs"]
mod derivatives;
#[path = "ndimage/distance.rs"]
mod distance;
#[path = "ndimage/elementwise.rs"]
mod elementwise;
#[path = "ndimage/feature.rs"]
mod feature;
#[path = "ndimage/generic.rs"]
mod generic;
#[path = "ndimage/geometry.rs"]
mod geometry;
#[path = "ndimage/label.rs"]
mod label;
#[path = "ndimage/measure.rs"]
mod measure;
#[path = "ndimage/morphology.rs"]
mod morphology;
#[path = "ndimage/rank.rs"]
mod rank;
#[path = "ndimage/resample.rs"]
mod resample;
#[path = "ndimage/segment.rs"]
mod segment;
#[path = "ndimage/segmentation.rs"]
mod segmentation;
#[path = "ndimage/shape.rs"]
mod shape;
#[path = "ndimage/skeleton.rs"]
mod skeleton;
#[path = "ndimage/threshold.rs"]
mod threshold;
