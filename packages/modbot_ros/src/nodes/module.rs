//! `module_node`: one module of a digital-hormone organism (seed-003), the same binary in
//! every module. It runs modbot_gaits' [`HormoneModule`] and nothing else: no identity of
//! its own, behaviour from the role its handshakes map and the hormones its neighbours send.
//!
//! Per connector X of B, F, R, L it publishes the frames it sends on `out/X` and reads its
//! neighbour's on `in/X` (modbot_msgs/HormoneFrame); the organism's launch file
//! (`modbot export launch ORGANISM`) remaps each `in/X` onto the `out/Y` of the module joined
//! there. It reads `sensors` (modbot_msgs/ModuleSensors: IR per side, tilt, which connectors
//! are docked), publishes its hinge target on `hinge_cmd` (std_msgs/Float64, rad) and its
//! type, role and direction on `state` (modbot_msgs/ModuleState) every tick.
//!
//! Time: execution cycles of `tick_s / cycles_per_tick` on the node's clock (`/clock` with
//! `use_sim_time`, so every module of a simulated organism cycles in step with the physics);
//! every 8th cycle of the clock is a tick. A frame carries the start of the sender's cycle
//! and is handled in the receiver's first cycle that starts later, as on the in-process bus
//! (records 0029, 0031). Frames pass only through docked
//! connectors. A malformed frame (unknown kind or code, a side code out of range, a hop count
//! over the limit, a path that does not match its hops) or a sensor message with a reading
//! out of range is dropped and logged, at most one line per kind every 5 s.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use modbot_gaits::hormone::sensing::not_a_reading;
use modbot_gaits::hormone::{Frame, FrameKind, HormoneKind, HormoneModule, HormoneSettings, Side, is_pitched};
use modbot_msgs::modbot_msgs::msg::{HormoneFrame, ModuleSensors, ModuleState};
use modbot_msgs::std_msgs::msg::{Float64, Header};

use crate::error::Result;
use crate::params::{Get, NodeConfig, ParamDecl, ParamMap, ParamValue};
use crate::transport::{Level, Pub, Qos, Sub, Throttle, Transport};

/// The node's parameters, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleNodeConfig {
    /// The hormone settings every module of the organism shares.
    pub settings: HormoneSettings,
    /// Seconds per hormone tick.
    pub tick_s: f64,
    /// Execution cycles per tick.
    pub cycles_per_tick: u64,
}

impl NodeConfig for ModuleNodeConfig {
    fn declarations() -> Vec<ParamDecl> {
        let d = HormoneSettings::default();
        vec![
            ParamDecl::new(
                "ir_threshold",
                ParamValue::DoubleArray(d.ir_threshold.to_vec()),
                "IR thresholds B, F, R, L (0 … 128): a side whose mean of ten readings is below sees an obstacle",
            ),
            ParamDecl::new(
                "max_level",
                ParamValue::Int(i64::from(d.max_level)),
                "mapping level: hops a handshake is relayed (the seed's organisms use 2)",
            ),
            ParamDecl::new(
                "half_period",
                ParamValue::Int(d.half_period as i64),
                "ticks per half wave (the seed's n: 4 for the caterpillar, 2 for the V, record 0034)",
            ),
            ParamDecl::new(
                "handshake_every",
                ParamValue::Int(d.handshake_every as i64),
                "ticks between handshakes on all four sides (the seed's K, H11)",
            ),
            ParamDecl::new(
                "timeout_ticks",
                ParamValue::Int(d.timeout_ticks as i64),
                "ticks without a handshake after which a side is open (the seed's T, H11; at least 2 K)",
            ),
            ParamDecl::new(
                "obstacle_every",
                ParamValue::Int(d.obstacle_every as i64),
                "ticks between two obstacle hormones while a side stays blocked",
            ),
            ParamDecl::new(
                "stroke_timeout",
                ParamValue::Int(d.stroke_timeout as i64),
                "ticks the scorpion head waits for both arms before it strokes again anyway",
            ),
            ParamDecl::new(
                "v_turn_half_periods",
                ParamValue::Int(d.v_turn_half_periods as i64),
                "the V centre's turn (one arm's report sends the other forward) and two-sided window, in half periods (H7)",
            ),
            ParamDecl::new(
                "tick_s",
                ParamValue::Double(modbot_app::organism::TICK_S),
                "seconds per hormone tick",
            ),
            ParamDecl::new(
                "cycles_per_tick",
                ParamValue::Int(modbot_app::organism::CYCLES_PER_TICK as i64),
                "execution cycles per tick (IR scans and frame relays between ticks)",
            ),
        ]
    }

    fn from_params(p: &ParamMap) -> std::result::Result<Self, String> {
        let g = Get(p);
        let ir: [f64; 4] = match p.get("ir_threshold") {
            Some(ParamValue::DoubleArray(v)) => v.clone().try_into().map_err(|v: Vec<f64>| {
                format!(
                    "parameter `ir_threshold` has {} values; expected 4 (B, F, R, L)",
                    v.len()
                )
            })?,
            _ => return Err("parameter `ir_threshold` must be an array of 4 numbers (B, F, R, L)".into()),
        };
        // Integers first (a negative one must not wrap), then the settings' own ranges
        // and relations (`HormoneSettings::check`, which names the field).
        let ticks = |k: &str| g.i64_in(k, 0, i64::MAX).map(|v| v as u64);
        let settings = HormoneSettings {
            ir_threshold: ir,
            max_level: u8::try_from(g.i64_in("max_level", 0, i64::from(u8::MAX))?).unwrap_or(0),
            half_period: ticks("half_period")?,
            handshake_every: ticks("handshake_every")?,
            timeout_ticks: ticks("timeout_ticks")?,
            obstacle_every: ticks("obstacle_every")?,
            stroke_timeout: ticks("stroke_timeout")?,
            v_turn_half_periods: ticks("v_turn_half_periods")?,
            ..HormoneSettings::default()
        };
        settings.check().map_err(|e| format!("parameter {e}"))?;
        Ok(ModuleNodeConfig {
            settings,
            tick_s: g.f64_in("tick_s", 0.01, 10.0)?,
            cycles_per_tick: g.i64_in("cycles_per_tick", 1, 64)? as u64,
        })
    }
}

/// The message of a frame sent in the cycle that started at `stamp` (s).
pub fn frame_to_msg(frame: &Frame, stamp: f64) -> HormoneFrame {
    let (kind, code) = match frame.kind {
        FrameKind::Handshake { ack: false } => (HormoneFrame::KIND_HANDSHAKE, 0),
        FrameKind::Handshake { ack: true } => (HormoneFrame::KIND_ACK, 0),
        FrameKind::Loss { side } => (HormoneFrame::KIND_LOSS, side.code() as u8),
        FrameKind::Hormone(h) => (
            HormoneFrame::KIND_HORMONE,
            match h {
                HormoneKind::Locomotion => HormoneFrame::HORMONE_LOCOMOTION,
                HormoneKind::Obstacle => HormoneFrame::HORMONE_OBSTACLE,
                HormoneKind::DirectionChange => HormoneFrame::HORMONE_DIRECTION_CHANGE,
                HormoneKind::DirectionFlip => HormoneFrame::HORMONE_DIRECTION_FLIP,
                HormoneKind::Reset => HormoneFrame::HORMONE_RESET,
            },
        ),
    };
    HormoneFrame {
        header: Header {
            stamp: modbot_msgs::builtin_interfaces::msg::Time::from_secs_f64(stamp),
            frame_id: String::new(),
        },
        kind,
        code,
        hop: frame.hop,
        connector: frame.connector.code() as u8,
        path: frame
            .path
            .iter()
            .flat_map(|(near, far)| [near.code() as u8, far.code() as u8])
            .collect(),
        data: frame.data.clone(),
    }
}

fn side_of(code: u8, field: &str) -> std::result::Result<Side, String> {
    Side::from_code(u16::from(code))
        .ok_or_else(|| format!("`{field}` = {code} is not a side code (1 B, 2 F, 3 R, 4 L)"))
}

/// The frame of a message, checked field by field (the error names the field); the hop
/// limit and the data a hormone needs are the module's own check.
pub fn frame_from_msg(m: &HormoneFrame) -> std::result::Result<Frame, String> {
    let kind = match m.kind {
        HormoneFrame::KIND_HANDSHAKE | HormoneFrame::KIND_ACK if m.code != 0 => {
            return Err(format!("`code` = {} on a handshake (expected 0)", m.code));
        }
        HormoneFrame::KIND_HANDSHAKE => FrameKind::Handshake { ack: false },
        HormoneFrame::KIND_ACK => FrameKind::Handshake { ack: true },
        HormoneFrame::KIND_LOSS => FrameKind::Loss {
            side: side_of(m.code, "code")?,
        },
        HormoneFrame::KIND_HORMONE => FrameKind::Hormone(match m.code {
            HormoneFrame::HORMONE_LOCOMOTION => HormoneKind::Locomotion,
            HormoneFrame::HORMONE_OBSTACLE => HormoneKind::Obstacle,
            HormoneFrame::HORMONE_DIRECTION_CHANGE => HormoneKind::DirectionChange,
            HormoneFrame::HORMONE_DIRECTION_FLIP => HormoneKind::DirectionFlip,
            HormoneFrame::HORMONE_RESET => HormoneKind::Reset,
            other => return Err(format!("`code` = {other} is not a hormone type (0 … 4)")),
        }),
        other => return Err(format!("`kind` = {other} is not a frame kind (0 … 3)")),
    };
    if m.path.len() % 2 != 0 {
        return Err(format!("`path` has {} side codes; expected pairs", m.path.len()));
    }
    let path = m
        .path
        .chunks(2)
        .map(|p| Ok((side_of(p[0], "path")?, side_of(p[1], "path")?)))
        .collect::<std::result::Result<Vec<_>, String>>()?;
    if let Some(i) = m.data.iter().position(|v| !v.is_finite()) {
        return Err(format!("`data[{i}]` = {} is not finite", m.data[i]));
    }
    if m.data.len() > 8 {
        return Err(format!(
            "`data` has {} values; a hormone carries at most 8",
            m.data.len()
        ));
    }
    Ok(Frame {
        kind,
        hop: m.hop,
        connector: side_of(m.connector, "connector")?,
        path,
        data: m.data.clone(),
    })
}

/// What a module senses, checked: IR readings 0 … 128, a finite tilt.
pub fn sensors_from_msg(m: &ModuleSensors) -> std::result::Result<([f64; 4], f64, [bool; 4]), String> {
    if let Some((side, v)) = not_a_reading(&m.ir) {
        return Err(format!("`ir` {side} = {v} is not a reading from 0 to 128"));
    }
    if !(m.roll_deg.is_finite() && m.roll_deg.abs() <= 180.0) {
        return Err(format!("`roll_deg` = {} is not an angle from -180 to 180", m.roll_deg));
    }
    Ok((m.ir, m.roll_deg, m.docked))
}

/// The node's state between cycles: the hormone module, the frames waiting for the next
/// cycle, the latest sensing.
pub struct ModuleCore {
    /// The hormone controller.
    pub module: HormoneModule,
    /// Frames received: the cycle that sent them, the arrival side, the frame.
    inbox: Vec<(i64, Side, Frame)>,
    cycle_s: f64,
    /// The clock's current cycle.
    clock: i64,
    ir: [f64; 4],
    docked: [bool; 4],
    sensed: bool,
    cycles: u64,
    ticks: u64,
    /// The tilt sensor's first tick of readings (|roll|, deg), and whether they said pitched.
    tilt: Vec<f64>,
    pitched: bool,
    cycles_per_tick: u64,
    /// Frames dropped here (malformed, undocked side); the module counts its own refusals.
    pub dropped: u64,
}

impl ModuleCore {
    /// A module knowing nothing yet.
    pub fn new(cfg: &ModuleNodeConfig) -> ModuleCore {
        ModuleCore {
            module: HormoneModule::new(cfg.settings),
            inbox: Vec::new(),
            cycle_s: cfg.tick_s / cfg.cycles_per_tick as f64,
            clock: 0,
            ir: [modbot_gaits::hormone::sensing::IR_CLEAR; 4],
            docked: [false; 4],
            sensed: false,
            cycles: 0,
            ticks: 0,
            tilt: Default::default(),
            pitched: false,
            cycles_per_tick: cfg.cycles_per_tick,
            dropped: 0,
        }
    }

    /// A frame that arrived on `side`: queued for the next cycle, or the reason it is
    /// dropped.
    pub fn receive(&mut self, side: Side, m: &HormoneFrame) -> std::result::Result<(), String> {
        if !self.sensed {
            // Before its first sensing a module knows none of its connectors to be docked:
            // a neighbour that started first is not an error (counted, not logged).
            self.dropped += 1;
            return Ok(());
        }
        let r = frame_from_msg(m).and_then(|f| {
            self.module.check(&f)?;
            if !self.docked[side.index()] {
                return Err(format!("frame on connector {side}, which is not docked"));
            }
            Ok(f)
        });
        match r {
            Ok(f) => {
                let sent = (m.header.stamp.as_secs_f64() / self.cycle_s).round();
                // A neighbour on the same clock is at most a cycle or two ahead; a frame from
                // further ahead (another clock, a forged stamp) would wait for ever.
                if !(sent.is_finite() && sent <= (self.clock + 2) as f64) {
                    self.dropped += 1;
                    return Err(format!(
                        "`header.stamp` = {:.3} s is cycle {sent}, ahead of this module's clock (cycle {}): is the sender on the same clock (use_sim_time)?",
                        m.header.stamp.as_secs_f64(),
                        self.clock
                    ));
                }
                if self.inbox.len() >= MAX_INBOX {
                    self.dropped += 1;
                    return Err(format!("{MAX_INBOX} frames already wait for the next cycle"));
                }
                self.inbox.push((sent as i64, side, f));
                Ok(())
            }
            Err(e) => {
                self.dropped += 1;
                Err(e)
            }
        }
    }

    /// The latest sensing (checked; a refusal says why).
    pub fn sense(&mut self, m: &ModuleSensors) -> std::result::Result<(), String> {
        let (ir, roll, docked) = sensors_from_msg(m).inspect_err(|_| self.dropped += 1)?;
        self.ir = ir;
        self.docked = docked;
        if self.tilt.len() < self.cycles_per_tick as usize {
            self.tilt.push(roll.abs());
            let mean = self.tilt.iter().sum::<f64>() / self.tilt.len() as f64;
            self.pitched = is_pitched(mean);
            self.module.set_pitched(self.pitched);
        }
        self.sensed = true;
        Ok(())
    }

    /// Whether the tilt sensor's first tick of readings is in (the mounting is known).
    pub fn tilt_read(&self) -> bool {
        self.tilt.len() >= self.cycles_per_tick as usize
    }

    /// The clock's current cycle (frames stamped further ahead are refused).
    pub fn set_clock(&mut self, cycle: i64) {
        self.clock = cycle;
    }

    /// Execution cycles run.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Execution cycle number `index` on the clock (cycles since time 0): scan, then the
    /// tick (every `cycles_per_tick`-th cycle of the clock, so all modules tick together) or
    /// a relay cycle; returns the frames to send through docked connectors and whether this
    /// cycle was a tick.
    pub fn cycle(&mut self, index: u64) -> (Vec<(Side, HormoneFrame)>, bool) {
        let tick = index % self.cycles_per_tick == 0;
        self.cycles += 1;
        self.module.sense(&self.ir);
        // Frames sent in an earlier cycle than this one; later ones (a neighbour whose process
        // ran its cycle first) wait for the next.
        let (now, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.inbox)
            .into_iter()
            .partition(|(sent, _, _)| *sent < index as i64);
        self.inbox = later;
        let inbox: Vec<(Side, Frame)> = now.into_iter().map(|(_, side, f)| (side, f)).collect();
        let out = if tick {
            self.ticks += 1;
            self.module.step(&inbox)
        } else {
            self.module.cycle(&inbox)
        };
        let frames = out
            .into_iter()
            .filter(|(side, _)| self.docked[side.index()])
            .map(|(side, f)| (side, frame_to_msg(&f, index as f64 * self.cycle_s)))
            .collect();
        (frames, tick)
    }

    /// The state message.
    pub fn state(&self, stamp: f64) -> ModuleState {
        ModuleState {
            header: Header {
                stamp: modbot_msgs::builtin_interfaces::msg::Time::from_secs_f64(stamp),
                frame_id: String::new(),
            },
            module_type: self.module.module_type(),
            role: self.module.role().name().replace(' ', "_").to_lowercase(),
            map_nodes: self.module.map().nodes() as u32,
            direction: self.module.direction(),
            hinge_deg: self.module.hinge_deg(),
            tick: self.ticks,
            dropped: self.dropped + self.module.refused().0,
        }
    }
}

/// Most frames waiting for the next cycle: four connectors' worth of several cycles (a tick
/// sends at most a handful per side).
const MAX_INBOX: usize = 256;

/// Most cycles a node catches up in one go; beyond it (a clock jump) it skips ahead.
const MAX_CATCH_UP: i64 = 16;

/// Runs module_node until `stop` is set.
pub fn run<T: Transport>(t: &mut T, cfg: ModuleNodeConfig, stop: Arc<AtomicBool>) -> Result<()> {
    let mut core = ModuleCore::new(&cfg);
    let mut ins = Vec::new();
    let mut outs = Vec::new();
    for side in Side::ALL {
        ins.push(t.subscription::<HormoneFrame>(&format!("in/{side}"), Qos::Reliable)?);
        outs.push(t.publisher::<HormoneFrame>(&format!("out/{side}"), Qos::Reliable)?);
    }
    let sensors = t.subscription::<ModuleSensors>("sensors", Qos::SensorData)?;
    let hinge = t.publisher::<Float64>("hinge_cmd", Qos::Reliable)?;
    let state = t.publisher::<ModuleState>("state", Qos::Reliable)?;
    t.log(
        Level::Info,
        &format!(
            "hormone module: {} cycles of {} s ticks, IR thresholds {:?}, mapping level {}; connectors {} … {}",
            cfg.cycles_per_tick,
            cfg.tick_s,
            cfg.settings.ir_threshold,
            cfg.settings.max_level,
            t.resolve("in/B"),
            t.resolve("out/L")
        ),
    );
    let cycle_s = cfg.tick_s / cfg.cycles_per_tick as f64;
    let mut throttle = Throttle::new(5.0);
    // This module's cycle k is the clock's cycle offset + k.
    let mut offset: Option<i64> = None;
    let mut last_hello = std::time::Instant::now() - Duration::from_secs(1);
    while !stop.load(Ordering::Relaxed) {
        super::warn_next_start(t, &mut throttle);
        while let Some(m) = sensors.take() {
            if let Err(e) = m.and_then(|m| core.sense(&m)) {
                throttle.log(t, "sensors", Level::Warn, &format!("sensors dropped: {e}"));
            }
        }
        let now = t.now();
        let due = (now / cycle_s).floor().max(0.0) as i64;
        core.set_clock(due);
        for (side, sub) in Side::ALL.into_iter().zip(&ins) {
            while let Some(m) = sub.take() {
                if let Err(e) = m.and_then(|m| core.receive(side, &m)) {
                    throttle.log(
                        t,
                        "frame",
                        Level::Warn,
                        &format!("frame on in/{side} dropped ({} so far): {e}", core.dropped),
                    );
                }
            }
        }
        if core.tilt_read() && core.cycles() == 0 && last_hello.elapsed() > Duration::from_millis(100) {
            // Sensed and its tilt read, not cycling yet: say so to the simulator, which holds
            // the physics until every module has (each reads its tilt at rest).
            last_hello = std::time::Instant::now();
            let _ = hinge.publish(Float64 { data: 0.0 });
        }
        if core.tilt_read() {
            // This module's cycle k is the clock's cycle off + k; the cycles owed are the
            // clock's cycles from the next one up to (not including) `due`, which runs on.
            let cycles = core.cycles() as i64;
            let off = offset.get_or_insert(due);
            let mut owed = due - (*off + cycles);
            if owed > MAX_CATCH_UP {
                throttle.log(
                    t,
                    "behind",
                    Level::Warn,
                    &format!("{owed} cycles behind the clock: skipping ahead"),
                );
                *off = due - 1 - cycles;
                owed = 1;
            } else if owed < -1 {
                throttle.log(
                    t,
                    "back",
                    Level::Warn,
                    &format!("the clock went back {} cycles: following it", -owed),
                );
                *off = due - cycles;
                owed = 0;
            }
            for _ in 0..owed.max(0) {
                let index = (*off + core.cycles() as i64).max(0) as u64;
                let (frames, tick) = core.cycle(index);
                for (side, m) in frames {
                    if let Err(e) = outs[side.index()].publish(m) {
                        throttle.log(t, "publish", Level::Warn, &e.to_string());
                    }
                }
                let _ = hinge.publish(Float64 {
                    data: core.module.hinge_deg().to_radians(),
                });
                if tick {
                    let _ = state.publish(core.state(now));
                }
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_garbage_is_named() {
        let f = Frame {
            kind: FrameKind::Loss { side: Side::R },
            hop: 2,
            connector: Side::F,
            path: vec![(Side::B, Side::F), (Side::L, Side::B)],
            data: vec![],
        };
        assert_eq!(frame_from_msg(&frame_to_msg(&f, 1.0)).unwrap(), f);
        let h = Frame {
            kind: FrameKind::Hormone(HormoneKind::Locomotion),
            hop: 3,
            connector: Side::B,
            path: vec![],
            data: vec![45.0, 1.0],
        };
        assert_eq!(frame_from_msg(&frame_to_msg(&h, 1.0)).unwrap(), h);
        let good = frame_to_msg(&h, 1.0);
        for (m, field) in [
            (
                HormoneFrame {
                    kind: 9,
                    ..good.clone()
                },
                "`kind`",
            ),
            (
                HormoneFrame {
                    code: 7,
                    ..good.clone()
                },
                "`code`",
            ),
            (
                HormoneFrame {
                    connector: 0,
                    ..good.clone()
                },
                "`connector`",
            ),
            (
                HormoneFrame {
                    connector: 5,
                    ..good.clone()
                },
                "`connector`",
            ),
            (
                HormoneFrame {
                    path: vec![1],
                    ..good.clone()
                },
                "`path`",
            ),
            (
                HormoneFrame {
                    path: vec![1, 6],
                    ..good.clone()
                },
                "`path`",
            ),
            (
                HormoneFrame {
                    data: vec![f64::NAN],
                    ..good.clone()
                },
                "`data[0]`",
            ),
            (
                HormoneFrame {
                    kind: HormoneFrame::KIND_ACK,
                    code: 2,
                    ..good.clone()
                },
                "`code`",
            ),
        ] {
            let e = frame_from_msg(&m).unwrap_err();
            assert!(e.contains(field), "{m:?}: {e}");
        }
    }

    fn docked(b: bool, f: bool) -> ModuleSensors {
        ModuleSensors {
            ir: [128.0; 4],
            docked: [b, f, false, false],
            ..Default::default()
        }
    }

    #[test]
    fn a_module_drops_frames_over_the_hop_limit_off_its_docks_or_malformed_and_keeps_going() {
        let cfg = ModuleNodeConfig::from_params(&crate::params::defaults::<ModuleNodeConfig>()).unwrap();
        let mut c = ModuleCore::new(&cfg);
        c.sense(&docked(true, false)).unwrap();
        let hs = frame_to_msg(
            &Frame {
                kind: FrameKind::Handshake { ack: false },
                hop: 0,
                connector: Side::F,
                path: vec![],
                data: vec![],
            },
            0.0,
        );
        c.receive(Side::B, &hs).unwrap();
        let e = c.receive(Side::F, &hs).unwrap_err();
        assert!(e.contains("not docked"), "{e}");
        let over = HormoneFrame {
            hop: 3,
            path: vec![1, 2, 1, 2, 1, 2],
            ..hs.clone()
        };
        let e = c.receive(Side::B, &over).unwrap_err();
        assert!(e.contains("over the limit 2"), "{e}");
        let e = c.receive(Side::B, &HormoneFrame { kind: 4, ..hs.clone() }).unwrap_err();
        assert!(e.contains("`kind`"), "{e}");
        let e = c
            .sense(&ModuleSensors {
                ir: [128.0, f64::INFINITY, 0.0, 0.0],
                ..Default::default()
            })
            .unwrap_err();
        assert!(e.contains("`ir` F"), "{e}");
        assert_eq!(c.dropped, 4);
        // The good handshake was taken: the module answers it on B only (F is not docked).
        let (out, tick) = c.cycle(8);
        assert!(tick);
        assert!(out.iter().all(|(s, _)| *s == Side::B), "{out:?}");
        assert!(out.iter().any(|(_, m)| m.kind == HormoneFrame::KIND_ACK), "{out:?}");
        assert_eq!(c.module.map().status()[Side::B.index()], Some(Side::F));
    }

    /// A frame is handled in the first cycle after the one that sent it, never in the same
    /// one (a neighbour whose process ran its cycle first must not speed the wave up).
    #[test]
    fn a_frame_waits_for_the_cycle_after_the_one_that_sent_it() {
        let cfg = ModuleNodeConfig::from_params(&crate::params::defaults::<ModuleNodeConfig>()).unwrap();
        let mut c = ModuleCore::new(&cfg);
        c.sense(&docked(true, false)).unwrap();
        let cycle_s = cfg.tick_s / cfg.cycles_per_tick as f64;
        let hs = |ack| {
            frame_to_msg(
                &Frame {
                    kind: FrameKind::Handshake { ack },
                    hop: 0,
                    connector: Side::F,
                    path: vec![],
                    data: vec![],
                },
                16.0 * cycle_s,
            )
        };
        c.set_clock(16);
        c.receive(Side::B, &hs(false)).unwrap();
        // A stamp from a clock far ahead is refused, naming the field.
        let mut future = hs(false);
        future.header.stamp = modbot_msgs::builtin_interfaces::msg::Time {
            sec: i32::MAX,
            nanosec: 0,
        };
        let e = c.receive(Side::B, &future).unwrap_err();
        assert!(e.contains("`header.stamp`"), "{e}");
        let (out, _) = c.cycle(16);
        assert!(!out.iter().any(|(_, m)| m.kind == HormoneFrame::KIND_ACK), "{out:?}");
        let (out, _) = c.cycle(17);
        assert!(out.iter().any(|(_, m)| m.kind == HormoneFrame::KIND_ACK), "{out:?}");
        assert!(out.iter().all(|(_, m)| m.header.stamp.as_secs_f64() == 17.0 * cycle_s));
    }

    /// The tilt sensor: the first tick of readings (at rest) says how the module is mounted,
    /// and later rolls (a V's arms swinging, an arm tipping over) change nothing.
    #[test]
    fn the_tilt_sensor_latches_the_mounting_from_the_first_tick() {
        let cfg = ModuleNodeConfig::from_params(&crate::params::defaults::<ModuleNodeConfig>()).unwrap();
        let feed = |c: &mut ModuleCore, roll: f64, n: usize| {
            for _ in 0..n {
                c.sense(&ModuleSensors {
                    ir: [128.0; 4],
                    roll_deg: roll,
                    ..Default::default()
                })
                .unwrap();
            }
            c.pitched
        };
        let mut upright = ModuleCore::new(&cfg);
        assert!(!feed(&mut upright, 2.0, 8));
        assert!(
            !feed(&mut upright, 90.0, 40),
            "tipped over later: still mounted upright"
        );
        let mut pitched = ModuleCore::new(&cfg);
        assert!(feed(&mut pitched, -89.0, 4));
        assert!(feed(&mut pitched, -88.0, 4));
        assert!(feed(&mut pitched, 0.0, 40));
    }

    #[test]
    fn bad_parameters_are_named() {
        let mut p = crate::params::defaults::<ModuleNodeConfig>();
        p.insert("ir_threshold".into(), ParamValue::DoubleArray(vec![1.0, 2.0]));
        assert!(
            ModuleNodeConfig::from_params(&p)
                .unwrap_err()
                .contains("4 (B, F, R, L)")
        );
        p.insert(
            "ir_threshold".into(),
            ParamValue::DoubleArray(vec![1.0, 2.0, 300.0, 4.0]),
        );
        assert!(ModuleNodeConfig::from_params(&p).unwrap_err().contains("side R"));
        let mut p = crate::params::defaults::<ModuleNodeConfig>();
        p.insert("max_level".into(), ParamValue::Int(0));
        assert!(ModuleNodeConfig::from_params(&p).unwrap_err().contains("max_level"));
        let mut p = crate::params::defaults::<ModuleNodeConfig>();
        p.insert("cycles_per_tick".into(), ParamValue::Double(2.0));
        assert!(
            ModuleNodeConfig::from_params(&p)
                .unwrap_err()
                .contains("cycles_per_tick")
        );
        let mut p = crate::params::defaults::<ModuleNodeConfig>();
        p.insert("half_period".into(), ParamValue::Int(0));
        assert!(ModuleNodeConfig::from_params(&p).unwrap_err().contains("half_period"));
        p.insert("half_period".into(), ParamValue::Int(2));
        let cfg = ModuleNodeConfig::from_params(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cfg.settings.half_period, 2);
        // The timing constants (H7, H11): each refused out of range naming it, T against K.
        for (key, v, says) in [
            ("handshake_every", ParamValue::Int(0), "handshake_every"),
            ("timeout_ticks", ParamValue::Int(7), "two handshake periods"),
            ("obstacle_every", ParamValue::Int(-8), "obstacle_every"),
            ("stroke_timeout", ParamValue::Int(100_000), "stroke_timeout"),
            ("v_turn_half_periods", ParamValue::Double(4.0), "v_turn_half_periods"),
        ] {
            let mut p = crate::params::defaults::<ModuleNodeConfig>();
            p.insert(key.into(), v);
            let e = ModuleNodeConfig::from_params(&p).expect_err(key);
            assert!(e.contains(says), "{key}: {e}");
        }
        let mut p = crate::params::defaults::<ModuleNodeConfig>();
        for (key, v) in [
            ("handshake_every", 2),
            ("timeout_ticks", 5),
            ("obstacle_every", 3),
            ("stroke_timeout", 30),
            ("v_turn_half_periods", 6),
        ] {
            p.insert(key.into(), ParamValue::Int(v));
        }
        let s = ModuleNodeConfig::from_params(&p)
            .unwrap_or_else(|e| panic!("{e}"))
            .settings;
        assert_eq!(
            (
                s.handshake_every,
                s.timeout_ticks,
                s.obstacle_every,
                s.stroke_timeout,
                s.v_turn_half_periods
            ),
            (2, 5, 3, 30, 6)
        );
    }
}
