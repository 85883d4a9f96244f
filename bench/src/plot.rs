//! The report's SVG plots (plotters): GEMM TFLOP/s against size, bandwidth-bound cases as a percentage of the
//! copy ceiling, and convolution time against kernel size on log scales, each with the peers of the same call.

use crate::peers::{PeerTime, family, peers_for};
use crate::suite::Record;
use cliper::Result;
use cliper::prelude::*;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

const COLOURS: [RGBColor; 8] = [
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
];

/// One bar of the bandwidth chart: the case, cliper's percentage, and the best peer's name and percentage.
type Bar = (String, f64, Option<(String, f64)>);

/// A named line of (x, y) points.
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
}

fn plot_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Format { path: path.to_path_buf(), reason: format!("drawing the plot: {e}") }
}

/// Writes `gemm.svg`, `bandwidth.svg` and `convolution.svg` into `dir` (created if missing); returns the paths.
pub(crate) fn write_all(dir: &Path, records: &[Record], peers: &[PeerTime]) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
    let device =
        records.first().map_or(String::new(), |r| format!("{}{}", r.device, if r.quick { " (quick)" } else { "" }));
    let mut written = Vec::new();

    // GEMM: TFLOP/s (from back-to-back time, as the peers measure) against size, per element type and peer.
    let mut gemm: Vec<Series> = Vec::new();
    for fam in ["sgemm", "cgemm", "dgemm"] {
        let ours: Vec<&Record> = records.iter().filter(|r| family(&r.case) == fam).collect();
        let mut add = |name: String, x: f64, tf: f64| match gemm.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((x, tf)),
            None => gemm.push(Series { name, points: vec![(x, tf)] }),
        };
        for r in &ours {
            let (Ok(n), Some(g)) = (r.size.parse::<f64>(), r.gflops) else { continue };
            add(format!("cliper {fam}"), n, g * r.median_ms / r.stream_ms / 1e3);
            let flops = g * 1e6 * r.median_ms;
            for p in peers_for(r, peers) {
                add(format!("{} {fam}", p.peer), n, flops / p.ms / 1e9);
            }
        }
    }
    if !gemm.is_empty() {
        // GFLOP/s where nothing reaches a TFLOP/s (CPUs).
        let top = gemm.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0, f64::max);
        let unit = if top < 1.0 {
            for s in &mut gemm {
                s.points.iter_mut().for_each(|p| p.1 *= 1e3);
            }
            "GFLOP/s"
        } else {
            "TFLOP/s"
        };
        let path = dir.join("gemm.svg");
        let axes =
            Axes { x: "matrix size n (n×n·n×n)", y: unit, log_y: false, legend: SeriesLabelPosition::LowerRight };
        line_chart(&path, &format!("GEMM, {device}"), axes, &gemm)?;
        written.push(path);
    }

    // Convolution: back-to-back ms against the side of a square 2-D kernel, single image.
    let mut conv: Vec<Series> = Vec::new();
    for r in records.iter().filter(|r| is_square_conv(&r.case)) {
        let Some(k) = family(&r.case).strip_prefix("conv").and_then(|k| k.parse::<f64>().ok()) else { continue };
        let mut add = |name: String, y: f64| match conv.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((k, y)),
            None => conv.push(Series { name, points: vec![(k, y)] }),
        };
        add("cliper".into(), r.stream_ms);
        for p in peers_for(r, peers) {
            add(p.peer.clone(), p.ms);
        }
    }
    if !conv.is_empty() {
        let size = records.iter().find(|r| is_square_conv(&r.case)).map_or(String::new(), |r| r.size.clone());
        let path = dir.join("convolution.svg");
        let title = format!("Convolution of a {size} f32 image, {device}");
        let axes = Axes {
            x: "kernel side k (k×k)",
            y: "ms per image (log)",
            log_y: true,
            legend: SeriesLabelPosition::UpperLeft,
        };
        line_chart(&path, &title, axes, &conv)?;
        written.push(path);
    }

    // Bandwidth-bound cases: % of the copy ceiling, cliper and the best peer.
    let ceiling = records.iter().filter(|r| family(&r.case) == "copy").filter_map(|r| r.gbps).fold(0.0, f64::max);
    let bars: Vec<Bar> = records
        .iter()
        .filter(|r| is_bandwidth_bound(&r.case))
        .filter_map(|r| {
            let bytes = r.gbps? * 1e6 * r.median_ms;
            let ours = 100.0 * bytes / (r.stream_ms * 1e6) / ceiling;
            let peer = peers_for(r, peers).first().map(|p| (p.peer.clone(), 100.0 * bytes / (p.ms * 1e6) / ceiling));
            Some((r.case.clone(), ours, peer))
        })
        .collect();
    if !bars.is_empty() && ceiling > 0.0 {
        let path = dir.join("bandwidth.svg");
        bar_chart(&path, &format!("Bandwidth-bound cases, % of copy ({ceiling:.0} GB/s), {device}"), &bars)?;
        written.push(path);
    }
    Ok(written)
}

fn is_square_conv(case: &str) -> bool {
    let fam = family(case);
    fam.strip_prefix("conv").is_some_and(|k| k.parse::<usize>().is_ok())
}

fn is_bandwidth_bound(case: &str) -> bool {
    let fam = family(case);
    ["norm2_f32", "normp20_f32", "dot_f32", "dotc_c32", "transpose", "pad8_constant", "pad8_reflect"].contains(&fam)
        || ["conv3", "conv5", "conv3_batch64", "conv3d3"].contains(&fam)
}

/// A chart's axis titles, and where its legend goes.
struct Axes<'a> {
    x: &'a str,
    y: &'a str,
    log_y: bool,
    legend: SeriesLabelPosition,
}

fn line_chart(path: &Path, title: &str, axes: Axes, series: &[Series]) -> Result<()> {
    let Axes { x: x_label, y: y_label, log_y, legend } = axes;
    let err = |e: &dyn std::fmt::Display| plot_error(path, e);
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (x_min, x_max) = xs.fold((f64::INFINITY, 0.0f64), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let (y_min, y_max) = ys.fold((f64::INFINITY, 0.0f64), |(lo, hi), y| (lo.min(y), hi.max(y)));
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let x_range = (x_min / 1.3..x_max * 1.3).log_scale();
    let mut builder = ChartBuilder::on(&root);
    builder.caption(title, ("sans-serif", 20)).margin(16).x_label_area_size(44).y_label_area_size(64);
    macro_rules! draw {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .light_line_style(RGBColor(0xee, 0xee, 0xee))
                .x_desc(x_label)
                .y_desc(y_label)
                .x_label_formatter(&|x| format!("{x:.0}"))
                .draw()
                .map_err(|e| err(&e))?;
            for (s, &colour) in series.iter().zip(COLOURS.iter().cycle()) {
                let mut points = s.points.clone();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                chart
                    .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
                    .map_err(|e| err(&e))?
                    .label(s.name.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
                chart
                    .draw_series(points.into_iter().map(|p| Circle::new(p, 4, colour.filled())))
                    .map_err(|e| err(&e))?;
            }
            chart
                .configure_series_labels()
                .position(legend.clone())
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK)
                .draw()
                .map_err(|e| err(&e))?;
        }};
    }
    if log_y {
        draw!(builder.build_cartesian_2d(x_range, (y_min / 1.5..y_max * 1.5).log_scale()).map_err(|e| err(&e))?);
    } else {
        draw!(builder.build_cartesian_2d(x_range, 0.0..y_max * 1.15).map_err(|e| err(&e))?);
    }
    root.present().map_err(|e| err(&e))
}

/// Horizontal bars: for each case cliper's percentage, and the best peer's under it when there is one.
fn bar_chart(path: &Path, title: &str, bars: &[Bar]) -> Result<()> {
    let err = |e: &dyn std::fmt::Display| plot_error(path, e);
    let rows = bars.len() as f64;
    let root = SVGBackend::new(path, (900, 120 + 44 * bars.len() as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let top = bars.iter().flat_map(|b| std::iter::once(b.1).chain(b.2.as_ref().map(|p| p.1))).fold(100.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(170)
        .build_cartesian_2d(0.0..top * 1.08, 0.0..rows)
        .map_err(|e| err(&e))?;
    let names: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .y_labels(bars.len() * 2 + 1)
        .y_label_formatter(&|y| {
            let row = (rows - y - 0.5).round();
            if (rows - y - 0.5 - row).abs() < 0.05 && row >= 0.0 {
                names.get(row as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_desc("% of the copy ceiling")
        .draw()
        .map_err(|e| err(&e))?;
    let (ours, theirs) = (COLOURS[0], COLOURS[1]);
    for (i, (_, pct, peer)) in bars.iter().enumerate() {
        let y = rows - i as f64;
        chart.draw_series([Rectangle::new([(0.0, y - 0.1), (*pct, y - 0.45)], ours.filled())]).map_err(|e| err(&e))?;
        chart
            .draw_series([Text::new(format!("cliper {pct:.0}%"), (pct + 0.5, y - 0.13), ("sans-serif", 12))])
            .map_err(|e| err(&e))?;
        if let Some((name, p)) = peer {
            chart
                .draw_series([Rectangle::new([(0.0, y - 0.5), (*p, y - 0.85)], theirs.filled())])
                .map_err(|e| err(&e))?;
            chart
                .draw_series([Text::new(format!("{name} {p:.0}%"), (p + 0.5, y - 0.53), ("sans-serif", 12))])
                .map_err(|e| err(&e))?;
        }
    }
    chart
        .draw_series([PathElement::new(vec![(100.0, 0.0), (100.0, rows)], BLACK.stroke_width(1))])
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}
