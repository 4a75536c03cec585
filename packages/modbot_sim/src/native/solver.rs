//! Projected Gauss–Seidel over the rows, in generalised velocities: each row in turn moves
//! its impulse to `λ ← clamp(λ + (rhs − J ν − cfm λ) / (J M⁻¹ Jᵀ + cfm))` and the velocity by
//! `ν += M⁻¹ Jᵀ Δλ`; a contact's friction pair is projected onto the disc |λ_t| ≤ μ λₙ.
//! Warm started with last step's impulses (drive rows per joint, ground contacts per box
//! corner), the sweeps alternating direction so neither end of a chain is favoured.

use super::rows::{Row, Rows};

impl Rows {
    /// ν += W Δλ for the row at `row`.
    fn apply(&self, row: &Row, nu: &mut [f64], delta: f64) {
        let (s, e) = (row.from, row.to);
        for (v, w) in nu[s..e].iter_mut().zip(&self.wrow[row.at + s..row.at + e]) {
            *v += w * delta;
        }
    }

    /// J ν of a row.
    fn jv(&self, row: &Row, nu: &[f64]) -> f64 {
        let (s, e) = (row.from, row.to);
        self.jrow[row.at + s..row.at + e]
            .iter()
            .zip(&nu[s..e])
            .map(|(j, v)| j * v)
            .sum()
    }

    fn solve_single(&mut self, i: usize, nu: &mut [f64]) {
        let r = self.singles[i];
        let lambda = (r.lambda + (r.rhs - self.jv(&r, nu)) * r.inv_d).clamp(r.lo, r.hi);
        let delta = lambda - r.lambda;
        if delta != 0.0 {
            self.apply(&r, nu, delta);
            self.singles[i].lambda = lambda;
        }
    }

    fn solve_contact(&mut self, i: usize, nu: &mut [f64]) {
        let c = self.contacts[i];
        let [rn, r1, r2] = c.rows;
        let ln = (rn.lambda + (rn.rhs - self.jv(&rn, nu) - rn.cfm * rn.lambda) * rn.inv_d).max(0.0);
        if ln != rn.lambda {
            self.apply(&rn, nu, ln - rn.lambda);
        }
        let mut l1 = r1.lambda - (self.jv(&r1, nu) + r1.cfm * r1.lambda) * r1.inv_d;
        let mut l2 = r2.lambda - (self.jv(&r2, nu) + r2.cfm * r2.lambda) * r2.inv_d;
        let limit = c.mu * ln;
        let norm = (l1 * l1 + l2 * l2).sqrt();
        if norm > limit {
            let s = if norm > 0.0 { limit / norm } else { 0.0 };
            l1 *= s;
            l2 *= s;
        }
        if l1 != r1.lambda {
            self.apply(&r1, nu, l1 - r1.lambda);
        }
        if l2 != r2.lambda {
            self.apply(&r2, nu, l2 - r2.lambda);
        }
        let c = &mut self.contacts[i];
        c.rows[0].lambda = ln;
        c.rows[1].lambda = l1;
        c.rows[2].lambda = l2;
    }

    /// Applies the warm-start impulses, runs `sweeps` sweeps on `nu`, and keeps the impulses
    /// for the next step.
    pub fn solve(&mut self, nu: &mut [f64], sweeps: usize) {
        for i in 0..self.singles.len() {
            let r = self.singles[i];
            if r.lambda != 0.0 {
                self.apply(&r, nu, r.lambda);
            }
        }
        for i in 0..self.contacts.len() {
            let c = self.contacts[i];
            for r in c.rows {
                if r.lambda != 0.0 {
                    self.apply(&r, nu, r.lambda);
                }
            }
        }
        for sweep in 0..sweeps {
            if sweep % 2 == 0 {
                for i in 0..self.singles.len() {
                    self.solve_single(i, nu);
                }
                for i in 0..self.contacts.len() {
                    self.solve_contact(i, nu);
                }
            } else {
                for i in (0..self.contacts.len()).rev() {
                    self.solve_contact(i, nu);
                }
                for i in (0..self.singles.len()).rev() {
                    self.solve_single(i, nu);
                }
            }
        }
        for v in self.warm_next.iter_mut() {
            *v = [0.0; 3];
        }
        for c in &self.contacts {
            if c.key < self.warm_next.len() {
                self.warm_next[c.key] = [c.rows[0].lambda, c.rows[1].lambda, c.rows[2].lambda];
            }
        }
        std::mem::swap(&mut self.warm, &mut self.warm_next);
        for (warm, row) in self.drive_warm.iter_mut().zip(&self.drive_rows) {
            if let Some(row) = row {
                *warm = self.singles[*row].lambda;
            }
        }
    }
}
