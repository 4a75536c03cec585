//! Generated hostile inputs against every parser and decoder the tools and nodes read (issue
//! 18, record 0032): each shipped file of a kind, mutated by proptest (a number made
//! non-finite or absurd, an unknown key, bytes inserted, the text cut short, lines dropped
//! or doubled, deep nesting), and random CDR bytes as every generated message type. Each is
//! answered on its own thread within 20 s (no hang) without a panic; a non-finite number is
//! refused naming its key; an unknown top-level key is refused naming it.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::Duration;

use modbot_core::{ModuleCatalog, Scenario, Topology};
use proptest::prelude::*;

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The text of every file under `dir` (relative to the root) ending in `ext`.
fn seeds(dir: &str, ext: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.display().to_string(), text)
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no {ext} files in {dir}");
    out
}

/// Runs `f` on its own thread: its answer, or a test failure naming `what` if it panics or
/// takes more than 20 s.
fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(v) => v,
        Err(RecvTimeoutError::Timeout) => panic!("{what}: no answer in 20 s"),
        Err(RecvTimeoutError::Disconnected) => panic!("{what}: the parser panicked"),
    }
}

/// A parser under test: text in, `Ok` or the refusal's message.
type Parse = fn(&str) -> Result<(), String>;

/// One kind of file: its parser, its seeds, and whether an unknown top-level key must be
/// refused (a mapping document whose keys are all known).
struct Kind {
    name: &'static str,
    parse: Parse,
    seeds: Vec<(String, String)>,
    closed_keys: bool,
}

/// A parser's answer as the tests compare it: `Ok`, or the refusal's message.
fn answer<T, E: std::fmt::Display>(r: Result<T, E>) -> Result<(), String> {
    r.map(|_| ()).map_err(|e| e.to_string())
}

fn world(t: &str) -> Result<(), String> {
    answer(Scenario::from_yaml(t, "hostile world"))
}

fn catalog(t: &str) -> Result<(), String> {
    answer(ModuleCatalog::from_yaml(t, "hostile catalog"))
}

fn gaits(t: &str) -> Result<(), String> {
    answer(modbot_gaits::GaitLibrary::builtin().merged(t, "hostile gaits"))
}

fn robot(t: &str) -> Result<(), String> {
    answer(Topology::from_yaml(t, "hostile robot", &ModuleCatalog::builtin()))
}

fn poses(t: &str) -> Result<(), String> {
    let pp2 = Topology::resolve("pp:2", &ModuleCatalog::builtin()).map_err(|e| e.to_string())?;
    answer(modbot_gaits::pose_sequence::PoseSequence::from_yaml(
        t,
        "hostile poses",
        &pp2,
    ))
}

fn task(t: &str) -> Result<(), String> {
    answer(modbot_planner::molemod::Task::from_yaml(t, "hostile task"))
}

fn capabilities(t: &str) -> Result<(), String> {
    answer(modbot_planner::capabilities::Capabilities::from_yaml(
        t,
        "hostile capabilities",
    ))
}

fn description(t: &str) -> Result<(), String> {
    answer(modbot_description::DescriptionConfig::from_yaml(
        t,
        "hostile description",
    ))
}

fn movingai_map(t: &str) -> Result<(), String> {
    answer(modbot_planner::grid::GridMap::parse_movingai(t, "hostile map"))
}

fn movingai_scen(t: &str) -> Result<(), String> {
    answer(modbot_planner::grid::parse_scen(t, "hostile scen"))
}

fn urdf(t: &str) -> Result<(), String> {
    answer(modbot_description::UrdfModel::parse(t, "hostile urdf"))
}

fn params(t: &str) -> Result<(), String> {
    answer(modbot_ros::params::params_from_yaml(
        t,
        "hostile params",
        "controller_manager",
        "/",
    ))
}

fn launch(t: &str) -> Result<(), String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hostile_launch");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join(format!(
        "l{}_{}.launch.yaml",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&file, t).map_err(|e| e.to_string())?;
    let packages = modbot_ros::launch::modbot_packages(&root());
    let out = answer(modbot_ros::launch::resolve(&file, &[], &packages));
    let _ = std::fs::remove_file(&file);
    out
}

/// Every kind of file with the shipped files its parser accepts as they are (the Gazebo
/// launch file needs packages `modbot launch` does not provide).
fn kinds() -> Vec<Kind> {
    let k = |name, parse: Parse, seeds: Vec<(String, String)>, closed_keys| {
        let seeds: Vec<(String, String)> = seeds.into_iter().filter(|(_, t)| parse(t).is_ok()).collect();
        assert!(!seeds.is_empty(), "{name}: no shipped file parses");
        Kind {
            name,
            parse,
            seeds,
            closed_keys,
        }
    };
    let one = |p: &str| {
        let text = std::fs::read_to_string(root().join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
        vec![(p.to_string(), text)]
    };
    vec![
        k("world", world, seeds("worlds", ".yaml"), true),
        k("module catalog", catalog, one("config/modules.yaml"), true),
        k("gait file", gaits, one("config/gaits.yaml"), true),
        k("robot file", robot, seeds("config/robots", ".yaml"), true),
        k("pose sequence", poses, one("config/poses/pp2_swing.yaml"), true),
        k("MoleMOD task", task, seeds("config/molemod", ".yaml"), true),
        k("capabilities", capabilities, one("config/capabilities.yaml"), true),
        k("description config", description, one("config/description.yaml"), true),
        k(
            "Moving AI map",
            movingai_map,
            seeds("packages/modbot_planner/tests/data", ".map"),
            false,
        ),
        k(
            "Moving AI scen",
            movingai_scen,
            seeds("packages/modbot_planner/tests/data", ".scen"),
            false,
        ),
        k("URDF", urdf, seeds("urdf", ".urdf"), false),
        k("parameter file", params, seeds("config/controllers", ".yaml"), false),
        k("launch file", launch, seeds("launch", ".launch.yaml"), true),
    ]
}

/// `key: number` lines of a YAML text: (line, key, byte range of the number).
fn numeric_keys(text: &str) -> Vec<(usize, String, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut at = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let body = line.split('#').next().unwrap_or("");
        let trimmed = body.trim_start().trim_start_matches("- ");
        if let Some((key, value)) = trimmed.split_once(':') {
            let key = key.trim();
            let v = value.trim();
            let is_key = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if is_key && !v.is_empty() && v.parse::<f64>().is_ok() {
                let start = at + body.rfind(v).unwrap_or(0);
                out.push((i, key.to_string(), start..start + v.len()));
            }
        }
        at += line.len();
    }
    out
}

/// One mutation of a text.
#[derive(Debug, Clone)]
enum Mutation {
    /// The `k`-th `key: number` (mod their count) becomes this.
    Number(usize, &'static str),
    /// An unknown key first.
    UnknownKey,
    /// These bytes at this position (mod the length).
    Insert(usize, String),
    /// Cut after this many bytes (mod the length).
    Truncate(usize),
    /// Line `i` (mod the count) dropped.
    DropLine(usize),
    /// Line `i` (mod the count) twice.
    DoubleLine(usize),
    /// The text nested this deep in YAML flow lists.
    Nest(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (
            any::<usize>(),
            prop::sample::select(vec![".nan", ".inf", "-.inf", "nan", "inf", "1e308", "-1e308", "1e999"])
        )
            .prop_map(|(k, v)| Mutation::Number(k, v)),
        Just(Mutation::UnknownKey),
        (any::<usize>(), ".{0,24}").prop_map(|(p, s)| Mutation::Insert(p, s)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 0..24))
            .prop_map(|(p, b)| Mutation::Insert(p, String::from_utf8_lossy(&b).into_owned())),
        any::<usize>().prop_map(Mutation::Truncate),
        any::<usize>().prop_map(Mutation::DropLine),
        any::<usize>().prop_map(Mutation::DoubleLine),
        (1usize..5000).prop_map(Mutation::Nest),
    ]
}

/// The key an unknown-key mutation adds.
const UNKNOWN: &str = "zz_hostile_key";

/// The mutated text, and the key it must be refused naming (if any).
fn apply(text: &str, m: &Mutation) -> (String, Option<String>) {
    let floor = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    match m {
        Mutation::Number(k, v) => {
            let keys = numeric_keys(text);
            if keys.is_empty() {
                return (text.to_string(), None);
            }
            let (_, key, range) = &keys[k % keys.len()];
            let mut t = text.to_string();
            t.replace_range(range.clone(), v);
            // Finite but absurd values may be in range for some keys; non-finite never are.
            let must_name = matches!(*v, ".nan" | ".inf" | "-.inf" | "nan" | "inf" | "1e999");
            (t, must_name.then(|| key.clone()))
        }
        Mutation::UnknownKey => (format!("{UNKNOWN}: 1\n{text}"), Some(UNKNOWN.to_string())),
        Mutation::Insert(p, s) => {
            let at = floor(p % (text.len() + 1));
            (format!("{}{s}{}", &text[..at], &text[at..]), None)
        }
        Mutation::Truncate(p) => (text[..floor(p % (text.len() + 1))].to_string(), None),
        Mutation::DropLine(i) | Mutation::DoubleLine(i) => {
            let lines: Vec<&str> = text.split_inclusive('\n').collect();
            let i = i % lines.len().max(1);
            let mut out = String::new();
            for (k, l) in lines.iter().enumerate() {
                if k != i || matches!(m, Mutation::DoubleLine(_)) {
                    out.push_str(l);
                }
                if k == i && matches!(m, Mutation::DoubleLine(_)) {
                    out.push_str(l);
                }
            }
            (out, None)
        }
        Mutation::Nest(d) => (format!("{}{text}{}", "[".repeat(*d), "]".repeat(*d)), None),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    /// Every parser answers every mutation of every shipped file of its kind in bounded time
    /// without panicking; a non-finite number is refused naming its key, an unknown key
    /// naming it.
    #[test]
    fn every_parser_survives_hostile_files(kind in 0usize..13, seed in any::<usize>(), m in mutation()) {
        let kinds = kinds();
        let k = &kinds[kind % kinds.len()];
        let (path, text) = &k.seeds[seed % k.seeds.len()];
        let (hostile, must_name) = apply(text, &m);
        let parse = k.parse;
        let what = format!("{} {path} {m:?}", k.name);
        let answer = bounded(&what, move || parse(&hostile));
        let key = match (&m, must_name) {
            (Mutation::UnknownKey, Some(key)) if k.closed_keys => Some(key),
            (Mutation::Number(..), Some(key)) if k.closed_keys => Some(key),
            // A parameter file holds any node's parameters, typed by their values: a bare
            // `nan` is a string there (YAML 1.2), for the node to refuse by its type.
            (Mutation::Number(_, ".nan" | ".inf" | "-.inf"), Some(key)) if k.name == "parameter file" => Some(key),
            _ => None,
        };
        if let Some(key) = key {
            match answer {
                Ok(()) => prop_assert!(false, "{what}: accepted"),
                Err(e) => prop_assert!(e.contains(&key), "{what}: the refusal does not name `{key}`: {e}"),
            }
        }
    }

    /// Every generated message type decodes random bytes, and its default's encoding cut
    /// short or with bytes flipped, to a message or an error, never a panic or a hang.
    #[test]
    fn every_message_type_survives_hostile_cdr(
        ty in 0usize..1000,
        bytes in prop::collection::vec(any::<u8>(), 0..256),
        cut in any::<usize>(),
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 0..6),
    ) {
        let (pkg, name) = modbot_msgs::ALL_MESSAGES[ty % modbot_msgs::ALL_MESSAGES.len()];
        let ros_type = format!("{pkg}/msg/{name}");
        let t = ros_type.clone();
        let random = bounded(&ros_type, move || modbot_msgs::decode_as(&t, &bytes).map(|r| r.is_ok()));
        prop_assert!(random.is_some(), "{ros_type} is not decodable by name");

        // The default's own encoding round-trips; cut short or with bytes changed it is
        // decoded or refused.
        let t = ros_type.clone();
        let (same, damaged) = bounded(&ros_type, move || {
            let good = modbot_msgs::encoded_default(&t).and_then(Result::ok).unwrap_or_default();
            let same = modbot_msgs::decode_as(&t, &good).and_then(Result::ok) == Some(good.clone());
            let mut b = good;
            b.truncate(cut % (b.len() + 1));
            for (at, v) in &flips {
                if !b.is_empty() {
                    let n = b.len();
                    b[at % n] = *v;
                }
            }
            (same, modbot_msgs::decode_as(&t, &b).is_some())
        });
        prop_assert!(same, "{ros_type}: its default does not round-trip");
        prop_assert!(damaged);
    }
}

/// `--ros-args` lines made of the flags and fragments a node's command line may hold, in
/// any order: parsed or refused, never a panic.
#[test]
fn ros_args_survive_hostile_command_lines() {
    let words = [
        "--ros-args",
        "-r",
        "--remap",
        "-p",
        "--param",
        "--params-file",
        "-e",
        "--enclave",
        "--log-level",
        "--",
        "__node:=x",
        "__ns:=/a",
        "a:=b",
        ":=",
        "x:=",
        "p:=1e999",
        "p:=.nan",
        "p:=[1,2",
        "/no/such/file.yaml",
        "",
        "\u{0}",
        "ü:=ö",
    ];
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 500,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(
            &prop::collection::vec(prop::sample::select(words.to_vec()), 0..12),
            |line| {
                let line: Vec<String> = line.into_iter().map(str::to_string).collect();
                let what = format!("{line:?}");
                bounded(&what, move || modbot_ros::args::RosArgs::parse(line).is_ok());
                Ok(())
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
}
