//! `modbot teleop`: drive a robot from the keyboard of a terminal. The keys become the
//! inputs teleop_node reads from `cmd_vel`, mapped by the same `modbot_app::teleop`
//! (decision record 0041), and the gait commands go straight to gait_node on
//! `gait/command` over DDS (the `dds` backend the other ROS commands use), so gait_node
//! (with sim_node, Gazebo or a robot) is all it needs. Holding a key keeps the robot moving
//! (the terminal repeats it: the key repeat is the dead-man); no key for `--timeout`
//! stops it. The terminal is put back as it was on every way out: Esc, Ctrl-C, an error
//! or a panic; a moving robot is stopped on the way out too.

use std::io::{IsTerminal as _, Write as _};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::{cursor, execute, queue, style, terminal};
use modbot_app::GaitRequest;
use modbot_app::teleop::{Teleop, TeleopInput, TeleopProfile, TeleopSettings, describe};
use modbot_msgs::modbot_msgs::msg::GaitCommand;
use modbot_ros::dds::DdsTransport;
use modbot_ros::nodes::teleop::gait_command;
use modbot_ros::params::{NoParams, ParamMap};
use modbot_ros::{Pub, Qos, RosArgs, Transport};

use crate::common::{BadInput, ConfigArgs, finite, positive};

#[derive(Debug, clap::Args)]
pub struct TeleopArgs {
    /// The robot gait_node drives: a preset (pp:N, py:N, pyp, quadruped, wheeled) or a robot file.
    #[arg(long, default_value = "pp:8")]
    pub robot: String,
    #[command(flatten)]
    pub config: ConfigArgs,
    /// The robot's ROS namespace (its gait_node's), e.g. /snake1.
    #[arg(long, default_value = "/")]
    pub namespace: String,
    /// The topic gait_node reads, relative to the namespace.
    #[arg(long, default_value = "gait/command")]
    pub topic: String,
    /// Seconds without a key before the robot stops; keep it above the terminal's key-repeat
    /// delay (often 0.25 to 0.6 s), so a held key keeps the robot going.
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0, value_parser = positive)]
    pub timeout: f64,
    /// While moving, re-send the command this often for gait_node's watchdog, s (0: never).
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0, value_parser = finite)]
    pub heartbeat: f64,
    /// Speed at start, percent of the robot's top speed (10 to 100; + and - change it by 10).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(10..=100))]
    pub speed: u32,
}

/// How often the dead-man and the heartbeat are looked at while no key comes.
const TICK: Duration = Duration::from_millis(50);

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Key {
    /// Move: ahead, to the left, anticlockwise, each −1, 0 or 1 (times the speed).
    Move([f64; 3]),
    Stop,
    Faster,
    Slower,
    Quit,
    Other,
}

fn key(k: &KeyEvent) -> Key {
    if k.kind == KeyEventKind::Release {
        return Key::Other;
    }
    // Raw mode turns Ctrl-C into a key, not a signal.
    if k.modifiers.contains(KeyModifiers::CONTROL) {
        return match k.code {
            KeyCode::Char('c' | 'C' | 'd' | 'D') => Key::Quit,
            _ => Key::Other,
        };
    }
    match k.code {
        KeyCode::Up | KeyCode::Char('w' | 'W') => Key::Move([1.0, 0.0, 0.0]),
        KeyCode::Down | KeyCode::Char('s' | 'S') => Key::Move([-1.0, 0.0, 0.0]),
        KeyCode::Left | KeyCode::Char('a' | 'A') => Key::Move([0.0, 0.0, 1.0]),
        KeyCode::Right | KeyCode::Char('d' | 'D') => Key::Move([0.0, 0.0, -1.0]),
        KeyCode::Char('q' | 'Q' | ',' | '<') => Key::Move([0.0, 1.0, 0.0]),
        KeyCode::Char('e' | 'E' | '.' | '>') => Key::Move([0.0, -1.0, 0.0]),
        KeyCode::Char(' ') => Key::Stop,
        KeyCode::Char('+' | '=') => Key::Faster,
        KeyCode::Char('-' | '_') => Key::Slower,
        KeyCode::Esc => Key::Quit,
        _ => Key::Other,
    }
}

/// Puts the terminal back: cooked mode, the main screen, the cursor shown. Safe to call
/// more than once.
fn restore_terminal() {
    let _ = terminal::disable_raw_mode();
    let _ = execute!(std::io::stdout(), terminal::LeaveAlternateScreen, cursor::Show);
}

/// The terminal in raw mode on the alternate screen with the cursor hidden, put back when
/// dropped (an error unwinds through it) and by the panic hook, before a panic's message.
struct Screen;

impl Screen {
    fn enter() -> Result<Screen> {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore_terminal();
            previous(info);
        }));
        terminal::enable_raw_mode().context("switching the terminal to raw mode")?;
        let screen = Screen;
        execute!(std::io::stdout(), terminal::EnterAlternateScreen, cursor::Hide)
            .context("switching to the terminal's alternate screen")?;
        Ok(screen)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// The program's state: the teleoperation, the publisher and what the status shows. A
/// moving robot is stopped when it is dropped, whatever ended the program.
struct Ui<P: Pub<GaitCommand>> {
    teleop: Teleop,
    publisher: P,
    /// The first status line.
    title: String,
    /// Percent of the top speed.
    speed: u32,
    /// The direction of the last movement key.
    held: [f64; 3],
    sent: u64,
    error: Option<String>,
    start: Instant,
    dirty: bool,
}

impl<P: Pub<GaitCommand>> Ui<P> {
    fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    fn send(&mut self, r: &GaitRequest) {
        match self.publisher.publish(gait_command(r)) {
            Ok(()) => self.sent += 1,
            Err(e) => self.error = Some(e.to_string()),
        }
        self.dirty = true;
    }

    /// A movement key (or, all zero, the stop key) at the current speed.
    fn input(&mut self, direction: [f64; 3]) -> Result<()> {
        let full = self.teleop.settings().full;
        let s = f64::from(self.speed) / 100.0;
        let input = TeleopInput::new(
            direction[0] * s * full.linear_m_s,
            direction[1] * s * full.lateral_m_s,
            direction[2] * s * full.angular_rad_s,
        );
        let now = self.now();
        if let Some(r) = self.teleop.input(now, input).map_err(|e| anyhow!("{e}"))? {
            self.send(&r);
        }
        Ok(())
    }

    /// A speed step; a moving robot takes the new speed at once.
    fn set_speed(&mut self, speed: u32) -> Result<()> {
        self.speed = speed.clamp(10, 100);
        self.dirty = true;
        let moving = self.teleop.current().is_some_and(|r| !r.stop) && !self.teleop.timed_out();
        if moving { self.input(self.held) } else { Ok(()) }
    }

    /// The dead-man and the heartbeat.
    fn tick(&mut self) {
        let now = self.now();
        if let Some(r) = self.teleop.tick(now) {
            self.send(&r);
        }
    }

    fn lines(&self) -> Vec<String> {
        let s = self.teleop.settings();
        let command = match self.teleop.current() {
            None => "none yet (press a key)".to_string(),
            Some(r) if r.stop && self.teleop.timed_out() => format!("stop (no key for {} s)", s.timeout_s),
            Some(r) => describe(r),
        };
        let mut lines = vec![
            self.title.clone(),
            format!("speed {} %   stops {} s after the last key", self.speed, s.timeout_s),
            format!("command: {command}"),
            format!("gait commands sent: {}", self.sent),
            String::new(),
            "W/Up forward   S/Down back   A/Left turn left   D/Right turn right".into(),
            "Q/, sideways left   E/. sideways right   space stop   +/- speed   Esc/Ctrl-C quit".into(),
        ];
        if let Some(e) = &self.error {
            lines.push(format!("error: {e}"));
        }
        lines
    }

    /// Redraws the status in place.
    fn draw(&mut self) -> Result<()> {
        self.dirty = false;
        let mut out = std::io::stdout().lock();
        queue!(out, cursor::MoveTo(0, 0), terminal::Clear(terminal::ClearType::All))?;
        for line in self.lines() {
            queue!(out, style::Print(line), cursor::MoveToNextLine(1))?;
        }
        out.flush().context("writing to the terminal")
    }
}

impl<P: Pub<GaitCommand>> Drop for Ui<P> {
    fn drop(&mut self) {
        let now = self.now();
        if let Some(r) = self.teleop.release(now) {
            if self.publisher.publish(gait_command(&r)).is_ok() {
                // DDS sends from its own threads: give the stop time to leave before the
                // process ends.
                std::thread::sleep(Duration::from_millis(300));
            }
        }
    }
}

/// Keys until Esc or Ctrl-C.
fn drive<P: Pub<GaitCommand>>(ui: &mut Ui<P>) -> Result<()> {
    ui.draw()?;
    loop {
        if event::poll(TICK).context("reading the terminal")? {
            if let Event::Key(k) = event::read().context("reading the terminal")? {
                match key(&k) {
                    Key::Quit => return Ok(()),
                    Key::Move(direction) => {
                        ui.held = direction;
                        ui.input(direction)?;
                    }
                    Key::Stop => ui.input([0.0; 3])?,
                    Key::Faster => ui.set_speed(ui.speed + 10)?,
                    Key::Slower => ui.set_speed(ui.speed.saturating_sub(10))?,
                    Key::Other => {}
                }
            }
            // Any event (a resize too) redraws.
            ui.dirty = true;
        }
        ui.tick();
        if ui.dirty {
            ui.draw()?;
        }
    }
}

pub fn run(args: &TeleopArgs) -> Result<()> {
    // Checked first: off a terminal nothing else is of use.
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(BadInput(
            "modbot teleop reads the keyboard of a terminal, and its standard input or output is not one: \
             run it in a terminal (to drive a robot from a program, publish geometry_msgs/Twist on cmd_vel \
             to teleop_node)"
                .into(),
        )
        .into());
    }
    if args.heartbeat < 0.0 {
        return Err(BadInput(format!(
            "--heartbeat {}: expected seconds >= 0 (0: no heartbeat)",
            args.heartbeat
        ))
        .into());
    }
    let catalog = args.config.catalog()?;
    let topology =
        modbot_app::load_robot(&args.robot, &catalog).map_err(|e| BadInput(format!("--robot {}: {e}", args.robot)))?;
    let profile = TeleopProfile::of(&topology).map_err(|e| BadInput(e.to_string()))?;
    let mut settings = TeleopSettings::for_profile(profile);
    settings.timeout_s = args.timeout;
    settings.heartbeat_s = args.heartbeat;
    let teleop = Teleop::new(profile, settings).map_err(|e| BadInput(e.to_string()))?;

    let ns = args.namespace.trim_end_matches('/');
    let namespace = match ns {
        "" => None,
        n if n.starts_with('/') => Some(n.to_string()),
        n => Some(format!("/{n}")),
    };
    if let Some(n) = namespace.as_deref().filter(|n| !modbot_ros::args::valid_name(n)) {
        return Err(BadInput(format!("--namespace {n}: not a ROS namespace")).into());
    }
    let ros = RosArgs {
        node_name: Some("modbot_teleop".into()),
        namespace,
        ..RosArgs::default()
    };
    let mut node = DdsTransport::start::<NoParams>("modbot_teleop", &ros, &ParamMap::new())
        .map_err(|e| anyhow!("joining the ROS graph: {e}"))?;
    let publisher = node
        .publisher::<GaitCommand>(&args.topic, Qos::Reliable)
        .map_err(|e| BadInput(format!("--topic {}: {e}", args.topic)))?;
    let topic = node.resolve(&args.topic);
    let mut ui = Ui {
        title: format!(
            "modbot teleop: {} as a {} ({}) -> {topic}",
            args.robot,
            profile.name(),
            profile.gaits().join(", ")
        ),
        teleop,
        publisher,
        speed: args.speed,
        held: [0.0; 3],
        sent: 0,
        error: None,
        start: Instant::now(),
        dirty: true,
    };
    let screen = Screen::enter()?;
    let outcome = drive(&mut ui);
    let sent = ui.sent;
    drop(ui);
    drop(screen);
    let plural = if sent == 1 { "" } else { "s" };
    println!("modbot teleop: {sent} gait command{plural} sent on {topic}; the robot holds its pose");
    outcome
}
