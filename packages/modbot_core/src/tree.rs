//! The robot as one tree of links, from the root module's first link outwards, and its
//! forward kinematics. URDF emission and the simulator's layout walk this tree.
//!
//! A module may hang from its neighbour by any port, so the tree can run through a module
//! against the direction its kind was written in (a module joined foot first). A joint met
//! that way is **reversed**: with parent frame P, joint frame J = P·O and child C = J·R(a, q),
//! walking from C gives P = C·R(−a, q)·O⁻¹, so the tree joint sits at C's frame with axis −a
//! and the same angle q, and P is emitted in the frame J with its contents moved by O⁻¹.
//! A joint's angle therefore means the same whichever way the tree crosses it.

use nalgebra::{Isometry3, Translation3, Unit, UnitQuaternion, Vector3};

use crate::catalog::JointType;
use crate::error::{CoreError, Result};
use crate::topology::Topology;

/// How a tree joint moves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Motion {
    /// Rigid (within a module's link pair joined at ports, or between modules).
    Fixed,
    /// A robot joint.
    Joint {
        /// Index in the robot's joint (command) order.
        index: usize,
        /// Revolute, continuous or prismatic.
        kind: JointType,
        /// Unit axis in the joint frame.
        axis: Unit<Vector3<f64>>,
        /// Whether the tree crosses the joint against the direction of its kind.
        reversed: bool,
    },
}

/// The joint by which a tree link hangs from its parent.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeJoint {
    /// Parent tree link.
    pub parent: usize,
    /// Name (the robot joint's name, or `<a>_to_<b>` between modules).
    pub name: String,
    /// Joint frame in the parent's tree frame.
    pub origin: Isometry3<f64>,
    /// Its motion.
    pub motion: Motion,
}

/// A link of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeLink {
    /// URDF name, `<module>_<link>`.
    pub name: String,
    /// Module index.
    pub module: usize,
    /// Link index in the module's kind.
    pub link: usize,
    /// The kind's link frame expressed in this tree frame (identity unless a reversed joint
    /// moved the tree frame to the joint).
    pub offset: Isometry3<f64>,
    /// How it hangs from its parent (None for the root).
    pub parent: Option<TreeJoint>,
}

/// Every link of a robot in tree order (parents before children; link 0 is the root).
#[derive(Debug, Clone, PartialEq)]
pub struct LinkTree {
    /// The links.
    pub links: Vec<TreeLink>,
    /// Number of robot joints (the length of a joint vector).
    pub joint_count: usize,
}

/// An edge of the link graph, seen from one end.
struct Adj {
    to: (usize, usize),
    /// Transform from this end's kind frame to the other end's kind frame at q = 0.
    transform: Isometry3<f64>,
    /// Joint data if it is a robot joint: (index, kind, axis in joint frame, reversed).
    joint: Option<(usize, JointType, Unit<Vector3<f64>>, bool)>,
    /// Name of the tree joint it becomes.
    name: String,
}

impl LinkTree {
    /// Builds the tree of a checked robot.
    pub fn new(t: &Topology) -> LinkTree {
        // Global link ids: (module, link) → id.
        let mut first = Vec::with_capacity(t.len());
        let mut count = 0;
        for i in 0..t.len() {
            first.push(count);
            count += t.kind_of(i).links.len();
        }
        let id = |m: usize, l: usize| first[m] + l;
        let mut adj: Vec<Vec<Adj>> = (0..count).map(|_| Vec::new()).collect();
        for (k, j) in t.joints().iter().enumerate() {
            let kind = t.kind_of(j.module);
            let (p, c) = (
                kind.link_index(&j.def.parent).unwrap_or(0),
                kind.link_index(&j.def.child).unwrap_or(0),
            );
            let o = j.def.origin();
            let axis = j.def.unit_axis();
            adj[id(j.module, p)].push(Adj {
                to: (j.module, c),
                transform: o,
                joint: Some((k, j.def.kind, axis, false)),
                name: j.name.clone(),
            });
            adj[id(j.module, c)].push(Adj {
                to: (j.module, p),
                transform: o.inverse(),
                joint: Some((k, j.def.kind, axis, true)),
                name: j.name.clone(),
            });
        }
        for (m, module) in t.modules.iter().enumerate() {
            let kind = t.kind_of(m);
            for f in &kind.fixed_joints {
                let (p, c) = (
                    kind.link_index(&f.parent).unwrap_or(0),
                    kind.link_index(&f.child).unwrap_or(0),
                );
                let name = format!("{}_{}", module.name, f.name);
                adj[id(m, p)].push(Adj {
                    to: (m, c),
                    transform: f.origin(),
                    joint: None,
                    name: name.clone(),
                });
                adj[id(m, c)].push(Adj {
                    to: (m, p),
                    transform: f.origin().inverse(),
                    joint: None,
                    name,
                });
            }
        }
        for e in &t.edges {
            let ka = t.kind_of(e.a);
            let kb = t.kind_of(e.b);
            let la = ka.link_index(&ka.ports[&e.a_port].link).unwrap_or(0);
            let lb = kb.link_index(&kb.ports[&e.b_port].link).unwrap_or(0);
            let link_ab = t.edge_transform(e);
            let (na, nb) = (&t.modules[e.a].name, &t.modules[e.b].name);
            adj[id(e.a, la)].push(Adj {
                to: (e.b, lb),
                transform: link_ab,
                joint: None,
                name: format!("{na}_to_{nb}"),
            });
            adj[id(e.b, lb)].push(Adj {
                to: (e.a, la),
                transform: link_ab.inverse(),
                joint: None,
                name: format!("{nb}_to_{na}"),
            });
        }
        let mut links = vec![TreeLink {
            name: t.link_name(0, 0),
            module: 0,
            link: 0,
            offset: Isometry3::identity(),
            parent: None,
        }];
        let mut tree_index = vec![usize::MAX; count];
        tree_index[0] = 0;
        let mut queue = std::collections::VecDeque::from([(0usize, 0usize)]);
        while let Some((m, l)) = queue.pop_front() {
            let here = tree_index[id(m, l)];
            let offset = links[here].offset;
            for a in &adj[id(m, l)] {
                let target = id(a.to.0, a.to.1);
                if tree_index[target] != usize::MAX {
                    continue;
                }
                let (origin, child_offset, motion) = match a.joint {
                    None => (offset * a.transform, Isometry3::identity(), Motion::Fixed),
                    Some((index, kind, axis, false)) => (
                        offset * a.transform,
                        Isometry3::identity(),
                        Motion::Joint {
                            index,
                            kind,
                            axis,
                            reversed: false,
                        },
                    ),
                    // `a.transform` is O⁻¹ here: the joint sits at this link's kind frame.
                    Some((index, kind, axis, true)) => (
                        offset,
                        a.transform,
                        Motion::Joint {
                            index,
                            kind,
                            axis: -axis,
                            reversed: true,
                        },
                    ),
                };
                tree_index[target] = links.len();
                links.push(TreeLink {
                    name: t.link_name(a.to.0, a.to.1),
                    module: a.to.0,
                    link: a.to.1,
                    offset: child_offset,
                    parent: Some(TreeJoint {
                        parent: here,
                        name: a.name.clone(),
                        origin,
                        motion,
                    }),
                });
                queue.push_back(a.to);
            }
        }
        LinkTree {
            links,
            joint_count: t.joints().len(),
        }
    }

    /// Tree-frame pose of every link with the root's tree frame at `base` and joint values
    /// `q` (command order; rad or m).
    pub fn forward(&self, q: &[f64], base: &Isometry3<f64>) -> Result<Vec<Isometry3<f64>>> {
        if q.len() != self.joint_count {
            return Err(CoreError::JointCount {
                expected: self.joint_count,
                got: q.len(),
            });
        }
        if let Some(i) = q.iter().position(|a| !a.is_finite()) {
            return Err(CoreError::NotFinite {
                joint: format!("#{i}"),
                value: q[i],
            });
        }
        let mut poses: Vec<Isometry3<f64>> = Vec::with_capacity(self.links.len());
        for l in &self.links {
            let pose = match &l.parent {
                None => *base,
                Some(j) => poses[j.parent] * j.origin * motion(&j.motion, q),
            };
            poses.push(pose);
        }
        Ok(poses)
    }

    /// Bounding box (min, max corners) of every collision shape of robot `t` (the robot
    /// this tree was built from) in the base frame with the joints at zero; its x extent is
    /// a chain's body length.
    pub fn bounds_at_zero(&self, t: &Topology) -> (Vector3<f64>, Vector3<f64>) {
        self.bounds_at(t, &vec![0.0; self.joint_count])
            .unwrap_or((Vector3::repeat(f64::INFINITY), Vector3::repeat(f64::NEG_INFINITY)))
    }

    /// Bounding box (min, max corners) of every collision shape of robot `t` in the base
    /// frame with the joints at `q` (command order): a pose's height and clearance.
    pub fn bounds_at(&self, t: &Topology, q: &[f64]) -> Result<(Vector3<f64>, Vector3<f64>)> {
        let mut lo = Vector3::repeat(f64::INFINITY);
        let mut hi = Vector3::repeat(f64::NEG_INFINITY);
        let poses = self.forward(q, &Isometry3::identity())?;
        for (l, frame) in self.links.iter().zip(self.link_frames(&poses)) {
            for s in t.kind_of(l.module).links[l.link].shapes.iter().filter(|s| s.collision) {
                let (a, b) = s.geometry().bounds_in(&(frame * s.pose()));
                lo = lo.inf(&a);
                hi = hi.sup(&b);
            }
        }
        Ok((lo, hi))
    }

    /// World pose of each link's own (kind) frame from tree-frame poses.
    pub fn link_frames(&self, tree_poses: &[Isometry3<f64>]) -> Vec<Isometry3<f64>> {
        self.links.iter().zip(tree_poses).map(|(l, p)| p * l.offset).collect()
    }

    /// World direction of every robot joint's axis as written in its kind (a reversed joint
    /// reports its kind's axis, not the tree's negated one), in command order.
    pub fn joint_axes(&self, tree_poses: &[Isometry3<f64>]) -> Vec<Vector3<f64>> {
        let mut out = vec![Vector3::zeros(); self.joint_count];
        for l in &self.links {
            if let Some(TreeJoint {
                parent,
                origin,
                motion: Motion::Joint {
                    index, axis, reversed, ..
                },
                ..
            }) = &l.parent
            {
                let frame = tree_poses[*parent] * origin;
                let a = frame.rotation * axis.into_inner();
                out[*index] = if *reversed { -a } else { a };
            }
        }
        out
    }
}

fn motion(m: &Motion, q: &[f64]) -> Isometry3<f64> {
    match *m {
        Motion::Fixed => Isometry3::identity(),
        Motion::Joint { index, kind, axis, .. } => match kind {
            JointType::Revolute | JointType::Continuous => Isometry3::from_parts(
                Translation3::identity(),
                UnitQuaternion::from_axis_angle(&axis, q[index]),
            ),
            JointType::Prismatic => Isometry3::from_parts(
                Translation3::from(axis.into_inner() * q[index]),
                UnitQuaternion::identity(),
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ModuleCatalog;

    /// A module joined by its head (against the kind's direction) puts the same links in
    /// the same world poses as the module-graph kinematics, for any joint angles.
    #[test]
    fn reversed_joints_keep_the_meaning_of_their_angle() {
        let c = ModuleCatalog::builtin();
        let text = "name: t\nmodules:\n  - {name: a, kind: y1}\n  - {name: b, kind: y1}\n\
                    connections:\n  - {from: a.tail, to: b.tail, roll_deg: 30}\n";
        let t = Topology::from_yaml(text, "t", &c).unwrap();
        let tree = LinkTree::new(&t);
        // b is entered by its tail, so its hinge is crossed forwards; a's root is the back.
        let q = [0.7, -0.4];
        let poses = tree.link_frames(&tree.forward(&q, &Isometry3::identity()).unwrap());
        let find = |n: &str| tree.links.iter().position(|l| l.name == n).unwrap();
        // a: back at identity, front = back · O · R(y, 0.7).
        let o = Isometry3::translation(0.036, 0.0, 0.0);
        let ry = |a: f64| {
            Isometry3::from_parts(
                Translation3::identity(),
                UnitQuaternion::from_axis_angle(&Vector3::y_axis(), a),
            )
        };
        assert!((poses[find("a_front")].to_homogeneous() - (o * ry(0.7)).to_homogeneous()).norm() < 1e-12);
        // Now root the same robot at b: a is entered by its tail too (symmetric), so make
        // one entered by its head: c hangs from b's front by its head port.
        let text = "name: t\nmodules:\n  - {name: b, kind: y1}\n  - {name: c, kind: y1}\n\
                    connections:\n  - {from: b.head, to: c.head}\n";
        let t = Topology::from_yaml(text, "t", &c).unwrap();
        let tree = LinkTree::new(&t);
        let q = [0.3, 0.5];
        let frames = tree.link_frames(&tree.forward(&q, &Isometry3::identity()).unwrap());
        let find = |n: &str| tree.links.iter().position(|l| l.name == n).unwrap();
        let (cf, cb) = (frames[find("c_front")], frames[find("c_back")]);
        // Whatever the walk, c's kind relation holds: front = back · O · R(y, q_c).
        assert!(((cb * o * ry(0.5)).to_homogeneous() - cf.to_homogeneous()).norm() < 1e-12);
        // The two head faces meet: c's head port sits on b's head port, normals opposite.
        let bh = frames[find("b_front")] * Isometry3::translation(0.036, 0.0, 0.0);
        let ch = cf * Isometry3::translation(0.036, 0.0, 0.0);
        assert!((bh.translation.vector - ch.translation.vector).norm() < 1e-12);
        let (xb, xc) = (bh.rotation * Vector3::x(), ch.rotation * Vector3::x());
        assert!((xb + xc).norm() < 1e-12);
        // And the kind's axis direction is reported for the reversed hinge.
        let zero = tree.forward(&[0.0, 0.0], &Isometry3::identity()).unwrap();
        let axes = tree.joint_axes(&zero);
        let cf0 = tree.link_frames(&zero)[find("c_front")];
        assert!((axes[1] - cf0.rotation * Vector3::y()).norm() < 1e-9, "{:?}", axes[1]);
    }
}
