//! The digital-hormone method (seed-003, Shen et al. 2004): every module runs the same
//! controller, builds a map of its organism by handshakes with its neighbours, takes a role
//! from its type and the map, and moves its hinge as the hormones from its neighbours say.
//! [`bus::Bus`] connects modules in one process with one tick per hop, so the protocol runs
//! without physics or network. Decision record 0029.

pub mod bus;
pub mod module;
pub mod sensing;
pub mod topology;

pub use bus::Bus;
pub use module::{Frame, FrameKind, HormoneKind, HormoneModule, HormoneSettings, ObstacleSide, Role, classify};
pub use sensing::{IrRing, IrSensors, PITCHED_TILT_DEG, is_pitched};
pub use topology::{Hop, MapNode, Side, Status, TopologyMap, module_type};
