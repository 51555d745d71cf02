# Reports, comparisons and sweeps (analysis/report): statistics, report files, bad files, and the
# report/compare/sweep commands through the spotlab binary.
spotlab_add_test(test_report SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_report.c LIBS spotlab_report spotlab_sim)
add_dependencies(test_report spotlab)
# A sweep at 2 ranks: points one after another, each replication over both ranks.
spotlab_add_mpi_test(mpi_sweep_2ranks 2 $<TARGET_FILE:spotlab> sweep ${CMAKE_SOURCE_DIR}/scenarios/phold.cfg
                     --param phold.remote=0.1,0.5 --reps 2 --out mpi_sweep_2ranks.h5 --quiet)
# The report pages in headless Chromium: every figure written is on the page and loads (PNG and
# SVG). Skipped (77) without chromium or gnuplot; scripts/setup.sh installs both.
add_test(NAME report_page_chromium COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/report_page.sh $<TARGET_FILE:spotlab>
         ${CMAKE_SOURCE_DIR})
set_tests_properties(report_page_chromium PROPERTIES ENVIRONMENT "${SPOTLAB_TEST_ENV}" TIMEOUT ${SPOTLAB_TEST_TIMEOUT} SKIP_RETURN_CODE 77)
