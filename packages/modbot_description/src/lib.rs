#![doc = include_str!("../README.md")]

pub mod artifacts;
pub mod config;
pub mod dock;
pub mod error;
pub mod model;
pub mod sdf;
pub mod urdf;
pub mod xml;

pub use config::DescriptionConfig;
pub use error::{DescriptionError, Result};
pub use model::UrdfModel;

/// The robots whose descriptions ship in `urdf/` (and controllers and bridge files in `config/`).
pub const STANDARD_ROBOTS: [&str; 8] = [
    "pp:8",
    "pp:2",
    "py:8",
    "py:16",
    "pyp",
    "wheelfoot",
    "quadruped",
    "wheeled",
];
