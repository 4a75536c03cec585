//! A run's links in 3D: the pose of every link at the control rate (`links.csv`, streamed as
//! the run goes) and a self-contained `replay.html` that draws them with three.js: the links
//! as their visual boxes, cylinders and spheres, the ground, the world's obstacles and
//! walls, the centre-of-mass path, with play/pause, a time slider and a speed.
//!
//! three.js comes from the npm registry at build time (`web/package.json`, its version
//! pinned by `web/package-lock.json`, fetched by `npm ci` in the build script, or the file
//! `MODBOT_THREE_JS` names) and is written into every page, so a page opens offline from a
//! file. A build without it still records the link poses; [`three_js_available`] says so and
//! [`write_html`] refuses with the reason (decision record 0040).

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use modbot_core::{Scenario, Topology};
use modbot_description::model::Shape;
use modbot_sim::Simulator;
use nalgebra::Isometry3;
use serde_json::{Value, json};

use crate::error::{AppError, Result};

/// Most frames a page holds: beyond, the kept frames are thinned evenly (every second one
/// dropped and the stride doubled), so a long run makes a page of bounded size. 30 000
/// frames are 5 minutes at 100 Hz.
pub const MAX_PAGE_FRAMES: usize = 30_000;

/// The page: four placeholders, filled by [`write_html`].
const TEMPLATE: &str = include_str!("../web/replay.html");
/// The viewer the page runs (a classic script over the global `THREE`).
const VIEWER: &str = include_str!("../web/viewer.js");

/// three.js as the page embeds it: (`three.core.js`, `three.module.js`), or why this build
/// has none.
#[cfg(modbot_three)]
const THREE_JS: Result<(&str, &str), &str> = Ok((
    include_str!(concat!(env!("OUT_DIR"), "/three.core.js")),
    include_str!(concat!(env!("OUT_DIR"), "/three.module.js")),
));
#[cfg(not(modbot_three))]
const THREE_JS: Result<(&str, &str), &str> = Err(env!("MODBOT_THREE_JS_MISSING"));

/// Whether this build can write replay pages: `Err` says why not (three.js was not fetched
/// when it was built).
pub fn three_js_available() -> std::result::Result<(), String> {
    THREE_JS
        .map(|_| ())
        .map_err(|why| format!("this modbot was built without three.js ({why})"))
}

/// The error of a file not written.
fn write_error(path: &Path, e: impl std::fmt::Display) -> AppError {
    AppError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// A link as the page draws it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayLink {
    /// URDF link name.
    pub name: String,
    /// The robot it belongs to (index of the simulator's robots).
    pub robot: usize,
    /// The module it belongs to (index of the robot's modules; links are named
    /// `<module>_<link>`), for its colour; 0 when no module's name prefixes it.
    pub module: usize,
    /// Visual shapes with their poses in the link's frame.
    pub visuals: Vec<(Isometry3<f64>, Shape)>,
}

/// The links of every robot of `sim`; `robots` (in the simulator's order) name the modules.
pub fn replay_links(sim: &Simulator, robots: &[&Topology]) -> Vec<ReplayLink> {
    let names = sim.link_names();
    let visuals = sim.link_visuals();
    let mut out = Vec::with_capacity(names.len());
    for r in 0..sim.robot_count() {
        for l in sim.links_of(r) {
            let module = robots.get(r).map_or(0, |t| module_of(t, &names[l]));
            out.push(ReplayLink {
                name: names[l].clone(),
                robot: r,
                module,
                visuals: visuals[l].to_vec(),
            });
        }
    }
    out
}

/// The module whose name, with `_`, is the longest prefix of `link` (`m1` and `m10` apart).
fn module_of(t: &Topology, link: &str) -> usize {
    t.modules
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            link.strip_prefix(m.name.as_str())
                .is_some_and(|rest| rest.starts_with('_'))
        })
        .max_by_key(|(_, m)| m.name.len())
        .map_or(0, |(i, _)| i)
}

/// `links.csv`: a row per recorded sample, `time_s` then x, y, z, qx, qy, qz, qw of every
/// link (world frame, m), streamed to the file as the run goes.
pub struct LinkPoseCsv {
    out: BufWriter<File>,
    path: PathBuf,
    row: String,
    links: usize,
}

impl LinkPoseCsv {
    /// Creates the file and writes its header.
    pub fn create(path: &Path, link_names: &[String]) -> Result<LinkPoseCsv> {
        let file = File::create(path).map_err(|e| write_error(path, e))?;
        let mut out = BufWriter::new(file);
        let mut header = String::from("time_s");
        for n in link_names {
            for c in ["x_m", "y_m", "z_m", "qx", "qy", "qz", "qw"] {
                let _ = write!(header, ",{n}_{c}");
            }
        }
        header.push('\n');
        out.write_all(header.as_bytes()).map_err(|e| write_error(path, e))?;
        Ok(LinkPoseCsv {
            out,
            path: path.to_path_buf(),
            row: String::new(),
            links: link_names.len(),
        })
    }

    /// Writes one row: the poses of every link at time `t`.
    pub fn write(&mut self, t: f64, poses: &[Isometry3<f64>]) -> std::result::Result<(), String> {
        if poses.len() != self.links {
            return Err(format!(
                "{}: {} link poses for {} links",
                self.path.display(),
                poses.len(),
                self.links
            ));
        }
        self.row.clear();
        let _ = write!(self.row, "{t}");
        for p in poses {
            let (v, q) = (&p.translation.vector, &p.rotation);
            let _ = write!(self.row, ",{},{},{},{},{},{},{}", v.x, v.y, v.z, q.i, q.j, q.k, q.w);
        }
        self.row.push('\n');
        self.out
            .write_all(self.row.as_bytes())
            .map_err(|e| format!("{}: {e}", self.path.display()))
    }

    /// Flushes the file.
    pub fn finish(mut self) -> Result<()> {
        self.out.flush().map_err(|e| write_error(&self.path, e))
    }
}

/// One frame of a page: time, every link's pose (7 numbers each) and the centre of mass.
#[derive(Debug, Clone, PartialEq)]
struct Frame {
    t: f64,
    poses: Vec<f32>,
    com: [f32; 3],
}

/// The frames a page holds, at most [`MAX_PAGE_FRAMES`] (fewer set by [`Frames::with_cap`]):
/// every `stride`-th offered frame is kept; when the cap is reached every second kept frame
/// is dropped and the stride doubles. The last frame offered is always shown.
#[derive(Debug, Clone)]
pub struct Frames {
    kept: Vec<Frame>,
    last: Option<Frame>,
    stride: usize,
    offered: usize,
    cap: usize,
}

impl Default for Frames {
    fn default() -> Self {
        Frames::with_cap(MAX_PAGE_FRAMES)
    }
}

impl Frames {
    /// Keeps at most `cap` frames (at least 2).
    pub fn with_cap(cap: usize) -> Frames {
        Frames {
            kept: Vec::new(),
            last: None,
            stride: 1,
            offered: 0,
            cap: cap.max(2),
        }
    }

    /// Offers the frame at time `t`: link poses and the centre of mass. A frame not after
    /// the last one offered is ignored (a run continued from its last sample records that
    /// sample twice).
    pub fn push(&mut self, t: f64, poses: &[Isometry3<f64>], com: [f64; 3]) {
        if self.last.as_ref().is_some_and(|l| t <= l.t) {
            return;
        }
        let mut flat = Vec::with_capacity(poses.len() * 7);
        for p in poses {
            let (v, q) = (&p.translation.vector, &p.rotation);
            flat.extend([v.x, v.y, v.z, q.i, q.j, q.k, q.w].map(|x| x as f32));
        }
        let frame = Frame {
            t,
            poses: flat,
            com: com.map(|x| x as f32),
        };
        if self.offered % self.stride == 0 {
            if self.kept.len() >= self.cap {
                let mut i = 0;
                self.kept.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
                self.stride *= 2;
            }
            if self.offered % self.stride == 0 {
                self.kept.push(frame.clone());
            }
        }
        self.last = Some(frame);
        self.offered += 1;
    }

    /// The frames the page shows (the last one offered included), in time order.
    fn shown(&self) -> Vec<&Frame> {
        let mut out: Vec<&Frame> = self.kept.iter().collect();
        if let Some(last) = &self.last {
            if out.last().is_none_or(|k| k.t < last.t) {
                out.push(last);
            }
        }
        out
    }

    /// How many frames the page shows.
    pub fn len(&self) -> usize {
        self.shown().len()
    }

    /// Whether no frame was offered.
    pub fn is_empty(&self) -> bool {
        self.last.is_none()
    }
}

/// What the page's title line names.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayInfo {
    /// The robot as given (`pp:8`, a file, a name).
    pub robot: String,
    /// The controller run.
    pub controller: String,
    /// The world's name.
    pub world: String,
    /// Rate of the frames, Hz.
    pub rate_hz: f64,
}

/// A number for the page: 5 decimals (0.01 mm, 1e-5 of a unit quaternion), trailing zeros
/// dropped.
fn num(out: &mut String, x: f64) {
    let start = out.len();
    let _ = write!(out, "{x:.5}");
    if out[start..].contains('.') {
        while out.ends_with('0') {
            out.pop();
        }
        if out.ends_with('.') {
            out.pop();
        }
    }
    if &out[start..] == "-0" {
        out.truncate(start);
        out.push('0');
    }
}

/// A JSON array of numbers ([`num`]).
fn numbers(out: &mut String, xs: impl Iterator<Item = f64>) {
    out.push('[');
    for (i, x) in xs.enumerate() {
        if i > 0 {
            out.push(',');
        }
        num(out, x);
    }
    out.push(']');
}

fn pose7(p: &Isometry3<f64>) -> [f64; 7] {
    let (v, q) = (&p.translation.vector, &p.rotation);
    [v.x, v.y, v.z, q.i, q.j, q.k, q.w]
}

fn visual_json(pose: &Isometry3<f64>, shape: &Shape) -> Value {
    let pose = pose7(pose);
    match shape {
        Shape::Box(size) => json!({"shape": "box", "size": size, "pose": pose}),
        Shape::Cylinder { radius, length } => {
            json!({"shape": "cylinder", "radius": radius, "length": length, "pose": pose})
        }
        Shape::Capsule { radius, length } => {
            json!({"shape": "capsule", "radius": radius, "length": length, "pose": pose})
        }
        Shape::Sphere(r) => json!({"shape": "sphere", "radius": r, "pose": pose}),
        Shape::Mesh(file) => json!({"shape": "mesh", "file": file, "pose": pose}),
    }
}

/// The page's data: what it draws and every frame (format 1, read by `web/viewer.js`).
pub fn page_data(info: &ReplayInfo, links: &[ReplayLink], world: &Scenario, frames: &Frames) -> Result<String> {
    let boxes: Vec<Value> = world
        .boxes()?
        .iter()
        .map(|b| {
            let kind = serde_json::to_value(b.kind).unwrap_or(Value::Null);
            json!({"name": b.name, "kind": kind, "center": b.center, "yaw": b.yaw, "size": b.size})
        })
        .collect();
    let links_json: Vec<Value> = links
        .iter()
        .map(|l| {
            json!({
                "name": l.name,
                "robot": l.robot,
                "module": l.module,
                "visuals": l.visuals.iter().map(|(p, s)| visual_json(p, s)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let head = json!({
        "format": 1,
        "title": format!("{} · {} · {}", info.robot, info.controller, info.world),
        "robot": info.robot,
        "controller": info.controller,
        "world": info.world,
        "rate_hz": info.rate_hz,
        "links": links_json,
        "ground": {"size": world.ground.size_m},
        "boxes": boxes,
    });
    let mut out = serde_json::to_string(&head).map_err(|e| AppError::BadInput(format!("replay data: {e}")))?;
    // The frames are written by hand: serde_json would print every f32 widened to f64 in
    // full (17 digits), three times the size for nothing a screen shows.
    out.pop();
    let shown = frames.shown();
    out.push_str(",\"t\":");
    numbers(&mut out, shown.iter().map(|f| f.t));
    out.push_str(",\"frames\":[");
    for (i, f) in shown.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        numbers(&mut out, f.poses.iter().map(|x| f64::from(*x)));
    }
    out.push_str("],\"com\":[");
    for (i, f) in shown.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        numbers(&mut out, f.com.iter().map(|x| f64::from(*x)));
    }
    out.push_str("]}");
    Ok(out)
}

/// The page for `data` ([`page_data`]): the template with three.js, the viewer and the data
/// written in.
pub fn page(data: &str) -> std::result::Result<String, String> {
    let (core, module) = THREE_JS.map_err(|why| format!("this modbot was built without three.js ({why})"))?;
    fill(TEMPLATE, [core, module, VIEWER], data)
}

/// The template with its four placeholders replaced, each exactly once: three.js's core and
/// module, the viewer, and the data with every `<` written `\u003c` (the same character to
/// JSON, where `<` only appears in strings), so no name in it can close its script element
/// or open a comment there.
fn fill(template: &str, [core, module, viewer]: [&str; 3], data: &str) -> std::result::Result<String, String> {
    let data = data.replace('<', "\\u003c");
    let mut out = template.to_string();
    for (mark, with) in [
        ("/*@THREE_CORE@*/", core),
        ("/*@THREE_MODULE@*/", module),
        ("/*@VIEWER@*/", viewer),
        ("/*@DATA@*/", data.as_str()),
    ] {
        if out.matches(mark).count() != 1 {
            return Err(format!("the replay template must hold {mark} once"));
        }
        // Placeholders are replaced in order, and no later one can appear in what an earlier
        // one brought in (the build script checks three.js, the test below the viewer).
        out = out.replacen(mark, with, 1);
    }
    Ok(out)
}

/// Writes `replay.html` for a run.
pub fn write_html(
    path: &Path,
    info: &ReplayInfo,
    links: &[ReplayLink],
    world: &Scenario,
    frames: &Frames,
) -> Result<()> {
    if frames.is_empty() {
        return Err(write_error(path, "no frame was recorded"));
    }
    let data = page_data(info, links, world, frames)?;
    let html = page(&data).map_err(|why| write_error(path, why))?;
    std::fs::write(path, html).map_err(|e| write_error(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Translation3, UnitQuaternion};

    fn pose(x: f64) -> Isometry3<f64> {
        Isometry3::from_parts(Translation3::new(x, 0.0, 0.0), UnitQuaternion::identity())
    }

    #[test]
    fn numbers_are_short_and_exact_to_five_decimals() {
        let mut s = String::new();
        for x in [1.0, -0.0, 0.123_456_7, -2.5, 1e-7, 100.0] {
            num(&mut s, x);
            s.push(' ');
        }
        assert_eq!(s, "1 0 0.12346 -2.5 0 100 ");
    }

    #[test]
    fn frames_thin_evenly_and_keep_the_last() {
        let mut f = Frames::with_cap(10);
        for i in 0..1000 {
            f.push(f64::from(i), &[pose(f64::from(i))], [0.0; 3]);
        }
        let shown = f.shown();
        assert!(shown.len() <= 11, "{}", shown.len());
        assert!(shown.len() >= 5, "{}", shown.len());
        assert_eq!(shown[0].t, 0.0);
        assert_eq!(shown.last().map(|f| f.t), Some(999.0));
        // Evenly: every gap but the last is the same stride.
        let gaps: Vec<f64> = shown.windows(2).map(|w| w[1].t - w[0].t).collect();
        assert!(gaps[..gaps.len() - 1].iter().all(|g| *g == gaps[0]), "{gaps:?}");
        assert!(shown.windows(2).all(|w| w[0].t < w[1].t));
    }

    #[test]
    fn a_frame_not_after_the_last_is_ignored() {
        let mut f = Frames::default();
        for t in [0.0, 0.01, 0.01, 0.005, 0.02] {
            f.push(t, &[pose(t)], [0.0; 3]);
        }
        let times: Vec<f64> = f.shown().iter().map(|x| x.t).collect();
        assert_eq!(times, [0.0, 0.01, 0.02]);
    }

    #[test]
    fn a_short_run_keeps_every_frame() {
        let mut f = Frames::default();
        for i in 0..50 {
            f.push(f64::from(i) * 0.01, &[pose(0.0), pose(1.0)], [0.0, 0.0, 0.1]);
        }
        assert_eq!(f.len(), 50);
    }

    #[test]
    fn the_template_is_filled_once_each_and_the_data_cannot_close_its_script() {
        let data = r#"{"title":"</script><!--<b>"}"#;
        let page = fill(TEMPLATE, ["/*core*/", "/*module*/", "/*viewer*/"], data).expect("filled");
        assert!(page.contains("/*core*/") && page.contains("/*module*/") && page.contains("/*viewer*/"));
        assert!(page.contains(r#"\u003c/script>\u003c!--\u003cb>"#), "{page}");
        for mark in ["/*@THREE_CORE@*/", "/*@THREE_MODULE@*/", "/*@VIEWER@*/", "/*@DATA@*/"] {
            assert!(!page.contains(mark), "{mark}");
            assert!(!VIEWER.contains(mark), "the viewer holds {mark}");
        }
        assert!(fill("no marks", ["", "", ""], "{}").is_err());
        // The data, read back as JSON, is what was written.
        let start = page.find("\\u003c/script>").expect("data");
        assert!(start > 0);
        let back: Value = serde_json::from_str(&data.replace('<', "\\u003c")).expect("json");
        assert_eq!(back["title"], "</script><!--<b>");
    }

    #[test]
    fn links_take_their_module_by_the_longest_name_prefix() {
        let catalog = modbot_core::ModuleCatalog::builtin();
        let t = Topology::resolve("pp:12", &catalog).expect("pp:12");
        let m10 = &t.modules[10].name;
        assert_eq!(module_of(&t, &format!("{m10}_front")), 10);
        let m1 = &t.modules[1].name;
        assert_eq!(module_of(&t, &format!("{m1}_front")), 1);
        assert_eq!(module_of(&t, "base_link"), 0);
    }
}
