//! The wheel-foot robots of the strategic-planning thesis (spec seed-000) on the embedded
//! simulator, measured with the thesis's protocol (step of the reference point and yaw
//! change per gait cycle, cycle time) against its tables, through the same path as
//! `modbot run --robot R --gait G --world W`. Every figure is printed next to the source's.
//!
//! Tolerances are the issue's: inchworm steps and cycle times (Tables 3.12/3.13) and t180
//! (Table 3.14) within 25 %, quadruped steps and cycle times (Table 3.27) within 30 %, with
//! the trends the source shows, and the trot's steering states (Tables 3.23/3.24) within 35 %
//! in the source's order. The models' free parameters and how they were fitted are in
//! decision records 0023 and 0057.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::path::PathBuf;

use modbot_app::{ControllerSpec, EvalOptions, Evaluation, calibrate_skid_steer, evaluate, load_world};
use modbot_app::{WheeledPose, load_robot};
use modbot_core::{ModuleCatalog, Scenario};
use modbot_sim::RunPlan;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn world(name: &str) -> Scenario {
    load_world(Some(&root().join(format!("worlds/{name}.yaml")))).unwrap()
}

/// World of terrain friction `mu` (1.0 or 0.2).
fn terrain(mu: f64) -> Scenario {
    world(if mu > 0.5 { "wheelfoot_mu1" } else { "wheelfoot_mu02" })
}

fn run(robot: &str, gait: &str, params: &[(&str, f64)], w: &Scenario, warmup: usize, cycles: usize) -> Evaluation {
    let t = load_robot(robot, &ModuleCatalog::builtin()).unwrap();
    let spec = ControllerSpec::Gait {
        name: gait.into(),
        params: params.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
    };
    let options = EvalOptions {
        plan: RunPlan {
            warmup_cycles: warmup,
            cycles,
            max_time_s: 120.0,
            ..RunPlan::default()
        },
        ..EvalOptions::default()
    };
    evaluate(&t, &spec, w, 0, &options, &mut |_, _| {}).unwrap_or_else(|e| panic!("{robot} {gait}: {e}"))
}

/// The source's step d: the mean over the measured cycles of each cycle's displacement
/// √(Δx² + Δy²) of the reference point (§7), m. For a turning gait it is longer than the
/// net displacement over the window divided by the cycles.
fn cycle_step(report: &modbot_sim::Report) -> f64 {
    let n = report.per_cycle.len() as f64;
    report
        .per_cycle
        .iter()
        .map(modbot_sim::CycleStep::distance_m)
        .sum::<f64>()
        / n
}

/// Relative error of `got` against the source's `want`.
fn rel(got: f64, want: f64) -> f64 {
    (got - want) / want
}

fn show(what: &str, got: f64, want: f64) {
    eprintln!(
        "{what:<44} {got:>9.4}   source {want:>8.4}   {:+6.1} %",
        100.0 * rel(got, want)
    );
}

/// A gait's row: (gait, d m/cycle, t s/cycle).
type Row = (&'static str, f64, f64);

/// Tables 3.12 and 3.13 at μ = 1.0 and 0.2.
const INCHWORM: [(f64, [Row; 4]); 2] = [
    (
        1.0,
        [
            ("inchworm_fwd_high", 0.0635, 0.95),
            ("inchworm_fwd_low", 0.0162, 0.65),
            ("inchworm_bwd_high", 0.0233, 1.05),
            ("inchworm_bwd_low", 0.0123, 0.80),
        ],
    ),
    (
        0.2,
        [
            ("inchworm_fwd_high", 0.0502, 0.95),
            ("inchworm_fwd_low", 0.0106, 0.65),
            ("inchworm_bwd_high", 0.0117, 1.05),
            ("inchworm_bwd_low", 0.0075, 0.80),
        ],
    ),
];

#[test]
fn inchworm_steps_and_cycle_times_of_tables_3_12_and_3_13() {
    let mut d = std::collections::BTreeMap::new();
    for (mu, rows) in INCHWORM {
        let w = terrain(mu);
        for (gait, want_d, want_t) in rows {
            let e = run("wheelfoot", gait, &[], &w, 2, 6);
            let r = &e.report;
            // Forward gaits step along +x, backward ones along −x; straight, heading held.
            let sign = if gait.contains("fwd") { 1.0 } else { -1.0 };
            show(&format!("{gait} μ={mu} step along, m/cycle"), sign * r.step_x_m, want_d);
            show(&format!("{gait} μ={mu} cycle time, s"), r.period_s, want_t);
            assert!(
                rel(sign * r.step_x_m, want_d).abs() < 0.25,
                "{gait} μ={mu}: step {:.4}",
                r.step_x_m
            );
            assert!(
                rel(r.period_s, want_t).abs() < 0.25,
                "{gait} μ={mu}: cycle {:.3}",
                r.period_s
            );
            assert!(
                r.step_y_m.abs() < 0.1 * want_d,
                "{gait} μ={mu}: sideways {:.4}",
                r.step_y_m
            );
            assert!(
                r.heading_change_deg.abs() < 1.0,
                "{gait} μ={mu}: turns {:.2}",
                r.heading_change_deg
            );
            d.insert((gait, (mu * 10.0) as u32), sign * r.step_x_m);
        }
    }
    // The source's trends: high > low; backward smaller than forward; everything smallest
    // at μ = 0.2.
    for mu in [10, 2] {
        assert!(d[&("inchworm_fwd_high", mu)] > d[&("inchworm_fwd_low", mu)]);
        assert!(d[&("inchworm_bwd_high", mu)] > d[&("inchworm_bwd_low", mu)]);
        assert!(d[&("inchworm_bwd_high", mu)] < d[&("inchworm_fwd_high", mu)]);
        assert!(d[&("inchworm_bwd_low", mu)] < d[&("inchworm_fwd_low", mu)]);
    }
    for (_, rows) in INCHWORM {
        for (gait, _, _) in rows {
            assert!(d[&(gait, 2)] < d[&(gait, 10)], "{gait}: μ = 0.2 must step least");
        }
    }
}

#[test]
fn pivot_turns_half_a_turn_in_t180_of_table_3_14() {
    for (mu, want) in [(1.0, 4.20), (0.2, 4.40)] {
        let e = run("wheelfoot", "pivot", &[], &terrain(mu), 1, 2);
        let r = &e.report;
        show(&format!("pivot μ={mu} t180, s"), r.period_s, want);
        assert!(rel(r.period_s, want).abs() < 0.25, "t180 {:.3} at μ = {mu}", r.period_s);
        // About the foot tip: half a turn a cycle, the reference point stays put.
        assert!(
            (r.heading_change_deg.abs() - 180.0).abs() < 2.0,
            "{}",
            r.heading_change_deg
        );
        assert!(r.step_m < 0.01, "the tip moved {:.4} m a turn", r.step_m);
    }
}

#[test]
fn quadruped_trot_and_sidle_of_table_3_27() {
    // (μ, trot d, trot t, sidle d, sidle t)
    let mut at_1 = f64::NAN;
    for (mu, trot_d, trot_t, sidle_d, sidle_t) in [(1.0, 0.106, 1.25, 0.110, 1.80), (0.2, 0.058, 1.20, 0.080, 1.80)] {
        let w = terrain(mu);
        let trot = run("quadruped", "trot", &[], &w, 2, 10).report;
        let sidle = run("quadruped", "sidle", &[], &w, 2, 4).report;
        let d = cycle_step(&trot);
        show(&format!("trot μ={mu} step, m/cycle"), d, trot_d);
        show(&format!("trot μ={mu} cycle time, s"), trot.period_s, trot_t);
        show(&format!("sidle μ={mu} step, m/cycle"), sidle.step_m, sidle_d);
        show(&format!("sidle μ={mu} cycle time, s"), sidle.period_s, sidle_t);
        assert!(trot.step_x_m > 0.8 * trot.step_m, "the trot goes forward: {trot:?}");
        assert!(sidle.step_y_m > 0.8 * sidle.step_m, "the sidle goes left: {sidle:?}");
        assert!(rel(trot.period_s, trot_t).abs() < 0.30, "trot cycle at μ = {mu}");
        assert!(rel(sidle.step_m, sidle_d).abs() < 0.30, "sidle step at μ = {mu}");
        assert!(rel(sidle.period_s, sidle_t).abs() < 0.30, "sidle cycle at μ = {mu}");
        assert!(rel(d, trot_d).abs() < 0.30, "trot step at μ = {mu}");
        if mu > 0.5 {
            at_1 = d;
        } else {
            // The source's trend: the trot loses step on low friction.
            assert!(
                d < 0.9 * at_1,
                "the trot steps less at μ = 0.2: {d:.4} against {at_1:.4}"
            );
        }
    }
}

#[test]
fn trot_steering_states_turn_in_the_order_of_tables_3_23_and_3_24() {
    // (r, l) from the most aggressive to the passive state, and the source's ω at μ = 1.0.
    let states = [
        ((15.0, -15.0), 19.95),
        ((10.0, -10.0), 14.72),
        ((5.0, -5.0), 7.81),
        ((0.0, -5.0), 4.42),
    ];
    let w = terrain(1.0);
    let straight = run("quadruped", "trot", &[], &w, 2, 10).report.heading_change_deg;
    eprintln!("trot (0, 0) turns {straight:+.2} deg/cycle (the timetable's own bias)");
    let mut last = f64::INFINITY;
    for ((r, l), want) in states {
        let rep = run("quadruped", "trot", &[("r", r), ("l", l)], &w, 2, 10).report;
        show(
            &format!("trot (r, l) = ({r}, {l}) ω, deg/cycle"),
            rep.heading_change_deg,
            want,
        );
        assert!(
            rel(rep.heading_change_deg, want).abs() < 0.35,
            "({r}, {l}) turns {:.2} deg/cycle, the source {want}",
            rep.heading_change_deg
        );
        // Reducing the left swing turns left (ω > 0 relative to the straight trot), and the
        // more aggressive the state the faster.
        assert!(rep.heading_change_deg > straight, "({r}, {l}) does not turn left");
        assert!(rep.heading_change_deg < last, "({r}, {l}) breaks the source's order");
        last = rep.heading_change_deg;
    }
}

#[test]
fn pass_over_crosses_the_ground_obstacle_that_the_trot_cannot() {
    let w = world("wheelfoot_ground_obstacle");
    // The obstacle spans x = 0.30 … 0.40; the robot's rear (Role#2's wheel) is ≈ 0.12 m
    // behind the reference point.
    let trot = run("quadruped", "trot", &[], &w, 0, 10);
    let end = trot.samples.last().unwrap().point[0];
    eprintln!("trot: reference point at x = {end:.3} m after 10 cycles");
    assert!(end < 0.30, "the trot got past the obstacle's near face: x = {end:.3}");
    let over = run("quadruped", "pass_over", &[], &w, 0, 2);
    let end = over.samples.last().unwrap().point[0];
    eprintln!("pass-over: reference point at x = {end:.3} m after its 2 cycles");
    assert!(
        end - 0.12 > 0.40,
        "the pass-over did not carry the robot across: x = {end:.3}"
    );
    // Its hips turned monotonically through full turns: the right front hip's angle.
    let k = over.joint_names.iter().position(|n| n == "role3_front_joint").unwrap();
    let hip: Vec<f64> = over.samples.iter().map(|s| s.angles[k]).collect();
    assert!(hip.windows(2).all(|p| p[1] <= p[0] + 0.02), "the hip turned back");
    assert!(
        hip.last().unwrap() - hip[0] < -2.0 * std::f64::consts::TAU + 0.2,
        "two full turns"
    );
}

#[test]
fn the_low_pose_passes_under_the_lath_that_stops_the_normal_pose() {
    let w = world("wheelfoot_lath");
    // The lath (underside 0.13 m) spans x = 0.43 … 0.47; 4 s of driving covers ≈ 0.6 m.
    let normal = run("wheeled", "drive", &[], &w, 0, 4);
    let low = run("wheeled", "low_pose", &[], &w, 0, 4);
    let (a, b) = (
        normal.samples.last().unwrap().point[0],
        low.samples.last().unwrap().point[0],
    );
    eprintln!("wheeled after 4 s: normal pose x = {a:.3} m, low pose x = {b:.3} m");
    assert!(a < 0.43, "the normal pose passed under a 0.13 m lath: x = {a:.3}");
    assert!(b > 0.47 + 0.1, "the low pose did not pass under: x = {b:.3}");
    // On open ground both drive at α·ω·r: straight and near the wheels' rim speed.
    let open = run("wheeled", "drive", &[], &terrain(1.0), 1, 3).report;
    eprintln!(
        "wheeled drive on open ground: {:.4} m/s, heading {:+.2} deg/s",
        open.speed_m_s, open.heading_change_deg
    );
    assert!(
        open.speed_m_s > 0.8 * 0.157 && open.speed_m_s <= 0.158,
        "{}",
        open.speed_m_s
    );
    assert!(open.heading_change_deg.abs() < 1.0);
}

#[test]
fn skid_steer_calibration_gives_a_slip_factor_and_an_icr_outside_the_wheels() {
    let c = calibrate_skid_steer(&ModuleCatalog::builtin(), &terrain(1.0), WheeledPose::Normal, 2.0, 3.0).unwrap();
    eprintln!("{c:?}");
    assert!(c.alpha > 0.5 && c.alpha <= 1.0, "α = {}", c.alpha);
    // Skidding wheels: the ICRs lie outside the contact track.
    assert!(
        c.x_icr_m > c.half_track_m,
        "x_ICR = {} vs half track {}",
        c.x_icr_m,
        c.half_track_m
    );
    assert!(c.spin_angle_rad < 0.0, "all wheels +v turn the vehicle right");
}

/// A configuration's line of `config/capabilities.yaml`: (speed, height, extra speed).
fn capability(name: &str, key: &str) -> f64 {
    let text = std::fs::read_to_string(root().join("config/capabilities.yaml")).unwrap();
    let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    let mut at = &v["configurations"][name];
    for k in key.split('.') {
        at = &at[k];
    }
    at.as_f64().unwrap_or_else(|| panic!("capabilities.yaml: {name}.{key}"))
}

/// Height of a robot standing in `pose` (joint name suffix → deg, per module role filter).
fn height(robot: &str, q_deg: &dyn Fn(&str) -> f64) -> f64 {
    use modbot_core::LinkTree;
    let t = load_robot(robot, &ModuleCatalog::builtin()).unwrap();
    let q: Vec<f64> = t.joint_names().iter().map(|n| q_deg(n).to_radians()).collect();
    let (lo, hi) = LinkTree::new(&t).bounds_at(&t, &q).unwrap();
    hi.z - lo.z
}

#[test]
fn the_planners_capabilities_are_what_the_simulator_measures() {
    // The deliberative planner's speeds for the wheel-foot configurations are the
    // simulator's at μ = 1.0 (within 5 %): the forward high inchworm, the trot, the
    // pass-over, the wheeled drive and the low-pose drive.
    let w = terrain(1.0);
    let single = run("wheelfoot", "inchworm_fwd_high", &[], &w, 2, 4).report.speed_m_s;
    let trot = run("quadruped", "trot", &[], &w, 2, 4).report.speed_m_s;
    let over = run("quadruped", "pass_over", &[], &world("wheelfoot_ground_obstacle"), 0, 2)
        .report
        .speed_m_s;
    let drive = run("wheeled", "drive", &[], &w, 1, 3).report.speed_m_s;
    let low = run("wheeled", "low_pose", &[], &w, 1, 3).report.speed_m_s;
    for (name, key, got) in [
        ("single_module", "speed_m_s", single),
        ("quadruped", "speed_m_s", trot),
        ("quadruped", "pass_over.speed_m_s", over),
        ("wheeled", "speed_m_s", drive),
        ("wheeled", "pass_under.speed_m_s", low),
    ] {
        let want = capability(name, key);
        eprintln!("{name}.{key}: measured {got:.4} m/s, capabilities.yaml {want}");
        assert!(
            rel(want, got).abs() < 0.05,
            "{name}.{key} = {want}, the simulator measures {got:.4}"
        );
    }
    // Heights: the wheeled vehicle's normal and low poses, the quadruped's stance.
    let role = |n: &str| n.get(4..5).and_then(|c| c.parse::<u32>().ok()).unwrap_or(0);
    let pose = |body: (f64, f64), limb: (f64, f64)| {
        move |n: &str| {
            let (a, b) = if role(n) <= 2 { body } else { limb };
            if n.ends_with("back_joint1") {
                a
            } else if n.ends_with("back_joint2") {
                b
            } else {
                0.0
            }
        }
    };
    let wheeled = height("wheeled", &pose((-90.0, 90.0), (-75.0, 90.0)));
    let wheeled_low = height("wheeled", &pose((0.0, 0.0), (30.0, 0.0)));
    let quadruped = height("quadruped", &pose((-90.0, 90.0), (60.0, 30.0)));
    let single = height("wheelfoot", &|_: &str| 0.0);
    for (name, key, got) in [
        ("wheeled", "height_m", wheeled),
        ("wheeled", "pass_under.height_m", wheeled_low),
        ("quadruped", "height_m", quadruped),
        ("single_module", "height_m", single),
    ] {
        let want = capability(name, key);
        eprintln!("{name}.{key}: model {got:.4} m, capabilities.yaml {want}");
        assert!(
            (want - got).abs() < 0.002,
            "{name}.{key} = {want}, the model is {got:.4} m tall"
        );
    }
}

/// The position controllers on the simulator, from the start (0, 0, 0°) to a goal: the lone
/// module (Table 3.15: least-time gait choice, final yaw within 1°), the quadruped (§6.6:
/// trot/sidle decided once per cycle, stop within 0.1 m at a cycle's end; the standing pose
/// then settles it a few centimetres) and the wheeled vehicle (rotate, drive, stop at 0.1 m,
/// align the yaw within 1°).
#[test]
fn position_controllers_reach_their_goals() {
    let w = terrain(1.0);
    for (robot, (x, y, yaw), reach, yaw_tol) in [
        ("wheelfoot", (0.3, 0.1, 90.0), 0.1, Some(1.0)),
        ("quadruped", (0.6, 0.3, 0.0), 0.13, None),
        ("wheeled", (0.8, -0.5, 45.0), 0.1, Some(1.0)),
    ] {
        let e = run(robot, "goto", &[("x", x), ("y", y), ("yaw_deg", yaw)], &w, 0, 1);
        let end = e.samples.last().unwrap();
        let d = (end.point[0] - x).hypot(end.point[1] - y);
        let heading = end.heading.to_degrees();
        eprintln!(
            "{robot} goto ({x}, {y}, {yaw}°): ends at ({:.3}, {:.3}, {heading:.2}°), {d:.3} m off, in {:.1} s",
            end.point[0], end.point[1], end.t
        );
        assert!(d < reach, "{robot}: {d:.3} m from the goal");
        if let Some(tol) = yaw_tol {
            assert!((heading - yaw).abs() < tol, "{robot}: heading {heading:.2}°");
        }
    }
}
