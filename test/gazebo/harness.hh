// What modbot_gz_physics and modbot_gz_dock share: how they fail, and how they load a
// world, a robot and the physics engine the way gz-sim does (sdformat 12 reads the world,
// converts the URDF as `ros_gz_sim create` does, and the Physics system loads the engine
// plugin and asks it for the features the program needs).
#pragma once

#include <cstdlib>
#include <iostream>
#include <set>
#include <sstream>
#include <string>

#include <ignition/math/Pose3.hh>
#include <ignition/physics/FindFeatures.hh>
#include <ignition/physics/RequestEngine.hh>
#include <ignition/plugin/Loader.hh>
#include <sdf/Model.hh>
#include <sdf/Physics.hh>
#include <sdf/Root.hh>
#include <sdf/World.hh>

namespace harness
{

/// The program's name in its error messages (set once at the start of main).
inline std::string &Program()
{
  static std::string name = "modbot_gz";
  return name;
}

/// The message on stderr, exit status 2.
[[noreturn]] inline void Fail(const std::string &_msg)
{
  std::cerr << Program() << ": " << _msg << std::endl;
  std::exit(2);
}

/// sdformat's errors, one per line.
inline std::string Errors(const sdf::Errors &_errors)
{
  std::ostringstream s;
  for (const auto &e : _errors)
    s << "  " << e.Message() << "\n";
  return s.str();
}

/// The one world of an SDF file, loaded into `_root` (which must outlive it).
inline const sdf::World &LoadWorld(sdf::Root &_root, const std::string &_path)
{
  const sdf::Errors errors = _root.Load(_path);
  if (!errors.empty())
    Fail("sdformat could not load " + _path + ":\n" + Errors(errors));
  if (_root.WorldCount() != 1)
    Fail(_path + " holds no world");
  return *_root.WorldByIndex(0);
}

/// The world's physics step (its default physics' max step size), else 1 ms.
inline double WorldStep(const sdf::World &_world)
{
  const sdf::Physics *p = _world.PhysicsDefault();
  return p ? p->MaxStepSize() : 0.001;
}

/// The URDF converted by sdformat as `ros_gz_sim create` converts it (fixed joints lumped),
/// renamed to `_name` (empty: its own name) and placed at `_pose`, then loaded again from
/// that SDF text into `_root` (which must outlive the model) as gz-sim's entity factory does.
inline const sdf::Model &LoadSpawned(sdf::Root &_root, const std::string &_urdf, const std::string &_name,
                                     const ignition::math::Pose3d &_pose)
{
  sdf::Root urdf;
  sdf::Errors errors = urdf.Load(_urdf);
  if (!errors.empty())
    Fail("sdformat could not load " + _urdf + ":\n" + Errors(errors));
  if (!urdf.Model())
    Fail(_urdf + " holds no model");
  sdf::ElementPtr model = urdf.Element()->GetElement("model");
  if (!_name.empty())
    model->GetAttribute("name")->Set(_name);
  model->GetElement("pose")->Set<ignition::math::Pose3d>(_pose);
  errors = _root.LoadSdfString(urdf.Element()->ToString(""));
  if (!errors.empty())
    Fail("sdformat could not load the converted " + _urdf + ":\n" + Errors(errors));
  return *_root.Model();
}

/// The engine of the plugin at `_plugin` with the features `Features`, loaded as gz-sim's
/// Physics system loads it; `_loader` must outlive the engine. `_name`, when given, receives
/// the name of the plugin class that provides it.
template <typename Features>
ignition::physics::Engine3dPtr<Features> LoadEngine(ignition::plugin::Loader &_loader, const std::string &_plugin,
                                                    std::string *_name = nullptr)
{
  if (_loader.LoadLib(_plugin).empty())
    Fail("could not load the physics plugin " + _plugin);
  const std::set<std::string> names = ignition::physics::FindFeatures3d<Features>::From(_loader);
  if (names.empty())
    Fail(_plugin + " does not provide the features " + Program() + " needs");
  auto engine = ignition::physics::RequestEngine3d<Features>::From(_loader.Instantiate(*names.begin()));
  if (!engine)
    Fail("could not instantiate " + *names.begin());
  if (_name)
    *_name = *names.begin();
  return engine;
}

}  // namespace harness
