# SPDX-License-Identifier: MIT
# Tests of the programs in tools/ (names tools_*): unit tests of their pure parts (a tool is a
# program, not a library, so each test compiles the sources it tests; label "unit"), the programs
# against small servers the tests write themselves (label "unit"), and against the test servers
# (label "integ"). Set in tests/CMakeLists.txt: FBW_DEBIAN_PYTHON3.

# fbwire-sql's splitter, output formats and SHOW DATABASE's header lines (tests/tools/test_<module>.c).
foreach(module split format dbheader)
  set(exe tools_test_${module})
  add_executable(${exe} ${CMAKE_CURRENT_LIST_DIR}/test_${module}.c
                        ${CMAKE_SOURCE_DIR}/tools/fbwire-sql/${module}.c)
  target_include_directories(${exe} PRIVATE ${CMAKE_SOURCE_DIR}/tools/fbwire-sql)
  target_link_libraries(${exe} PRIVATE fbwire_testsupport)
  add_test(NAME ${exe} COMMAND ${exe})
  set_tests_properties(${exe} PROPERTIES LABELS unit TIMEOUT 120)
endforeach()
# fbwire-link's sans-I/O core (tests/tools/test_link_<module>.c): the line (delay, rate, order,
# stall, slice), the fault schedule with the number parsing it uses, and the wake-up lead.
set(LINK_TOOL_DIR ${CMAKE_SOURCE_DIR}/tools/fbwire-link)
foreach(module line fault lead)
  set(exe tools_test_link_${module})
  add_executable(${exe} ${CMAKE_CURRENT_LIST_DIR}/test_link_${module}.c
                        ${LINK_TOOL_DIR}/line.c ${LINK_TOOL_DIR}/fault.c ${LINK_TOOL_DIR}/units.c
                        ${LINK_TOOL_DIR}/lead.c)
  target_include_directories(${exe} PRIVATE ${LINK_TOOL_DIR})
  target_link_libraries(${exe} PRIVATE fbwire_testsupport)
  add_test(NAME ${exe} COMMAND ${exe})
  set_tests_properties(${exe} PROPERTIES LABELS unit TIMEOUT 120)
endforeach()
# fbwire-pcap's statement fingerprints and latency table.
pkg_check_modules(JANSSON IMPORTED_TARGET jansson) # fbwire-pcap's JSON (tools/fbwire-pcap/jsonout.h)
if(TARGET fbwire-pcap AND JANSSON_FOUND)
  add_executable(tools_test_fpstats ${CMAKE_CURRENT_LIST_DIR}/test_fpstats.c
                                    ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap/fpstats.c
                                    ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap/jsonout.c)
  target_include_directories(tools_test_fpstats PRIVATE ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap)
  target_link_libraries(tools_test_fpstats PRIVATE fbwire_testsupport PkgConfig::JANSSON m)
  add_test(NAME tools_test_fpstats COMMAND tools_test_fpstats)
  set_tests_properties(tools_test_fpstats PROPERTIES LABELS unit TIMEOUT 120)
  # The replay's logic: comparison and tally, slot tables, JSON values, the report model rendered
  # as text and JSON (tests/tools/test_replay.c); report.c and what it calls for the text quote.
  set(PCAP_TOOL_DIR ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap)
  add_executable(tools_test_replay ${CMAKE_CURRENT_LIST_DIR}/test_replay.c
                 ${PCAP_TOOL_DIR}/replay_results.c ${PCAP_TOOL_DIR}/replay_slots.c
                 ${PCAP_TOOL_DIR}/replay_text.c ${PCAP_TOOL_DIR}/replay_json.c
                 ${PCAP_TOOL_DIR}/jsonout.c ${PCAP_TOOL_DIR}/fpstats.c ${PCAP_TOOL_DIR}/workload.c
                 ${PCAP_TOOL_DIR}/report.c ${PCAP_TOOL_DIR}/tcp.c ${PCAP_TOOL_DIR}/capture.c
                 ${PCAP_TOOL_DIR}/keys.c)
  target_include_directories(tools_test_replay PRIVATE ${PCAP_TOOL_DIR})
  target_link_libraries(tools_test_replay PRIVATE fbwire_testsupport PkgConfig::JANSSON
                        PkgConfig::PCAP m)
  add_test(NAME tools_test_replay COMMAND tools_test_replay)
  set_tests_properties(tools_test_replay PROPERTIES LABELS unit TIMEOUT 120)
endif()
# The Firebird trace parser and its workload (tools/fbwire-pcap/trace.c, trace_workload.c) on
# real fbtracemgr output from FB3 and FB4 (tests/tools/trace/).
if(TARGET fbwire-pcap)
  add_executable(tools_test_trace ${CMAKE_CURRENT_LIST_DIR}/test_trace.c
                                  ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap/trace.c
                                  ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap/trace_workload.c
                                  ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap/trace_record.c
                                  ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap/cliopts.c
                                  ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap/workload.c)
  target_include_directories(tools_test_trace PRIVATE ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap)
  target_compile_definitions(tools_test_trace PRIVATE TRACE_DIR="${CMAKE_CURRENT_LIST_DIR}/trace")
  target_link_libraries(tools_test_trace PRIVATE fbwire_testsupport)
  add_test(NAME tools_test_trace COMMAND tools_test_trace)
  set_tests_properties(tools_test_trace PROPERTIES LABELS unit TIMEOUT 120)
endif()
# The streaming replay's step queue (tools/fbwire-pcap/stepq.c).
if(TARGET fbwire-pcap)
  add_executable(tools_test_stepq ${CMAKE_CURRENT_LIST_DIR}/test_stepq.c
                                  ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap/stepq.c
                                  ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap/workload.c)
  target_include_directories(tools_test_stepq PRIVATE ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap)
  find_package(Threads REQUIRED)
  target_link_libraries(tools_test_stepq PRIVATE fbwire_testsupport Threads::Threads)
  add_test(NAME tools_test_stepq COMMAND tools_test_stepq)
  set_tests_properties(tools_test_stepq PROPERTIES LABELS unit TIMEOUT 120)
endif()

# fbwire-cpu against a small local server written in the test (no database server needed).
if(TARGET fbwire-cpu)
  add_test(NAME tools_fbwire_cpu
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/fbwire-cpu.sh $<TARGET_FILE:fbwire-cpu>)
  set_tests_properties(tools_fbwire_cpu PROPERTIES LABELS unit TIMEOUT 60)
endif()

# fbwire-link, the program, against an echo server written in the test (no database server):
# byte-for-byte relay, 600 connections, delay, rate, every fault mode, a short --self-test.
if(TARGET fbwire-link)
  find_package(Threads REQUIRED)
  add_test(NAME tools_fbwire_link
           COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/fbwire-link.py $<TARGET_FILE:fbwire-link>)
  set_tests_properties(tools_fbwire_link PROPERTIES LABELS unit TIMEOUT 120)
endif()

# A real Firebird session (fbwire-sql against FB3 and FB4) through fbwire-link in 1-byte slices:
# output byte for byte the direct one.
if(TARGET fbwire-link AND TARGET fbwire-sql)
  fbw_server_test(tools_fbwire_link_sql ${CMAKE_CURRENT_LIST_DIR}/fbwire-link-sql.sh $<TARGET_FILE:fbwire-link>
                   $<TARGET_FILE:fbwire-sql>)
  set_tests_properties(tools_fbwire_link_sql PROPERTIES LABELS integ TIMEOUT 300)
endif()

# fbwire-report --replay: the slowest fingerprints of a recorded `fbwire-pcap replay --json`
# output as an SVG chart (tests/tools/report_replay.py on tests/tools/replay-sysbench.json).
if(TARGET fbwire-report)
  add_test(NAME tools_fbwire_report_replay
           COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/report_replay.py
                   $<TARGET_FILE:fbwire-report>)
  set_tests_properties(tools_fbwire_report_replay PROPERTIES LABELS unit TIMEOUT 60)
endif()

# Unit tests of the measurement tool (tools/fbwire_compare, Debian's python3-pytest): parser, medians,
# workload list, build lookup, record, summary and model, charts, CLI; from recorded sysbench output
# in tests/compare/fixtures. The fbwire-link part runs when that program is built, else it is skipped.
if(FBW_DEBIAN_PYTHON3)
  set(FBW_LINK_ENV "")
  if(TARGET fbwire-link)
    set(FBW_LINK_ENV FBWIRE_LINK=$<TARGET_FILE:fbwire-link>)
  endif()
  add_test(NAME tools_compare_unit
           COMMAND ${CMAKE_COMMAND} -E env PYTHONDONTWRITEBYTECODE=1 ${FBW_LINK_ENV}
                   ${FBW_DEBIAN_PYTHON3} -m pytest -q -rs -p no:cacheprovider ${CMAKE_CURRENT_SOURCE_DIR}/compare)
  set_tests_properties(tools_compare_unit PROPERTIES LABELS unit TIMEOUT 120)
endif()

# fbwire-sql at a terminal, driven through a pseudo-terminal on FB3 and FB4: prompt, statements on
# Enter, history (up arrow, history file), Ctrl-C cancelling a long query, EXIT / QUIT / Ctrl-D.
if(TARGET fbwire-sql)
  fbw_server_test(tools_fbwire_sql_pty python3 ${CMAKE_CURRENT_LIST_DIR}/fbwire-sql-pty.py $<TARGET_FILE:fbwire-sql>)
  set_tests_properties(tools_fbwire_sql_pty PROPERTIES LABELS integ TIMEOUT 180)
endif()
# fbwire-sql --timeout against a stock server stopped mid-script (about 10 s; the helper and the
# lock: tests/integ/tests.cmake).
if(TARGET fbwire-sql)
  add_test(NAME tools_sql_stall COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/sysbench/stall.sh
           --stall $<TARGET_FILE:fbwire-test-stall> --sql $<TARGET_FILE:fbwire-sql>)
  set_tests_properties(tools_sql_stall PROPERTIES LABELS integ TIMEOUT 120
                       RESOURCE_LOCK fbwire_stock_servers)
endif()
# The sysbench driver (both pipeline modes) and fbwire-sql through fbwire-link faults on FB3 and
# FB4: a reset mid-run, 1-byte slices, 1 Mbit/s, a reply cut or held mid-rows (about 50 s).
if(TARGET fbwire-link AND TARGET fbwire-sysbench AND TARGET fbwire-sql)
  fbw_server_test(tools_link_faults ${CMAKE_CURRENT_LIST_DIR}/link-faults.sh
           --link $<TARGET_FILE:fbwire-link> --lib $<TARGET_FILE:fbwire-sysbench>
           --sql $<TARGET_FILE:fbwire-sql>)
  set_tests_properties(tools_link_faults PROPERTIES LABELS integ TIMEOUT 300)
endif()

# No JSON written by hand: every C source of tools/, driver/, measure/ and wire/ builds its JSON
# with jansson (tests/tools/no_hand_json.py; it checks itself first on lines it must flag).
add_test(NAME tools_no_hand_json
         COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/no_hand_json.py ${CMAKE_SOURCE_DIR})
set_tests_properties(tools_no_hand_json PROPERTIES LABELS unit TIMEOUT 60)

# No driver or tool source wraps one library request in a queue callback for fbw_client_run: one
# request runs through client.h's helpers or the fbw_client_complete loop (tests/tools/
# no_queue_wrapper.py; it checks itself first on sources it must and must not flag).
add_test(NAME tools_no_queue_wrapper
         COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/no_queue_wrapper.py ${CMAKE_SOURCE_DIR})
set_tests_properties(tools_no_queue_wrapper PROPERTIES LABELS unit TIMEOUT 60)

# scripts/lib/daemon.sh: a server started by peer-servers.sh keeps no descriptor of its caller
# (a lock held around a test run, a pipe); tests/tools/daemon_exec.sh, with a control that must fail.
add_test(NAME tools_daemon_exec COMMAND ${CMAKE_CURRENT_LIST_DIR}/daemon_exec.sh)
set_tests_properties(tools_daemon_exec PROPERTIES LABELS unit TIMEOUT 60)

# Licence: LICENSE is MIT and every tracked source file has an SPDX line (tests/tools/spdx.sh).
add_test(NAME tools_spdx COMMAND ${CMAKE_CURRENT_LIST_DIR}/spdx.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(tools_spdx PROPERTIES LABELS unit TIMEOUT 60)

# A man page for every installed program (help2man at build time), rendered by man -l.
add_test(NAME tools_manpages COMMAND ${CMAKE_CURRENT_LIST_DIR}/manpages.sh ${CMAKE_BINARY_DIR})
set_tests_properties(tools_manpages PROPERTIES LABELS unit TIMEOUT 120)
