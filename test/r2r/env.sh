# Source this to build and run modbot_ros with the `r2r` feature against the ROS 2 Jazzy
# wheels of target/interop-venv and the rosidl build of modbot_msgs in target/interop-msgs
# (recipe: ../shared/notes/r2r-with-pypi-ros-wheels.md). Needs libclang-dev for bindgen.
#   . test/r2r/env.sh && cargo test -p modbot_ros --features r2r
_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
_v="$_root/target/interop-venv"; _m="$_root/target/interop-msgs"
# r2r regenerates its bindings only when AMENT_PREFIX_PATH & co. change, not when a package
# in them does: the shim folder's name carries a hash of the modbot_msgs build, so a changed
# interface makes a new path and a fresh r2r build.
_h=$(cat "$_m/interfaces.stamp" 2>/dev/null | sha256sum | cut -c1-12)
_shim="$_root/target/r2r-shim-$_h"
# Shim: r2r_rcl links -lrmw_implementation; the wheels link rcl straight to Fast DDS's RMW.
mkdir -p "$_shim/lib" && echo 'INPUT(-lrmw_fastrtps_cpp)' > "$_shim/lib/librmw_implementation.so"
_sp=$(echo "$_v"/lib/python3.*/site-packages)
export ROS_DISTRO=jazzy
export AMENT_PREFIX_PATH="$_m:$_v:$_shim"
export LD_LIBRARY_PATH="$_m/lib:$_v/lib:$(ls -d "$_sp"/ros_*.libs | paste -sd:)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# At run time librcl needs libpython (the wheels' *_rosidl_generator_py.so reference it):
# the test runner preloads it for test binaries only (test/r2r/runner).
export MODBOT_R2R_LIBPYTHON=$("$_v/bin/python" -c 'import sysconfig,os;print(os.path.join(sysconfig.get_config_var("LIBDIR"),sysconfig.get_config_var("INSTSONAME")))')
export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="$_root/test/r2r/runner"
unset _root _v _m _shim _sp _h
