//! Binary morphology — scipy.ndimage's binary_erosion, binary_dilation, binary_opening and binary_closing with
//! structuring elements, iterations and border values — as [`BinaryMorphology`]: the input made 0/1 by one
//! element-wise kernel, then minimum (erosion) and maximum (dilation) filters of the rank family over the
//! structure, with scipy's reflection and origin shift for dilation — [`DistanceTransform`]
//! (distance_transform_edt, exact, with a spacing per axis, or the indices of the nearest zeros),
//! [`ChamferDistance`] (distance_transform_cdt: scipy's two raster passes, on the host), [`BruteForceDistance`]
//! (distance_transform_bf: every pair of elements compared, one work-item per element), [`Label`] (label) and [`FillHoles`]
//! (binary_fill_holes), both by a union-find on the device (on the host's threads for CPU devices), and
//! [`RemoveSmall`] (skimage's remove_small_objects / remove_small_holes): labels counted with atomics — and
//! [`Skeletonize`] (skimage's skeletonize): Zhang's thinning on the device, Lee's on the host. Kernels:
//! `kernels/morphology.cl`.

mod binary;
mod brute_force;
mod chamfer;
mod distance;
mod host_label;
mod label;
mod skeleton;
mod skeleton_lee;
mod small;

pub use binary::{BinaryMorphology, BinaryParams, BinaryStrategy, MorphologyOp};
pub use brute_force::{BruteForceDistance, BruteForceMetric, BruteForceParams, BruteForceStrategy};
pub use chamfer::{ChamferDistance, ChamferParams, ChamferStrategy};
pub use distance::{DistanceParams, DistanceStrategy, DistanceTransform};
pub use label::{FillHoles, Label, LabelParams, LabelStrategy};
pub use skeleton::{SkeletonMethod, SkeletonParams, SkeletonStrategy, Skeletonize};
pub use small::{RemoveSmall, RemoveSmallParams, SizeLimit, SmallStrategy, SmallTarget};
