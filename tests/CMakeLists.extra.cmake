# SPDX-License-Identifier: MIT
# Tests of the sysbench plug-in (driver/): unit tests of the SQL dialect (tests/driver/test_*.c,
# Criterion, label "unit") and the end-to-end workload script against real servers (label
# "sysbench"; needs scripts/fb-servers.sh start and /usr/bin/sysbench).
if(TARGET fbwire_dialect AND TARGET fbwire_report)
  file(GLOB driver_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/driver/test_*.c)
  foreach(src ${driver_tests})
    get_filename_component(base ${src} NAME_WE)
    set(exe driver_${base})
    add_executable(${exe} ${src})
    target_link_libraries(${exe} PRIVATE fbwire_dialect fbwire_report PkgConfig::CRITERION)
    add_test(NAME ${exe} COMMAND ${exe})
    set_tests_properties(${exe} PROPERTIES LABELS unit TIMEOUT 120)
  endforeach()
endif()

# The driver and the tools decide on errors through the library's error model only: no message
# text compared, no gds code written as a number (tests/driver/check_error_model.py).
add_test(NAME driver_error_model
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/driver/check_error_model.py
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(driver_error_model PROPERTIES LABELS unit TIMEOUT 60)

if(TARGET fbwire-sysbench)
  include(${CMAKE_CURRENT_SOURCE_DIR}/sysbench/tests.cmake)
endif()

# tests/integ/test_crypt.c captures loopback traffic with libpcap (live capture on "lo": needs root).
if(TARGET integ_test_crypt)
  target_link_libraries(integ_test_crypt PRIVATE PkgConfig::PCAP)
endif()

# Every fuzz target's seeds, replayed once in the default run (any compiler; not in the
# -DFBWIRE_FUZZ build, whose instrumented core needs libFuzzer's runtime).
if(NOT FBWIRE_FUZZ)
  include(${CMAKE_CURRENT_LIST_DIR}/fuzz/smoke.cmake)
endif()

# libFuzzer targets (tests/fuzz/, clang only): -DFBWIRE_FUZZ=ON; run them with scripts/fuzz.sh.
if(FBWIRE_FUZZ)
  add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/fuzz ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
endif()

# ABI refusal: the plug-in preloaded into fake sysbench look-alikes must refuse cleanly.
if(TARGET fbwire-sysbench)
  foreach(variant fake_host fake_host_lua_ok)
    add_executable(sysbench_${variant} ${CMAKE_CURRENT_SOURCE_DIR}/sysbench/fake_host.c)
    set_target_properties(sysbench_${variant} PROPERTIES ENABLE_EXPORTS ON)
  endforeach()
  target_compile_definitions(sysbench_fake_host_lua_ok PRIVATE FAKE_LUA_OK)
  add_test(NAME sysbench_abi_refusal
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/sysbench/abi-refusal.sh
                   $<TARGET_FILE:fbwire-sysbench> $<TARGET_FILE:sysbench_fake_host>
                   $<TARGET_FILE:sysbench_fake_host_lua_ok>)
  set_tests_properties(sysbench_abi_refusal PROPERTIES LABELS unit TIMEOUT 60)
endif()

# Unit tests of fbwire-sql's pure parts (tests/tools/test_<module>.c, label "unit"): a tool is a
# program, not a library, so each test compiles the one source it tests. The integration test of
# the built program (tests/integ/test_sql_tool.c) needs the program built first.
foreach(module split format)
  set(exe tools_test_${module})
  add_executable(${exe} ${CMAKE_CURRENT_SOURCE_DIR}/tools/test_${module}.c
                        ${CMAKE_SOURCE_DIR}/tools/fbwire-sql/${module}.c)
  target_include_directories(${exe} PRIVATE ${CMAKE_SOURCE_DIR}/tools/fbwire-sql)
  target_link_libraries(${exe} PRIVATE fbwire_testsupport)
  add_test(NAME ${exe} COMMAND ${exe})
  set_tests_properties(${exe} PROPERTIES LABELS unit TIMEOUT 120)
endforeach()
# Unit tests of fbwire-link's sans-I/O core (tests/tools/test_link_<module>.c, label "unit"): the
# line (delay, rate, order, stall, slice), the fault schedule with the number parsing it uses, and
# the wake-up lead.
set(LINK_TOOL_DIR ${CMAKE_SOURCE_DIR}/tools/fbwire-link)
foreach(module line fault lead)
  set(exe tools_test_link_${module})
  add_executable(${exe} ${CMAKE_CURRENT_SOURCE_DIR}/tools/test_link_${module}.c
                        ${LINK_TOOL_DIR}/line.c ${LINK_TOOL_DIR}/fault.c ${LINK_TOOL_DIR}/units.c
                        ${LINK_TOOL_DIR}/lead.c)
  target_include_directories(${exe} PRIVATE ${LINK_TOOL_DIR})
  target_link_libraries(${exe} PRIVATE fbwire_testsupport)
  add_test(NAME ${exe} COMMAND ${exe})
  set_tests_properties(${exe} PROPERTIES LABELS unit TIMEOUT 120)
endforeach()
if(TARGET integ_test_sql_tool AND TARGET fbwire-sql)
  add_dependencies(integ_test_sql_tool fbwire-sql)
endif()

# tests/integ/test_crypt.c captures loopback traffic with libpcap (live capture on "lo": needs root).
if(TARGET integ_test_crypt)
  target_link_libraries(integ_test_crypt PRIVATE PkgConfig::PCAP)
endif()

# Round-trip accounting of the sysbench report against the protocol and a loopback capture, the
# JSON schema and fbwire-report (tests/sysbench/rt-accounting.sh; root for tcpdump, else skipped).
if(TARGET fbwire-sysbench AND TARGET fbwire-pcap AND TARGET fbwire-report)
  add_test(NAME sysbench_rt_accounting
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/sysbench/rt-accounting.sh
                   --lib $<TARGET_FILE:fbwire-sysbench> --pcap-tool $<TARGET_FILE:fbwire-pcap>
                   --report-tool $<TARGET_FILE:fbwire-report>)
  set_tests_properties(sysbench_rt_accounting PROPERTIES LABELS sysbench TIMEOUT 900
                       SKIP_RETURN_CODE 77)
endif()

# fbwire-cpu against a small local server written in the test (no database server needed).
if(TARGET fbwire-cpu)
  add_test(NAME tools_fbwire_cpu
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tools/fbwire-cpu.sh $<TARGET_FILE:fbwire-cpu>)
  set_tests_properties(tools_fbwire_cpu PROPERTIES LABELS unit TIMEOUT 60)
endif()

# fbwire-link, the program, against an echo server written in the test (no database server):
# byte-for-byte relay, 600 connections, delay, rate, every fault mode, a short --self-test.
if(TARGET fbwire-link)
  find_package(Threads REQUIRED)
  add_test(NAME tools_fbwire_link
           COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/tools/fbwire-link.py $<TARGET_FILE:fbwire-link>)
  set_tests_properties(tools_fbwire_link PROPERTIES LABELS unit TIMEOUT 120)
endif()

# A real Firebird session (fbwire-sql against FB3 and FB4) through fbwire-link in 1-byte slices:
# output byte for byte the direct one.
if(TARGET fbwire-link AND TARGET fbwire-sql)
  add_test(NAME tools_fbwire_link_sql
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tools/fbwire-link-sql.sh $<TARGET_FILE:fbwire-link>
                   $<TARGET_FILE:fbwire-sql>)
  set_tests_properties(tools_fbwire_link_sql PROPERTIES LABELS integ TIMEOUT 300)
endif()

# libfbwire installed into a scratch prefix: exports, headers, the docs/library.md example built
# with pkg-config and find_package(fbwire) and run against FB3 and FB4.
add_test(NAME package_library COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/package/library.sh ${CMAKE_BINARY_DIR})
set_tests_properties(package_library PROPERTIES LABELS integ TIMEOUT 300)

# The Debian package: `cpack -G DEB` in this build directory, then apt installs it into a fresh
# Debian 12 chroot (debootstrapped every run from the .debs cached in $FBWIRE_STATE/deb-bookworm.tgz)
# and its programs run there.
add_test(NAME package_deb
         COMMAND sh -c "cpack -G DEB >cpack.log 2>&1 || { cat cpack.log; exit 1; }; \
exec ${CMAKE_CURRENT_SOURCE_DIR}/package/install-test.sh fbwire_${PROJECT_VERSION}_amd64.deb"
         WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(package_deb PROPERTIES LABELS package TIMEOUT 900)

# Unit tests of the measurement tool (tools/fbwire_compare, Debian's python3-pytest): parser, medians,
# workload list, build lookup, record, summary and model, charts, CLI; from recorded sysbench output
# in tests/compare/fixtures. The fbwire-link part runs when that program is built, else it is skipped.
find_program(FBW_DEBIAN_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
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

# tools/fbwire-compare --quick against PostgreSQL, MariaDB, FB3 and FB4 (tests/sysbench/compare.sh:
# starts scripts/peer-servers.sh itself; root for tcpdump, else skipped). About a minute, and one
# more for its --rtt 0,1 stage through fbwire-link.
if(TARGET fbwire-sysbench AND TARGET fbwire-pcap AND TARGET fbwire-report)
  set(FBW_COMPARE_CPU "")
  if(TARGET fbwire-cpu)
    set(FBW_COMPARE_CPU --cpu-tool $<TARGET_FILE:fbwire-cpu>)
  endif()
  if(TARGET fbwire-link)
    list(APPEND FBW_COMPARE_CPU --link-tool $<TARGET_FILE:fbwire-link>)
  endif()
  add_test(NAME sysbench_compare
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/sysbench/compare.sh
                   --compare ${CMAKE_SOURCE_DIR}/tools/fbwire-compare
                   --lib $<TARGET_FILE:fbwire-sysbench> --pcap-tool $<TARGET_FILE:fbwire-pcap>
                   --report-tool $<TARGET_FILE:fbwire-report> ${FBW_COMPARE_CPU})
  set_tests_properties(sysbench_compare PROPERTIES LABELS sysbench TIMEOUT 400
                       SKIP_RETURN_CODE 77)
endif()

# scripts/main.sh's last step, `fbwire-compare --preset glance`, with 1 s runs of 1,000 rows on FB3:
# every row of its table measured, round trips per event as README.md and docs/sysbench.md give
# them (tests/sysbench/glance_check.py). No capture, so no root; about 30 s.
if(FBW_DEBIAN_PYTHON3 AND TARGET fbwire-sysbench AND TARGET fbwire-link)
  set(FBW_GLANCE_ENV FBWIRE_SYSBENCH_LIB=$<TARGET_FILE:fbwire-sysbench> FBWIRE_LINK=$<TARGET_FILE:fbwire-link>)
  if(TARGET fbwire-cpu)
    list(APPEND FBW_GLANCE_ENV FBWIRE_CPU=$<TARGET_FILE:fbwire-cpu>)
  endif()
  if(TARGET fbwire-report)
    list(APPEND FBW_GLANCE_ENV FBWIRE_REPORT=$<TARGET_FILE:fbwire-report>)
  endif()
  add_test(NAME sysbench_glance
           COMMAND ${CMAKE_COMMAND} -E env PYTHONDONTWRITEBYTECODE=1 ${FBW_GLANCE_ENV}
                   ${FBW_DEBIAN_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/sysbench/glance_check.py
                   ${CMAKE_SOURCE_DIR}/tools/fbwire-compare ${CMAKE_SOURCE_DIR})
  set_tests_properties(sysbench_glance PROPERTIES LABELS sysbench TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()

# PostgreSQL 17 and MariaDB 11.8 in the Debian 13 chroot (scripts/peer-servers.sh pg17,
# mariadb118): versions, the settings of docs/compare.md and TLS, through the host's psql and
# mariadb clients (tests/peers/debian13.sh). As root it starts them (about 25 s the first time,
# when apt installs them into the chroot); like every integ test it fails without the servers.
add_test(NAME peers_debian13 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/peers/debian13.sh)
set_tests_properties(peers_debian13 PROPERTIES LABELS integ TIMEOUT 300)

# fbwire-sql at a terminal, driven through a pseudo-terminal on FB3 and FB4: prompt, statements on
# Enter, history (up arrow, history file), Ctrl-C cancelling a long query, EXIT / QUIT / Ctrl-D.
if(TARGET fbwire-sql)
  add_test(NAME tools_fbwire_sql_pty
           COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/tools/fbwire-sql-pty.py $<TARGET_FILE:fbwire-sql>)
  set_tests_properties(tools_fbwire_sql_pty PROPERTIES LABELS integ TIMEOUT 180)
endif()

# Licence: LICENSE is MIT and every tracked source file has an SPDX line (tests/tools/spdx.sh).
add_test(NAME tools_spdx COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tools/spdx.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(tools_spdx PROPERTIES LABELS unit TIMEOUT 60)

# A man page for every installed program (help2man at build time), rendered by man -l.
add_test(NAME tools_manpages COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tools/manpages.sh ${CMAKE_BINARY_DIR})
set_tests_properties(tools_manpages PROPERTIES LABELS unit TIMEOUT 120)

# The timeout tests stall a stock server (SIGSTOP, bounded by a watchdog; tests/support/stall.h):
# the helper for the shell tests, and one lock so two tests never stall the same server at once.
add_executable(fbwire-test-stall ${CMAKE_CURRENT_SOURCE_DIR}/stall/main.c
               ${CMAKE_CURRENT_SOURCE_DIR}/support/stall.c)
target_include_directories(fbwire-test-stall PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/support)
target_link_libraries(fbwire-test-stall PRIVATE fbwire_core fbwire_measure)
if(TARGET integ_test_stall)
  set_tests_properties(integ_test_stall PROPERTIES RESOURCE_LOCK fbwire_stock_servers)
endif()
# fbwire-sql --timeout against a stock server stopped mid-script (about 10 s).
if(TARGET fbwire-sql)
  add_test(NAME tools_sql_stall COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/sysbench/stall.sh
           --stall $<TARGET_FILE:fbwire-test-stall> --sql $<TARGET_FILE:fbwire-sql>)
  set_tests_properties(tools_sql_stall PROPERTIES LABELS integ TIMEOUT 120
                       RESOURCE_LOCK fbwire_stock_servers)
endif()

# The commit ledger (tests/ledger/main.c, docs/faults.md): threads insert through fbwire-link with
# seeded random resets; every acknowledged row must be in the table and no failed one. The short
# seeded run is part of the default suite; the 10-minute soak: fbwire-test-ledger --seconds 600.
if(TARGET fbwire-link)
  find_package(Threads REQUIRED)
  add_executable(fbwire-test-ledger ${CMAKE_CURRENT_SOURCE_DIR}/ledger/main.c)
  target_link_libraries(fbwire-test-ledger PRIVATE fbwire_testsupport Threads::Threads)
  add_dependencies(fbwire-test-ledger fbwire-link)
  foreach(srv fb3 fb4)
    add_test(NAME integ_ledger_${srv} COMMAND fbwire-test-ledger --server ${srv} --seconds 10)
    set_tests_properties(integ_ledger_${srv} PROPERTIES LABELS integ TIMEOUT 90)
  endforeach()
endif()
# The sysbench driver (both pipeline modes) and fbwire-sql through fbwire-link faults on FB3 and
# FB4: a reset mid-run, 1-byte slices, 1 Mbit/s, a reply cut or held mid-rows (about 50 s).
if(TARGET fbwire-link AND TARGET fbwire-sysbench AND TARGET fbwire-sql)
  add_test(NAME tools_link_faults COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tools/link-faults.sh
           --link $<TARGET_FILE:fbwire-link> --lib $<TARGET_FILE:fbwire-sysbench>
           --sql $<TARGET_FILE:fbwire-sql>)
  set_tests_properties(tools_link_faults PROPERTIES LABELS integ TIMEOUT 300)
endif()

# A third-party client in the capture tests: node-firebird (pinned, installed from npm into the
# build tree by the script) runs its own session on FB3 and FB4 under tcpdump, and fbwire-pcap's
# stats, dump and replay --list are checked against it (tests/node/). Skipped (exit 77, with the
# reason) without npm/node, root or registry access.
if(TARGET fbwire-pcap)
  add_test(NAME integ_node_firebird
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/node/node-firebird.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(integ_node_firebird PROPERTIES LABELS integ TIMEOUT 300
                       SKIP_RETURN_CODE 77)
endif()

# Unit test of fbwire-pcap's statement fingerprints and latency table (pure, label "unit").
add_executable(tools_test_fpstats ${CMAKE_CURRENT_SOURCE_DIR}/tools/test_fpstats.c
                                  ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap/fpstats.c)
target_include_directories(tools_test_fpstats PRIVATE ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap)
target_link_libraries(tools_test_fpstats PRIVATE fbwire_testsupport)
add_test(NAME tools_test_fpstats COMMAND tools_test_fpstats)
set_tests_properties(tools_test_fpstats PROPERTIES LABELS unit TIMEOUT 120)

# fbwire-report --replay: the slowest fingerprints of a recorded `fbwire-pcap replay --json`
# output as an SVG chart (tests/tools/report_replay.py on tests/tools/replay-sysbench.json).
if(TARGET fbwire-report)
  add_test(NAME tools_fbwire_report_replay
           COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/tools/report_replay.py
                   $<TARGET_FILE:fbwire-report>)
  set_tests_properties(tools_fbwire_report_replay PROPERTIES LABELS unit TIMEOUT 60)
endif()

# A 4-thread sysbench oltp_read_write capture (5 s, 2 tables of 1000 rows, ids partitioned per
# thread: tests/sysbench/oltp_rw_partitioned.lua) on one server version, replayed paced on the
# other: every step replayed, every result the same (but the driver's version query), wall time
# within 10% (tests/sysbench/xreplay.py; root for tcpdump, else skipped). Both directions, with
# the fbwire and the fbclient driver; about 40 s each. Every op is replayed: fbclient's
# op_info_sql record counts are info_sql steps, fbwire's go with the execute.
if(TARGET fbwire-sysbench AND TARGET fbwire-pcap AND TARGET fbwire-link AND TARGET fbwire-sql
   AND TARGET fbwire-report)
  foreach(drv fbwire fbclient)
    foreach(from fb3 fb4)
      add_test(NAME sysbench_xreplay_${drv}_${from}
               COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/sysbench/xreplay.py
                       --lib $<TARGET_FILE:fbwire-sysbench> --pcap $<TARGET_FILE:fbwire-pcap>
                       --link $<TARGET_FILE:fbwire-link> --sql $<TARGET_FILE:fbwire-sql>
                       --report $<TARGET_FILE:fbwire-report> --from ${from} --driver ${drv})
      set_tests_properties(sysbench_xreplay_${drv}_${from} PROPERTIES LABELS sysbench TIMEOUT 300
                           SKIP_RETURN_CODE 77 RESOURCE_LOCK fbwire_xreplay)
    endforeach()
  endforeach()
endif()

# Unit test of the streaming replay's step queue (tools/fbwire-pcap/stepq.c; label "unit").
if(TARGET fbwire-pcap)
  add_executable(tools_test_stepq ${CMAKE_CURRENT_SOURCE_DIR}/tools/test_stepq.c
                                  ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap/stepq.c
                                  ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap/workload.c)
  target_include_directories(tools_test_stepq PRIVATE ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap)
  find_package(Threads REQUIRED)
  target_link_libraries(tools_test_stepq PRIVATE fbwire_testsupport Threads::Threads)
  add_test(NAME tools_test_stepq COMMAND tools_test_stepq)
  set_tests_properties(tools_test_stepq PROPERTIES LABELS unit TIMEOUT 120)
endif()
