//! [`Watershed`]: scikit-image's `segmentation.watershed`, a priority flood run by the host in the mapped device
//! buffers.

use super::flood::{Flood, label_components, local_minima};
use super::grid::{PaddedGrid, binary_structure, check_centre, raveled_neighbours};
use crate::app::ffi::{self, Region};
use crate::data::{HostCommand, XData};
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::process::rank::Footprint;
use crate::process::{Prepared, Process};
use num_complex::Complex;

/// Which elements are neighbours: scipy's `generate_binary_structure` connectivity (orthogonal steps, 1 to the
/// rank; scikit-image's default 1) or a footprint of taps.
///
/// ```
/// use cliper::{Connectivity, Footprint};
/// let cross = Connectivity::Steps(1);
/// let wide = Connectivity::Footprint(Footprint::full(&[3, 5])?);
/// assert_ne!(cross, wide);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Connectivity {
    /// At most this many orthogonal steps from the centre (below 1 counts as 1, above the rank as the rank).
    Steps(i64),
    /// The taps of a footprint (scikit-image's connectivity array).
    Footprint(Footprint),
}

/// The settings of a [`Watershed`]: scikit-image's `connectivity` (default 1), `offset` (the footprint's centre;
/// default its middle), `compactness` (default 0: the plain watershed; above 0 the compact watershed, whose
/// priority adds the compactness times the distance to the marker) and `watershed_line` (default false: when true,
/// elements where basins meet keep label 0).
///
/// ```
/// use cliper::{Connectivity, WatershedParams};
/// let p = WatershedParams::default().connectivity(Connectivity::Steps(2)).compactness(0.01);
/// assert_eq!((p.connectivity, p.compactness, p.watershed_line), (Connectivity::Steps(2), 0.01, false));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct WatershedParams {
    /// The neighbourhood.
    pub connectivity: Connectivity,
    /// The footprint's centre, per axis (default: the middle of an odd footprint).
    pub offset: Option<Vec<usize>>,
    /// The compact watershed's weight of the distance to the marker (0: none).
    pub compactness: f64,
    /// Whether a line of label 0 separates the basins.
    pub watershed_line: bool,
}

impl Default for WatershedParams {
    fn default() -> Self {
        WatershedParams { connectivity: Connectivity::Steps(1), offset: None, compactness: 0.0, watershed_line: false }
    }
}

impl WatershedParams {
    /// With this neighbourhood.
    pub fn connectivity(mut self, connectivity: Connectivity) -> Self {
        self.connectivity = connectivity;
        self
    }

    /// With the footprint centred at `offset`.
    pub fn offset(mut self, offset: &[usize]) -> Self {
        self.offset = Some(offset.to_vec());
        self
    }

    /// With this compactness.
    pub fn compactness(mut self, compactness: f64) -> Self {
        self.compactness = compactness;
        self
    }

    /// With or without the watershed line.
    pub fn watershed_line(mut self, line: bool) -> Self {
        self.watershed_line = line;
        self
    }

    /// The footprint and its centre for an image of `rank` axes, checked.
    fn neighbourhood(&self, rank: usize) -> Result<(Footprint, Vec<usize>)> {
        let footprint = match &self.connectivity {
            Connectivity::Steps(steps) => binary_structure(rank, *steps)?,
            Connectivity::Footprint(f) => f.clone(),
        };
        let centre = match &self.offset {
            Some(offset) => offset.clone(),
            None => {
                if footprint.shape().iter().any(|n| n % 2 == 0) {
                    return Err(Error::invalid(
                        "watershed",
                        format!(
                            "a connectivity of shape {:?} has no middle: give an odd footprint or its offset",
                            footprint.shape()
                        ),
                    ));
                }
                footprint.shape().iter().map(|n| n / 2).collect()
            }
        };
        Ok((footprint, centre))
    }

    fn check(&self, shape: &[usize]) -> Result<(Footprint, Vec<usize>)> {
        if !(1..=3).contains(&shape.len()) {
            return Err(Error::shape_rule("watershed", "1 to 3 axes", shape));
        }
        if !self.compactness.is_finite() {
            return Err(Error::invalid(
                "watershed",
                format!("compactness {} is not a finite number", self.compactness),
            ));
        }
        let (footprint, centre) = self.neighbourhood(shape.len())?;
        check_centre("watershed", &footprint, &centre, shape)?;
        Ok((footprint, centre))
    }
}

/// What [`Watershed`] did: the flood's size and kind.
///
/// ```
/// use cliper::{ClApp, Process, Watershed, WatershedParams, XData};
/// let app = ClApp::new()?;
/// let image = XData::<f32>::zeros(&app, &[4, 6])?;
/// let out = XData::<f32>::zeros(&app, &[4, 6])?;
/// let mut flood = Watershed::new(&image, None, None, &out, WatershedParams::default());
/// flood.init()?;
/// assert_eq!(flood.strategy().unwrap().to_string(), "priority flood on the host over 24 elements, 4 neighbours each, markers from the local minima");
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatershedStrategy {
    /// Elements flooded (the image's).
    pub elements: usize,
    /// Neighbours of each element.
    pub neighbours: usize,
    /// Whether the markers were the image's local minima (none given).
    pub minima_markers: bool,
}

impl std::fmt::Display for WatershedStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let markers = if self.minima_markers { ", markers from the local minima" } else { "" };
        write!(
            f,
            "priority flood on the host over {} elements, {} neighbours each{markers}",
            self.elements, self.neighbours
        )
    }
}

struct Plan {
    shape: Vec<usize>,
    footprint: Footprint,
    centre: Vec<usize>,
    neighbours: usize,
}

/// scikit-image 0.26's `segmentation.watershed(image, markers, connectivity, offset, mask, compactness,
/// watershed_line)`: the basins flooded from labelled markers (non-zero elements of `markers`; without markers the
/// image's local minima, labelled in C order), lowest value first, ties to the element queued first — scikit-image's
/// own queue order, markers in C order, so plateaus split between markers exactly as it splits them. Elements
/// where `mask` is 0 stay 0 (markers there too). The result holds the labels (as values of `T`).
///
/// The flood is sequential — every element's label depends on the order the queue hands them out — so it runs on
/// the host, in the device buffers mapped (a host command in the queue's order, timed in profiles). Image, markers,
/// mask and output must be contiguous.
///
/// ```
/// use cliper::{ClApp, Watershed, WatershedParams, XData};
/// let app = ClApp::new()?;
/// // A ridge at column 2 parts two markers.
/// let image = XData::from_slice(&app, &[2, 5], &[0.0f32, 1.0, 5.0, 1.0, 0.0, 0.0, 1.0, 5.0, 1.0, 0.0])?;
/// let markers = XData::from_slice(&app, &[2, 5], &[1.0f32, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
/// let labels = Watershed::apply(&image, Some(&markers), None, WatershedParams::default())?.to_vec()?;
/// assert_eq!(labels, vec![1.0, 1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 1.0, 2.0, 2.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Watershed<T: RealElement> {
    image: XData<T>,
    markers: Option<XData<T>>,
    mask: Option<XData<T>>,
    output: XData<T>,
    params: WatershedParams,
    plan: Prepared<Plan>,
}

impl<T: RealElement> Watershed<T> {
    /// `output = watershed(image, markers, mask=mask)`.
    pub fn new(
        image: &XData<T>,
        markers: Option<&XData<T>>,
        mask: Option<&XData<T>>,
        output: &XData<T>,
        params: WatershedParams,
    ) -> Watershed<T> {
        Watershed {
            image: image.clone(),
            markers: markers.cloned(),
            mask: mask.cloned(),
            output: output.clone(),
            params,
            plan: Prepared::default(),
        }
    }

    /// Allocates the output, runs once and returns it.
    pub fn apply(
        image: &XData<T>,
        markers: Option<&XData<T>>,
        mask: Option<&XData<T>>,
        params: WatershedParams,
    ) -> Result<XData<T>> {
        let out = XData::uninit(image.app(), "watershed", &Self::output_shape(image.shape(), &params)?)?;
        Watershed::new(image, markers, mask, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the image's (after checking the neighbourhood against it).
    ///
    /// ```
    /// use cliper::{Watershed, WatershedParams};
    /// assert_eq!(Watershed::<f32>::output_shape(&[37, 45], &WatershedParams::default())?, vec![37, 45]);
    /// assert!(Watershed::<f32>::output_shape(&[2, 3, 4, 5], &WatershedParams::default()).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize], params: &WatershedParams) -> Result<Vec<usize>> {
        params.check(shape)?;
        Ok(shape.to_vec())
    }

    /// The flood `init` planned; `None` before `init`.
    pub fn strategy(&self) -> Option<WatershedStrategy> {
        let plan = self.plan.as_ref()?;
        Some(WatershedStrategy {
            elements: plan.shape.iter().product(),
            neighbours: plan.neighbours,
            minima_markers: self.markers.is_none(),
        })
    }

    fn plan(&self) -> Result<Plan> {
        let shape = self.image.shape().to_vec();
        let (footprint, centre) = self.params.check(&shape)?;
        let inputs = [("markers", self.markers.as_ref()), ("mask", self.mask.as_ref()), ("output", Some(&self.output))];
        for (what, x) in inputs.iter().filter_map(|(w, x)| x.map(|x| (w, x))) {
            if x.shape() != shape.as_slice() {
                return Err(Error::shape_because(
                    "watershed",
                    &shape,
                    x.shape(),
                    format!("the {what} must have the image's shape"),
                ));
            }
            if !x.app().same_as(self.image.app()) {
                return Err(Error::invalid("watershed", format!("the {what} belongs to another ClApp than the image")));
            }
        }
        let all = [Some(&self.image), self.markers.as_ref(), self.mask.as_ref(), Some(&self.output)];
        if all.iter().flatten().any(|x| !x.is_contiguous()) {
            return Err(Error::Unsupported {
                what: format!("watershed of strided views of shape {shape:?}: give contiguous arrays"),
            });
        }
        if self.markers.is_none() && matches!(self.params.connectivity, Connectivity::Footprint(_)) {
            return Err(Error::invalid(
                "watershed",
                "markers from the local minima need an integer connectivity (scikit-image labels them with \
                 generate_binary_structure's): give the markers, or the connectivity as a number",
            ));
        }
        let grid = PaddedGrid::new(&shape, &centre);
        let neighbours = raveled_neighbours(grid.shape(), &footprint, &centre).len();
        Ok(Plan { shape, footprint, centre, neighbours })
    }

    fn flood(&self) -> Result<()> {
        let Some(plan) = self.plan.as_ref() else { return Err(Error::NotInitialized { op: "watershed".into() }) };
        if self.output.is_empty() {
            return Ok(());
        }
        let mut reads = vec![&self.image];
        reads.extend(self.markers.as_ref());
        reads.extend(self.mask.as_ref());
        let regions: Vec<Region> = reads
            .iter()
            .map(|x| Region { buffer: x.storage().buffer(), lo: x.offset(), hi: x.offset() + x.len() })
            .collect();
        let out = &self.output;
        let write = Region { buffer: out.storage().buffer(), lo: out.offset(), hi: out.offset() + out.len() };
        let bytes = ((reads.len() + 1) * out.len() * std::mem::size_of::<T>()) as u64;
        let (has_markers, has_mask) = (self.markers.is_some(), self.mask.is_some());
        let mut outcome = Ok(());
        HostCommand::new::<T, T>("watershed", "priority_flood", &reads, &[out])?.work(bytes, 0).run(|queue| {
            ffi::with_mapped::<T, T, ()>(queue, &regions, &write, |read, labels| {
                let mut read = read.iter();
                let image = read.next().copied().unwrap_or(&[]);
                let markers = if has_markers { read.next().copied() } else { None };
                let mask = if has_mask { read.next().copied() } else { None };
                outcome = watershed_on_host(plan, &self.params, image, markers, mask, labels);
            })
            .map(|((), event)| event)
        })?;
        outcome
    }
}

fn real<T: RealElement>(x: T) -> f64 {
    x.to_c64().re
}

/// The flood on host slices (C order): scikit-image's `_validate_inputs` (markers times the mask, or the masked
/// local minima labelled), its padding by the footprint's offset, then [`Flood::run`]; the labels written to `out`.
fn watershed_on_host<T: RealElement>(
    plan: &Plan,
    params: &WatershedParams,
    image: &[T],
    markers: Option<&[T]>,
    mask: Option<&[T]>,
    out: &mut [T],
) -> Result<()> {
    let grid = PaddedGrid::new(&plan.shape, &plan.centre);
    let inner = grid.inner_indices();
    let neighbours = raveled_neighbours(grid.shape(), &plan.footprint, &plan.centre);
    // `mask.astype(bool)`: any non-zero value (NaN too) floods.
    let allowed: Vec<bool> = match mask {
        Some(m) => m.iter().map(|&v| real(v) != 0.0).collect(),
        None => vec![true; inner.len()],
    };
    let values: Vec<f64> = image.iter().map(|&v| real(v)).collect();
    let seeds: Vec<i64> = match markers {
        Some(markers) => markers
            .iter()
            .zip(&allowed)
            .map(|(&m, &on)| {
                let m = real(m);
                if m.fract() != 0.0 || !m.is_finite() || m.abs() > 9.007_199_254_740_992e15 {
                    return Err(Error::invalid(
                        "watershed",
                        format!("the markers hold {m}, which is no integer label"),
                    ));
                }
                Ok(if on { m as i64 } else { 0 })
            })
            .collect::<Result<_>>()?,
        None => minima_markers(&plan.shape, &plan.footprint, &values, &allowed),
    };
    let mut labels = grid.padded(seeds.iter().copied(), 0, &inner);
    let mut flooded = grid.padded(allowed.iter().copied(), false, &inner);
    let padded_image = grid.padded(values.iter().copied(), 0.0, &inner);
    Flood {
        image: &padded_image,
        mask: &mut flooded,
        labels: &mut labels,
        neighbours: &neighbours,
        strides: grid.strides(),
        compactness: params.compactness,
        watershed_line: params.watershed_line,
    }
    .run();
    for (slot, &at) in out.iter_mut().zip(&inner) {
        *slot = T::from_c64(Complex::new(labels.get(at).copied().unwrap_or(0) as f64, 0.0));
    }
    Ok(())
}

/// scikit-image's markers when none are given: `label(local_minima(image, connectivity) * mask)` with the
/// connectivity's structure — the footprint for an integer connectivity — numbered in C order.
fn minima_markers(shape: &[usize], footprint: &Footprint, values: &[f64], allowed: &[bool]) -> Vec<i64> {
    let grid = PaddedGrid::new(shape, &vec![1; shape.len()]);
    let centre = vec![1; shape.len()];
    let neighbours = raveled_neighbours(grid.shape(), footprint, &centre);
    let minima = local_minima(&grid, values, &neighbours);
    let inner = grid.inner_indices();
    let on = grid.padded(minima.iter().zip(allowed).map(|(&m, &a)| m && a), false, &inner);
    let labels = label_components(&on, &neighbours);
    inner.iter().map(|&at| labels.get(at).copied().unwrap_or(0)).collect()
}

impl<T: RealElement> Process for Watershed<T> {
    fn name(&self) -> &str {
        "watershed"
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(self.plan()?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        self.plan.get("watershed")?;
        self.flood()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
