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
# tf2_msgs has no wheel; sim_node publishes tf2_msgs/TFMessage, so rcl-based peers (the r2r
# backend) need its typesupport: build that one message from modbot_msgs' copy of its .msg.
if ! "$V/bin/python" -c 'import tf2_msgs.msg' >/dev/null 2>&1 && [ ! -f "$PREFIX/share/tf2_msgs/package.xml" ]; then
  TF="$BUILD/tf2_msgs_src"; mkdir -p "$TF/msg"
  cp "$ROOT/packages/modbot_msgs/interfaces/tf2_msgs/msg/TFMessage.msg" "$TF/msg/"
  cat > "$TF/package.xml" <<'XML'
<?xml version="1.0"?>
<package format="3">
  <name>tf2_msgs</name><version>0.36.0</version>
  <description>TFMessage only, for environments without the tf2_msgs wheel (modbot tests).</description>
  <maintainer email="dev@modbot.invalid">modbot developers</maintainer><license>BSD-3-Clause</license>
  <buildtool_depend>ament_cmake</buildtool_depend><buildtool_depend>rosidl_default_generators</buildtool_depend>
  <depend>geometry_msgs</depend><member_of_group>rosidl_interface_packages</member_of_group>
  <export><build_type>ament_cmake</build_type></export>
</package>
XML
  cat > "$TF/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.8)
project(tf2_msgs)
find_package(ament_cmake REQUIRED)
find_package(rosidl_default_generators REQUIRED)
find_package(geometry_msgs REQUIRED)
rosidl_generate_interfaces(${PROJECT_NAME} "msg/TFMessage.msg" DEPENDENCIES geometry_msgs)
ament_package()
CM
  cmake -S "$TF" -B "$BUILD/tf2_msgs" -DCMAKE_PREFIX_PATH="$V" -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DPython3_EXECUTABLE="$V/bin/python" -DBUILD_TESTING=OFF >>"$BUILD.log" 2>&1 || { tail -50 "$BUILD.log"; exit 1; }
  cmake --build "$BUILD/tf2_msgs" -j2 >>"$BUILD.log" 2>&1 || { tail -50 "$BUILD.log"; exit 1; }
  cmake --install "$BUILD/tf2_msgs" >>"$BUILD.log" 2>&1 || { tail -50 "$BUILD.log"; exit 1; }
fi
# What was built, so a test can tell a stale build (test/interop/python_env.rs).
cat $(ls "$ROOT"/packages/modbot_msgs/msg/*.msg | sort) $(ls "$ROOT"/packages/modbot_msgs/srv/*.srv | sort) \
  > "$PREFIX/interfaces.stamp"
echo "modbot_msgs for rclpy in $PREFIX"
