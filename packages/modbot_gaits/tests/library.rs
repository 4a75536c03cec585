//! Every gait and preset builds on its robots; bad parameters are refused with errors
//! that name them.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use modbot_core::{ModuleCatalog, Topology};
use modbot_gaits::{Control, Family, GAITS, Gait, GaitError, GaitLibrary};

fn robot(spec: &str) -> Topology {
    Topology::from_spec(&spec.parse().unwrap(), &ModuleCatalog::builtin()).unwrap()
}

fn build(name: &str, spec: &str, set: &[(&str, f64)]) -> Result<modbot_gaits::BuiltGait, GaitError> {
    let set: Vec<(String, f64)> = set.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    GaitLibrary::builtin().build(name, &robot(spec), &set)
}

#[test]
fn every_gait_builds_with_its_defaults() {
    for def in GAITS {
        let specs: &[&str] = match def.family {
            Family::PitchPitch => &["pp:2", "pp:8", "pp:32"],
            Family::PitchYaw => &["py:8", "py:16", "py:32"],
            Family::PitchYawPitch => &["pyp"],
        };
        for spec in specs {
            let g = build(def.name, spec, &[]).unwrap_or_else(|e| panic!("{} on {spec}: {e}", def.name));
            assert_eq!(g.generator.joint_count(), robot(spec).len());
        }
    }
}

#[test]
fn every_preset_builds_on_its_robot() {
    let lib = GaitLibrary::builtin();
    assert!(lib.presets.len() >= 23, "Table D.3 has 23 commands");
    for (name, p) in &lib.presets {
        let spec = p.robot.as_deref().unwrap();
        build(name, spec, &[]).unwrap_or_else(|e| panic!("preset {name}: {e}"));
    }
}

#[test]
fn the_h2_space_matches_the_source_equations() {
    // §3.3: φ_{v_i} = A_v sin(φ + (i−1)Δφ_v); φ_{h_i} = A_h sin(φ + (i−1)Δφ_h + Δφ_vh) + O_h.
    let g = build(
        "sidewinding",
        "py:8",
        &[("A_v", 10.0), ("A_h", 40.0), ("dphi", 60.0), ("dphi_vh", 45.0)],
    )
    .unwrap();
    let phase = 0.7f64;
    let mut out = vec![0.0; 8];
    g.generator.targets_at_phase(phase, &mut out);
    for i in 0..4 {
        let v = 10.0 * (phase + (i as f64 * 60.0).to_radians()).sin();
        let h = 40.0 * (phase + (i as f64 * 60.0 + 45.0).to_radians()).sin();
        assert!((out[2 * i] - v.to_radians()).abs() < 1e-12);
        assert!((out[2 * i + 1] - h.to_radians()).abs() < 1e-12);
    }
    // PYP (§3.3): φ1 = A_v sin φ, φ2 = A_h sin(φ + Δφ_vh) + O_h, φ3 = A_v sin(φ + Δφ_v).
    let g = build("pyp_rotation", "pyp", &[("A_v", 30.0), ("A_h", 40.0)]).unwrap();
    let mut out = vec![0.0; 3];
    g.generator.targets_at_phase(phase, &mut out);
    let want = [
        30.0 * phase.sin(),
        40.0 * (phase + 90f64.to_radians()).sin(),
        30.0 * (phase + std::f64::consts::PI).sin(),
    ];
    for (o, w) in out.iter().zip(want) {
        assert!((o - w.to_radians()).abs() < 1e-12);
    }
}

#[test]
fn shape_parameters_map_to_control() {
    // PP, M = 8, (α, k) = (63.6, 2) ↔ (A, Δφ) = (90, 90): Table 4.3 point 2 (printed α = 64 is
    // rounded; α_max = 63.6 at M_u = 4, §6.4).
    let g = build("caterpillar", "pp:8", &[("alpha", 63.6), ("k", 2.0), ("T", 3.0)]).unwrap();
    match &g.control {
        Control::H1 { amplitude, phase_diff } => {
            assert!((phase_diff.deg - 90.0).abs() < 1e-12);
            assert!((amplitude.deg - 2.0 * 63.6 * (45f64).to_radians().sin()).abs() < 1e-12);
        }
        c => panic!("{c:?}"),
    }
    // Beyond α_max the amplitude exceeds 90: refused, naming the parameter and its origin.
    let e = build("caterpillar", "pp:8", &[("alpha", 70.0), ("k", 2.0), ("T", 3.0)]).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("amplitude_deg (from winding_deg, undulations)"), "{msg}");
    // Turning: O_h = 2α_h/M (Table 5.7: α_h = 90 on 8 modules → 22.5).
    let g = build("turning", "py:8", &[("alpha_h", 90.0)]).unwrap();
    assert!(matches!(&g.control, Control::H2 { offset_h, .. } if (offset_h.deg - 22.5).abs() < 1e-12));
    // Rolling: A = 2α/M (Table 5.9 point B: α = 180, M = 8 → 45).
    let g = build("rolling", "py:8", &[("alpha", 180.0), ("T", 2.5)]).unwrap();
    assert!(matches!(&g.control, Control::H2 { amplitude_v, .. } if (amplitude_v.deg - 45.0).abs() < 1e-12));
    // Sidewinding in the shape convention: control Δφ_vh = shape + Δφ/2 (3.44, decision 0004).
    let g = build("sidewinding", "py:8", &[("dphi_vh_shape", 90.0)]).unwrap();
    assert!(matches!(&g.control, Control::H2 { phase_diff_vh, .. } if (phase_diff_vh.deg - 135.0).abs() < 1e-12));
    // Rotation S: Δφ_v = 2 Δφ_h.
    let g = build("rotation_s", "py:16", &[("k", 1.0), ("alpha_h", 28.3)]).unwrap();
    assert!(
        matches!(&g.control, Control::H2 { phase_diff_v, phase_diff_h, .. } if phase_diff_v.deg == 90.0 && phase_diff_h.deg == 45.0)
    );
}

#[test]
fn bad_parameters_name_themselves() {
    /// (gait, robot, parameters, words the error must contain)
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, f64)], &'a [&'a str]);
    let cases: &[Case] = &[
        ("caterpillar", "pp:8", &[("A", 95.0)], &["amplitude_deg", "95"]),
        ("caterpillar", "pp:8", &[("wiggle", 1.0)], &["wiggle", "amplitude_deg"]),
        (
            "caterpillar",
            "pp:8",
            &[("A", 10.0), ("amplitude_deg", 20.0)],
            &["given twice"],
        ),
        (
            "caterpillar",
            "pp:8",
            &[("A", 60.0), ("T", 1.0)],
            &["period_s", "1.450"],
        ),
        ("caterpillar", "pp:8", &[("alpha", 30.0)], &["undulations"]),
        (
            "caterpillar",
            "pp:8",
            &[("alpha", 30.0), ("k", 2.0), ("A", 3.0)],
            &["amplitude_deg", "winding_deg"],
        ),
        ("turning", "py:8", &[("O_h", 95.0)], &["offset_h_deg", "95"]),
        ("turning", "py:8", &[("alpha_h", 400.0)], &["arc_h_deg", "400"]),
        ("caterpillar", "py:8", &[], &["pitch-pitch", "py_8"]),
        ("pyp_rolling", "py:8", &[], &["pitch-yaw-pitch"]),
        ("rotation_s", "py:8", &[("dphi_h", 100.0)], &["phase_diff_h_deg", "200"]),
        ("rolling", "py:8", &[("direction", 0.5)], &["direction"]),
        ("rolling", "py:8", &[("A", f64::NAN)], &["amplitude_deg"]),
    ];
    for (gait, spec, set, needles) in cases {
        let msg = build(gait, spec, set).unwrap_err().to_string();
        for n in *needles {
            assert!(msg.contains(n), "{gait} {set:?}: `{msg}` lacks `{n}`");
        }
    }
    // O_h + A_h: turning has A_h = 0, so O_h may reach 90; pyp_turning checks the same.
    assert!(build("turning", "py:8", &[("O_h", 90.0), ("A_v", 10.0)]).is_ok());
    let msg = build("nosuch", "py:8", &[]).unwrap_err().to_string();
    assert!(
        msg.contains("nosuch") && msg.contains("sidewinding") && msg.contains("hypercube_rolling"),
        "{msg}"
    );
}

#[test]
fn amplitude_plus_offset_is_checked_on_the_yaw_group() {
    // Turning's yaw joints have A_h = 0, so use the generator path with a yaw amplitude:
    // sidewinding has no offset; build the (3.11) case through a user gait file instead.
    let lib = GaitLibrary::builtin()
        .merged("gaits:\n  pyp_turning:\n    offset_h_deg: 60\n", "user.yaml")
        .unwrap();
    let g = lib.build("pyp_turning", &robot("pyp"), &[]);
    assert!(g.is_ok(), "A_h = 0: |O_h| = 60 is within reach");
    let catalog_text = modbot_core::catalog::BUILTIN_MODULES_YAML
        .replace("min_deg: -90.0", "min_deg: -45.0")
        .replace("max_deg: 90.0", "max_deg: 45.0");
    let small = ModuleCatalog::from_yaml(&catalog_text, "small.yaml").unwrap();
    let topo = Topology::from_spec(&"pyp".parse().unwrap(), &small).unwrap();
    let set = [("A".to_string(), 30.0)];
    let msg = lib.build("pyp_turning", &topo, &set).unwrap_err().to_string();
    assert!(msg.contains("offset_h_deg") && msg.contains("45"), "{msg}");
}

#[test]
fn notes_flag_the_source_principles() {
    let g = build("caterpillar", "pp:8", &[("dphi", 45.0)]).unwrap();
    assert!(
        g.notes.iter().any(|n| n.contains("not statically stable")),
        "{:?}",
        g.notes
    );
    let g = build("caterpillar", "pp:8", &[("dphi", 180.0)]).unwrap();
    assert!(g.notes.iter().any(|n| n.contains("no locomotion")), "{:?}", g.notes);
    let g = build("rolling", "py:8", &[("A", 5.0)]).unwrap();
    assert!(g.notes.iter().any(|n| n.contains("flaps")), "{:?}", g.notes);
    let g = build("pyp_rolling", "pyp", &[("A", 40.0)]).unwrap();
    assert!(g.notes.iter().any(|n| n.contains("51.4")), "{:?}", g.notes);
    let g = build("caterpillar", "pp:8", &[]).unwrap();
    assert!(g.notes.is_empty(), "{:?}", g.notes);
}

#[test]
fn gait_files_are_checked() {
    let lib = GaitLibrary::builtin();
    for (text, needle) in [
        ("gaits:\n  crawl: {amplitude_deg: 3}\n", "crawl"),
        ("gaits:\n  caterpillar: {amplitude_v_deg: 3}\n", "amplitude_v_deg"),
        ("gaits:\n  caterpillar: {amplitude_deg: 300}\n", "300"),
        ("transition: {ramp_s: -1, blend_s: 1}\n", "transition.ramp_s"),
        ("transition: {ramp_s: 1}\n", "blend_s"),
        ("gait:\n  caterpillar: {}\n", "gait"),
        ("presets:\n  x: {gait: slither}\n", "slither"),
        ("presets:\n  x: {gait: rolling, robot: \"py:one\"}\n", "presets.x.robot"),
        ("presets:\n  rolling: {gait: rolling}\n", "gait's name"),
    ] {
        let msg = lib.clone().merged(text, "user.yaml").unwrap_err().to_string();
        assert!(msg.contains("user.yaml") && msg.contains(needle), "`{text}`: {msg}");
    }
    let lib = lib.merged("gaits:\n  caterpillar: {A: 20}\n", "user.yaml").unwrap();
    assert_eq!(lib.default_of("caterpillar", "amplitude_deg"), Some(20.0));
    assert_eq!(lib.default_of("caterpillar", "phase_diff_deg"), Some(-110.0));
}

#[test]
fn every_gait_has_complete_defaults() {
    let lib = GaitLibrary::builtin();
    for def in GAITS {
        for spec in def.schema().specs() {
            if !spec.shape {
                assert!(
                    lib.default_of(def.name, spec.key).is_some(),
                    "{}.{}",
                    def.name,
                    spec.key
                );
            }
        }
    }
}

/// Every pitch-yaw and PYP preset is a point of the general `pitch_yaw` gait: given the
/// preset's H2 values, it builds the same oscillators (the gait search relies on this).
#[test]
fn every_py_and_pyp_preset_is_a_point_of_pitch_yaw() {
    let lib = GaitLibrary::builtin();
    let mut checked = 0;
    for (name, p) in &lib.presets {
        let spec = p.robot.as_deref().unwrap();
        let preset = build(name, spec, &[]).unwrap();
        let Control::H2 {
            amplitude_v,
            amplitude_h,
            phase_diff_v,
            phase_diff_h,
            phase_diff_vh,
            offset_h,
        } = &preset.control
        else {
            continue;
        };
        let general = build(
            "pitch_yaw",
            spec,
            &[
                ("A_v", amplitude_v.deg),
                ("A_h", amplitude_h.deg),
                ("dphi_v", phase_diff_v.deg),
                ("dphi_h", phase_diff_h.deg),
                ("dphi_vh", phase_diff_vh.deg),
                ("O_h", offset_h.deg),
                ("T", preset.generator.period_s),
                ("direction", preset.generator.direction),
            ],
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(general.generator.oscillators, preset.generator.oscillators, "{name}");
        checked += 1;
    }
    assert!(checked >= 18, "{checked} presets checked");
    // Δφ_h on the PYP (one yaw joint) is said to do nothing.
    let g = build("pitch_yaw", "pyp", &[("dphi_h", 45.0)]).unwrap();
    assert!(
        g.notes.iter().any(|n| n.contains("Δφ_h has no effect")),
        "{:?}",
        g.notes
    );
}

/// The gaits a run's roll-over check leaves alone (record 0038) exist, and none other rolls
/// by design.
#[test]
fn rolling_gaits_are_named_gaits() {
    let rolling: Vec<&str> = GAITS
        .iter()
        .map(|g| g.name)
        .filter(|n| modbot_gaits::library::rolls_by_design(n))
        .collect();
    assert_eq!(rolling, ["rolling", "pyp_rolling", "pitch_yaw"]);
    assert!(!modbot_gaits::library::rolls_by_design("flapping"));
}
