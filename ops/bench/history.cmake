# History at scale (issue 18): a generator of realistic histories through the real decider, and
# the benchmark of restart, time travel, rebuild and snapshots over 1,000,000 events.
# Run: build/bin/cairn-generate-history --data DIR [--events N]; build/bin/cairn-bench-history
add_library(cairn_history_generator STATIC ${CMAKE_CURRENT_LIST_DIR}/history_generator.cpp)
target_link_libraries(cairn_history_generator PUBLIC cairn_commands cairn_events)
cairn_target_options(cairn_history_generator)

add_executable(cairn-generate-history ${CMAKE_CURRENT_LIST_DIR}/generate_history.cpp)
target_link_libraries(cairn-generate-history PRIVATE cairn_history_generator cairn_base)
cairn_target_options(cairn-generate-history)
cairn_use_jemalloc(cairn-generate-history)

add_executable(cairn-bench-history ${CMAKE_CURRENT_LIST_DIR}/bench_history.cpp)
target_link_libraries(cairn-bench-history PRIVATE cairn_history_generator cairn_projections
                      cairn_replay_lib cairn_master_lib cairn_net cairn_test_support
                      cairn_kafka_mock)
add_dependencies(cairn-bench-history cairn-master)
cairn_target_options(cairn-bench-history)
cairn_use_jemalloc(cairn-bench-history)
