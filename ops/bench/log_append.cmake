# Durable append throughput of the embedded event log (single appender and group commit).
# Run: build/bin/cairn-bench-log-append [--seconds-per-case S]
add_executable(cairn-bench-log-append ${CMAKE_CURRENT_LIST_DIR}/bench_log_append.cpp)
target_link_libraries(cairn-bench-log-append PRIVATE cairn_log_embedded)
cairn_target_options(cairn-bench-log-append)
