//! One module's digital-hormone controller (seed-003): the same code in every module, no
//! identity of its own; handshakes build its topology map, its role comes from its type and
//! the map, and hormones from its neighbours drive its hinge. Decision record 0029.

use crate::hormone::sensing::IrSensors;
use crate::hormone::topology::{Hop, MapNode, Side, Status, TopologyMap};

/// Hormone types (Table 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HormoneKind {
    /// The sender's hinge angle (deg), and in the scorpion a time step.
    Locomotion,
    /// An obstacle seen on a side of the detector (data: [`ObstacleSide`] code, then the
    /// detector's direction of travel, ±1, when it has one).
    Obstacle,
    /// New direction: 1 forward, −1 reverse, 0 stop.
    DirectionChange,
    /// Scorpion inner arms with hop ≥ 2 flip their direction.
    DirectionFlip,
    /// Every hinge to 0.
    Reset,
}

/// What a frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// Topology handshake (ack 0 initiating, 1 acknowledging).
    Handshake {
        /// Acknowledgement.
        ack: bool,
    },
    /// A connector of the origin went open (the seed's `[x, Open]` notice).
    Loss {
        /// The side that opened.
        side: Side,
    },
    /// A hormone.
    Hormone(HormoneKind),
}

/// A frame between neighbours.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Type.
    pub kind: FrameKind,
    /// 0 at the creator, +1 per hop.
    pub hop: u8,
    /// The sender's exit side (the seed's Connector field).
    pub connector: Side,
    /// Relayed handshakes and notices: the hops from the sender back to the origin
    /// (near side, far side), record 0029 (H5).
    pub path: Vec<Hop>,
    /// Hormone data.
    pub data: Vec<f64>,
}

/// Most hops a hormone may have made: an organism has at most 16 modules (§2), so a
/// hormone that has passed more has looped or been forged.
pub const MAX_HORMONE_HOPS: u8 = 16;

/// Where an obstacle hormone says the obstacle is (module frame of the detector).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObstacleSide {
    /// On the left: the organism turns right.
    Left = 1,
    /// On the right: the organism turns left.
    Right = 2,
    /// Ahead (or behind): the organism reverses.
    Front = 3,
}

impl ObstacleSide {
    /// The side of a hormone datum.
    pub fn from_datum(v: f64) -> Option<ObstacleSide> {
        match v as i64 {
            1 if v == 1.0 => Some(ObstacleSide::Left),
            2 if v == 2.0 => Some(ObstacleSide::Right),
            3 if v == 3.0 => Some(ObstacleSide::Front),
            _ => None,
        }
    }
}

impl Frame {
    /// A frame made here (hop 0, no path); its Connector field is stamped with the side it
    /// leaves through when it is sent.
    fn new(kind: FrameKind, hop: u8, data: Vec<f64>) -> Frame {
        Frame {
            kind,
            hop,
            connector: Side::B,
            path: Vec::new(),
            data,
        }
    }
}

/// Queues `frame` out of `side`, its Connector field the side it leaves through.
fn push(out: &mut Vec<(Side, Frame)>, side: Side, mut frame: Frame) {
    frame.connector = side;
    out.push((side, frame));
}

/// Settings shared by every module (record 0029).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HormoneSettings {
    /// Mapping level (hop limit of relays); the seed's organisms use 2.
    pub max_level: u8,
    /// Ticks between handshakes on all four sides (K).
    pub handshake_every: u64,
    /// Ticks without a handshake after which a side is open (T).
    pub timeout_ticks: u64,
    /// Ticks per half wave of the caterpillar (n = 4).
    pub half_period: u64,
    /// Caterpillar and V hinge amplitude, deg (45).
    pub angle_deg: f64,
    /// Scorpion arm angle, deg (0.75 rad).
    pub scorpion_angle_deg: f64,
    /// Ticks the scorpion head waits for both arms before it strokes again anyway.
    pub stroke_timeout: u64,
    /// IR thresholds per side (B, F, R, L): an obstacle when the mean of ten readings is
    /// below (the seed tunes them by hand per side and organism and gives none, H11; the
    /// default 20 is 12.5 cm with the simulator's 0.8 m sensors).
    pub ir_threshold: [f64; 4],
    /// Ticks between two obstacle hormones while a detector stays blocked.
    pub obstacle_every: u64,
    /// The V centre's "fixed short duration" (H7), in half periods: how long one arm's
    /// report sends the other arm forward, and the window in which reports from both arms
    /// send the whole V forward.
    pub v_turn_half_periods: u64,
}

impl Default for HormoneSettings {
    fn default() -> Self {
        HormoneSettings {
            max_level: 2,
            handshake_every: 4,
            timeout_ticks: 12,
            half_period: 4,
            angle_deg: 45.0,
            scorpion_angle_deg: 0.75f64.to_degrees(),
            stroke_timeout: 20,
            ir_threshold: [20.0; 4],
            obstacle_every: 8,
            v_turn_half_periods: 4,
        }
    }
}

/// Largest tick count any timing setting may take (the seed gives none, H11; 1024 ticks
/// is over four minutes at 0.25 s a tick).
pub const MAX_SETTING_TICKS: u64 = 1024;

impl HormoneSettings {
    /// Every field in range, or the first one that is not, named: the timeout must outlast
    /// two handshake periods or a live side would go open between two handshakes.
    pub fn check(&self) -> Result<(), String> {
        let ticks = |name: &str, v: u64, lo: u64, hi: u64| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(format!("`{name}` = {v} is outside [{lo}, {hi}] ticks"))
            }
        };
        if !(1..=MAX_HORMONE_HOPS).contains(&self.max_level) {
            return Err(format!(
                "`max_level` = {} is outside [1, {MAX_HORMONE_HOPS}]",
                self.max_level
            ));
        }
        ticks("handshake_every", self.handshake_every, 1, 64)?;
        ticks(
            "timeout_ticks",
            self.timeout_ticks,
            2 * self.handshake_every,
            MAX_SETTING_TICKS,
        )
        .map_err(|e| format!("{e} (at least two handshake periods)"))?;
        ticks("half_period", self.half_period, 1, 64)?;
        ticks("stroke_timeout", self.stroke_timeout, 1, MAX_SETTING_TICKS)?;
        ticks("obstacle_every", self.obstacle_every, 1, MAX_SETTING_TICKS)?;
        if !(1..=64).contains(&self.v_turn_half_periods) {
            return Err(format!(
                "`v_turn_half_periods` = {} is outside [1, 64] half periods",
                self.v_turn_half_periods
            ));
        }
        for (name, v) in [
            ("angle_deg", self.angle_deg),
            ("scorpion_angle_deg", self.scorpion_angle_deg),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 90.0) {
                return Err(format!("`{name}` = {v} is outside (0, 90] deg"));
            }
        }
        if let Some((side, v)) = crate::hormone::sensing::not_a_reading(&self.ir_threshold) {
            return Err(format!(
                "`ir_threshold` side {side} = {v} is not a reading from 0 to 128"
            ));
        }
        Ok(())
    }
}

/// A module's role, from its type and its map (§4, §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// No neighbour.
    Alone,
    /// Caterpillar end whose Back is joined (the front-most end, type 2).
    CaterpillarFrontEnd,
    /// Caterpillar end whose Front is joined (the rear-most end, type 8).
    CaterpillarRearEnd,
    /// Caterpillar body.
    CaterpillarMiddle,
    /// Rolled 90°: its hinge yaws.
    Pitched,
    /// V centre (joined on a side connector).
    VCentre,
    /// V arm between end and centre.
    VArm,
    /// V arm end.
    VEnd,
    /// Scorpion head (three neighbours).
    ScorpionHead,
    /// Scorpion inner arm (pitched), on the head's Front (right) or Back (left).
    ScorpionInnerArm {
        /// On the head's Front side.
        right: bool,
    },
    /// Scorpion outer arm.
    ScorpionOuterArm {
        /// On the right arm.
        right: bool,
    },
    /// Inner tail (on the head's Right).
    ScorpionInnerTail,
    /// Outer tail.
    ScorpionOuterTail,
}

impl Role {
    /// A short name for reports.
    pub fn name(&self) -> &'static str {
        match self {
            Role::Alone => "alone",
            Role::CaterpillarFrontEnd => "caterpillar front end",
            Role::CaterpillarRearEnd => "caterpillar rear end",
            Role::CaterpillarMiddle => "caterpillar middle",
            Role::Pitched => "pitched",
            Role::VCentre => "V centre",
            Role::VArm => "V arm",
            Role::VEnd => "V end",
            Role::ScorpionHead => "scorpion head",
            Role::ScorpionInnerArm { right: true } => "scorpion right inner arm",
            Role::ScorpionInnerArm { right: false } => "scorpion left inner arm",
            Role::ScorpionOuterArm { right: true } => "scorpion right outer arm",
            Role::ScorpionOuterArm { right: false } => "scorpion left outer arm",
            Role::ScorpionInnerTail => "scorpion inner tail",
            Role::ScorpionOuterTail => "scorpion outer tail",
        }
    }
}

fn joined(status: &[Status; 4]) -> usize {
    status.iter().filter(|s| s.is_some()).count()
}

/// A junction: a module with three or more neighbours (a scorpion head), one joined on a
/// side connector between two others (a V centre), or an upright one whose Back is joined to
/// another Back (the head of a scorpion without its tail; its pitched inner arm has the same
/// joins, so the tilt the handshakes carry tells them apart).
fn junction(node: &MapNode) -> Option<Role> {
    let status = &node.status;
    let side_joined = status[Side::R.index()].is_some() || status[Side::L.index()].is_some();
    let back_to_back = status[Side::B.index()] == Some(Side::B);
    match joined(status) {
        n if n >= 3 => Some(Role::ScorpionHead),
        2 if side_joined => Some(Role::VCentre),
        2 if back_to_back && node.pitched == Some(false) => Some(Role::ScorpionHead),
        _ => None,
    }
}

/// Classifies from the own statuses, the map and the tilt sensor (record 0029): a junction
/// within the map makes the module part of a V or a scorpion, where along which side of the
/// junction it hangs says which part; with none in sight it is a caterpillar.
pub fn classify(map: &TopologyMap, pitched: bool, max_depth: usize) -> Role {
    let own = map.status();
    if let Some(r) = junction(&map.root) {
        return r;
    }
    // The nearest junction in the map, and the path to it.
    let mut found: Option<(Vec<Hop>, Role)> = None;
    'search: for depth in 1..=max_depth {
        for path in map.root.paths_at(depth) {
            if let Some(node) = map.root.get(&path)
                && let Some(r) = junction(node)
            {
                found = Some((path, r));
                break 'search;
            }
        }
    }
    match found {
        Some((path, Role::ScorpionHead)) => {
            let head_side = path.last().map(|h| h.1).unwrap_or(Side::B);
            let inner = path.len() == 1;
            match head_side {
                Side::F => {
                    if inner {
                        Role::ScorpionInnerArm { right: true }
                    } else {
                        Role::ScorpionOuterArm { right: true }
                    }
                }
                Side::B => {
                    if inner {
                        Role::ScorpionInnerArm { right: false }
                    } else {
                        Role::ScorpionOuterArm { right: false }
                    }
                }
                _ => {
                    if inner {
                        Role::ScorpionInnerTail
                    } else {
                        Role::ScorpionOuterTail
                    }
                }
            }
        }
        Some((_, _)) => match joined(own) {
            1 => Role::VEnd,
            _ => Role::VArm,
        },
        None if pitched => Role::Pitched,
        None => match (joined(own), own[Side::B.index()], own[Side::F.index()]) {
            (0, _, _) => Role::Alone,
            (1, Some(_), None) => Role::CaterpillarFrontEnd,
            (1, None, Some(_)) => Role::CaterpillarRearEnd,
            _ => Role::CaterpillarMiddle,
        },
    }
}

/// One module's controller.
#[derive(Debug, Clone)]
pub struct HormoneModule {
    settings: HormoneSettings,
    map: TopologyMap,
    last_seen: [Option<u64>; 4],
    tick: u64,
    direction: i8,
    hinge_deg: f64,
    pitched: bool,
    role: Role,
    /// Ticks since this module started initiating the wave (`None`: not initiating).
    initiating: Option<u64>,
    /// The map changed (a module left): the next initiator resets the segment first.
    split: bool,
    /// A pitched module's turn pulse ends after this tick.
    pulse_until: Option<u64>,
    /// Scorpion head: the stroke step sent last (1 or 2), the tick it was sent, and the
    /// arms' sides still to answer.
    stroke: Option<(u8, u64, Vec<Side>)>,
    /// IR buffers.
    ir: IrSensors,
    /// Tick of the last obstacle hormone or sensor-driven direction change.
    last_alarm: Option<u64>,
    /// V centre: the arms it stopped (forward) — their sides.
    stopped_arms: Vec<Side>,
    /// Scorpion outer arm: it flipped the other side's inner arm and owes a second flip.
    flipped: bool,
    /// V centre in reverse: the arm it sent forward to turn, and until which tick.
    turning: Option<(Side, u64)>,
    /// V centre in reverse: the side and tick of the last obstacle report.
    last_report: Option<(Side, u64)>,
    /// Locomotion hormones that arrived between ticks, copied at the next tick (record
    /// 0029, execution cycles).
    held: Vec<(Side, Frame)>,
    /// Handling a frame between ticks (a turn pulse then lasts to the end of the next tick).
    between_ticks: bool,
    /// Frames refused (hop count over the limit, hormone without its data).
    dropped: u64,
    /// Why the last frame was refused.
    last_refusal: Option<String>,
}

impl HormoneModule {
    /// A module facing forward, hinge at 0, knowing nothing of its neighbours.
    pub fn new(settings: HormoneSettings) -> HormoneModule {
        HormoneModule {
            settings,
            map: TopologyMap::default(),
            last_seen: [None; 4],
            tick: 0,
            direction: 1,
            hinge_deg: 0.0,
            pitched: false,
            role: Role::Alone,
            initiating: None,
            split: false,
            pulse_until: None,
            stroke: None,
            ir: IrSensors::default(),
            last_alarm: None,
            stopped_arms: Vec::new(),
            flipped: false,
            turning: None,
            last_report: None,
            held: Vec::new(),
            between_ticks: false,
            dropped: 0,
            last_refusal: None,
        }
    }

    /// Frames refused so far, and why the last one was (for a rate-limited log).
    pub fn refused(&self) -> (u64, Option<&str>) {
        (self.dropped, self.last_refusal.as_deref())
    }

    /// Why `f` must be dropped, if it must: a relay beyond the mapping level, a hormone past
    /// the organism size, a path that does not match its hop count, a hormone missing its
    /// data.
    pub fn check(&self, f: &Frame) -> Result<(), String> {
        let limit = match f.kind {
            FrameKind::Handshake { .. } | FrameKind::Loss { .. } => self.settings.max_level,
            FrameKind::Hormone(_) => MAX_HORMONE_HOPS,
        };
        if f.hop > limit {
            return Err(format!(
                "{:?} frame with hop count {} over the limit {limit}",
                f.kind, f.hop
            ));
        }
        if matches!(f.kind, FrameKind::Handshake { .. } | FrameKind::Loss { .. }) && f.path.len() != usize::from(f.hop)
        {
            return Err(format!(
                "{:?} frame with hop count {} and a path of {} hops",
                f.kind,
                f.hop,
                f.path.len()
            ));
        }
        let needs_data = matches!(
            f.kind,
            FrameKind::Hormone(HormoneKind::Locomotion | HormoneKind::DirectionChange | HormoneKind::Obstacle)
        );
        if needs_data && f.data.first().is_none_or(|v| !v.is_finite()) {
            return Err(format!("{:?} hormone without a finite datum", f.kind));
        }
        if f.kind == FrameKind::Hormone(HormoneKind::Obstacle)
            && f.data.first().and_then(|v| ObstacleSide::from_datum(*v)).is_none()
        {
            return Err(format!(
                "obstacle hormone with side {:?} (1 left, 2 right, 3 front)",
                f.data.first()
            ));
        }
        if f.kind == FrameKind::Hormone(HormoneKind::Obstacle) && f.data.get(1).is_some_and(|d| *d != 1.0 && *d != -1.0)
        {
            return Err(format!(
                "obstacle hormone with direction {:?} (1 forward, -1 reverse)",
                f.data.get(1)
            ));
        }
        Ok(())
    }

    /// The tilt sensor: rolled 90° about the chain axis.
    pub fn set_pitched(&mut self, pitched: bool) {
        self.pitched = pitched;
    }

    /// The map.
    pub fn map(&self) -> &TopologyMap {
        &self.map
    }

    /// The role found last tick.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Hinge target, deg.
    pub fn hinge_deg(&self) -> f64 {
        self.hinge_deg
    }

    /// 1 forward, −1 reverse, 0 stop.
    pub fn direction(&self) -> i8 {
        self.direction
    }

    /// Module type.
    pub fn module_type(&self) -> u16 {
        self.map.module_type()
    }

    fn joined_sides(&self) -> Vec<Side> {
        Side::ALL
            .into_iter()
            .filter(|s| self.map.status()[s.index()].is_some())
            .collect()
    }

    /// One tick (a time step of Table 8): the frames that arrived (arrival side, frame) and
    /// the locomotion hormones held since the last tick, then the module's own sends;
    /// returns the frames to send (exit side, frame).
    pub fn step(&mut self, inbox: &[(Side, Frame)]) -> Vec<(Side, Frame)> {
        self.tick += 1;
        if self.pulse_until.is_some_and(|t| self.tick > t) {
            self.pulse_until = None;
            self.hinge_deg = 0.0;
        }
        let mut out = Vec::new();
        for (arrival, frame) in std::mem::take(&mut self.held) {
            self.receive(arrival, &frame, &mut out);
        }
        for (arrival, frame) in inbox {
            if self.accept(frame) {
                self.receive(*arrival, frame, &mut out);
            }
        }
        self.check_timeouts(&mut out);
        if self.tick % self.settings.handshake_every == 1 || self.settings.handshake_every == 1 {
            for side in Side::ALL {
                push(&mut out, side, self.handshake(false));
            }
        }
        self.map.root.pitched = Some(self.pitched);
        self.role = classify(&self.map, self.pitched, usize::from(self.settings.max_level) + 1);
        self.react_to_sensors(&mut out);
        self.gait(&mut out);
        out
    }

    /// An execution cycle between two ticks (record 0029): handshakes, loss notices and
    /// every hormone but locomotion are handled and passed on at once; locomotion hormones
    /// are held for the next tick, so the wave still moves one module per tick (Table 8)
    /// while an obstacle or a direction change crosses the organism within a tick.
    pub fn cycle(&mut self, inbox: &[(Side, Frame)]) -> Vec<(Side, Frame)> {
        let mut out = Vec::new();
        self.between_ticks = true;
        for (arrival, frame) in inbox {
            if !self.accept(frame) {
                continue;
            }
            if frame.kind == FrameKind::Hormone(HormoneKind::Locomotion) {
                self.held.push((*arrival, frame.clone()));
            } else {
                self.receive(*arrival, frame, &mut out);
            }
        }
        self.between_ticks = false;
        out
    }

    /// Whether `frame` passes [`HormoneModule::check`]; a refused one is counted and its
    /// reason kept.
    fn accept(&mut self, frame: &Frame) -> bool {
        match self.check(frame) {
            Ok(()) => true,
            Err(why) => {
                self.dropped += 1;
                self.last_refusal = Some(why);
                false
            }
        }
    }

    /// This tick's IR readings, 0 … 128 per side (B, F, R, L), before [`HormoneModule::step`]:
    /// only open sides are scanned, and a pitched module skips L and R.
    pub fn sense(&mut self, readings: &[f64; 4]) {
        let scan: Vec<Side> = Side::ALL
            .into_iter()
            .filter(|s| self.map.status()[s.index()].is_none())
            .filter(|s| !(self.pitched && matches!(s, Side::L | Side::R)))
            .collect();
        self.ir.scan(readings, &scan);
    }

    fn blocked(&self, side: Side) -> bool {
        self.ir.blocked(side, self.settings.ir_threshold[side.index()])
    }

    fn alarm_due(&self) -> bool {
        self.last_alarm
            .is_none_or(|t| self.tick - t >= self.settings.obstacle_every)
    }

    /// The sensor rules of §7, by role.
    fn react_to_sensors(&mut self, out: &mut Vec<(Side, Frame)>) {
        match self.role {
            // The leading end of a caterpillar (not the initiator) detects (§7.1); its front
            // is F going forward, B in reverse.
            Role::CaterpillarFrontEnd | Role::CaterpillarRearEnd if !self.initiator() => {
                let front = if self.direction >= 0 { Side::F } else { Side::B };
                let (right, left) = (self.blocked(Side::R), self.blocked(Side::L));
                let side = if self.blocked(front) {
                    Some(if !right {
                        ObstacleSide::Left
                    } else if !left {
                        ObstacleSide::Right
                    } else {
                        ObstacleSide::Front
                    })
                } else if right {
                    Some(ObstacleSide::Right)
                } else if left {
                    Some(ObstacleSide::Left)
                } else {
                    None
                };
                if let Some(s) = side
                    && self.alarm_due()
                {
                    self.last_alarm = Some(self.tick);
                    // With the direction it was going: a report sent before a reversal reached
                    // it is stale by the time it reaches the initiator (record 0029, stale reports).
                    let data = vec![f64::from(s as u8), f64::from(self.direction)];
                    self.emit(HormoneKind::Obstacle, 0, data, None, out);
                }
            }
            // Forward, the V centre stops the arm on the far side of an obstacle and restarts
            // it once clear (§7.2): F watches the organism's left (stop the arm on B), R its
            // right (stop the arm on L).
            Role::VCentre if self.direction == 1 => {
                for (sensor, arm) in [(Side::F, Side::B), (Side::R, Side::L)] {
                    let stopped = self.stopped_arms.contains(&arm);
                    if self.blocked(sensor) && !stopped {
                        self.stopped_arms.push(arm);
                        self.send_on(arm, HormoneKind::DirectionChange, vec![0.0], out);
                    } else if !self.blocked(sensor) && stopped {
                        self.stopped_arms.retain(|a| *a != arm);
                        self.send_on(arm, HormoneKind::DirectionChange, vec![1.0], out);
                    }
                }
            }
            // Reverse, the V's ends report obstacles toward the centre (§7.2).
            Role::VEnd
                if self.direction == -1
                    && [Side::B, Side::L, Side::R].into_iter().any(|s| self.blocked(s))
                    && self.alarm_due() =>
            {
                self.last_alarm = Some(self.tick);
                let front = vec![f64::from(ObstacleSide::Front as u8)];
                self.emit(HormoneKind::Obstacle, 0, front, None, out);
            }
            // The scorpion head watches ahead with L; an obstacle reverses the organism (§7.3).
            Role::ScorpionHead if self.direction == 1 && self.blocked(Side::L) => {
                let frames = self.reverse();
                out.extend(frames);
            }
            // An outer arm that sees something flips the other inner arm, and flips it back
            // once clear.
            Role::ScorpionOuterArm { .. } if self.direction == 1 => {
                let seen = [Side::F, Side::L, Side::R].into_iter().any(|s| self.blocked(s));
                if seen != self.flipped {
                    self.flipped = seen;
                    self.emit(HormoneKind::DirectionFlip, 0, Vec::new(), None, out);
                }
            }
            // Reversing, the outer tail's F sensor sends the organism forward again.
            Role::ScorpionOuterTail if self.direction == -1 && self.blocked(Side::F) => {
                self.direction = 1;
                self.emit(HormoneKind::DirectionChange, 0, vec![1.0], None, out);
            }
            _ => {}
        }
    }

    fn send_on(&self, side: Side, kind: HormoneKind, data: Vec<f64>, out: &mut Vec<(Side, Frame)>) {
        push(out, side, Frame::new(FrameKind::Hormone(kind), 0, data));
    }

    /// A handshake carrying this module's tilt (the Hormone Data field).
    fn handshake(&self, ack: bool) -> Frame {
        Frame::new(FrameKind::Handshake { ack }, 0, vec![f64::from(u8::from(self.pitched))])
    }

    /// Sends `frame` out of every joined side but `except`.
    fn broadcast(&self, frame: &Frame, except: Option<Side>, out: &mut Vec<(Side, Frame)>) {
        for side in self.joined_sides().into_iter().filter(|s| Some(*s) != except) {
            push(out, side, frame.clone());
        }
    }

    fn receive(&mut self, arrival: Side, f: &Frame, out: &mut Vec<(Side, Frame)>) {
        let to_sender: Hop = (arrival, f.connector);
        // The hops from here back to the frame's origin.
        let mut full = vec![to_sender];
        full.extend_from_slice(&f.path);
        match f.kind {
            FrameKind::Handshake { ack } => {
                // Any handshake shows the neighbour on this side.
                if self.map.root.status[arrival.index()] != Some(f.connector) {
                    self.map.root.children[arrival.index()] = None;
                }
                self.last_seen[arrival.index()] = Some(self.tick);
                // The origin's tilt, when the frame carries it (the Hormone Data field).
                let tilt = f.data.first().map(|v| *v == 1.0);
                let origin = self.map.root.insert(&full);
                if tilt.is_some() {
                    origin.pitched = tilt;
                }
                if ack {
                    return;
                }
                if f.hop == 0 {
                    push(out, arrival, self.handshake(true));
                }
            }
            FrameKind::Loss { side } => {
                self.map.root.open(&full, side);
                self.split = true;
            }
            FrameKind::Hormone(kind) => return self.hormone(kind, arrival, f, out),
        }
        // Handshakes and loss notices travel on up to the mapping level.
        if f.hop < self.settings.max_level {
            let relayed = Frame {
                hop: f.hop + 1,
                path: full,
                ..f.clone()
            };
            self.broadcast(&relayed, Some(arrival), out);
        }
    }

    fn check_timeouts(&mut self, out: &mut Vec<(Side, Frame)>) {
        for side in Side::ALL {
            let i = side.index();
            let stale = self.last_seen[i].is_some_and(|t| self.tick - t > self.settings.timeout_ticks);
            if self.map.root.status[i].is_some() && stale {
                self.map.root.open(&[], side);
                self.last_seen[i] = None;
                self.split = true;
                self.broadcast(&Frame::new(FrameKind::Loss { side }, 0, Vec::new()), Some(side), out);
            }
        }
    }

    /// Sends `kind` with `data` out of every joined side except `except`.
    fn emit(&self, kind: HormoneKind, hop: u8, data: Vec<f64>, except: Option<Side>, out: &mut Vec<(Side, Frame)>) {
        self.broadcast(&Frame::new(FrameKind::Hormone(kind), hop, data), except, out);
    }

    fn hormone(&mut self, kind: HormoneKind, arrival: Side, f: &Frame, out: &mut Vec<(Side, Frame)>) {
        let next = f.hop.saturating_add(1);
        match kind {
            HormoneKind::Locomotion => {
                let Some(&angle) = f.data.first() else { return };
                if self.initiating.is_some() {
                    return; // the initiator makes the wave, it does not copy one
                }
                if self.stale_wave(arrival) {
                    return;
                }
                match self.role {
                    // Passed on unchanged, hinge at 0 (§6.1).
                    Role::Pitched => self.emit(kind, next, vec![angle], Some(arrival), out),
                    // The V's waves end at the centre, which does not actuate (§6.2).
                    Role::VCentre | Role::ScorpionInnerTail | Role::ScorpionOuterTail => {}
                    Role::ScorpionHead => {
                        if let Some((_, _, waiting)) = &mut self.stroke {
                            waiting.retain(|s| *s != arrival);
                        }
                    }
                    Role::ScorpionInnerArm { .. } => {
                        let from_head = self.map.root.children[arrival.index()]
                            .as_deref()
                            .is_some_and(|n| junction(n) == Some(Role::ScorpionHead));
                        if from_head {
                            // To the outer arm, no action.
                            self.emit(kind, next, f.data.clone(), Some(arrival), out);
                        } else {
                            // The outer arm's angle, with the direction's sign, back to the head.
                            self.hinge_deg = angle * f64::from(self.direction);
                            self.emit(kind, next, vec![self.hinge_deg], Some(arrival), out);
                        }
                    }
                    Role::ScorpionOuterArm { .. } => {
                        let Some(&step) = f.data.get(1) else { return };
                        let a = self.settings.scorpion_angle_deg;
                        self.hinge_deg = if step == 1.0 { a } else { -a };
                        self.send_on(arrival, kind, vec![self.hinge_deg], out);
                    }
                    _ => {
                        self.hinge_deg = angle;
                        self.emit(kind, next, vec![angle], Some(arrival), out);
                    }
                }
            }
            HormoneKind::DirectionChange => {
                let Some(&d) = f.data.first() else { return };
                // (f64::signum(0.0) is 1: stop must stay 0.)
                self.direction = if d > 0.5 {
                    1
                } else if d < -0.5 {
                    -1
                } else {
                    0
                };
                self.initiating = None;
                self.emit(kind, next, f.data.clone(), Some(arrival), out);
            }
            HormoneKind::DirectionFlip => {
                if matches!(self.role, Role::ScorpionInnerArm { .. }) && f.hop >= 2 {
                    self.direction = -self.direction; // consumed (H9)
                } else {
                    self.emit(kind, next, Vec::new(), Some(arrival), out);
                }
            }
            HormoneKind::Reset => {
                self.hinge_deg = 0.0;
                self.initiating = None;
                self.split = false;
                self.emit(kind, next, Vec::new(), Some(arrival), out);
            }
            HormoneKind::Obstacle => {
                let side = f.data.first().and_then(|v| ObstacleSide::from_datum(*v));
                match (self.role, side) {
                    // A turn pulse for one tick, consumed (§7.1).
                    (Role::Pitched, Some(ObstacleSide::Right)) => self.pulse(self.settings.angle_deg),
                    (Role::Pitched, Some(ObstacleSide::Left)) => self.pulse(-self.settings.angle_deg),
                    // Reversing, the V centre reads only the side a report came in on (§7.2).
                    (Role::VCentre, _) if self.direction == -1 => self.v_report(arrival, out),
                    // Reaching the initiator, it reverses the caterpillar, unless the report was
                    // about the way it went before an earlier reversal (record 0029).
                    _ if self.initiator() => {
                        let stale = f.data.get(1).is_some_and(|d| *d != f64::from(self.direction));
                        if !stale {
                            let frames = self.reverse();
                            out.extend(frames);
                        }
                    }
                    _ => self.emit(kind, next, f.data.clone(), Some(arrival), out),
                }
            }
        }
    }

    /// Whether a locomotion hormone that came in on `arrival` belongs to a wave that was
    /// under way before a reversal (record 0029): in a caterpillar, a V arm and a pitched
    /// module a forward wave comes in on B and a reverse one on F, so one from ahead is
    /// stale and is dropped (else it runs on to the far end, which keeps moving toward
    /// what it saw).
    fn stale_wave(&self, arrival: Side) -> bool {
        let chain = matches!(
            self.role,
            Role::CaterpillarFrontEnd
                | Role::CaterpillarRearEnd
                | Role::CaterpillarMiddle
                | Role::Pitched
                | Role::VArm
                | Role::VEnd
        );
        chain && matches!((self.direction, arrival), (1, Side::F) | (-1, Side::B))
    }

    /// The V centre's reverse-mode rule: a report from one arm sends the *other* arm
    /// forward for a while (the organism turns away); reports from both within the window
    /// send the whole V forward.
    fn v_report(&mut self, arrival: Side, out: &mut Vec<(Side, Frame)>) {
        let window = self.settings.v_turn_half_periods * self.settings.half_period;
        let other_recent = self
            .last_report
            .is_some_and(|(s, t)| s != arrival && self.tick - t <= window);
        self.last_report = Some((arrival, self.tick));
        if other_recent {
            self.turning = None;
            let frames = self.reverse();
            out.extend(frames);
            return;
        }
        let arm = Side::ALL
            .into_iter()
            .find(|s| *s != arrival && self.map.status()[s.index()].is_some());
        if let Some(arm) = arm
            && self.turning.is_none()
        {
            self.turning = Some((arm, self.tick + window));
            self.send_on(arm, HormoneKind::DirectionChange, vec![1.0], out);
        }
    }

    fn pulse(&mut self, deg: f64) {
        self.hinge_deg = deg;
        // For the rest of this tick, or of the next when it came between ticks.
        self.pulse_until = Some(self.tick + u64::from(self.between_ticks));
    }

    /// Reverses: d ← −d, stop initiating, and the new direction to every neighbour
    /// (§7.1 (iii)); the far end then initiates.
    pub fn reverse(&mut self) -> Vec<(Side, Frame)> {
        self.direction = -self.direction;
        self.initiating = None;
        self.originate(HormoneKind::DirectionChange, vec![f64::from(self.direction)])
    }

    /// Whether this module starts the wave: the caterpillar end opposite the direction of
    /// travel (forward = toward the Front connectors, H4: the rear end initiates); the V's
    /// ends going forward, its centre in reverse (§6.2).
    fn initiator(&self) -> bool {
        matches!(
            (self.role, self.direction),
            (Role::CaterpillarRearEnd | Role::VEnd, 1) | (Role::CaterpillarFrontEnd | Role::VCentre, -1)
        )
    }

    /// The scorpion head's stroke loop (§6.3): step 1 or 2 to every neighbour, the next
    /// step once both arms have answered (or the wait times out).
    fn stroke(&mut self, out: &mut Vec<(Side, Frame)>) {
        let due = match &self.stroke {
            None => true,
            Some((_, sent, waiting)) => waiting.is_empty() || self.tick - sent > self.settings.stroke_timeout,
        };
        if !due {
            return;
        }
        let step = match &self.stroke {
            Some((1, _, _)) => 2,
            _ => 1,
        };
        let arms: Vec<Side> = [Side::F, Side::B]
            .into_iter()
            .filter(|s| self.map.status()[s.index()].is_some())
            .collect();
        self.stroke = Some((step, self.tick, arms));
        self.emit(HormoneKind::Locomotion, 0, vec![0.0, f64::from(step)], None, out);
    }

    fn gait(&mut self, out: &mut Vec<(Side, Frame)>) {
        if self.role == Role::ScorpionHead {
            self.stroke(out);
            return;
        }
        self.stroke = None;
        if !self.initiator() {
            self.initiating = None;
            return;
        }
        if self.split {
            // A new segment starts from its initial posture (§8).
            self.split = false;
            self.hinge_deg = 0.0;
            self.initiating = None;
            self.emit(HormoneKind::Reset, 0, Vec::new(), None, out);
            return;
        }
        let k = self.initiating.map_or(0, |k| k + 1);
        self.initiating = Some(k);
        let a = self.settings.angle_deg;
        let angle = if (k / self.settings.half_period) % 2 == 0 {
            a
        } else {
            -a
        };
        // The V's centre sends the wave out of both arms without moving itself, except out
        // of an arm it has sent forward to turn; when the turn is over that arm reverses again.
        if self.role != Role::VCentre {
            self.hinge_deg = angle;
        }
        let mut skip = None;
        if let Some((arm, until)) = self.turning {
            if self.tick >= until {
                self.turning = None;
                self.send_on(arm, HormoneKind::DirectionChange, vec![-1.0], out);
            } else {
                skip = Some(arm);
            }
        }
        self.emit(HormoneKind::Locomotion, 0, vec![angle], skip, out);
    }
}

impl HormoneModule {
    /// Starts a hormone here (hop 0) out of every joined side: what a sensor rule does.
    pub fn originate(&self, kind: HormoneKind, data: Vec<f64>) -> Vec<(Side, Frame)> {
        let mut out = Vec::new();
        self.emit(kind, 0, data, None, &mut out);
        out
    }

    /// The module's own map node.
    pub fn own_node(&self) -> &MapNode {
        &self.map.root
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §7: a module scans its open sides, but a pitched one skips L and R (rolled onto its
    /// side, they face the ground and the sky).
    #[test]
    fn a_pitched_module_skips_its_side_sensors() {
        let settings = HormoneSettings {
            ir_threshold: [64.0; 4],
            ..HormoneSettings::default()
        };
        let mut m = HormoneModule::new(settings);
        for _ in 0..10 {
            m.sense(&[128.0, 128.0, 0.0, 0.0]);
        }
        assert!(m.blocked(Side::R) && m.blocked(Side::L), "upright: its sides see");
        let mut p = HormoneModule::new(settings);
        p.set_pitched(true);
        for _ in 0..10 {
            p.sense(&[0.0; 4]);
        }
        assert!(
            !p.blocked(Side::R) && !p.blocked(Side::L),
            "pitched: its sides are skipped"
        );
        assert!(p.blocked(Side::B) && p.blocked(Side::F), "pitched: its ends still see");
    }
}
