# Mixed load on a real master: 200 concurrent clients, 70% reads, 30% submissions, 60 s.
# Run: build/bin/bench_load [--clients N] [--seconds D]
add_executable(bench_load ${CMAKE_CURRENT_LIST_DIR}/bench_load.cpp)
target_link_libraries(bench_load PRIVATE cairn_net cairn_test_support nlohmann_json::nlohmann_json)
# Beast as cairn_net compiles it: the same templates instantiated two ways would break each other.
target_compile_definitions(bench_load PRIVATE BOOST_BEAST_USE_STD_STRING_VIEW
                                              BOOST_ASIO_NO_DEPRECATED)
add_dependencies(bench_load cairn-master cairn-agent)
cairn_target_options(bench_load)
