# What authenticating a request costs against a whole REST submission, in one run.
# Run: build/bin/bench_auth
add_executable(bench_auth ${CMAKE_CURRENT_LIST_DIR}/bench_auth.cpp)
target_link_libraries(bench_auth PRIVATE cairn_master_lib)
cairn_target_options(bench_auth)
