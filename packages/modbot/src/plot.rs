//! PNG plots of runs and sweeps (plotters, with the DejaVu Sans font compiled in).

use std::path::Path;
use std::sync::Once;

use anyhow::{Context, Result, anyhow};
use modbot_sim::Sample;
use plotters::prelude::*;

static FONT: Once = Once::new();

fn register_font() {
    FONT.call_once(|| {
        // DejaVu Sans ships inside the `dejavu` crate, so plots need no system fonts.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
    });
}

fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("plotting: {e:?}")
}

/// CoM path (top view) and joint angles against time.
pub fn run_plot(path: &Path, title: &str, samples: &[Sample], joint_names: &[String]) -> Result<()> {
    register_font();
    let root = BitMapBackend::new(path, (1200, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (left, right) = root.split_horizontally(560);
    let xs: Vec<f64> = samples.iter().map(|s| s.com[0] * 100.0).collect();
    let ys: Vec<f64> = samples.iter().map(|s| s.com[1] * 100.0).collect();
    let (xmin, xmax) = bounds(&xs);
    let (ymin, ymax) = bounds(&ys);
    let span = (xmax - xmin).max(ymax - ymin).max(1.0) * 0.55;
    let (cx, cy) = ((xmin + xmax) / 2.0, (ymin + ymax) / 2.0);
    let mut chart = ChartBuilder::on(&left)
        .caption(format!("{title}: CoM path"), ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(45)
        .build_cartesian_2d(cx - span..cx + span, cy - span..cy + span)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("x (cm)")
        .y_desc("y (cm)")
        .draw()
        .map_err(err)?;
    chart
        .draw_series(LineSeries::new(xs.iter().copied().zip(ys.iter().copied()), &BLUE))
        .map_err(err)?;
    chart
        .draw_series([Circle::new((xs[0], ys[0]), 4, GREEN.filled())])
        .map_err(err)?;

    let t_end = samples.last().map(|s| s.t).unwrap_or(1.0).max(1e-3);
    let shown = joint_names.len().min(4);
    let mut chart = ChartBuilder::on(&right)
        .caption("joint angles (first joints)", ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(45)
        .build_cartesian_2d(0.0..t_end, -95.0..95.0)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("t (s)")
        .y_desc("deg")
        .draw()
        .map_err(err)?;
    for (j, name) in joint_names.iter().enumerate().take(shown) {
        let color = Palette99::pick(j).to_rgba();
        chart
            .draw_series(LineSeries::new(
                samples.iter().map(|s| (s.t, s.angles[j].to_degrees())),
                color,
            ))
            .map_err(err)?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// A heat map of `values[iy][ix]` over the grid (NaN cells grey).
pub fn heatmap(
    path: &Path,
    title: &str,
    xs: &[f64],
    ys: &[f64],
    values: &[Vec<f64>],
    labels: (&str, &str),
) -> Result<()> {
    register_font();
    let root = BitMapBackend::new(path, (900, 700)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let finite: Vec<f64> = values.iter().flatten().copied().filter(|v| v.is_finite()).collect();
    let (vmin, vmax) = bounds(&finite);
    let dx = if xs.len() > 1 { xs[1] - xs[0] } else { 1.0 };
    let dy = if ys.len() > 1 { ys[1] - ys[0] } else { 1.0 };
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{title} (min {vmin:.2}, max {vmax:.2})"), ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(
            xs[0] - dx / 2.0..xs[xs.len() - 1] + dx / 2.0,
            ys[0] - dy / 2.0..ys[ys.len() - 1] + dy / 2.0,
        )
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(labels.0)
        .y_desc(labels.1)
        .draw()
        .map_err(err)?;
    let scale = (vmax - vmin).abs().max(1e-12);
    for (iy, y) in ys.iter().enumerate() {
        for (ix, x) in xs.iter().enumerate() {
            let v = values[iy][ix];
            let color = if v.is_finite() {
                let u = (v - vmin) / scale;
                RGBColor(
                    (255.0 * u) as u8,
                    (80.0 + 100.0 * (1.0 - (2.0 * u - 1.0).abs())) as u8,
                    (255.0 * (1.0 - u)) as u8,
                )
            } else {
                RGBColor(200, 200, 200)
            };
            chart
                .draw_series([Rectangle::new(
                    [(x - dx / 2.0, y - dy / 2.0), (x + dx / 2.0, y + dy / 2.0)],
                    color.filled(),
                )])
                .map_err(err)?;
        }
    }
    root.present().with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

fn bounds(v: &[f64]) -> (f64, f64) {
    let (lo, hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(*x), b.max(*x)));
    if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) }
}

/// A top view in metres over `x` × `y` with labelled axes and no grid.
fn top_view<'a, 'b: 'a>(
    root: &'a DrawingArea<BitMapBackend<'b>, plotters::coord::Shift>,
    title: &str,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
) -> Result<
    ChartContext<
        'a,
        BitMapBackend<'b>,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
> {
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(45)
        .build_cartesian_2d(x, y)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("x (m)")
        .y_desc("y (m)")
        .disable_mesh()
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// A strategic plan over its terrain: walls black, ground obstacles brown, laths blue, the
/// path coloured by configuration, sub-goals as circles (filled where an ability runs).
pub fn strategic_plot(
    path: &Path,
    title: &str,
    map: &modbot_planner::deliberative::TerrainMap,
    rows: &[modbot_planner::strategic::SubGoal],
) -> Result<()> {
    register_font();
    let root = BitMapBackend::new(path, (1000, 700)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let r = map.resolution;
    let (x0, y0) = (map.origin[0] - r / 2.0, map.origin[1] - r / 2.0);
    let (x1, y1) = (x0 + map.nx as f64 * r, y0 + map.ny as f64 * r);
    let mut chart = top_view(&root, title, x0..x1, y0..y1)?;
    let cells = map.cells.iter().enumerate().filter_map(|(k, t)| {
        let color = if t.wall {
            RGBColor(30, 30, 30)
        } else if t.step_m > 0.0 {
            RGBColor(160, 110, 60)
        } else if t.clearance_m.is_finite() {
            RGBColor(90, 140, 230)
        } else {
            return None;
        };
        let p = map.point(k);
        Some(Rectangle::new(
            [(p[0] - r / 2.0, p[1] - r / 2.0), (p[0] + r / 2.0, p[1] + r / 2.0)],
            color.filled(),
        ))
    });
    chart.draw_series(cells).map_err(err)?;
    let names: Vec<&str> = {
        let mut v: Vec<&str> = rows.iter().map(|r| r.configuration.as_str()).collect();
        v.dedup();
        v
    };
    for row in rows {
        let k = names.iter().position(|n| *n == row.configuration).unwrap_or(0);
        let color = Palette99::pick(k + 1).to_rgba();
        chart
            .draw_series(LineSeries::new(
                row.path.iter().map(|p| (p[0], p[1])),
                color.stroke_width(3),
            ))
            .map_err(err)?;
        if let Some(end) = row.path.last() {
            let style = if row.ability {
                color.filled()
            } else {
                color.stroke_width(2)
            };
            chart
                .draw_series([Circle::new((end[0], end[1]), 6, style)])
                .map_err(err)?;
        }
    }
    root.present().with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// A maze run from above: walls (dark) and bumps (brown) as their boxes' outlines, the
/// corridor's centre line dashed grey, the robot's centre-of-mass path coloured from start
/// (green) to end (red).
pub fn maze_plot(path: &Path, title: &str, world: &modbot_core::Scenario, track: &[[f64; 5]]) -> Result<()> {
    register_font();
    let boxes = world.boxes().map_err(|e| anyhow!("{e}"))?;
    let mut xs: Vec<f64> = track.iter().map(|p| p[1]).collect();
    let mut ys: Vec<f64> = track.iter().map(|p| p[2]).collect();
    let corners = |b: &modbot_core::scenario::WorldBox| {
        let (c, s) = (b.yaw.cos(), b.yaw.sin());
        let (hx, hy) = (b.size[0] / 2.0, b.size[1] / 2.0);
        [(-hx, -hy), (hx, -hy), (hx, hy), (-hx, hy), (-hx, -hy)]
            .map(|(x, y)| (b.center[0] + c * x - s * y, b.center[1] + s * x + c * y))
    };
    for b in &boxes {
        for (x, y) in corners(b) {
            xs.push(x);
            ys.push(y);
        }
    }
    let (xmin, xmax) = bounds(&xs);
    let (ymin, ymax) = bounds(&ys);
    let span = (xmax - xmin).max(ymax - ymin) * 0.55 + 0.1;
    let (cx, cy) = ((xmin + xmax) / 2.0, (ymin + ymax) / 2.0);
    let root = BitMapBackend::new(path, (900, 900)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = top_view(&root, title, cx - span..cx + span, cy - span..cy + span)?;
    for b in &boxes {
        let color = match b.kind {
            modbot_core::scenario::ObstacleKind::Bump => RGBColor(160, 110, 60),
            _ => RGBColor(40, 40, 40),
        };
        chart
            .draw_series([Polygon::new(corners(b).to_vec(), color.filled())])
            .map_err(err)?;
    }
    if let Some(m) = &world.maze {
        let line = m.centre_line().map_err(|e| anyhow!("{e}"))?.points;
        chart
            .draw_series(LineSeries::new(
                line.iter().map(|p| (p[0], p[1])),
                RGBColor(170, 170, 170),
            ))
            .map_err(err)?;
    }
    let n = track.len().max(2) as f64;
    chart
        .draw_series(track.windows(2).enumerate().map(|(i, w)| {
            let f = i as f64 / (n - 1.0);
            let color = RGBColor((40.0 + 200.0 * f) as u8, (180.0 - 150.0 * f) as u8, 60);
            PathElement::new(vec![(w[0][1], w[0][2]), (w[1][1], w[1][2])], color.stroke_width(3))
        }))
        .map_err(err)?;
    if let (Some(a), Some(b)) = (track.first(), track.last()) {
        chart
            .draw_series([
                Circle::new((a[1], a[2]), 6, GREEN.filled()),
                Circle::new((b[1], b[2]), 6, RED.filled()),
            ])
            .map_err(err)?;
    }
    root.present().with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// A search's convergence: the best fitness so far and the generation's mean, against the
/// evaluations run.
pub fn convergence_plot(path: &Path, title: &str, history: &[modbot_app::search::GenerationStat]) -> Result<()> {
    register_font();
    let root = BitMapBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let best: Vec<(f64, f64)> = history
        .iter()
        .filter_map(|h| h.best.map(|b| (h.evaluations as f64, b)))
        .collect();
    let mean: Vec<(f64, f64)> = history
        .iter()
        .filter_map(|h| h.mean.map(|m| (h.evaluations as f64, m)))
        .collect();
    let values: Vec<f64> = best.iter().chain(&mean).map(|p| p.1).collect();
    let (lo, hi) = bounds(&values);
    let pad = ((hi - lo) * 0.05).max(1e-3);
    let x_end = history.last().map_or(1.0, |h| h.evaluations as f64).max(1.0);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_end, lo - pad..hi + pad)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("evaluations")
        .y_desc("fitness")
        .draw()
        .map_err(err)?;
    chart
        .draw_series(LineSeries::new(best, BLUE.stroke_width(2)))
        .map_err(err)?
        .label("best so far")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], BLUE));
    chart
        .draw_series(LineSeries::new(mean, RED))
        .map_err(err)?
        .label("generation mean")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], RED));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}
