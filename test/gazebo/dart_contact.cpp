// dart_contact: the DART-specific experiment switches of modbot_gz_physics (decision record
// 0042, "Where they disagree"). ign-physics 5's DART plugin always gives its worlds DART's
// ODE collision detector and the Dantzig boxed-LCP solver; the SDF's
// <physics><dart><collision_detector> and <solver><solver_type> are read by later Gazebo
// releases (gz-physics 6+ WorldFeatures) but not by this one. The plugin's RetrieveWorld
// feature hands out the dart::simulation::World, so the harness can make the same switches
// itself, with DART's own classes, for explaining differences. Kept in its own translation
// unit: DART's headers are heavy, and the two files build in parallel.

#include "dart_contact.hh"

#include <map>
#include <memory>
#include <utility>

#include <dart/collision/CollisionObject.hpp>
#include <dart/collision/CollisionResult.hpp>
#include <dart/collision/bullet/BulletCollisionDetector.hpp>
#include <dart/collision/dart/DARTCollisionDetector.hpp>
#include <dart/collision/fcl/FCLCollisionDetector.hpp>
#include <dart/collision/ode/OdeCollisionDetector.hpp>
#include <dart/constraint/BoxedLcpConstraintSolver.hpp>
#include <dart/constraint/ConstraintSolver.hpp>
#include <dart/constraint/DantzigBoxedLcpSolver.hpp>
#include <dart/constraint/PgsBoxedLcpSolver.hpp>
#include <dart/simulation/World.hpp>

#include <ignition/physics/RequestFeatures.hh>
#include <ignition/physics/dartsim/World.hh>

namespace phys = ignition::physics;

namespace {

using DartFeatures = phys::FeatureList<phys::dartsim::RetrieveWorld>;

dart::simulation::WorldPtr Dart(const WorldPtr &_world)
{
  auto w = phys::RequestFeatures<DartFeatures>::From(_world);
  return w ? w->GetDartsimWorld() : nullptr;
}

}  // namespace

std::string ConfigureDart(const WorldPtr &_world, const std::string &_detector,
                          const std::string &_solver, std::string &_error)
{
  dart::simulation::WorldPtr w = Dart(_world);
  if (!w)
  {
    if (!_detector.empty() || !_solver.empty())
      _error = "--collision-detector and --lcp-solver need the DART plugin";
    return "";
  }
  auto *cs = w->getConstraintSolver();
  if (!_detector.empty())
  {
    std::shared_ptr<dart::collision::CollisionDetector> d;
    if (_detector == "ode")
      d = dart::collision::OdeCollisionDetector::create();
    else if (_detector == "fcl")
      d = dart::collision::FCLCollisionDetector::create();
    else if (_detector == "fcl-primitive")
    {
      auto f = dart::collision::FCLCollisionDetector::create();
      f->setPrimitiveShapeType(dart::collision::FCLCollisionDetector::PRIMITIVE);
      d = f;
    }
    else if (_detector == "bullet")
      d = dart::collision::BulletCollisionDetector::create();
    else if (_detector == "dart")
      d = dart::collision::DARTCollisionDetector::create();
    else
    {
      _error = "--collision-detector must be ode, fcl, fcl-primitive, bullet or dart, not " +
               _detector;
      return "";
    }
    cs->setCollisionDetector(d);
  }
  auto *boxed = dynamic_cast<dart::constraint::BoxedLcpConstraintSolver *>(cs);
  if (!_solver.empty())
  {
    if (!boxed)
    {
      _error = "the DART world has no boxed-LCP constraint solver";
      return "";
    }
    if (_solver == "dantzig")
      boxed->setBoxedLcpSolver(std::make_shared<dart::constraint::DantzigBoxedLcpSolver>());
    else if (_solver == "pgs")
      boxed->setBoxedLcpSolver(std::make_shared<dart::constraint::PgsBoxedLcpSolver>());
    else
    {
      _error = "--lcp-solver must be dantzig or pgs, not " + _solver;
      return "";
    }
  }
  std::string desc = "collision detector " + cs->getCollisionDetector()->getType();
  if (boxed)
    desc += ", LCP solver " + boxed->getBoxedLcpSolver()->getType();
  return desc;
}

bool CountContacts(const WorldPtr &_world, ContactCount &_count)
{
  static thread_local dart::simulation::WorldPtr cached;
  static thread_local const void *key = nullptr;
  if (key != _world.operator->())
  {
    cached = Dart(_world);
    key = _world.operator->();
  }
  if (!cached)
    return false;
  const auto &result = cached->getLastCollisionResult();
  std::map<std::pair<const void *, const void *>, int> pairs;
  for (const auto &c : result.getContacts())
  {
    const void *a = c.collisionObject1->getShapeFrame();
    const void *b = c.collisionObject2->getShapeFrame();
    if (b < a)
      std::swap(a, b);
    ++pairs[{a, b}];
  }
  _count.steps += 1;
  _count.points += static_cast<long>(result.getNumContacts());
  _count.pairs += static_cast<long>(pairs.size());
  for (const auto &p : pairs)
  {
    const int n = p.second < 8 ? p.second : 8;
    _count.histogram[n] += 1;
  }
  return true;
}
