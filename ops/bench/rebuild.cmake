# Projection rebuild throughput: 1,000,000 events from an embedded log into fresh projections.
# Run: build/bin/cairn-bench-rebuild [--events N] [--dir DIR]
add_executable(cairn-bench-rebuild ${CMAKE_CURRENT_LIST_DIR}/bench_rebuild.cpp)
target_link_libraries(cairn-bench-rebuild PRIVATE cairn_projections cairn_events)
cairn_target_options(cairn-bench-rebuild)
# On jemalloc, as the master and `cairn replay` that rebuild projections in production are: on
# glibc's malloc a quarter of the rebuild's CPU was the allocator.
cairn_use_jemalloc(cairn-bench-rebuild)
