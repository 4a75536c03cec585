//! A* with reopening (the source's Listing 3.1) on a binary heap with lazy deletion, ties
//! broken on lower h, then on insertion order (deterministic); weighted A* as an option.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Instant;

use serde::Serialize;

use crate::molemod::actions::{JointStep, connected, joint_steps, supported, valid};
use crate::molemod::error::MoleError;
use crate::molemod::grid::GridState;
use crate::molemod::heuristic::Heuristic;
use crate::molemod::task::Task;

/// Counters of a search.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SearchStats {
    /// States expanded.
    pub expansions: u64,
    /// Successors generated (before merging duplicates).
    pub generated: u64,
    /// Successors dropped as symmetric duplicates within one expansion.
    pub pruned: u64,
    /// Closed states reopened with a cheaper path.
    pub reopened: u64,
    /// Wall time, µs.
    pub micros: u64,
}

/// A plan: joint steps and the states between them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// Total cost g(goal).
    pub cost: u32,
    /// The joint steps, in order.
    pub steps: Vec<JointStep>,
    /// States x_0 … x_G.
    #[serde(skip)]
    pub states: Vec<GridState>,
    /// Counters.
    pub stats: SearchStats,
}

impl Plan {
    /// Number of primitive actions.
    pub fn action_count(&self) -> usize {
        self.steps.iter().map(|s| s.actions.len()).sum()
    }
}

struct Node {
    state: GridState,
    g: u32,
    h: u32,
    parent: u32,
    step: Option<JointStep>,
    closed: bool,
}

/// What one call of [`Search::expand_next`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Expanded a state (its node id).
    Expanded(u32),
    /// Popped a goal state (its node id).
    Goal(u32),
    /// The open list is empty.
    Exhausted,
}

/// An A* search in progress; step it with [`Search::expand_next`] (tests do) or run it with
/// [`plan`].
pub struct Search<'a> {
    task: &'a Task,
    heur: Heuristic,
    nodes: Vec<Node>,
    index: HashMap<GridState, u32>,
    heap: BinaryHeap<Reverse<(u64, u32, u64, u32)>>,
    seq: u64,
    robots: u32,
    /// Counters.
    pub stats: SearchStats,
}

impl<'a> Search<'a> {
    /// Starts a search at the task's initial state.
    pub fn new(task: &'a Task) -> Search<'a> {
        let heur = Heuristic::new(task.goal, &task.options);
        let h = heur.h(&task.initial);
        let mut s = Search {
            task,
            heur,
            nodes: Vec::new(),
            index: HashMap::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            robots: task.initial.robot_count(),
            stats: SearchStats::default(),
        };
        s.nodes.push(Node {
            state: task.initial,
            g: 0,
            h,
            parent: u32::MAX,
            step: None,
            closed: false,
        });
        s.index.insert(task.initial, 0);
        s.push(0);
        s
    }

    fn key(&self, n: u32) -> u64 {
        let node = &self.nodes[n as usize];
        ((node.g as f64 + self.task.options.weight * node.h as f64) * 1024.0).round() as u64
    }

    fn push(&mut self, n: u32) {
        let key = self.key(n);
        let h = self.nodes[n as usize].h;
        self.seq += 1;
        self.heap.push(Reverse((key, h, self.seq, n)));
    }

    /// f = g + h of a node (unweighted), for inspection.
    pub fn f(&self, n: u32) -> u32 {
        self.nodes[n as usize].g.saturating_add(self.nodes[n as usize].h)
    }

    /// (g, h) of a node.
    pub fn gh(&self, n: u32) -> (u32, u32) {
        (self.nodes[n as usize].g, self.nodes[n as usize].h)
    }

    /// The node id of a state, if generated.
    pub fn node_of(&self, s: &GridState) -> Option<u32> {
        self.index.get(s).copied()
    }

    /// f values of the states currently open, sorted.
    pub fn open_f(&self) -> Vec<u32> {
        let mut v: Vec<u32> = (0..self.nodes.len() as u32)
            .filter(|&n| !self.nodes[n as usize].closed && self.heap.iter().any(|Reverse((_, _, _, m))| *m == n))
            .map(|n| self.f(n))
            .collect();
        v.sort_unstable();
        v
    }

    fn is_goal(&self, s: &GridState) -> bool {
        let goal = &self.task.goal;
        if self.task.options.goal_robots {
            s == goal
        } else {
            s.same_modules(goal)
        }
    }

    /// Pops the best open state; expands it unless it is the goal.
    pub fn expand_next(&mut self) -> Progress {
        while let Some(Reverse((key, _, _, n))) = self.heap.pop() {
            if self.nodes[n as usize].closed || key != self.key(n) {
                continue; // stale entry
            }
            self.nodes[n as usize].closed = true;
            let state = self.nodes[n as usize].state;
            if self.is_goal(&state) {
                return Progress::Goal(n);
            }
            self.stats.expansions += 1;
            let g = self.nodes[n as usize].g;
            let mut succ = joint_steps(&state, &self.task.options);
            self.stats.generated += succ.len() as u64;
            if self.task.options.prune_symmetric {
                // Robots are anonymous: keep one cheapest joint step per resulting state.
                let o = &self.task.options;
                let robots = self.robots;
                succ.sort_by(|(a, sa), (b, sb)| sa.cmp(sb).then(a.cost(o, robots).cmp(&b.cost(o, robots))));
                let before = succ.len();
                succ.dedup_by(|(_, later), (_, first)| later == first);
                self.stats.pruned += (before - succ.len()) as u64;
            }
            for (step, next) in succ {
                // Saturating, so g never falls along a path and parents cannot form a cycle.
                let ge = g.saturating_add(step.cost(&self.task.options, self.robots));
                match self.index.get(&next).copied() {
                    Some(m) => {
                        let node = &mut self.nodes[m as usize];
                        if ge < node.g {
                            node.g = ge;
                            node.parent = n;
                            node.step = Some(step);
                            if node.closed {
                                node.closed = false;
                                self.stats.reopened += 1;
                            }
                            self.push(m);
                        }
                    }
                    None => {
                        let h = self.heur.h(&next);
                        let m = self.nodes.len() as u32;
                        self.nodes.push(Node {
                            state: next,
                            g: ge,
                            h,
                            parent: n,
                            step: Some(step),
                            closed: false,
                        });
                        self.index.insert(next, m);
                        self.push(m);
                    }
                }
            }
            return Progress::Expanded(n);
        }
        Progress::Exhausted
    }

    /// The plan that reaches node `goal`, by its parent links back to the start. Each node
    /// comes once at most whatever the links: with saturating sums and strict improvements
    /// they form a tree, and a broken one (a cycle, a link past the end) is an error, not a
    /// loop or a truncated plan.
    fn reconstruct(&self, goal: u32) -> Result<Plan, MoleError> {
        let mut steps = Vec::new();
        let mut states = Vec::new();
        let mut n = goal;
        let broken = |why: String| MoleError::Internal(format!("the search tree is broken ({why})"));
        let mut reached_start = false;
        for _ in 0..=self.nodes.len() {
            let node = self
                .nodes
                .get(n as usize)
                .ok_or_else(|| broken(format!("a parent link to node {n} of {}", self.nodes.len())))?;
            states.push(node.state);
            match &node.step {
                Some(s) => steps.push(s.clone()),
                None => {
                    reached_start = true;
                    break;
                }
            }
            n = node.parent;
        }
        if !reached_start {
            return Err(broken(format!(
                "no start within {} links back from node {goal}",
                self.nodes.len() + 1
            )));
        }
        steps.reverse();
        states.reverse();
        Ok(Plan {
            cost: self.nodes[goal as usize].g,
            steps,
            states,
            stats: self.stats,
        })
    }
}

/// Plans a task. The search ends with `Timeout` past `options.max_expansions` or the
/// `deadline`, and with `Cancelled` when `cancel()` turns true (checked every 256 expansions).
pub fn plan(task: &Task, deadline: Option<Instant>, cancel: &dyn Fn() -> bool) -> Result<Plan, MoleError> {
    task.validate()?;
    let started = Instant::now();
    let mut search = Search::new(task);
    loop {
        match search.expand_next() {
            Progress::Goal(n) => {
                let mut p = search.reconstruct(n)?;
                p.stats.micros = started.elapsed().as_micros() as u64;
                return Ok(p);
            }
            Progress::Exhausted => {
                return Err(MoleError::NoPath {
                    expansions: search.stats.expansions,
                });
            }
            Progress::Expanded(_) => {
                let e = search.stats.expansions;
                if e >= task.options.max_expansions {
                    return Err(MoleError::Timeout {
                        reason: format!("expansion limit {}", task.options.max_expansions),
                        expansions: e,
                    });
                }
                if e % 256 == 0 {
                    if cancel() {
                        return Err(MoleError::Cancelled { expansions: e });
                    }
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        return Err(MoleError::Timeout {
                            reason: "time limit".into(),
                            expansions: e,
                        });
                    }
                }
            }
        }
    }
}

/// Replays a plan from the task's initial state: every action valid in its pre-step state,
/// footprints pairwise disjoint, no robot used twice, states and cost as recorded, ending
/// in the goal.
pub fn check_plan(task: &Task, plan: &Plan) -> Result<(), MoleError> {
    let o = &task.options;
    let robots = task.initial.robot_count();
    let mut s = task.initial;
    let mut cost = 0;
    for (k, step) in plan.steps.iter().enumerate() {
        let bad = |reason: String| MoleError::BadPlan { step: k, reason };
        if step.actions.is_empty() {
            return Err(bad("empty joint step".into()));
        }
        let mut cells = std::collections::HashSet::new();
        for a in &step.actions {
            if !valid(&s, a, o) {
                return Err(bad(format!("{a} is not valid here")));
            }
            for &i in a.footprint() {
                if !cells.insert(i) {
                    return Err(bad(format!("{a} overlaps another action of the step")));
                }
            }
        }
        let mut next = s;
        for a in &step.actions {
            a.apply(&mut next);
        }
        if o.require_support && !supported(&next) {
            return Err(bad("a module is left unsupported".into()));
        }
        if o.require_connected && !connected(&next) {
            return Err(bad("the structure falls apart".into()));
        }
        if next.robot_count() != robots || next.module_count() != s.module_count() {
            return Err(bad("robots or modules were lost".into()));
        }
        if plan.states.get(k + 1).is_some_and(|x| *x != next) {
            return Err(bad("the recorded state differs from the replay".into()));
        }
        cost += step.cost(o, robots);
        s = next;
    }
    let at_goal = if o.goal_robots {
        s == task.goal
    } else {
        s.same_modules(&task.goal)
    };
    if !at_goal {
        return Err(MoleError::BadPlan {
            step: plan.steps.len(),
            reason: "the plan does not end in the goal".into(),
        });
    }
    if cost != plan.cost {
        return Err(MoleError::BadPlan {
            step: plan.steps.len(),
            reason: format!("recorded cost {} but the steps cost {cost}", plan.cost),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::molemod::{GridState, Options};

    /// Issue 18: a parent chain that loops (or leaves the node list) ends the
    /// reconstruction with an error naming it, not a loop or a silently cut plan.
    #[test]
    fn a_broken_search_tree_is_an_error() {
        let initial = "0 0 0 0 0\n0 0 0 0 0\n0 0 0 0 0\n0 0 0 0 0\n2 1 1 1 1\n";
        let goal = "0 0 0 0 0\n0 0 0 0 0\n0 1 0 0 0\n0 1 0 0 0\n0 1 1 1 0\n";
        let task = Task::new(
            GridState::parse(initial, "initial").unwrap_or_else(|e| panic!("{e}")),
            GridState::parse(goal, "goal").unwrap_or_else(|e| panic!("{e}")),
            Options::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mut search = Search::new(&task);
        for _ in 0..3 {
            search.expand_next();
        }
        let n = (search.nodes.len() - 1) as u32;
        assert!(search.nodes[n as usize].step.is_some());
        assert!(search.reconstruct(n).is_ok(), "an intact chain");
        search.nodes[n as usize].parent = n;
        let e = search.reconstruct(n).expect_err("a cycle").to_string();
        assert!(e.contains("no start within"), "{e}");
        search.nodes[n as usize].parent = u32::MAX - 1;
        let e = search.reconstruct(n).expect_err("a dangling link").to_string();
        assert!(e.contains("a parent link to node"), "{e}");
    }
}
