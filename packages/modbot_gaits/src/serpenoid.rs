//! The serpenoid curve and wave (Hirose), continuous (§3.6.2) and discrete (§3.6.3).
//!
//! Angles in degrees at the interface, as in the source; lengths in any unit (the
//! result has the unit of the length given).

use std::f64::consts::PI;

/// Composite Simpson rule with `n` (even) intervals. Written here rather than taken
/// from a crate: the integrands are smooth and periodic, 15 lines suffice, and a
/// quadrature dependency would be heavier than the code (decision record 0007).
pub fn simpson(f: impl Fn(f64) -> f64, a: f64, b: f64, n: usize) -> f64 {
    let n = if n % 2 == 1 { n + 1 } else { n.max(2) };
    let h = (b - a) / n as f64;
    let mut sum = f(a) + f(b);
    for i in 1..n {
        let w = if i % 2 == 1 { 4.0 } else { 2.0 };
        sum += w * f(a + i as f64 * h);
    }
    sum * h / 3.0
}

const QUAD_INTERVALS: usize = 2000;

/// Normalised width of a serpenoid with l = 1, k = 1 (3.25):
/// w_n(α) = ∫_0^1 cos(α cos 2πs) ds.
pub fn width_normalised(alpha_deg: f64) -> f64 {
    let a = alpha_deg.to_radians();
    simpson(|s| (a * (2.0 * PI * s).cos()).cos(), 0.0, 1.0, QUAD_INTERVALS)
}

/// Normalised height of a serpenoid with l = 1, k = 1 (3.24), **with the factor 2** the
/// printed equation omits (spec §9.1, decision 0003; only then is h ≈ 40 % of l at α = 120°):
/// h_n(α) = 2 ∫_0^{1/4} sin(α cos 2πs) ds.
pub fn height_normalised(alpha_deg: f64) -> f64 {
    let a = alpha_deg.to_radians();
    2.0 * simpson(|s| (a * (2.0 * PI * s).cos()).sin(), 0.0, 0.25, QUAD_INTERVALS)
}

/// A continuous serpenoid of length `length`, winding angle α and k undulations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Serpenoid {
    /// Winding angle α, deg (tangent angle at s = 0), valid in [0, 120].
    pub alpha_deg: f64,
    /// Number of undulations k ≥ 1 (continuous).
    pub k: f64,
    /// Total length l.
    pub length: f64,
}

impl Serpenoid {
    /// Width w = l · w_n(α) (3.27), independent of k.
    pub fn width(&self) -> f64 {
        self.length * width_normalised(self.alpha_deg)
    }

    /// Height h = (l/k) · h_n(α) (3.26).
    pub fn height(&self) -> f64 {
        self.length / self.k * height_normalised(self.alpha_deg)
    }

    /// Wavelength λ = w/k.
    pub fn wavelength(&self) -> f64 {
        self.width() / self.k
    }

    /// No-slip step per cycle of the 1D gait (4.1): Δx = (l − w)/k = l/k − λ.
    pub fn step(&self) -> f64 {
        (self.length - self.width()) / self.k
    }

    /// Tangent angle α_s = α cos(φ + 2πks/l) at arc length s and wave phase φ, deg.
    pub fn tangent_deg(&self, s: f64, phase_deg: f64) -> f64 {
        self.alpha_deg * (phase_deg.to_radians() + 2.0 * PI * self.k * s / self.length).cos()
    }
}

/// A discrete serpenoid: M segments' worth of joints at s = d_0 + (i−1)d (§3.6.3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiscreteSerpenoid {
    /// Winding angle α, deg.
    pub alpha_deg: f64,
    /// Undulations k.
    pub k: f64,
    /// Number of joints M.
    pub joints: usize,
    /// Distance d between joints.
    pub d: f64,
    /// Length d_0 of the tail arm.
    pub d0: f64,
}

/// Range of a dimension over a cycle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// Smallest value over the cycle.
    pub min: f64,
    /// Largest value over the cycle.
    pub max: f64,
}

/// Height and width of a discrete serpenoid over one cycle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Extent {
    /// Height (3.37) over the cycle.
    pub height: Range,
    /// Width (3.38) over the cycle.
    pub width: Range,
}

impl DiscreteSerpenoid {
    /// The serpenoid of a pitch-pitch chain of M modules of length L (module blocks:
    /// d = L, d_0 = L/2, Table 3.1).
    pub fn module_blocks(modules: usize, module_length: f64, alpha_deg: f64, k: f64) -> Self {
        DiscreteSerpenoid {
            alpha_deg,
            k,
            joints: modules,
            d: module_length,
            d0: module_length / 2.0,
        }
    }

    /// Total length l = M d.
    pub fn length(&self) -> f64 {
        self.joints as f64 * self.d
    }

    /// Segment angles α_i(φ) = α cos(φ + (2πk/M)(i−1)), i = 1 … M+1 (tail arm first), deg.
    pub fn segment_angles_deg(&self, phase_deg: f64) -> Vec<f64> {
        let m = self.joints as f64;
        (0..=self.joints)
            .map(|i| self.alpha_deg * (phase_deg.to_radians() + 2.0 * PI * self.k / m * i as f64).cos())
            .collect()
    }

    /// Points (x, y): the tail end at the origin, joints 1 … M (3.29–3.30), then the head end
    /// at d − d_0 beyond joint M.
    pub fn points(&self, phase_deg: f64) -> Vec<[f64; 2]> {
        let angles = self.segment_angles_deg(phase_deg);
        let mut pts = Vec::with_capacity(self.joints + 2);
        let mut p = [0.0, 0.0];
        pts.push(p);
        for (i, a) in angles.iter().enumerate() {
            let len = if i == 0 {
                self.d0
            } else if i == self.joints {
                self.d - self.d0
            } else {
                self.d
            };
            let a = a.to_radians();
            p = [p[0] + len * a.cos(), p[1] + len * a.sin()];
            pts.push(p);
        }
        pts
    }

    /// Bending angles (3.31–3.32): φ_i = 2α sin(πk/M) sin(φ + (2πk/M)((i−1) + d_0/d)), deg.
    pub fn bending_angles_deg(&self, phase_deg: f64) -> Vec<f64> {
        let m = self.joints as f64;
        let amp = 2.0 * self.alpha_deg * (PI * self.k / m).sin();
        (0..self.joints)
            .map(|i| amp * (phase_deg.to_radians() + 2.0 * PI * self.k / m * (i as f64 + self.d0 / self.d)).sin())
            .collect()
    }

    /// Height at phase φ (3.37): the spread of the joints' y.
    pub fn height(&self, phase_deg: f64) -> f64 {
        let pts = self.points(phase_deg);
        let ys = pts[1..=self.joints].iter().map(|p| p[1]);
        let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| (lo.min(y), hi.max(y)));
        hi - lo
    }

    /// Width at phase φ (3.38): x(M) + (d − d_0) cos α_{M+1}, the x of the head end.
    pub fn width(&self, phase_deg: f64) -> f64 {
        self.points(phase_deg)[self.joints + 1][0]
    }

    /// Height and width over a cycle sampled at `samples` phases.
    pub fn extent(&self, samples: usize) -> Extent {
        let mut e = Extent {
            height: Range {
                min: f64::INFINITY,
                max: f64::NEG_INFINITY,
            },
            width: Range {
                min: f64::INFINITY,
                max: f64::NEG_INFINITY,
            },
        };
        for n in 0..samples.max(1) {
            let phase = 360.0 * n as f64 / samples.max(1) as f64;
            let (h, w) = (self.height(phase), self.width(phase));
            e.height.min = e.height.min.min(h);
            e.height.max = e.height.max.max(h);
            e.width.min = e.width.min.min(w);
            e.width.max = e.width.max.max(w);
        }
        e
    }

    /// Wavelength λ = w/k over a cycle.
    pub fn wavelength(&self, samples: usize) -> Range {
        let w = self.extent(samples).width;
        Range {
            min: w.min / self.k,
            max: w.max / self.k,
        }
    }

    /// The discrete no-slip step l/k − λ over a cycle (4.1), valid for k ≥ 2, M_u ≥ 3.
    pub fn step(&self, samples: usize) -> Range {
        let lam = self.wavelength(samples);
        let lk = self.length() / self.k;
        Range {
            min: lk - lam.max,
            max: lk - lam.min,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [derived] table of spec §3.4 (Simpson), to 1e-3.
    #[test]
    fn normalised_dimensions_table() {
        let alphas = [
            0., 10., 20., 30., 40., 45., 50., 60., 64., 70., 80., 90., 100., 110., 120.,
        ];
        let wn = [
            1.000, 0.992, 0.970, 0.933, 0.882, 0.852, 0.819, 0.744, 0.712, 0.660, 0.569, 0.472, 0.372, 0.270, 0.170,
        ];
        let hn = [
            0.0, 0.055, 0.110, 0.162, 0.210, 0.233, 0.255, 0.295, 0.309, 0.328, 0.355, 0.376, 0.389, 0.395, 0.394,
        ];
        for ((a, w), h) in alphas.iter().zip(wn).zip(hn) {
            assert!(
                (width_normalised(*a) - w).abs() <= 1e-3,
                "w_n({a}) = {}",
                width_normalised(*a)
            );
            assert!(
                (height_normalised(*a) - h).abs() <= 1e-3,
                "h_n({a}) = {}",
                height_normalised(*a)
            );
        }
    }

    /// §6.5: maximum normalised height ≈ 40 % at (k, α) = (1, 120); normalised step table.
    #[test]
    fn continuous_statements() {
        let s = Serpenoid {
            alpha_deg: 120.0,
            k: 1.0,
            length: 1.0,
        };
        assert!((s.height() - 0.394).abs() < 1e-3);
        let table = [
            (2.0, [0.034, 0.128, 0.264, 0.415]),
            (3.0, [0.022, 0.085, 0.176, 0.277]),
            (4.0, [0.017, 0.064, 0.132, 0.208]),
        ];
        for (k, row) in table {
            for (alpha, want) in [30.0, 60.0, 90.0, 120.0].iter().zip(row) {
                let s = Serpenoid {
                    alpha_deg: *alpha,
                    k,
                    length: 1.0,
                };
                assert!((s.step() - want).abs() <= 1e-3, "k={k} α={alpha}: {}", s.step());
            }
        }
        // (k = 2, α = 64, l = 57.6 cm) → 8.31 cm (spec §6.3).
        let s = Serpenoid {
            alpha_deg: 64.0,
            k: 2.0,
            length: 57.6,
        };
        assert!((s.step() - 8.31).abs() < 0.01, "{}", s.step());
    }

    /// Table 4.3 working points 2 and 3 (8-module PP, L = 7.2 cm) with the [derived] check.
    #[test]
    fn table_4_3_working_points() {
        let p2 = DiscreteSerpenoid::module_blocks(8, 7.2, 64.0, 2.0);
        let e = p2.extent(720);
        assert!(
            (e.height.min - 6.5).abs() < 0.05 && (e.height.max - 10.2).abs() < 0.05,
            "{e:?}"
        );
        let lam = p2.wavelength(720);
        assert!(
            (lam.min - 20.3).abs() < 0.05 && (lam.max - 20.7).abs() < 0.05,
            "{lam:?}"
        );
        let step = p2.step(720);
        // 8.1–8.5 cm; the thesis prints 8.4.
        assert!(
            (step.min - 8.1).abs() < 0.05 && (step.max - 8.5).abs() < 0.05,
            "{step:?}"
        );
        assert!(step.min <= 8.4 && 8.4 <= step.max);

        let p3 = DiscreteSerpenoid::module_blocks(8, 7.2, 28.8, 2.0);
        let e = p3.extent(720);
        assert!(
            (e.height.min - 3.5).abs() < 0.05 && (e.height.max - 5.0).abs() < 0.05,
            "{e:?}"
        );
        let lam = p3.wavelength(720);
        assert!(
            (lam.min - 27.0).abs() < 0.05 && (lam.max - 27.0).abs() < 0.05,
            "{lam:?}"
        );
        let step = p3.step(720);
        assert!(
            (step.min - 1.8).abs() < 0.05 && (step.max - 1.8).abs() < 0.05,
            "{step:?}"
        );

        let p1 = DiscreteSerpenoid::module_blocks(8, 7.2, 117.0, 1.0);
        let e = p1.extent(720);
        assert!(
            (e.height.min - 20.7).abs() < 0.05 && (e.height.max - 23.8).abs() < 0.05,
            "{e:?}"
        );
    }

    #[test]
    fn bending_angles_are_segment_angle_differences() {
        // For module blocks (d_0/d = 1/2), (3.31) equals α_i − α_{i+1}.
        let s = DiscreteSerpenoid::module_blocks(8, 1.0, 50.0, 2.0);
        for phase in [0.0, 33.0, 90.0, 250.0] {
            let seg = s.segment_angles_deg(phase);
            let bend = s.bending_angles_deg(phase);
            for i in 0..8 {
                assert!((bend[i] - (seg[i] - seg[i + 1])).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn simpson_is_exact_for_cubics() {
        let v = simpson(|x| x * x * x - 2.0 * x, 0.0, 2.0, 4);
        assert!((v - 0.0).abs() < 1e-12);
    }
}
