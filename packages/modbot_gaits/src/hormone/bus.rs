//! Modules joined connector to connector in one process: what one module sends through a
//! joined side arrives at the neighbour's side one execution cycle later (a tick has one
//! cycle unless set otherwise; a frame through an open side is lost). Links can be cut and
//! modules removed while it runs (seed-003 §8).

use crate::hormone::module::{Frame, HormoneModule, HormoneSettings};
use crate::hormone::topology::Side;

/// A joint between two modules' connectors.
pub type Port = (usize, Side);

/// The in-process bus.
#[derive(Debug, Clone)]
pub struct Bus {
    modules: Vec<Option<HormoneModule>>,
    links: Vec<(Port, Port)>,
    pending: Vec<(usize, Side, Frame)>,
    tick: u64,
    /// Execution cycles per tick (1: one delivery per tick, every frame one tick per hop).
    cycles_per_tick: u64,
    /// Execution cycles run.
    cycles: u64,
    /// Each module's IR readings (B, F, R, L), fed to it every tick.
    ir: Vec<[f64; 4]>,
    /// Modules that scan between ticks ([`Bus::sense`]).
    sensed_outside: Vec<bool>,
}

impl Bus {
    /// `n` modules, unjoined.
    pub fn new(n: usize, settings: HormoneSettings) -> Bus {
        Bus {
            modules: (0..n).map(|_| Some(HormoneModule::new(settings))).collect(),
            links: Vec::new(),
            pending: Vec::new(),
            tick: 0,
            cycles_per_tick: 1,
            cycles: 0,
            ir: vec![[crate::hormone::sensing::IR_CLEAR; 4]; n],
            sensed_outside: vec![false; n],
        }
    }

    /// Module `i` scans its IR sensors now (B, F, R, L; 128 clear, 0 touching), between
    /// ticks: from the first such scan on, the bus's ticks no longer scan for it (a module
    /// scans several times per tick, record 0029).
    pub fn sense(&mut self, i: usize, readings: [f64; 4]) {
        if let Some(Some(m)) = self.modules.get_mut(i) {
            m.sense(&readings);
        }
        if let Some(s) = self.sensed_outside.get_mut(i) {
            *s = true;
        }
    }

    /// What module `i`'s IR sensors read from now on (B, F, R, L; 128 clear, 0 touching).
    pub fn set_ir(&mut self, i: usize, readings: [f64; 4]) {
        if let Some(r) = self.ir.get_mut(i) {
            *r = readings;
        }
    }

    /// A caterpillar of `n`: module i's Back joined to module i+1's Front (module 0 is the
    /// front-most end, n − 1 the rear-most).
    pub fn chain(n: usize, settings: HormoneSettings) -> Bus {
        let mut bus = Bus::new(n, settings);
        for i in 1..n {
            bus.joins((i - 1, Side::B), (i, Side::F));
        }
        bus
    }

    /// The seed's scorpion, modules S1 … S7 as 0 … 6 (§4.1): S1.B–S2.F, S2.B–S3.F,
    /// S3.B–S4.B, S4.F–S5.B, S3.R–S6.B, S6.F–S7.B; the inner arms S2 and S4 pitched.
    pub fn scorpion(settings: HormoneSettings) -> Bus {
        let mut bus = Bus::new(7, settings);
        for (a, b) in [
            ((0, Side::B), (1, Side::F)),
            ((1, Side::B), (2, Side::F)),
            ((2, Side::B), (3, Side::B)),
            ((3, Side::F), (4, Side::B)),
            ((2, Side::R), (5, Side::B)),
            ((5, Side::F), (6, Side::B)),
        ] {
            bus.joins(a, b);
        }
        for i in [1, 3] {
            if let Some(m) = bus.module_mut(i) {
                m.set_pitched(true);
            }
        }
        bus
    }

    /// A 'V' with two arms of `arm` modules (§6.2), 2·arm + 1 in all: a caterpillar of
    /// `arm` (modules 0 … arm − 1, 0 its joined end) whose front-most module's Front is
    /// joined to the Left of the front-most module of a caterpillar of arm + 1 (module arm,
    /// the centre, then arm + 1 … 2·arm).
    pub fn v(arm: usize, settings: HormoneSettings) -> Bus {
        let mut bus = Bus::new(2 * arm + 1, settings);
        for i in 1..arm {
            bus.joins((i - 1, Side::B), (i, Side::F));
        }
        for i in arm + 1..=2 * arm {
            bus.joins((i - 1, Side::B), (i, Side::F));
        }
        bus.joins((0, Side::F), (arm, Side::L));
        bus
    }

    fn joins(&mut self, a: Port, b: Port) {
        let _ = self.link(a, b);
    }

    /// Joins two free connectors of two present modules.
    pub fn link(&mut self, a: Port, b: Port) -> Result<(), String> {
        for p in [a, b] {
            if self.modules.get(p.0).is_none_or(|m| m.is_none()) {
                return Err(format!("no module {}", p.0));
            }
            if self.peer(p).is_some() {
                return Err(format!("connector {} of module {} is taken", p.1, p.0));
            }
        }
        if a.0 == b.0 {
            return Err("a module cannot join itself".into());
        }
        self.links.push((a, b));
        Ok(())
    }

    /// The port joined to `p`.
    pub fn peer(&self, p: Port) -> Option<Port> {
        self.links.iter().find_map(|&(a, b)| {
            if a == p {
                Some(b)
            } else if b == p {
                Some(a)
            } else {
                None
            }
        })
    }

    /// Cuts the link at `p` (nothing if none).
    pub fn cut(&mut self, p: Port) {
        self.links.retain(|&(a, b)| a != p && b != p);
    }

    /// Removes module `i` (it fails): its links go, and frames to it are lost.
    pub fn remove(&mut self, i: usize) {
        if let Some(m) = self.modules.get_mut(i) {
            *m = None;
        }
        self.links.retain(|&(a, b)| a.0 != i && b.0 != i);
    }

    /// Module `i`, if present.
    pub fn module(&self, i: usize) -> Option<&HormoneModule> {
        self.modules.get(i)?.as_ref()
    }

    /// Module `i`, mutable.
    pub fn module_mut(&mut self, i: usize) -> Option<&mut HormoneModule> {
        self.modules.get_mut(i)?.as_mut()
    }

    /// Ticks run.
    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// Queues frames from module `from` (exit side, frame), delivered next cycle.
    pub fn send(&mut self, from: usize, frames: Vec<(Side, Frame)>) {
        for (side, frame) in frames {
            if let Some((to, arrival)) = self.peer((from, side)) {
                self.pending.push((to, arrival, frame));
            }
        }
    }

    /// Execution cycles per tick, at least 1 (record 0029): frames are delivered every
    /// cycle and all but locomotion hormones are handled on arrival, so with more than one
    /// cycle an obstacle or a direction change outruns the wave, which still moves one
    /// module per tick.
    pub fn set_cycles_per_tick(&mut self, cycles: u64) {
        self.cycles_per_tick = cycles.max(1);
    }

    /// One execution cycle: every module gets what was sent to it last cycle; the first
    /// cycle of each tick is the tick itself ([`HormoneModule::step`]), the others pass
    /// frames on ([`HormoneModule::cycle`]).
    pub fn cycle(&mut self) {
        let ticks = self.cycles % self.cycles_per_tick == 0;
        self.cycles += 1;
        if ticks {
            self.tick += 1;
        }
        let mut inboxes: Vec<Vec<(Side, Frame)>> = vec![Vec::new(); self.modules.len()];
        for (to, arrival, frame) in std::mem::take(&mut self.pending) {
            inboxes[to].push((arrival, frame));
        }
        for (i, inbox) in inboxes.iter().enumerate() {
            let out = match self.modules[i].as_mut() {
                Some(m) if ticks => {
                    if !self.sensed_outside[i] {
                        m.sense(&self.ir[i]);
                    }
                    m.step(inbox)
                }
                Some(m) => m.cycle(inbox),
                None => continue,
            };
            self.send(i, out);
        }
    }

    /// One tick: [`Bus::cycle`] as many times as a tick has cycles.
    pub fn step(&mut self) {
        for _ in 0..self.cycles_per_tick {
            self.cycle();
        }
    }

    /// Runs `n` ticks.
    pub fn run(&mut self, n: usize) {
        for _ in 0..n {
            self.step();
        }
    }

    /// Every present module's hinge, deg (`None` for a removed one).
    pub fn hinges(&self) -> Vec<Option<f64>> {
        self.modules.iter().map(|m| m.as_ref().map(|m| m.hinge_deg())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hormone::module::{HormoneKind, Role};
    use crate::hormone::topology::module_type;

    fn settings() -> HormoneSettings {
        HormoneSettings::default()
    }

    /// One value per module still on the bus.
    fn each<T>(bus: &Bus, f: impl Fn(&HormoneModule) -> T) -> Vec<T> {
        (0..bus.modules.len()).filter_map(|i| bus.module(i).map(&f)).collect()
    }

    fn types(bus: &Bus) -> Vec<u16> {
        each(bus, HormoneModule::module_type)
    }

    fn roles(bus: &Bus) -> Vec<Role> {
        each(bus, HormoneModule::role)
    }

    /// The seed's module types, found by handshakes alone (§4.1).
    #[test]
    fn handshakes_find_the_seeds_module_types() {
        let mut c = Bus::chain(5, settings());
        c.run(6);
        assert_eq!(types(&c), [2, 10, 10, 10, 8]);
        let mut s = Bus::scorpion(settings());
        s.run(6);
        assert_eq!(types(&s), [2, 10, 73, 9, 2, 11, 2]);
        let mut v = Bus::v(3, settings());
        v.run(6);
        assert_eq!(v.module(3).map(|m| m.module_type()), Some(1026));
        // Fig. 2: R2's Left on R1's Front, R2's Right on R3's Front.
        let mut f = Bus::new(3, settings());
        f.link((1, Side::L), (0, Side::F)).unwrap_or_else(|e| panic!("{e}"));
        f.link((1, Side::R), (2, Side::F)).unwrap_or_else(|e| panic!("{e}"));
        f.run(6);
        assert_eq!(types(&f), [32, 1152, 24]);
        assert_eq!(module_type(&[None; 4]), 0);
    }

    /// Level 2 at the centre of a 7-chain: 7 nodes, not 52; level 8 on a 10-chain maps all
    /// 10 everywhere.
    #[test]
    fn maps_hold_one_node_per_module_up_to_the_level() {
        let mut c = Bus::chain(7, settings());
        c.run(20);
        assert_eq!(c.module(3).map(|m| m.map().nodes()), Some(7));
        assert_eq!(c.module(0).map(|m| m.map().nodes()), Some(4));
        let mut long = Bus::chain(
            10,
            HormoneSettings {
                max_level: 8,
                ..settings()
            },
        );
        long.run(40);
        for i in 0..10 {
            assert_eq!(long.module(i).map(|m| m.map().nodes()), Some(10), "module {i}");
        }
    }

    /// The four type-2 modules (C1; the scorpion's S1, S5, S7) tell themselves apart by
    /// their level-2 maps (§4.2), and the level-2 signatures are the seed's.
    #[test]
    fn level_two_signatures_give_different_roles() {
        let mut s = Bus::scorpion(settings());
        s.run(20);
        let r = roles(&s);
        assert_eq!(r[0], Role::ScorpionOuterArm { right: true });
        assert_eq!(r[1], Role::ScorpionInnerArm { right: true });
        assert_eq!(r[2], Role::ScorpionHead);
        assert_eq!(r[3], Role::ScorpionInnerArm { right: false });
        assert_eq!(r[4], Role::ScorpionOuterArm { right: false });
        assert_eq!(r[5], Role::ScorpionInnerTail);
        assert_eq!(r[6], Role::ScorpionOuterTail);
        // V arms: an end that sees the centre's joins (two hops) is a V end; one farther
        // out knows the centre only as a node without statuses and is what the seed calls
        // a V's end, type 8, a caterpillar's rear end (reversing, it reports obstacles by
        // the caterpillar's rule, which reach the centre the same way).
        use Role::{CaterpillarRearEnd, VArm, VCentre, VEnd};
        let mut v = Bus::v(2, settings());
        v.run(20);
        assert_eq!(roles(&v), [VArm, VEnd, VCentre, VArm, VEnd]);
        let mut v = Bus::v(3, settings());
        v.run(20);
        let end = CaterpillarRearEnd;
        assert_eq!(roles(&v), [VArm, VArm, end, VCentre, VArm, VArm, end]);
        assert_eq!([2, 6].map(|i| v.module(i).map(|m| m.module_type())), [Some(8); 2]);
        let mut c = Bus::chain(4, settings());
        c.run(20);
        assert_eq!(c.module(0).map(|m| m.role()), Some(Role::CaterpillarFrontEnd));
        use Side::*;
        let sig = |bus: &Bus, i: usize| bus.module(i).map(|m| m.own_node().paths_at(3)).unwrap_or_default();
        assert_eq!(sig(&c, 0), vec![vec![(B, F), (B, F), (B, F)]]);
        let s1 = sig(&s, 0);
        assert!(s1.contains(&vec![(B, F), (B, F), (B, B)]) && s1.contains(&vec![(B, F), (B, F), (R, B)]));
        let s5 = sig(&s, 4);
        assert!(s5.contains(&vec![(B, F), (B, B), (F, B)]) && s5.contains(&vec![(B, F), (B, B), (R, B)]));
        let s7 = sig(&s, 6);
        assert!(s7.contains(&vec![(B, F), (B, R), (F, B)]) && s7.contains(&vec![(B, F), (B, R), (B, B)]));
    }

    /// Table 8 exactly for N = 5: module 1 (the rear end, which initiates when going
    /// forward) toggles ±45° every 4 ticks, and each module copies the one before one tick
    /// later.
    #[test]
    fn the_caterpillar_wave_is_table_8() {
        let mut c = Bus::chain(5, settings());
        let mut history: Vec<Vec<f64>> = Vec::new();
        for _ in 0..40 {
            c.step();
            history.push(c.hinges().into_iter().map(|h| h.unwrap_or(f64::NAN)).collect());
        }
        // M1 … M5 of the table are modules 4 … 0.
        let m = |k: usize, t: usize| history[t][5 - k];
        let t0 = (0..history.len())
            .find(|&t| m(1, t) != 0.0)
            .unwrap_or_else(|| panic!("no wave"));
        // Table 8, time steps 1 … 9 (module → angle set then; earlier: still 0).
        let table: [&[(usize, f64)]; 9] = [
            &[(1, 45.0)],
            &[(2, 45.0)],
            &[(3, 45.0)],
            &[(4, 45.0)],
            &[(5, 45.0), (1, -45.0)],
            &[(2, -45.0)],
            &[(3, -45.0)],
            &[(4, -45.0)],
            &[(5, -45.0), (1, 45.0)],
        ];
        for (step, sets) in table.iter().enumerate() {
            let t = t0 + step;
            for &(k, angle) in *sets {
                assert_eq!(m(k, t), angle, "time step {}: M{k}", step + 1);
                if t > 0 {
                    assert_ne!(m(k, t - 1), angle, "M{k} changes at time step {}", step + 1);
                }
            }
        }
        for k in 2..=5 {
            assert_eq!(m(k, t0 + k - 2), 0.0, "M{k} has not moved before its first step");
        }
        // Closed form from then on: angle_k(t) = +45 if ⌊(t − k)/4⌋ is even.
        for step in 1..30 {
            for k in 1..=5 {
                if step >= k {
                    let want = if ((step - k) / 4) % 2 == 0 { 45.0 } else { -45.0 };
                    assert_eq!(m(k, t0 + step - 1), want, "t {step} M{k}");
                }
            }
        }
    }

    /// The seed's direction-flip trace (§7.3): S1 sends hop 0; S2 (an inner arm, hop 0 < 2)
    /// passes it with hop 1; the head passes hop 2; S4 (inner arm, hop 2) flips. S2 and the
    /// tail do not.
    #[test]
    fn a_direction_flip_from_s1_flips_s4_only() {
        let mut s = Bus::scorpion(settings());
        s.run(20);
        let frames = s
            .module(0)
            .map(|m| m.originate(HormoneKind::DirectionFlip, vec![]))
            .unwrap_or_default();
        s.send(0, frames);
        s.run(6);
        let d: Vec<i8> = (0..7).filter_map(|i| s.module(i).map(|m| m.direction())).collect();
        assert_eq!(d, [1, 1, 1, -1, 1, 1, 1]);
        // S5 mirrors it: S2 flips (and S4 keeps its flip).
        let frames = s
            .module(4)
            .map(|m| m.originate(HormoneKind::DirectionFlip, vec![]))
            .unwrap_or_default();
        s.send(4, frames);
        s.run(6);
        let d: Vec<i8> = (0..7).filter_map(|i| s.module(i).map(|m| m.direction())).collect();
        assert_eq!(d, [1, -1, 1, -1, 1, 1, 1]);
    }

    /// Fig. 5: R5 loses R2 on its Right. R4 (whose Back is on R5's Left) opens R5-node.Right
    /// and deletes R2's node; R1 and R3 beyond it do the same.
    #[test]
    fn a_lost_link_deletes_the_subtree_everywhere() {
        use Side::*;
        // 0 = R1, 1 = R2, 2 = R3, 3 = R4, 4 = R5.
        let mut b = Bus::new(5, settings());
        for (p, q) in [((3, B), (4, L)), ((4, R), (1, B)), ((3, F), (0, B)), ((3, R), (2, B))] {
            b.link(p, q).unwrap_or_else(|e| panic!("{e}"));
        }
        b.run(20);
        let r2_from_r4 = [(B, L), (R, B)];
        assert!(b.module(3).and_then(|m| m.own_node().get(&r2_from_r4)).is_some());
        let r2_from_r1 = [(B, F), (B, L), (R, B)];
        assert!(b.module(0).and_then(|m| m.own_node().get(&r2_from_r1)).is_some());
        b.cut((4, R));
        b.run(20);
        for (i, path) in [(3, vec![(B, L)]), (0, vec![(B, F), (B, L)]), (2, vec![(B, R), (B, L)])] {
            let m = b.module(i).unwrap_or_else(|| panic!("module {i}"));
            let r5 = m
                .own_node()
                .get(&path)
                .unwrap_or_else(|| panic!("R5 in module {i}'s map"));
            assert_eq!(r5.status[R.index()], None, "module {i}");
            assert!(r5.children[R.index()].is_none(), "module {i}");
        }
        assert_eq!(b.module(1).map(|m| m.module_type()), Some(0));
    }

    /// A 10-module caterpillar cut in the middle: two caterpillars, each with its own
    /// initiator, the new one resetting its segment first; both waves run.
    #[test]
    fn a_cut_caterpillar_goes_on_as_two() {
        let mut c = Bus::chain(10, settings());
        c.run(40);
        c.cut((4, Side::B));
        c.run(30);
        let r = roles(&c);
        assert_eq!(r[4], Role::CaterpillarRearEnd);
        assert_eq!(r[5], Role::CaterpillarFrontEnd);
        let mut moved = [false; 10];
        for _ in 0..16 {
            let before = c.hinges();
            c.step();
            for (i, (a, b)) in before.iter().zip(c.hinges()).enumerate() {
                moved[i] |= *a != b;
            }
        }
        assert!(moved.iter().all(|m| *m), "{moved:?}");
        // Removing the V's centre leaves two caterpillars.
        let mut v = Bus::v(4, settings());
        v.run(30);
        assert_eq!(v.module(4).map(|m| m.role()), Some(Role::VCentre));
        v.remove(4);
        v.run(30);
        let r: Vec<Role> = (0..9).filter_map(|i| v.module(i).map(|m| m.role())).collect();
        assert_eq!(r.len(), 8);
        assert!(
            r.iter().all(|x| matches!(
                x,
                Role::CaterpillarFrontEnd | Role::CaterpillarMiddle | Role::CaterpillarRearEnd
            )),
            "{r:?}"
        );
    }

    /// §8: a new segment starts from its initial posture. A 10-module caterpillar's wave
    /// starts at its rear end (module 9); cut in the middle, the front part's new rear end
    /// (module 4) becomes its initiator and sends a Reset before any wave: the Reset runs to
    /// the front end one module a tick and leaves each module it reaches at 0°, and each
    /// moves again after it has passed. The rear part, whose initiator lost nothing within its
    /// mapping level, carries on without one.
    #[test]
    fn a_split_segment_resets_to_its_initial_posture_before_moving_on() {
        use crate::hormone::module::FrameKind;
        let mut c = Bus::chain(10, settings());
        c.run(40);
        c.cut((4, Side::B));
        let reset = FrameKind::Hormone(HormoneKind::Reset);
        // The tick each module received its first Reset, and every hinge from the cut on.
        let mut reset_at: [Option<usize>; 10] = [None; 10];
        let mut hinges: Vec<Vec<f64>> = Vec::new();
        for t in 0..40 {
            for (to, _, f) in &c.pending {
                if f.kind == reset && reset_at[*to].is_none() {
                    reset_at[*to] = Some(t);
                }
            }
            c.step();
            hinges.push(c.hinges().into_iter().map(|h| h.unwrap_or(f64::NAN)).collect());
        }
        assert_eq!(reset_at[4..], [None; 6], "the rear part does not reset: {reset_at:?}");
        let first = reset_at[3].unwrap_or_else(|| panic!("no Reset reached module 3: {reset_at:?}"));
        for (k, at) in reset_at.iter().enumerate().take(3) {
            assert_eq!(
                *at,
                Some(first + 3 - k),
                "the Reset reaches module {k} a tick after {}",
                k + 1
            );
        }
        // Module 4 sent it at 0° the tick before module 3 got it; every module of the front
        // part is at 0° the tick it handles the Reset, and moves again later.
        for k in 0..5 {
            let handled = first + 3 - k;
            assert_eq!(
                hinges[handled][k], 0.0,
                "module {k} at tick {handled}: {:?}",
                hinges[handled]
            );
            let moved = hinges[handled..].iter().position(|h| h[k] != 0.0);
            assert!(moved.is_some(), "module {k} never moves again");
        }
        assert!(
            hinges.iter().any(|h| h[5..] != hinges[0][5..]),
            "the rear part moves on"
        );
    }

    /// Garbage is dropped, counted and named, and the module carries on: a relay past the
    /// mapping level, a hormone past the organism size, a path that does not match its hop
    /// count, a locomotion hormone with no angle.
    #[test]
    fn bad_frames_are_dropped_and_named() {
        use crate::hormone::module::{Frame, FrameKind};
        let mut c = Bus::chain(3, settings());
        c.run(8);
        let frame = |kind, hop: u8, path: Vec<(Side, Side)>, data: Vec<f64>| Frame {
            kind,
            hop,
            connector: Side::B,
            path,
            data,
        };
        let bad = vec![
            (
                Side::F,
                frame(
                    FrameKind::Handshake { ack: false },
                    3,
                    vec![(Side::B, Side::F); 3],
                    vec![],
                ),
            ),
            (Side::F, frame(FrameKind::Handshake { ack: false }, 1, vec![], vec![])),
            (
                Side::F,
                frame(FrameKind::Hormone(HormoneKind::Reset), 17, vec![], vec![]),
            ),
            (
                Side::F,
                frame(FrameKind::Hormone(HormoneKind::Locomotion), 0, vec![], vec![f64::NAN]),
            ),
        ];
        let before = c.module(0).map(|m| m.map().nodes());
        // Out of module 1's Front, into module 0's Back.
        c.send(1, bad);
        c.run(1);
        let m = c.module(0).unwrap_or_else(|| panic!("module 0"));
        let (n, why) = m.refused();
        assert_eq!(n, 4);
        assert!(why.is_some_and(|w| w.contains("finite")), "{why:?}");
        assert_eq!(Some(m.map().nodes()), before);
        c.run(8);
        assert_eq!(c.module(0).map(|m| m.module_type()), Some(2));
    }

    fn history(bus: &mut Bus, ticks: usize) -> Vec<Vec<f64>> {
        (0..ticks)
            .map(|_| {
                bus.step();
                bus.hinges().into_iter().map(|h| h.unwrap_or(f64::NAN)).collect()
            })
            .collect()
    }

    fn directions(bus: &Bus) -> Vec<i8> {
        each(bus, HormoneModule::direction)
    }

    /// Reversal (§7.1 (iii)): the initiator flips d and floods DIRECTION_CHANGE; the far
    /// end becomes the initiator and the wave runs the other way, one tick per hop.
    #[test]
    fn a_reversed_caterpillar_runs_its_wave_the_other_way() {
        let mut c = Bus::chain(5, settings());
        c.run(30);
        let frames = c.module_mut(4).map(|m| m.reverse()).unwrap_or_default();
        c.send(4, frames);
        c.run(10);
        assert_eq!(directions(&c), [-1; 5]);
        let h = history(&mut c, 24);
        // Module k + 1 now copies module k one tick later.
        for t in 1..h.len() {
            for k in 0..4 {
                assert_eq!(h[t][k + 1], h[t - 1][k], "tick {t} module {}", k + 1);
            }
        }
        assert!(h.iter().any(|row| row[0] == 45.0) && h.iter().any(|row| row[0] == -45.0));
    }

    /// The pitched module (§6.1, §7.1): passes the wave on unchanged with its hinge at 0;
    /// OBSTACLE(RIGHT) makes it pulse +45° for one tick (a left turn) and is consumed;
    /// OBSTACLE(LEFT) −45°; OBSTACLE(FRONT) passes it, reaches the initiator and reverses.
    #[test]
    fn the_pitched_module_turns_on_side_obstacles_and_front_ones_reverse() {
        let mut c = Bus::chain(7, settings());
        if let Some(m) = c.module_mut(3) {
            m.set_pitched(true);
        }
        let h = history(&mut c, 40);
        assert!(h.iter().all(|row| row[3] == 0.0), "the pitched module holds 0");
        assert_eq!(c.module(3).map(|m| m.role()), Some(Role::Pitched));
        // The wave crosses it with one tick per hop: module 2 copies module 4 two ticks later.
        for t in 2..h.len() {
            assert_eq!(h[t][2], h[t - 2][4], "tick {t}");
        }
        for (side, pulse) in [(2.0, 45.0), (1.0, -45.0)] {
            let frames = c
                .module(0)
                .map(|m| m.originate(HormoneKind::Obstacle, vec![side]))
                .unwrap_or_default();
            c.send(0, frames);
            let h = history(&mut c, 8);
            let pulses: Vec<f64> = h.iter().map(|row| row[3]).filter(|v| *v != 0.0).collect();
            assert_eq!(pulses, [pulse], "side {side}");
            assert_eq!(directions(&c), [1; 7], "consumed: no reversal");
        }
        let frames = c
            .module(0)
            .map(|m| m.originate(HormoneKind::Obstacle, vec![3.0]))
            .unwrap_or_default();
        c.send(0, frames);
        c.run(20);
        assert_eq!(directions(&c), [-1; 7]);
    }

    /// The scorpion's butterfly stroke (§6.3): per arm, outer +0.75 rad, inner +0.75,
    /// outer −0.75, inner −0.75; in reverse the inner signs flip. The tail stays still.
    #[test]
    fn the_scorpion_strokes_in_the_seeds_order() {
        let a = 0.75f64.to_degrees();
        let events = |bus: &mut Bus, ticks| {
            let h = history(bus, ticks);
            let mut ev: Vec<(usize, f64)> = Vec::new();
            for t in 1..h.len() {
                for i in [0, 1] {
                    if h[t][i] != h[t - 1][i] {
                        ev.push((i, h[t][i]));
                    }
                }
                assert_eq!((h[t][5], h[t][6]), (0.0, 0.0), "the tail is passive");
            }
            ev
        };
        let mut s = Bus::scorpion(settings());
        s.run(20);
        let ev = events(&mut s, 40);
        let first = ev.iter().position(|e| *e == (0, a)).unwrap_or_else(|| panic!("{ev:?}"));
        assert_eq!(&ev[first..first + 4], [(0, a), (1, a), (0, -a), (1, -a)], "{ev:?}");
        // Both arms stroke together.
        let h = history(&mut s, 16);
        assert!(h.iter().all(|row| row[0] == row[4] && row[1] == row[3]));
        // Reverse: the head's DIRECTION_CHANGE(−1) reaches every module.
        let frames = s
            .module(2)
            .map(|m| m.originate(HormoneKind::DirectionChange, vec![-1.0]))
            .unwrap_or_default();
        s.send(2, frames);
        s.run(12);
        let ev = events(&mut s, 40);
        let first = ev.iter().position(|e| *e == (0, a)).unwrap_or_else(|| panic!("{ev:?}"));
        assert_eq!(&ev[first..first + 4], [(0, a), (1, -a), (0, -a), (1, a)], "{ev:?}");
    }

    /// The V (§6.2): forward, the two ends start waves toward the centre, which holds still;
    /// in reverse the centre starts them out of both sides and the ends copy.
    #[test]
    fn the_v_runs_inward_forward_and_outward_in_reverse() {
        let mut v = Bus::v(4, settings());
        v.run(20);
        let h = history(&mut v, 24);
        assert!(h.iter().all(|row| row[4] == 0.0), "the centre does not actuate");
        // Arm 2 (modules 4 … 7, end 7): module 5 copies module 6 one tick later.
        for t in 1..h.len() {
            assert_eq!(h[t][5], h[t - 1][6]);
            assert_eq!(h[t][0], h[t - 1][1]);
        }
        let frames = v
            .module(4)
            .map(|m| m.originate(HormoneKind::DirectionChange, vec![-1.0]))
            .unwrap_or_default();
        if let Some(m) = v.module_mut(4) {
            let _ = m.reverse(); // the centre's own d, as the centre deciding to reverse would
        }
        v.send(4, frames);
        v.run(12);
        assert_eq!(directions(&v), [-1; 9]);
        let h = history(&mut v, 24);
        assert!(h.iter().all(|row| row[4] == 0.0));
        for t in 1..h.len() {
            assert_eq!(h[t][6], h[t - 1][5], "outward on arm 2");
            assert_eq!(h[t][1], h[t - 1][0], "outward on arm 1");
        }
        // The two modules next to the centre move in step (the centre sends both the same).
        assert!(h.iter().all(|row| row[0] == row[5]));
    }

    const CLEAR: f64 = 128.0;

    /// Execution cycles (record 0029): with 8 cycles a tick the wave still moves one module
    /// per tick (Table 8), while an obstacle seen by the leading end of a 10-chain and the
    /// initiator's direction change cross the organism in about two ticks instead of 18;
    /// after the reversal no module copies the old wave coming from ahead (it holds its
    /// angle until the new wave reaches it).
    #[test]
    fn obstacles_outrun_the_wave_and_the_old_wave_stops() {
        let reversed_after = |cycles: u64| {
            let mut c = Bus::chain(10, settings());
            c.set_cycles_per_tick(cycles);
            let h = history(&mut c, 40);
            for t in 1..h.len() {
                for i in 0..9 {
                    assert_eq!(h[t][i], h[t - 1][i + 1], "{cycles} cycles: tick {t}, module {i}");
                }
            }
            c.set_ir(0, [CLEAR, 0.0, CLEAR, CLEAR]);
            let mut ticks = 0;
            while directions(&c) != [-1; 10] {
                c.step();
                ticks += 1;
                assert!(ticks < 100, "{cycles} cycles: never reversed");
            }
            c.set_ir(0, [CLEAR; 4]);
            (ticks, history(&mut c, 12))
        };
        let (slow, _) = reversed_after(1);
        let (fast, after) = reversed_after(8);
        // Both wait for the ring: its mean falls under 20 at the ninth reading of 0. Then 9
        // hops there and 9 back: a tick each, or a cycle each (18 cycles: 2 ticks and a bit).
        assert_eq!(slow, 9 + 18, "one tick per hop");
        assert_eq!(fast, 9 + 2, "one cycle per hop");
        // The new wave comes from module 0; nothing moves toward it.
        for t in 1..after.len() {
            for i in 1..10 {
                let (now, was, behind) = (after[t][i], after[t - 1][i], after[t - 1][i - 1]);
                assert!(
                    now == was || now == behind,
                    "tick {t}, module {i}: {now} from {was}/{behind}"
                );
            }
        }
        assert!(after.iter().any(|row| row[5] != after[0][5]), "the new wave arrives");
    }

    /// The caterpillar's detector (§7.1), the leading end: an obstacle ahead with the right
    /// clear sends OBSTACLE(LEFT) (the pitched module pulses −45°, a right turn), repeated
    /// while it stays; ahead and right blocked, OBSTACLE(RIGHT) (+45°); all three blocked,
    /// FRONT, which reverses the organism. Without a pitched module any obstacle reverses.
    #[test]
    fn the_leading_end_steers_the_caterpillar_away() {
        let pulses = |ir: [f64; 4]| {
            let mut c = Bus::chain(7, settings());
            if let Some(m) = c.module_mut(3) {
                m.set_pitched(true);
            }
            c.run(30);
            c.set_ir(0, ir);
            let h = history(&mut c, 40);
            let p: Vec<f64> = h.iter().map(|row| row[3]).filter(|v| *v != 0.0).collect();
            (p, directions(&c))
        };
        let (p, d) = pulses([CLEAR, 0.0, CLEAR, CLEAR]);
        assert!(p.len() >= 2 && p.iter().all(|v| *v == -45.0), "{p:?}");
        assert_eq!(d, [1; 7]);
        let (p, _) = pulses([CLEAR, 0.0, 0.0, CLEAR]);
        assert!(p.len() >= 2 && p.iter().all(|v| *v == 45.0), "{p:?}");
        let (p, _) = pulses([CLEAR, CLEAR, CLEAR, 0.0]);
        assert!(
            p.iter().all(|v| *v == -45.0) && !p.is_empty(),
            "left only: turn right {p:?}"
        );
        let (_, d) = pulses([CLEAR, 0.0, 0.0, 0.0]);
        assert_eq!(d, [-1; 7], "blocked all round: reversed");
        // No pitched module: the obstacle reaches the initiator, which reverses.
        let mut c = Bus::chain(5, settings());
        c.run(30);
        c.set_ir(0, [CLEAR, 0.0, CLEAR, CLEAR]);
        c.run(30);
        assert_eq!(directions(&c), [-1; 5]);
        assert_eq!(c.module(0).map(|m| m.role()), Some(Role::CaterpillarFrontEnd));
    }

    /// The V going forward (§7.2): the centre's F sensor (the organism's left) stops the arm
    /// on its B side, which holds while the other pushes; clear again, it restarts.
    #[test]
    fn the_v_stops_one_arm_to_turn_away() {
        let mut v = Bus::v(4, settings());
        v.run(30);
        v.set_ir(4, [CLEAR, 0.0, CLEAR, CLEAR]);
        v.run(16);
        assert_eq!(v.module(8).map(|m| m.direction()), Some(0));
        let h = history(&mut v, 16);
        assert!(h.windows(2).all(|w| w[0][6] == w[1][6]), "the stopped arm holds");
        assert!(h.windows(2).any(|w| w[0][2] != w[1][2]), "the other arm pushes");
        v.set_ir(4, [CLEAR; 4]);
        v.run(16);
        assert_eq!(directions(&v), [1; 9]);
        // Reversing, a report from the arm on the centre's B sends the arm on L forward for
        // a while, then back to reverse.
        let frames = v.module_mut(4).map(|m| m.reverse()).unwrap_or_default();
        v.send(4, frames);
        v.run(20);
        assert_eq!(directions(&v), [-1; 9]);
        v.set_ir(8, [0.0, CLEAR, CLEAR, CLEAR]);
        // Ten readings fill the buffer, four hops to the centre, three to the far end.
        v.run(22);
        assert_eq!(v.module(3).map(|m| m.direction()), Some(1), "arm on L sent forward");
        v.set_ir(8, [CLEAR; 4]);
        v.run(30);
        assert_eq!(directions(&v), [-1; 9], "and back to reverse");
    }

    /// The V reversing (§7.2): reports from both arms within the window send the whole V
    /// forward, the ends initiating again, and it stays forward once clear; a report from
    /// one arm alone (above) turns it for a while and then it reverses again.
    #[test]
    fn the_v_reversing_into_obstacles_on_both_sides_goes_forward() {
        let mut v = Bus::v(4, settings());
        v.run(30);
        let frames = v.module_mut(4).map(|m| m.reverse()).unwrap_or_default();
        v.send(4, frames);
        v.run(20);
        assert_eq!(directions(&v), [-1; 9]);
        // Both ends (3 and 8, joined on their F) see behind them on their B.
        v.set_ir(3, [0.0, CLEAR, CLEAR, CLEAR]);
        v.set_ir(8, [0.0, CLEAR, CLEAR, CLEAR]);
        v.run(22);
        assert_eq!(directions(&v), [1; 9], "both sides: forward");
        v.set_ir(3, [CLEAR; 4]);
        v.set_ir(8, [CLEAR; 4]);
        v.run(40);
        assert_eq!(directions(&v), [1; 9], "and it stays forward");
        let h = history(&mut v, 16);
        for end in [3, 8] {
            assert!(h.windows(2).any(|w| w[0][end] != w[1][end]), "end {end} initiates");
        }
    }

    /// The timing constants are settings (H7, H11; record 0029), each one measured here:
    /// the timeout T (with the handshake period K) decides when a cut side goes open, the
    /// obstacle period how often a side kept blocked pulses the pitched module, and the V's
    /// turn lasts its number of half periods.
    #[test]
    fn the_timing_constants_are_settings() {
        // T: a cut side opens T + 1 ticks after the last handshake heard, which came up to K
        // ticks before the cut (one more for its trip), and the module re-types on the next
        // tick: (T + 1 − K, T + 2] ticks after the cut.
        let opens_after = |s: HormoneSettings| {
            let mut c = Bus::chain(3, s);
            c.run(30);
            let joined = c.module(1).map(|m| m.module_type());
            c.cut((1, Side::F));
            (1..=200u64).find(|_| {
                c.step();
                c.module(1).map(|m| m.module_type()) != joined
            })
        };
        for (k, t) in [(4, 12), (2, 5), (8, 40)] {
            let s = HormoneSettings {
                handshake_every: k,
                timeout_ticks: t,
                ..settings()
            };
            let after = opens_after(s).unwrap_or_else(|| panic!("K {k} T {t}: never opens"));
            assert!(
                after > t + 1 - k && after <= t + 2,
                "K {k} T {t}: open after {after} ticks"
            );
        }
        // The obstacle period: the front end's R sensor kept blocked pulses the pitched
        // module once every `obstacle_every` ticks.
        let pulses = |every: u64| {
            let mut c = Bus::chain(
                7,
                HormoneSettings {
                    obstacle_every: every,
                    ..settings()
                },
            );
            if let Some(m) = c.module_mut(3) {
                m.set_pitched(true);
            }
            c.run(30);
            c.set_ir(0, [CLEAR, CLEAR, 0.0, CLEAR]);
            c.run(20);
            let h = history(&mut c, 96);
            h.iter().filter(|row| row[3] != 0.0).count()
        };
        assert_eq!(pulses(8), 96 / 8);
        assert_eq!(pulses(4), 96 / 4);
        assert_eq!(pulses(16), 96 / 16);
        // The V's turn (H7): one report from the arm on the centre's B sends the arm on L
        // forward for `v_turn_half_periods` half periods.
        let turn = |half_periods: u64| {
            let mut v = Bus::v(
                4,
                HormoneSettings {
                    v_turn_half_periods: half_periods,
                    ..settings()
                },
            );
            v.run(30);
            let frames = v.module_mut(4).map(|m| m.reverse()).unwrap_or_default();
            v.send(4, frames);
            v.run(20);
            v.set_ir(8, [0.0, CLEAR, CLEAR, CLEAR]);
            v.run(12);
            v.set_ir(8, [CLEAR; 4]);
            (0..80)
                .filter(|_| {
                    v.step();
                    v.module(3).map(|m| m.direction()) == Some(1)
                })
                .count()
        };
        // The stroke timeout: with its right outer arm gone the head never hears from that
        // side and strokes once every `stroke_timeout` + 1 ticks; the left arm follows.
        let strokes = |timeout: u64| {
            let mut s = Bus::scorpion(HormoneSettings {
                stroke_timeout: timeout,
                ..settings()
            });
            s.run(20);
            s.remove(0);
            s.run(40);
            let h = history(&mut s, 168);
            h.windows(2).filter(|w| w[0][4] != w[1][4]).count()
        };
        assert_eq!(strokes(20), 168 / 21);
        assert_eq!(strokes(41), 168 / 42);
        let (two, four) = (turn(2), turn(4));
        assert!(two > 0, "the arm turns");
        assert_eq!(
            four - two,
            2 * settings().half_period as usize,
            "turns of {two} and {four} ticks"
        );
    }

    /// Every setting out of range is refused naming it; the defaults pass.
    #[test]
    fn settings_out_of_range_are_named() {
        assert_eq!(settings().check(), Ok(()));
        let bad = [
            (
                "max_level",
                HormoneSettings {
                    max_level: 0,
                    ..settings()
                },
            ),
            (
                "handshake_every",
                HormoneSettings {
                    handshake_every: 0,
                    ..settings()
                },
            ),
            (
                "timeout_ticks",
                HormoneSettings {
                    timeout_ticks: 7,
                    ..settings()
                },
            ),
            (
                "timeout_ticks",
                HormoneSettings {
                    timeout_ticks: 5000,
                    ..settings()
                },
            ),
            (
                "half_period",
                HormoneSettings {
                    half_period: 65,
                    ..settings()
                },
            ),
            (
                "stroke_timeout",
                HormoneSettings {
                    stroke_timeout: 0,
                    ..settings()
                },
            ),
            (
                "obstacle_every",
                HormoneSettings {
                    obstacle_every: 0,
                    ..settings()
                },
            ),
            (
                "v_turn_half_periods",
                HormoneSettings {
                    v_turn_half_periods: 0,
                    ..settings()
                },
            ),
            (
                "angle_deg",
                HormoneSettings {
                    angle_deg: f64::NAN,
                    ..settings()
                },
            ),
            (
                "scorpion_angle_deg",
                HormoneSettings {
                    scorpion_angle_deg: 91.0,
                    ..settings()
                },
            ),
            (
                "side L",
                HormoneSettings {
                    ir_threshold: [1.0, 2.0, 3.0, -1.0],
                    ..settings()
                },
            ),
        ];
        for (name, s) in bad {
            let e = s.check().expect_err(name);
            assert!(e.contains(name), "{name}: {e}");
        }
    }

    /// The scorpion (§7.3): the head's L sensor reverses it; an outer arm's sensor flips
    /// the other inner arm, and clear again flips it back; reversing, the outer tail's F
    /// sensor sends it forward.
    #[test]
    fn the_scorpion_reverses_rotates_and_comes_forward() {
        let mut s = Bus::scorpion(settings());
        s.run(30);
        s.set_ir(0, [CLEAR, 0.0, CLEAR, CLEAR]);
        s.run(16);
        assert_eq!(directions(&s), [1, 1, 1, -1, 1, 1, 1], "S1 sees: S4 pushes back");
        s.set_ir(0, [CLEAR; 4]);
        s.run(16);
        assert_eq!(directions(&s), [1; 7]);
        s.set_ir(2, [CLEAR, CLEAR, CLEAR, 0.0]);
        s.run(16);
        assert_eq!(directions(&s), [-1; 7], "the head sees ahead: reverse");
        s.set_ir(2, [CLEAR; 4]);
        s.set_ir(6, [CLEAR, 0.0, CLEAR, CLEAR]);
        s.run(16);
        assert_eq!(directions(&s), [1; 7], "the tail sees behind: forward");
    }
}
