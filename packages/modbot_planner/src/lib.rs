#![doc = include_str!("../README.md")]

pub mod capabilities;
pub mod deliberative;
pub mod grid;
pub mod molemod;
pub mod sequencer;
pub mod strategic;
