//! Properties of the kinematics against the source's own formulas.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use modbot_core::{ModuleCatalog, Topology};
use modbot_gaits::Chain;
use modbot_gaits::chain::minimal;
use modbot_gaits::serpenoid::DiscreteSerpenoid;
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use proptest::prelude::*;

fn chain(spec: &str) -> Chain {
    let c = ModuleCatalog::builtin();
    Chain::new(&Topology::from_spec(&spec.parse().unwrap(), &c).unwrap()).unwrap()
}

fn angle() -> impl Strategy<Value = f64> {
    -std::f64::consts::FRAC_PI_2..std::f64::consts::FRAC_PI_2
}

proptest! {
    /// The homogeneous-transform FK of the minimal PP robot (spec §4, source frame) equals
    /// modbot's chain FK under the frame map, with pitch angles negated.
    #[test]
    fn minimal_pp_matches_source_fk(p0 in angle(), p1 in angle(), p2 in angle()) {
        let l = 0.072;
        let src = minimal::pp_points(l, p0, p1, p2);
        let base = Isometry3::from_parts(Translation3::identity(),
            UnitQuaternion::from_axis_angle(&Vector3::y_axis(), -p0));
        let ours = chain("pp:2").forward(&[-p1, -p2], &base).unwrap();
        for (s, o) in src.iter().zip(&ours.points) {
            prop_assert!((minimal::source_to_modbot(s) - o).norm() < 1e-12);
        }
    }

    /// The same for the minimal PYP; yaw angles agree in both frames.
    #[test]
    fn minimal_pyp_matches_source_fk(p0 in angle(), p1 in angle(), p2 in angle(), p3 in angle()) {
        let l = 0.072;
        let src = minimal::pyp_points(l, p0, p1, p2, p3);
        let base = Isometry3::from_parts(Translation3::identity(),
            UnitQuaternion::from_axis_angle(&Vector3::y_axis(), -p0));
        let ours = chain("pyp").forward(&[-p1, p2, -p3], &base).unwrap();
        for (s, o) in src.iter().zip(&ours.points) {
            prop_assert!((minimal::source_to_modbot(s) - o).norm() < 1e-12);
        }
    }

    /// The chain driven by the discrete-serpenoid bending angles (3.31) takes the discrete
    /// serpenoid's shape (3.29–3.30) in its vertical plane.
    #[test]
    fn pp_chain_takes_the_serpenoid_shape(m in 2usize..=24, alpha in 0.0f64..60.0, k in 0.5f64..4.0,
                                         phase in 0.0f64..360.0) {
        let l = 0.072;
        let s = DiscreteSerpenoid::module_blocks(m, l, alpha, k);
        let bend: Vec<f64> = s.bending_angles_deg(phase).iter().map(|b| b.to_radians()).collect();
        let first = s.segment_angles_deg(phase)[0].to_radians();
        // Positive pitch bends the head down, so a first segment rising at α_1 is a −α_1 turn about y.
        let base = Isometry3::from_parts(Translation3::identity(),
            UnitQuaternion::from_axis_angle(&Vector3::y_axis(), -first));
        let pose = chain(&format!("pp:{m}")).forward(&bend, &base).unwrap();
        for (p, q) in pose.points.iter().zip(s.points(phase)) {
            prop_assert!((p.x - q[0]).abs() < 1e-9 && (p.z - q[1]).abs() < 1e-9 && p.y.abs() < 1e-12);
        }
    }

    /// Equation (3.4) is the mass-weighted centre of equal modules, for any pose of any chain.
    #[test]
    fn com_equation_3_4_is_the_mass_centre(angles in prop::collection::vec(angle(), 2..=32), py in any::<bool>()) {
        let spec = format!("{}:{}", if py { "py" } else { "pp" }, angles.len());
        let pose = chain(&spec).forward(&angles, &Isometry3::identity()).unwrap();
        prop_assert!((pose.com_wired() - pose.com()).norm() < 1e-12);
        // Rigid segments: neighbouring points keep their distance.
        for w in pose.points.windows(2).skip(1).take(angles.len() - 1) {
            prop_assert!(((w[1] - w[0]).norm() - 0.072).abs() < 1e-12);
        }
        // Each hinge axis is perpendicular to the body on both sides of it.
        for (i, axis) in pose.axes.iter().enumerate() {
            let before = pose.points[i + 1] - pose.points[i];
            let after = pose.points[i + 2] - pose.points[i + 1];
            prop_assert!(axis.dot(&before).abs() < 1e-12 && axis.dot(&after).abs() < 1e-12);
        }
    }
}
