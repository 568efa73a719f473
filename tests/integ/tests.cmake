# SPDX-License-Identifier: MIT
# Integration tests beyond the Criterion suites tests/integ/test_*.c (those are defined by the loop
# in tests/CMakeLists.txt): what some suites need, and the programs and scripts that run against
# the test servers (label "integ"; scripts/fb-servers.sh start).

# tests/integ/test_crypt.c captures loopback traffic with libpcap (live capture on "lo": needs root).
if(TARGET integ_test_crypt)
  target_link_libraries(integ_test_crypt PRIVATE PkgConfig::PCAP)
endif()
# The integration test of the built fbwire-sql (tests/integ/test_sql_tool.c) needs the program.
if(TARGET integ_test_sql_tool AND TARGET fbwire-sql)
  add_dependencies(integ_test_sql_tool fbwire-sql)
endif()

# The timeout tests stall a stock server (SIGSTOP, bounded by a watchdog; tests/support/stall.h):
# the helper for the shell tests (tests/tools/tests.cmake, tests/sysbench/tests.cmake), and one
# lock so two tests never stall the same server at once.
add_executable(fbwire-test-stall ${CMAKE_CURRENT_SOURCE_DIR}/stall/main.c
               ${CMAKE_CURRENT_SOURCE_DIR}/support/stall.c)
target_include_directories(fbwire-test-stall PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/support)
target_link_libraries(fbwire-test-stall PRIVATE fbwire_core fbwire_measure)
if(TARGET integ_test_stall)
  set_tests_properties(integ_test_stall PROPERTIES RESOURCE_LOCK fbwire_stock_servers)
endif()

# The commit ledger (tests/ledger/main.c, docs/faults.md): threads insert through fbwire-link with
# seeded random resets; every acknowledged row must be in the table and no failed one. The short
# seeded run is part of the default suite; the 10-minute soak: fbwire-test-ledger --seconds 600.
if(TARGET fbwire-link)
  find_package(Threads REQUIRED)
  add_executable(fbwire-test-ledger ${CMAKE_CURRENT_SOURCE_DIR}/ledger/main.c)
  target_link_libraries(fbwire-test-ledger PRIVATE fbwire_testsupport Threads::Threads)
  add_dependencies(fbwire-test-ledger fbwire-link)
  # through ledger.sh: a server that crashes or hangs under the resets is restarted, and run once more
  add_test(NAME integ_ledger_fb3 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integ/ledger.sh
           $<TARGET_FILE:fbwire-test-ledger> --server fb3 --seconds 10)
  fbw_server_test(integ_ledger_fb4 ${CMAKE_CURRENT_SOURCE_DIR}/integ/ledger.sh
                  $<TARGET_FILE:fbwire-test-ledger> --server fb4 --seconds 10)
  set_tests_properties(integ_ledger_fb3 integ_ledger_fb4 PROPERTIES LABELS integ TIMEOUT 240)
endif()

# A third-party client in the capture tests: node-firebird (pinned, installed from npm into the
# build tree by the script) runs its own session on FB3 and FB4 under tcpdump, and fbwire-pcap's
# stats, dump and replay --list are checked against it (tests/node/). Skipped (exit 77, with the
# reason) without npm/node, root or registry access.
if(TARGET fbwire-pcap)
  fbw_server_test(integ_node_firebird ${CMAKE_CURRENT_SOURCE_DIR}/node/node-firebird.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(integ_node_firebird PROPERTIES LABELS integ TIMEOUT 300
                       SKIP_RETURN_CODE 77)
endif()

# PostgreSQL 17 and MariaDB 11.8 in the Debian 13 chroot (scripts/peer-servers.sh pg17,
# mariadb118): versions, the settings of docs/compare.md and TLS, through the host's psql and
# mariadb clients (tests/peers/debian13.sh). As root it starts them (about 25 s the first time,
# when apt installs them into the chroot); like every integ test it fails without the servers.
add_test(NAME peers_debian13 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/peers/debian13.sh)
set_tests_properties(peers_debian13 PROPERTIES LABELS integ TIMEOUT 300)
