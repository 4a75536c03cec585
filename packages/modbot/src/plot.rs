//! PNG plots of runs and sweeps (plotters, with the DejaVu Sans font compiled in).

use std::ops::Range;
use std::path::Path;
use std::sync::Once;

use anyhow::{Context, Result, anyhow};
use modbot_core::scenario::{ObstacleKind, WorldBox};
use modbot_sim::Sample;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

static FONT: Once = Once::new();

/// Walls in top views of the world.
const WALL: RGBColor = RGBColor(40, 40, 40);
/// Other obstacles (bumps, ground obstacles, laths) in top views of the world.
const BROWN: RGBColor = RGBColor(160, 110, 60);
/// Heat-map cells without a result.
const NO_RESULT: RGBColor = RGBColor(200, 200, 200);
/// The strategic plot's terrain cells: legend label and colour.
const TERRAIN: [(&str, RGBColor); 3] = [
    ("wall", RGBColor(30, 30, 30)),
    ("ground obstacle", RGBColor(160, 110, 60)),
    ("lath (pass under)", RGBColor(90, 140, 230)),
];

fn register_font() {
    FONT.call_once(|| {
        // DejaVu Sans ships inside the `dejavu` crate, so plots need no system fonts.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
    });
}

fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("plotting: {e:?}")
}

/// A box's outline from above (closed, five corners) and its colour.
type BoxShape = ([(f64, f64); 5], RGBColor);

/// The world's boxes as their outlines from above, coloured by kind, in metres.
fn world_shapes(world: &modbot_core::Scenario) -> Result<Vec<BoxShape>> {
    Ok(world
        .boxes()
        .map_err(|e| anyhow!("{e}"))?
        .iter()
        .map(|b| box_shape(b, 1.0))
        .collect())
}

/// A square view holding the points (`xs`, `ys`) with 10 % to spare and `pad` more on
/// each side: its x and y ranges.
fn square_window(xs: &[f64], ys: &[f64], pad: f64) -> (Range<f64>, Range<f64>) {
    let (xmin, xmax) = bounds(xs);
    let (ymin, ymax) = bounds(ys);
    let span = (xmax - xmin).max(ymax - ymin) * 0.55 + pad;
    let (cx, cy) = ((xmin + xmax) / 2.0, (ymin + ymax) / 2.0);
    (cx - span..cx + span, cy - span..cy + span)
}

/// A world box from above: its closed outline in metres times `scale`, and its colour
/// (walls dark, other obstacles brown).
fn box_shape(b: &WorldBox, scale: f64) -> BoxShape {
    let (c, s) = (b.yaw.cos(), b.yaw.sin());
    let (hx, hy) = (b.size[0] / 2.0, b.size[1] / 2.0);
    let outline = [(-hx, -hy), (hx, -hy), (hx, hy), (-hx, hy), (-hx, -hy)].map(|(x, y)| {
        (
            scale * (b.center[0] + c * x - s * y),
            scale * (b.center[1] + s * x + c * y),
        )
    });
    (outline, if b.kind == ObstacleKind::Wall { WALL } else { BROWN })
}

/// CoM path (top view, over the world's obstacles near it) and joint angles against time.
pub fn run_plot(
    path: &Path,
    title: &str,
    world: &modbot_core::Scenario,
    samples: &[Sample],
    joint_names: &[String],
) -> Result<()> {
    /// Obstacles this close to the path's bounding box (cm) are drawn.
    const NEAR: f64 = 50.0;
    register_font();
    let root = BitMapBackend::new(path, (1200, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (left, right) = root.split_horizontally(560);
    let xs: Vec<f64> = samples.iter().map(|s| s.com[0] * 100.0).collect();
    let ys: Vec<f64> = samples.iter().map(|s| s.com[1] * 100.0).collect();
    let (xmin, xmax) = bounds(&xs);
    let (ymin, ymax) = bounds(&ys);
    let (cx, cy) = ((xmin + xmax) / 2.0, (ymin + ymax) / 2.0);
    // Centred on the path, grown to hold the parts of near obstacles within NEAR of it.
    let (mut hx, mut hy) = ((xmax - xmin) / 2.0, (ymax - ymin) / 2.0);
    let mut near = Vec::new();
    for b in world.boxes().map_err(|e| anyhow!("{e}"))? {
        let (outline, color) = box_shape(&b, 100.0);
        let (bx0, bx1) = bounds(&outline.map(|p| p.0));
        let (by0, by1) = bounds(&outline.map(|p| p.1));
        if bx1 < xmin - NEAR || bx0 > xmax + NEAR || by1 < ymin - NEAR || by0 > ymax + NEAR {
            continue;
        }
        hx = hx.max(cx - bx0.max(xmin - NEAR)).max(bx1.min(xmax + NEAR) - cx);
        hy = hy.max(cy - by0.max(ymin - NEAR)).max(by1.min(ymax + NEAR) - cy);
        near.push((outline, color));
    }
    let span = hx.max(hy).max(0.5) * 1.1;
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
    for (name, color) in [("wall", WALL), ("obstacle", BROWN)] {
        let shapes: Vec<_> = near
            .iter()
            .filter(|(_, c)| *c == color)
            .map(|(o, _)| Polygon::new(o.to_vec(), color.filled()))
            .collect();
        if !shapes.is_empty() {
            chart
                .draw_series(shapes)
                .map_err(err)?
                .label(name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.filled()));
        }
    }
    chart
        .draw_series(LineSeries::new(xs.iter().copied().zip(ys.iter().copied()), &BLUE))
        .map_err(err)?
        .label("CoM path")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], BLUE));
    if let (Some(&x0), Some(&y0)) = (xs.first(), ys.first()) {
        chart
            .draw_series([Circle::new((x0, y0), 4, GREEN.filled())])
            .map_err(err)?
            .label("start")
            .legend(|(x, y)| Circle::new((x + 7, y), 4, GREEN.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
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

/// A heat map of `values[iy][ix]` over the grid: one cell per point, each labelled on the
/// axes with its parameter values, NaN cells grey; a colour bar of `value_label` beside it.
pub fn heatmap(
    path: &Path,
    title: &str,
    xs: &[f64],
    ys: &[f64],
    values: &[Vec<f64>],
    labels: (&str, &str),
    value_label: &str,
) -> Result<()> {
    register_font();
    let root = BitMapBackend::new(path, (1000, 700)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let finite: Vec<f64> = values.iter().flatten().copied().filter(|v| v.is_finite()).collect();
    let (vmin, vmax) = bounds(&finite);
    let area = root
        .titled(&format!("{title} (min {vmin:.2}, max {vmax:.2})"), ("sans-serif", 20))
        .map_err(err)?;
    let (cells, bar) = area.split_horizontally(860);
    let (nx, ny) = (xs.len(), ys.len());
    let x_label = |v: &SegmentValue<i32>| cell_label(xs, v);
    let y_label = |v: &SegmentValue<i32>| cell_label(ys, v);
    let mut chart = ChartBuilder::on(&cells)
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(cell_axis(nx).into_segmented(), cell_axis(ny).into_segmented())
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(nx.min(20))
        .y_labels(ny.min(20))
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .x_desc(labels.0)
        .y_desc(labels.1)
        .draw()
        .map_err(err)?;
    let scale = (vmax - vmin).abs().max(1e-12);
    let color = |v: f64| {
        if v.is_finite() {
            heat_color((v - vmin) / scale)
        } else {
            NO_RESULT
        }
    };
    let mut rects = Vec::new();
    for (iy, row) in values.iter().enumerate() {
        for (ix, &v) in row.iter().enumerate() {
            let ((x0, x1), (y0, y1)) = (cell_span(ix, nx), cell_span(iy, ny));
            rects.push(Rectangle::new([(x0, y0), (x1, y1)], color(v).filled()));
        }
    }
    chart.draw_series(rects).map_err(err)?;

    // The colour bar: the same plot area height, its value axis on the left.
    let (b0, b1) = if vmax > vmin {
        (vmin, vmax)
    } else {
        (vmin - 1.0, vmax + 1.0)
    };
    let mut chart = ChartBuilder::on(&bar)
        .margin(15)
        .margin_left(5)
        .x_label_area_size(40)
        .y_label_area_size(75)
        .build_cartesian_2d(0.0..1.0, b0..b1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(8)
        .y_label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .y_desc(value_label)
        .draw()
        .map_err(err)?;
    let steps: u32 = 100;
    chart
        .draw_series((0..steps).map(|i| {
            let at = |f: f64| b0 + (b1 - b0) * f / f64::from(steps);
            let (v0, v1) = (at(f64::from(i)), at(f64::from(i + 1)));
            Rectangle::new([(0.0, v0), (1.0, v1)], color((v0 + v1) / 2.0).filled())
        }))
        .map_err(err)?;
    if finite.len() < values.iter().map(Vec::len).sum::<usize>() {
        let (_, h) = bar.dim_in_pixel();
        let y = i32::try_from(h).unwrap_or(i32::MAX) - 40;
        bar.draw(&Rectangle::new([(8, y), (20, y + 12)], NO_RESULT.filled()))
            .map_err(err)?;
        bar.draw(&Text::new("no result", (26, y - 1), ("sans-serif", 14)))
            .map_err(err)?;
    }
    root.present().with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// The heat map's colour of `u` in 0 … 1 (clamped): blue through green to red.
fn heat_color(u: f64) -> RGBColor {
    let u = u.clamp(0.0, 1.0);
    RGBColor(
        (255.0 * u) as u8,
        (80.0 + 100.0 * (1.0 - (2.0 * u - 1.0).abs())) as u8,
        (255.0 * (1.0 - u)) as u8,
    )
}

/// The discrete axis of `n` heat-map cells, cell `i` at `i` (segmented, so each cell is a
/// segment with its tick and label in the middle). A single cell sits between two blank
/// ones, as plotters cannot map a one-value axis.
fn cell_axis(n: usize) -> Range<i32> {
    if n > 1 { 0..n as i32 - 1 } else { -1..1 }
}

/// The ends of cell `i` of `n` on its [`cell_axis`].
fn cell_span(i: usize, n: usize) -> (SegmentValue<i32>, SegmentValue<i32>) {
    let end = if i + 1 == n && n > 1 {
        SegmentValue::Last
    } else {
        SegmentValue::Exact(i as i32 + 1)
    };
    (SegmentValue::Exact(i as i32), end)
}

/// The parameter value at a heat-map axis position (blank off the cells).
fn cell_label(values: &[f64], v: &SegmentValue<i32>) -> String {
    match v {
        SegmentValue::Exact(i) | SegmentValue::CenterOf(i) => usize::try_from(*i)
            .ok()
            .and_then(|i| values.get(i))
            .map_or_else(String::new, |x| compact(*x)),
        SegmentValue::Last => String::new(),
    }
}

/// `x` with at most four decimals and no trailing zeros (0.30000000000000004 → 0.3).
fn compact(x: f64) -> String {
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".to_string() } else { s.to_string() }
}

fn bounds(v: &[f64]) -> (f64, f64) {
    let (lo, hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(*x), b.max(*x)));
    if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) }
}

/// `x` × `y` with the shorter extent grown about its centre to the aspect ratio `aspect`
/// (width / height), so both axes keep one scale.
fn fit_aspect(x: Range<f64>, y: Range<f64>, aspect: f64) -> (Range<f64>, Range<f64>) {
    let (w, h) = (x.end - x.start, y.end - y.start);
    if w > h * aspect {
        let grow = (w / aspect - h) / 2.0;
        (x, y.start - grow..y.end + grow)
    } else {
        let grow = (h * aspect - w) / 2.0;
        (x.start - grow..x.end + grow, y)
    }
}

/// A [`top_view`]'s margin and label areas (y labels across, x labels down), px.
const TOP_VIEW_MARGIN: u32 = 10;
const TOP_VIEW_LABELS: (u32, u32) = (45, 35);

/// A top view in metres over (at least) `x` × `y` at one scale on both axes, with labelled
/// axes and no grid.
fn top_view<'a, 'b: 'a>(
    root: &'a DrawingArea<BitMapBackend<'b>, Shift>,
    title: &str,
    x: Range<f64>,
    y: Range<f64>,
) -> Result<ChartContext<'a, BitMapBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>> {
    let m = TOP_VIEW_MARGIN;
    let area = root.margin(m, m, m, m).titled(title, ("sans-serif", 20)).map_err(err)?;
    let (w, h) = area.dim_in_pixel();
    let plot_w = f64::from(w.saturating_sub(TOP_VIEW_LABELS.0).max(1));
    let plot_h = f64::from(h.saturating_sub(TOP_VIEW_LABELS.1).max(1));
    let (x, y) = fit_aspect(x, y, plot_w / plot_h);
    let mut chart = ChartBuilder::on(&area)
        .x_label_area_size(TOP_VIEW_LABELS.1)
        .y_label_area_size(TOP_VIEW_LABELS.0)
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

/// A strategic plan over its terrain at one scale on both axes (the image as tall as the map
/// needs, within limits): walls black, ground obstacles brown, laths blue, the path coloured
/// by configuration, sub-goals as circles (filled where an ability runs); a legend beside it.
pub fn strategic_plot(
    path: &Path,
    title: &str,
    map: &modbot_planner::deliberative::TerrainMap,
    rows: &[modbot_planner::strategic::SubGoal],
) -> Result<()> {
    const WIDTH: u32 = 1100;
    const LEGEND: u32 = 250;
    register_font();
    let r = map.resolution;
    // The view fits what is there (terrain features and the path), not the search grid's
    // margins: a 0.7 m corridor is drawn as a strip, not inside a 7 m square.
    let mut xs: Vec<f64> = Vec::new();
    let mut ys: Vec<f64> = Vec::new();
    for (k, t) in map.cells.iter().enumerate() {
        if t.wall || t.step_m > 0.0 || t.clearance_m.is_finite() {
            let p = map.point(k);
            xs.push(p[0]);
            ys.push(p[1]);
        }
    }
    for p in rows.iter().flat_map(|row| row.path.iter()) {
        xs.push(p[0]);
        ys.push(p[1]);
    }
    let pad = 2.0 * r + 0.1;
    let ((x0, x1), (y0, y1)) = if xs.is_empty() {
        let (x0, y0) = (map.origin[0] - r / 2.0, map.origin[1] - r / 2.0);
        ((x0, x0 + map.nx as f64 * r), (y0, y0 + map.ny as f64 * r))
    } else {
        let ((a, b), (c, d)) = (bounds(&xs), bounds(&ys));
        ((a - pad, b + pad), (c - pad, d + pad))
    };
    // Tall enough for the map at the scale the width gives (the caption takes some 35 px).
    let (frame_w, frame_h) = (
        2 * TOP_VIEW_MARGIN + TOP_VIEW_LABELS.0,
        2 * TOP_VIEW_MARGIN + TOP_VIEW_LABELS.1,
    );
    let plot_w = f64::from(WIDTH - LEGEND - frame_w);
    let height = (plot_w * (y1 - y0) / (x1 - x0) + f64::from(frame_h) + 35.0).clamp(260.0, 900.0);
    let root = BitMapBackend::new(path, (WIDTH, height as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (left, right) = root.split_horizontally(WIDTH - LEGEND);
    let mut chart = top_view(&left, title, x0..x1, y0..y1)?;
    let cells = map.cells.iter().enumerate().filter_map(|(k, t)| {
        let kind = if t.wall {
            0
        } else if t.step_m > 0.0 {
            1
        } else if t.clearance_m.is_finite() {
            2
        } else {
            return None;
        };
        let p = map.point(k);
        Some(Rectangle::new(
            [(p[0] - r / 2.0, p[1] - r / 2.0), (p[0] + r / 2.0, p[1] + r / 2.0)],
            TERRAIN[kind].1.filled(),
        ))
    });
    chart.draw_series(cells).map_err(err)?;
    let mut names: Vec<&str> = Vec::new();
    for row in rows {
        if !names.contains(&row.configuration.as_str()) {
            names.push(&row.configuration);
        }
    }
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

    // The legend: an empty series per entry on a blank chart beside the map.
    let mut legend = ChartBuilder::on(&right)
        .margin(10)
        .margin_top(45)
        .build_cartesian_2d(0.0..1.0, 0.0..1.0)
        .map_err(err)?;
    let none = std::iter::empty::<Circle<(f64, f64), i32>>;
    for (k, name) in names.iter().enumerate() {
        let color = Palette99::pick(k + 1).to_rgba();
        legend
            .draw_series(none())
            .map_err(err)?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3)));
    }
    for (name, color) in TERRAIN {
        legend
            .draw_series(none())
            .map_err(err)?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 18, y + 6)], color.filled()));
    }
    legend
        .draw_series(none())
        .map_err(err)?
        .label("sub-goal")
        .legend(|(x, y)| Circle::new((x + 9, y), 5, BLACK.stroke_width(2)));
    legend
        .draw_series(none())
        .map_err(err)?
        .label("sub-goal, ability runs")
        .legend(|(x, y)| Circle::new((x + 9, y), 6, BLACK.filled()));
    legend
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 14))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// A maze run from above: walls (dark) and bumps (brown) as their boxes' outlines, the
/// corridor's centre line dashed grey, the robot's centre-of-mass path coloured from start
/// (green) to end (red).
pub fn maze_plot(path: &Path, title: &str, world: &modbot_core::Scenario, track: &[[f64; 5]]) -> Result<()> {
    register_font();
    let shapes = world_shapes(world)?;
    let mut xs: Vec<f64> = track.iter().map(|p| p[1]).collect();
    let mut ys: Vec<f64> = track.iter().map(|p| p[2]).collect();
    for (x, y) in shapes.iter().flat_map(|(o, _)| o) {
        xs.push(*x);
        ys.push(*y);
    }
    let (wx, wy) = square_window(&xs, &ys, 0.1);
    let root = BitMapBackend::new(path, (900, 900)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = top_view(&root, title, wx, wy)?;
    chart
        .draw_series(shapes.iter().map(|(o, c)| Polygon::new(o.to_vec(), c.filled())))
        .map_err(err)?;
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

/// A strategic mission from above (its storyboard): the world's boxes (the ground
/// obstacle, the lath), the target, every module's path in its own colour from its start
/// (circle) to its end (cross), and Role#1's position as each phase ended, numbered in
/// phase order (the legend lists them).
pub fn mission_plot(
    path: &Path,
    title: &str,
    world: &modbot_core::Scenario,
    tracks: &[Vec<[f64; 4]>],
    marks: &[(String, [f64; 2])],
    target: [f64; 2],
) -> Result<()> {
    register_font();
    let shapes = world_shapes(world)?;
    let mut xs: Vec<f64> = tracks.iter().flatten().map(|p| p[1]).collect();
    let mut ys: Vec<f64> = tracks.iter().flatten().map(|p| p[2]).collect();
    xs.push(target[0]);
    ys.push(target[1]);
    let (wx, wy) = square_window(&xs, &ys, 0.2);
    let span = (wx.end - wx.start) / 2.0;
    let root = BitMapBackend::new(path, (1000, 1000)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = top_view(&root, title, wx, wy)?;
    chart
        .draw_series(shapes.iter().map(|(o, c)| Polygon::new(o.to_vec(), c.filled())))
        .map_err(err)?;
    const COLOURS: [RGBColor; 6] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
    ];
    for (i, t) in tracks.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        chart
            .draw_series(LineSeries::new(t.iter().map(|p| (p[1], p[2])), c.stroke_width(2)))
            .map_err(err)?
            .label(format!("Module#{}", i + 1))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
        if let (Some(a), Some(b)) = (t.first(), t.last()) {
            chart
                .draw_series([Circle::new((a[1], a[2]), 5, c.filled())])
                .map_err(err)?;
            chart
                .draw_series([Cross::new((b[1], b[2]), 6, c.stroke_width(2))])
                .map_err(err)?;
        }
    }
    chart
        .draw_series([Circle::new(
            (target[0], target[1]),
            9,
            RGBColor(230, 30, 30).stroke_width(3),
        )])
        .map_err(err)?
        .label("target")
        .legend(|(x, y)| Circle::new((x + 10, y), 5, RGBColor(230, 30, 30).stroke_width(2)));
    for (k, (name, p)) in marks.iter().enumerate() {
        chart
            .draw_series([Circle::new((p[0], p[1]), 4, BLACK.filled())])
            .map_err(err)?;
        chart
            .draw_series([Text::new(
                format!("{}", k + 1),
                (p[0] + span * 0.01, p[1] + span * 0.01),
                ("sans-serif", 16).into_font(),
            )])
            .map_err(err)?
            .label(format!("{}: {name}", k + 1))
            .legend(|(x, y)| Circle::new((x + 10, y), 3, BLACK.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13).into_font())
        .draw()
        .map_err(err)?;
    root.present().with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
