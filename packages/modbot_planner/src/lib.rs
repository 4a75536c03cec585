#![doc = include_str!("../README.md")]

pub mod assembly;
pub mod capabilities;
pub mod deliberative;
pub mod executive;
pub mod friction;
pub mod goal;
pub mod grid;
pub mod modeling;
pub mod molemod;
pub mod sequencer;
pub mod strategic;
