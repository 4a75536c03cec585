// The physics features modbot_gz_physics uses, and the DART-specific experiment switches
// of dart_contact.cpp (decision record 0042).
#ifndef MODBOT_GZ_DART_CONTACT_HH_
#define MODBOT_GZ_DART_CONTACT_HH_

#include <string>

#include <ignition/physics/FeatureList.hh>
#include <ignition/physics/ForwardStep.hh>
#include <ignition/physics/FrameSemantics.hh>
#include <ignition/physics/GetEntities.hh>
#include <ignition/physics/Joint.hh>
#include <ignition/physics/RequestEngine.hh>
#include <ignition/physics/sdf/ConstructModel.hh>
#include <ignition/physics/sdf/ConstructWorld.hh>

using Features = ignition::physics::FeatureList<
    ignition::physics::GetEntities,
    ignition::physics::ForwardStep,
    ignition::physics::GetBasicJointState,
    ignition::physics::SetBasicJointState,
    ignition::physics::SetJointVelocityCommandFeature,
    ignition::physics::LinkFrameSemantics,
    ignition::physics::sdf::ConstructSdfWorld,
    ignition::physics::sdf::ConstructSdfModel>;

using WorldPtr = ignition::physics::World3dPtr<Features>;

/// Switch the DART world's collision detector (ode, fcl, fcl-primitive, bullet, dart) and
/// boxed-LCP solver (dantzig, pgs); empty: leave the plugin's. Returns what the world then
/// uses ("" if it is not a DART world); sets `_error` on a bad name.
std::string ConfigureDart(const WorldPtr &_world, const std::string &_detector,
                          const std::string &_solver, std::string &_error);

/// Contacts of the last step: points, touching shape pairs, pairs by their point count.
struct ContactCount
{
  long steps = 0, points = 0, pairs = 0;
  long histogram[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};  // [n]: pairs with n points (8: 8 or more)
};

/// Add the last step's contacts to `_count`; false if `_world` is not a DART world.
bool CountContacts(const WorldPtr &_world, ContactCount &_count);

#endif
