// modbot_gz_dock: a dock between two wheel-foot modules in Gazebo's own physics layer, made
// and broken the way gz-sim's DetachableJoint system makes and breaks it (decision record
// 0051), under the 5 N pull of the embedded simulator's docking test
// (packages/modbot_app/tests/assemble.rs, docked_modules_hold_a_5_n_pull_and_let_go_when_detached).
//
// What gz-sim does, and what this program does the same way:
// - the models: sdformat 12 converts the URDF as `ros_gz_sim create -name NAME` does (fixed
//   joints lumped), each placed at its spawn pose, and ign-physics' DART plugin builds them
//   in the SDF world (ConstructSdfWorld, ConstructSdfModel);
// - the joints: held where they are, as gz_ros2_control holds joints without a command
//   (velocity command 0; DART's SERVO actuator, force limited by the URDF's effort limit);
// - attach: the DetachableJoint system (added at run time with the world's
//   `entity/system/add` service, which attaches at once) names parent_link (of the model it
//   is added to), child_model and child_link; gz-sim's Physics system then calls
//   AttachFixedJoint on the child link with the parent link and sets the joint's transform
//   from the parent to the pose the child has relative to the parent at that moment;
// - detach: a message on detach_topic makes the Physics system call Detach on that joint.
//
// Output: one JSON object on stdout.

#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Geometry>

#include <ignition/math/Pose3.hh>
#include <ignition/physics/FeatureList.hh>
#include <ignition/physics/FindFeatures.hh>
#include <ignition/physics/FixedJoint.hh>
#include <ignition/physics/ForwardStep.hh>
#include <ignition/physics/FrameSemantics.hh>
#include <ignition/physics/GetEntities.hh>
#include <ignition/physics/Joint.hh>
#include <ignition/physics/Link.hh>
#include <ignition/physics/RequestEngine.hh>
#include <ignition/physics/config.hh>
#include <ignition/physics/sdf/ConstructModel.hh>
#include <ignition/physics/sdf/ConstructWorld.hh>
#include <ignition/plugin/Loader.hh>
#include <sdf/Joint.hh>
#include <sdf/JointAxis.hh>
#include <sdf/Model.hh>
#include <sdf/Physics.hh>
#include <sdf/Root.hh>
#include <sdf/World.hh>

#include "harness.hh"

namespace phys = ignition::physics;

using DockFeatures = phys::FeatureList<
    phys::GetEntities,
    phys::ForwardStep,
    phys::GetBasicJointState,
    phys::SetJointVelocityCommandFeature,
    phys::LinkFrameSemantics,
    phys::AddLinkExternalForceTorque,
    phys::FixedJointCast,
    phys::AttachFixedJointFeature,
    phys::SetJointTransformFromParentFeature,
    phys::DetachJointFeature,
    phys::sdf::ConstructSdfWorld,
    phys::sdf::ConstructSdfModel>;

using EnginePtr = phys::Engine3dPtr<DockFeatures>;
using WorldPtr = phys::World3dPtr<DockFeatures>;
using ModelPtr = phys::Model3dPtr<DockFeatures>;
using LinkPtr = phys::Link3dPtr<DockFeatures>;
using JointPtr = phys::Joint3dPtr<DockFeatures>;

namespace {

using harness::Fail;

std::string Usage()
{
  return R"(usage: modbot_gz_dock --world WORLD.sdf --robot MODULE.urdf [options]
  --parent-model NAME --parent-link LINK --parent-pose X,Y,Z,YAW_DEG
                      the model the DetachableJoint system is added to, its link, its spawn pose
  --child-model NAME --child-link LINK --child-pose X,Y,Z,YAW_DEG
                      the system's child_model and child_link, and the child's spawn pose
  --pull-link LINK    the child's link the pull acts on (at its origin)
  --pull FX,FY        the pull, N, world frame (default -5,0)
  --settle S          time before the attach, s (default 0.3)
  --hold S            time pulled while attached, s (default 2)
  --free S            time pulled after the detach, s (default 2)
  --attach yes|no     no: the same pulls with no dock (a reference; default yes)
  --plugin PATH       ign-physics engine plugin (default: the DART plugin)
)";
}

struct Options
{
  std::string world, robot, plugin;
  std::string parentModel, parentLink, childModel, childLink, pullLink;
  std::vector<double> parentPose, childPose, pull{-5.0, 0.0};
  double settle = 0.3, hold = 2.0, free = 2.0;
  bool attach = true;
};

std::vector<double> Numbers(const std::string &_opt, const std::string &_v, std::size_t _n)
{
  std::vector<double> out;
  if (_v.empty() || _v.back() == ',')
    Fail("option " + _opt + ": expected " + std::to_string(_n) + " comma-separated numbers, got " + _v);
  std::stringstream s(_v);
  std::string item;
  while (std::getline(s, item, ','))
  {
    char *end = nullptr;
    const double d = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !std::isfinite(d))
      Fail("option " + _opt + ": not a number: " + item);
    out.push_back(d);
  }
  if (out.size() != _n)
    Fail("option " + _opt + ": expected " + std::to_string(_n) + " comma-separated numbers, got " + _v);
  return out;
}

Options Parse(int argc, char **argv)
{
  Options o;
  o.plugin = std::string(IGNITION_PHYSICS_ENGINE_INSTALL_DIR) +
             "/libignition-physics5-dartsim-plugin.so";
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help")
    {
      std::cout << Usage();
      std::exit(0);
    }
    if (i + 1 >= argc)
      Fail("option " + a + " needs a value\n" + Usage());
    const std::string v = argv[++i];
    auto seconds = [&](double &_d) {
      _d = Numbers(a, v, 1)[0];
      if (_d < 0 || _d > 600)
        Fail("option " + a + ": a time in [0, 600] s, not " + v);
    };
    if (a == "--world") o.world = v;
    else if (a == "--robot") o.robot = v;
    else if (a == "--plugin") o.plugin = v;
    else if (a == "--parent-model") o.parentModel = v;
    else if (a == "--parent-link") o.parentLink = v;
    else if (a == "--child-model") o.childModel = v;
    else if (a == "--child-link") o.childLink = v;
    else if (a == "--pull-link") o.pullLink = v;
    else if (a == "--parent-pose") o.parentPose = Numbers(a, v, 4);
    else if (a == "--child-pose") o.childPose = Numbers(a, v, 4);
    else if (a == "--pull") o.pull = Numbers(a, v, 2);
    else if (a == "--settle") seconds(o.settle);
    else if (a == "--attach")
    {
      if (v != "yes" && v != "no")
        Fail("--attach: yes or no, not " + v);
      o.attach = v == "yes";
    }
    else if (a == "--hold") seconds(o.hold);
    else if (a == "--free") seconds(o.free);
    else Fail("unknown option " + a + "\n" + Usage());
  }
  for (const auto &[name, value] : {std::pair{"--world", o.world}, {"--robot", o.robot},
                                     {"--parent-model", o.parentModel}, {"--parent-link", o.parentLink},
                                     {"--child-model", o.childModel}, {"--child-link", o.childLink},
                                     {"--pull-link", o.pullLink}})
    if (value.empty())
      Fail(std::string(name) + " is required\n" + Usage());
  if (o.parentPose.empty() || o.childPose.empty())
    Fail("--parent-pose and --child-pose are required\n" + Usage());
  if (o.parentModel == o.childModel)
    Fail("--parent-model and --child-model must differ (one model cannot dock to itself)");
  for (double f : o.pull)
    if (std::abs(f) > 100)
      Fail("--pull: each component within ±100 N");
  return o;
}

struct Spawn
{
  sdf::Root root;
  ModelPtr model;
  std::vector<JointPtr> joints;
};

LinkPtr LinkOf(const Spawn &_s, const std::string &_model, const std::string &_link)
{
  LinkPtr l = _s.model->GetLink(_link);
  if (!l)
  {
    std::string known;
    for (std::size_t i = 0; i < _s.model->GetLinkCount(); ++i)
      known += (known.empty() ? "" : ", ") + _s.model->GetLink(i)->GetName();
    Fail("model " + _model + " has no link " + _link + " after the URDF conversion (links: " + known + ")");
  }
  return l;
}

Eigen::Isometry3d PoseOf(const LinkPtr &_l)
{
  return _l->FrameDataRelativeToWorld().pose;
}

std::string Num(double _v)
{
  std::ostringstream s;
  s << std::setprecision(6) << _v;
  return s.str();
}

}  // namespace

int main(int argc, char **argv)
{
  harness::Program() = "modbot_gz_dock";
  const Options opt = Parse(argc, argv);

  sdf::Root worldRoot;
  const sdf::World &sdfWorld = harness::LoadWorld(worldRoot, opt.world);
  const double step = harness::WorldStep(sdfWorld);

  ignition::plugin::Loader loader;
  EnginePtr engine = harness::LoadEngine<DockFeatures>(loader, opt.plugin);
  WorldPtr world = engine->ConstructWorld(sdfWorld);
  if (!world)
    Fail("ConstructWorld failed for " + opt.world);

  Spawn spawns[2];
  const std::string models[2] = {opt.parentModel, opt.childModel};
  const std::vector<double> poses[2] = {opt.parentPose, opt.childPose};
  for (int k = 0; k < 2; ++k)
  {
    const sdf::Model &m = harness::LoadSpawned(
        spawns[k].root, opt.robot, models[k],
        ignition::math::Pose3d(poses[k][0], poses[k][1], poses[k][2], 0, 0, poses[k][3] * M_PI / 180.0));
    spawns[k].model = world->ConstructModel(m);
    if (!spawns[k].model)
      Fail("ConstructModel failed for " + models[k]);
    for (uint64_t i = 0; i < m.JointCount(); ++i)
    {
      const sdf::Joint *j = m.JointByIndex(i);
      if (j->Type() == sdf::JointType::FIXED || !j->Axis(0))
        continue;
      JointPtr jp = spawns[k].model->GetJoint(j->Name());
      if (!jp)
        Fail("the physics has no joint " + j->Name() + " in " + models[k]);
      spawns[k].joints.push_back(jp);
    }
  }
  const LinkPtr parent = LinkOf(spawns[0], models[0], opt.parentLink);
  const LinkPtr child = LinkOf(spawns[1], models[1], opt.childLink);
  const LinkPtr pulled = LinkOf(spawns[1], models[1], opt.pullLink);

  phys::ForwardStep::Output output;
  phys::ForwardStep::State state;
  phys::ForwardStep::Input input;
  input.Get<std::chrono::steady_clock::duration>() =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(step));
  const Eigen::Vector3d pull(opt.pull[0], opt.pull[1], 0.0);
  double t = 0;
  auto run = [&](double _seconds, bool _pull) {
    const long n = std::lround(_seconds / step);
    for (long i = 0; i < n; ++i)
    {
      for (auto &s : spawns)
        for (auto &j : s.joints)
          j->SetVelocityCommand(0, 0.0);
      if (_pull)
        pulled->AddExternalForce(pull);
      world->Step(output, state, input);
      t += step;
    }
  };
  // The child's pose relative to the parent link, and how far it has come from `_rel0`.
  auto rel = [&]() { return PoseOf(parent).inverse() * PoseOf(child); };
  auto apart = [&](const Eigen::Isometry3d &_rel0) { return (rel().translation() - _rel0.translation()).norm(); };
  auto turned = [&](const Eigen::Isometry3d &_rel0) {
    return Eigen::AngleAxisd(_rel0.linear().transpose() * rel().linear()).angle() * 180.0 / M_PI;
  };

  run(opt.settle, false);
  // Attach as gz-sim's Physics system does for a DetachableJoint component.
  const Eigen::Isometry3d rel0 = rel();
  JointPtr dock;
  if (opt.attach)
    dock = child->AttachFixedJoint(parent, "detachable_joint");
  if (opt.attach && !dock)
    Fail("AttachFixedJoint refused " + models[1] + "::" + opt.childLink + " to " + models[0] + "::" + opt.parentLink);
  if (dock)
    dock->SetTransformFromParent(rel0);
  const Eigen::Vector3d start = PoseOf(pulled).translation();
  run(opt.hold, true);
  const double heldApart = apart(rel0), heldTurned = turned(rel0);
  const double heldMoved = (PoseOf(pulled).translation() - start).head<2>().norm();
  // Detach as the Physics system does on a message on detach_topic.
  if (dock)
    dock->Detach();
  const Eigen::Vector3d detachedAt = PoseOf(pulled).translation();
  run(opt.free, true);
  const double freeApart = apart(rel0);
  const double freeMoved = (PoseOf(pulled).translation() - detachedAt).head<2>().norm();
  const double parentMoved = (PoseOf(parent).translation() - Eigen::Vector3d(opt.parentPose[0], opt.parentPose[1], opt.parentPose[2])).head<2>().norm();

  std::cout << "{\"step_s\": " << Num(step) << ", \"time_s\": " << Num(t)
            << ", \"attached_at_s\": " << Num(opt.settle)
            << ", \"held_apart_m\": " << Num(heldApart)
            << ", \"held_turned_deg\": " << Num(heldTurned)
            << ", \"held_moved_m\": " << Num(heldMoved)
            << ", \"free_apart_m\": " << Num(freeApart)
            << ", \"free_moved_m\": " << Num(freeMoved)
            << ", \"parent_moved_m\": " << Num(parentMoved)
            << ", \"child_z_m\": " << Num(PoseOf(pulled).translation().z())
            << ", \"parent_z_m\": " << Num(PoseOf(parent).translation().z()) << "}" << std::endl;
  return 0;
}
