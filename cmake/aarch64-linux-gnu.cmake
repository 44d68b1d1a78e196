# Cross-compiling gate for aarch64 on Debian with its own cross compiler
# (g++-aarch64-linux-gnu) and the arm64 -dev packages installed through
# multiarch (.ci/aarch64): the libraries and their CMake packages are in
# /usr/lib/aarch64-linux-gnu, which CMAKE_LIBRARY_ARCHITECTURE points every
# find_package and find_library at. qemu-user (qemu-user-static) runs the
# binary where the build needs it to (the man page from its --help).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)
