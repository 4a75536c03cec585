//! Properties of every gait: limits, period, phase lags, mirror symmetry, and the
//! player's ramps and blends against the servo speed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::f64::consts::{PI, TAU};

use modbot_core::{ModuleCatalog, Topology};
use modbot_gaits::{Family, GAITS, Gait, GaitError, GaitLibrary, GaitPlayer, SineGenerator};
use proptest::prelude::*;

fn robot(spec: &str) -> Topology {
    Topology::from_spec(&spec.parse().unwrap(), &ModuleCatalog::builtin()).unwrap()
}

fn build(name: &str, spec: &str, set: Vec<(String, f64)>) -> Result<modbot_gaits::BuiltGait, GaitError> {
    GaitLibrary::builtin().build(name, &robot(spec), &set)
}

fn robot_for(family: Family, m: usize) -> String {
    match family {
        Family::PitchPitch => format!("pp:{m}"),
        Family::PitchYaw => format!("py:{m}"),
        Family::PitchYawPitch => "pyp".into(),
    }
}

/// A random gait, robot and control parameters drawn over each parameter's whole range.
fn any_gait() -> impl Strategy<Value = (usize, String, Vec<(String, f64)>)> {
    (
        0..GAITS.len(),
        2usize..=32,
        prop::collection::vec(0.0f64..=1.0, 16),
        0.3f64..8.0,
        any::<bool>(),
    )
        .prop_map(|(g, m, unit, period, reverse)| {
            let def = &GAITS[g];
            let mut set: Vec<(String, f64)> = def
                .params
                .iter()
                .filter(|p| !p.shape)
                .zip(unit)
                .map(|(p, u)| (p.key.to_string(), p.min + u * (p.max - p.min)))
                .collect();
            set.push(("period_s".into(), period));
            set.push(("direction".into(), if reverse { -1.0 } else { 1.0 }));
            (g, robot_for(def.family, m), set)
        })
}

/// Phase (deg) of a sampled sinusoid by projection on sin and cos over one period.
fn phase_of(g: &SineGenerator, joint: usize) -> f64 {
    let n = 256;
    let (mut s, mut c) = (0.0, 0.0);
    let mut out = vec![0.0; g.joint_count()];
    for i in 0..n {
        let phi = TAU * i as f64 / n as f64;
        g.targets_at_phase(phi, &mut out);
        s += out[joint] * phi.sin();
        c += out[joint] * phi.cos();
    }
    c.atan2(s).to_degrees()
}

fn wrap180(x: f64) -> f64 {
    (x + 540.0).rem_euclid(360.0) - 180.0
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Every target of every buildable gait stays within the joint range; what cannot be
    /// built is refused with a validation error, never a panic.
    #[test]
    fn targets_stay_within_joint_limits((g, spec, set) in any_gait(), t in 0.0f64..100.0) {
        let def = &GAITS[g];
        match build(def.name, &spec, set) {
            Ok(built) => {
                let mut out = vec![0.0; built.generator.joint_count()];
                for k in 0..64 {
                    built.generator.targets_at(t + k as f64 * 0.173, &mut out);
                    for (i, v) in out.iter().enumerate() {
                        prop_assert!(v.is_finite());
                        prop_assert!(v.abs() <= PI / 2.0 + 1e-12, "{} joint {i} = {v}", def.name);
                    }
                }
                prop_assert!(built.generator.peak_speed_deg_s() <= 260.0 + 1e-9);
            }
            Err(e) => prop_assert!(matches!(e,
                GaitError::AmplitudePlusOffset { .. } | GaitError::ServoSpeed { .. }
                | GaitError::Invalid { .. } | GaitError::OutOfRange { .. }), "{e}"),
        }
    }

    /// The motion repeats with period T.
    #[test]
    fn period_is_t((g, spec, set) in any_gait(), t in 0.0f64..50.0) {
        if let Ok(built) = build(GAITS[g].name, &spec, set) {
            let n = built.generator.joint_count();
            let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
            built.generator.targets_at(t, &mut a);
            built.generator.targets_at(t + built.generator.period(), &mut b);
            for (x, y) in a.iter().zip(&b) {
                prop_assert!((x - y).abs() < 1e-9);
            }
        }
    }

    /// PP: the phase lag between consecutive joints equals Δφ.
    #[test]
    fn pp_phase_lag_is_dphi(m in 2usize..=24, a in 5.0f64..60.0, dphi in -180.0f64..180.0) {
        let built = build("caterpillar", &format!("pp:{m}"),
            vec![("A".into(), a), ("dphi".into(), dphi), ("T".into(), 3.0)]).unwrap();
        for i in 1..m {
            let lag = phase_of(&built.generator, i) - phase_of(&built.generator, i - 1);
            prop_assert!(wrap180(lag - dphi).abs() < 1e-6, "joint {i}: lag {lag}, Δφ {dphi}");
        }
    }

    /// PY: lags Δφ_v within the pitch group, Δφ_h within the yaw group, Δφ_vh between them.
    #[test]
    fn py_phase_lags(half in 2usize..=12, dphi in -180.0f64..180.0, dphi_vh in -180.0f64..180.0) {
        let m = 2 * half;
        let built = build("sidewinding", &format!("py:{m}"),
            vec![("dphi".into(), dphi), ("dphi_vh".into(), dphi_vh)]).unwrap();
        let g = &built.generator;
        for i in 1..half {
            prop_assert!(wrap180(phase_of(g, 2 * i) - phase_of(g, 2 * i - 2) - dphi).abs() < 1e-6);
            prop_assert!(wrap180(phase_of(g, 2 * i + 1) - phase_of(g, 2 * i - 1) - dphi).abs() < 1e-6);
        }
        prop_assert!(wrap180(phase_of(g, 1) - phase_of(g, 0) - dphi_vh).abs() < 1e-6);
    }

    /// −Δφ mirrors +Δφ: it is the same motion with head and tail exchanged,
    /// φ_i(φ + (M−1)Δφ; −Δφ) = φ_{M+1−i}(φ; +Δφ), so it travels the other way (principle 9).
    #[test]
    fn negative_dphi_mirrors(m in 2usize..=24, a in 5.0f64..60.0, dphi in 1.0f64..179.0, phi in 0.0f64..TAU) {
        let b = |d: f64| build("caterpillar", &format!("pp:{m}"),
            vec![("A".into(), a), ("dphi".into(), d), ("T".into(), 3.0)]).unwrap().generator;
        let (plus, minus) = (b(dphi), b(-dphi));
        let (mut p, mut q) = (vec![0.0; m], vec![0.0; m]);
        plus.targets_at_phase(phi, &mut p);
        minus.targets_at_phase(phi + ((m - 1) as f64 * dphi).to_radians(), &mut q);
        for i in 0..m {
            prop_assert!((q[i] - p[m - 1 - i]).abs() < 1e-9);
        }
    }

    /// direction = −1 plays the same joint trajectories backwards in time.
    #[test]
    fn direction_reverses_time((g, spec, set) in any_gait(), t in 0.0f64..20.0) {
        let mut fwd = set.clone();
        fwd.retain(|(k, _)| k != "direction");
        let mut bwd = fwd.clone();
        bwd.push(("direction".into(), -1.0));
        if let (Ok(f), Ok(b)) = (build(GAITS[g].name, &spec, fwd), build(GAITS[g].name, &spec, bwd)) {
            let n = f.generator.joint_count();
            let (mut x, mut y) = (vec![0.0; n], vec![0.0; n]);
            f.generator.targets_at(t, &mut x);
            b.generator.targets_at(-t, &mut y);
            for (u, v) in x.iter().zip(&y) {
                prop_assert!((u - v).abs() < 1e-12);
            }
        }
    }

    /// Ramps from rest and blends between gaits never move a target faster than the servo
    /// (260 deg/s), never leave the joint range, and start exactly at the rest pose.
    #[test]
    fn ramps_and_blends_respect_the_servo(
        first in 0..GAITS.len(), second in 0..GAITS.len(), third in 0..GAITS.len(),
        m in 3usize..=16, dt in 0.001f64..0.02,
        t_switch in 0.0f64..4.0, t_switch2 in 0.0f64..4.0,
        ramp in 0.0f64..3.0, blend in 0.0f64..3.0,
        rest in prop::collection::vec(-1.5f64..1.5, 16),
    ) {
        // Pick gaits that fit one robot: PY chains take PY gaits; PYP gaits need M = 3.
        let py: Vec<_> = GAITS.iter().filter(|g| g.family == Family::PitchYaw).collect();
        let pick = |i: usize| py[i % py.len()].name;
        let spec = format!("py:{m}");
        let lib = GaitLibrary::builtin();
        let topo = robot(&spec);
        let mk = |name: &str| -> Box<dyn Gait> {
            Box::new(lib.build(name, &topo, &[]).unwrap().generator)
        };
        let w = 260f64.to_radians();
        let transition = modbot_gaits::Transition { ramp_s: ramp, blend_s: blend };
        let rest = rest[..m].to_vec();
        let mut player = GaitPlayer::new(rest.clone(), vec![w; m], transition);
        player.start(mk(pick(first)));
        let mut prev = rest.clone();
        let (mut switched, mut switched2) = (false, false);
        let steps = ((t_switch + t_switch2 + 6.0) / dt) as usize;
        for k in 0..steps {
            let t = (k + 1) as f64 * dt;
            if !switched && t >= t_switch { player.start(mk(pick(second))); switched = true; }
            if !switched2 && t >= t_switch + t_switch2 { player.start(mk(pick(third))); switched2 = true; }
            let out = player.step(dt).to_vec();
            if k == 0 && ramp > 0.0 {
                for (o, r) in out.iter().zip(&rest) {
                    prop_assert!((o - r).abs() <= w * dt + 1e-12);
                }
            }
            for (o, p) in out.iter().zip(&prev) {
                prop_assert!((o - p).abs() <= w * dt * (1.0 + 1e-9), "jump {} at t = {t}", (o - p).abs());
                prop_assert!(o.abs() <= PI / 2.0 + 1e-9);
            }
            prev = out;
        }
    }
}

/// After the ramp the player reproduces the gait exactly: the transition machinery does
/// not distort the steady motion.
#[test]
fn player_converges_to_the_gait() {
    let lib = GaitLibrary::builtin();
    let topo = robot("py:16");
    let g = lib.build("sidewinding", &topo, &[]).unwrap().generator;
    let reference = g.clone();
    let mut player = GaitPlayer::new(vec![0.0; 16], vec![260f64.to_radians(); 16], lib.transition);
    player.start(Box::new(g));
    let dt = 0.01;
    let mut want = vec![0.0; 16];
    for k in 1..=1000 {
        let out = player.step(dt).to_vec();
        let t = k as f64 * dt;
        if t > lib.transition.ramp_s + 0.5 {
            reference.targets_at(t, &mut want);
            for (o, w) in out.iter().zip(&want) {
                assert!((o - w).abs() < 1e-9, "t = {t}");
            }
        }
    }
    assert_eq!(
        player.limited_samples(),
        0,
        "the default ramp never needs the slew limit"
    );
}

/// A blend ends on the new gait, and holding stops the motion.
#[test]
fn blend_ends_on_the_new_gait_and_hold_stops() {
    let lib = GaitLibrary::builtin();
    let topo = robot("py:8");
    let a = lib.build("rolling", &topo, &[]).unwrap().generator;
    let b = lib.build("rotation_u", &topo, &[]).unwrap().generator;
    let reference = b.clone();
    let mut player = GaitPlayer::new(vec![0.0; 8], vec![260f64.to_radians(); 8], lib.transition);
    player.start(Box::new(a));
    let dt = 0.005;
    for _ in 0..800 {
        player.step(dt);
    }
    let t_switch = player.time();
    player.start(Box::new(b));
    let mut want = vec![0.0; 8];
    for _ in 0..800 {
        let out = player.step(dt).to_vec();
        let t = player.time();
        if t > t_switch + lib.transition.blend_s + 0.5 {
            reference.targets_at(t - t_switch, &mut want);
            for (o, w) in out.iter().zip(&want) {
                assert!((o - w).abs() < 1e-9);
            }
        }
    }
    player.hold();
    let held = player.output().to_vec();
    for _ in 0..10 {
        assert_eq!(player.step(dt), &held[..]);
    }
}

/// The random-gait strategy is not vacuous: a good share of its draws build.
#[test]
fn random_gaits_mostly_build() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = any_gait();
    let (mut ok, n) = (0, 400);
    for _ in 0..n {
        let (g, spec, set) = strategy.new_tree(&mut runner).unwrap().current();
        ok += build(GAITS[g].name, &spec, set).is_ok() as usize;
    }
    assert!(ok * 4 >= n, "only {ok} of {n} random gaits build");
    eprintln!("{ok} of {n} random gaits build");
}
