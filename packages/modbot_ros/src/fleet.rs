//! The fleet protocol: a [`Plant`] in another process (decision record 0052). sim_node
//! with `fleet:=true` owns the simulator of a world's six modules and answers requests on
//! `fleet/request` with replies on `fleet/reply`; mission_node drives it through
//! [`RemotePlant`], in lock-step: every call that changes the world or needs its sensors is
//! one request and one reply, and between two `advance_to` calls the world stands still, so
//! a mission over ROS runs exactly as it does in one process.
//!
//! The messages are std_msgs/String carrying JSON (serde): the plant's calls carry ports,
//! camera specifications and detectable points, which no standard message describes, and
//! the two ends are always the same build of modbot. A reply carries the world's state
//! after the call (time, joints, link poses, targets), which [`RemotePlant`] keeps and
//! reads between calls.

use std::ops::Range;
use std::time::{Duration, Instant};

use modbot_sim::{CameraSpec, Detectable, Detection, DockFit, DockTolerance, Drive, Plant, Port, Simulator};
use nalgebra::Isometry3;
use serde::{Deserialize, Serialize};

use modbot_msgs::std_msgs::msg::String as StringMsg;

use crate::transport::{Pub, Sub};

/// Longest an `advance_to` may reach ahead of the world's time in one request, s: a
/// request is bounded work for the simulator.
pub const MAX_ADVANCE_S: f64 = 60.0;
/// Largest request or reply accepted, bytes.
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// One call on the plant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Op {
    /// The world's structure and state (and the first to ask drives the fleet).
    Hello,
    /// Sets the targets, then steps to `t`.
    Advance {
        /// Time to step to, s.
        t: f64,
        /// Every joint's target, command order.
        targets: Vec<f64>,
    },
    /// [`Plant::set_drive`].
    SetDrive {
        /// The joint.
        joint: usize,
        /// Its new drive.
        drive: Drive,
    },
    /// [`Plant::port_fit`].
    PortFit {
        /// One port.
        a: Port,
        /// The other.
        b: Port,
        /// The mating roll, deg.
        roll_deg: f64,
    },
    /// [`Plant::attach`].
    Attach {
        /// The dock's name.
        name: String,
        /// The port docked to.
        a: Port,
        /// The port docking.
        b: Port,
        /// The mating roll, deg.
        roll_deg: f64,
        /// The latch's tolerance.
        tolerance: DockTolerance,
    },
    /// [`Plant::detach`].
    Detach {
        /// The dock's name.
        name: String,
    },
    /// [`Plant::camera_view`].
    CameraView {
        /// The camera.
        spec: CameraSpec,
        /// What it may see.
        marks: Vec<Detectable>,
    },
}

/// A request: who asks, a call and its sequence number (increasing; a repeated number is
/// answered again from the last reply, not executed twice).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The asking plant's identity (the clock's nanoseconds and the process id when the
    /// [`RemotePlant`] connects): the first to say [`Op::Hello`] drives the fleet; another
    /// mission's plant is refused.
    pub client: u64,
    /// Sequence number.
    pub seq: u64,
    /// The call.
    pub op: Op,
}

/// The world's structure: names and each robot's joints and links.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Structure {
    /// Driven joints, command order.
    pub joint_names: Vec<String>,
    /// Links.
    pub link_names: Vec<String>,
    /// Each robot's joints and links: `[joints start, joints end, links start, links end]`.
    pub robots: Vec<[usize; 4]>,
}

/// The world's state after a call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Time, s.
    pub time: f64,
    /// Joint positions, command order.
    pub positions: Vec<f64>,
    /// Joint speeds.
    pub velocities: Vec<f64>,
    /// Link poses.
    pub link_poses: Vec<Isometry3<f64>>,
    /// Targets in force.
    pub targets: Vec<f64>,
}

/// What a call returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Answer {
    /// To [`Op::Hello`].
    Structure(Structure),
    /// A dock's fit.
    Fit(DockFit),
    /// A camera's view.
    View(Vec<Detection>),
    /// Done.
    Done,
}

/// A reply: the request's number, the call's result, the state after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// The asking plant.
    pub client: u64,
    /// The request's sequence number.
    pub seq: u64,
    /// What the call returned, or why it failed.
    pub result: Result<Answer, String>,
    /// The world's state after the call (every call but a camera's view or a fit).
    pub state: Option<State>,
}

impl State {
    /// Whether it fits `structure` (every vector as long as its names) and its time is a
    /// finite number not before `after`; the reason otherwise.
    fn check(&self, structure: &Structure, after: f64) -> Result<(), String> {
        let (j, l) = (structure.joint_names.len(), structure.link_names.len());
        let lengths = [
            ("positions", self.positions.len(), j),
            ("velocities", self.velocities.len(), j),
            ("targets", self.targets.len(), j),
            ("link_poses", self.link_poses.len(), l),
        ];
        if let Some((what, got, want)) = lengths.iter().find(|(_, got, want)| got != want) {
            return Err(format!("the simulator's state has {got} {what}, its structure {want}"));
        }
        if !(self.time.is_finite() && self.time >= after) {
            return Err(format!("the simulator's time went from {after} s to {} s", self.time));
        }
        Ok(())
    }
}

fn state_of(sim: &Simulator) -> State {
    State {
        time: sim.time(),
        positions: sim.joint_positions(),
        velocities: sim.joint_velocities(),
        link_poses: sim.link_poses(),
        targets: sim.targets().to_vec(),
    }
}

/// The simulator side: executes requests on its simulator, once each.
pub struct FleetServer {
    sim: Simulator,
    /// The plant that said hello first: it alone drives the fleet.
    owner: Option<u64>,
    /// Its last request's number and the reply.
    last: Option<(u64, String)>,
}

impl FleetServer {
    /// Serves `sim`.
    pub fn new(sim: Simulator) -> FleetServer {
        FleetServer {
            sim,
            owner: None,
            last: None,
        }
    }

    /// A refusal to `client`'s request `seq`, not remembered (the owner's replies are).
    fn refusal(client: u64, seq: u64, why: String) -> Result<Option<String>, String> {
        let reply = Reply {
            client,
            seq,
            result: Err(why),
            state: None,
        };
        serde_json::to_string(&reply)
            .map(Some)
            .map_err(|e| format!("reply not encoded: {e}"))
    }

    /// The simulator.
    pub fn sim(&self) -> &Simulator {
        &self.sim
    }

    /// The reply to a request's JSON: `None` for a request older than the last one (a stale
    /// duplicate); `Err` for one that does not decode (the caller logs it and drops it).
    pub fn handle(&mut self, json: &str) -> Result<Option<String>, String> {
        if json.len() > MAX_MESSAGE_BYTES {
            return Err(format!(
                "a request of {} bytes (at most {MAX_MESSAGE_BYTES})",
                json.len()
            ));
        }
        let req: Request = match serde_json::from_str(json) {
            Ok(r) => r,
            Err(e) => {
                // With a client and a number to answer to, the refusal goes back (a NaN
                // travels as null and does not decode); without them it is only logged.
                let why = format!("not a fleet request: {e}");
                let v = serde_json::from_str::<serde_json::Value>(json).ok();
                let field = |k: &str| v.as_ref().and_then(|v| v.get(k)).and_then(serde_json::Value::as_u64);
                return match (field("client"), field("seq")) {
                    (Some(client), Some(seq)) => FleetServer::refusal(client, seq, why),
                    _ => Err(why),
                };
            }
        };
        match self.owner {
            None if req.op == Op::Hello => self.owner = Some(req.client),
            None => return FleetServer::refusal(req.client, req.seq, "say Hello first".into()),
            Some(o) if o != req.client => {
                return FleetServer::refusal(
                    req.client,
                    req.seq,
                    format!("this fleet is driven by another mission (client {o}); start another sim_node"),
                );
            }
            Some(_) => {}
        }
        match &self.last {
            Some((seq, reply)) if *seq == req.seq => return Ok(Some(reply.clone())),
            Some((seq, _)) if *seq > req.seq => return Ok(None),
            _ => {}
        }
        let reply = self.execute(req);
        let text = serde_json::to_string(&reply).map_err(|e| format!("reply not encoded: {e}"))?;
        self.last = Some((reply.seq, text.clone()));
        Ok(Some(text))
    }

    fn execute(&mut self, req: Request) -> Reply {
        let sim = &mut self.sim;
        let (result, with_state) = match req.op {
            Op::Hello => {
                let robots = (0..sim.robot_count())
                    .map(|r| {
                        let (j, l) = (sim.joints_of(r), sim.links_of(r));
                        [j.start, j.end, l.start, l.end]
                    })
                    .collect();
                let s = Structure {
                    joint_names: sim.joint_names().to_vec(),
                    link_names: sim.link_names().to_vec(),
                    robots,
                };
                (Ok(Answer::Structure(s)), true)
            }
            Op::Advance { t, targets } => {
                let now = sim.time();
                // A time already passed steps nothing, as on the simulator itself.
                let r = if !(t.is_finite() && t <= now + MAX_ADVANCE_S) {
                    Err(format!(
                        "advance to {t} s: a finite time at most {MAX_ADVANCE_S} s after now ({now} s)"
                    ))
                } else if let Some(k) = targets.iter().position(|v| !v.is_finite()) {
                    Err(format!("target {k} = {} is not finite", targets[k]))
                } else {
                    Plant::set_targets(sim, &targets)
                        .and_then(|()| Plant::advance_to(sim, t))
                        .map(|()| Answer::Done)
                };
                (r, true)
            }
            Op::SetDrive { joint, drive } => (Plant::set_drive(sim, joint, drive).map(|()| Answer::Done), true),
            Op::PortFit { a, b, roll_deg } => (Plant::port_fit(sim, &a, &b, roll_deg).map(Answer::Fit), false),
            Op::Attach {
                name,
                a,
                b,
                roll_deg,
                tolerance,
            } => (
                Plant::attach(sim, &name, &a, &b, roll_deg, &tolerance).map(Answer::Fit),
                true,
            ),
            Op::Detach { name } => (Plant::detach(sim, &name).map(|()| Answer::Done), true),
            Op::CameraView { spec, marks } => (Plant::camera_view(sim, &spec, &marks).map(Answer::View), false),
        };
        Reply {
            client: req.client,
            seq: req.seq,
            result,
            state: with_state.then(|| state_of(sim)),
        }
    }
}

/// The request and reply ends of a [`RemotePlant`] and its sequence number.
struct Channel<P, S> {
    client: u64,
    requests: P,
    replies: S,
    seq: u64,
    timeout: Duration,
    calls: u64,
    stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The first failure of the channel itself (no answer, stopped, not sent): every later
    /// call fails with it at once, so a lost simulator ends the mission with its reason
    /// instead of looking like a refused latch.
    broken: Option<String>,
}

impl<P: Pub<StringMsg>, S: Sub<StringMsg>> Channel<P, S> {
    /// Sends `op` and waits for its reply, sending again every 0.5 s (discovery can drop the
    /// first ones), for at most the timeout.
    fn call(&mut self, op: Op) -> Result<(Answer, Option<State>), String> {
        if let Some(why) = &self.broken {
            return Err(why.clone());
        }
        let r = self.exchange(op);
        if let Err(Failure::Channel(why)) = &r {
            self.broken = Some(why.clone());
        }
        r.map_err(|f| match f {
            Failure::Channel(why) | Failure::Refused(why) => why,
        })
    }

    fn exchange(&mut self, op: Op) -> Result<(Answer, Option<State>), Failure> {
        self.seq += 1;
        self.calls += 1;
        let text = serde_json::to_string(&Request {
            client: self.client,
            seq: self.seq,
            op,
        })
        .map_err(|e| Failure::Refused(format!("request not encoded: {e}")))?;
        if text.len() > MAX_MESSAGE_BYTES {
            return Err(Failure::Refused(format!(
                "a request of {} bytes (at most {MAX_MESSAGE_BYTES})",
                text.len()
            )));
        }
        let start = Instant::now();
        let mut sent: Option<Instant> = None;
        loop {
            if sent.is_none_or(|s| s.elapsed() > Duration::from_millis(500)) {
                self.requests
                    .publish(StringMsg { data: text.clone() })
                    .map_err(|e| Failure::Channel(format!("fleet request not sent: {e}")))?;
                sent = Some(Instant::now());
            }
            let mut got = false;
            while let Some(m) = self.replies.take() {
                got = true;
                // Another request's reply, an oversized one, or one that does not decode: not
                // ours.
                let Ok(m) = m else { continue };
                if m.data.len() > MAX_MESSAGE_BYTES {
                    continue;
                }
                let Ok(reply) = serde_json::from_str::<Reply>(&m.data) else {
                    continue;
                };
                if reply.client == self.client && reply.seq == self.seq {
                    return reply.result.map(|a| (a, reply.state)).map_err(Failure::Refused);
                }
            }
            if self
                .stop
                .as_ref()
                .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
            {
                return Err(Failure::Channel("stopped".into()));
            }
            if start.elapsed() > self.timeout {
                return Err(Failure::Channel(format!(
                    "the simulator (sim_node, fleet:=true) did not answer request {} in {:.1} s",
                    self.seq,
                    self.timeout.as_secs_f64()
                )));
            }
            // A reply usually follows within a millisecond or two: the first 5 ms only give
            // way to the other threads, then the wait sleeps.
            if !got {
                if start.elapsed() < Duration::from_millis(5) {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(Duration::from_micros(100));
                }
            }
        }
    }
}

/// Why a call failed: the simulator refused it (the world is as it was), or the channel
/// failed (the simulator is gone or the node stops: nothing more can be done).
enum Failure {
    Refused(String),
    Channel(String),
}

/// A [`Plant`] in another process, over a request publisher and a reply subscription: the
/// world's state as of the last reply is read locally; every change, every dock and every
/// camera view is a call.
pub struct RemotePlant<P, S> {
    channel: std::cell::RefCell<Channel<P, S>>,
    structure: Structure,
    state: State,
    pending_targets: Vec<f64>,
}

impl<P: Pub<StringMsg>, S: Sub<StringMsg>> RemotePlant<P, S> {
    /// Connects: asks the world's structure and state until the simulator answers, for at
    /// most `timeout` (each call has that long too).
    pub fn connect(requests: P, replies: S, timeout: Duration) -> Result<Self, String> {
        // An identity of its own: the time and the process.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let mut channel = Channel {
            client: nanos ^ (u64::from(std::process::id()) << 32),
            requests,
            replies,
            seq: 0,
            timeout,
            calls: 0,
            stop: None,
            broken: None,
        };
        let (structure, state) = match channel.call(Op::Hello)? {
            (Answer::Structure(s), Some(state)) => (s, state),
            other => return Err(format!("the simulator answered hello with {other:?}")),
        };
        if structure.robots.iter().any(|r| {
            r[0] > r[1] || r[1] > structure.joint_names.len() || r[2] > r[3] || r[3] > structure.link_names.len()
        }) {
            return Err("the simulator's structure does not hold together".into());
        }
        state.check(&structure, 0.0)?;
        Ok(RemotePlant {
            channel: std::cell::RefCell::new(channel),
            pending_targets: state.targets.clone(),
            structure,
            state,
        })
    }

    /// Every call from now on ends with "stopped" once `stop` is set (a node told to stop).
    pub fn stopped_by(self, stop: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Self {
        self.channel.borrow_mut().stop = Some(stop);
        self
    }

    /// Its identity in the requests.
    pub fn client(&self) -> u64 {
        self.channel.borrow().client
    }

    /// Calls made so far.
    pub fn calls(&self) -> u64 {
        self.channel.borrow().calls
    }

    fn call(&self, op: Op) -> Result<(Answer, Option<State>), String> {
        self.channel.borrow_mut().call(op)
    }

    /// A call that changes the world: its state kept.
    fn change(&mut self, op: Op) -> Result<Answer, String> {
        let (answer, state) = self.call(op)?;
        if let Some(s) = state {
            if let Err(e) = s.check(&self.structure, self.state.time - 1e-9) {
                // A simulator that answers nonsense is as good as gone.
                self.channel.borrow_mut().broken = Some(e.clone());
                return Err(e);
            }
            // The targets in force are the simulator's now (a drive switch resets its
            // joint's), as they are for the next step in one process.
            self.pending_targets = s.targets.clone();
            self.state = s;
        }
        Ok(answer)
    }
}

fn unexpected(a: Answer) -> String {
    format!("the simulator answered {a:?}")
}

impl<P: Pub<StringMsg>, S: Sub<StringMsg>> Plant for RemotePlant<P, S> {
    fn time(&self) -> f64 {
        self.state.time
    }

    fn advance_to(&mut self, t: f64) -> Result<(), String> {
        let targets = self.pending_targets.clone();
        match self.change(Op::Advance { t, targets })? {
            Answer::Done => Ok(()),
            a => Err(unexpected(a)),
        }
    }

    fn joint_names(&self) -> &[String] {
        &self.structure.joint_names
    }

    fn link_names(&self) -> &[String] {
        &self.structure.link_names
    }

    fn robot_count(&self) -> usize {
        self.structure.robots.len()
    }

    fn joints_of(&self, robot: usize) -> Range<usize> {
        let r = self.structure.robots[robot];
        r[0]..r[1]
    }

    fn links_of(&self, robot: usize) -> Range<usize> {
        let r = self.structure.robots[robot];
        r[2]..r[3]
    }

    fn joint_positions(&self) -> Vec<f64> {
        self.state.positions.clone()
    }

    fn joint_velocities(&self) -> Vec<f64> {
        self.state.velocities.clone()
    }

    fn link_poses(&self) -> Vec<Isometry3<f64>> {
        self.state.link_poses.clone()
    }

    fn targets(&self) -> &[f64] {
        &self.state.targets
    }

    fn set_targets(&mut self, targets: &[f64]) -> Result<(), String> {
        if targets.len() != self.structure.joint_names.len() {
            return Err(format!(
                "expected {} joint targets, got {}",
                self.structure.joint_names.len(),
                targets.len()
            ));
        }
        self.pending_targets = targets.to_vec();
        Ok(())
    }

    fn set_drive(&mut self, joint: usize, drive: Drive) -> Result<(), String> {
        match self.change(Op::SetDrive { joint, drive })? {
            Answer::Done => Ok(()),
            a => Err(unexpected(a)),
        }
    }

    fn port_fit(&self, a: &Port, b: &Port, roll_deg: f64) -> Result<DockFit, String> {
        match self.call(Op::PortFit {
            a: a.clone(),
            b: b.clone(),
            roll_deg,
        })? {
            (Answer::Fit(f), _) => Ok(f),
            (a, _) => Err(unexpected(a)),
        }
    }

    fn attach(
        &mut self,
        name: &str,
        a: &Port,
        b: &Port,
        roll_deg: f64,
        tolerance: &DockTolerance,
    ) -> Result<DockFit, String> {
        match self.change(Op::Attach {
            name: name.into(),
            a: a.clone(),
            b: b.clone(),
            roll_deg,
            tolerance: *tolerance,
        })? {
            Answer::Fit(f) => Ok(f),
            a => Err(unexpected(a)),
        }
    }

    fn detach(&mut self, name: &str) -> Result<(), String> {
        match self.change(Op::Detach { name: name.into() })? {
            Answer::Done => Ok(()),
            a => Err(unexpected(a)),
        }
    }

    fn camera_view(&self, spec: &CameraSpec, marks: &[Detectable]) -> Result<Vec<Detection>, String> {
        match self.call(Op::CameraView {
            spec: spec.clone(),
            marks: marks.to_vec(),
        })? {
            (Answer::View(v), _) => Ok(v),
            (a, _) => Err(unexpected(a)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loopback::{LoopbackBus, identity};
    use crate::transport::{Qos, Transport};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    fn world() -> modbot_core::Scenario {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../worlds/strategic_mission.yaml");
        modbot_core::Scenario::load(std::path::Path::new(path)).unwrap()
    }

    /// The initial scan (a second of every mast turning, 72 camera views per module) through
    /// a remote plant on the loopback bus gives what it gives on the simulator itself, to
    /// the bit: the lock-step protocol loses nothing. Bad requests are refused, named.
    #[test]
    fn a_scan_through_the_fleet_protocol_is_the_scan_on_the_simulator() {
        let w = world();
        let settings = modbot_app::scan::ScanSettings::default();
        let mut local = modbot_app::assemble::fleet_simulator(&w).unwrap();
        let expected = modbot_app::scan::initial_scan_on(&mut local, &w, &settings).unwrap();

        let bus = LoopbackBus::new();
        let mut server_node = bus.node(identity("sim_node", "/"));
        let mut client_node = bus.node(identity("mission_node", "/"));
        let req_sub = server_node
            .subscription::<StringMsg>("fleet/request", Qos::Reliable)
            .unwrap();
        let rep_pub = server_node
            .publisher::<StringMsg>("fleet/reply", Qos::Reliable)
            .unwrap();
        let req_pub = client_node
            .publisher::<StringMsg>("fleet/request", Qos::Reliable)
            .unwrap();
        let rep_sub = client_node
            .subscription::<StringMsg>("fleet/reply", Qos::Reliable)
            .unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let server_stop = Arc::clone(&stop);
        let sim = modbot_app::assemble::fleet_simulator(&w).unwrap();
        let server = std::thread::spawn(move || {
            let mut server = FleetServer::new(sim);
            while !server_stop.load(Ordering::Relaxed) {
                while let Some(Ok(m)) = req_sub.take() {
                    if let Ok(Some(reply)) = server.handle(&m.data) {
                        rep_pub.publish(StringMsg { data: reply }).unwrap();
                    }
                }
                std::thread::sleep(Duration::from_micros(50));
            }
            server
        });
        let mut remote = RemotePlant::connect(req_pub, rep_sub, Duration::from_secs(10)).unwrap();
        let got = modbot_app::scan::initial_scan_on(&mut remote, &w, &settings).unwrap();
        assert_eq!(got.scans, expected.scans);
        assert_eq!(got.captures, expected.captures);
        assert_eq!(remote.time(), local.time());
        assert_eq!(remote.joint_positions(), local.joint_positions());
        assert!(remote.calls() > 100, "{} calls", remote.calls());
        // Errors come back named.
        let e = remote.detach("nowhere").unwrap_err();
        assert!(e.contains("nowhere"), "{e}");
        let e = remote.advance_to(f64::NAN).unwrap_err();
        assert!(e.contains("not a fleet request"), "{e}");
        let e = remote.advance_to(remote.time() + 1000.0).unwrap_err();
        assert!(e.contains("advance to"), "{e}");
        assert!(remote.set_targets(&[0.0]).unwrap_err().contains("joint targets"));
        stop.store(true, Ordering::Relaxed);
        let mut server = server.join().unwrap();
        // Garbage is refused without touching the world; a stale duplicate is not executed.
        let t = server.sim().time();
        assert!(
            server
                .handle("{\"seq\": 1, \"op\": \"Launch\"}")
                .unwrap_err()
                .contains("not a fleet request")
        );
        assert!(server.handle("[1, 2").unwrap_err().contains("not a fleet request"));
        // The owner's stale duplicate is not executed again.
        let me = remote.client();
        let stale = format!("{{\"client\": {me}, \"seq\": 1, \"op\": \"Hello\"}}");
        assert_eq!(server.handle(&stale).unwrap(), None);
        // With a client and a number, a refusal is answered, and the owner's last reply
        // stays what it was.
        let mut reply = |json: &str| -> Reply { serde_json::from_str(&server_reply(&mut server, json)).unwrap() };
        let r = reply("{\"client\": 5, \"seq\": 99, \"op\": \"Launch\"}");
        assert!(r.client == 5 && r.result.unwrap_err().contains("not a fleet request"));
        // Another plant cannot drive the fleet, even saying hello.
        for op in ["\"Hello\"", "{\"Detach\": {\"name\": \"x\"}}"] {
            let r = reply(&format!("{{\"client\": 5, \"seq\": 100, \"op\": {op}}}"));
            assert!(r.result.unwrap_err().contains("driven by another mission"), "{op}");
        }
        assert_eq!(server.sim().time(), t);
    }

    fn server_reply(server: &mut FleetServer, json: &str) -> String {
        server.handle(json).unwrap().unwrap()
    }
}
