#!/usr/bin/env bash
# Builds packages/modbot_msgs with rosidl (C, C++, Python and Fast DDS typesupport) against
# the ROS 2 Jazzy wheels of a virtualenv, and installs it into PREFIX, so that rclpy (and rcl)
# can use GaitCommand, GaitState, SubGoal, StrategicPlan and the Plan service.
#
#   test/interop/build_modbot_msgs.sh VENV PREFIX
#   PYTHONPATH=PREFIX/lib/python3.11/site-packages LD_LIBRARY_PATH=PREFIX/lib VENV/bin/python ...
#
# Two shims, both for how the wheels were built: the CMake targets std_msgs and friends
# export name the wheel builder's Python and numpy include folders under
# /opt/python/cp311-cp311; we point those paths at this machine's (symlinks, root needed).
set -euo pipefail
V=$(realpath "$1"); PREFIX=$(realpath -m "$2")
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/../.." && pwd)
"$V/bin/pip" install -q -r "$HERE/requirements.txt" -r "$HERE/requirements-rosidl.txt"

PYVER=$("$V/bin/python" -c 'import sys;print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
PYTAG=cp${PYVER/./}
PYINC=$("$V/bin/python" -c 'import sysconfig;print(sysconfig.get_paths()["include"])')
NPINC=$("$V/bin/python" -c 'import numpy;print(numpy.get_include())')
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
OPT=/opt/python/$PYTAG-$PYTAG
$SUDO mkdir -p "$OPT/include" "$OPT/lib/python$PYVER/site-packages/numpy/_core"
$SUDO ln -sfn "$PYINC" "$OPT/include/python$PYVER"
$SUDO ln -sfn "$NPINC" "$OPT/lib/python$PYVER/site-packages/numpy/_core/include"

SP=$(echo "$V"/lib/python3.*/site-packages)
export LD_LIBRARY_PATH="$V/lib:$(ls -d "$SP"/ros_*.libs | paste -sd:)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export AMENT_PREFIX_PATH="$V" PATH="$V/bin:$PATH"
BUILD="$PREFIX.build"
rm -rf "$BUILD" "$PREFIX"
cmake -S "$ROOT/packages/modbot_msgs" -B "$BUILD" -DCMAKE_PREFIX_PATH="$V" -DCMAKE_INSTALL_PREFIX="$PREFIX" \
  -DPython3_EXECUTABLE="$V/bin/python" -DBUILD_TESTING=OFF >"$BUILD.log" 2>&1 || { cat "$BUILD.log"; exit 1; }
cmake --build "$BUILD" -j2 >>"$BUILD.log" 2>&1 || { tail -50 "$BUILD.log"; exit 1; }
cmake --install "$BUILD" >>"$BUILD.log" 2>&1 || { tail -50 "$BUILD.log"; exit 1; }
PYTHONPATH="$PREFIX/lib/python$PYVER/site-packages" LD_LIBRARY_PATH="$PREFIX/lib:$LD_LIBRARY_PATH" \
  "$V/bin/python" -c 'from modbot_msgs.msg import GaitCommand; from modbot_msgs.srv import Plan' \
  || { echo "modbot_msgs built but does not import"; exit 1; }
# Packages with no wheel whose interfaces modbot speaks, built from modbot_msgs' copies of
# their definitions so that rcl-based peers (the r2r backend) and rclpy have the typesupport:
# tf2_msgs/TFMessage (sim_node's tf) and controller_manager_msgs/SwitchController (the
# controller switch of the robot interface, record 0063). A package the venv has is kept.
# one_package NAME VERSION FILE DEPENDENCY
one_package() {
  local name=$1 version=$2 file=$3 dep=$4
  if "$V/bin/python" -c "import $name" >/dev/null 2>&1 || [ -f "$PREFIX/share/$name/package.xml" ]; then
    return
  fi
  local src="$BUILD/${name}_src"; mkdir -p "$src/$(dirname "$file")"
  cp "$ROOT/packages/modbot_msgs/interfaces/$name/$file" "$src/$file"
  cat > "$src/package.xml" <<XML
<?xml version="1.0"?>
<package format="3">
  <name>$name</name><version>$version</version>
  <description>$file only, for environments without the $name wheel (modbot tests).</description>
  <maintainer email="dev@modbot.invalid">modbot developers</maintainer><license>Apache-2.0</license>
  <buildtool_depend>ament_cmake</buildtool_depend><buildtool_depend>rosidl_default_generators</buildtool_depend>
  <depend>$dep</depend><member_of_group>rosidl_interface_packages</member_of_group>
  <export><build_type>ament_cmake</build_type></export>
</package>
XML
  cat > "$src/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.8)
project($name)
find_package(ament_cmake REQUIRED)
find_package(rosidl_default_generators REQUIRED)
find_package($dep REQUIRED)
rosidl_generate_interfaces(\${PROJECT_NAME} "$file" DEPENDENCIES $dep)
ament_package()
CM
  cmake -S "$src" -B "$BUILD/$name" -DCMAKE_PREFIX_PATH="$V" -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DPython3_EXECUTABLE="$V/bin/python" -DBUILD_TESTING=OFF >>"$BUILD.log" 2>&1 || { tail -50 "$BUILD.log"; exit 1; }
  cmake --build "$BUILD/$name" -j2 >>"$BUILD.log" 2>&1 || { tail -50 "$BUILD.log"; exit 1; }
  cmake --install "$BUILD/$name" >>"$BUILD.log" 2>&1 || { tail -50 "$BUILD.log"; exit 1; }
}
one_package tf2_msgs 0.36.0 msg/TFMessage.msg geometry_msgs
one_package controller_manager_msgs 4.0.0 srv/SwitchController.srv builtin_interfaces
# What was built, so a test can tell a stale build (test/interop/python_env.rs).
cat $(ls "$ROOT"/packages/modbot_msgs/msg/*.msg | sort) $(ls "$ROOT"/packages/modbot_msgs/srv/*.srv | sort) \
  "$ROOT/packages/modbot_msgs/interfaces/controller_manager_msgs/srv/SwitchController.srv" \
  > "$PREFIX/interfaces.stamp"
echo "modbot_msgs for rclpy in $PREFIX"
