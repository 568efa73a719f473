# SPDX-License-Identifier: MIT
# Seed smoke of every libFuzzer target (label "unit"): each target's corpus runs once through a
# plain main (smoke_main.c), with any compiler, so scripts/test.sh and CI's ASan/UBSan unit run
# catch a target that crashes on its own seeds. Fuzzing proper: scripts/fuzz.sh (clang).
set(FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})
set(PCAP_TOOL_DIR ${CMAKE_SOURCE_DIR}/tools/fbwire-pcap)
set(LINK_TOOL_DIR ${CMAKE_SOURCE_DIR}/tools/fbwire-link)
# fbwire-pcap's reports are JSON built with jansson (tools/fbwire-pcap/jsonout.h): its targets
# (capture, text) need it, as the program does.
pkg_check_modules(JANSSON IMPORTED_TARGET jansson)
foreach(t pkt status conn dsn dec svc capture fault text trace)
  if((t STREQUAL "capture" OR t STREQUAL "text") AND NOT JANSSON_FOUND)
    continue()
  endif()
  set(exe fuzz_smoke_${t})
  set(extra ${FUZZ_DIR}/../support/guard.c)
  if(t STREQUAL "capture")
    set(extra ${PCAP_TOOL_DIR}/capture.c ${PCAP_TOOL_DIR}/tcp.c ${PCAP_TOOL_DIR}/report.c
              ${PCAP_TOOL_DIR}/keys.c ${PCAP_TOOL_DIR}/workload.c ${PCAP_TOOL_DIR}/jsonout.c)
  elseif(t STREQUAL "text")
    set(extra ${PCAP_TOOL_DIR}/fpstats.c ${PCAP_TOOL_DIR}/jsonout.c)
  elseif(t STREQUAL "trace")
    set(extra ${PCAP_TOOL_DIR}/trace.c ${PCAP_TOOL_DIR}/trace_workload.c ${PCAP_TOOL_DIR}/workload.c)
  elseif(t STREQUAL "fault")
    set(extra ${LINK_TOOL_DIR}/fault.c ${LINK_TOOL_DIR}/units.c ${LINK_TOOL_DIR}/line.c)
  endif()
  add_executable(${exe} ${FUZZ_DIR}/fuzz_${t}.c ${FUZZ_DIR}/smoke_main.c ${extra})
  target_include_directories(${exe} PRIVATE ${FUZZ_DIR}/../support ${PCAP_TOOL_DIR} ${LINK_TOOL_DIR})
  target_link_libraries(${exe} PRIVATE fbwire_core)
  if(t STREQUAL "capture" OR t STREQUAL "text")
    target_link_libraries(${exe} PRIVATE PkgConfig::JANSSON m)
  endif()
  if(t STREQUAL "capture")
    target_link_libraries(${exe} PRIVATE PkgConfig::PCAP)
    target_compile_definitions(${exe} PRIVATE FBW_FUZZ_KEYS="${FUZZ_DIR}/fuzz_capture.keys")
  endif()
  add_test(NAME ${exe} COMMAND ${exe} ${FUZZ_DIR}/corpus/fuzz_${t})
  set_tests_properties(${exe} PROPERTIES LABELS unit TIMEOUT 120)
endforeach()
