//! The state: an R × C grid whose cells are empty, a module, or a module with a robot,
//! bit-packed into two 256-bit sets (modules, robots) so states hash and compare fast.

use std::fmt;

use crate::molemod::error::MoleError;

/// Largest number of cells (e.g. 16 × 16).
pub const MAX_CELLS: usize = 256;

/// A grid state. Row 0 is the top; row R−1 rests on the ground.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GridState {
    rows: u8,
    cols: u8,
    modules: [u64; 4],
    robots: [u64; 4],
}

/// Contents of one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cell {
    /// 0: empty.
    Empty,
    /// 1: a module.
    Module,
    /// 2: a module with a robot inside.
    Robot,
}

impl GridState {
    /// An empty grid.
    pub fn empty(rows: usize, cols: usize) -> Result<GridState, MoleError> {
        if rows == 0 || cols == 0 || rows > 255 || cols > 255 || rows * cols > MAX_CELLS {
            return Err(MoleError::InvalidTask(format!(
                "grid {rows} × {cols}: need at least one cell and at most {MAX_CELLS}"
            )));
        }
        Ok(GridState {
            rows: rows as u8,
            cols: cols as u8,
            modules: [0; 4],
            robots: [0; 4],
        })
    }

    /// Rows R.
    pub fn rows(&self) -> usize {
        self.rows as usize
    }

    /// Columns C.
    pub fn cols(&self) -> usize {
        self.cols as usize
    }

    /// Cell index of (r, c) if inside the grid.
    #[inline]
    pub fn index(&self, r: isize, c: isize) -> Option<usize> {
        if r >= 0 && c >= 0 && (r as usize) < self.rows() && (c as usize) < self.cols() {
            Some(r as usize * self.cols() + c as usize)
        } else {
            None
        }
    }

    /// (r, c) of a cell index.
    #[inline]
    pub fn pos(&self, i: usize) -> (isize, isize) {
        ((i / self.cols()) as isize, (i % self.cols()) as isize)
    }

    #[inline]
    fn bit(set: &[u64; 4], i: usize) -> bool {
        set[i >> 6] >> (i & 63) & 1 == 1
    }

    #[inline]
    fn put(set: &mut [u64; 4], i: usize, v: bool) {
        if v {
            set[i >> 6] |= 1 << (i & 63);
        } else {
            set[i >> 6] &= !(1 << (i & 63));
        }
    }

    /// The cell at index `i`.
    #[inline]
    pub fn cell(&self, i: usize) -> Cell {
        match (Self::bit(&self.modules, i), Self::bit(&self.robots, i)) {
            (false, _) => Cell::Empty,
            (true, false) => Cell::Module,
            (true, true) => Cell::Robot,
        }
    }

    /// Sets the cell at index `i`.
    #[inline]
    pub fn set(&mut self, i: usize, cell: Cell) {
        Self::put(&mut self.modules, i, cell != Cell::Empty);
        Self::put(&mut self.robots, i, cell == Cell::Robot);
    }

    /// Is there a module (with or without robot) at (r, c)? Outside the grid: no.
    #[inline]
    pub fn module_at(&self, r: isize, c: isize) -> bool {
        self.index(r, c).is_some_and(|i| Self::bit(&self.modules, i))
    }

    /// Is (r, c) inside the grid and empty?
    #[inline]
    pub fn free(&self, r: isize, c: isize) -> bool {
        self.index(r, c).is_some_and(|i| !Self::bit(&self.modules, i))
    }

    /// Is (r, c) outside the grid or empty ("nothing on top")?
    #[inline]
    pub fn clear(&self, r: isize, c: isize) -> bool {
        self.index(r, c).is_none_or(|i| !Self::bit(&self.modules, i))
    }

    /// Number of modules.
    pub fn module_count(&self) -> u32 {
        self.modules.iter().map(|w| w.count_ones()).sum()
    }

    /// Number of robots.
    pub fn robot_count(&self) -> u32 {
        self.robots.iter().map(|w| w.count_ones()).sum()
    }

    /// Cell indices holding robots, ascending.
    pub fn robot_cells(&self) -> Vec<usize> {
        (0..self.rows() * self.cols())
            .filter(|&i| Self::bit(&self.robots, i))
            .collect()
    }

    /// Cell indices holding modules, ascending.
    pub fn module_cells(&self) -> Vec<usize> {
        (0..self.rows() * self.cols())
            .filter(|&i| Self::bit(&self.modules, i))
            .collect()
    }

    /// Same modules in the same cells (robots ignored).
    pub fn same_modules(&self, other: &GridState) -> bool {
        self.modules == other.modules
    }

    /// Parses the source's matrix text: rows of 0/1/2 separated by spaces, top row first.
    pub fn parse(text: &str, what: &str) -> Result<GridState, MoleError> {
        let bad = |reason: String| MoleError::Grid {
            what: what.to_string(),
            reason,
        };
        let rows: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|r| !r.is_empty())
            .collect();
        if rows.is_empty() {
            return Err(bad("no rows".into()));
        }
        let cols = rows[0].len();
        let mut g = GridState::empty(rows.len(), cols).map_err(|e| bad(e.to_string()))?;
        for (r, row) in rows.iter().enumerate() {
            if row.len() != cols {
                return Err(bad(format!("row {r} has {} cells, row 0 has {cols}", row.len())));
            }
            for (c, v) in row.iter().enumerate() {
                let cell = match *v {
                    "0" => Cell::Empty,
                    "1" => Cell::Module,
                    "2" => Cell::Robot,
                    other => {
                        return Err(bad(format!(
                            "row {r}, column {c}: unknown cell value `{other}` (0, 1 or 2)"
                        )));
                    }
                };
                g.set(r * cols + c, cell);
            }
        }
        Ok(g)
    }
}

impl fmt::Display for GridState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in 0..self.rows() {
            let row: Vec<&str> = (0..self.cols())
                .map(|c| match self.cell(r * self.cols() + c) {
                    Cell::Empty => "0",
                    Cell::Module => "1",
                    Cell::Robot => "2",
                })
                .collect();
            writeln!(f, "{}", row.join(" "))?;
        }
        Ok(())
    }
}

impl fmt::Debug for GridState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GridState(\n{self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print_round_trip() {
        let text = "0 0 2 0 0\n0 0 2 0 0\n0 0 1 0 0\n0 0 1 0 0\n0 0 1 0 0\n";
        let g = GridState::parse(text, "state 3").unwrap();
        assert_eq!(g.to_string(), text);
        assert_eq!((g.module_count(), g.robot_count()), (5, 2));
        assert!(g.module_at(0, 2) && !g.module_at(0, 1) && !g.module_at(-1, 2));
        assert!(g.clear(-1, 2) && !g.free(-1, 2));
        for (t, needle) in [("0 1\n1", "row 1 has 1"), ("0 3", "`3`"), ("", "no rows")] {
            let e = GridState::parse(t, "goal").unwrap_err().to_string();
            assert!(e.contains(needle) && e.contains("goal"), "{e}");
        }
    }
}
