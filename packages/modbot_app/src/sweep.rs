//! A grid of two gait parameters, each point evaluated: the source's step-vs-(A, Δφ) plots.

use modbot_core::{Scenario, Topology};
use modbot_sim::Report;

use crate::controller::{ControllerSpec, build_controller};
use crate::error::{AppError, Result};
use crate::evaluate::{EvalOptions, evaluate};

/// One axis of a sweep: a parameter key and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Parameter key or alias.
    pub key: String,
    /// Values, in order.
    pub values: Vec<f64>,
}

/// Most values an axis may have.
pub const MAX_AXIS_VALUES: usize = 200;

impl std::str::FromStr for Axis {
    type Err = AppError;

    /// `KEY=START:STOP:STEP`, e.g. `A=10:60:10`.
    fn from_str(s: &str) -> Result<Axis> {
        let bad = || AppError::BadInput(format!("`{s}`: expected KEY=START:STOP:STEP, e.g. A=10:60:10"));
        let (k, range) = s.split_once('=').ok_or_else(bad)?;
        let parts: Vec<f64> = range
            .split(':')
            .map(|p| p.trim().parse::<f64>())
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| bad())?;
        let [start, stop, step] = parts[..] else {
            return Err(bad());
        };
        if !(step > 0.0 && stop >= start && start.is_finite() && stop.is_finite() && step.is_finite()) {
            return Err(bad());
        }
        let n = ((stop - start) / step + 1e-9).floor() as usize + 1;
        if n > MAX_AXIS_VALUES {
            return Err(AppError::BadInput(format!(
                "`{s}`: {n} values; at most {MAX_AXIS_VALUES} per axis"
            )));
        }
        if k.trim().is_empty() {
            return Err(bad());
        }
        Ok(Axis {
            key: k.trim().to_string(),
            values: (0..n).map(|i| start + i as f64 * step).collect(),
        })
    }
}

/// One point of a sweep: its coordinates and its report, or why it could not run.
#[derive(Debug, Clone)]
pub struct SweepPoint {
    /// Value on the x axis.
    pub x: f64,
    /// Value on the y axis.
    pub y: f64,
    /// The report, or the error's message (a point outside the gait's limits is a result
    /// of the sweep, not a failure of it).
    pub result: std::result::Result<Report, String>,
}

/// What a sweep evaluates: a gait with fixed parameters over a grid of two others.
#[derive(Debug, Clone, Copy)]
pub struct SweepGrid<'a> {
    /// The gait or preset.
    pub gait: &'a str,
    /// Parameters held at these values.
    pub fixed: &'a [(String, f64)],
    /// The inner axis.
    pub x: &'a Axis,
    /// The outer axis.
    pub y: &'a Axis,
}

/// Evaluates `grid`'s gait with its fixed parameters at every (x, y) of the grid, y outer.
/// `on_point` is called after each point with (points done, total).
///
/// Refused before any physics runs (issue 18: these used to give an all-NaN table and
/// exit 0): both axes on one key, a swept key also fixed, or a grid where the gait cannot be
/// built at any point (an unknown parameter, a gait the robot has not): the first point's
/// reason is given. Points where the gait cannot be built while others can are results (the
/// gait's limits), in their rows.
pub fn sweep(
    robot: &Topology,
    grid: SweepGrid<'_>,
    world: &Scenario,
    options: &EvalOptions,
    on_point: &mut dyn FnMut(usize, usize),
) -> Result<Vec<SweepPoint>> {
    let SweepGrid { gait, fixed, x, y } = grid;
    if x.key == y.key {
        return Err(AppError::BadInput(format!(
            "--x and --y both sweep `{}`: give two different parameters",
            x.key
        )));
    }
    if let Some((k, _)) = fixed.iter().find(|(k, _)| *k == x.key || *k == y.key) {
        return Err(AppError::BadInput(format!("`{k}` is swept and also fixed by --set")));
    }
    let spec_at = |xv: f64, yv: f64| {
        let mut params = fixed.to_vec();
        params.push((x.key.clone(), xv));
        params.push((y.key.clone(), yv));
        ControllerSpec::Gait {
            name: gait.to_string(),
            params,
        }
    };
    let start = vec![0.0; robot.joints().len()];
    let mut first_error = None;
    let buildable = y.values.iter().any(|&yv| {
        x.values.iter().any(
            |&xv| match build_controller(&spec_at(xv, yv), robot, &options.library, &start) {
                Ok(_) => true,
                Err(e) => {
                    first_error.get_or_insert(e);
                    false
                }
            },
        )
    });
    if !buildable && let Some(e) = first_error {
        return Err(AppError::BadInput(format!("no point of the sweep can run: {e}")));
    }
    let total = x.values.len() * y.values.len();
    let mut out = Vec::with_capacity(total);
    for &yv in &y.values {
        for &xv in &x.values {
            let result = evaluate(robot, &spec_at(xv, yv), world, 0, options, &mut |_, _| {})
                .map(|e| e.report)
                .map_err(|e| e.to_string());
            out.push(SweepPoint { x: xv, y: yv, result });
            on_point(out.len(), total);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_parse_and_refuse_by_name() {
        let a: Axis = "A=10:60:10".parse().unwrap_or_else(|e: AppError| panic!("{e}"));
        assert_eq!(a.values, [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]);
        for bad in ["A", "A=1:2", "A=2:1:1", "A=0:1:0", "=0:1:1", "A=0:100000:1", "A=x:1:1"] {
            let e = bad.parse::<Axis>().err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(bad), "{bad}: {e}");
        }
    }
}
