# Submit-to-agent latency: real master and agent processes, 1,000 sequential POSTs.
add_executable(bench_submit_latency ${CMAKE_CURRENT_SOURCE_DIR}/bench_submit_latency.cpp)
target_link_libraries(bench_submit_latency PRIVATE cairn_net cairn_test_support cairn_kafka_mock
                      nlohmann_json::nlohmann_json)
add_dependencies(bench_submit_latency cairn-master cairn-agent)
cairn_target_options(bench_submit_latency)
