# Lets fuzz/run.sh build the targets while the root CMakeLists.txt does not
# yet say `if(GATE_FUZZ) add_subdirectory(fuzz) endif()`: run.sh passes this
# file as CMAKE_PROJECT_INCLUDE, which runs right after project(). The
# targets need every gate_<module> library, so fuzz/CMakeLists.txt is read
# at the end of the root file (a deferred call may include() but not
# add_subdirectory()). CMAKE_SOURCE_DIR is the same now and then.
cmake_language(DEFER CALL include ${CMAKE_SOURCE_DIR}/fuzz/CMakeLists.txt)
