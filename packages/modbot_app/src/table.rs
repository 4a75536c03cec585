//! The gait table: every gait, the CPG, the presets and the wheel-foot robots' controllers
//! with their parameters (key, alias, unit, range, default), as `modbot gaits --json` prints
//! it and the Python package returns it for building search spaces.

use modbot_gaits::modular::{ModularRobot, ParamKind, params_of};
use modbot_gaits::{GaitLibrary, cpg};
use serde_json::{Value, json};

/// The CPG's one-line summary.
pub const CPG_SUMMARY: &str =
    "coupled phase oscillators, one per joint, travelling wave at ν (closed loop, event cycles)";
/// Where the CPG comes from.
pub const CPG_SOURCE: &str = "seed 002 §3";

/// The table: `gaits` (each with `params`), `presets`, and `controllers` (the wheel-foot
/// robots', each with the robot it drives).
pub fn gait_table(lib: &GaitLibrary) -> Value {
    let gaits: Vec<Value> = lib
        .gaits()
        .iter()
        .map(|g| {
            let params: Vec<Value> = g
                .schema()
                .specs()
                .iter()
                .map(|p| {
                    json!({
                        "key": p.key, "alias": p.alias, "unit": p.unit, "min": p.min, "max": p.max,
                        "default": lib.default_of(g.name, p.key), "shape": p.shape, "doc": p.doc,
                    })
                })
                .collect();
            json!({
                "name": g.name, "family": format!("{:?}", g.family), "summary": g.summary,
                "source": g.source, "params": params,
            })
        })
        .chain(std::iter::once({
            let params: Vec<Value> = cpg::schema()
                .specs()
                .iter()
                .map(|p| {
                    json!({
                        "key": p.key, "alias": p.alias, "unit": p.unit, "min": p.min, "max": p.max,
                        "default": lib.cpg_default_of(p.key), "shape": false, "doc": p.doc,
                        "per_module": cpg::PER_MODULE.iter().any(|q| q.key == p.key),
                    })
                })
                .collect();
            json!({
                "name": cpg::CPG, "family": "Chain", "summary": CPG_SUMMARY, "source": CPG_SOURCE,
                "params": params,
            })
        }))
        .collect();
    let presets: Vec<Value> = lib
        .presets
        .iter()
        .map(|(name, p)| {
            json!({"name": name, "gait": p.gait, "robot": p.robot, "description": p.description, "params": p.params})
        })
        .collect();
    let mut controllers = Vec::new();
    for robot in ModularRobot::ALL {
        for gait in robot.gaits() {
            let params: Vec<Value> = params_of(robot, gait)
                .unwrap_or(&[])
                .iter()
                .map(|p| {
                    let (kind, values) = match p.kind {
                        ParamKind::Real => ("real", Value::Null),
                        ParamKind::Positive => ("positive", Value::Null),
                        ParamKind::Integer => ("integer", Value::Null),
                        ParamKind::OneOf(v) => ("one_of", json!(v)),
                    };
                    json!({
                        "key": p.key, "min": p.min, "max": p.max, "default": p.default, "kind": kind,
                        "values": values, "doc": p.doc,
                    })
                })
                .collect();
            controllers.push(json!({"name": gait, "robot": robot.name(), "params": params}));
        }
    }
    json!({"gaits": gaits, "presets": presets, "controllers": controllers})
}
