//! `modbot gaits`: list gaits, parameters and presets.

use std::fmt::Write as _;

use anyhow::Result;
use modbot_gaits::modular::{ModularRobot, ParamKind, params_of};

use crate::common::{ConfigArgs, emit};
use modbot_app::table::{CPG_SOURCE, CPG_SUMMARY};
use modbot_gaits::cpg;

fn fmt_num(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e9 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

pub fn run(config: &ConfigArgs, as_json: bool) -> Result<()> {
    let lib = config.library()?;
    let mut text = String::new();
    if as_json {
        let mut text = serde_json::to_string_pretty(&modbot_app::gait_table(&lib))?;
        text.push('\n');
        return emit(&text);
    }
    writeln!(
        text,
        "Gaits (parameters: key, alias, unit, range, default; * = shape parameter, an alternative to the control ones)"
    )?;
    for g in lib.gaits() {
        let robots = match g.family {
            modbot_gaits::Family::PitchPitch => "pp:M",
            modbot_gaits::Family::PitchYaw => "py:M",
            modbot_gaits::Family::PitchYawPitch => "pyp",
        };
        writeln!(text, "\n{}  [{robots}]  {} ({})", g.name, g.summary, g.source)?;
        for p in g.schema().specs() {
            let default = lib.default_of(g.name, p.key).map(fmt_num).unwrap_or_else(|| "-".into());
            let range = format!("[{}, {}]", fmt_num(p.min), fmt_num(p.max));
            writeln!(
                text,
                "  {}{:<24} {:<14} {:<4} {:<12} default {:<6} {}",
                if p.shape { "*" } else { " " },
                p.key,
                p.alias,
                p.unit,
                range,
                default,
                p.doc
            )?;
        }
    }
    writeln!(
        text,
        "\n{}  [any chain of servos]  {CPG_SUMMARY} ({CPG_SOURCE})",
        cpg::CPG
    )?;
    for p in cpg::schema().specs() {
        let default = lib.cpg_default_of(p.key).map(fmt_num).unwrap_or_else(|| "φ".into());
        let range = format!("[{}, {}]", fmt_num(p.min), fmt_num(p.max));
        let per = if cpg::PER_MODULE.iter().any(|q| q.key == p.key) {
            " (also per joint: key.i)"
        } else {
            ""
        };
        writeln!(
            text,
            "   {:<24} {:<14} {:<4} {:<12} default {:<6} {}{per}",
            p.key, p.alias, p.unit, range, default, p.doc
        )?;
    }
    writeln!(text, "\nPresets (use the name in place of a gait):")?;
    for (name, p) in &lib.presets {
        writeln!(
            text,
            "  {:<32} {:<22} {:<6} {}",
            name,
            p.gait,
            p.robot.as_deref().unwrap_or("-"),
            p.description
        )?;
    }
    writeln!(
        text,
        "\nWheel-foot robots' controllers (event driven; --robot wheelfoot, quadruped, wheeled; key, range, default):"
    )?;
    for robot in ModularRobot::ALL {
        for gait in robot.gaits() {
            writeln!(text, "\n{gait}  [{}]", robot.name())?;
            for p in params_of(robot, gait).unwrap_or(&[]) {
                let default = p.default.map(fmt_num).unwrap_or_else(|| "required".into());
                let range = match p.kind {
                    ParamKind::OneOf(values) => values.iter().map(|v| fmt_num(*v)).collect::<Vec<_>>().join(" or "),
                    ParamKind::Positive => format!("(0, {}]", fmt_num(p.max)),
                    _ => format!("[{}, {}]", fmt_num(p.min), fmt_num(p.max)),
                };
                writeln!(text, "   {:<24} {:<14} default {:<8} {}", p.key, range, default, p.doc)?;
            }
        }
    }
    emit(&text)
}
