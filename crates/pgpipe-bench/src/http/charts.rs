//! SVG charts of `pgpipe-bench http --out DIR`: the latency spectrum per
//! service (HdrHistogram's percentile plot: latency against 1/(1-p) on a
//! log axis) and, for a sweep, answered rate against offered rate.

use std::path::Path;

use plotters::prelude::*;

const COLORS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
];

/// One line of a chart: its name and its points.
pub type Series = (String, Vec<(f64, f64)>);

/// Latency (ms) against 1/(1-percentile), one line per service.
pub fn spectrum(path: &Path, title: &str, series: &[Series]) -> Result<(), String> {
    draw_spectrum(path, title, series).map_err(|e| format!("chart {}: {e}", path.display()))
}

fn draw_spectrum(
    path: &Path,
    title: &str,
    series: &[Series],
) -> Result<(), Box<dyn std::error::Error>> {
    let x_hi = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.0))
        .fold(10.0f64, f64::max)
        .min(1e7);
    let y_hi = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .fold(0.1f64, f64::max)
        * 1.1;
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((1f64..x_hi).log_scale(), 0f64..y_hi)?;
    chart
        .configure_mesh()
        .x_desc("percentile (1/(1-p): 10 = p90, 100 = p99, 1000 = p99.9)")
        .y_desc("latency ms (corrected)")
        .x_label_formatter(&|x| {
            let p = 100.0 * (1.0 - 1.0 / x);
            format!("{p:.3}%")
        })
        .draw()?;
    for (i, (name, points)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 15, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Answered req/s against offered req/s, one line per service.
pub fn throughput(path: &Path, title: &str, series: &[Series]) -> Result<(), String> {
    draw_throughput(path, title, series).map_err(|e| format!("chart {}: {e}", path.display()))
}

fn draw_throughput(
    path: &Path,
    title: &str,
    series: &[Series],
) -> Result<(), Box<dyn std::error::Error>> {
    let hi = series
        .iter()
        .flat_map(|(_, p)| p.iter().flat_map(|q| [q.0, q.1]))
        .fold(1.0f64, f64::max)
        * 1.1;
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..hi, 0f64..hi)?;
    chart
        .configure_mesh()
        .x_desc("offered req/s")
        .y_desc("answered req/s (median)")
        .draw()?;
    chart.draw_series(LineSeries::new([(0.0, 0.0), (hi, hi)], BLACK.mix(0.3)))?;
    for (i, (name, points)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 15, y)], color.stroke_width(2))
            });
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
