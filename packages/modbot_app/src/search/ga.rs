//! The thesis's genetic algorithm (seed-001 §2.6, App. B): PGAPack 1.0 with its defaults
//! where the thesis is silent (decision record 0028). Integer genome; population 100;
//! steady state, each generation keeping the best 90 % and breeding 10 % new; binary
//! tournament won by the better with probability 0.6; two-point crossover with probability
//! 0.85; a string not crossed over is mutated, each gene with probability 0.001, to a
//! uniform other level of its range.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{AppError, Result};
use crate::search::problem::Gene;

/// The GA's settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GaSettings {
    /// Population size (thesis: 100).
    pub population: usize,
    /// Fraction of the population replaced each generation (PGAPack: 10 %).
    pub replace_fraction: f64,
    /// Probability that the better of two wins a tournament (thesis: 0.6).
    pub tournament_p: f64,
    /// Crossover probability (PGAPack: 0.85).
    pub crossover_p: f64,
    /// Mutation probability per gene (thesis: 0.001).
    pub mutation_p: f64,
}

impl Default for GaSettings {
    fn default() -> Self {
        GaSettings {
            population: 100,
            replace_fraction: 0.1,
            tournament_p: 0.6,
            crossover_p: 0.85,
            mutation_p: 0.001,
        }
    }
}

impl GaSettings {
    /// Checks every setting, naming the bad one.
    pub fn check(&self) -> Result<()> {
        let bad = |k: &str, v: f64, why: &str| Err(AppError::BadInput(format!("GA setting `{k}` = {v}: {why}")));
        if !(2..=100_000).contains(&self.population) {
            return bad("population", self.population as f64, "must be 2 to 100000");
        }
        for (k, v) in [
            ("replace_fraction", self.replace_fraction),
            ("tournament_p", self.tournament_p),
            ("crossover_p", self.crossover_p),
            ("mutation_p", self.mutation_p),
        ] {
            if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                return bad(k, v, "must be within [0, 1]");
            }
        }
        if self.replace_fraction <= 0.0 {
            return bad("replace_fraction", self.replace_fraction, "must be above 0");
        }
        Ok(())
    }

    /// Strings bred per generation: 10 % of the population, at least one.
    pub fn replaced(&self) -> usize {
        ((self.population as f64 * self.replace_fraction).round() as usize).clamp(1, self.population)
    }
}

/// The GA's state between generations: the population (gene levels) and its fitness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ga {
    /// Settings.
    pub settings: GaSettings,
    /// Current population, gene levels.
    pub population: Vec<Vec<u64>>,
    /// Fitness of each (−∞ for one that could not run), once evaluated.
    #[serde(with = "crate::search::float::many")]
    pub fitness: Vec<f64>,
    /// Offspring waiting for their fitness.
    pending: Vec<Vec<u64>>,
}

impl Ga {
    /// A GA with no population yet.
    pub fn new(settings: GaSettings) -> Ga {
        Ga {
            settings,
            population: Vec::new(),
            fitness: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// The candidates to evaluate next: the random initial population, then each
    /// generation's offspring.
    pub fn ask(&mut self, genes: &[Gene], rng: &mut ChaCha8Rng) -> Vec<Vec<u64>> {
        let s = self.settings;
        self.pending = if self.population.is_empty() {
            (0..s.population)
                .map(|_| genes.iter().map(|g| rng.random_range(0..=g.levels())).collect())
                .collect()
        } else {
            let mut kids = Vec::with_capacity(s.replaced() + 1);
            while kids.len() < s.replaced() {
                let a = self.tournament(rng);
                let b = self.tournament(rng);
                let (mut c1, mut c2) = (self.population[a].clone(), self.population[b].clone());
                if rng.random_bool(s.crossover_p) {
                    two_point(&mut c1, &mut c2, rng);
                } else {
                    mutate(&mut c1, genes, s.mutation_p, rng);
                    mutate(&mut c2, genes, s.mutation_p, rng);
                }
                kids.push(c1);
                if kids.len() < s.replaced() {
                    kids.push(c2);
                }
            }
            kids
        };
        self.pending.clone()
    }

    /// Takes the fitness of the last [`Ga::ask`]'s candidates (in their order) and forms the
    /// next population: the initial one as is; then the best (N − replaced) of the old
    /// population (ties to the earlier) followed by the offspring.
    pub fn tell(&mut self, fitness: &[f64]) {
        let kids = std::mem::take(&mut self.pending);
        if self.population.is_empty() {
            self.population = kids;
            self.fitness = fitness.to_vec();
            return;
        }
        let keep = self.settings.population - kids.len();
        let mut order: Vec<usize> = (0..self.population.len()).collect();
        order.sort_by(|&a, &b| self.fitness[b].total_cmp(&self.fitness[a]).then(a.cmp(&b)));
        order.truncate(keep);
        let mut pop: Vec<Vec<u64>> = order.iter().map(|&i| self.population[i].clone()).collect();
        let mut fit: Vec<f64> = order.iter().map(|&i| self.fitness[i]).collect();
        pop.extend(kids);
        fit.extend_from_slice(fitness);
        self.population = pop;
        self.fitness = fit;
    }

    /// Binary tournament: two strings drawn at random, the better kept with probability p.
    fn tournament(&self, rng: &mut ChaCha8Rng) -> usize {
        let n = self.population.len();
        let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
        let (better, worse) = if self.fitness[a] >= self.fitness[b] {
            (a, b)
        } else {
            (b, a)
        };
        if rng.random_bool(self.settings.tournament_p) {
            better
        } else {
            worse
        }
    }
}

/// Two-point crossover: the genes between two cut points are swapped (one point with two
/// genes; nothing to cross with one).
fn two_point(a: &mut [u64], b: &mut [u64], rng: &mut ChaCha8Rng) {
    let n = a.len();
    if n < 2 {
        return;
    }
    // Cut points between genes, 1 ..= n − 1 (and n, so the tail may be empty).
    let mut p = rng.random_range(1..n);
    let mut q = rng.random_range(1..=n);
    if p > q {
        std::mem::swap(&mut p, &mut q);
    }
    for i in p..q {
        std::mem::swap(&mut a[i], &mut b[i]);
    }
}

/// Each gene with probability `p` to a uniformly drawn *other* level of its range.
fn mutate(s: &mut [u64], genes: &[Gene], p: f64, rng: &mut ChaCha8Rng) {
    for (v, g) in s.iter_mut().zip(genes) {
        if g.levels() > 0 && rng.random_bool(p) {
            let k = rng.random_range(0..g.levels());
            *v = if k >= *v { k + 1 } else { k };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn genes() -> Vec<Gene> {
        (0..5)
            .map(|i| Gene {
                key: format!("g{i}"),
                min: 0.0,
                max: 10.0,
                step: 1.0,
            })
            .collect()
    }

    /// Steady state: the best 90 % survive, 10 % are new; the best never gets worse.
    #[test]
    fn keeps_the_best_and_breeds_a_tenth() {
        let g = genes();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut ga = Ga::new(GaSettings::default());
        let first = ga.ask(&g, &mut rng);
        assert_eq!(first.len(), 100);
        assert!(first.iter().flatten().all(|&v| v <= 10));
        let f = |s: &Vec<u64>| s.iter().sum::<u64>() as f64;
        ga.tell(&first.iter().map(f).collect::<Vec<_>>());
        let mut best = ga.fitness.iter().copied().fold(f64::MIN, f64::max);
        for _ in 0..50 {
            let kids = ga.ask(&g, &mut rng);
            assert_eq!(kids.len(), 10);
            ga.tell(&kids.iter().map(f).collect::<Vec<_>>());
            assert_eq!(ga.population.len(), 100);
            let b = ga.fitness.iter().copied().fold(f64::MIN, f64::max);
            assert!(b >= best);
            best = b;
        }
        // Selection pressure moves the population up (sum of five genes, max 50).
        let mean = ga.fitness.iter().sum::<f64>() / 100.0;
        assert!(mean > 35.0, "mean {mean}");
    }

    #[test]
    fn crossover_and_mutation_stay_in_range() {
        let g = genes();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for _ in 0..1000 {
            let (mut a, mut b) = (vec![0u64; 5], vec![10u64; 5]);
            two_point(&mut a, &mut b, &mut rng);
            // Every position holds one 0 and one 10 between them.
            assert!(a.iter().zip(&b).all(|(x, y)| x + y == 10));
            mutate(&mut a, &g, 1.0, &mut rng);
            assert!(a.iter().all(|&v| v <= 10));
        }
        let mut s = vec![3u64; 5];
        mutate(&mut s, &g, 1.0, &mut rng);
        assert!(s.iter().all(|&v| v != 3), "a mutation changes the gene");
    }

    #[test]
    fn bad_settings_name_themselves() {
        for (s, key) in [
            (
                GaSettings {
                    population: 1,
                    ..Default::default()
                },
                "population",
            ),
            (
                GaSettings {
                    crossover_p: 1.5,
                    ..Default::default()
                },
                "crossover_p",
            ),
            (
                GaSettings {
                    mutation_p: f64::NAN,
                    ..Default::default()
                },
                "mutation_p",
            ),
            (
                GaSettings {
                    replace_fraction: 0.0,
                    ..Default::default()
                },
                "replace_fraction",
            ),
        ] {
            let e = s.check().err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(key), "{e}");
        }
    }
}
