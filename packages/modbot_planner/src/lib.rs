#![doc = include_str!("../README.md")]

pub mod grid;
pub mod molemod;
pub mod strategic;
