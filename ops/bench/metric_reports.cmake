# Metric reports from 50 trials against a real master, with submissions alongside (issue 48).
# Run: build/bin/cairn-bench-metric-reports [--trials N] [--seconds D]
add_executable(cairn-bench-metric-reports ${CMAKE_CURRENT_LIST_DIR}/bench_metric_reports.cpp)
target_link_libraries(cairn-bench-metric-reports PRIVATE cairn_net cairn_base cairn_test_support)
cairn_target_options(cairn-bench-metric-reports)
add_dependencies(cairn-bench-metric-reports cairn-master)
