//! CMA-ES, (μ/μ_w, λ) with rank-one and rank-μ updates and cumulative step-size adaptation,
//! with Hansen's default strategy parameters ("The CMA Evolution Strategy: A Tutorial",
//! 2016, Table 1). It searches the unit box that the genes' bounds map onto; a sample
//! outside the box is redrawn (up to 10 times) and then clamped, and the update uses the
//! point that was evaluated. Written here, not taken from a crate: decision record 0028.

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use crate::error::{AppError, Result};

/// The CMA-ES settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CmaesSettings {
    /// λ, samples per generation (`None`: 4 + ⌊3 ln n⌋).
    pub population: Option<usize>,
    /// Initial step size σ0, in units of each gene's range.
    pub sigma0: f64,
}

impl Default for CmaesSettings {
    fn default() -> Self {
        CmaesSettings {
            population: None,
            sigma0: 0.3,
        }
    }
}

impl CmaesSettings {
    /// Checks the settings, naming the bad one.
    pub fn check(&self) -> Result<()> {
        if let Some(l) = self.population
            && !(2..=100_000).contains(&l)
        {
            return Err(AppError::BadInput(format!(
                "CMA-ES setting `population` = {l}: must be 2 to 100000"
            )));
        }
        if !(self.sigma0.is_finite() && self.sigma0 > 0.0 && self.sigma0 <= 1.0) {
            return Err(AppError::BadInput(format!(
                "CMA-ES setting `sigma0` = {}: must be within (0, 1]",
                self.sigma0
            )));
        }
        Ok(())
    }

    /// λ for n dimensions.
    pub fn lambda(&self, n: usize) -> usize {
        self.population
            .unwrap_or(4 + (3.0 * (n.max(1) as f64).ln()).floor() as usize)
    }
}

/// The strategy's state between generations (what a checkpoint keeps; the eigen
/// decomposition is recomputed from C).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cmaes {
    /// Settings.
    pub settings: CmaesSettings,
    /// Mean, unit box.
    pub mean: Vec<f64>,
    /// Step size.
    pub sigma: f64,
    /// Covariance, row major n × n.
    pub cov: Vec<f64>,
    /// Evolution path of σ.
    pub path_sigma: Vec<f64>,
    /// Evolution path of C.
    pub path_c: Vec<f64>,
    /// Generations told.
    pub generation: usize,
    /// The samples waiting for their fitness.
    pending: Vec<Vec<f64>>,
}

struct Params {
    lambda: usize,
    weights: Vec<f64>,
    mu_eff: f64,
    c_sigma: f64,
    d_sigma: f64,
    c_c: f64,
    c_1: f64,
    c_mu: f64,
    chi_n: f64,
}

impl Cmaes {
    /// A strategy in `n` dimensions starting at the middle of the box.
    pub fn new(settings: CmaesSettings, n: usize) -> Cmaes {
        let mut cov = vec![0.0; n * n];
        for i in 0..n {
            cov[i * n + i] = 1.0;
        }
        Cmaes {
            settings,
            mean: vec![0.5; n],
            sigma: settings.sigma0,
            cov,
            path_sigma: vec![0.0; n],
            path_c: vec![0.0; n],
            generation: 0,
            pending: Vec::new(),
        }
    }

    fn n(&self) -> usize {
        self.mean.len()
    }

    fn params(&self) -> Params {
        let n = self.n() as f64;
        let lambda = self.settings.lambda(self.n());
        let mu = lambda / 2;
        let raw: Vec<f64> = (0..mu)
            .map(|i| ((lambda as f64 + 1.0) / 2.0).ln() - ((i + 1) as f64).ln())
            .collect();
        let sum: f64 = raw.iter().sum();
        let weights: Vec<f64> = raw.iter().map(|w| w / sum).collect();
        let mu_eff = 1.0 / weights.iter().map(|w| w * w).sum::<f64>();
        let c_sigma = (mu_eff + 2.0) / (n + mu_eff + 5.0);
        let d_sigma = 1.0 + 2.0 * (((mu_eff - 1.0) / (n + 1.0)).sqrt() - 1.0).max(0.0) + c_sigma;
        let c_c = (4.0 + mu_eff / n) / (n + 4.0 + 2.0 * mu_eff / n);
        let c_1 = 2.0 / ((n + 1.3).powi(2) + mu_eff);
        let c_mu = (1.0 - c_1).min(2.0 * (mu_eff - 2.0 + 1.0 / mu_eff) / ((n + 2.0).powi(2) + mu_eff));
        let chi_n = n.sqrt() * (1.0 - 1.0 / (4.0 * n) + 1.0 / (21.0 * n * n));
        Params {
            lambda,
            weights,
            mu_eff,
            c_sigma,
            d_sigma,
            c_c,
            c_1,
            c_mu,
            chi_n,
        }
    }

    /// (B, D): C = B diag(D²) Bᵀ.
    fn eigen(&self) -> (DMatrix<f64>, DVector<f64>) {
        let n = self.n();
        let c = DMatrix::from_row_slice(n, n, &self.cov);
        let c = (&c + c.transpose()) * 0.5;
        let e = SymmetricEigen::new(c);
        let d = e.eigenvalues.map(|v| v.max(1e-20).sqrt());
        (e.eigenvectors, d)
    }

    /// λ samples of N(m, σ² C) in the unit box.
    pub fn ask(&mut self, rng: &mut ChaCha8Rng) -> Vec<Vec<f64>> {
        let n = self.n();
        let p = self.params();
        let (b, d) = self.eigen();
        let m = DVector::from_column_slice(&self.mean);
        let mut out = Vec::with_capacity(p.lambda);
        for _ in 0..p.lambda {
            let mut x = DVector::zeros(n);
            for attempt in 0..=10 {
                let z = DVector::from_fn(n, |_, _| StandardNormal.sample(rng));
                x = &m + (&b * d.component_mul(&z)) * self.sigma;
                if x.iter().all(|v| (0.0..=1.0).contains(v)) || attempt == 10 {
                    break;
                }
            }
            out.push(x.iter().map(|v| v.clamp(0.0, 1.0)).collect());
        }
        self.pending = out.clone();
        out
    }

    /// Takes the fitness (higher is better; −∞ for a sample that could not run) of the
    /// last [`Cmaes::ask`]'s samples and updates mean, paths, C and σ.
    pub fn tell(&mut self, fitness: &[f64]) {
        let n = self.n();
        let p = self.params();
        let xs = std::mem::take(&mut self.pending);
        let mut order: Vec<usize> = (0..xs.len()).collect();
        order.sort_by(|&a, &b| fitness[b].total_cmp(&fitness[a]).then(a.cmp(&b)));
        let old = DVector::from_column_slice(&self.mean);
        let ys: Vec<DVector<f64>> = order
            .iter()
            .take(p.weights.len())
            .map(|&i| (DVector::from_column_slice(&xs[i]) - &old) / self.sigma)
            .collect();
        let mut y_w = DVector::zeros(n);
        for (w, y) in p.weights.iter().zip(&ys) {
            y_w += y * *w;
        }
        let mean = &old + &y_w * self.sigma;
        let (b, d) = self.eigen();
        let c_inv_sqrt = &b * DMatrix::from_diagonal(&d.map(|v| 1.0 / v)) * b.transpose();
        let ps = DVector::from_column_slice(&self.path_sigma) * (1.0 - p.c_sigma)
            + (&c_inv_sqrt * &y_w) * (p.c_sigma * (2.0 - p.c_sigma) * p.mu_eff).sqrt();
        let told = (self.generation + 1) as f64;
        let h_sigma =
            ps.norm() / (1.0 - (1.0 - p.c_sigma).powf(2.0 * told)).sqrt() < (1.4 + 2.0 / (n as f64 + 1.0)) * p.chi_n;
        let h = if h_sigma { 1.0 } else { 0.0 };
        let pc = DVector::from_column_slice(&self.path_c) * (1.0 - p.c_c)
            + &y_w * (h * (p.c_c * (2.0 - p.c_c) * p.mu_eff).sqrt());
        let c = DMatrix::from_row_slice(n, n, &self.cov);
        let mut rank_mu = DMatrix::zeros(n, n);
        for (w, y) in p.weights.iter().zip(&ys) {
            rank_mu += (y * y.transpose()) * *w;
        }
        let delta_h = (1.0 - h) * p.c_c * (2.0 - p.c_c);
        let c = c * (1.0 + p.c_1 * delta_h - p.c_1 - p.c_mu) + (&pc * pc.transpose()) * p.c_1 + rank_mu * p.c_mu;
        let sigma = self.sigma * ((p.c_sigma / p.d_sigma) * (ps.norm() / p.chi_n - 1.0)).exp();
        self.mean = mean.iter().copied().collect();
        self.path_sigma = ps.iter().copied().collect();
        self.path_c = pc.iter().copied().collect();
        // Row-major copy of the symmetric C.
        self.cov = (0..n * n).map(|k| c[(k / n, k % n)]).collect();
        self.sigma = sigma.clamp(1e-12, 1.0);
        self.generation += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// A shifted, ill-conditioned quadratic in 4-D: CMA-ES finds the optimum inside the box.
    #[test]
    fn finds_the_optimum_of_an_ill_conditioned_quadratic() {
        let target = [0.2, 0.7, 0.4, 0.9];
        let f = |x: &[f64]| {
            -x.iter()
                .zip(target)
                .enumerate()
                .map(|(i, (v, t))| 10f64.powi(i as i32) * (v - t).powi(2))
                .sum::<f64>()
        };
        let mut es = Cmaes::new(CmaesSettings::default(), 4);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..150 {
            let xs = es.ask(&mut rng);
            assert!(xs.iter().flatten().all(|v| (0.0..=1.0).contains(v)));
            let fit: Vec<f64> = xs.iter().map(|x| f(x)).collect();
            es.tell(&fit);
        }
        for (m, t) in es.mean.iter().zip(target) {
            assert!((m - t).abs() < 1e-3, "mean {:?}", es.mean);
        }
    }

    /// An optimum on the boundary is reached by clamping.
    #[test]
    fn reaches_a_corner_of_the_box() {
        let mut es = Cmaes::new(CmaesSettings::default(), 2);
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for _ in 0..80 {
            let xs = es.ask(&mut rng);
            let fit: Vec<f64> = xs.iter().map(|x| x[0] - x[1]).collect();
            es.tell(&fit);
        }
        assert!(es.mean[0] > 0.95 && es.mean[1] < 0.05, "{:?}", es.mean);
    }

    #[test]
    fn bad_settings_name_themselves() {
        let e = CmaesSettings {
            sigma0: 0.0,
            ..Default::default()
        }
        .check();
        assert!(e.err().map(|e| e.to_string()).unwrap_or_default().contains("sigma0"));
        let e = CmaesSettings {
            population: Some(1),
            ..Default::default()
        }
        .check();
        assert!(
            e.err()
                .map(|e| e.to_string())
                .unwrap_or_default()
                .contains("population")
        );
        assert_eq!(CmaesSettings::default().lambda(5), 8);
    }
}
