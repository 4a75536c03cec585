// modbot_gz_physics: one shipped world and one robot description in Gazebo's own physics
// layer, driven by a joint trajectory that `modbot gait` exports, measured with the embedded
// simulator's protocol (packages/modbot_sim/src/measure.rs). Decision record 0042.
//
// What Gazebo does, and what this program does the same way:
// - the world: sdformat 12 loads the SDF world, ign-physics' ConstructSdfWorld builds it in
//   the DART plugin (the engine gz-sim uses by default), with the world's max_step_size;
// - the robot: sdformat 12 converts the URDF as `ros_gz_sim create` does (fixed joints
//   lumped, <gazebo reference> friction moved onto the lumped collisions), the model is
//   placed at the spawn pose and ConstructSdfModel builds it;
// - the joints: gz_ros2_control's position command interface (GazeboSimSystem::write in
//   gz_system.cpp): every physics step, joint velocity command
//   v = position_proportional_gain * update_rate * (command - position), where command and
//   position are the values of the last controller-manager update (update_rate Hz, where
//   read() and ForwardCommandController's update happen); gz-sim passes v to the physics
//   as JointVelocityCmd, DART runs the joint as a SERVO actuator whose force is limited by
//   the URDF's effort limit. Joints without a trajectory column are held with velocity 0
//   (gz_ros2_control's hold_joints). `--law servo` is modbot's own servo model instead
//   (speed = kp (target - angle) from the angle of this step, clipped to the URDF velocity
//   limit, packages/modbot_sim/src/robot.rs `Servo`), for explaining differences.
//
// Closed loop (`--controller modbot control GAIT --robot R ...`): instead of a trajectory,
// a modbot controller runs as a child process and is asked at every controller-manager
// update, over its line protocol (packages/modbot/src/control_cmd.rs), for the joint
// targets given the robot's state: the gait node's logic driving the physics, as it drives
// gz-sim over ROS. Joints it names as velocity joints take its speeds as gz_ros2_control's
// velocity command interface does (the joint velocity command, every step). Cycles end when
// it says one has completed; `--reference base` measures the root link's origin (the
// wheel-foot robots' reference point) instead of the CoM.
//
// Output: one JSON object on stdout.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <Eigen/Geometry>

#include <ignition/math/Pose3.hh>
#include <ignition/math/eigen3/Conversions.hh>
#include <ignition/physics/FindFeatures.hh>
#include <ignition/physics/ForwardStep.hh>
#include <ignition/physics/FrameSemantics.hh>
#include <ignition/physics/GetEntities.hh>
#include <ignition/physics/Joint.hh>
#include <ignition/physics/RequestEngine.hh>
#include <ignition/physics/config.hh>
#include <ignition/physics/sdf/ConstructModel.hh>
#include <ignition/physics/sdf/ConstructWorld.hh>
#include <ignition/plugin/Loader.hh>
#include <sdf/Element.hh>
#include <sdf/Joint.hh>
#include <sdf/JointAxis.hh>
#include <sdf/Link.hh>
#include <sdf/Model.hh>
#include <sdf/Physics.hh>
#include <sdf/Root.hh>
#include <sdf/World.hh>

namespace phys = ignition::physics;

#include "dart_contact.hh"
#include "harness.hh"

using EnginePtr = phys::Engine3dPtr<Features>;
using ModelPtr = phys::Model3dPtr<Features>;
using LinkPtr = phys::Link3dPtr<Features>;
using JointPtr = phys::Joint3dPtr<Features>;

namespace {

using harness::Fail;

std::string Usage()
{
  return R"(usage: modbot_gz_physics --world WORLD.sdf --robot ROBOT.urdf|.sdf [options]
  --trajectory FILE   CSV from `modbot gait ... --out FILE.csv`: time_s, one column per joint (rad);
                      without it the joints are held at 0 (a settle)
  --duration S        simulated time (default: the trajectory's last time, or 2 s)
  --step S            physics step (default: the world's max_step_size)
  --x --y --z M       spawn position of the model (default 0 0 0.05, launch/gazebo.launch.yaml)
  --yaw-deg D         spawn yaw (default 0)
  --law L             gz_ros2_control (default) or servo (modbot's Servo model)
  --update-rate HZ    controller_manager update_rate (default 100, config/controllers/*.yaml)
  --gain G            gz_ros2_control position_proportional_gain (default 0.1: kp = G * rate)
  --kp K              servo law's P gain, 1/s (default 8.6, config/modules.yaml y1)
  --period T --warmup N --cycles N
                      the measurement protocol (default: no cycle measurement)
  --head-link NAME    link whose point --head-offset is the chain's head (default: the
                      child link of the last trajectory joint)
  --head-offset X     head point along the head link's x axis, m (default 0.036, a Y1 half)
  --plugin PATH       ign-physics engine plugin (default: the DART plugin)
  --samples FILE      write the control-rate samples as CSV
  --collision-detector D
                      DART only, for experiments: ode (the plugin's, default), fcl,
                      fcl-primitive, bullet or dart
  --lcp-solver S      DART only, for experiments: dantzig (the plugin's, default) or pgs
  --reference R       com (default) or base: what a step measures, the CoM or the root
                      link's origin (the wheel-foot robots' reference point)
  --initial NAME=RAD  a joint's initial position, as gz_ros2_control sets it from the
                      URDF's initial_value (run.py passes them; repeat for each joint); spawn
                      the model at the height of that pose (--z)
  --controller CMD... the rest of the command line is a modbot controller to run closed
                      loop (`modbot control GAIT --robot R`); then --cycles counts the cycles
                      it reports, after --warmup of them, and --duration (default 120 s) is the
                      longest the run may take
)";
}

struct Options
{
  std::string world, robot, trajectory, plugin, samples, headLink;
  std::string collisionDetector, lcpSolver;  // empty: the plugin's own
  std::string reference = "com";
  std::vector<std::string> controller;  // argv of a closed-loop controller
  std::vector<std::pair<std::string, double>> initial;  // --initial NAME=RAD
  double duration = -1, step = -1, x = 0, y = 0, z = 0.05, yawDeg = 0;
  std::string law = "gz_ros2_control";
  double updateRate = 100, gain = 0.1, kp = 8.6;
  double period = 0;
  int warmup = 2, cycles = 0;
  double headOffset = 0.036;
};

Options Parse(int argc, char **argv)
{
  Options o;
  o.plugin = std::string(IGNITION_PHYSICS_ENGINE_INSTALL_DIR) +
             "/libignition-physics5-dartsim-plugin.so";
  for (int i = 1; i < argc; ++i)
  {
    std::string a = argv[i];
    if (a == "-h" || a == "--help")
    {
      std::cout << Usage();
      std::exit(0);
    }
    if (a == "--controller")
    {
      o.controller.assign(argv + i + 1, argv + argc);
      if (o.controller.empty())
        Fail("--controller needs a command");
      break;
    }
    if (i + 1 >= argc)
      Fail("option " + a + " needs a value\n" + Usage());
    std::string v = argv[++i];
    auto num = [&](double &_d) {
      char *end = nullptr;
      _d = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !std::isfinite(_d))
        Fail("option " + a + ": not a number: " + v);
    };
    double d;
    if (a == "--world") o.world = v;
    else if (a == "--robot") o.robot = v;
    else if (a == "--trajectory") o.trajectory = v;
    else if (a == "--plugin") o.plugin = v;
    else if (a == "--samples") o.samples = v;
    else if (a == "--head-link") o.headLink = v;
    else if (a == "--law") o.law = v;
    else if (a == "--reference") o.reference = v;
    else if (a == "--initial")
    {
      const auto eq = v.find('=');
      char *end = nullptr;
      const double q = eq == std::string::npos ? NAN : std::strtod(v.c_str() + eq + 1, &end);
      if (eq == std::string::npos || eq == 0 || end == v.c_str() + eq + 1 || *end != '\0' ||
          !std::isfinite(q))
        Fail("--initial " + v + ": expected NAME=RAD with a finite angle");
      o.initial.emplace_back(v.substr(0, eq), q);
    }
    else if (a == "--collision-detector") o.collisionDetector = v;
    else if (a == "--lcp-solver") o.lcpSolver = v;
    else if (a == "--duration") num(o.duration);
    else if (a == "--step") num(o.step);
    else if (a == "--x") num(o.x);
    else if (a == "--y") num(o.y);
    else if (a == "--z") num(o.z);
    else if (a == "--yaw-deg") num(o.yawDeg);
    else if (a == "--update-rate") num(o.updateRate);
    else if (a == "--gain") num(o.gain);
    else if (a == "--kp") num(o.kp);
    else if (a == "--period") num(o.period);
    else if (a == "--head-offset") num(o.headOffset);
    else if (a == "--warmup") { num(d); o.warmup = static_cast<int>(d); }
    else if (a == "--cycles") { num(d); o.cycles = static_cast<int>(d); }
    else Fail("unknown option " + a + "\n" + Usage());
  }
  if (o.world.empty() || o.robot.empty())
    Fail("--world and --robot are required\n" + Usage());
  if (o.law != "gz_ros2_control" && o.law != "servo")
    Fail("--law must be gz_ros2_control or servo, not " + o.law);
  if (o.reference != "com" && o.reference != "base")
    Fail("--reference must be com or base, not " + o.reference);
  if (!o.controller.empty() && !o.trajectory.empty())
    Fail("--trajectory and --controller exclude each other");
  if (o.updateRate <= 0 || o.warmup < 0 || o.cycles < 0)
    Fail("--update-rate must be > 0, --warmup and --cycles >= 0");
  return o;
}

struct Trajectory
{
  std::vector<std::string> joints;
  std::vector<double> times;
  std::vector<std::vector<double>> rows;

  /// The last sample at or before `_t` (ForwardCommandController keeps the latest command).
  const std::vector<double> &At(double _t) const
  {
    auto it = std::upper_bound(times.begin(), times.end(), _t + 1e-9);
    std::size_t k = it == times.begin() ? 0 : static_cast<std::size_t>(it - times.begin()) - 1;
    return rows[k];
  }
};

Trajectory ReadTrajectory(const std::string &_path)
{
  std::ifstream in(_path);
  if (!in)
    Fail("cannot read trajectory " + _path);
  Trajectory t;
  std::string line;
  if (!std::getline(in, line))
    Fail("empty trajectory " + _path);
  {
    std::stringstream s(line);
    std::string cell;
    std::getline(s, cell, ',');
    if (cell != "time_s")
      Fail(_path + ": the first column must be time_s (modbot gait --format csv)");
    while (std::getline(s, cell, ','))
      t.joints.push_back(cell);
  }
  while (std::getline(in, line))
  {
    if (line.empty())
      continue;
    std::stringstream s(line);
    std::string cell;
    std::vector<double> row;
    std::getline(s, cell, ',');
    t.times.push_back(std::stod(cell));
    while (std::getline(s, cell, ','))
      row.push_back(std::stod(cell));
    if (row.size() != t.joints.size())
      Fail(_path + ": a row with " + std::to_string(row.size()) + " values for " +
           std::to_string(t.joints.size()) + " joints");
    t.rows.push_back(row);
  }
  if (t.rows.empty())
    Fail(_path + ": no samples");
  return t;
}

double Unwrap(double _prev, double _raw)
{
  double d = std::remainder(_raw - _prev, 2 * M_PI);
  return _prev + d;
}

struct Sample
{
  double t;
  Eigen::Vector3d com;
  Eigen::Vector3d point;  // what a step measures: the CoM or the root's origin (--reference)
  double heading, roll;
  double tiltDeg;
  bool finite;
};

std::string Num(double _v)
{
  if (!std::isfinite(_v))
    return "null";
  std::ostringstream s;
  s << std::setprecision(10) << _v;
  return s.str();
}

std::string Vec(const Eigen::Vector3d &_v)
{
  return "[" + Num(_v.x()) + ", " + Num(_v.y()) + ", " + Num(_v.z()) + "]";
}

std::string Str(const std::string &_s)
{
  std::string o = "\"";
  for (char c : _s)
  {
    if (c == '"' || c == '\\')
      o += '\\';
    o += c;
  }
  return o + "\"";
}

/// A closed-loop controller in a child process, spoken to over its standard input and output
/// with modbot's control protocol (packages/modbot/src/control_cmd.rs).
class ChildController
{
public:
  std::vector<std::string> names;
  std::vector<bool> velocity;

  explicit ChildController(const std::vector<std::string> &_argv) : command(_argv.front())
  {
    int toChild[2], fromChild[2];
    if (pipe(toChild) != 0 || pipe(fromChild) != 0)
      Fail("cannot make the controller's pipes");
    pid = fork();
    if (pid < 0)
      Fail("cannot start the controller " + command);
    if (pid == 0)
    {
      dup2(toChild[0], 0);
      dup2(fromChild[1], 1);
      for (int fd : {toChild[0], toChild[1], fromChild[0], fromChild[1]})
        close(fd);
      std::vector<char *> args;
      for (const auto &a : _argv)
        args.push_back(const_cast<char *>(a.c_str()));
      args.push_back(nullptr);
      execvp(args[0], args.data());
      std::cerr << "modbot_gz_physics: cannot run " << command << std::endl;
      _exit(127);
    }
    close(toChild[0]);
    close(fromChild[1]);
    out = fdopen(toChild[1], "w");
    in = fdopen(fromChild[0], "r");
    std::istringstream h(ReadLine());
    std::string magic;
    int version = 0;
    std::size_t n = 0;
    if (!(h >> magic >> version >> n) || magic != "modbot-control" || version != 1)
      Fail(command + " did not start with a modbot-control 1 header");
    for (std::size_t i = 0; i < n; ++i)
    {
      std::string word;
      if (!(h >> word))
        Fail("the controller's header names fewer than its " + std::to_string(n) + " joints");
      const auto colon = word.rfind(':');
      const std::string mode = colon == std::string::npos ? "" : word.substr(colon + 1);
      if (mode != "position" && mode != "velocity")
        Fail("the controller's header: `" + word + "` is not name:position or name:velocity");
      names.push_back(word.substr(0, colon));
      velocity.push_back(mode == "velocity");
    }
  }

  ~ChildController()
  {
    if (out)
      std::fclose(out);
    if (in)
      std::fclose(in);
    if (pid > 0)
      waitpid(pid, nullptr, 0);
  }

  /// One tick: the state line out, the completed cycles and one target per joint back.
  void Tick(const std::string &_state, long &_cycles, std::vector<double> &_targets)
  {
    std::fputs(_state.c_str(), out);
    std::fputc('\n', out);
    std::fflush(out);
    std::istringstream r(ReadLine());
    if (!(r >> _cycles) || _cycles < 0)
      Fail("the controller's answer does not start with its cycle count");
    _targets.resize(names.size());
    for (auto &t : _targets)
      if (!(r >> t) || !std::isfinite(t))
        Fail("the controller's answer holds fewer than " + std::to_string(names.size()) +
             " finite targets");
  }

private:
  std::string command;
  pid_t pid = -1;
  FILE *out = nullptr, *in = nullptr;

  std::string ReadLine()
  {
    char *line = nullptr;
    std::size_t cap = 0;
    const ssize_t len = getline(&line, &cap, in);
    if (len < 0)
    {
      std::free(line);
      int status = 0;
      waitpid(pid, &status, 0);
      pid = -1;
      Fail("the controller " + command + " stopped (exit status " +
           std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "; its message is above)");
    }
    std::string s(line, static_cast<std::size_t>(len));
    std::free(line);
    return s;
  }
};

}  // namespace

int main(int argc, char **argv)
{
  harness::Program() = "modbot_gz_physics";
  const Options opt = Parse(argc, argv);
  std::signal(SIGPIPE, SIG_IGN);  // a controller that has stopped is reported, not a signal
  const auto wallStart = std::chrono::steady_clock::now();

  // The world, as gz-sim reads it.
  sdf::Root worldRoot;
  const sdf::World &sdfWorld = harness::LoadWorld(worldRoot, opt.world);
  const double step = opt.step > 0 ? opt.step : harness::WorldStep(sdfWorld);

  // The robot: URDF converted by sdformat (as `ros_gz_sim create` does), spawned at the
  // pose given, then loaded again from the SDF text with that pose, as gz-sim's
  // entity factory does.
  sdf::Root robotRoot;
  const sdf::Model &sdfModel = harness::LoadSpawned(
      robotRoot, opt.robot, "", ignition::math::Pose3d(opt.x, opt.y, opt.z, 0, 0, opt.yawDeg * M_PI / 180.0));

  // The DART plugin, loaded as gz-sim's Physics system loads it.
  ignition::plugin::Loader loader;
  std::string pluginName;
  EnginePtr engine = harness::LoadEngine<Features>(loader, opt.plugin, &pluginName);

  WorldPtr world = engine->ConstructWorld(sdfWorld);
  if (!world)
    Fail("ConstructWorld failed for " + opt.world);
  std::string dartError;
  const std::string dartSetup =
      ConfigureDart(world, opt.collisionDetector, opt.lcpSolver, dartError);
  if (!dartError.empty())
    Fail(dartError);
  ModelPtr model = world->ConstructModel(sdfModel);
  if (!model)
    Fail("ConstructModel failed for " + opt.robot);

  // Links: their masses and centres of mass (after the fixed-joint lumping), the root.
  struct LinkInfo
  {
    std::string name;
    LinkPtr link;
    double mass;
    Eigen::Isometry3d inertial;
  };
  std::vector<LinkInfo> links;
  double totalMass = 0;
  for (uint64_t i = 0; i < sdfModel.LinkCount(); ++i)
  {
    const sdf::Link *l = sdfModel.LinkByIndex(i);
    LinkPtr lp = model->GetLink(l->Name());
    if (!lp)
      Fail("the physics has no link " + l->Name());
    const double m = l->Inertial().MassMatrix().Mass();
    links.push_back({l->Name(), lp, m, ignition::math::eigen3::convert(l->Inertial().Pose())});
    totalMass += m;
  }
  const std::string rootName = sdfModel.CanonicalLinkName().empty()
                                   ? sdfModel.LinkByIndex(0)->Name()
                                   : sdfModel.CanonicalLinkName();
  LinkPtr rootLink = model->GetLink(rootName);

  // Joints: every non-fixed joint of the model, with its limits.
  struct JointInfo
  {
    std::string name;
    JointPtr joint;
    int column = -1;  // trajectory column, -1: held
    double lower, upper, effort, velocity;
    double posRead = 0, cmd = 0;
    bool speed = false;  // a closed-loop controller's velocity joint: cmd is its speed
    double maxSpeed = 0, maxErr = 0, sumErr2 = 0;
    long errCount = 0;
  };
  Trajectory traj;
  if (!opt.trajectory.empty())
    traj = ReadTrajectory(opt.trajectory);
  std::unique_ptr<ChildController> controller;
  if (!opt.controller.empty())
    controller = std::make_unique<ChildController>(opt.controller);
  std::vector<JointInfo> joints;
  std::map<std::string, std::string> childOf;
  for (uint64_t i = 0; i < sdfModel.JointCount(); ++i)
  {
    const sdf::Joint *j = sdfModel.JointByIndex(i);
    childOf[j->Name()] = j->ChildLinkName();
    if (j->Type() == sdf::JointType::FIXED || !j->Axis(0))
      continue;
    JointInfo ji;
    ji.name = j->Name();
    ji.joint = model->GetJoint(j->Name());
    if (!ji.joint)
      Fail("the physics has no joint " + j->Name());
    ji.lower = j->Axis(0)->Lower();
    ji.upper = j->Axis(0)->Upper();
    ji.effort = j->Axis(0)->Effort();
    ji.velocity = j->Axis(0)->MaxVelocity();
    for (std::size_t c = 0; c < traj.joints.size(); ++c)
      if (traj.joints[c] == ji.name)
        ji.column = static_cast<int>(c);
    if (controller)
      for (std::size_t c = 0; c < controller->names.size(); ++c)
        if (controller->names[c] == ji.name)
        {
          ji.column = static_cast<int>(c);
          ji.speed = controller->velocity[c];
        }
    ji.posRead = ji.joint->GetPosition(0);
    ji.cmd = ji.posRead;
    joints.push_back(ji);
  }
  // gz_ros2_control's initial_value: each joint set before the first step.
  for (const auto &[name, q] : opt.initial)
  {
    auto it = std::find_if(joints.begin(), joints.end(),
                           [&](const JointInfo &_j) { return _j.name == name; });
    if (it == joints.end())
      Fail("--initial names joint " + name + ", which " + opt.robot + " has not (or it is fixed)");
    it->joint->SetPosition(0, q);
    it->posRead = it->cmd = q;
  }
  for (const auto &name : traj.joints)
  {
    bool found = false;
    for (const auto &j : joints)
      found = found || j.name == name;
    if (!found)
      Fail("the trajectory names joint " + name + ", which " + opt.robot +
           " has not (or it is fixed)");
  }
  // The controller's joints in its order (each must be one of the model's).
  std::vector<JointInfo *> controlled;
  if (controller)
    for (const auto &name : controller->names)
    {
      JointInfo *found = nullptr;
      for (auto &j : joints)
        if (j.name == name)
          found = &j;
      if (!found)
        Fail("the controller drives joint " + name + ", which " + opt.robot +
             " has not (or it is fixed)");
      controlled.push_back(found);
    }

  // The head point: --head-link, else the child of the last trajectory joint.
  std::string headName = opt.headLink;
  if (headName.empty() && !traj.joints.empty())
    headName = childOf[traj.joints.back()];
  LinkPtr headLink = headName.empty() ? LinkPtr() : model->GetLink(headName);
  if (!headName.empty() && !headLink)
    Fail("no link " + headName + " for the head point");

  double duration = opt.duration;
  if (duration <= 0)
    duration = controller ? 120.0 : traj.times.empty() ? 2.0 : traj.times.back();

  const long stepsPerUpdate =
      std::max(1L, std::lround(1.0 / (opt.updateRate * step)));
  const long totalSteps = std::lround(duration / step);
  const double kpGz = opt.gain * opt.updateRate;

  phys::ForwardStep::Output output;
  phys::ForwardStep::State state;
  phys::ForwardStep::Input input;
  input.Get<std::chrono::steady_clock::duration>() =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(step));

  auto measure = [&](double _t, const Sample *_prev, const Eigen::Vector3d &_up0) {
    Sample s;
    s.t = _t;
    Eigen::Vector3d c = Eigen::Vector3d::Zero();
    for (const auto &l : links)
    {
      const Eigen::Isometry3d pose = l.link->FrameDataRelativeToWorld().pose;
      c += l.mass * (pose * l.inertial).translation();
    }
    s.com = c / totalMass;
    const Eigen::Isometry3d root = rootLink->FrameDataRelativeToWorld().pose;
    s.point = opt.reference == "base" ? Eigen::Vector3d(root.translation()) : s.com;
    const Eigen::Vector3d tail = root.translation();
    Eigen::Vector3d head = tail + root.linear() * Eigen::Vector3d::UnitX();
    if (headLink)
      head = headLink->FrameDataRelativeToWorld().pose *
             Eigen::Vector3d(opt.headOffset, 0, 0);
    const Eigen::Vector3d o = head - tail;
    // Roll: the root's up axis about the tail->head axis, from upright (measure.rs).
    const Eigen::Vector3d axis = o.normalized();
    const Eigen::Vector3d up = root.linear() * Eigen::Vector3d::UnitZ();
    const Eigen::Vector3d ref = Eigen::Vector3d::UnitZ() - axis * axis.z();
    const Eigen::Vector3d side = axis.cross(ref);
    const Eigen::Vector3d u = up - axis * up.dot(axis);
    const double rollRaw = std::atan2(u.dot(side), u.dot(ref));
    const double headingRaw = std::atan2(o.y(), o.x());
    s.heading = _prev ? Unwrap(_prev->heading, headingRaw) : headingRaw;
    s.roll = _prev ? Unwrap(_prev->roll, rollRaw) : rollRaw;
    const Eigen::Vector3d worldUp = root.linear().transpose() * Eigen::Vector3d::UnitZ();
    s.tiltDeg = std::acos(std::clamp(worldUp.dot(_up0), -1.0, 1.0)) * 180.0 / M_PI;
    s.finite = s.com.allFinite() && std::isfinite(s.heading) && std::isfinite(s.roll);
    return s;
  };

  const Eigen::Vector3d up0 =
      rootLink->FrameDataRelativeToWorld().pose.linear().transpose() * Eigen::Vector3d::UnitZ();
  std::vector<Sample> samples;
  samples.push_back(measure(0.0, nullptr, up0));
  bool finite = samples.back().finite;

  std::ofstream samplesOut;
  if (!opt.samples.empty())
  {
    samplesOut.open(opt.samples);
    samplesOut << "time_s,com_x_m,com_y_m,com_z_m,heading_rad,roll_rad";
    for (const auto &j : joints)
      samplesOut << "," << j.name << "_target," << j.name << "_angle_rad";
    samplesOut << "\n";
  }
  auto writeSample = [&](const Sample &_s) {
    if (!samplesOut.is_open())
      return;
    samplesOut << _s.t << "," << _s.com.x() << "," << _s.com.y() << "," << _s.com.z() << ","
               << _s.heading << "," << _s.roll;
    for (const auto &j : joints)
      samplesOut << "," << j.cmd << "," << j.joint->GetPosition(0);
    samplesOut << "\n";
  };

  // The controller-manager update at t = 0: read, then the command. A closed-loop
  // controller is sent the state and answers the targets; its cycle ends are the marks.
  std::vector<double> marks{0.0};
  long cyclesDone = 0;
  // Cycles with a mark (the controller's count, never taken back).
  auto marked = [&] { return static_cast<long>(marks.size()) - 1; };
  std::vector<double> targets;
  auto update = [&](double _t) {
    for (auto &j : joints)
    {
      j.posRead = j.joint->GetPosition(0);
      if (j.column >= 0 && !controller)
        j.cmd = traj.At(_t)[static_cast<std::size_t>(j.column)];
    }
    if (!controller)
      return;
    const Eigen::Isometry3d root = rootLink->FrameDataRelativeToWorld().pose;
    const Eigen::Quaterniond q(root.linear());
    std::ostringstream line;
    line << std::setprecision(17) << _t << " " << root.translation().x() << " "
         << root.translation().y() << " " << root.translation().z() << " " << q.w() << " "
         << q.x() << " " << q.y() << " " << q.z();
    for (const JointInfo *j : controlled)
      line << " " << j->posRead;
    for (const JointInfo *j : controlled)
      line << " " << j->joint->GetVelocity(0);
    controller->Tick(line.str(), cyclesDone, targets);
    for (std::size_t c = 0; c < controlled.size(); ++c)
      controlled[c]->cmd = targets[c];
    while (marked() < cyclesDone)
      marks.push_back(_t);
  };
  const bool closedLoopMeasure = controller && opt.cycles > 0;
  update(0.0);
  writeSample(samples.back());

  double maxLinkHeight = -std::numeric_limits<double>::infinity();
  ContactCount contacts;  // after the warm-up (all steps without --period)
  for (long k = 1; k <= totalSteps; ++k)
  {
    // PreUpdate: gz_ros2_control's write(), every physics step.
    for (auto &j : joints)
    {
      double v = 0;
      if (j.column < 0)
        v = 0.0;  // gz_ros2_control's hold_joints: no command for this joint
      else if (j.speed)
        v = j.cmd;  // the velocity command interface: the speed itself
      else if (opt.law == "gz_ros2_control")
        v = kpGz * (j.cmd - j.posRead);
      else
      {
        const double lim = j.velocity > 0 ? j.velocity : std::numeric_limits<double>::infinity();
        v = std::clamp(opt.kp * (j.cmd - j.joint->GetPosition(0)), -lim, lim);
      }
      j.joint->SetVelocityCommand(0, v);
    }
    world->Step(output, state, input);
    const double t = k * step;
    if (closedLoopMeasure ? marked() >= opt.warmup
                          : t >= opt.warmup * opt.period - 1e-9)
      CountContacts(world, contacts);
    for (auto &j : joints)
    {
      j.maxSpeed = std::max(j.maxSpeed, std::abs(j.joint->GetVelocity(0)));
    }
    // PostUpdate: the controller manager's read() and update() at its rate.
    if (k % stepsPerUpdate == 0)
    {
      update(t);
      Sample s = measure(t, &samples.back(), up0);
      finite = finite && s.finite;
      for (auto &j : joints)
      {
        if (j.column < 0 || j.speed)
          continue;
        const double e = std::abs(j.cmd - j.joint->GetPosition(0));
        if (std::isfinite(e))
        {
          j.maxErr = std::max(j.maxErr, e);
          j.sumErr2 += e * e;
          ++j.errCount;
        }
      }
      for (const auto &l : links)
        maxLinkHeight =
            std::max(maxLinkHeight, l.link->FrameDataRelativeToWorld().pose.translation().z());
      samples.push_back(s);
      writeSample(s);
      if (!finite)
        break;
      if (closedLoopMeasure && marked() >= opt.warmup + opt.cycles)
        break;  // the cycles asked for are done
    }
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();

  // The protocol: boundaries at k * period, the first sample at or after each.
  std::ostringstream cyclesJson;
  bool measured = false;
  double localX = 0, localY = 0, meanChord = 0;
  double stepX = NAN, stepY = NAN, headingPerCycle = NAN, rollPerCycle = NAN;
  double hMin = INFINITY, hMax = -INFINITY, hSum = 0, rollMin = INFINITY, rollMax = -INFINITY;
  long hCount = 0;
  double tiltMax = 0;
  for (const auto &s : samples)
    tiltMax = std::max(tiltMax, s.tiltDeg);
  // Cycle k's start: k periods, or a closed-loop controller's k-th cycle end.
  auto boundary = [&](int _k) {
    if (!controller)
      return _k * opt.period;
    return _k <= marked() ? marks[static_cast<std::size_t>(_k)] : INFINITY;
  };
  const bool enoughCycles =
      controller ? marked() >= opt.warmup + opt.cycles : opt.period > 0;
  double periodMeasured = opt.period;
  if (enoughCycles && opt.cycles > 0)
  {
    auto at = [&](double _t) -> const Sample * {
      for (const auto &s : samples)
        if (s.t >= _t - 1e-9)
          return &s;
      return nullptr;
    };
    const double gamma0 = samples.front().heading;
    auto body = [&](const Sample &_b, const Sample &_a) {
      const double dx = _b.point.x() - _a.point.x(), dy = _b.point.y() - _a.point.y();
      return std::make_pair(std::cos(gamma0) * dx + std::sin(gamma0) * dy,
                            -std::sin(gamma0) * dx + std::cos(gamma0) * dy);
    };
    const Sample *s0 = at(boundary(opt.warmup));
    const Sample *s1 = at(boundary(opt.warmup + opt.cycles));
    periodMeasured = (boundary(opt.warmup + opt.cycles) - boundary(opt.warmup)) / opt.cycles;
    if (s0 && s1)
    {
      measured = true;
      cyclesJson << "[";
      for (int c = 0; c < opt.cycles; ++c)
      {
        const Sample *a = at(boundary(opt.warmup + c));
        const Sample *b = at(boundary(opt.warmup + c + 1));
        auto [dx, dy] = body(*b, *a);
        // The same step in the body frame of the cycle's start (heading at its start).
        const double ddx = b->point.x() - a->point.x(), ddy = b->point.y() - a->point.y();
        const double lx = std::cos(a->heading) * ddx + std::sin(a->heading) * ddy;
        const double ly = -std::sin(a->heading) * ddx + std::cos(a->heading) * ddy;
        localX += lx / opt.cycles;
        localY += ly / opt.cycles;
        meanChord += std::hypot(lx, ly) / opt.cycles;
        cyclesJson << (c ? ", " : "") << "{\"dx_m\": " << Num(dx) << ", \"dy_m\": " << Num(dy) << ", \"local_dx_m\": " << Num(lx)
                   << ", \"local_dy_m\": " << Num(ly)
                   << ", \"dheading_deg\": " << Num((b->heading - a->heading) * 180 / M_PI)
                   << ", \"droll_deg\": " << Num((b->roll - a->roll) * 180 / M_PI) << "}";
      }
      cyclesJson << "]";
      auto [dx, dy] = body(*s1, *s0);
      stepX = dx / opt.cycles;
      stepY = dy / opt.cycles;
      headingPerCycle = (s1->heading - s0->heading) * 180 / M_PI / opt.cycles;
      rollPerCycle = (s1->roll - s0->roll) * 180 / M_PI / opt.cycles;
      for (const auto &s : samples)
        if (s.t >= s0->t - 1e-9 && s.t <= s1->t + 1e-9)
        {
          hMin = std::min(hMin, s.com.z());
          hMax = std::max(hMax, s.com.z());
          hSum += s.com.z();
          ++hCount;
          rollMin = std::min(rollMin, s.roll);
          rollMax = std::max(rollMax, s.roll);
        }
    }
  }

  const Sample &first = samples.front(), &last = samples.back();
  std::ostringstream j;
  j << "{\n";
  j << "  \"engine\": " << Str(pluginName) << ",\n";
  j << "  \"plugin\": " << Str(opt.plugin) << ",\n";
  j << "  \"world\": " << Str(opt.world) << ",\n";
  j << "  \"world_name\": " << Str(sdfWorld.Name()) << ",\n";
  j << "  \"world_models\": " << sdfWorld.ModelCount() << ",\n";
  j << "  \"robot\": " << Str(opt.robot) << ",\n";
  j << "  \"model_name\": " << Str(sdfModel.Name()) << ",\n";
  j << "  \"links\": " << links.size() << ",\n";
  j << "  \"mass_kg\": " << Num(totalMass) << ",\n";
  j << "  \"root_link\": " << Str(rootName) << ",\n";
  j << "  \"head_link\": " << Str(headName) << ",\n";
  j << "  \"spawn\": {\"xyz\": " << Vec(Eigen::Vector3d(opt.x, opt.y, opt.z))
    << ", \"yaw_deg\": " << Num(opt.yawDeg) << "},\n";
  j << "  \"physics_step_s\": " << Num(step) << ",\n";
  j << "  \"reference\": " << Str(opt.reference) << ",\n";
  if (controller)
  {
    j << "  \"controller\": " << Str(opt.controller.front()) << ",\n";
    j << "  \"cycles_completed\": " << cyclesDone << ",\n";
  }
  j << "  \"dart\": " << Str(dartSetup) << ",\n";
  if (contacts.steps > 0)
  {
    j << "  \"contacts\": {\"steps\": " << contacts.steps << ", \"points_per_step\": "
      << Num(double(contacts.points) / contacts.steps) << ", \"pairs_per_step\": "
      << Num(double(contacts.pairs) / contacts.steps) << ", \"pairs_by_points\": [";
    for (int n = 0; n <= 8; ++n)
      j << (n ? ", " : "") << contacts.histogram[n];
    j << "]},\n";
  }
  j << "  \"simulated_s\": " << Num(last.t) << ",\n";
  j << "  \"wall_s\": " << Num(wall) << ",\n";
  j << "  \"law\": {\"name\": " << Str(opt.law) << ", \"update_rate_hz\": " << Num(opt.updateRate)
    << ", \"kp_per_s\": " << Num(opt.law == "servo" ? opt.kp : kpGz)
    << ", \"position_proportional_gain\": " << Num(opt.gain) << "},\n";
  j << "  \"joints\": [";
  for (std::size_t i = 0; i < joints.size(); ++i)
  {
    const auto &ji = joints[i];
    const double rms = ji.errCount ? std::sqrt(ji.sumErr2 / ji.errCount) : 0.0;
    j << (i ? ",\n    " : "\n    ") << "{\"name\": " << Str(ji.name)
      << ", \"driven\": " << (ji.column >= 0 ? "true" : "false")
      << ", \"lower\": " << Num(ji.lower) << ", \"upper\": " << Num(ji.upper)
      << ", \"effort\": " << Num(ji.effort) << ", \"velocity\": " << Num(ji.velocity)
      << ", \"max_speed\": " << Num(ji.maxSpeed) << ", \"max_error_rad\": " << Num(ji.maxErr)
      << ", \"rms_error_rad\": " << Num(rms) << "}";
  }
  j << "\n  ],\n";
  j << "  \"finite\": " << (finite ? "true" : "false") << ",\n";
  j << "  \"start\": {\"com\": " << Vec(first.com) << ", \"heading_deg\": "
    << Num(first.heading * 180 / M_PI) << ", \"roll_deg\": " << Num(first.roll * 180 / M_PI)
    << "},\n";
  j << "  \"end\": {\"com\": " << Vec(last.com) << ", \"heading_deg\": "
    << Num(last.heading * 180 / M_PI) << ", \"roll_deg\": " << Num(last.roll * 180 / M_PI)
    << "},\n";
  j << "  \"heading_change_deg\": " << Num((last.heading - first.heading) * 180 / M_PI) << ",\n";
  j << "  \"roll_change_deg\": " << Num((last.roll - first.roll) * 180 / M_PI) << ",\n";
  j << "  \"max_tilt_deg\": " << Num(tiltMax) << ",\n";
  j << "  \"max_link_height_m\": " << Num(maxLinkHeight) << ",\n";
  if (measured)
  {
    j << "  \"report\": {\"period_s\": " << Num(periodMeasured) << ", \"warmup_cycles\": "
      << opt.warmup << ", \"cycles\": " << opt.cycles << ", \"step_x_m\": " << Num(stepX)
      << ", \"step_y_m\": " << Num(stepY)
      << ", \"step_m\": " << Num(std::hypot(stepX, stepY))
      << ", \"local_step_x_m\": " << Num(localX) << ", \"local_step_y_m\": " << Num(localY)
      << ", \"mean_chord_m\": " << Num(meanChord)
      << ", \"heading_change_deg\": " << Num(headingPerCycle)
      << ", \"roll_per_cycle_deg\": " << Num(rollPerCycle)
      << ", \"roll_range_deg\": " << Num((rollMax - rollMin) * 180 / M_PI)
      << ", \"com_height_mean_m\": " << Num(hSum / hCount)
      << ", \"com_height_min_m\": " << Num(hMin) << ", \"com_height_max_m\": " << Num(hMax)
      << ",\n    \"per_cycle\": " << cyclesJson.str() << "}\n";
  }
  else
    j << "  \"report\": null\n";
  j << "}\n";
  std::cout << j.str();
  return finite ? 0 : 1;
}
