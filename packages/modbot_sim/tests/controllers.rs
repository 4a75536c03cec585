//! Closed-loop controllers on the simulator: a pose sequence advances when its joints get
//! there, and its measured cycle time is the servo's closed-form travel time.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use modbot_core::{ModuleCatalog, Scenario, Topology};
use modbot_gaits::{Controller, PoseSequence};
use modbot_sim::{RunPlan, SimError, SimRobot, SimSettings, Simulator, run_controller};

fn flat() -> Scenario {
    Scenario::from_yaml("name: flat\n", "flat").unwrap()
}

/// Two poses, joint_1 at ±A with the servo's tolerance (5°), the other joints held.
fn swing(t: &Topology, a_deg: f64) -> PoseSequence {
    let text = format!(
        "name: swing\nposes:\n  - {{name: up, targets: {{joint_1: {{position_deg: {a_deg}}}}}}}\n  - {{name: down, targets: {{joint_1: {{position_deg: {}}}}}}}\n",
        -a_deg
    );
    PoseSequence::from_yaml(&text, "swing.yaml", t).unwrap()
}

/// Closed form of the source's servo (w = kp·e clipped to W_max): from an error e0 it runs
/// at W_max down to e_s = W_max/kp, then decays as e_s·exp(−kp t) down to the tolerance.
/// A pose is entered with the joint `tol` short of the previous target, so e0 = 2A − tol.
fn servo_time(a: f64, tol: f64, kp: f64, w_max: f64) -> f64 {
    let e0 = 2.0 * a - tol;
    let es = w_max / kp;
    (e0 - es) / w_max + (es / tol).ln() / kp
}

/// pp:2 on flat ground and the ±40° swing of its first joint.
fn pp2_swing() -> (Simulator, PoseSequence) {
    let t = Topology::from_spec(&"pp:2".parse().unwrap(), &ModuleCatalog::builtin()).unwrap();
    let robot = SimRobot::from_topology(&t).unwrap();
    let sim = Simulator::new(&robot, &flat(), SimSettings::for_scenario(&flat())).unwrap();
    (sim, swing(&t, 40.0))
}

#[test]
fn a_pose_sequence_cycle_takes_the_servo_travel_time() {
    let (mut sim, mut seq) = pp2_swing();
    let plan = RunPlan {
        warmup_cycles: 1,
        cycles: 4,
        control_rate_hz: 100.0,
        ..RunPlan::default()
    };
    let out = run_controller(&mut sim, &mut seq, plan, 0.144, &mut |_, _| {}).unwrap();
    assert_eq!(seq.completed_cycles(), 5);
    let (kp, w_max) = (8.6, 260f64.to_radians());
    // Two poses a cycle; a pose ends at the first control tick (10 ms) after the joint is
    // within tolerance, half a tick late on average.
    let want = 2.0 * (servo_time(40f64.to_radians(), 5f64.to_radians(), kp, w_max) + 0.005);
    let got = out.report.period_s;
    eprintln!("pose-sequence cycle: measured {got:.4} s, closed form {want:.4} s");
    assert!(
        (got - want).abs() / want < 0.05,
        "cycle {got:.4} s, closed form {want:.4} s"
    );
    for c in &out.report.per_cycle {
        assert!((c.duration_s - got).abs() < 0.021, "{c:?}");
    }
    // The joint really swung: it passed within tolerance of both targets.
    let angles: Vec<f64> = out.samples.iter().map(|s| s.angles[0].to_degrees()).collect();
    let (lo, hi) = angles
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(*x), b.max(*x)));
    assert!(lo < -35.0 && hi > 35.0, "{lo} {hi}");
}

#[test]
fn a_sequence_that_cannot_finish_in_time_is_reported_not_waited_for() {
    let (mut sim, mut seq) = pp2_swing();
    let plan = RunPlan {
        warmup_cycles: 0,
        cycles: 3,
        control_rate_hz: 100.0,
        max_time_s: 1.0,
    };
    let e = run_controller(&mut sim, &mut seq, plan, 0.144, &mut |_, _| {}).unwrap_err();
    assert!(matches!(e, SimError::Stalled { done: 1, wanted: 3, .. }), "{e}");
    assert!(e.to_string().contains("swing"), "{e}");
}

/// A Y1 module with a wheel on its head: the wheel's continuous joint is velocity-driven.
fn wheeled() -> Topology {
    let catalog = ModuleCatalog::from_yaml(
        &format!(
            "{}\n  wheel:\n    links:\n      - {{name: hub, mass_kg: 0.05, shapes: [{{box: [0.04, 0.04, 0.04], xyz: [0.02, 0, 0]}}]}}\n      - {{name: tyre, mass_kg: 0.02, shapes: [{{cylinder: {{radius: 0.03, length: 0.01}}, rpy_deg: [90, 0, 0]}}]}}\n    joints:\n      - {{name: spin, type: continuous, parent: hub, child: tyre, xyz: [0.02, 0.03, 0], axis: [0, 1, 0], actuator: {{velocity: {{max_torque_nm: 0.5, max_speed_deg_s: 360}}}}}}\n    ports:\n      back: {{link: hub, xyz: [0, 0, 0], rpy_deg: [0, 0, 180]}}\n    contact: {{friction: 0.9}}\n",
            modbot_core::catalog::BUILTIN_MODULES_YAML
        ),
        "wheel.yaml",
    )
    .unwrap();
    let text = "name: cart\nmodules:\n  - {name: body, kind: y1}\n  - {name: w, kind: wheel}\nconnections:\n  - {from: body.head, to: w.back}\n";
    Topology::from_yaml(text, "cart.yaml", &catalog).unwrap()
}

/// A pose sequence drives a wheel by speed: 180°/s for 0.5 s, then at rest for 0.5 s. A
/// cycle takes 1 s (plus at most a control tick per pose) and the wheel turns 90° per cycle
/// (180°/s × 0.5 s; its torque brings it to speed in a few ms), while the hinge holds.
#[test]
fn a_pose_sequence_drives_a_wheel_by_speed() {
    let t = wheeled();
    let robot = SimRobot::from_topology(&t).unwrap();
    let mut sim = Simulator::new(&robot, &flat(), SimSettings::for_scenario(&flat())).unwrap();
    let text = "name: spin\nposes:\n  - {name: go, hold_s: 0.5, targets: {w_spin: {velocity_deg_s: 180}}}\n  - {name: rest, hold_s: 0.5, targets: {w_spin: {velocity_deg_s: 0}}}\n";
    let mut seq = PoseSequence::from_yaml(text, "spin.yaml", &t).unwrap();
    let plan = RunPlan {
        warmup_cycles: 1,
        cycles: 3,
        ..RunPlan::default()
    };
    let out = run_controller(&mut sim, &mut seq, plan, 0.1, &mut |_, _| {}).unwrap();
    let period = out.report.period_s;
    assert!((period - 1.0).abs() <= 0.021, "cycle {period} s");
    let wheel = t.joint_names().iter().position(|n| n == "w_spin").unwrap();
    let start = out.samples.iter().find(|s| s.t >= period - 1e-9).unwrap().angles[wheel];
    let end = out.samples.iter().find(|s| s.t >= 4.0 * period - 1e-6).unwrap().angles[wheel];
    let per_cycle = (end - start).to_degrees() / 3.0;
    eprintln!("wheel: cycle {period:.3} s, {per_cycle:.2}° per cycle");
    assert!(
        (per_cycle - 90.0).abs() < 4.5,
        "the wheel turned {per_cycle}° per cycle"
    );
    let hinge = t.joint_names().iter().position(|n| n == "body_hinge").unwrap();
    assert!(
        out.samples.iter().all(|s| s.angles[hinge].abs() < 0.05),
        "the hinge held"
    );
    // A position target for the wheel is refused by name, before anything moves.
    let bad = "name: bad\ncyclic: false\nposes:\n  - {name: p, targets: {w_spin: {position_deg: 10}}}\n";
    let e = PoseSequence::from_yaml(bad, "bad.yaml", &t).unwrap_err().to_string();
    assert!(e.contains("w_spin") && e.contains("velocity-driven"), "{e}");
}

/// Wraps a controller and keeps the force-sensor readings its observations carried.
struct Probe {
    inner: Box<dyn Controller>,
    readings: Vec<Vec<f64>>,
}

impl Controller for Probe {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn joint_count(&self) -> usize {
        self.inner.joint_count()
    }
    fn step(&mut self, dt: f64, obs: &modbot_gaits::Observation<'_>, out: &mut [modbot_gaits::JointTarget]) {
        if let Some(r) = obs.sensors.get("m1_wheel_sensor") {
            self.readings.push(r.clone());
        }
        self.inner.step(dt, obs, out);
    }
    fn period(&self) -> Option<f64> {
        self.inner.period()
    }
    fn completed_cycles(&self) -> usize {
        self.inner.completed_cycles()
    }
}

/// The wheel-foot module's force sensor between its wheel discs reads the front disc's
/// contact force in the disc's frame, through the controller's observation: its share of
/// the module's weight, and during the forward inchworm the wheel sliding along its axis,
/// held back at about the friction limit μ·N (μ = 0.45 × terrain 1.0, decision 0023).
#[test]
fn the_wheel_force_sensor_reads_the_wheels_contact() {
    let t = Topology::resolve("wheelfoot", &ModuleCatalog::builtin()).unwrap();
    let robot = SimRobot::from_topology(&t).unwrap();
    let world = Scenario::from_yaml(
        "name: w\nground: {friction: 1.0, size_m: [10, 10], friction_combine: multiply}\nphysics: {step_s: 0.001, real_time_factor: 1}\n",
        "w",
    )
    .unwrap();
    let mut sim = Simulator::new(&robot, &world, SimSettings::for_scenario(&world)).unwrap();
    let names = t.joint_names();
    let inner = modbot_gaits::modular::build("inchworm_fwd_high", &names, &Default::default()).unwrap();
    let mut probe = Probe {
        inner,
        readings: Vec::new(),
    };
    let plan = RunPlan {
        warmup_cycles: 1,
        cycles: 2,
        control_rate_hz: 100.0,
        max_time_s: 20.0,
    };
    run_controller(&mut sim, &mut probe, plan, 0.172, &mut |_, _| {}).unwrap();
    let r = &probe.readings;
    assert!(r.len() > 100, "{} readings", r.len());
    let weight = 0.29 * 9.81;
    // The sensor turns with the wheel about its axis (x): the normal load lies in its y–z
    // plane, the axial friction along x. Landed (the start leaves a clearance): a share of
    // the weight.
    let normal = |f: &Vec<f64>| f[1].hypot(f[2]);
    let landed = r.iter().find(|f| normal(f) > 0.0).unwrap();
    assert!(normal(landed) > 0.1 * weight && normal(landed) < weight, "{landed:?}");
    // The forward stroke slides the wheel along its axis (+x): friction pulls it back (−x)
    // at about μ·N (μ = 0.45; the module's pitch tilts the axis by a few degrees, which adds
    // the normal's share); it never pushes it forward by as much.
    let mut slid = false;
    for f in r {
        let n = normal(f);
        slid |= f[0] < -0.8 * 0.45 * n && n > 0.1;
        assert!(f[0] < 0.3 * 0.45 * n + 1e-3, "{f:?}: friction pushes the wheel forward");
    }
    assert!(slid, "the wheel never slid along its axis at μ·N");
}
