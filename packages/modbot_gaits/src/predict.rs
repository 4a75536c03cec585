//! The source's closed-form predictors (spec §6.2): per-cycle steps, turning radius and
//! rotation angles of the gaits, as test oracles for the simulator and edge costs for the
//! planner. Angles in degrees at the interface unless a name says otherwise; lengths in
//! any unit (results in the same unit).

use crate::serpenoid::width_normalised;
use crate::shape::pp_shape;

/// 1D no-slip step of a wired PP chain (4.1): Δx = (l/k)(1 − w_n(α)), with (α, k) from (A, Δφ).
pub fn pp_step_wired(amplitude_deg: f64, phase_diff_deg: f64, modules: usize, module_length: f64) -> f64 {
    let (alpha, k) = pp_shape(amplitude_deg, phase_diff_deg, modules);
    let l = modules as f64 * module_length;
    l / k * (1.0 - width_normalised(alpha))
}

/// 1D step of a hexahedral PP chain (4.9): Δx = (l + M H sin(A/2) − w)/k.
pub fn pp_step_hexahedral(
    amplitude_deg: f64,
    phase_diff_deg: f64,
    modules: usize,
    module_length: f64,
    module_height: f64,
) -> f64 {
    let (alpha, k) = pp_shape(amplitude_deg, phase_diff_deg, modules);
    let l = modules as f64 * module_length;
    let c = modules as f64 * module_height * (amplitude_deg / 2.0).to_radians().sin();
    (l + c - l * width_normalised(alpha)) / k
}

/// Turning radius of the PY circular path (5.1): |r| = w(α_v)/α_h (α_h in rad), where
/// w = l w_n(α_v), α_v = A_v/(2 sin(Δφ_v/2)) and α_h = O_h M/2.
pub fn turning_radius(
    amplitude_v_deg: f64,
    phase_diff_v_deg: f64,
    offset_h_deg: f64,
    modules: usize,
    module_length: f64,
) -> f64 {
    let alpha_v = amplitude_v_deg / (2.0 * (phase_diff_v_deg.abs() / 2.0).to_radians().sin());
    let alpha_h = (offset_h_deg.abs() * modules as f64 / 2.0).to_radians();
    modules as f64 * module_length * width_normalised(alpha_v) / alpha_h
}

/// Rolling step of a square-section chain (5.18): Δy = (8H/α) sin(α/2), α the arc angle.
pub fn rolling_step(arc_deg: f64, section: f64) -> f64 {
    let a = arc_deg.to_radians();
    if a == 0.0 {
        4.0 * section
    } else {
        8.0 * section / a * (a / 2.0).sin()
    }
}

/// No-slip sidewinding step (5.25–5.27) for winding α and k undulations of a chain of
/// length l: (Δx, Δy, |Δr|, γ) with γ the direction from the y axis, deg.
pub fn sidewinding_step(alpha_deg: f64, k: f64, length: f64) -> (f64, f64, f64, f64) {
    let a = alpha_deg.to_radians();
    let lam = width_normalised(alpha_deg);
    let (dx, dy) = (length / k * (a.cos() - lam), length / k * a.sin());
    let gamma = -((a.cos() - lam) / a.sin()).atan().to_degrees();
    (dx, dy, (dx * dx + dy * dy).sqrt(), gamma)
}

/// Angular step of the PYP rotation (6.37), |γ| in deg per cycle; depends only on A_h.
pub fn pyp_rotation(amplitude_h_deg: f64) -> f64 {
    let a = amplitude_h_deg.to_radians();
    let g = 2.0 * (a.sin() / (1.5 + a.cos())).atan() - 2.0 * (1.5 * a.sin() / (1.0 + 1.5 * a.cos())).atan();
    g.to_degrees().abs()
}

/// Lateral-shift step of the PYP (6.35): Δx = (3L/2) sin(A_h/2).
pub fn pyp_lateral_step(amplitude_h_deg: f64, module_length: f64) -> f64 {
    1.5 * module_length * (amplitude_h_deg / 2.0).to_radians().sin()
}

/// Step of the minimal PP robot by the corrected (6.17) (spec §9.2, decision 0003):
/// Δy = L (3/2 − √(5/4 + cos(A sin φ_12))), with φ_12 the stage-1/2 boundary phase.
pub fn pp_minimal_step(amplitude_deg: f64, phase_diff_deg: f64, module_length: f64) -> f64 {
    let a = amplitude_deg.to_radians();
    let d = phase_diff_deg.to_radians();
    let a0 = (a.sin() / (0.5 + a.cos())).atan();
    // atan2 avoids the branch jump of the printed atan near Δφ ≈ 109° (spec §9.3).
    let phi12 = -(d.sin()).atan2((1.0 - a0 / a) + d.cos());
    module_length * (1.5 - (1.25 + (a * phi12.sin()).cos()).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table 7.4 cross-check (spec §6.8): M_u = 4 (k = 2, Δφ = 90), α = 60 → A = 84.9:
    /// wired ≈ 7.3 cm, hexahedral ≈ 21.3 cm.
    #[test]
    fn pp_steps_cross_check() {
        let a = crate::shape::pp_amplitude(60.0, 2.0, 8);
        // "≈ 7.3": the formula gives 7.37.
        assert!((pp_step_wired(a, 90.0, 8, 7.2) - 7.3).abs() < 0.1);
        let hexa = pp_step_hexahedral(a, 90.0, 8, 7.2, 5.2);
        assert!((hexa - 21.3).abs() < 0.15, "{hexa}"); // "≈ 21.3": the formula gives 21.40
        // Continuous (k = 2, α = 64, l = 57.6) = 8.31 cm (§6.3) through the wired predictor.
        let a = crate::shape::pp_amplitude(64.0, 2.0, 8);
        assert!((pp_step_wired(a, 90.0, 8, 7.2) - 8.31).abs() < 0.01);
    }

    /// Table 5.7/5.8 [derived] radii with l = 57.6: 36.3, 18.1, 9.1 cm.
    #[test]
    fn turning_radii() {
        for (o_h, r) in [(22.5, 36.3), (45.0, 18.1), (90.0, 9.1)] {
            let got = turning_radius(20.0, 120.0, o_h, 8, 7.2);
            assert!((got - r).abs() < 0.1, "O_h {o_h}: {got}");
        }
    }

    /// Table 5.9/5.10 [derived] rolling steps, H = 5.2 cm.
    #[test]
    fn rolling_steps() {
        for (alpha, step) in [(120.0, 17.2), (180.0, 13.2), (240.0, 8.6), (360.0, 0.0), (32.0, 20.5)] {
            assert!(
                (rolling_step(alpha, 5.2) - step).abs() < 0.05,
                "α {alpha}: {}",
                rolling_step(alpha, 5.2)
            );
        }
    }

    /// §6.6 and Exp. 19 [derived] sidewinding theory.
    #[test]
    fn sidewinding_steps() {
        // γ: the digest prints 7.2; the formula gives 7.15 (0.1° tolerance for its rounding).
        let (dx, dy, r, g) = sidewinding_step(28.3, 1.0, 57.6);
        assert!((r - 27.5).abs() < 0.05 && (g - 7.2).abs() < 0.1, "{r} {g}");
        assert!((dx + 3.4).abs() < 0.05 && (dy - 27.3).abs() < 0.05, "{dx} {dy}");
        let (_, _, r, g) = sidewinding_step(21.6, 1.5, 57.6);
        assert!((r - 14.2).abs() < 0.05 && (g - 5.4).abs() < 0.05, "{r} {g}");
        let (_, _, r, g) = sidewinding_step(52.3, 2.0, 230.4);
        assert!((r - 93.8).abs() < 0.05 && (g - 13.6).abs() < 0.05, "{r} {g}");
        let (_, _, r, g) = sidewinding_step(51.2, 1.0, 230.4);
        assert!((r - 184.5).abs() < 0.05 && (g - 13.3).abs() < 0.1, "{r} {g}");
    }

    /// §6.7 [derived] PYP predictions with L = 7.2 cm (one decimal).
    #[test]
    fn pyp_predictions() {
        let rot = [
            (10.0, 4.0),
            (20.0, 8.1),
            (30.0, 12.3),
            (40.0, 16.7),
            (50.0, 21.3),
            (60.0, 26.4),
            (80.0, 38.1),
            (90.0, 45.2),
        ];
        for (a, g) in rot {
            assert!((pyp_rotation(a) - g).abs() <= 0.1, "A_h {a}: {}", pyp_rotation(a));
        }
        let side = [
            (10.0, 0.94),
            (20.0, 1.88),
            (30.0, 2.80),
            (40.0, 3.69),
            (50.0, 4.56),
            (60.0, 5.40),
        ];
        for (a, s) in side {
            assert!(
                (pyp_lateral_step(a, 7.2) - s).abs() <= 0.005 + 1e-9,
                "A_h {a}: {}",
                pyp_lateral_step(a, 7.2)
            );
        }
    }

    /// §6.7 [derived] PP-minimal step table, Δy/L (3 decimals), and its maximum near 107–109.
    #[test]
    fn pp_minimal_table() {
        let dphis = [90.0, 100.0, 107.0, 109.0, 110.0, 120.0, 135.0, 150.0];
        let rows = [
            (45.0, [0.092, 0.099, 0.101, 0.101, 0.101, 0.097, 0.079, 0.047]),
            (60.0, [0.161, 0.173, 0.177, 0.177, 0.177, 0.170, 0.137, 0.082]),
            (90.0, [0.354, 0.377, 0.382, 0.382, 0.381, 0.363, 0.291, 0.173]),
        ];
        for (a, row) in rows {
            for (d, want) in dphis.iter().zip(row) {
                let got = pp_minimal_step(a, *d, 1.0);
                assert!((got - want).abs() <= 0.0005 + 1e-9, "A {a} Δφ {d}: {got}");
            }
        }
        let best = (600..=1700)
            .map(|d| d as f64 / 10.0)
            .max_by(|x, y| pp_minimal_step(90.0, *x, 1.0).total_cmp(&pp_minimal_step(90.0, *y, 1.0)));
        let best = best.unwrap();
        assert!((105.0..=110.0).contains(&best), "{best}");
        // 7.2 cm modules at A = 90: ≈ 2.75 cm per cycle.
        assert!((pp_minimal_step(90.0, 108.0, 7.2) - 2.75).abs() < 0.01);
    }
}
