//! Shape ↔ control mappings, servo/geometry limits, stability and minimum module counts
//! (spec §3.5–§3.7, §4, §5.1, §5.3, §6.4). Angles in degrees.

use std::f64::consts::PI;

fn sin_deg(x: f64) -> f64 {
    x.to_radians().sin()
}

/// PP (3.39): A = 2α sin(πk/M).
pub fn pp_amplitude(alpha_deg: f64, k: f64, modules: usize) -> f64 {
    2.0 * alpha_deg * (PI * k / modules as f64).sin()
}

/// PP (3.40): |Δφ| = 360k/M.
pub fn pp_phase_diff(k: f64, modules: usize) -> f64 {
    360.0 * k / modules as f64
}

/// PP inverse: (A, Δφ) → (α, k), with k = M|Δφ|/360 and α = A / (2 sin(|Δφ|/2)).
/// α is infinite at Δφ = 0 (in-phase generators form no serpenoid).
pub fn pp_shape(amplitude_deg: f64, phase_diff_deg: f64, modules: usize) -> (f64, f64) {
    let k = modules as f64 * phase_diff_deg.abs() / 360.0;
    (amplitude_deg / (2.0 * sin_deg(phase_diff_deg.abs() / 2.0)), k)
}

/// PY, per group (3.45–3.46), M = total modules: A = 2α sin(2πk/M).
pub fn py_amplitude(alpha_deg: f64, k: f64, modules: usize) -> f64 {
    2.0 * alpha_deg * (2.0 * PI * k / modules as f64).sin()
}

/// PY, per group: Δφ = 720k/M.
pub fn py_phase_diff(k: f64, modules: usize) -> f64 {
    720.0 * k / modules as f64
}

/// PY inverse, per group: (A, Δφ) → (α, k), k = M|Δφ|/720, α = A / (2 sin(|Δφ|/2)).
pub fn py_shape(amplitude_deg: f64, phase_diff_deg: f64, modules: usize) -> (f64, f64) {
    let k = modules as f64 * phase_diff_deg.abs() / 720.0;
    (amplitude_deg / (2.0 * sin_deg(phase_diff_deg.abs() / 2.0)), k)
}

/// Circular wave on a PP chain (3.48): A = α/M.
pub fn pp_circular_amplitude(alpha_deg: f64, modules: usize) -> f64 {
    alpha_deg / modules as f64
}

/// Circular wave on one group of a PY chain (5.4, 5.22): A = 2α/M. The turning offset
/// O_h = 2α_h/M is the same expression applied to a static arc.
pub fn py_circular_amplitude(alpha_deg: f64, modules: usize) -> f64 {
    2.0 * alpha_deg / modules as f64
}

/// Modules per undulation M_u = M/k (4.4).
pub fn modules_per_undulation(modules: f64, k: f64) -> f64 {
    modules / k
}

/// M_uL = π / asin(3/8) ≈ 8.17: below it the servo range limits the shape, above it
/// self-collision does (4.6, 4.7).
pub fn mu_limit() -> f64 {
    PI / (3.0f64 / 8.0).asin()
}

/// Δφ_L = 360/M_uL ≈ 44.05° (the thesis rounds to 43.9 ≈ 44).
pub fn phase_diff_limit() -> f64 {
    360.0 / mu_limit()
}

/// Largest winding angle for M_u modules per undulation (4.6):
/// 45/sin(π/M_u) while M_u ≤ M_uL, else 120.
pub fn alpha_max(mu: f64) -> f64 {
    if mu <= mu_limit() {
        45.0 / (PI / mu).sin()
    } else {
        120.0
    }
}

/// Largest amplitude for M_u modules per undulation (4.7): 90 while M_u ≤ M_uL, else
/// 240 sin(π/M_u).
pub fn amplitude_max(mu: f64) -> f64 {
    if mu <= mu_limit() {
        90.0
    } else {
        240.0 * (PI / mu).sin()
    }
}

/// Largest amplitude for a phase difference (4.11): 240 sin(|Δφ|/2) below Δφ_L, else 90.
pub fn amplitude_max_for_phase_diff(phase_diff_deg: f64) -> f64 {
    let d = phase_diff_deg.abs();
    if d < phase_diff_limit() {
        240.0 * sin_deg(d / 2.0)
    } else {
        90.0
    }
}

/// Largest amplitude with all generators in phase (Δφ = 0) before head and tail collide:
/// 90 for M ≤ 4, else 360/M (§5.1).
pub fn in_phase_amplitude_max(modules: usize) -> f64 {
    if modules <= 4 { 90.0 } else { 360.0 / modules as f64 }
}

/// Largest arc angle of the horizontal circular curve (5.2): 45M for M < 8, else 360.
pub fn alpha_h_max(modules: usize) -> f64 {
    if modules < 8 { 45.0 * modules as f64 } else { 360.0 }
}

/// Largest horizontal amplitude of a circular wave (5.3): 90 for M ≤ 8, else 720/M.
pub fn amplitude_h_max(modules: usize) -> f64 {
    if modules <= 8 { 90.0 } else { 720.0 / modules as f64 }
}

/// Shortest period a servo of `max_speed_deg_s` can follow for amplitude A:
/// the peak speed 2πA/T must not exceed it, so T ≥ 2πA/ω_max (s).
pub fn min_period(amplitude_deg: f64, max_speed_deg_s: f64) -> f64 {
    2.0 * PI * amplitude_deg.abs() / max_speed_deg_s
}

/// Rolling threshold of a PY chain with square section H and length l (5.21), deg:
/// α_min ≈ (120/π)(√((l/H)² + 18) − l/H). Below it the chain flaps instead of rolling.
pub fn rolling_alpha_min(length: f64, section: f64) -> f64 {
    let r = length / section;
    120.0 / PI * ((r * r + 18.0).sqrt() - r)
}

/// The exact root of the rolling condition f(α) = (2l/α²) sin(α/2) − (l/α + H/2) cos(α/2) = 0
/// (5.19–5.20), deg, found by bisection on (0, π].
pub fn rolling_alpha_min_exact(length: f64, section: f64) -> f64 {
    let f = |a: f64| 2.0 * length / (a * a) * (a / 2.0).sin() - (length / a + section / 2.0) * (a / 2.0).cos();
    let (mut lo, mut hi) = (1e-6, PI);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 { hi = mid } else { lo = mid }
    }
    (0.5 * (lo + hi)).to_degrees()
}

/// Amplitude limits of the PYP's lateral rolling for L × W × H modules (6.31, 6.32), deg:
/// (A_hL, A_vL) = (2 atan(2W/(3L)), atan(6H/(5L))). It rolls above A_min = max of the two and
/// shifts sideways (flaps) below A_hL.
pub fn pyp_roll_limits(length: f64, width: f64, height: f64) -> (f64, f64) {
    (
        2.0 * (2.0 * width / (3.0 * length)).atan().to_degrees(),
        (6.0 * height / (5.0 * length)).atan().to_degrees(),
    )
}

/// 1D static stability (principle 5): k ≥ 2 and no anti-phase (|Δφ| ≠ 180), i.e.
/// 720/M ≤ |Δφ| < 180 for a PP chain of M modules.
pub fn pp_statically_stable(phase_diff_deg: f64, modules: usize) -> bool {
    let d = phase_diff_deg.abs();
    d >= 720.0 / modules as f64 - 1e-9 && d < 180.0
}

/// PY straight line stability: k_v ≥ 2 over the vertical group, |Δφ_v| ≥ 1440/M, |Δφ_v| < 180.
pub fn py_straight_statically_stable(phase_diff_v_deg: f64, modules: usize) -> bool {
    let d = phase_diff_v_deg.abs();
    d >= 1440.0 / modules as f64 - 1e-9 && d < 180.0
}

/// PY circular path stability: k_v ≥ 3 (§5.3), |Δφ_v| ≥ 2160/M, |Δφ_v| < 180.
pub fn py_turning_statically_stable(phase_diff_v_deg: f64, modules: usize) -> bool {
    let d = phase_diff_v_deg.abs();
    d >= 2160.0 / modules as f64 - 1e-9 && d < 180.0
}

/// The gaits of the source's minimum-module table (spec §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MinimumFor {
    /// PP straight line, statically stable (k ≥ 2, Δφ ≠ 180).
    PpStraightStable,
    /// PP straight line of any kind (non-uniform allowed).
    PpStraightAny,
    /// PY straight line, statically stable (k_v ≥ 2).
    PyStraightStable,
    /// PY circular path, statically stable (k_v ≥ 3).
    PyTurningStable,
    /// Sidewinding, normal or inclined.
    Sideways,
    /// Flapping / rowing.
    Flapping,
    /// Rolling.
    Rolling,
    /// Rotation "S" with k = 1.
    RotationS,
    /// Rotation "U".
    RotationU,
}

/// Smallest module count for a gait (decision record 0008), derived from the stability and wave conditions where
/// the source derives it, and taken from its minimal-configuration analysis otherwise.
pub fn minimum_modules(g: MinimumFor) -> usize {
    // Smallest M (restricted to even M for PY chains) satisfying a condition.
    let first = |even: bool, ok: &dyn Fn(f64) -> bool| -> usize {
        (2..1000)
            .filter(|m| !even || m % 2 == 0)
            .find(|&m| ok(m as f64))
            .unwrap_or(usize::MAX)
    };
    match g {
        // k ≥ 2 needs |Δφ| ≥ 720/M, and a travelling wave needs |Δφ| < 180.
        MinimumFor::PpStraightStable => first(false, &|m| 720.0 / m < 180.0),
        // One module cannot move; the minimal PP (2) moves non-uniformly (Ch. 6).
        MinimumFor::PpStraightAny => 2,
        // k_v ≥ 2 over M/2 verticals: |Δφ_v| = 720 k_v / M ≥ 1440/M, below 180.
        MinimumFor::PyStraightStable => first(true, &|m| 1440.0 / m < 180.0),
        // k_v ≥ 3: 2160/M < 180 (12 from the maths, and Δφ_v = 180 does not move).
        MinimumFor::PyTurningStable => first(true, &|m| 2160.0 / m < 180.0),
        // k ≥ 1 on the horizontal group with a travelling wave: 720/M < 180, M even.
        MinimumFor::Sideways => first(true, &|m| 720.0 / m < 180.0),
        // §5.7.10.3: 4 modules (the PYP, 3, also flaps as its lateral shift).
        MinimumFor::Flapping => 4,
        // §5.6.7.3: the PYP rolls.
        MinimumFor::Rolling => 3,
        // Δφ_v = 1440k/M ≤ 180 with k = 1.
        MinimumFor::RotationS => first(true, &|m| 1440.0 / m <= 180.0),
        // §5.8.8.2: the PYP rotates in "U".
        MinimumFor::RotationU => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checklist_test_vectors() {
        // Spec §8 item 6: M = 16, k = 2, A = 45 → α = 58.8; M = 8, k = 2, A = 60 → α = 42.4;
        // M = 8, k = 3, A = 60 → α = 32.5, Δφ = 135. (All three are PP vectors: with the PY
        // mapping the first would give α = 31.8.)
        let (a, k) = pp_shape(45.0, pp_phase_diff(2.0, 16), 16);
        assert!((a - 58.8).abs() < 0.05 && (k - 2.0).abs() < 1e-12, "{a}");
        let (a, _) = pp_shape(60.0, pp_phase_diff(2.0, 8), 8);
        assert!((a - 42.4).abs() < 0.05, "{a}");
        let dphi = pp_phase_diff(3.0, 8);
        let (a, k) = pp_shape(60.0, dphi, 8);
        assert!(
            (a - 32.5).abs() < 0.05 && (dphi - 135.0).abs() < 1e-12 && (k - 3.0).abs() < 1e-12,
            "{a}"
        );
        // Table 4.3 points: (M_u, α) = (4, 64) ↔ (Δφ, A) = (90, 90); (4, 28.8) ↔ (90, 40.7); (8, 117) ↔ (45, 90).
        assert!((pp_amplitude(64.0, 2.0, 8) - 90.5).abs() < 0.1);
        assert!((pp_amplitude(28.8, 2.0, 8) - 40.7).abs() < 0.05);
        assert!((pp_amplitude(117.0, 1.0, 8) - 89.5).abs() < 0.1);
        assert_eq!(pp_phase_diff(2.0, 8), 90.0);
        // Table 5.5 (PY, M = 8): α_v = 14.1, k_v = 1 ↔ A_v = 20, Δφ_v = 90.
        assert!((py_amplitude(14.1, 1.0, 8) - 20.0).abs() < 0.1);
        assert_eq!(py_phase_diff(1.0, 8), 90.0);
        // Rolling A = 2α/M: Table 5.9 A: α = 120, M = 8 → 30; turning O_h = 2α_h/M: 90 → 22.5.
        assert_eq!(py_circular_amplitude(120.0, 8), 30.0);
        assert_eq!(py_circular_amplitude(90.0, 8), 22.5);
        assert_eq!(pp_circular_amplitude(90.0, 8), 11.25);
    }

    #[test]
    fn round_trips() {
        for m in [2usize, 5, 8, 16, 32] {
            for k in [0.5, 1.0, 1.5, 2.0] {
                for alpha in [10.0, 45.0, 90.0] {
                    let (a2, k2) = pp_shape(pp_amplitude(alpha, k, m), pp_phase_diff(k, m), m);
                    if pp_phase_diff(k, m) < 360.0 {
                        assert!((a2 - alpha).abs() < 1e-9 && (k2 - k).abs() < 1e-9);
                    }
                    let (a3, k3) = py_shape(py_amplitude(alpha, k, m), py_phase_diff(k, m), m);
                    if py_phase_diff(k, m) < 360.0 {
                        assert!((a3 - alpha).abs() < 1e-9 && (k3 - k).abs() < 1e-9);
                    }
                }
            }
        }
    }

    /// T_min table of spec §3.1 (2 decimals).
    #[test]
    fn t_min_table() {
        for (a, t) in [
            (10.0, 0.24),
            (20.0, 0.48),
            (30.0, 0.72),
            (45.0, 1.09),
            (60.0, 1.45),
            (90.0, 2.17),
        ] {
            assert!(
                (min_period(a, 260.0) - t).abs() <= 0.005 + 1e-9,
                "A={a}: {}",
                min_period(a, 260.0)
            );
        }
    }

    /// α_max / A_max table of spec §6.4 (1 decimal).
    #[test]
    fn limits_table() {
        let mus = [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 12.0];
        let amax = [45.0, 52.0, 63.6, 76.6, 90.0, 103.7, 117.6, 120.0, 120.0, 120.0];
        let aa = [90.0, 90.0, 90.0, 90.0, 90.0, 90.0, 90.0, 82.1, 74.2, 62.1];
        for ((mu, al), a) in mus.iter().zip(amax).zip(aa) {
            assert!(
                (alpha_max(*mu) - al).abs() <= 0.05 + 1e-9,
                "α_max({mu}) = {}",
                alpha_max(*mu)
            );
            assert!(
                (amplitude_max(*mu) - a).abs() <= 0.05 + 1e-9,
                "A_max({mu}) = {}",
                amplitude_max(*mu)
            );
        }
        assert!((mu_limit() - 8.173).abs() < 5e-4);
        assert!((alpha_max(mu_limit()) - 120.0).abs() < 1e-9);
        assert!((amplitude_max(mu_limit() + 1e-9) - 90.0).abs() < 1e-6);
        assert!((phase_diff_limit() - 44.05).abs() < 0.005);
        assert!((amplitude_max_for_phase_diff(40.0) - 240.0 * (20.0f64).to_radians().sin()).abs() < 1e-12);
        assert_eq!(amplitude_max_for_phase_diff(90.0), 90.0);
        assert_eq!(in_phase_amplitude_max(4), 90.0);
        assert_eq!(in_phase_amplitude_max(8), 45.0);
        assert_eq!((alpha_h_max(4), alpha_h_max(8)), (180.0, 360.0));
        assert_eq!((amplitude_h_max(8), amplitude_h_max(16)), (90.0, 45.0));
    }

    /// The minimum-module table of spec §4.
    #[test]
    fn minimum_module_table() {
        use MinimumFor::*;
        let table = [
            (PpStraightStable, 5),
            (PpStraightAny, 2),
            (PyStraightStable, 10),
            (PyTurningStable, 14),
            (Sideways, 6),
            (Flapping, 4),
            (Rolling, 3),
            (RotationS, 8),
            (RotationU, 3),
        ];
        for (g, m) in table {
            assert_eq!(minimum_modules(g), m, "{g:?}");
        }
    }

    #[test]
    fn stability() {
        // k ≥ 2 ⇔ |Δφ| ≥ 720/M, not at 180 (Table 4.2: M = 8 → Δφ_s = 90).
        assert!(pp_statically_stable(90.0, 8));
        assert!(pp_statically_stable(-110.0, 8));
        assert!(!pp_statically_stable(45.0, 8));
        assert!(!pp_statically_stable(180.0, 8));
        assert!(!pp_statically_stable(170.0, 4));
        assert!(py_straight_statically_stable(144.0, 10));
        assert!(!py_straight_statically_stable(135.0, 8));
        assert!(py_turning_statically_stable(155.0, 14));
        assert!(py_turning_statically_stable(120.0, 18)); // App. D: 18 modules, Δφ_v = 120 → k_v = 3
        assert!(!py_turning_statically_stable(60.0, 18)); // k_v = 1.5 may overturn
    }

    /// Rolling threshold (Table 5.9/5.10: α_min = 30 for the Hypercube, exact root 30.17,
    /// approximation 29.97; spec §8: M = 20 → 12.3) and the PYP limits of Table 6.2.
    #[test]
    fn rolling_thresholds() {
        let (l, h) = (57.6, 5.2);
        assert!(
            (rolling_alpha_min(l, h) - 29.97).abs() < 0.01,
            "{}",
            rolling_alpha_min(l, h)
        );
        assert!(
            (rolling_alpha_min_exact(l, h) - 30.17).abs() < 0.01,
            "{}",
            rolling_alpha_min_exact(l, h)
        );
        assert!((rolling_alpha_min(20.0 * 7.2, 5.2) - 12.3).abs() < 0.05);
        let (ahl, avl) = pyp_roll_limits(7.2, 5.2, 5.2);
        assert!(
            (ahl - 51.42).abs() < 0.005 && (avl - 40.91).abs() < 0.005,
            "{ahl} {avl}"
        );
    }
}
