# Text search over 10M stored log lines of one experiment (issue 48).
# Run: build/bin/cairn-bench-log-search [--lines N] [--tasks T] [--runs R]
add_executable(cairn-bench-log-search ${CMAKE_CURRENT_LIST_DIR}/bench_log_search.cpp)
target_link_libraries(cairn-bench-log-search PRIVATE cairn_task_log_store cairn_test_support)
cairn_target_options(cairn-bench-log-search)
