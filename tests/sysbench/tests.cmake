# SPDX-License-Identifier: MIT
# The sysbench suite (label "sysbench"): the stock /usr/bin/sysbench 1.0.20 with the plug-in,
# against the FB3 and FB4 servers of scripts/fb-servers.sh (scripts/test.sh starts them). Each
# entry is one run of tests/sysbench/run-workloads.sh with its own database (sb_<entry>.fdb), so
# entries may run in parallel. fbwire (the product) gets the full matrix; fbclient, the
# baseline, one pass on FB3 and a few scripts on FB4. About 4-5 minutes in all on 2 cores.
# Also here: every other test of the plug-in inside sysbench or a look-alike (sysbench_*); its
# pure parts are unit-tested in tests/driver/tests.cmake. Included when the plug-in is built.
set(SB_RUN ${CMAKE_CURRENT_LIST_DIR}/run-workloads.sh)
set(SB_LIB $<TARGET_FILE:fbwire-sysbench>)

# With fb4 among its servers, a run has its twins on the other versions (tests/servers.cmake).
function(fbw_sysbench_test name)
  if("fb4" IN_LIST ARGN)
    fbw_server_test(sysbench_${name} ${SB_RUN} --lib ${SB_LIB} --db sb_${name}.fdb ${ARGN})
  else()
    add_test(NAME sysbench_${name} COMMAND ${SB_RUN} --lib ${SB_LIB} --db sb_${name}.fdb ${ARGN})
  endif()
  set_tests_properties(sysbench_${name} PROPERTIES LABELS sysbench TIMEOUT 400)
endfunction()

set(SB_ALL_OLTP oltp_read_write,oltp_read_only,oltp_write_only,oltp_point_select,oltp_insert,oltp_delete,oltp_update_index,oltp_update_non_index)

# Every script on each server (prepare, verify, run, counters, cleanup), the SQL API test, the
# value checks, the connection-loss checks and the bulk insert path (batch API on FB4).
fbw_sysbench_test(fbwire_fb3 --driver fbwire --server fb3 --checks values,api,reconnect,batch,insert-rt)
fbw_sysbench_test(fbwire_fb4 --driver fbwire --server fb4 --checks values,api,reconnect,batch,insert-rt)
# --db-ps-mode=disable: every script and the API test with values inlined.
fbw_sysbench_test(fbwire_ps_disable --driver fbwire --server fb3 --server fb4 --ps-mode disable
                  --checks api)
# Script options that change the schema or the SQL.
fbw_sysbench_test(fbwire_auto_inc_off --driver fbwire --server fb3 --server fb4
                  --extra --auto-inc=off --only oltp_read_write,oltp_insert,oltp_delete)
fbw_sysbench_test(fbwire_secondary --driver fbwire --server fb3 --server fb4
                  --extra --secondary --only oltp_read_write,oltp_point_select,oltp_update_index)
fbw_sysbench_test(fbwire_skip_trx --driver fbwire --server fb3 --server fb4
                  --extra --skip_trx --only oltp_read_write,oltp_read_only,oltp_write_only)
# Concurrency: 8 threads on 4 tables of 3000 rows (prepare flushes several multi-row INSERTs
# per table), and 64 threads once per server.
fbw_sysbench_test(fbwire_threads8 --driver fbwire --server fb3 --server fb4 --threads 8
                  --tables 4 --table-size 3000 --events 400
                  --only oltp_read_write,oltp_write_only,oltp_insert,bulk_insert)
fbw_sysbench_test(fbwire_threads64 --driver fbwire --server fb3 --server fb4 --threads 64
                  --tables 4 --table-size 5000 --events 640 --only oltp_read_write)
# The other autocommit modes of the fbwire backend (shared is the default; autocommit
# statements only).
fbw_sysbench_test(fbwire_per_statement --driver fbwire --server fb3 --server fb4
                  --extra --fbwire-autocommit=per-statement
                  --only oltp_insert,oltp_point_select,oltp_update_index,bulk_insert)
fbw_sysbench_test(fbwire_pipelined --driver fbwire --server fb3 --server fb4
                  --extra --fbwire-autocommit=pipelined
                  --only oltp_insert,oltp_point_select,oltp_update_index,bulk_insert)
# Pipelined transactions: every script, the SQL API test and pipeline_test.lua on each server
# (round trips per event of the pipelined scripts: rt-accounting.sh).
fbw_sysbench_test(fbwire_pipeline --driver fbwire --server fb3 --server fb4
                  --pipeline transaction --checks api,pipeline
                  --extra --fbwire-wire-crypt=disabled)
# The fbclient baseline, lighter.
fbw_sysbench_test(fbclient_fb3 --driver fbclient --server fb3 --checks values,reconnect)
fbw_sysbench_test(fbclient_fb4 --driver fbclient --server fb4
                  --only oltp_read_write,oltp_insert,bulk_insert)
# Default driver options against the stock servers (packaged firebird.conf: fb3s, fb4s),
# --P-create-db, the errors that name an option, fbclient's socket-level report with wire crypt
# on (tests/sysbench/stock.sh; about one minute).
add_test(NAME sysbench_stock COMMAND ${CMAKE_CURRENT_LIST_DIR}/stock.sh --lib ${SB_LIB}
         --sql $<TARGET_FILE:fbwire-sql>)
set_tests_properties(sysbench_stock PROPERTIES LABELS sysbench TIMEOUT 400
                     RESOURCE_LOCK fbwire_stock_servers)
# A stock server stopped (SIGSTOP) mid-run: sysbench with --fbwire-timeout=3 --time=6 ends at the
# timeout with the error naming the wait, pipeline off and transaction, fb3s and fb4s (about 20 s;
# tests/sysbench/stall.sh). The lock keeps the stock-server tests from stalling each other.
add_test(NAME sysbench_stall COMMAND ${CMAKE_CURRENT_LIST_DIR}/stall.sh
         --stall $<TARGET_FILE:fbwire-test-stall> --lib ${SB_LIB})
set_tests_properties(sysbench_stall PROPERTIES LABELS sysbench TIMEOUT 120
                     RESOURCE_LOCK fbwire_stock_servers)

# --fbwire-statement-timeout: a timed-out query on FB4 (ignorable, the connection goes on; fatal,
# naming the query and the limit), refused at connect on FB3, a bad value refused
# (tests/sysbench/statement-timeout.sh; about 5 s).
add_test(NAME sysbench_driver_statement_timeout
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/statement-timeout.sh --lib ${SB_LIB})
set_tests_properties(sysbench_driver_statement_timeout PROPERTIES LABELS sysbench TIMEOUT 300)

# --fbclient-library: the system's libfbclient by path (the run works, the report names the file
# and its version), the default, a missing file and a library that is no Firebird client refused
# naming what is wrong (tests/sysbench/fbclient-library.sh; about 5 s).
add_test(NAME sysbench_driver_fbclient_library
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/fbclient-library.sh --lib ${SB_LIB})
set_tests_properties(sysbench_driver_fbclient_library PROPERTIES LABELS sysbench TIMEOUT 300)

# ABI refusal: the plug-in preloaded into fake sysbench look-alikes must refuse cleanly.
foreach(variant fake_host fake_host_lua_ok)
  add_executable(sysbench_${variant} ${CMAKE_CURRENT_LIST_DIR}/fake_host.c)
  set_target_properties(sysbench_${variant} PROPERTIES ENABLE_EXPORTS ON)
endforeach()
target_compile_definitions(sysbench_fake_host_lua_ok PRIVATE FAKE_LUA_OK)
add_test(NAME sysbench_abi_refusal
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/abi-refusal.sh
                 $<TARGET_FILE:fbwire-sysbench> $<TARGET_FILE:sysbench_fake_host>
                 $<TARGET_FILE:sysbench_fake_host_lua_ok>)
set_tests_properties(sysbench_abi_refusal PROPERTIES LABELS unit TIMEOUT 60)

# Round-trip accounting of the sysbench report against the protocol and a loopback capture, the
# JSON schema and fbwire-report (tests/sysbench/rt-accounting.sh; root for tcpdump, else skipped).
if(TARGET fbwire-pcap AND TARGET fbwire-report)
  fbw_server_test(sysbench_rt_accounting ${CMAKE_CURRENT_LIST_DIR}/rt-accounting.sh
                   --lib $<TARGET_FILE:fbwire-sysbench> --pcap-tool $<TARGET_FILE:fbwire-pcap>
                   --report-tool $<TARGET_FILE:fbwire-report>)
  set_tests_properties(sysbench_rt_accounting PROPERTIES LABELS sysbench TIMEOUT 900
                       SKIP_RETURN_CODE 77)
endif()

# tools/fbwire-compare --quick against PostgreSQL, MariaDB, FB3 and FB4 (tests/sysbench/compare.sh:
# starts scripts/peer-servers.sh itself; root for tcpdump, else skipped). About a minute, and one
# more for its --rtt 0,1 stage through fbwire-link.
if(TARGET fbwire-pcap AND TARGET fbwire-report)
  set(FBW_COMPARE_CPU "")
  if(TARGET fbwire-cpu)
    set(FBW_COMPARE_CPU --cpu-tool $<TARGET_FILE:fbwire-cpu>)
  endif()
  if(TARGET fbwire-link)
    list(APPEND FBW_COMPARE_CPU --link-tool $<TARGET_FILE:fbwire-link>)
  endif()
  fbw_server_test(sysbench_compare ${CMAKE_CURRENT_LIST_DIR}/compare.sh
                   --compare ${CMAKE_SOURCE_DIR}/tools/fbwire-compare
                   --lib $<TARGET_FILE:fbwire-sysbench> --pcap-tool $<TARGET_FILE:fbwire-pcap>
                   --report-tool $<TARGET_FILE:fbwire-report> ${FBW_COMPARE_CPU})
  set_tests_properties(sysbench_compare PROPERTIES LABELS sysbench TIMEOUT 400
                       SKIP_RETURN_CODE 77)
endif()

# scripts/main.sh's last step, `fbwire-compare --preset glance`, with 1 s runs of 1,000 rows on FB3:
# every row of its table measured, round trips per event as docs/results.md and docs/sysbench.md
# give them (tests/sysbench/glance_check.py). No capture, so no root; about 30 s.
if(FBW_DEBIAN_PYTHON3 AND TARGET fbwire-link)
  set(FBW_GLANCE_ENV FBWIRE_SYSBENCH_LIB=$<TARGET_FILE:fbwire-sysbench> FBWIRE_LINK=$<TARGET_FILE:fbwire-link>)
  if(TARGET fbwire-cpu)
    list(APPEND FBW_GLANCE_ENV FBWIRE_CPU=$<TARGET_FILE:fbwire-cpu>)
  endif()
  if(TARGET fbwire-report)
    list(APPEND FBW_GLANCE_ENV FBWIRE_REPORT=$<TARGET_FILE:fbwire-report>)
  endif()
  add_test(NAME sysbench_glance
           COMMAND ${CMAKE_COMMAND} -E env PYTHONDONTWRITEBYTECODE=1 ${FBW_GLANCE_ENV}
                   ${FBW_DEBIAN_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/glance_check.py
                   ${CMAKE_SOURCE_DIR}/tools/fbwire-compare ${CMAKE_SOURCE_DIR})
  set_tests_properties(sysbench_glance PROPERTIES LABELS sysbench TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()

# A 4-thread sysbench oltp_read_write capture (5 s, 2 tables of 1000 rows, ids partitioned per
# thread: tests/sysbench/oltp_rw_partitioned.lua) on one server version, replayed paced on the
# other: every step replayed, every result the same (but the driver's version query), wall time
# within 10% (tests/sysbench/xreplay.py; root for tcpdump, else skipped). Both directions, with
# the fbwire and the fbclient driver; about 40 s each. Every op is replayed: fbclient's
# op_info_sql record counts are info_sql steps, fbwire's go with the execute.
if(TARGET fbwire-pcap AND TARGET fbwire-link AND TARGET fbwire-sql AND TARGET fbwire-report)
  foreach(drv fbwire fbclient)
    foreach(from fb3 fb4)
      fbw_server_test(sysbench_xreplay_${drv}_${from} python3 ${CMAKE_CURRENT_LIST_DIR}/xreplay.py
                       --lib $<TARGET_FILE:fbwire-sysbench> --pcap $<TARGET_FILE:fbwire-pcap>
                       --link $<TARGET_FILE:fbwire-link> --sql $<TARGET_FILE:fbwire-sql>
                       --report $<TARGET_FILE:fbwire-report> --from ${from} --driver ${drv})
      set_tests_properties(sysbench_xreplay_${drv}_${from} PROPERTIES LABELS sysbench TIMEOUT 300
                           SKIP_RETURN_CODE 77 RESOURCE_LOCK fbwire_xreplay)
    endforeach()
  endforeach()
endif()

# Issue 27 section 5: sysbench oltp_read_write on the stock FB3 (WireCrypt = Required, the driver
# requiring it too) recorded by `fbwire-pcap trace-record` through the services API, replayed by
# `fbwire-pcap replay --trace` onto FB4 (and FB5 when registered): every traced execution replayed,
# none failed, every SELECT's row count the same, the same final table (about 30 s).
if(TARGET fbwire-pcap AND TARGET fbwire-sql)
  add_test(NAME sysbench_trace_replay COMMAND ${CMAKE_CURRENT_LIST_DIR}/trace_replay.sh
           --lib ${SB_LIB} --pcap $<TARGET_FILE:fbwire-pcap> --sql $<TARGET_FILE:fbwire-sql>)
  set_tests_properties(sysbench_trace_replay PROPERTIES LABELS sysbench TIMEOUT 300
                       SKIP_RETURN_CODE 77 RESOURCE_LOCK "fbwire_xreplay;fbwire_stock_servers")
endif()

# The blob workload (lua/oltp_blob.lua): blob cells checked through fbwire and fbclient on FB3 and
# FB4, and fbwire's round trips per range SELECT with its blobs (2; 1 on Firebird 5.0.3+, blobs
# inline) and per INSERT (1); sysbench_blob@fb5 runs it with fb5 in fb4's place.
fbw_server_test(sysbench_blob ${CMAKE_CURRENT_LIST_DIR}/blob.sh --lib ${SB_LIB})
set_tests_properties(sysbench_blob PROPERTIES LABELS sysbench TIMEOUT 300 SKIP_RETURN_CODE 77)
