#![doc = include_str!("../README.md")]

pub mod config;
pub mod error;
pub mod generator;
pub mod library;
pub mod params;
pub mod player;

pub use config::{GaitLibrary, Preset, Selection, Transition};
pub use error::{GaitError, Result};
pub use generator::{Gait, Oscillator, SineGenerator};
pub use library::{BuiltGait, Control, Family, GAITS, GaitDef, RobotInfo};
pub use player::GaitPlayer;
