//! [`WatershedIft`]: scipy.ndimage's `watershed_ift`, the image foresting transform run by the host in the mapped
//! device buffers.

use super::grid::binary_structure;
use super::ift::{structure_offsets, watershed_ift};
use crate::app::ffi::{self, Region};
use crate::data::{HostCommand, XData};
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::process::rank::Footprint;
use crate::process::{Prepared, Process};
use num_complex::Complex;

/// The settings of a [`WatershedIft`]: scipy's `structure`, a 3×…×3 footprint of the image's rank (default
/// `generate_binary_structure(rank, 1)`).
///
/// ```
/// use cliper::{Footprint, IftParams};
/// let p = IftParams::default().structure(Footprint::full(&[3, 3])?);
/// assert_eq!(p.structure.map(|s| s.count()), Some(9));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IftParams {
    /// The neighbourhood (default: the faces).
    pub structure: Option<Footprint>,
}

impl IftParams {
    /// With this structure.
    pub fn structure(mut self, structure: Footprint) -> Self {
        self.structure = Some(structure);
        self
    }

    fn structure_for(&self, shape: &[usize]) -> Result<Footprint> {
        if !(1..=3).contains(&shape.len()) {
            return Err(Error::shape_rule("watershed_ift", "1 to 3 axes", shape));
        }
        let structure = match &self.structure {
            Some(s) => s.clone(),
            None => binary_structure(shape.len(), 1)?,
        };
        if structure.shape().len() != shape.len() {
            return Err(Error::invalid(
                "watershed_ift",
                format!("structure of shape {:?} and input of shape {shape:?}: the ranks differ", structure.shape()),
            ));
        }
        if structure.shape().iter().any(|&n| n != 3) {
            return Err(Error::invalid(
                "watershed_ift",
                format!("structure of shape {:?}: its dimensions must be equal to 3", structure.shape()),
            ));
        }
        Ok(structure)
    }
}

/// What [`WatershedIft`] did.
///
/// ```
/// use cliper::{ClApp, IftParams, Process, WatershedIft, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[3, 4, 5])?;
/// let out = XData::<f32>::zeros(&app, &[3, 4, 5])?;
/// let mut ift = WatershedIft::new(&x, &x, &out, IftParams::default());
/// ift.init()?;
/// assert_eq!(ift.strategy().unwrap().neighbours, 6);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IftStrategy {
    /// Elements of the image.
    pub elements: usize,
    /// Neighbours of each element.
    pub neighbours: usize,
}

impl std::fmt::Display for IftStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "image foresting transform on the host over {} elements, {} neighbours each",
            self.elements, self.neighbours
        )
    }
}

struct Plan {
    offsets: Vec<isize>,
}

/// scipy 1.17's `ndimage.watershed_ift(input, markers, structure)`: every element takes the label of the marker
/// it is joined to by the path whose largest step in value is smallest (Falcão's image foresting transform), the
/// buckets of equal cost emptied as scipy does — positive markers first, in reverse C order, negative (background)
/// markers last — so that ties go the same way. The image must hold what scipy takes, 8- or 16-bit unsigned
/// integers (values 0 to 65535); markers integers (scipy's C `int`). As scipy, a neighbour is any element at the
/// structure's flat offset, so the neighbourhood wraps from the end of a row to the next.
///
/// Sequential (a bucket queue), so it runs on the host in the mapped device buffers (a host command in the queue's
/// order). Arrays must be contiguous.
///
/// ```
/// use cliper::{ClApp, IftParams, WatershedIft, XData};
/// let app = ClApp::new()?;
/// let image = XData::from_slice(&app, &[1, 5], &[0.0f32, 10.0, 200.0, 10.0, 0.0])?;
/// let markers = XData::from_slice(&app, &[1, 5], &[1.0f32, 0.0, 0.0, 0.0, 2.0])?;
/// let labels = WatershedIft::apply(&image, &markers, IftParams::default())?.to_vec()?;
/// assert_eq!(labels, vec![1.0, 1.0, 1.0, 2.0, 2.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct WatershedIft<T: RealElement> {
    image: XData<T>,
    markers: XData<T>,
    output: XData<T>,
    params: IftParams,
    plan: Prepared<Plan>,
}

impl<T: RealElement> WatershedIft<T> {
    /// `output = watershed_ift(image, markers, structure)`.
    pub fn new(image: &XData<T>, markers: &XData<T>, output: &XData<T>, params: IftParams) -> WatershedIft<T> {
        WatershedIft {
            image: image.clone(),
            markers: markers.clone(),
            output: output.clone(),
            params,
            plan: Prepared::default(),
        }
    }

    /// Allocates the output, runs once and returns it.
    pub fn apply(image: &XData<T>, markers: &XData<T>, params: IftParams) -> Result<XData<T>> {
        let out = XData::uninit(image.app(), "watershed_ift", &Self::output_shape(image.shape(), &params)?)?;
        WatershedIft::new(image, markers, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the image's (after checking the structure against it).
    ///
    /// ```
    /// use cliper::{IftParams, WatershedIft};
    /// assert_eq!(WatershedIft::<f32>::output_shape(&[13, 17, 11], &IftParams::default())?, vec![13, 17, 11]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize], params: &IftParams) -> Result<Vec<usize>> {
        params.structure_for(shape)?;
        Ok(shape.to_vec())
    }

    /// The transform `init` planned; `None` before `init`.
    pub fn strategy(&self) -> Option<IftStrategy> {
        let plan = self.plan.as_ref()?;
        Some(IftStrategy { elements: self.image.len(), neighbours: plan.offsets.len() })
    }

    fn plan(&self) -> Result<Plan> {
        let shape = self.image.shape();
        let structure = self.params.structure_for(shape)?;
        for (what, x) in [("markers", &self.markers), ("output", &self.output)] {
            if x.shape() != shape {
                return Err(Error::shape_because(
                    "watershed_ift",
                    shape,
                    x.shape(),
                    format!("the {what} must have the input's shape"),
                ));
            }
            if !x.app().same_as(self.image.app()) {
                return Err(Error::invalid(
                    "watershed_ift",
                    format!("the {what} belongs to another ClApp than the input"),
                ));
            }
        }
        if [&self.image, &self.markers, &self.output].iter().any(|x| !x.is_contiguous()) {
            return Err(Error::Unsupported {
                what: format!("watershed_ift of strided views of shape {shape:?}: give contiguous arrays"),
            });
        }
        Ok(Plan { offsets: structure_offsets(shape, structure.mask()) })
    }

    fn transform(&self) -> Result<()> {
        let Some(plan) = self.plan.as_ref() else { return Err(Error::NotInitialized { op: "watershed_ift".into() }) };
        if self.output.is_empty() {
            return Ok(());
        }
        let reads = [&self.image, &self.markers];
        let regions: Vec<Region> = reads
            .iter()
            .map(|x| Region { buffer: x.storage().buffer(), lo: x.offset(), hi: x.offset() + x.len() })
            .collect();
        let out = &self.output;
        let write = Region { buffer: out.storage().buffer(), lo: out.offset(), hi: out.offset() + out.len() };
        let bytes = (3 * out.len() * std::mem::size_of::<T>()) as u64;
        let mut outcome = Ok(());
        HostCommand::new::<T, T>("watershed_ift", "image_foresting_transform", &reads, &[out])?.work(bytes, 0).run(
            |queue| {
                ffi::with_mapped::<T, T, ()>(queue, &regions, &write, |read, labels| {
                    if let [image, markers] = read {
                        outcome = ift_on_host(&plan.offsets, image, markers, labels);
                    }
                })
                .map(|((), event)| event)
            },
        )?;
        outcome
    }
}

fn real<T: RealElement>(x: T) -> f64 {
    x.to_c64().re
}

/// The transform on host slices: the image's values checked as scipy's types hold them, the markers read as C
/// `int`s (wrapping, as scipy's cast), the labels written to `out`.
fn ift_on_host<T: RealElement>(offsets: &[isize], image: &[T], markers: &[T], out: &mut [T]) -> Result<()> {
    let values: Vec<u32> = image
        .iter()
        .map(|&v| {
            let v = real(v);
            if (0.0..=65535.0).contains(&v) && v.fract() == 0.0 {
                Ok(v as u32)
            } else {
                Err(Error::invalid(
                    "watershed_ift",
                    format!("the input holds {v}: only 8- and 16-bit unsigned integers (0 to 65535) are supported"),
                ))
            }
        })
        .collect::<Result<_>>()?;
    let mut labels: Vec<i32> = markers
        .iter()
        .map(|&m| {
            let m = real(m);
            if m.is_finite() && m.fract() == 0.0 && m.abs() <= 9.007_199_254_740_992e15 {
                Ok(m as i64 as i32)
            } else {
                Err(Error::invalid("watershed_ift", format!("the markers hold {m}, which is no integer label")))
            }
        })
        .collect::<Result<_>>()?;
    watershed_ift(&values, &mut labels, offsets).ok_or_else(|| {
        Error::invalid("watershed_ift", "scipy's bucket lists looped on this input (scipy would not finish either)")
    })?;
    for (slot, &label) in out.iter_mut().zip(&labels) {
        *slot = T::from_c64(Complex::new(f64::from(label), 0.0));
    }
    Ok(())
}

impl<T: RealElement> Process for WatershedIft<T> {
    fn name(&self) -> &str {
        "watershed_ift"
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(self.plan()?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        self.plan.get("watershed_ift")?;
        self.transform()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
