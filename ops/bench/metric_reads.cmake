# A trial's metric history read for a chart, at 10k and 1M points (issue 48).
# Run: build/bin/cairn-bench-metric-reads [--points N] [--small-points N] [--runs N]
add_executable(cairn-bench-metric-reads ${CMAKE_CURRENT_LIST_DIR}/bench_metric_reads.cpp)
target_link_libraries(cairn-bench-metric-reads PRIVATE cairn_projections cairn_events cairn_test_support)
cairn_target_options(cairn-bench-metric-reads)
cairn_use_jemalloc(cairn-bench-metric-reads)
