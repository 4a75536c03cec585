//! Connectors, module types and the multi-level topology map of the digital-hormone
//! controller (seed-003 §3.2, §4; decision record 0029).

use std::fmt;

/// One of a module's four connectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Side {
    /// Back.
    B,
    /// Front.
    F,
    /// Right.
    R,
    /// Left.
    L,
}

impl Side {
    /// All four, in code order.
    pub const ALL: [Side; 4] = [Side::B, Side::F, Side::R, Side::L];

    /// The seed's code: B 1, F 2, R 3, L 4 (0 is Open).
    pub fn code(self) -> u16 {
        self.index() as u16 + 1
    }

    /// 0 … 3.
    pub fn index(self) -> usize {
        match self {
            Side::B => 0,
            Side::F => 1,
            Side::R => 2,
            Side::L => 3,
        }
    }

    /// The side of a code 1 … 4.
    pub fn from_code(code: u16) -> Option<Side> {
        match code {
            1 => Some(Side::B),
            2 => Some(Side::F),
            3 => Some(Side::R),
            4 => Some(Side::L),
            _ => None,
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Side::B => "B",
            Side::F => "F",
            Side::R => "R",
            Side::L => "L",
        };
        f.write_str(s)
    }
}

impl std::str::FromStr for Side {
    type Err = String;

    fn from_str(s: &str) -> Result<Side, String> {
        match s {
            "B" | "b" | "back" => Ok(Side::B),
            "F" | "f" | "front" => Ok(Side::F),
            "R" | "r" | "right" => Ok(Side::R),
            "L" | "l" | "left" => Ok(Side::L),
            _ => Err(format!("`{s}` is not a connector (B, F, R or L)")),
        }
    }
}

/// A connector's status: open, or the neighbour's side it touches (Table 3b).
pub type Status = Option<Side>;

/// The code of a status: Open 0, B 1, F 2, R 3, L 4.
pub fn status_code(s: Status) -> u16 {
    s.map_or(0, Side::code)
}

/// The module type, recomputed from all four statuses (never OR-ed into a running value,
/// H12): B + 8F + 64R + 512L, 0 … 2340.
pub fn module_type(status: &[Status; 4]) -> u16 {
    status.iter().enumerate().map(|(i, s)| status_code(*s) << (3 * i)).sum()
}

/// One hop of a path: the near module's side and the far module's side it touches.
pub type Hop = (Side, Side);

/// A node of the map: a module, its connector statuses as far as known, its children.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MapNode {
    /// Statuses (index = [`Side::index`]).
    pub status: [Status; 4],
    /// The module behind each connector, if known (never the parent's side).
    pub children: [Option<Box<MapNode>>; 4],
    /// Its tilt sensor (rolled 90°), as its handshakes said; `None` until one has.
    pub pitched: Option<bool>,
}

impl MapNode {
    /// Number of modules in this subtree (this one included).
    pub fn count(&self) -> usize {
        1 + self.children.iter().flatten().map(|c| c.count()).sum::<usize>()
    }

    /// The node at the end of `path` (hops from this node outward), creating nodes on the
    /// way; each hop sets both ends' statuses.
    pub fn insert(&mut self, path: &[Hop]) -> &mut MapNode {
        let mut node = self;
        for &(near, far) in path {
            node.status[near.index()] = Some(far);
            let child = node.children[near.index()].get_or_insert_with(Box::default);
            child.status[far.index()] = Some(near);
            node = child;
        }
        node
    }

    /// The node at the end of `path`, if the map has it.
    pub fn get(&self, path: &[Hop]) -> Option<&MapNode> {
        let mut node = self;
        for &(near, far) in path {
            if node.status[near.index()] != Some(far) {
                return None;
            }
            node = node.children[near.index()].as_deref()?;
        }
        Some(node)
    }

    /// Opens `side` of the node at the end of `path` and deletes what was behind it.
    pub fn open(&mut self, path: &[Hop], side: Side) {
        let mut node = self;
        for &(near, far) in path {
            if node.status[near.index()] != Some(far) {
                return;
            }
            match node.children[near.index()].as_deref_mut() {
                Some(c) => node = c,
                None => return,
            }
        }
        node.status[side.index()] = None;
        node.children[side.index()] = None;
    }

    /// Every path from this node to a module `depth` hops away.
    pub fn paths_at(&self, depth: usize) -> Vec<Vec<Hop>> {
        if depth == 0 {
            return vec![Vec::new()];
        }
        let mut out = Vec::new();
        for side in Side::ALL {
            if let (Some(far), Some(child)) = (self.status[side.index()], &self.children[side.index()]) {
                for mut rest in child.paths_at(depth - 1) {
                    rest.insert(0, (side, far));
                    out.push(rest);
                }
            }
        }
        out
    }
}

/// What a module knows of its organism: its own node (root) and the modules up to the
/// mapping level.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TopologyMap {
    /// The module itself.
    pub root: MapNode,
}

impl TopologyMap {
    /// Own connector statuses.
    pub fn status(&self) -> &[Status; 4] {
        &self.root.status
    }

    /// Own module type.
    pub fn module_type(&self) -> u16 {
        module_type(&self.root.status)
    }

    /// Modules known, self included.
    pub fn nodes(&self) -> usize {
        self.root.count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Side::*;

    fn ty(c: &[(Side, Side)]) -> u16 {
        let mut s = [None; 4];
        for (mine, theirs) in c {
            s[mine.index()] = Some(*theirs);
        }
        module_type(&s)
    }

    /// The seed's worked types (§4.1) and the type space (625 values in 0 … 2340).
    #[test]
    fn module_types_are_the_seeds() {
        assert_eq!(ty(&[(L, F), (R, F)]), 1152);
        assert_eq!(ty(&[(F, L)]), 32);
        assert_eq!(ty(&[(F, R)]), 24);
        assert_eq!((ty(&[(B, F)]), ty(&[(B, F), (F, B)]), ty(&[(F, B)])), (2, 10, 8));
        assert_eq!(ty(&[(B, F), (L, F)]), 1026);
        assert_eq!(ty(&[(B, B), (F, B), (R, B)]), 73);
        assert_eq!(ty(&[(B, B), (F, B)]), 9);
        assert_eq!(ty(&[(B, R), (F, B)]), 11);
        assert_eq!(ty(&[(B, L), (F, L), (R, L), (L, L)]), 2340);
        let mut all = std::collections::BTreeSet::new();
        let opts = [None, Some(B), Some(F), Some(R), Some(L)];
        for a in opts {
            for b in opts {
                for c in opts {
                    for d in opts {
                        all.insert(module_type(&[a, b, c, d]));
                    }
                }
            }
        }
        assert_eq!(all.len(), 625);
        assert_eq!((all.first(), all.last()), (Some(&0), Some(&2340)));
    }

    #[test]
    fn map_nodes_insert_find_and_open() {
        let mut m = MapNode::default();
        m.insert(&[(F, B), (F, B)]);
        m.insert(&[(B, F)]);
        assert_eq!(m.count(), 4);
        assert_eq!(module_type(&m.status), 10);
        assert!(m.get(&[(F, B), (F, B)]).is_some());
        assert_eq!(m.paths_at(2), vec![vec![(F, B), (F, B)]]);
        m.open(&[(F, B)], F);
        assert_eq!(m.count(), 3);
        assert_eq!(m.get(&[(F, B)]).map(|n| n.status), Some([Some(F), None, None, None]));
    }
}
