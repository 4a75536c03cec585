//! Invariant tests of the native engine against independent answers.
