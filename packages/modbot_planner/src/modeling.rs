//! Modelling (seed-000 §6.3): the shared map of the strategic mission, centred on Module#1,
//! from what each module's initial scan measured (§6.2), as a pure function.
//!
//! Every module knows its global heading (its compass; the source read the simulator's
//! yaw), so each scan's measurements are offsets in **world axes** from the scanning
//! module's reference point (the foot plate's lower tip) to the seen object's reference
//! point; the map has world axes too, with its origin at Module#1's reference point.
//!
//! [`model`] propagates as the source's shared variables do:
//! 1. Module#1 is at (0, 0) and scanned. It writes the position of every module and object
//!    it saw and marks those modules scanned.
//! 2. In rounds, each module scanned in the previous round (in module order) adds its own
//!    position to its measurements and writes the modules and objects not yet placed,
//!    marking the modules scanned. A position once written is never recomputed
//!    (first come, first kept), for modules and objects alike.
//! 3. It ends when a round places nothing new: every module scanned, or the rest never
//!    seen by a scanned module — then [`ModelingError::Unscanned`] names them (never a
//!    wait).
//!
//! Modules are numbered by index (0 = Module#1). Decision record 0047.

use std::collections::BTreeMap;

use modbot_core::scenario::Tag;

use crate::assembly::DETPOINT_M;

/// What a module saw.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Seen {
    /// Another module (index; 0 = Module#1).
    Module(usize),
    /// A tagged object, by its name.
    Object {
        /// Its name (the world's obstacle or marker name).
        name: String,
        /// What it was recognised as.
        tag: Tag,
    },
}

/// One measurement of a scan.
#[derive(Debug, Clone, PartialEq)]
pub struct Sighting {
    /// What was seen.
    pub seen: Seen,
    /// From the scanning module's reference point to the seen one's, world axes, m.
    pub offset: [f64; 2],
    /// The seen object's heading, rad: a module's own compass, an object's published yaw.
    pub heading: f64,
}

/// One module's scan.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModuleScan {
    /// The module's own heading (its compass), rad.
    pub heading: f64,
    /// What it measured, in the order it measured them.
    pub sightings: Vec<Sighting>,
}

/// A module or an object on the map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placed {
    /// Its reference point relative to Module#1's, world axes, m.
    pub position: [f64; 2],
    /// Its heading, rad.
    pub heading: f64,
    /// The module whose measurement placed it (None: Module#1 itself).
    pub by: Option<usize>,
    /// How many measurements were added up from Module#1 to place it.
    pub hops: usize,
}

/// The map: every module and every object seen.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneModel {
    /// Per module (0 = Module#1), or None if unscanned.
    pub modules: Vec<Option<Placed>>,
    /// Every object seen, by name, with its tag.
    pub objects: BTreeMap<String, (Tag, Placed)>,
    /// Rounds run (1: Module#1 alone wrote).
    pub rounds: usize,
}

impl SceneModel {
    /// The objects of a tag, by name.
    pub fn tagged(&self, tag: Tag) -> impl Iterator<Item = (&str, &Placed)> {
        self.objects
            .iter()
            .filter(move |(_, (t, _))| *t == tag)
            .map(|(n, (_, p))| (n.as_str(), p))
    }
}

/// Why the map could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelingError {
    /// No scans at all.
    #[error("no modules: the model starts from Module#1's scan")]
    NoModules,
    /// A sighting of a module that is not in the scans.
    #[error("Module#{seer}'s scan: it saw module index {seen}, but there are {count} modules")]
    UnknownModule {
        /// The scanning module (1-based, as the source numbers them).
        seer: usize,
        /// The index seen.
        seen: usize,
        /// Number of modules.
        count: usize,
    },
    /// A module that saw itself.
    #[error("Module#{0}'s scan: it saw itself")]
    SelfSighting(usize),
    /// A measurement that is not a finite number.
    #[error("Module#{seer}'s scan: {what} is not a finite number")]
    NotFinite {
        /// The scanning module (1-based).
        seer: usize,
        /// Which value.
        what: String,
    },
    /// One object name recognised as two different things.
    #[error("object `{name}` was seen as both {a:?} and {b:?}")]
    TagConflict {
        /// The name.
        name: String,
        /// One tag.
        a: Tag,
        /// The other.
        b: Tag,
    },
    /// Modules no scanned module saw: the map leaves them out.
    #[error("{}: no scanned module saw them", unscanned_list(.modules))]
    Unscanned {
        /// Their indices (0 = Module#1).
        modules: Vec<usize>,
        /// The map of everything else.
        model: Box<SceneModel>,
    },
}

fn unscanned_list(modules: &[usize]) -> String {
    let names: Vec<String> = modules.iter().map(|m| format!("Module#{}", m + 1)).collect();
    format!("{} unscanned", names.join(", "))
}

/// A seen module's reference point from the offset to its DetPoint (§6.2 step 3): the
/// DetPoint is [`DETPOINT_M`] ahead of the reference point along its heading, so the
/// reference point is the DetPoint − 0.102 · (cos γ, sin γ).
pub fn module_reference(detpoint_offset: [f64; 2], heading: f64) -> [f64; 2] {
    [
        detpoint_offset[0] - DETPOINT_M * heading.cos(),
        detpoint_offset[1] - DETPOINT_M * heading.sin(),
    ]
}

fn check(scans: &[ModuleScan]) -> Result<(), ModelingError> {
    let mut tags: BTreeMap<&str, Tag> = BTreeMap::new();
    for (i, s) in scans.iter().enumerate() {
        let seer = i + 1;
        if !s.heading.is_finite() {
            return Err(ModelingError::NotFinite {
                seer,
                what: "its heading".into(),
            });
        }
        for (k, g) in s.sightings.iter().enumerate() {
            if g.offset.iter().chain([&g.heading]).any(|v| !v.is_finite()) {
                return Err(ModelingError::NotFinite {
                    seer,
                    what: format!("sighting {k} ({:?}, {:?}, heading {})", g.seen, g.offset, g.heading),
                });
            }
            match &g.seen {
                Seen::Module(j) if *j >= scans.len() => {
                    return Err(ModelingError::UnknownModule {
                        seer,
                        seen: *j,
                        count: scans.len(),
                    });
                }
                Seen::Module(j) if *j == i => return Err(ModelingError::SelfSighting(seer)),
                Seen::Module(_) => {}
                Seen::Object { name, tag } => {
                    if let Some(t) = tags.insert(name, *tag)
                        && t != *tag
                    {
                        return Err(ModelingError::TagConflict {
                            name: name.clone(),
                            a: t,
                            b: *tag,
                        });
                    }
                }
            }
        }
    }
    Ok(())
}

/// The map from every module's scan (index 0 = Module#1), propagated from Module#1 as the
/// module doc says.
pub fn model(scans: &[ModuleScan]) -> Result<SceneModel, ModelingError> {
    if scans.is_empty() {
        return Err(ModelingError::NoModules);
    }
    check(scans)?;
    let mut modules: Vec<Option<Placed>> = vec![None; scans.len()];
    modules[0] = Some(Placed {
        position: [0.0, 0.0],
        heading: scans[0].heading,
        by: None,
        hops: 0,
    });
    let mut objects: BTreeMap<String, (Tag, Placed)> = BTreeMap::new();
    let mut frontier = vec![0];
    let mut rounds = 0;
    while !frontier.is_empty() {
        rounds += 1;
        let mut next = Vec::new();
        for &i in &frontier {
            let Some(me) = modules[i] else { continue };
            for g in &scans[i].sightings {
                let placed = Placed {
                    position: [me.position[0] + g.offset[0], me.position[1] + g.offset[1]],
                    heading: g.heading,
                    by: Some(i),
                    hops: me.hops + 1,
                };
                match &g.seen {
                    Seen::Module(j) => {
                        if modules[*j].is_none() {
                            // A module's heading is its own compass.
                            modules[*j] = Some(Placed {
                                heading: scans[*j].heading,
                                ..placed
                            });
                            next.push(*j);
                        }
                    }
                    Seen::Object { name, tag } => {
                        objects.entry(name.clone()).or_insert((*tag, placed));
                    }
                }
            }
        }
        next.sort_unstable();
        frontier = next;
    }
    let model = SceneModel {
        modules,
        objects,
        rounds,
    };
    let unscanned: Vec<usize> = (0..model.modules.len())
        .filter(|&m| model.modules[m].is_none())
        .collect();
    if unscanned.is_empty() {
        Ok(model)
    } else {
        Err(ModelingError::Unscanned {
            modules: unscanned,
            model: Box::new(model),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(j: usize, offset: [f64; 2]) -> Sighting {
        Sighting {
            seen: Seen::Module(j),
            offset,
            heading: 0.0,
        }
    }

    fn object(name: &str, tag: Tag, offset: [f64; 2], heading: f64) -> Sighting {
        Sighting {
            seen: Seen::Object { name: name.into(), tag },
            offset,
            heading,
        }
    }

    fn scan(heading: f64, sightings: Vec<Sighting>) -> ModuleScan {
        ModuleScan { heading, sightings }
    }

    fn at(m: &SceneModel, i: usize) -> ([f64; 2], Option<usize>, usize) {
        let p = m.modules[i].unwrap_or_else(|| panic!("module {i} unplaced"));
        (p.position, p.by, p.hops)
    }

    /// Positions add up along who saw whom, from Module#1 = (0, 0); a module placed by
    /// another keeps its own compass heading; objects come from whoever saw them.
    #[test]
    fn positions_propagate_through_modules_that_saw_each_other() {
        let scans = vec![
            scan(
                0.5,
                vec![
                    module(1, [0.5, 0.25]),
                    object("ground", Tag::GroundObstacle, [1.0, 0.0], 0.0),
                ],
            ),
            scan(1.0, vec![module(0, [-0.5, -0.25]), module(2, [0.25, 0.5])]),
            scan(
                1.5,
                vec![
                    module(3, [-1.0, 0.125]),
                    object("target", Tag::Target, [2.0, -0.5], 0.25),
                ],
            ),
            scan(2.0, vec![object("lath", Tag::Lath, [0.5, 0.5], -0.5)]),
        ];
        let m = model(&scans).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(at(&m, 0), ([0.0, 0.0], None, 0));
        assert_eq!(at(&m, 1), ([0.5, 0.25], Some(0), 1));
        assert_eq!(at(&m, 2), ([0.75, 0.75], Some(1), 2));
        assert_eq!(at(&m, 3), ([-0.25, 0.875], Some(2), 3));
        assert_eq!(m.modules[3].map(|p| p.heading), Some(2.0));
        assert_eq!(m.rounds, 4);
        let obj = |n: &str| m.objects[n].1;
        assert_eq!(obj("ground").position, [1.0, 0.0]);
        assert_eq!((obj("target").position, obj("target").heading), ([2.75, 0.25], 0.25));
        assert_eq!(
            (obj("lath").position, obj("lath").by, obj("lath").hops),
            ([0.25, 1.375], Some(3), 4)
        );
        assert_eq!(m.tagged(Tag::Lath).map(|(n, _)| n).collect::<Vec<_>>(), ["lath"]);
    }

    /// First come, first kept: what Module#1 wrote is not recomputed from a later
    /// measurement; within a round the lower module index writes first.
    #[test]
    fn positions_already_marked_are_not_recomputed() {
        let scans = vec![
            scan(
                0.0,
                vec![
                    module(2, [0.0, 1.0]),
                    module(1, [1.0, 0.0]),
                    object("t", Tag::Target, [4.0, 0.0], 0.0),
                ],
            ),
            // Module#2 disagrees about Module#3 and the target, and sees Module#4 first.
            scan(
                0.0,
                vec![
                    module(2, [5.0, 5.0]),
                    module(3, [0.5, 0.0]),
                    object("t", Tag::Target, [9.0, 9.0], 0.0),
                ],
            ),
            scan(0.0, vec![module(3, [7.0, 7.0]), module(1, [9.0, 9.0])]),
            scan(0.0, vec![]),
        ];
        let m = model(&scans).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(at(&m, 1), ([1.0, 0.0], Some(0), 1));
        assert_eq!(at(&m, 2), ([0.0, 1.0], Some(0), 1));
        assert_eq!(at(&m, 3), ([1.5, 0.0], Some(1), 2));
        assert_eq!(m.objects["t"].1.position, [4.0, 0.0]);
    }

    /// Modules no scanned module saw are named, whether nobody saw them or only each other
    /// (a loop that never reaches Module#1's side), and the rest of the map is kept.
    #[test]
    fn unscanned_modules_are_named() {
        let scans = vec![
            scan(0.0, vec![module(1, [1.0, 0.0])]),
            scan(0.0, vec![object("g", Tag::GroundObstacle, [1.0, 0.0], 0.0)]),
            scan(0.0, vec![module(3, [1.0, 0.0]), module(0, [1.0, 0.0])]),
            scan(0.0, vec![module(2, [-1.0, 0.0])]),
            scan(0.0, vec![]),
        ];
        let e = model(&scans).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Module#3, Module#4, Module#5 unscanned: no scanned module saw them"
        );
        let ModelingError::Unscanned { modules, model } = e else {
            panic!("{e}")
        };
        assert_eq!(modules, [2, 3, 4]);
        assert_eq!(model.objects["g"].1.position, [2.0, 0.0]);
        // A lone Module#1 is a whole map.
        assert_eq!(model_of_one().modules.len(), 1);
    }

    fn model_of_one() -> SceneModel {
        model(&[scan(0.3, vec![object("t", Tag::Target, [1.0, 2.0], 0.0)])]).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The reference point is 0.102 m behind the DetPoint along the seen module's heading.
    #[test]
    fn reference_point_from_the_detpoint() {
        assert_eq!(module_reference([1.0, 0.0], 0.0), [1.0 - DETPOINT_M, 0.0]);
        let r = module_reference([1.0, 0.5], std::f64::consts::FRAC_PI_2);
        assert!(
            (r[0] - 1.0).abs() < 1e-15 && (r[1] - (0.5 - DETPOINT_M)).abs() < 1e-15,
            "{r:?}"
        );
    }

    #[test]
    fn bad_scans_are_refused_by_name() {
        assert_eq!(model(&[]).unwrap_err(), ModelingError::NoModules);
        let cases = [
            (
                vec![scan(0.0, vec![module(3, [1.0, 0.0])]), scan(0.0, vec![])],
                "Module#1's scan: it saw module index 3, but there are 2 modules",
            ),
            (
                vec![scan(0.0, vec![]), scan(0.0, vec![module(1, [1.0, 0.0])])],
                "Module#2's scan: it saw itself",
            ),
            (
                vec![scan(0.0, vec![]), scan(f64::NAN, vec![])],
                "Module#2's scan: its heading is not a finite number",
            ),
            (
                vec![scan(0.0, vec![object("x", Tag::Lath, [f64::INFINITY, 0.0], 0.0)])],
                "Module#1's scan: sighting 0",
            ),
            (
                vec![
                    scan(0.0, vec![object("x", Tag::Lath, [1.0, 0.0], 0.0)]),
                    scan(0.0, vec![object("x", Tag::Target, [1.0, 0.0], 0.0)]),
                ],
                "object `x` was seen as both Lath and Target",
            ),
        ];
        for (scans, says) in cases {
            let e = model(&scans).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
    }
}
