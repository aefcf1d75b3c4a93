# Scheduling figures: one in-process placement pass over 10,000 queued tasks, and real
# master/agent processes for submission throughput and makespans.
add_executable(bench_scheduling ${CMAKE_CURRENT_SOURCE_DIR}/bench_scheduling.cpp)
target_link_libraries(bench_scheduling PRIVATE cairn_commands cairn_events cairn_net cairn_test_support
                      nlohmann_json::nlohmann_json)
add_dependencies(bench_scheduling cairn-master cairn-agent)
cairn_target_options(bench_scheduling)
