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
rm -rf "$BUILD"
cmake -S "$ROOT/packages/modbot_msgs" -B "$BUILD" -DCMAKE_PREFIX_PATH="$V" -DCMAKE_INSTALL_PREFIX="$PREFIX" \
  -DPython3_EXECUTABLE="$V/bin/python" -DBUILD_TESTING=OFF >"$BUILD.log" 2>&1 || { cat "$BUILD.log"; exit 1; }
cmake --build "$BUILD" -j2 >>"$BUILD.log" 2>&1 || { tail -50 "$BUILD.log"; exit 1; }
cmake --install "$BUILD" >>"$BUILD.log" 2>&1 || { tail -50 "$BUILD.log"; exit 1; }
PYTHONPATH="$PREFIX/lib/python$PYVER/site-packages" LD_LIBRARY_PATH="$PREFIX/lib:$LD_LIBRARY_PATH" \
  "$V/bin/python" -c 'from modbot_msgs.msg import GaitCommand; from modbot_msgs.srv import Plan' \
  || { echo "modbot_msgs built but does not import"; exit 1; }
# What was built, so a test can tell a stale build (modbot_ros/tests/interop.rs).
cat $(ls "$ROOT"/packages/modbot_msgs/msg/*.msg | sort) $(ls "$ROOT"/packages/modbot_msgs/srv/*.srv | sort) \
  > "$PREFIX/interfaces.stamp"
echo "modbot_msgs for rclpy in $PREFIX"
