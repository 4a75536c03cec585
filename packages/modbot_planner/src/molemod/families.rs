//! Task families for benchmarks and trend tests: the seed's tasks (Fig. 3.9, 3.12) are
//! drawings the seed does not hold (spec §6), so the planning-time trends of Tables 3.1
//! and 3.2 are compared on these instead (`modbot molemod bench`, tests/molemod.rs).

use super::error::MoleError;
use super::grid::{Cell, GridState};

/// The families: a row rebuilt into an L, a column, or stairs.
pub const FAMILIES: [&str; 3] = ["row_to_l", "row_to_column", "row_to_stairs"];

/// A task of a family on an R × R grid: R modules in the bottom row, `robots` of them
/// (the left-most) robots, to be rebuilt into the family's shape. An unknown family, or
/// more robots than modules, is refused naming it.
pub fn family(name: &str, size: usize, robots: usize) -> Result<(GridState, GridState), MoleError> {
    if !FAMILIES.contains(&name) {
        return Err(MoleError::InvalidTask(format!(
            "family '{name}': known are {}",
            FAMILIES.join(", ")
        )));
    }
    if size < 3 {
        return Err(MoleError::InvalidTask(format!("family size {size}: at least 3")));
    }
    if robots == 0 || robots > size {
        return Err(MoleError::InvalidTask(format!(
            "family robots {robots}: 1 to {size} (one per module at most)"
        )));
    }
    let mut initial = GridState::empty(size, size)?;
    let bottom = size - 1;
    for c in 0..size {
        initial.set(bottom * size + c, if c < robots { Cell::Robot } else { Cell::Module });
    }
    let mut goal = GridState::empty(size, size)?;
    let n = size;
    match name {
        "row_to_l" => {
            let v = n.div_ceil(2);
            for k in 0..v {
                goal.set((bottom - k) * size + 1, Cell::Module);
            }
            for c in 0..n - v {
                goal.set(bottom * size + 2 + c, Cell::Module);
            }
        }
        "row_to_column" => {
            for k in 0..n {
                goal.set((bottom - k) * size + size / 2, Cell::Module);
            }
        }
        _ => {
            // row_to_stairs: column heights h, h−1, … from the left, totalling n.
            let mut left = n;
            let mut h = 1;
            while h * (h + 1) / 2 < n {
                h += 1;
            }
            for c in 0..size {
                let take = h.saturating_sub(c).min(left);
                for k in 0..take {
                    goal.set((bottom - k) * size + c, Cell::Module);
                }
                left -= take;
            }
        }
    }
    Ok((initial, goal))
}
