//! What the loopback node tests share: a node's run loop in a thread on a bus, waiting with
//! a wall-clock limit, and reading the captured log.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use modbot_ros::loopback::{LoopbackBus, LoopbackNode, identity};
use modbot_ros::params::{NodeConfig, ParamValue, resolve};

/// A node's run loop in a thread; stopped and joined on drop.
pub struct Running {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<modbot_ros::Result<()>>>,
}

impl Running {
    pub fn alive(&self) -> bool {
        self.handle.as_ref().is_some_and(|h| !h.is_finished())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let r = h.join().expect("node thread panicked");
            if !std::thread::panicking() {
                r.expect("node loop failed");
            }
        }
    }
}

pub type RunFn<C> = fn(&mut LoopbackNode, C, Arc<AtomicBool>) -> modbot_ros::Result<()>;

pub fn spawn<C: NodeConfig>(bus: &LoopbackBus, name: &str, params: &[(&str, ParamValue)], run: RunFn<C>) -> Running {
    let overrides: Vec<(String, ParamValue)> = params.iter().map(|(k, v)| ((*k).to_string(), v.clone())).collect();
    let (map, cfg) = resolve::<C>(&[], &overrides).expect("parameters");
    let mut node = bus.node_with_params::<C>(identity(name, "/m"), map);
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let handle = std::thread::spawn(move || run(&mut node, cfg, flag));
    Running {
        stop,
        handle: Some(handle),
    }
}

pub fn s(x: &str) -> ParamValue {
    ParamValue::Str(x.into())
}

/// Polls `f` every 2 ms until it returns Some, for at most 20 s of wall time.
pub fn wait_for<T>(mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let until = Instant::now() + Duration::from_secs(20);
    while Instant::now() < until {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    None
}

pub fn logged(bus: &LoopbackBus, node: &str, needle: &str) -> usize {
    bus.logs()
        .iter()
        .filter(|l| l.node == node && l.msg.contains(needle))
        .count()
}

pub fn wait_log(bus: &LoopbackBus, node: &str, needle: &str) {
    wait_for(|| (logged(bus, node, needle) > 0).then_some(()))
        .unwrap_or_else(|| panic!("{node} never logged `{needle}`: {:#?}", bus.logs()));
}
