//! Contact generation: boxes against the ground by their eight corners (the fast path: every
//! corner within the margin of the plane is a contact, with a warm-start slot of its own),
//! every other pair (round shapes on the ground, robot against obstacle, robot against robot
//! of another tree) through parry's contact manifolds after a bounding-box test. No
//! self-collision inside a tree (decision 0012).

use modbot_core::FrictionCombine;
use nalgebra::{Isometry3, Point3, Vector3};
use rapier3d::parry::bounding_volume::{Aabb, BoundingVolume};
use rapier3d::parry::query::{
    ContactManifold, ContactManifoldsWorkspace, DefaultQueryDispatcher, PersistentQueryDispatcher,
};
use rapier3d::parry::shape::Shape;
use rapier3d::prelude::SharedShape;

use super::NativeParams;
use super::rows::{ContactAt, Rows};
use super::tree::{Kinematics, Model};
use crate::convert::{from_vec, to_pose};
use crate::layout::{Layout, ObstacleSpec};

/// A collision shape on a tree body.
#[derive(Clone)]
pub(crate) struct Collider {
    /// Tree body.
    pub body: usize,
    /// The shape.
    pub shape: SharedShape,
    /// Half extents if it is a box.
    pub half_box: Option<Vector3<f64>>,
    /// Pose in the body.
    pub local: Isometry3<f64>,
    /// Coulomb friction of its surface.
    pub mu: f64,
    /// Its URDF link (layout index).
    pub link: usize,
}

/// The corners of a box of half extents `h`, in a fixed order (slot numbers).
pub(crate) fn corners(h: &Vector3<f64>) -> [Vector3<f64>; 8] {
    let mut out = [Vector3::zeros(); 8];
    for (i, c) in out.iter_mut().enumerate() {
        *c = Vector3::new(
            if i & 1 == 0 { -h.x } else { h.x },
            if i & 2 == 0 { -h.y } else { h.y },
            if i & 4 == 0 { -h.z } else { h.z },
        );
    }
    out
}

/// The shapes of the world and of the trees, and parry's buffers.
pub(crate) struct Collision {
    /// Robot colliders, ordered by tree body (from each tree's centre outwards, so neither
    /// end of a chain is favoured by Gauss–Seidel).
    pub colliders: Vec<Collider>,
    obstacles: Vec<ObstacleSpec>,
    /// Each obstacle's bounding box, loosened by the contact margin (they do not move).
    obstacle_aabbs: Vec<Aabb>,
    ground_mu: f64,
    combine: FrictionCombine,
    ground: SharedShape,
    /// Several trees: robot–robot pairs are tested.
    several_trees: bool,
    /// Per collider this step: world pose and loosened bounding box.
    poses: Vec<Isometry3<f64>>,
    aabbs: Vec<Aabb>,
    manifolds: Vec<ContactManifold<(), ()>>,
    workspace: Option<ContactManifoldsWorkspace>,
}

impl Collision {
    /// The colliders of a layout on the model's tree bodies.
    pub fn new(layout: &Layout, model: &Model, margin: f64) -> Collision {
        let mut colliders: Vec<Collider> = layout
            .bodies
            .iter()
            .enumerate()
            .flat_map(|(b, s)| {
                s.colliders.iter().map(move |c| Collider {
                    body: model.tree_of[b],
                    shape: c.shape.clone(),
                    half_box: c.half_box,
                    local: c.local,
                    mu: c.friction,
                    link: c.link,
                })
            })
            .collect();
        colliders.sort_by_key(|c| c.body);
        Collision {
            obstacle_aabbs: layout
                .obstacles
                .iter()
                .map(|o| o.shape.compute_aabb(&to_pose(&o.pose)).loosened(margin as f32))
                .collect(),
            obstacles: layout.obstacles.clone(),
            ground_mu: layout.ground_friction,
            combine: layout.combine,
            ground: SharedShape::halfspace(rapier3d::math::Vector::Z),
            several_trees: model.trees.len() > 1,
            poses: vec![Isometry3::identity(); colliders.len()],
            aabbs: Vec::with_capacity(colliders.len()),
            colliders,
            manifolds: Vec::new(),
            workspace: None,
        }
    }

    /// The force each contact of the last step put on each URDF link (world frame, N),
    /// added into `out` (indexed by layout link).
    pub fn link_forces(&self, rows: &Rows, dt: f64, out: &mut [Vector3<f64>]) {
        for c in &rows.contacts {
            let f = (c.dirs[0] * c.rows[0].lambda + c.dirs[1] * c.rows[1].lambda + c.dirs[2] * c.rows[2].lambda) / dt;
            let [a, b] = c.colliders;
            if let Some(col) = self.colliders.get(a) {
                out[col.link] += f;
            }
            if let Some(col) = self.colliders.get(b) {
                out[col.link] -= f;
            }
        }
    }

    /// Warm-start slots: eight box corners per collider.
    pub fn slots(&self) -> usize {
        self.colliders.len() * 8
    }

    /// The contacts of the current kinematics, as rows.
    pub fn collide(&mut self, model: &Model, kin: &Kinematics, minv: &[f64], params: &NativeParams, rows: &mut Rows) {
        let margin = params.margin;
        let need_aabbs = !self.obstacles.is_empty() || self.several_trees;
        self.aabbs.clear();
        for ci in 0..self.colliders.len() {
            let c = &self.colliders[ci];
            let b = c.body;
            let pose = kin.poses[b] * c.local;
            self.poses[ci] = pose;
            let ground_mu = self.combine.combine(self.ground_mu, c.mu);
            if let Some(h) = c.half_box {
                let corners = corners(&h);
                for (k, corner) in corners.iter().enumerate() {
                    let x = pose * Point3::from(*corner);
                    if x.z < margin {
                        rows.contact(
                            model,
                            kin,
                            minv,
                            params,
                            ContactAt {
                                bodies: (b, None),
                                point: &x.coords,
                                normal: &Vector3::z(),
                                dist: x.z,
                                mu: ground_mu,
                                key: ci * 8 + k,
                            },
                        );
                        rows.tag_last(ci, None);
                    }
                }
            } else {
                let ground = self.ground.clone();
                self.manifold_contacts(
                    (model, kin, minv, params, rows),
                    (ci, None),
                    ground.as_ref(),
                    &Isometry3::identity(),
                    None,
                    ground_mu,
                );
            }
            if !need_aabbs {
                continue;
            }
            let aabb = self.colliders[ci].shape.compute_aabb(&to_pose(&pose));
            self.aabbs.push(aabb.loosened(margin as f32));
            for oi in 0..self.obstacles.len() {
                if !aabb.intersects(&self.obstacle_aabbs[oi]) {
                    continue;
                }
                let o = &self.obstacles[oi];
                let (shape, at, mu) = (
                    o.shape.clone(),
                    o.pose,
                    self.combine.combine(o.friction, self.colliders[ci].mu),
                );
                self.manifold_contacts(
                    (model, kin, minv, params, rows),
                    (ci, None),
                    shape.as_ref(),
                    &at,
                    None,
                    mu,
                );
            }
        }
        if !self.several_trees {
            return;
        }
        // Robot against robot: pairs of colliders on different trees.
        for ci in 0..self.colliders.len() {
            for cj in ci + 1..self.colliders.len() {
                let (a, b) = (&self.colliders[ci], &self.colliders[cj]);
                if model.bodies[a.body].tree == model.bodies[b.body].tree || !self.aabbs[ci].intersects(&self.aabbs[cj])
                {
                    continue;
                }
                let (shape, at, body, mu) = (a.shape.clone(), self.poses[ci], a.body, a.mu.min(b.mu));
                self.manifold_contacts(
                    (model, kin, minv, params, rows),
                    (cj, Some(ci)),
                    shape.as_ref(),
                    &at,
                    Some(body),
                    mu,
                );
            }
        }
    }

    /// Contacts between collider `ci` and another shape (`other` at `other_pose`, on tree body
    /// `other_body` or fixed), from parry's contact manifolds.
    fn manifold_contacts(
        &mut self,
        (model, kin, minv, params, rows): (&Model, &Kinematics, &[f64], &NativeParams, &mut Rows),
        (ci, other_collider): (usize, Option<usize>),
        other: &dyn Shape,
        other_pose: &Isometry3<f64>,
        other_body: Option<usize>,
        mu: f64,
    ) {
        let c = &self.colliders[ci];
        let (b, shape) = (c.body, c.shape.clone());
        let pose = self.poses[ci];
        let pos12 = to_pose(&(other_pose.inverse() * pose));
        let mut manifolds = std::mem::take(&mut self.manifolds);
        manifolds.clear();
        let ok = DefaultQueryDispatcher
            .contact_manifolds(
                &pos12,
                other,
                shape.as_ref(),
                params.margin as f32,
                &mut manifolds,
                &mut self.workspace,
            )
            .is_ok();
        if ok {
            for m in &manifolds {
                // Normal of the other shape, pointing at this collider.
                let n = other_pose.rotation * from_vec(m.local_n1);
                for p in &m.points {
                    let x = other_pose * Point3::from(from_vec(p.local_p1));
                    rows.contact(
                        model,
                        kin,
                        minv,
                        params,
                        ContactAt {
                            bodies: (b, other_body),
                            point: &x.coords,
                            normal: &n,
                            dist: p.dist as f64,
                            mu,
                            key: usize::MAX,
                        },
                    );
                    rows.tag_last(ci, other_collider);
                }
            }
        }
        self.manifolds = manifolds;
    }
}
