# Benchmarks of the simulated launcher (issue 3), included by tests/bench/CMakeLists.txt.
# Not run by ctest: `build/<dir>/tests/bench/bench_simulator` prints the ratios.
add_executable(bench_simulator ${CMAKE_CURRENT_LIST_DIR}/bench_simulator.cpp)
target_link_libraries(bench_simulator PRIVATE matmulviz_kernels)
target_include_directories(bench_simulator PRIVATE ${PROJECT_SOURCE_DIR})
matmulviz_target_defaults(bench_simulator)
