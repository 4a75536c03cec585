//! The wheel-foot module of spec seed-000 §2 as modbot builds it: its dimensions, the
//! connection frames of Table 3.1, and its forward kinematics through the link tree (the
//! same tree the URDF and the simulator use) against the source's chain test vectors.
//! Tolerance: 1e-4 m and 0.01°, the precision of the source's tables.

use modbot_core::catalog::Actuator;
use modbot_core::{LinkTree, ModuleCatalog, Topology};
use nalgebra::{Isometry3, Point3, Vector3};

const TOL_M: f64 = 1e-4;

fn robot(name: &str) -> Topology {
    Topology::resolve(name, &ModuleCatalog::builtin()).unwrap_or_else(|e| panic!("{e}"))
}

/// World frames of every link (by name) of `t` with the joints named in `q` (deg) set.
fn frames(t: &Topology, q: &[(&str, f64)]) -> std::collections::BTreeMap<String, Isometry3<f64>> {
    let names = t.joint_names();
    let mut v = vec![0.0; names.len()];
    for (n, deg) in q {
        let i = names
            .iter()
            .position(|x| x == n)
            .unwrap_or_else(|| panic!("no joint {n}"));
        v[i] = deg.to_radians();
    }
    let tree = LinkTree::new(t);
    let poses = tree
        .forward(&v, &Isometry3::identity())
        .unwrap_or_else(|e| panic!("{e}"));
    tree.links
        .iter()
        .zip(tree.link_frames(&poses))
        .map(|(l, f)| (l.name.clone(), f))
        .collect()
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= TOL_M + 1e-12, "{what}: {a:.5} vs the source's {b:.4}");
}

#[test]
fn dimensions_of_section_2_2() {
    let kind = ModuleCatalog::builtin()
        .kind("wheelfoot")
        .unwrap_or_else(|e| panic!("{e}"))
        .clone();
    let (lo, hi) = kind.bounds_at_zero();
    close(lo.x, 0.0, "plate outer face");
    close(hi.x, 0.172, "wheel front face (total length)");
    close(lo.z, 0.0, "lowest point on the ground");
    close(hi.y - lo.y, 0.05, "plate width");
    let poses = kind.link_poses_at_zero();
    let at = |link: &str| poses[kind.link_index(link).unwrap_or_else(|| panic!("{link}"))];
    // Joint placement of §2.2: BJ2 at (0.047, 0, 0.025), BJ1 at (0.0945, 0, 0.025).
    let bj2 = at("link1").translation.vector;
    let bj1 = at("body").translation.vector;
    assert!((bj2 - Vector3::new(0.047, 0.0, 0.025)).norm() < 1e-12, "{bj2}");
    assert!((bj1 - Vector3::new(0.0945, 0.0, 0.025)).norm() < 1e-12, "{bj1}");
    // d1: wheel face → BJ1.
    close(0.172 - bj1.x, 0.0775, "d1");
    // The caster: centre 5 mm up, 75 mm behind the wheel's lower tip.
    let body = kind
        .links
        .iter()
        .find(|l| l.name == "body")
        .unwrap_or_else(|| panic!("body"));
    let caster = body
        .shapes
        .iter()
        .find(|s| s.sphere.is_some())
        .unwrap_or_else(|| panic!("caster"));
    let c = at("body") * Point3::from(caster.xyz);
    close(c.x, 0.172 - 0.075, "caster x");
    close(c.z, 0.005, "caster height");
    // Wheel radius 0.025 on the long axis; the plate grips better than the wheel slides.
    let fj = &kind.joints[0];
    assert_eq!((fj.name.as_str(), fj.axis), ("front_joint", [1.0, 0.0, 0.0]));
    assert_eq!(fj.actuator.max_speed_rad_s(), 360f64.to_radians());
    let mu = |l: &str| {
        kind.links
            .iter()
            .find(|x| x.name == l)
            .and_then(|x| x.friction)
            .unwrap_or(kind.contact.friction)
    };
    assert!(
        mu("foot") > mu("wheel_front"),
        "plate friction must be higher than the wheel's"
    );
    assert_eq!(
        kind.fixed_joints.iter().filter(|f| f.force_sensor).count(),
        1,
        "one force sensor"
    );
    let names: Vec<_> = kind.joints.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(
        names,
        ["front_joint", "back_joint1", "back_joint2", "cam_pan", "cam_tilt"]
    );
}

#[test]
fn ports_are_the_frames_of_table_3_1() {
    let kind = ModuleCatalog::builtin()
        .kind("wheelfoot")
        .unwrap_or_else(|e| panic!("{e}"))
        .clone();
    let poses = kind.link_poses_at_zero();
    // (name, position, V-Rep yaw of the dummy, whether the dummy's x points into the module)
    let table = [
        ("F", [0.172, 0.0, 0.025], 0.0, false),
        ("L", [0.137, 0.025, 0.025], -90.0, true),
        ("R", [0.137, -0.025, 0.025], 90.0, true),
        ("BF", [0.0, 0.0, 0.025], 0.0, true),
        ("BS", [0.0, 0.0, 0.025], 180.0, false),
    ];
    assert_eq!(kind.ports.len(), table.len());
    for (name, xyz, yaw, inward) in table {
        let p = &kind.ports[name];
        let frame = poses[kind.link_index(&p.link).unwrap_or(0)] * p.pose();
        let pos = frame.translation.vector;
        assert!((pos - Vector3::from(xyz)).norm() < 1e-12, "port {name} at {pos}");
        // modbot's ports point out of the module: the dummy's x, turned by 180° if inward.
        let want = (yaw + if inward { 180.0 } else { 0.0 }) * std::f64::consts::PI / 180.0;
        let x = frame.rotation * Vector3::x();
        assert!(
            (x - Vector3::new(want.cos(), want.sin(), 0.0)).norm() < 1e-9,
            "port {name}: x = {x}"
        );
        assert!(
            (frame.rotation * Vector3::z() - Vector3::z()).norm() < 1e-9,
            "port {name}: z up"
        );
    }
}

/// The foot tip (module origin) relative to the wheel's lower tip, in the body frame of the
/// rest pose: the V-Rep frame of chain 1 (x_v, z_v).
fn chain1(bj1: f64, bj2: f64) -> (f64, f64) {
    let t = robot("wheelfoot");
    let f = frames(&t, &[("m1_back_joint1", bj1), ("m1_back_joint2", bj2)]);
    let rest = frames(&t, &[]);
    // Express everything in the body frame, placed where the body is at rest.
    let to_rest = rest["m1_body"] * f["m1_body"].inverse();
    let tip = to_rest * (f["m1_foot"] * Point3::origin());
    (tip.x - 0.172, tip.z)
}

#[test]
fn chain_1_test_vectors_through_the_model() {
    // §2.6: (α1, α2) → (x_v, z_v).
    for (a1, a2, x, z) in [
        (0.0, 0.0, -0.172, 0.0),
        (-41.0, 120.0, -0.0978, 0.0053),
        (-33.0, 61.0, -0.1471, 0.0067),
        (-90.0, 90.0, -0.1245, 0.0475),
        (-75.0, 90.0, -0.1287, 0.0346),
        (60.0, 30.0, -0.0763, -0.0631),
    ] {
        let (xv, zv) = chain1(a1, a2);
        close(xv, x, &format!("x_v at ({a1}, {a2})"));
        close(zv, z, &format!("z_v at ({a1}, {a2})"));
    }
}

#[test]
fn leg_tips_of_the_quadruped_stance() {
    // In the quadruped a leg hangs from its wheel (fixed to the body); the hip is its F port.
    // Leg FK checks of §8: the stance (0, 60, 30) puts the right and left plate tips 0.0881
    // below the hip and 0.1013 outward; the lifted pose (0, 0, 90) the lower tip 0.047 below.
    let t = robot("quadruped");
    let tip = |q: &[(&str, f64)], y: f64, z: f64| {
        let f = frames(&t, q);
        let hip = f["role3_wheel_front"] * Isometry3::translation(0.01, 0.0, 0.0);
        hip.inverse() * (f["role3_foot"] * Point3::new(0.0, y, z))
    };
    for y in [0.025, -0.025] {
        let p = tip(&[("role3_back_joint1", 60.0), ("role3_back_joint2", 30.0)], y, 0.025);
        close(p.z, -0.0881, "stance tip height");
        close(-p.x, 0.1013, "stance tip outward");
    }
    let p = tip(&[("role3_back_joint1", 0.0), ("role3_back_joint2", 90.0)], 0.0, 0.0);
    close(p.z, -0.047, "lifted lower tip");
    // θ1 = ±60: the leading side tip moves 0.0888 along the robot (the leg's y; limit
    // 0.0895) and the trailing one, still in contact, is 0.0657 below the hip.
    for deg in [60.0, -60.0] {
        let q = [
            ("role3_front_joint", deg),
            ("role3_back_joint1", 60.0),
            ("role3_back_joint2", 30.0),
        ];
        let (a, b) = (tip(&q, 0.025, 0.025), tip(&q, -0.025, 0.025));
        close(a.y.abs().max(b.y.abs()), 0.0888, "swing tip excursion");
        close(a.z.min(b.z), -0.0657, "contact tip height");
    }
}

#[test]
fn quadruped_and_wheeled_geometry() {
    // §3.2: with the body at (−90, 90) the front and hind hips are ±0.0895 from the foot
    // junction and 0.0881 above the ground in the stance.
    let t = robot("quadruped");
    let body = [
        ("role1_back_joint1", -90.0),
        ("role1_back_joint2", 90.0),
        ("role2_back_joint1", -90.0),
        ("role2_back_joint2", 90.0),
    ];
    let f = frames(&t, &body);
    let junction = f["role1_foot"] * Point3::new(0.0, 0.0, 0.025);
    let front_hip = f["role3_wheel_front"] * Point3::new(0.01, 0.0, 0.0);
    let hind_hip = f["role5_wheel_front"] * Point3::new(0.01, 0.0, 0.0);
    close(front_hip.x - junction.x, 0.0895, "front hip");
    close(junction.x - hind_hip.x, 0.0895, "hind hip");
    close(
        junction.z - front_hip.z,
        0.0475,
        "the foot junction raised 47.5 mm above the hips",
    );
    // Legs point outward: role 3 (front right) to the right, role 4 to the left.
    let right = f["role3_foot"] * Point3::origin();
    let left = f["role4_foot"] * Point3::origin();
    assert!(right.y < -0.1 && left.y > 0.1, "{right} {left}");
    // The wheeled shape: wheel modules face outward (γ = −90 on the right).
    let w = robot("wheeled");
    let f = frames(&w, &[]);
    let x3 = f["role3_foot"].rotation * Vector3::x();
    assert!((x3 - Vector3::new(0.0, -1.0, 0.0)).norm() < 1e-9, "{x3}");
    let x4 = f["role4_foot"].rotation * Vector3::x();
    assert!((x4 - Vector3::new(0.0, 1.0, 0.0)).norm() < 1e-9, "{x4}");
    // Its wheels are speed driven; the quadruped's hips are position servos.
    let kinds: Vec<bool> = w
        .joints()
        .iter()
        .map(|j| matches!(j.def.actuator, Actuator::Velocity(_)))
        .collect();
    assert_eq!(kinds.iter().filter(|v| **v).count(), 4);
    assert!(
        t.joints()
            .iter()
            .all(|j| matches!(j.def.actuator, Actuator::Position(_)))
    );
}

/// Height of the wheeled vehicle standing on its wheels in a pose: (top above the ground,
/// body underside above the ground), from the collision shapes.
fn wheeled_height(body: (f64, f64), wheels: (f64, f64)) -> (f64, f64) {
    let t = robot("wheeled");
    let names = t.joint_names();
    let mut q = vec![0.0; names.len()];
    for (i, n) in names.iter().enumerate() {
        let role: usize = n[4..5].parse().unwrap_or(0);
        let (a, b) = if role <= 2 { body } else { wheels };
        if n.ends_with("back_joint1") {
            q[i] = a.to_radians();
        } else if n.ends_with("back_joint2") {
            q[i] = b.to_radians();
        }
    }
    let tree = LinkTree::new(&t);
    let (lo, hi) = tree.bounds_at(&t, &q).unwrap_or_else(|e| panic!("{e}"));
    // The lowest points are the wheels' (they stand on the ground); the body modules' lowest
    // point is their wheel or caster.
    let poses = tree
        .forward(&q, &Isometry3::identity())
        .unwrap_or_else(|e| panic!("{e}"));
    let frames = tree.link_frames(&poses);
    let mut body_low = f64::INFINITY;
    for (l, f) in tree.links.iter().zip(&frames) {
        if l.module <= 1 {
            for s in t.kind_of(l.module).links[l.link].shapes.iter().filter(|s| s.collision) {
                body_low = body_low.min(s.geometry().bounds_in(&(f * s.pose())).0.z);
            }
        }
    }
    (hi.z - lo.z, body_low - lo.z)
}

#[test]
fn the_low_pose_lowers_the_wheeled_vehicle() {
    // §3.3 normal pose: body (−90, 90), wheels (−75, 90). §4.2 low pose: body (0, 0) and the
    // wheels at the Lua values (30, 0) or Table 3.32's (0, 30) (decision 0024).
    let normal = wheeled_height((-90.0, 90.0), (-75.0, 90.0));
    let low_lua = wheeled_height((0.0, 0.0), (30.0, 0.0));
    let low_table = wheeled_height((0.0, 0.0), (0.0, 30.0));
    eprintln!(
        "wheeled height / body clearance: normal {normal:?}, low (Lua) {low_lua:?}, low (Table 3.32) {low_table:?}"
    );
    // The spec's FK: the Lua pose lowers the attachment ≈ 29 mm more than the normal pose,
    // the Table's only ≈ 5 mm; and the body no longer carries the raised foot junction.
    assert!(normal.0 - low_lua.0 > 0.04, "{normal:?} {low_lua:?}");
    assert!(low_table.0 > low_lua.0 + 0.02, "{low_table:?} {low_lua:?}");
    assert!(
        low_lua.1 > 0.0,
        "the body stays off the ground in the low pose: {low_lua:?}"
    );
}
