//! `modbot._modbot`: the native part of the Python package `modbot` (decision record 0039).
//!
//! Robots, worlds and controllers are loaded and checked by the same Rust code as the
//! `modbot` command; a run is `modbot_app::evaluate` with the GIL released, so Python threads
//! simulate in parallel; the search is `modbot_app::search`, with its evaluations done here on
//! worker threads or handed to a Python callable (Ray tasks, `modbot.search`). Errors arrive
//! as Python exceptions carrying the Rust message: `ValueError` for the caller's input,
//! `RuntimeError` for a run that failed (a diverging simulation), `OSError` for an output that
//! could not be written. The Python-facing API (dataclasses, docstrings) is in
//! `python/modbot/__init__.py`.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use modbot_app::search::{
    Checkpoint, Hooks, Measured, Outcome, Problem, Progress, SearchRequest, open_folder, run_search, run_search_with,
    save_generation, write_results,
};
use modbot_app::{AppError, ControllerSpec, EvalOptions, load_catalog, load_gaits, load_robot, load_world_for};
use modbot_core::{Scenario, Topology};
use modbot_sim::{Engine, RunPlan};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// The Rust error as the Python exception it is.
fn py_err(e: AppError) -> PyErr {
    match &e {
        AppError::Write { .. } => PyOSError::new_err(e.to_string()),
        _ if e.is_input_error() => PyValueError::new_err(e.to_string()),
        _ => PyRuntimeError::new_err(e.to_string()),
    }
}

fn bad(message: String) -> PyErr {
    PyValueError::new_err(message)
}

/// A robot: a preset (`pp:8`, `py:16`, `pyp`, `quadruped`, …) or a robot file.
#[pyclass(frozen, module = "modbot._modbot")]
struct Robot {
    topology: Topology,
    spec: String,
}

#[pymethods]
impl Robot {
    #[new]
    #[pyo3(signature = (robot, modules = None))]
    fn new(robot: PathBuf, modules: Option<PathBuf>) -> PyResult<Robot> {
        let spec = robot.to_string_lossy().into_owned();
        let catalog = load_catalog(modules.as_deref()).map_err(py_err)?;
        let topology = load_robot(&spec, &catalog).map_err(py_err)?;
        Ok(Robot { topology, spec })
    }

    /// The robot's name.
    #[getter]
    fn name(&self) -> String {
        self.topology.name.clone()
    }

    /// How it was named when loaded (preset or file).
    #[getter]
    fn spec(&self) -> String {
        self.spec.clone()
    }

    /// Number of modules.
    #[getter]
    fn modules(&self) -> usize {
        self.topology.modules.len()
    }

    /// Joint names, in the order of the joint arrays.
    #[getter]
    fn joint_names(&self) -> Vec<String> {
        self.topology.joint_names()
    }

    /// The robot file (YAML) of this robot.
    fn to_yaml(&self) -> String {
        self.topology.to_yaml("")
    }

    fn __repr__(&self) -> String {
        format!(
            "Robot({:?}: {}, {} modules, {} joints)",
            self.spec,
            self.topology.name,
            self.topology.modules.len(),
            self.topology.joint_names().len()
        )
    }
}

/// A world: a scenario file (.yaml) or a generated SDF world; none is flat ground (for the
/// wheel-foot robots, their own flat ground).
#[pyclass(frozen, module = "modbot._modbot")]
struct World {
    scenario: Option<Scenario>,
    path: Option<PathBuf>,
}

#[pymethods]
impl World {
    #[new]
    #[pyo3(signature = (path = None))]
    fn new(path: Option<PathBuf>) -> PyResult<World> {
        // Loaded now to check it; loaded again for the robot at run time (the flat default
        // depends on the robot).
        let scenario = match &path {
            Some(p) => Some(modbot_app::load_world(Some(p)).map_err(py_err)?),
            None => None,
        };
        Ok(World { scenario, path })
    }

    /// The world's name (`flat` when none was given).
    #[getter]
    fn name(&self) -> String {
        self.scenario.as_ref().map_or("flat".into(), |s| s.name.clone())
    }

    fn __repr__(&self) -> String {
        match &self.path {
            Some(p) => format!("World({:?})", p.display().to_string()),
            None => "World(flat)".into(),
        }
    }
}

/// Parameters as (key, value) in the order given, each finite.
fn params_of(params: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, f64)>> {
    let mut out = Vec::new();
    if let Some(d) = params {
        for (k, v) in d.iter() {
            let key: String = k
                .extract()
                .map_err(|_| bad(format!("params: key {k}: expected a string")))?;
            let value: f64 = v
                .extract()
                .map_err(|_| bad(format!("params[{key:?}] = {v}: expected a number")))?;
            if !value.is_finite() {
                return Err(bad(format!("params[{key:?}] = {value}: expected a finite number")));
            }
            out.push((key, value));
        }
    }
    Ok(out)
}

/// A controller: a gait, preset, `cpg` or wheel-foot controller with parameter overrides
/// (keys or aliases), or a pose-sequence file.
#[pyclass(frozen, module = "modbot._modbot")]
struct Controller {
    spec: ControllerSpec,
}

#[pymethods]
impl Controller {
    #[new]
    #[pyo3(signature = (gait = None, params = None, poses = None))]
    fn new(gait: Option<String>, params: Option<&Bound<'_, PyDict>>, poses: Option<PathBuf>) -> PyResult<Controller> {
        let params = params_of(params)?;
        let spec = match (gait, poses) {
            (Some(name), None) => ControllerSpec::Gait { name, params },
            (None, Some(path)) => {
                if !params.is_empty() {
                    return Err(bad("params: a pose sequence (poses) has none".into()));
                }
                ControllerSpec::PoseSequence(path)
            }
            (Some(_), Some(_)) => return Err(bad("gait and poses: give one, not both".into())),
            (None, None) => return Err(bad("a controller needs a gait or poses".into())),
        };
        Ok(Controller { spec })
    }

    fn __repr__(&self) -> String {
        match &self.spec {
            ControllerSpec::Gait { name, params } => format!("Controller({name:?}, {params:?})"),
            ControllerSpec::PoseSequence(p) => format!("Controller(poses={:?})", p.display().to_string()),
        }
    }
}

/// The checks `modbot run` makes on its protocol arguments.
#[allow(clippy::too_many_arguments)]
fn run_options(
    cycles: usize,
    warmup: usize,
    rate: f64,
    max_time: f64,
    engine: &str,
    step_ms: Option<f64>,
    solver_iterations: Option<usize>,
    pgs_iterations: Option<usize>,
    gaits: Option<PathBuf>,
) -> PyResult<EvalOptions> {
    if cycles == 0 {
        return Err(bad("cycles must be at least 1".into()));
    }
    if !modbot_sim::is_control_rate(rate) {
        return Err(bad(format!(
            "rate {rate}: expected a control rate in (0, {}] Hz",
            modbot_sim::MAX_CONTROL_RATE_HZ
        )));
    }
    if !(max_time.is_finite() && max_time > 0.0) {
        return Err(bad(format!("max_time {max_time}: expected a time > 0 s")));
    }
    if let Some(ms) = step_ms {
        let min = modbot_core::scenario::MIN_PHYSICS_STEP_S * 1000.0;
        if !(ms.is_finite() && (min..=20.0).contains(&ms)) {
            return Err(bad(format!(
                "step_ms {ms}: expected a physics step from {min} to 20 ms"
            )));
        }
    }
    let engine: Engine = engine.parse().map_err(|e: String| bad(format!("engine: {e}")))?;
    Ok(EvalOptions {
        library: load_gaits(gaits.as_deref()).map_err(py_err)?,
        engine,
        step_s: step_ms.map(|ms| ms / 1000.0),
        solver_iterations,
        pgs_iterations,
        plan: RunPlan {
            warmup_cycles: warmup,
            cycles,
            control_rate_hz: rate,
            max_time_s: max_time,
        },
    })
}

fn to_python_json(py: Python<'_>, value: &serde_json::Value) -> PyResult<Py<PyAny>> {
    let text = serde_json::to_string(value).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

/// Runs `controller` on `robot` in `world` with the measurement protocol, as `modbot run`
/// does; returns (summary, trajectory): the summary as `modbot run`'s summary.json (without
/// its wall-clock fields), the trajectory as NumPy arrays.
#[pyfunction]
#[pyo3(signature = (robot, controller, world = None, seed = 0, cycles = 10, warmup = 2, rate = 100.0,
    max_time = 600.0, engine = "native", step_ms = None, solver_iterations = None, pgs_iterations = None,
    gaits = None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    robot: &Robot,
    controller: &Controller,
    world: Option<&World>,
    seed: u64,
    cycles: usize,
    warmup: usize,
    rate: f64,
    max_time: f64,
    engine: &str,
    step_ms: Option<f64>,
    solver_iterations: Option<usize>,
    pgs_iterations: Option<usize>,
    gaits: Option<PathBuf>,
) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    let options = run_options(
        cycles,
        warmup,
        rate,
        max_time,
        engine,
        step_ms,
        solver_iterations,
        pgs_iterations,
        gaits,
    )?;
    let path = world.and_then(|w| w.path.clone());
    let scenario = load_world_for(path.as_deref(), &robot.topology).map_err(py_err)?;
    let topology = &robot.topology;
    let spec = &controller.spec;
    let eval = py
        .detach(|| modbot_app::evaluate(topology, spec, &scenario, seed, &options, &mut |_, _| {}))
        .map_err(py_err)?;
    let summary = eval.summary(&robot.spec, &topology.name, &scenario.name, seed, rate);
    let n = eval.samples.len();
    let j = eval.joint_names.len();
    let column = |f: &dyn Fn(&modbot_sim::Sample) -> f64| eval.samples.iter().map(f).collect::<Vec<f64>>();
    let matrix = |py: Python<'_>, flat: Vec<f64>, width: usize| -> PyResult<Py<PyAny>> {
        Ok(PyArray1::from_vec(py, flat).reshape([n, width])?.into_any().unbind())
    };
    let traj = PyDict::new(py);
    traj.set_item("t", PyArray1::from_vec(py, column(&|s| s.t)))?;
    traj.set_item("com", matrix(py, eval.samples.iter().flat_map(|s| s.com).collect(), 3)?)?;
    traj.set_item("heading", PyArray1::from_vec(py, column(&|s| s.heading)))?;
    traj.set_item("roll", PyArray1::from_vec(py, column(&|s| s.roll)))?;
    traj.set_item("body_tilt_deg", PyArray1::from_vec(py, column(&|s| s.body_tilt_deg)))?;
    traj.set_item(
        "targets",
        matrix(
            py,
            eval.samples.iter().flat_map(|s| s.targets.iter().copied()).collect(),
            j,
        )?,
    )?;
    traj.set_item(
        "angles",
        matrix(
            py,
            eval.samples.iter().flat_map(|s| s.angles.iter().copied()).collect(),
            j,
        )?,
    )?;
    traj.set_item("joint_names", PyList::new(py, &eval.joint_names)?)?;
    Ok((to_python_json(py, &summary)?, traj.into_any().unbind()))
}

/// The gait table (gaits, presets, wheel-foot controllers; parameters with units, ranges
/// and defaults), as `modbot gaits --json`.
#[pyfunction]
#[pyo3(signature = (gaits = None))]
fn gait_table(py: Python<'_>, gaits: Option<PathBuf>) -> PyResult<Py<PyAny>> {
    let lib = load_gaits(gaits.as_deref()).map_err(py_err)?;
    to_python_json(py, &modbot_app::gait_table(&lib))
}

/// A search problem as `modbot search` builds it from its arguments (a JSON request with the
/// command's option names): `evaluate(values)` runs one candidate as the search does.
#[pyclass(frozen, module = "modbot._modbot")]
struct SearchProblem {
    problem: Problem,
    request: String,
}

fn measured_dict<'py>(py: Python<'py>, m: &Measured) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("step_x_cm", m.step_x_cm)?;
    d.set_item("step_y_cm", m.step_y_cm)?;
    d.set_item("step_cm", m.step_cm)?;
    d.set_item("heading_deg", m.heading_deg)?;
    d.set_item("roll_deg", m.roll_deg)?;
    d.set_item("maze_score", m.maze_score)?;
    d.set_item("stages_solved", m.stages_solved)?;
    Ok(d)
}

impl SearchProblem {
    fn checked_values(&self, values: Vec<f64>) -> PyResult<Vec<f64>> {
        if values.len() != self.problem.genes.len() {
            return Err(bad(format!(
                "values: {} given, the problem has {} genes ({})",
                values.len(),
                self.problem.genes.len(),
                self.problem
                    .genes
                    .iter()
                    .map(|g| g.key.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        if let Some((g, v)) = self.problem.genes.iter().zip(&values).find(|(_, v)| !v.is_finite()) {
            return Err(bad(format!("values: {} = {v}: expected a finite number", g.key)));
        }
        Ok(values)
    }
}

#[pymethods]
impl SearchProblem {
    #[new]
    fn new(request: &str) -> PyResult<SearchProblem> {
        let req = SearchRequest::from_json(request).map_err(py_err)?;
        // The settings too: a problem is what `modbot search` would run.
        req.settings().map_err(py_err)?;
        let problem = req.problem().map_err(py_err)?;
        Ok(SearchProblem {
            problem,
            request: req.to_json(),
        })
    }

    /// The searched parameters: key, min, max, step.
    #[getter]
    fn genes(&self) -> Vec<(String, f64, f64, f64)> {
        self.problem
            .genes
            .iter()
            .map(|g| (g.key.clone(), g.min, g.max, g.step))
            .collect()
    }

    /// The request it was built from (JSON, every option filled in).
    #[getter]
    fn request(&self) -> String {
        self.request.clone()
    }

    /// One candidate (gene values in gene order): (fitness or None, measured, status).
    fn evaluate<'py>(&self, py: Python<'py>, values: Vec<f64>) -> PyResult<(Option<f64>, Bound<'py, PyDict>, String)> {
        let values = self.checked_values(values)?;
        let problem = &self.problem;
        let (fitness, measured, status) = py.detach(|| problem.evaluate(&values));
        Ok((fitness, measured_dict(py, &measured)?, status))
    }

    /// [`evaluate`] as the search's JSON outcome, exact to the bit (what a worker returns).
    fn evaluate_json(&self, py: Python<'_>, values: Vec<f64>) -> PyResult<String> {
        let values = self.checked_values(values)?;
        let problem = &self.problem;
        let outcome: Outcome = py.detach(|| problem.evaluate(&values));
        serde_json::to_string(&outcome).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }

    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, (String,))> {
        let cls = py.get_type::<SearchProblem>().into_any().unbind();
        Ok((cls, (self.request.clone(),)))
    }

    fn __repr__(&self) -> String {
        format!("SearchProblem({})", self.request)
    }
}

fn progress_dict<'py>(py: Python<'py>, p: &Progress) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("generation", p.generation)?;
    d.set_item("total", p.total)?;
    d.set_item("best", p.best)?;
    d.set_item("evaluations", p.evaluations)?;
    d.set_item("evals_per_s", p.evals_per_s)?;
    Ok(d)
}

/// Runs the search a request asks for, as `modbot search` does: in `out` (when given) the
/// checkpoint and evaluations.csv after every generation, best.yaml (or best.txt) and
/// summary.json at the end; `resume` continues the search whose checkpoint is there. With
/// `evaluate_batch` (a callable taking a list of candidates, each a list of gene values, and
/// returning their outcomes as `SearchProblem.evaluate_json` gives them, in order) the
/// evaluations are done by it, e.g. as Ray tasks; without, on the request's worker threads.
/// `progress` gets a dict after every generation. Returns the final checkpoint (JSON) and
/// the index of its best evaluation (the earliest of equals), if any ran.
#[pyfunction]
#[pyo3(signature = (request, out = None, resume = false, evaluate_batch = None, progress = None))]
fn search(
    py: Python<'_>,
    request: &str,
    out: Option<PathBuf>,
    resume: bool,
    evaluate_batch: Option<Py<PyAny>>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(String, Option<usize>)> {
    let req = SearchRequest::from_json(request).map_err(py_err)?;
    let settings = req.settings().map_err(py_err)?;
    let problem = req.problem().map_err(py_err)?;
    let start = match &out {
        Some(dir) => open_folder(dir, resume, resume).map_err(py_err)?,
        None if resume => return Err(bad("resume: needs the folder of the search (out)".into())),
        None => None,
    };
    // A Python exception raised in a callback, re-raised when the search has stopped.
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let stop = |e: PyErr| {
        let message = e.to_string();
        if let Ok(mut slot) = raised.lock() {
            *slot = Some(e);
        }
        AppError::BadInput(message)
    };
    let mut on_generation = |p: &Progress, cp: &Checkpoint| -> modbot_app::Result<()> {
        if let Some(dir) = &out {
            save_generation(dir, &problem, cp)?;
        }
        Python::attach(|py| -> PyResult<()> {
            py.check_signals()?;
            if let Some(f) = &progress {
                f.call1(py, (progress_dict(py, p)?,))?;
            }
            Ok(())
        })
        .map_err(stop)
    };
    let started = Instant::now();
    let result = py.detach(|| match &evaluate_batch {
        None => run_search(
            &problem,
            &settings,
            start,
            &mut Hooks {
                generation: &mut on_generation,
                evaluation: &|| {},
            },
        ),
        Some(f) => {
            let mut batch = |candidates: &[Vec<f64>]| -> modbot_app::Result<Vec<Outcome>> {
                let texts: Vec<String> =
                    Python::attach(|py| f.call1(py, (candidates.to_vec(),))?.extract(py)).map_err(stop)?;
                texts
                    .iter()
                    .map(|t| {
                        serde_json::from_str::<Outcome>(t)
                            .map_err(|e| AppError::BadInput(format!("evaluate_batch returned `{t}`: {e}")))
                    })
                    .collect()
            };
            run_search_with(&problem, &settings, start, &mut on_generation, &mut batch)
        }
    });
    let cp = match result {
        Ok(cp) => cp,
        Err(e) => return Err(raised.into_inner().ok().flatten().unwrap_or_else(|| py_err(e))),
    };
    if let Some(dir) = &out {
        write_results(
            dir,
            &req.robot,
            &problem,
            &settings,
            &cp,
            started.elapsed().as_secs_f64(),
        )
        .map_err(py_err)?;
    }
    let text = serde_json::to_string(&cp).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok((text, cp.best().map(|b| b.index)))
}

/// The output folder of a search when none is given (`runs/search_<robot>_<gait>`).
#[pyfunction]
fn default_search_folder(request: &str) -> PyResult<String> {
    let req = SearchRequest::from_json(request).map_err(py_err)?;
    Ok(req.default_folder().to_string_lossy().into_owned())
}

/// Checks a search's output folder before anything runs: refused when it holds a search and
/// `resume` is false, or holds none and `resume` is true (a checkpoint it holds must parse).
#[pyfunction]
fn check_search_folder(out: PathBuf, resume: bool) -> PyResult<()> {
    open_folder(&out, resume, resume).map(|_| ()).map_err(py_err)
}

/// The native module.
#[pymodule]
fn _modbot(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Robot>()?;
    m.add_class::<World>()?;
    m.add_class::<Controller>()?;
    m.add_class::<SearchProblem>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(gait_table, m)?)?;
    m.add_function(wrap_pyfunction!(search, m)?)?;
    m.add_function(wrap_pyfunction!(check_search_folder, m)?)?;
    m.add_function(wrap_pyfunction!(default_search_folder, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
