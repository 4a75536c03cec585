//! The primitive actions of spec §3.4 and joint multi-robot steps (§3.5).

use std::fmt;

use crate::molemod::grid::{Cell, GridState};
use crate::molemod::task::{Options, ShiftSupport};

/// A side or direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dir {
    /// Row − 1.
    Up,
    /// Row + 1.
    Down,
    /// Column − 1.
    Left,
    /// Column + 1.
    Right,
}

impl Dir {
    fn delta(self) -> (isize, isize) {
        match self {
            Dir::Up => (-1, 0),
            Dir::Down => (1, 0),
            Dir::Left => (0, -1),
            Dir::Right => (0, 1),
        }
    }
    fn side(self) -> isize {
        if self == Dir::Left { -1 } else { 1 }
    }
}

/// What a primitive action does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The robot passes into the neighbouring module.
    Move,
    /// The robot lifts its block onto the neighbouring block (stairs up).
    Lift,
    /// The robot puts its block down beside the block below (stairs down).
    Putdown,
    /// The robot shifts its block sideways onto a supported free cell.
    Shift,
    /// Robot A raises its block straight up; robot B, in the module above A's neighbour, catches it.
    CoopUp,
    /// The inverse of COOP_UP.
    CoopDown,
}

/// A primitive action of one robot (two for COOP), with its footprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Action {
    /// What.
    pub kind: Kind,
    /// Cell (row, column) of the acting robot (robot A for COOP_UP, robot B's block for COOP_DOWN).
    pub at: (isize, isize),
    /// Direction (MOVE) or side (the others).
    pub dir: Dir,
    #[serde(skip)]
    footprint: [usize; 6],
    #[serde(skip)]
    footprint_len: u8,
    #[serde(skip)]
    robots: [usize; 2],
    #[serde(skip)]
    robots_len: u8,
    #[serde(skip)]
    writes: [(usize, Cell); 4],
    #[serde(skip)]
    writes_len: u8,
}

impl Action {
    /// Cells the action reads or writes.
    pub fn footprint(&self) -> &[usize] {
        &self.footprint[..self.footprint_len as usize]
    }
    /// Cell indices of the robots it uses.
    pub fn robots(&self) -> &[usize] {
        &self.robots[..self.robots_len as usize]
    }
    /// Its cost d(m).
    pub fn cost(&self, o: &Options) -> u32 {
        match self.kind {
            Kind::Move => o.costs.r#move,
            Kind::Lift => o.costs.lift,
            Kind::Putdown => o.costs.putdown,
            Kind::Shift => o.costs.shift,
            Kind::CoopUp | Kind::CoopDown => o.costs.coop,
        }
    }
    /// Applies the effect (preconditions are the generator's business; see [`valid`]).
    pub fn apply(&self, g: &mut GridState) {
        for &(i, c) in &self.writes[..self.writes_len as usize] {
            g.set(i, c);
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = match self.kind {
            Kind::Move => "MOVE",
            Kind::Lift => "LIFT",
            Kind::Putdown => "PUTDOWN",
            Kind::Shift => "SHIFT",
            Kind::CoopUp => "COOP_UP",
            Kind::CoopDown => "COOP_DOWN",
        };
        write!(f, "{k} {:?} at ({}, {})", self.dir, self.at.0, self.at.1)
    }
}

fn build(
    kind: Kind,
    at: (isize, isize),
    dir: Dir,
    g: &GridState,
    cells: &[(isize, isize)],
    robots: &[(isize, isize)],
    writes: &[((isize, isize), Cell)],
) -> Action {
    let idx = |p: &(isize, isize)| g.index(p.0, p.1).unwrap_or(usize::MAX);
    let mut a = Action {
        kind,
        at,
        dir,
        footprint: [usize::MAX; 6],
        footprint_len: 0,
        robots: [usize::MAX; 2],
        robots_len: robots.len() as u8,
        writes: [(usize::MAX, Cell::Empty); 4],
        writes_len: writes.len() as u8,
    };
    let mut inside: Vec<usize> = cells.iter().map(idx).filter(|i| *i != usize::MAX).collect();
    inside.sort_unstable();
    inside.dedup();
    a.footprint_len = inside.len() as u8;
    a.footprint[..inside.len()].copy_from_slice(&inside);
    for (k, r) in robots.iter().enumerate() {
        a.robots[k] = idx(r);
    }
    for (k, (p, c)) in writes.iter().enumerate() {
        a.writes[k] = (idx(p), *c);
    }
    a
}

/// Every single-robot action of the robot at (r, c) that is valid in `g`.
pub fn single_actions(g: &GridState, r: isize, c: isize, o: &Options, out: &mut Vec<Action>) {
    let p = (r, c);
    for dir in [Dir::Up, Dir::Down, Dir::Left, Dir::Right] {
        let (dr, dc) = dir.delta();
        let q = (r + dr, c + dc);
        if g.index(q.0, q.1).is_some_and(|i| g.cell(i) == Cell::Module) {
            out.push(build(
                Kind::Move,
                p,
                dir,
                g,
                &[p, q],
                &[p],
                &[(p, Cell::Module), (q, Cell::Robot)],
            ));
        }
    }
    for dir in [Dir::Left, Dir::Right] {
        let s = dir.side();
        // LIFT: module beside, free above it, free above the block (swing space).
        if g.module_at(r, c + s) && g.free(r - 1, c + s) && g.free(r - 1, c) {
            out.push(build(
                Kind::Lift,
                p,
                dir,
                g,
                &[p, (r, c + s), (r - 1, c + s), (r - 1, c)],
                &[p],
                &[(p, Cell::Empty), ((r - 1, c + s), Cell::Robot)],
            ));
        }
        // PUTDOWN: module below, free beside it and beside the block, nothing on top.
        if g.module_at(r + 1, c) && g.free(r + 1, c + s) && g.free(r, c + s) && g.clear(r - 1, c) {
            out.push(build(
                Kind::Putdown,
                p,
                dir,
                g,
                &[p, (r + 1, c), (r + 1, c + s), (r, c + s), (r - 1, c)],
                &[p],
                &[(p, Cell::Empty), ((r + 1, c + s), Cell::Robot)],
            ));
        }
        // SHIFT: free beside, supported, nothing on top.
        let support = match o.shift_support {
            ShiftSupport::Target => g.module_at(r + 1, c + s),
            ShiftSupport::Block => g.module_at(r + 1, c),
            ShiftSupport::Both => g.module_at(r + 1, c + s) && g.module_at(r + 1, c),
        };
        if g.free(r, c + s) && support && g.clear(r - 1, c) {
            // The footprint holds what the precondition reads: the support under the block
            // only in the `block` and `both` readings.
            let below_block = if o.shift_support == ShiftSupport::Target {
                (r - 1, c)
            } else {
                (r + 1, c)
            };
            out.push(build(
                Kind::Shift,
                p,
                dir,
                g,
                &[p, (r, c + s), (r + 1, c + s), below_block, (r - 1, c)],
                &[p],
                &[(p, Cell::Empty), ((r, c + s), Cell::Robot)],
            ));
        }
    }
}

/// Every cooperative action led by the robot at (r, c) (A for COOP_UP, B for COOP_DOWN).
pub fn coop_actions(g: &GridState, r: isize, c: isize, out: &mut Vec<Action>) {
    let p = (r, c);
    for dir in [Dir::Left, Dir::Right] {
        let s = dir.side();
        // COOP_UP: A at p; N = (r, c+s) module without robot; M = (r−1, c+s) holds B; t = (r−1, c) free.
        let n = (r, c + s);
        let m = (r - 1, c + s);
        let t = (r - 1, c);
        if g.index(n.0, n.1).is_some_and(|i| g.cell(i) == Cell::Module)
            && g.index(m.0, m.1).is_some_and(|i| g.cell(i) == Cell::Robot)
            && g.free(t.0, t.1)
        {
            out.push(build(
                Kind::CoopUp,
                p,
                dir,
                g,
                &[p, n, m, t],
                &[p, m],
                &[(p, Cell::Empty), (n, Cell::Robot), (m, Cell::Module), (t, Cell::Robot)],
            ));
        }
        // COOP_DOWN led by B in X at p: the block goes down to d = (r+1, c); M = (r, c+s) module
        // without robot; A in N = (r+1, c+s); d free; nothing on top of X.
        let m = (r, c + s);
        let n = (r + 1, c + s);
        let d = (r + 1, c);
        if g.index(m.0, m.1).is_some_and(|i| g.cell(i) == Cell::Module)
            && g.index(n.0, n.1).is_some_and(|i| g.cell(i) == Cell::Robot)
            && g.free(d.0, d.1)
            && g.clear(r - 1, c)
        {
            out.push(build(
                Kind::CoopDown,
                p,
                dir,
                g,
                &[p, m, n, d, (r - 1, c)],
                &[p, n],
                &[(p, Cell::Empty), (m, Cell::Robot), (n, Cell::Module), (d, Cell::Robot)],
            ));
        }
    }
}

/// A joint step: the actions of the robots that act (the others idle).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct JointStep {
    /// The actions, each on disjoint cells.
    pub actions: Vec<Action>,
}

impl JointStep {
    /// Cost: Σ d(m), plus the step penalty when it applies.
    pub fn cost(&self, o: &Options, robots: u32) -> u32 {
        // Saturating: a path cost never wraps (the task bounds each cost; this is the floor).
        self.actions
            .iter()
            .fold(penalty(o, robots), |d, a| d.saturating_add(a.cost(o)))
    }
}

/// The +1 step penalty (spec §3.6, Q2).
pub fn penalty(o: &Options, robots: u32) -> u32 {
    match o.step_penalty {
        crate::molemod::task::StepPenalty::Always => 1,
        crate::molemod::task::StepPenalty::Never => 0,
        crate::molemod::task::StepPenalty::Auto => u32::from(robots > 1),
    }
}

/// Is every module resting on the ground or on a module? (optional constraint, spec Q5)
pub fn supported(g: &GridState) -> bool {
    let rows = g.rows() as isize;
    g.module_cells().into_iter().all(|i| {
        let (r, c) = g.pos(i);
        r == rows - 1 || g.module_at(r + 1, c)
    })
}

/// Do the modules form one 4-connected structure? (optional constraint, spec Q5)
pub fn connected(g: &GridState) -> bool {
    let cells = g.module_cells();
    let Some(&start) = cells.first() else { return true };
    let mut seen = vec![false; g.rows() * g.cols()];
    let mut stack = vec![start];
    seen[start] = true;
    let mut count = 1;
    while let Some(i) = stack.pop() {
        let (r, c) = g.pos(i);
        for (dr, dc) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
            if let Some(j) = g.index(r + dr, c + dc)
                && !seen[j]
                && g.module_at(r + dr, c + dc)
            {
                seen[j] = true;
                count += 1;
                stack.push(j);
            }
        }
    }
    count == cells.len()
}

/// Every valid joint step from `g`, with the resulting state.
pub fn joint_steps(g: &GridState, o: &Options) -> Vec<(JointStep, GridState)> {
    let robots = g.robot_cells();
    // Per robot: its single actions, and the COOP actions it leads.
    let mut per_robot: Vec<Vec<Action>> = Vec::with_capacity(robots.len());
    for &i in &robots {
        let (r, c) = g.pos(i);
        let mut acts = Vec::new();
        single_actions(g, r, c, o, &mut acts);
        if o.coop {
            coop_actions(g, r, c, &mut acts);
        }
        per_robot.push(acts);
    }
    let mut e = Enumerator {
        robots: &robots,
        per_robot: &per_robot,
        g,
        o,
        chosen: Vec::new(),
        busy: [0; 4],
        used: vec![false; robots.len()],
        out: Vec::new(),
    };
    e.rec(0);
    e.out
}

/// Depth-first enumeration of joint steps: robot k idles or takes one of its actions whose
/// footprint is disjoint from the actions already chosen.
struct Enumerator<'a> {
    robots: &'a [usize],
    per_robot: &'a [Vec<Action>],
    g: &'a GridState,
    o: &'a Options,
    chosen: Vec<Action>,
    busy: [u64; 4],
    used: Vec<bool>,
    out: Vec<(JointStep, GridState)>,
}

impl Enumerator<'_> {
    fn rec(&mut self, k: usize) {
        if k == self.robots.len() {
            if !self.chosen.is_empty() {
                let mut next = *self.g;
                for a in &self.chosen {
                    a.apply(&mut next);
                }
                if (!self.o.require_support || supported(&next)) && (!self.o.require_connected || connected(&next)) {
                    self.out.push((
                        JointStep {
                            actions: self.chosen.clone(),
                        },
                        next,
                    ));
                }
            }
            return;
        }
        // Idle, or already acting as the partner of an earlier robot's COOP.
        self.rec(k + 1);
        if self.used[k] {
            return;
        }
        for a in &self.per_robot[k] {
            if a.footprint().iter().any(|&i| self.busy[i >> 6] >> (i & 63) & 1 == 1) {
                continue;
            }
            // A COOP's second robot: an earlier one may join only if it stayed idle.
            let partners: Vec<usize> = a
                .robots()
                .iter()
                .filter(|&&cell| cell != self.robots[k])
                .filter_map(|cell| self.robots.iter().position(|r| r == cell))
                .collect();
            if partners.iter().any(|&j| self.used[j]) {
                continue;
            }
            for &i in a.footprint() {
                self.busy[i >> 6] |= 1 << (i & 63);
            }
            self.used[k] = true;
            for &j in &partners {
                self.used[j] = true;
            }
            self.chosen.push(*a);
            self.rec(k + 1);
            self.chosen.pop();
            self.used[k] = false;
            for &j in &partners {
                self.used[j] = false;
            }
            for &i in a.footprint() {
                self.busy[i >> 6] &= !(1 << (i & 63));
            }
        }
    }
}

/// Is `a` valid in `g`? (regenerates the robot's actions and looks for it)
pub fn valid(g: &GridState, a: &Action, o: &Options) -> bool {
    let (r, c) = a.at;
    if !g.index(r, c).is_some_and(|i| g.cell(i) == Cell::Robot) {
        return false;
    }
    let mut acts = Vec::new();
    single_actions(g, r, c, o, &mut acts);
    if o.coop {
        coop_actions(g, r, c, &mut acts);
    }
    acts.contains(a)
}
