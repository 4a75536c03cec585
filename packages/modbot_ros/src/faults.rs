//! Network faults injected in our own transport layer (issue 50; decision record 0061): a
//! [`FaultyTransport`] wraps any [`Transport`] — the in-memory bus or DDS — and delivers what
//! its subscriptions receive late (a latency drawn per sample),
//! loses some, and keeps a topic silent for a while. The machines here have no network-level
//! tools for it (no `tc netem` in a namespace without the kernel modules), and faults made on
//! the receiving side of our own transport are the same on every backend and reproducible
//! from a seed.
//!
//! Order is kept as DDS keeps it within one topic: a reliable reader delivers in order, so a
//! sample drawn a shorter latency than the one before it waits for it (head-of-line
//! blocking); a best-effort reader drops a sample a later one has overtaken (`stale`).
//! Jitter therefore reorders nothing within a topic; it spaces samples unevenly, loses
//! best-effort ones and holds reliable ones back.
//!
//! Latency is measured on the node's clock ([`Transport::now`]): ROS time, which is the
//! simulator's `/clock` under `use_sim_time`. A run faster than real time then meets the same
//! delays, in simulated seconds, that a real-time run meets in wall seconds — what the
//! behaviours see between a sample's stamp and its arrival is the same in both.
//!
//! Publishers and services pass through: every sample crosses one subscription, so faults on
//! the receiving side reach every topic once; a service call's loss is a timeout, which the
//! callers handle on their own.
//!
//! Loss is what a best-effort reader meets. A reliable one (commands, states, the latched
//! connector states) is never short of a sample: DDS sends a lost one again when the reader
//! says it is missing, so there a drawn loss delivers the sample [`RETRANSMIT_S`] and one
//! more worst-case latency later (counted as `resent`), as a retransmission would.

use std::collections::{BTreeMap, BinaryHeap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use modbot_msgs::RosMessage;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::args::NodeIdentity;
use crate::error::Result;
use crate::params::ParamValue;
use crate::transport::{Client, Level, Pub, Qos, Server, Sub, Transport};

/// Most samples one subscription holds back at a time: beyond it the oldest held sample is
/// dropped (counted as `overflowed`), so a huge latency cannot grow memory without bound.
/// At 30 ms and 1 kHz a subscription holds 30.
pub const MAX_PENDING: usize = 1024;

/// How much later a reliable subscription's lost sample arrives, on top of its latency and
/// one more worst-case latency, s: Cyclone DDS's heartbeat period, after which the writer
/// learns of the gap and repairs it.
pub const RETRANSMIT_S: f64 = 0.1;

/// A window in which a topic delivers nothing (a sensor gone silent).
#[derive(Debug, Clone, PartialEq)]
pub struct Silence {
    /// The topic's resolved name (`/m1/imu`), or `*` for every topic.
    pub topic: String,
    /// When it begins, s of node time.
    pub from_s: f64,
    /// How long it lasts, s.
    pub for_s: f64,
}

/// The faults a [`FaultyTransport`] injects.
#[derive(Debug, Clone, PartialEq)]
pub struct Faults {
    /// Each sample's delay is drawn uniformly from `[min, max]`, s.
    pub latency_s: [f64; 2],
    /// Probability that a sample is lost, independently of every other, 0 ≤ p < 1.
    pub loss: f64,
    /// Seed of the draws (each subscription draws from its own stream, seeded by this and its
    /// topic's name, so that adding a subscription does not change another's faults).
    pub seed: u64,
    /// Windows of silence.
    pub silences: Vec<Silence>,
}

impl Default for Faults {
    fn default() -> Faults {
        Faults::none()
    }
}

impl Faults {
    /// No faults: every sample delivered at once, in order.
    pub fn none() -> Faults {
        Faults {
            latency_s: [0.0, 0.0],
            loss: 0.0,
            seed: 0,
            silences: Vec::new(),
        }
    }

    /// Whether it injects anything.
    pub fn is_none(&self) -> bool {
        self.latency_s == [0.0, 0.0] && self.loss == 0.0 && self.silences.is_empty()
    }

    /// Checks every field, naming the one refused.
    pub fn validate(&self) -> std::result::Result<(), String> {
        let [lo, hi] = self.latency_s;
        if !(lo.is_finite() && hi.is_finite() && lo >= 0.0 && hi >= lo && hi <= 10.0) {
            return Err(format!("latency: [{lo}, {hi}] s is not 0 ≤ min ≤ max ≤ 10 s (finite)"));
        }
        if !(self.loss.is_finite() && (0.0..1.0).contains(&self.loss)) {
            return Err(format!("loss: {} is not a probability in [0, 1)", self.loss));
        }
        for (k, s) in self.silences.iter().enumerate() {
            if s.topic.is_empty() || (s.topic != "*" && !s.topic.starts_with('/')) {
                return Err(format!(
                    "silence {}: topic `{}` is neither `*` nor a resolved name (`/m1/imu`)",
                    k + 1,
                    s.topic
                ));
            }
            if !(s.from_s.is_finite() && s.for_s.is_finite() && s.for_s >= 0.0) {
                return Err(format!(
                    "silence {}: from {} s for {} s is not a finite window of length ≥ 0",
                    k + 1,
                    s.from_s,
                    s.for_s
                ));
            }
        }
        Ok(())
    }

    /// Parses a comma-separated specification, e.g.
    /// `latency_ms=0..20,loss=0.01,seed=7,silence=/m1/imu@5+2` (the IMU of `/m1` silent from
    /// 5 s for 2 s; `silence` may be repeated; `latency_ms=10` is a fixed 10 ms). Unknown keys,
    /// values that do not parse and values out of range are refused naming the key.
    pub fn parse(spec: &str) -> std::result::Result<Faults, String> {
        let mut f = Faults::none();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("`{item}` is not KEY=VALUE (latency_ms, loss, seed, silence)"))?;
            let num = |v: &str| -> std::result::Result<f64, String> {
                v.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("{key}: `{v}` is not a number"))
            };
            match key.trim() {
                "latency_ms" => {
                    let (lo, hi) = value.split_once("..").unwrap_or((value, value));
                    f.latency_s = [num(lo)? / 1e3, num(hi)? / 1e3];
                }
                "loss" => f.loss = num(value)?,
                "seed" => {
                    f.seed = value
                        .trim()
                        .parse()
                        .map_err(|_| format!("seed: `{value}` is not a whole number ≥ 0"))?
                }
                "silence" => {
                    let (topic, window) = value
                        .split_once('@')
                        .ok_or_else(|| format!("silence: `{value}` is not TOPIC@FROM+FOR (s)"))?;
                    let (from, dur) = window
                        .split_once('+')
                        .ok_or_else(|| format!("silence: `{value}` is not TOPIC@FROM+FOR (s)"))?;
                    f.silences.push(Silence {
                        topic: topic.trim().to_string(),
                        from_s: num(from)?,
                        for_s: num(dur)?,
                    });
                }
                other => {
                    return Err(format!("unknown key `{other}` (latency_ms, loss, seed, silence)"));
                }
            }
        }
        f.validate()?;
        Ok(f)
    }

    fn silent(&self, topic: &str, t: f64) -> bool {
        self.silences
            .iter()
            .any(|s| (s.topic == "*" || s.topic == topic) && t >= s.from_s && t < s.from_s + s.for_s)
    }
}

/// What one subscription's faults did, for tests and logs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultStats {
    /// Samples taken from the wrapped subscription.
    pub received: u64,
    /// Lost by the draw (best-effort subscriptions).
    pub lost: u64,
    /// Lost by the draw and sent again (reliable subscriptions): delivered late.
    pub resent: u64,
    /// Dropped inside a window of silence.
    pub silenced: u64,
    /// Dropped because [`MAX_PENDING`] were held back.
    pub overflowed: u64,
    /// Handed to the node.
    pub delivered: u64,
    /// Best effort: dropped because a later sample of the topic overtook it (an RTPS
    /// best-effort reader keeps only samples newer than the last it delivered).
    pub stale: u64,
}

type Stats = Arc<Mutex<BTreeMap<String, FaultStats>>>;

/// A [`Transport`] whose subscriptions deliver late, lose samples and fall silent as
/// [`Faults`] says. Node time advances when the node reads [`Transport::now`] (every node
/// does on each tick); samples arrive at the time last read.
pub struct FaultyTransport<T> {
    inner: T,
    faults: Arc<Faults>,
    clock: Arc<AtomicU64>,
    stats: Stats,
}

impl<T: Transport> FaultyTransport<T> {
    /// Wraps `inner`; `faults` is validated.
    pub fn new(inner: T, faults: Faults) -> std::result::Result<FaultyTransport<T>, String> {
        faults.validate()?;
        let clock = Arc::new(AtomicU64::new(inner.now().to_bits()));
        Ok(FaultyTransport {
            inner,
            faults: Arc::new(faults),
            clock,
            stats: Stats::default(),
        })
    }

    /// The wrapped transport.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    /// What the faults did so far, by resolved topic name (summed over its subscriptions).
    pub fn stats(&self) -> BTreeMap<String, FaultStats> {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

/// A publisher of a [`FaultyTransport`]: the wrapped one.
pub struct FaultyPub<P>(P);

impl<M, P: Pub<M>> Pub<M> for FaultyPub<P> {
    fn publish(&self, m: M) -> Result<()> {
        self.0.publish(m)
    }
}

/// A sample held back until `at`; `seq` orders equal times by arrival.
struct Held<M> {
    at: f64,
    seq: u64,
    sample: std::result::Result<M, String>,
}

impl<M> PartialEq for Held<M> {
    fn eq(&self, o: &Self) -> bool {
        self.at.total_cmp(&o.at).is_eq() && self.seq == o.seq
    }
}
impl<M> Eq for Held<M> {}
impl<M> PartialOrd for Held<M> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<M> Ord for Held<M> {
    /// Reversed, so that the [`BinaryHeap`] pops the earliest first.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.at.total_cmp(&self.at).then(o.seq.cmp(&self.seq))
    }
}

struct Holding<M> {
    rng: ChaCha8Rng,
    heap: BinaryHeap<Held<M>>,
    next_seq: u64,
    last_delivered_seq: Option<u64>,
    /// Reliable: when the last sample taken in is due; none may come before it.
    last_due: f64,
    /// Node time of the last take: what the wrapped reader holds now came since.
    last_take: Option<f64>,
}

/// A subscription of a [`FaultyTransport`].
pub struct FaultySub<S, M> {
    inner: S,
    topic: String,
    /// Reliable or latched: a lost sample is sent again.
    reliable: bool,
    faults: Arc<Faults>,
    clock: Arc<AtomicU64>,
    stats: Stats,
    held: Mutex<Holding<M>>,
}

impl<S: Sub<M>, M: Send> FaultySub<S, M> {
    fn count(&self, f: impl FnOnce(&mut FaultStats)) {
        if let Ok(mut s) = self.stats.lock() {
            f(s.entry(self.topic.clone()).or_default());
        }
    }
}

impl<S: Sub<M>, M: Send> Sub<M> for FaultySub<S, M> {
    fn take(&self) -> Option<std::result::Result<M, String>> {
        let now = f64::from_bits(self.clock.load(Ordering::Relaxed));
        let Ok(mut held) = self.held.lock() else {
            return self.inner.take();
        };
        let [lo, hi] = self.faults.latency_s;
        // What the wrapped reader holds came while the node did not take: a node busy for a
        // while (planning) finds many samples at once. They reached it spread over the time
        // since its last take, evenly in their order, and their latency counts from there —
        // not from now, which would delay a whole backlog once more (record 0061).
        let mut fresh = Vec::new();
        while let Some(sample) = self.inner.take() {
            fresh.push(sample);
        }
        let since = held.last_take.map_or(now, |t| t.min(now));
        held.last_take = Some(now);
        let n = fresh.len() as f64;
        for (i, sample) in fresh.into_iter().enumerate() {
            let arrived = since + (now - since) * (i as f64 + 1.0) / n;
            self.count(|s| s.received += 1);
            if self.faults.silent(&self.topic, arrived) {
                self.count(|s| s.silenced += 1);
                continue;
            }
            // Both draws are made for every sample, so that the loss does not shift the
            // latencies of the samples after it.
            let lose = held.rng.random::<f64>() < self.faults.loss;
            let mut delay = lo + (hi - lo) * held.rng.random::<f64>();
            if lose && self.reliable {
                self.count(|s| s.resent += 1);
                delay += RETRANSMIT_S + hi;
            } else if lose {
                self.count(|s| s.lost += 1);
                continue;
            }
            if held.heap.len() >= MAX_PENDING {
                // The earliest due is the one to go: it has waited longest.
                held.heap.pop();
                self.count(|s| s.overflowed += 1);
            }
            let seq = held.next_seq;
            held.next_seq += 1;
            // A reliable reader delivers in order: a sample waits for the one before it.
            let mut at = arrived + delay;
            if self.reliable {
                at = at.max(held.last_due);
                held.last_due = at;
            }
            held.heap.push(Held { at, seq, sample });
        }
        while held.heap.peek().is_some_and(|h| h.at <= now) {
            let h = held.heap.pop()?;
            if held.last_delivered_seq.is_some_and(|l| h.seq < l) {
                // Only a best-effort sample can be overtaken: it is dropped.
                self.count(|s| s.stale += 1);
                continue;
            }
            held.last_delivered_seq = Some(h.seq);
            self.count(|s| s.delivered += 1);
            return Some(h.sample);
        }
        None
    }
}

/// A server of a [`FaultyTransport`]: the wrapped one.
pub struct FaultyServer<V>(V);

impl<Req, Resp, V: Server<Req, Resp>> Server<Req, Resp> for FaultyServer<V> {
    type Token = V::Token;
    fn take(&self) -> Option<std::result::Result<(Self::Token, Req), String>> {
        self.0.take()
    }
    fn respond(&self, token: Self::Token, response: Resp) -> Result<()> {
        self.0.respond(token, response)
    }
}

/// A client of a [`FaultyTransport`]: the wrapped one. Faults are injected on topics only:
/// a service's outcome that matters to a behaviour (a connector latched) comes back on a
/// topic, where latency and loss reach it.
pub struct FaultyClient<C>(C);

impl<Req, Resp, C: Client<Req, Resp>> Client<Req, Resp> for FaultyClient<C> {
    type Id = C::Id;
    fn call(&self, request: &Req) -> Result<Self::Id> {
        self.0.call(request)
    }
    fn response(&self, id: &Self::Id) -> Option<std::result::Result<Resp, String>> {
        self.0.response(id)
    }
}

/// FNV-1a of a topic name: a stable per-topic seed (std's hashers promise no stability).
fn topic_seed(topic: &str) -> u64 {
    topic.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl<T: Transport> Transport for FaultyTransport<T> {
    type P<M: RosMessage> = FaultyPub<T::P<M>>;
    type S<M: RosMessage> = FaultySub<T::S<M>, M>;
    type Srv<Req: RosMessage, Resp: RosMessage> = FaultyServer<T::Srv<Req, Resp>>;
    type Cli<Req: RosMessage, Resp: RosMessage> = FaultyClient<T::Cli<Req, Resp>>;

    fn client<Req: RosMessage, Resp: RosMessage>(
        &mut self,
        name: &str,
        package: &str,
        service: &str,
    ) -> Result<Self::Cli<Req, Resp>> {
        Ok(FaultyClient(self.inner.client(name, package, service)?))
    }

    fn publisher<M: RosMessage>(&mut self, topic: &str, qos: Qos) -> Result<Self::P<M>> {
        Ok(FaultyPub(self.inner.publisher(topic, qos)?))
    }

    fn subscription<M: RosMessage>(&mut self, topic: &str, qos: Qos) -> Result<Self::S<M>> {
        let inner = self.inner.subscription(topic, qos)?;
        let topic = self.inner.resolve(topic);
        let rng = ChaCha8Rng::seed_from_u64(self.faults.seed ^ topic_seed(&topic));
        Ok(FaultySub {
            inner,
            topic,
            reliable: matches!(qos, Qos::Reliable | Qos::Latched),
            faults: Arc::clone(&self.faults),
            clock: Arc::clone(&self.clock),
            stats: Arc::clone(&self.stats),
            held: Mutex::new(Holding {
                rng,
                heap: BinaryHeap::new(),
                next_seq: 0,
                last_delivered_seq: None,
                last_due: f64::NEG_INFINITY,
                last_take: None,
            }),
        })
    }

    fn server<Req: RosMessage, Resp: RosMessage>(
        &mut self,
        name: &str,
        package: &str,
        service: &str,
    ) -> Result<Self::Srv<Req, Resp>> {
        Ok(FaultyServer(self.inner.server(name, package, service)?))
    }

    fn param_changes(&mut self) -> Vec<(String, ParamValue)> {
        self.inner.param_changes()
    }

    fn param(&self, name: &str) -> Option<ParamValue> {
        self.inner.param(name)
    }

    fn now(&self) -> f64 {
        let t = self.inner.now();
        self.clock.store(t.to_bits(), Ordering::Relaxed);
        t
    }

    fn log(&self, level: Level, msg: &str) {
        self.inner.log(level, msg)
    }

    fn identity(&self) -> &NodeIdentity {
        self.inner.identity()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use modbot_msgs::std_msgs::msg::Float64MultiArray;

    use super::*;
    use crate::args::RosArgs;
    use crate::loopback::LoopbackBus;

    fn id(name: &str) -> NodeIdentity {
        NodeIdentity::new(name, &RosArgs::default()).unwrap()
    }

    /// A talker on the bus and a listener behind `faults`.
    fn pair(
        faults: Faults,
    ) -> (
        LoopbackBus,
        impl Pub<Float64MultiArray>,
        FaultyTransport<crate::loopback::LoopbackNode>,
    ) {
        let bus = LoopbackBus::new();
        let mut talker = bus.node(id("talker"));
        let p = talker
            .publisher::<Float64MultiArray>("/chatter", Qos::Reliable)
            .unwrap();
        let listener = FaultyTransport::new(bus.node(id("listener")), faults).unwrap();
        (bus, p, listener)
    }

    fn msg(k: usize, t: f64) -> Float64MultiArray {
        Float64MultiArray {
            data: vec![k as f64, t],
            ..Default::default()
        }
    }

    /// Publishes one sample every `period` s for `n` samples, reading every 1 ms; returns
    /// (index, sent, arrived) of every sample delivered.
    /// A best-effort reader, which is what loses samples.
    fn run(faults: Faults, n: usize, period: f64) -> (Vec<(usize, f64, f64)>, FaultStats) {
        run_on(faults, n, period, Qos::SensorData)
    }

    fn run_on(faults: Faults, n: usize, period: f64, qos: Qos) -> (Vec<(usize, f64, f64)>, FaultStats) {
        let (bus, p, mut l) = pair(faults);
        let sub = l.subscription::<Float64MultiArray>("/chatter", qos).unwrap();
        let mut got = Vec::new();
        let steps_per = (period / 1e-3).round() as usize;
        let total = n * steps_per + 2000;
        for step in 0..total {
            let t = step as f64 * 1e-3;
            bus.set_now(t);
            let now = l.now();
            if step % steps_per == 0 && step / steps_per < n {
                p.publish(msg(step / steps_per, t)).unwrap();
            }
            while let Some(m) = sub.take() {
                let m = m.unwrap();
                got.push((m.data[0] as usize, m.data[1], now));
            }
        }
        (got, l.stats()["/chatter"])
    }

    #[test]
    fn no_faults_delivers_everything_at_once_in_order() {
        let (got, s) = run(Faults::none(), 500, 1e-3);
        assert_eq!(got.len(), 500);
        assert!(got.iter().enumerate().all(|(k, g)| g.0 == k && g.2 == g.1));
        assert_eq!((s.lost, s.stale, s.overflowed), (0, 0, 0));
    }

    /// A node busy for half a second (planning) finds five samples in its reader, sent every
    /// 100 ms while it computed (the readers keep five): they arrived spread over that time,
    /// so with a fixed 20 ms latency all but the last are due at once, in order — the
    /// backlog is not delayed a second time from the moment it is taken (sample k is taken
    /// to have arrived at (k + 1)/5 of the 505 ms since the last take, 20 ms before it is
    /// due; counted from the take, none would be due).
    #[test]
    fn a_backlog_taken_late_counts_its_latency_from_when_it_came() {
        for qos in [Qos::SensorData, Qos::Reliable] {
            let (bus, p, mut l) = pair(Faults::parse("latency_ms=20").unwrap());
            let sub = l.subscription::<Float64MultiArray>("/chatter", qos).unwrap();
            bus.set_now(0.0);
            l.now();
            assert!(sub.take().is_none());
            for k in 0..5 {
                let t = (k + 1) as f64 * 0.1;
                bus.set_now(t);
                p.publish(msg(k, t)).unwrap();
            }
            bus.set_now(0.505);
            l.now();
            let mut got = Vec::new();
            while let Some(m) = sub.take() {
                got.push(m.unwrap().data[0] as usize);
            }
            assert_eq!(got, vec![0, 1, 2, 3], "{qos:?}");
            bus.set_now(0.53);
            l.now();
            while let Some(m) = sub.take() {
                got.push(m.unwrap().data[0] as usize);
            }
            assert_eq!(got, vec![0, 1, 2, 3, 4], "{qos:?}");
        }
    }

    /// A fixed latency delays every sample by exactly that (the 1 ms reading grid included:
    /// 10 ms is ten steps), and nothing is reordered.
    #[test]
    fn a_fixed_latency_delays_every_sample_by_it() {
        let f = Faults::parse("latency_ms=10").unwrap();
        let (got, s) = run(f, 500, 1e-3);
        assert_eq!(got.len(), 500);
        for (k, (i, sent, arrived)) in got.iter().enumerate() {
            assert_eq!(*i, k);
            // Read on the 1 ms grid: 10 ms, or 11 where the sum rounds a hair past a step.
            let d = arrived - sent;
            assert!((0.010 - 1e-9..=0.011 + 1e-9).contains(&d), "{k}: {d}");
        }
        assert_eq!(s.stale, 0);
    }

    /// Latencies drawn from U(0, 20 ms) on samples 25 ms apart (none can overtake
    /// another): every delay within [0, 20 ms] (plus the 1 ms reading grid) and their mean
    /// within five standard errors of the closed form's 10 ms (σ = 20/√12 ms).
    #[test]
    fn a_jittered_latency_is_uniform() {
        let f = Faults::parse("latency_ms=0..20,seed=3").unwrap();
        let n = 2000;
        let (got, s) = run(f, n, 0.025);
        assert_eq!((got.len(), s.stale), (n, 0));
        let delays: Vec<f64> = got.iter().map(|g| g.2 - g.1).collect();
        assert!(delays.iter().all(|&d| (-1e-9..=0.021).contains(&d)), "{delays:?}");
        let mean = delays.iter().sum::<f64>() / n as f64;
        // The grid rounds each arrival up to the next millisecond: +0.5 ms on average.
        let want = 0.010 + 0.0005;
        let se = 0.020 / 12f64.sqrt() / (n as f64).sqrt();
        assert!((mean - want).abs() < 5.0 * se, "mean {mean} vs {want} ± {}", 5.0 * se);
    }

    /// Samples 1 ms apart with U(0, 20 ms) of jitter: nothing comes out of order on either
    /// kind of reader. Best effort drops what was overtaken (counted stale, the rest
    /// delivered); reliable delivers everything, each sample held for the one before it, so
    /// its mean delay rises above the drawn 10 ms while none exceeds the 20 ms drawn at most.
    #[test]
    fn jitter_keeps_a_topics_order_as_dds_does() {
        let f = Faults::parse("latency_ms=0..20,seed=3").unwrap();
        let n = 4000;
        let (got, s) = run(f.clone(), n, 1e-3);
        assert!(got.windows(2).all(|w| w[1].0 > w[0].0), "best effort out of order");
        assert!(s.stale > n as u64 / 10, "{s:?}");
        assert_eq!(s.stale + s.delivered, n as u64);
        let (got, s) = run_on(f, n, 1e-3, Qos::Reliable);
        assert_eq!((got.len(), s.stale), (n, 0));
        assert!(got.windows(2).all(|w| w[1].0 == w[0].0 + 1), "reliable out of order");
        let delays: Vec<f64> = got.iter().map(|g| g.2 - g.1).collect();
        assert!(delays.iter().all(|&d| (-1e-9..=0.021).contains(&d)), "{delays:?}");
        let mean = delays.iter().sum::<f64>() / n as f64;
        let se = 0.020 / 12f64.sqrt() / (n as f64).sqrt();
        assert!(mean > 0.0105 + 5.0 * se, "mean {mean}: no sample held back");
    }

    /// Loss p = 2 % of 20 000: the count within five standard deviations of the binomial's
    /// mean (400 ± 99), and what is lost is what is missing.
    #[test]
    fn loss_drops_the_drawn_fraction() {
        let f = Faults::parse("loss=0.02,seed=11").unwrap();
        let n = 20_000;
        let (got, s) = run(f, n, 1e-3);
        let lost = (n - got.len()) as f64;
        let (mean, sd) = (n as f64 * 0.02, (n as f64 * 0.02 * 0.98).sqrt());
        assert!((lost - mean).abs() < 5.0 * sd, "{lost} lost, {mean} ± {}", 5.0 * sd);
        assert_eq!(s.lost as f64, lost);
        assert_eq!(s.received, n as u64);
    }

    /// A reliable reader loses nothing: what the draw loses comes a retransmission later
    /// (RETRANSMIT_S plus one more worst-case latency), in order, at least as many samples
    /// that late as were sent again.
    #[test]
    fn a_reliable_reader_gets_lost_samples_again_late() {
        let f = Faults::parse("latency_ms=0..10,loss=0.1,seed=11").unwrap();
        let n = 2000;
        let (got, s) = run_on(f, n, 0.01, Qos::Reliable);
        assert_eq!((got.len(), s.lost), (n, 0));
        assert!(got.windows(2).all(|w| w[1].0 == w[0].0 + 1));
        let late = got
            .iter()
            .filter(|(_, sent, at)| at - sent >= RETRANSMIT_S + 0.01 - 1e-9)
            .count();
        assert!(late as u64 >= s.resent, "{late} late, {} resent", s.resent);
        // Binomial(2000, 0.1): 200 ± 5σ (σ = 13.4).
        assert!((s.resent as f64 - 200.0).abs() < 67.0, "{}", s.resent);
    }

    #[test]
    fn a_silent_window_delivers_nothing_and_only_then() {
        let f = Faults::parse("silence=/chatter@0.2+0.1").unwrap();
        let (got, s) = run(f, 500, 1e-3);
        assert!(got.iter().all(|g| !(0.2..0.3 - 1e-9).contains(&g.1)));
        assert_eq!(got.len() as u64 + s.silenced, 500);
        assert!((99..=101).contains(&s.silenced), "{s:?}");
        // Another topic's silence leaves this one alone.
        let (got, _) = run(Faults::parse("silence=/other@0.2+0.1").unwrap(), 500, 1e-3);
        assert_eq!(got.len(), 500);
    }

    #[test]
    fn the_same_seed_gives_the_same_faults() {
        let f = |seed: u64| Faults {
            latency_s: [0.0, 0.02],
            loss: 0.05,
            seed,
            silences: Vec::new(),
        };
        let a = run(f(5), 1000, 1e-3).0;
        let b = run(f(5), 1000, 1e-3).0;
        let c = run(f(6), 1000, 1e-3).0;
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    /// A latency far beyond the publishing rate holds at most [`MAX_PENDING`] samples.
    #[test]
    fn what_is_held_back_is_bounded() {
        let f = Faults::parse("latency_ms=9000").unwrap();
        let (bus, p, mut l) = pair(f);
        let sub = l.subscription::<Float64MultiArray>("/chatter", Qos::Reliable).unwrap();
        for k in 0..3000 {
            bus.set_now(k as f64 * 1e-3);
            l.now();
            p.publish(msg(k, 0.0)).unwrap();
            assert!(sub.take().is_none());
        }
        let s = l.stats()["/chatter"];
        assert_eq!(s.received, 3000);
        assert_eq!(s.overflowed, 3000 - MAX_PENDING as u64);
        // The newest are the ones kept.
        bus.set_now(100.0);
        l.now();
        let first = sub.take().unwrap().unwrap();
        assert_eq!(first.data[0] as usize, 3000 - MAX_PENDING);
    }

    /// Over DDS (ros2-client, in a loopback-only network namespace): a wall-clock latency of
    /// 20–40 ms puts every sample at least 20 ms after its stamp (DDS adds its own), jitter
    /// keeps the order of samples sent 2 ms apart (dropping the overtaken: best effort), and 10 % loss loses some.
    #[test]
    fn faults_apply_over_dds_too() {
        if crate::netns::reexec_in_netns("faults::tests::faults_apply_over_dds_too") {
            return;
        }
        let mut talker = crate::dds::DdsTransport::plain("talker").unwrap();
        let p = talker
            .publisher::<Float64MultiArray>("/chatter", Qos::Reliable)
            .unwrap();
        let f = Faults::parse("latency_ms=20..40,loss=0.1,seed=1").unwrap();
        let mut l = FaultyTransport::new(crate::dds::DdsTransport::plain("listener").unwrap(), f).unwrap();
        // Best effort: the reader that loses samples.
        let sub = l
            .subscription::<Float64MultiArray>("/chatter", Qos::SensorData)
            .unwrap();
        let wall = crate::transport::wall_now;
        // Discovery: a probe (index −1) every 50 ms until the listener hears one.
        let deadline = wall() + 20.0;
        'discovery: loop {
            assert!(wall() < deadline, "the listener never heard the talker");
            p.publish(msg(usize::MAX, wall())).unwrap();
            for _ in 0..50 {
                l.now();
                if sub.take().is_some() {
                    break 'discovery;
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        let mut got = Vec::new();
        let n = 400;
        let end = wall() + n as f64 * 0.002 + 0.5;
        let mut k = 0;
        while wall() < end {
            let now = l.now();
            if k < n {
                p.publish(msg(k, now)).unwrap();
                k += 1;
            }
            while let Some(m) = sub.take() {
                let m = m.unwrap();
                if m.data[0] < n as f64 {
                    got.push((m.data[0] as usize, m.data[1], now));
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let s = l.stats()["/chatter"];
        eprintln!("over DDS: {} of {n} delivered, {s:?}", got.len());
        assert!(
            got.iter().all(|g| g.2 - g.1 >= 0.020),
            "a sample came sooner than 20 ms"
        );
        assert!(got.windows(2).all(|w| w[1].0 > w[0].0), "out of order");
        assert!(
            s.lost > 0 && s.stale > 0 && got.len() < n && s.delivered + s.lost + s.stale == s.received,
            "{} of {n}, {s:?}",
            got.len()
        );
    }

    #[test]
    fn a_bad_specification_is_refused_naming_the_key() {
        for (spec, key) in [
            ("loss=1.5", "loss"),
            ("loss=NaN", "loss"),
            ("loss=x", "loss"),
            ("latency_ms=20..5", "latency"),
            ("latency_ms=-1", "latency"),
            ("latency_ms=inf", "latency"),
            ("seed=-3", "seed"),
            ("silence=imu@1+2", "silence 1"),
            ("silence=/imu@1", "silence"),
            ("silence=/imu@1+-2", "silence 1"),
            ("jitter=3", "unknown key `jitter`"),
            ("loss", "KEY=VALUE"),
        ] {
            let e = Faults::parse(spec).unwrap_err();
            assert!(e.contains(key), "{spec}: {e}");
        }
        assert!(Faults::parse("").unwrap().is_none());
        let f = Faults::parse(" latency_ms=0..30 , loss=0.01, seed=2, silence=*@1+0.5").unwrap();
        assert_eq!(f.latency_s, [0.0, 0.03]);
        assert_eq!((f.loss, f.seed, f.silences.len()), (0.01, 2, 1));
    }
}
