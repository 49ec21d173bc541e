//! One SVG chart per workload (`--out DIR`): ops/s bars per variant, the
//! drivers side by side, on a logarithmic axis (a workload's variants can
//! differ a hundredfold, as ozo's `basic` and `reuse` do).

use std::path::Path;

use plotters::prelude::*;

use crate::error::BenchError;
use crate::results::{ResultRow, Status};

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// The distinct values of `f` over `rows`, in order of first appearance.
fn distinct<'a>(rows: &[&'a ResultRow], f: impl Fn(&'a ResultRow) -> &'a str) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for r in rows {
        let v = f(r);
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// Writes `<workload>.svg` into `dir` for every workload in `results`;
/// returns the paths.
pub fn write(results: &[ResultRow], dir: &Path) -> Result<Vec<String>, BenchError> {
    let all: Vec<&ResultRow> = results.iter().collect();
    let mut paths = Vec::new();
    for workload in distinct(&all, |r| r.workload.as_str()) {
        let rows: Vec<&ResultRow> = all
            .iter()
            .copied()
            .filter(|r| r.workload == workload)
            .collect();
        let path = dir.join(format!("{workload}.svg"));
        chart(workload, &rows, &path)
            .map_err(|e| BenchError::new(format!("chart {workload}: {e}")))?;
        paths.push(path.display().to_string());
    }
    Ok(paths)
}

fn chart(
    workload: &str,
    rows: &[&ResultRow],
    path: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let variants = distinct(rows, |r| r.variant.as_str());
    let drivers = distinct(rows, |r| r.driver.as_str());
    let value = |v: &str, d: &str| {
        rows.iter()
            .find(|r| r.variant == v && r.driver == d && r.status == Status::Ok)
            .and_then(|r| r.ops_per_sec)
            .filter(|x| x.is_finite() && *x > 0.0)
    };
    // Drivers that ran nothing in this workload are left out of the chart
    // (the table shows them as `-` with the reason).
    let drivers: Vec<&str> = drivers
        .into_iter()
        .filter(|d| variants.iter().any(|v| value(v, d).is_some()))
        .collect();
    let values: Vec<f64> = variants
        .iter()
        .flat_map(|v| drivers.iter().filter_map(move |d| value(v, d)))
        .collect();
    let hi = values.iter().copied().fold(1.0f64, f64::max) * 2.0;
    let lo = (values.iter().copied().fold(hi, f64::min) / 2.0).max(0.01);
    let width = (110 * variants.len() as u32 + 200).max(640);
    let root = SVGBackend::new(path, (width, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{workload}: ops/s (log scale)"), ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..variants.len().max(1) as f64, (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("ops/s")
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    // In each variant the drivers that ran share the group's width.
    let ran: Vec<Vec<&str>> = variants
        .iter()
        .map(|v| {
            drivers
                .iter()
                .copied()
                .filter(|d| value(v, d).is_some())
                .collect()
        })
        .collect();
    for (j, d) in drivers.iter().enumerate() {
        let color = COLORS[j % COLORS.len()];
        let bars: Vec<Rectangle<(f64, f64)>> = variants
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let slot = 0.8 / ran[i].len().max(1) as f64;
                let k = ran[i].iter().position(|x| x == d)?;
                let x0 = i as f64 + 0.1 + k as f64 * slot;
                value(v, d)
                    .map(|y| Rectangle::new([(x0, lo), (x0 + slot * 0.9, y)], color.filled()))
            })
            .collect();
        chart
            .draw_series(bars)?
            .label(d.to_string())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    let style = ("sans-serif", 12).into_font().color(&BLACK);
    for (i, v) in variants.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64 + 0.1, lo));
        root.draw(&Text::new(v.to_string(), (x, y + 8), style.clone()))?;
    }
    root.present()?;
    Ok(())
}
