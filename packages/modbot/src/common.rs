//! What every command shares: configuration files, KEY=VALUE parsing, bad-input errors,
//! exit codes and writing to standard output. It imports no command, so the commands and
//! the dispatcher never import each other in a circle.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use modbot_app::AppError;
use modbot_core::{CoreError, ModuleCatalog};
use modbot_description::DescriptionError;
use modbot_gaits::{GaitError, GaitLibrary};
use modbot_planner::grid::PlanError;
use modbot_sim::SimError;

/// The simulator's flags, one group for every command that simulates (run, sweep, maze,
/// search, bench): the engine, the physics step and the solver's iterations. Each command
/// applies all of them ([`SimArgs::apply`]); none is accepted and ignored.
#[derive(Debug, Clone, clap::Args)]
pub struct SimArgs {
    /// Physics engine: `native` (modbot's reduced-coordinate engine, the default) or
    /// `rapier` (a rapier3d multibody, the cross-check).
    #[arg(long, default_value = "native")]
    pub engine: modbot_sim::Engine,
    /// Physics step in ms, 0.01 … 20 (default: the world's).
    #[arg(long, value_parser = step_ms)]
    pub step_ms: Option<f64>,
    /// Solver iterations per physics step (native: Gauss–Seidel sweeps, default 10;
    /// rapier: substeps, default 8).
    #[arg(long, value_parser = iterations)]
    pub solver_iterations: Option<usize>,
    /// Gauss-Seidel sweeps per solver iteration (native default 1, rapier 4).
    #[arg(long, value_parser = iterations)]
    pub pgs_iterations: Option<usize>,
}

impl SimArgs {
    /// Puts every flag into `options`.
    pub fn apply(&self, options: &mut modbot_app::EvalOptions) {
        options.engine = self.engine;
        options.step_s = self.step_ms.map(|ms| ms / 1000.0);
        options.solver_iterations = self.solver_iterations;
        options.pgs_iterations = self.pgs_iterations;
    }
}

/// Solver iterations: 1 … 1000.
pub fn iterations(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(n),
        _ => Err(format!("`{s}`: expected a whole number of iterations from 1 to 1000")),
    }
}

/// Configuration files shared by the subcommands.
#[derive(Debug, Clone, clap::Args)]
pub struct ConfigArgs {
    /// Module catalog (default: the shipped config/modules.yaml).
    #[arg(long, value_name = "FILE", global = true)]
    pub modules: Option<PathBuf>,
    /// Gait file merged over the shipped config/gaits.yaml.
    #[arg(long, value_name = "FILE", global = true)]
    pub gaits: Option<PathBuf>,
}

impl ConfigArgs {
    pub fn catalog(&self) -> Result<ModuleCatalog> {
        match &self.modules {
            Some(p) => ModuleCatalog::load(p).with_context(|| format!("loading module catalog {}", p.display())),
            None => Ok(ModuleCatalog::builtin()),
        }
    }

    pub fn library(&self) -> Result<GaitLibrary> {
        match &self.gaits {
            Some(p) => GaitLibrary::load(p).with_context(|| format!("loading gait file {}", p.display())),
            None => Ok(GaitLibrary::builtin()),
        }
    }
}

/// The maze rules' times, as `modbot maze` and `modbot search` take them.
#[derive(Debug, Clone, clap::Args)]
pub struct MazeTimes {
    /// maxTime, s (the repository's experiment: 40).
    #[arg(long, default_value_t = 40.0)]
    pub max_time: f64,
    /// A robot not in the maze after this long is stopped, s (the seed's 10).
    #[arg(long, default_value_t = 10.0)]
    pub enter_within: f64,
}

impl MazeTimes {
    /// The rules, each time checked and named.
    pub fn rules(&self) -> Result<modbot_sim::maze::MazeRules> {
        modbot_sim::maze::MazeRules::checked(self.max_time, self.enter_within, ["--max-time", "--enter-within"])
            .map_err(|e| BadInput(e).into())
    }
}

/// A finite number (clap parser for every floating-point argument: `nan` and `inf` parse as
/// f64 but measure nothing).
pub fn finite(s: &str) -> Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("`{s}` is not a number"))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("`{s}`: expected a finite number"))
    }
}

/// A finite number > 0 (clap parser for times, rates, sizes and speeds).
pub fn positive(s: &str) -> Result<f64, String> {
    let v = finite(s)?;
    if v > 0.0 {
        Ok(v)
    } else {
        Err(format!("`{s}`: expected a number > 0"))
    }
}

/// A finite number in `range`; otherwise an error saying "expected {what}".
fn within(s: &str, range: std::ops::RangeInclusive<f64>, what: &str) -> Result<f64, String> {
    let v = finite(s)?;
    if range.contains(&v) {
        Ok(v)
    } else {
        Err(format!("`{s}`: expected {what}"))
    }
}

/// A benchmark's simulated seconds per case: at least one 10 ms control tick (fewer
/// measure nothing and would print a rate of NaN), at most an hour.
pub fn bench_seconds(s: &str) -> Result<f64, String> {
    within(
        s,
        0.01..=3600.0,
        "simulated seconds from 0.01 (one control tick) to 3600",
    )
}

/// A physics step, ms: from 0.01 ms (the simulator's smallest,
/// [`modbot_core::scenario::MIN_PHYSICS_STEP_S`]) to 20 ms (its largest).
pub fn step_ms(s: &str) -> Result<f64, String> {
    let min = modbot_core::scenario::MIN_PHYSICS_STEP_S * 1000.0;
    within(s, min..=20.0, &format!("a physics step from {min} to 20 ms"))
}

/// A control rate, Hz: > 0 and at most [`modbot_sim::MAX_CONTROL_RATE_HZ`].
pub fn control_rate(s: &str) -> Result<f64, String> {
    let v = positive(s)?;
    if v <= modbot_sim::MAX_CONTROL_RATE_HZ {
        Ok(v)
    } else {
        Err(format!(
            "`{s}`: expected a rate of at most {} Hz",
            modbot_sim::MAX_CONTROL_RATE_HZ
        ))
    }
}

/// Parses KEY=VALUE with a finite numeric value (`modbot_gaits::params::parse_assignment`).
pub fn parse_set(s: &str) -> Result<(String, f64), String> {
    modbot_gaits::params::parse_assignment(s)
}

/// An error in what the user asked for (exit code 2), as opposed to a failure to do it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

/// 2 for bad input (arguments, files, parameters), 1 for anything else. The errors are asked
/// (`is_input_error`); every library decides for its own.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    let input = e.chain().any(|c| {
        c.is::<BadInput>()
            || c.downcast_ref::<AppError>().is_some_and(AppError::is_input_error)
            || c.downcast_ref::<SimError>().is_some_and(SimError::is_input_error)
            || c.downcast_ref::<PlanError>().is_some_and(PlanError::is_input_error)
            || c.is::<GaitError>()
            || c.is::<CoreError>()
            || c.is::<DescriptionError>()
    });
    if input { 2 } else { 1 }
}

/// Writes to standard output; a closed pipe (`modbot gaits | head`) is not an error.
pub fn emit(data: impl AsRef<[u8]>) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(data.as_ref()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.context("writing to standard output"),
    }
}

/// The folder a run writes into, never one holding an earlier run unless `force`: `base`
/// itself when it does not exist or is empty; when the user named it (`named`), an error
/// saying so; otherwise the first free `base-2`, `base-3`, ….
pub fn fresh_dir(base: &Path, named: bool, force: bool) -> Result<PathBuf> {
    let used = |p: &Path| p.read_dir().map(|mut d| d.next().is_some()).unwrap_or(p.exists());
    if force || !used(base) {
        return Ok(base.to_path_buf());
    }
    if named {
        return Err(BadInput(format!(
            "{} already holds files: give another folder, or --force to overwrite them",
            base.display()
        ))
        .into());
    }
    let name = base
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (2..10_000)
        .map(|k| base.with_file_name(format!("{name}-{k}")))
        .find(|p| !used(p))
        .ok_or_else(|| {
            BadInput(format!(
                "{}-2 … -9999 are all taken: clear some, or --force",
                base.display()
            ))
            .into()
        })
}

/// Writes `replay.html` into `dir` (record 0040) and adds it to `written`; a build without
/// three.js says why on stderr instead.
pub fn write_replay(
    dir: &Path,
    info: &modbot_app::replay::ReplayInfo,
    links: &[modbot_app::replay::ReplayLink],
    world: &modbot_core::Scenario,
    frames: &modbot_app::replay::Frames,
    written: &mut Vec<&'static str>,
) -> Result<()> {
    match modbot_app::replay::three_js_available() {
        Ok(()) => {
            modbot_app::replay::write_html(&dir.join("replay.html"), info, links, world, frames)?;
            written.push("replay.html");
        }
        Err(why) => eprintln!("note: replay.html not written: {why}"),
    }
    Ok(())
}

/// Progress of a simulation off a terminal, where no bar is drawn: a line on stderr at every
/// tenth of the run (`sim 4.8/24.0 s, real-time factor 93.1`), each tenth once.
pub struct Tenths {
    on: bool,
    next: f64,
    started: std::time::Instant,
}

impl Tenths {
    /// Lines unless `quiet` or stderr is a terminal (where the bar shows the progress).
    pub fn new(quiet: bool) -> Tenths {
        use std::io::IsTerminal as _;
        Tenths {
            on: !quiet && !std::io::stderr().is_terminal(),
            next: 0.1,
            started: std::time::Instant::now(),
        }
    }

    /// Simulated time `t` of `total` s: a line when it passes the next tenth.
    pub fn at(&mut self, t: f64, total: f64) {
        if self.on && total > 0.0 && t >= self.next * total {
            let rtf = t / self.started.elapsed().as_secs_f64().max(1e-9);
            eprintln!("sim {t:.1}/{total:.1} s, real-time factor {rtf:.1}");
            // The next tenth after this one (t / total = 0.8 may compute as 0.7999…).
            self.next = ((t / total * 10.0 + 1e-9).floor() + 1.0) / 10.0;
        }
    }
}

/// Progress of a command that works through items one after another, on stderr (issue 20:
/// every command that runs longer than a second shows it): on a terminal one line rewritten
/// in place, elsewhere (a log, CI) one line per item, never a line without its newline.
pub struct Steps {
    what: &'static str,
    total: usize,
    done: usize,
    quiet: bool,
    terminal: bool,
}

impl Steps {
    /// `total` items called `what` (plural), silent when `quiet`.
    pub fn new(what: &'static str, total: usize, quiet: bool) -> Steps {
        use std::io::IsTerminal as _;
        Steps {
            what,
            total,
            done: 0,
            quiet,
            terminal: std::io::stderr().is_terminal(),
        }
    }

    /// One item done; `label` says which.
    pub fn step(&mut self, label: &str) {
        self.done += 1;
        if self.quiet {
            return;
        }
        let line = format!("{} of {} {}: {label}", self.done, self.total, self.what);
        if self.terminal {
            eprint!("\r\x1b[2K{line}");
            if self.done == self.total {
                eprintln!();
            }
        } else {
            eprintln!("{line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cmd {
        #[command(flatten)]
        sim: SimArgs,
    }

    /// Every flag of the group reaches the evaluation options; bad values are refused
    /// naming the flag.
    #[test]
    fn the_simulator_flags_all_reach_the_options() {
        let cmd = Cmd::try_parse_from([
            "x",
            "--engine",
            "rapier",
            "--step-ms",
            "2",
            "--solver-iterations",
            "12",
            "--pgs-iterations",
            "3",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let mut o = modbot_app::EvalOptions::default();
        cmd.sim.apply(&mut o);
        assert_eq!(o.engine, modbot_sim::Engine::Rapier);
        assert_eq!(o.step_s, Some(0.002));
        assert_eq!((o.solver_iterations, o.pgs_iterations), (Some(12), Some(3)));
        for (flag, value) in [
            ("--step-ms", "30"),
            ("--solver-iterations", "0"),
            ("--pgs-iterations", "x"),
        ] {
            let e = Cmd::try_parse_from(["x", flag, value]).unwrap_err().to_string();
            assert!(e.contains(flag), "{flag}: {e}");
        }
    }
}
